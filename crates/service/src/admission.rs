//! Which event runs the dispatchers may start now (fairness): the state behind
//! `domain::admission`'s rule, and the one query it reads. A backlog left
//! waiting here stays in its outbox rows instead of in Temporal's task queue,
//! where its workflow tasks would be served before the next scheduled run's.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use uuid::Uuid;

use super::Result;
use acp_domain::{admission, ids};
use acp_store::events::EventStore;

/// How far back the wait of event runs for the engine is looked at.
const WAIT_WINDOW: Duration = Duration::from_secs(2);
/// How long a dispatcher remembers a run it started, to count it before its
/// workflow has written its row.
const STARTED_MEMORY: Duration = Duration::from_secs(30);

/// A run a dispatcher started lately.
struct Started {
    at: Instant,
    run_id: Uuid,
    /// How long Temporal took to accept the start.
    took: Duration,
}

/// One dispatcher's admission; clones share it.
#[derive(Clone)]
pub struct Admission {
    /// Runs started by events or by hand allowed to run at once (`None`:
    /// no limit while no schedule fires often).
    max_running: Option<usize>,
    /// The allowance now, and when it last changed.
    allowance: Arc<Mutex<(usize, Instant)>>,
    /// Runs this dispatcher started lately (see `STARTED_MEMORY`).
    started: Arc<Mutex<VecDeque<Started>>>,
}

impl Admission {
    pub fn new(max_running: Option<usize>) -> Self {
        let max_running = max_running.filter(|&max| max > 0);
        let first = admission::FIRST_ALLOWANCE.min(admission::ceiling(max_running));
        Self {
            max_running,
            allowance: Arc::new(Mutex::new((first, Instant::now()))),
            started: Default::default(),
        }
    }

    /// Records a run this dispatcher started and how long the start took.
    pub fn remember_started(&self, workflow_id: &str, took: Duration) {
        if let Ok(mut started) = self.started.lock() {
            started.push_back(Started {
                at: Instant::now(),
                run_id: ids::run_id(workflow_id),
                took,
            });
        }
    }

    /// The runs remembered (those not forgotten yet), and the average time
    /// their starts took within `WAIT_WINDOW`.
    fn recent(&self) -> (Vec<Uuid>, Option<Duration>) {
        let Ok(mut started) = self.started.lock() else {
            return (Vec::new(), None);
        };
        while started
            .front()
            .is_some_and(|s| s.at.elapsed() > STARTED_MEMORY)
        {
            started.pop_front();
        }
        let lately: Vec<Duration> = started
            .iter()
            .filter(|s| s.at.elapsed() <= WAIT_WINDOW)
            .map(|s| s.took)
            .collect();
        let start_wait =
            (!lately.is_empty()).then(|| lately.iter().sum::<Duration>() / lately.len() as u32);
        (started.iter().map(|s| s.run_id).collect(), start_wait)
    }

    /// The allowance after this look (changed only while a schedule fires
    /// often, by `domain::admission::next_allowance`).
    fn step(&self, wait: Option<Duration>, running: i64, schedule_active: bool) -> usize {
        let ceiling = admission::ceiling(self.max_running);
        let Ok(mut allowance) = self.allowance.lock() else {
            return ceiling;
        };
        let (current, changed_at) = *allowance;
        if !schedule_active {
            return current;
        }
        let used = running >= current as i64;
        let next = admission::next_allowance(current, ceiling, wait, used, changed_at.elapsed());
        if next < current {
            tracing::debug!(
                allowance = next,
                ?wait,
                "event runs wait for the engine: fewer at once"
            );
        }
        if next != current {
            *allowance = (next, Instant::now());
        }
        next
    }

    /// How many dispatches a round may start now, at most `batch`.
    pub async fn room(&self, events: &EventStore, batch: i64) -> Result<i64> {
        let (recent, start_wait) = self.recent();
        let seen = events
            .admission(&recent, WAIT_WINDOW, self.max_running.is_some())
            .await?;
        // Waiting for the engine: the start itself (its history written),
        // then the first workflow task after it.
        let wait = match (start_wait, seen.first_task_wait) {
            (None, None) => None,
            (start, first) => Some(start.unwrap_or_default() + first.unwrap_or_default()),
        };
        let allowance = self.step(wait, seen.running, seen.schedule_active);
        let limit = admission::limit(allowance, self.max_running, seen.schedule_active);
        crate::metrics::DISPATCH_ALLOWANCE.set(limit.map_or(0, |l| l as i64));
        Ok(admission::room(limit, seen.running, batch))
    }
}
