//! Where the CPU goes: user + system time of the service, of the PostgreSQL
//! backends serving the benchmark's database, of the Temporal dev server and
//! of the load generator, from /proc. On a few cores shared by all of them,
//! the sum per call bounds the rate. Other work on the machine (another
//! database's backends, another Temporal) is left out.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Linux's USER_HZ, the unit of /proc/<pid>/stat times (100 on every
/// mainstream architecture).
const TICKS_PER_SECOND: u64 = 100;

/// How often the backends are looked for: one that exits between two looks
/// loses at most this much of its time.
const EVERY: Duration = Duration::from_millis(100);

/// (name, utime + stime, cutime + cstime) of one process, in ticks.
fn stat(pid: &str) -> Option<(String, u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text[open + 1..close].to_owned();
    // After the name: state is field 3, utime 14, stime 15, cutime 16, cstime 17.
    let fields: Vec<u64> = text[close + 1..]
        .split_whitespace()
        .skip(1)
        .take(14)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let own = fields.get(10)? + fields.get(11)?;
    let children = fields.get(12)? + fields.get(13)?;
    Some((name, own, children))
}

fn own_ticks(pid: Option<u32>) -> u64 {
    pid.and_then(|p| stat(&p.to_string()))
        .map(|(_, own, _)| own)
        .unwrap_or(0)
}

/// This program and the children it has waited for (pgbench).
fn client_ticks() -> u64 {
    stat("self")
        .map(|(_, own, children)| own + children)
        .unwrap_or(0)
}

/// CPU ticks of every backend of `database`, by pid. A backend's title is
/// `postgres: <user> <database> <client> <state>`.
fn backends(database: Option<&str>) -> HashMap<u32, u64> {
    let mut found = HashMap::new();
    let (Some(database), Ok(dir)) = (database, std::fs::read_dir("/proc")) else {
        return found;
    };
    let needle = format!(" {database} ");
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Some((name, own, _)) = stat(&pid.to_string()) else {
            continue;
        };
        if name != "postgres" {
            continue;
        }
        let title = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&title).contains(&needle) {
            found.insert(pid, own);
        }
    }
    found
}

fn ticks(t: u64) -> Duration {
    Duration::from_micros(t * 1_000_000 / TICKS_PER_SECOND)
}

/// CPU used during one measured row, per party.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cpu {
    pub service: Duration,
    pub postgres: Duration,
    pub temporal: Duration,
    pub client: Duration,
}

impl Cpu {
    /// Per call, in milliseconds.
    pub fn per_call(self, calls: usize) -> [f64; 5] {
        let per = |d: Duration| d.as_secs_f64() * 1000.0 / calls.max(1) as f64;
        let sum = self.service + self.postgres + self.temporal + self.client;
        [
            per(self.service),
            per(self.postgres),
            per(self.temporal),
            per(self.client),
            per(sum),
        ]
    }
}

/// Watches CPU use from [`CpuWatch::start`] to [`CpuWatch::finish`].
pub struct CpuWatch {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Cpu>,
}

impl CpuWatch {
    /// `service`: the `acp` process, if any; `database`: whose backends
    /// count, if any. The Temporal dev server is `ACP_BENCH_TEMPORAL_PID`'s.
    pub fn start(service: Option<u32>, database: Option<&str>) -> Self {
        let temporal = std::env::var("ACP_BENCH_TEMPORAL_PID")
            .ok()
            .and_then(|p| p.parse().ok());
        let database = database.map(str::to_owned);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let (service0, temporal0, client0) =
                (own_ticks(service), own_ticks(temporal), client_ticks());
            // Backends alive now count from now; later ones from their start.
            let mut first = backends(database.as_deref());
            let mut last = first.clone();
            loop {
                let done = flag.load(Ordering::Relaxed);
                for (pid, t) in backends(database.as_deref()) {
                    first.entry(pid).or_insert(0);
                    last.insert(pid, t);
                }
                if done {
                    break;
                }
                tokio::time::sleep(EVERY).await;
            }
            let postgres: u64 = last
                .iter()
                .map(|(pid, t)| t.saturating_sub(first.get(pid).copied().unwrap_or(0)))
                .sum();
            Cpu {
                service: ticks(own_ticks(service).saturating_sub(service0)),
                postgres: ticks(postgres),
                temporal: ticks(own_ticks(temporal).saturating_sub(temporal0)),
                client: ticks(client_ticks().saturating_sub(client0)),
            }
        });
        Self { stop, task }
    }

    pub async fn finish(self) -> Cpu {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap_or_default()
    }
}
