//! History retention: the `history_retention` duty makes the history
//! tables' time partitions ahead and drops those wholly older than their
//! retention (`acp_domain::retention` decides which), and the dry run
//! behind `GET /v1/retention` says what the next pass would drop.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::Result;
use super::duties::{Duty, DutyBoard, DutyLease};
use acp_domain::retention::{self, HistoryTable, Partition, Period, Plan, Policy};
use acp_store::partitions::{PartitionStore, StoredPartition};

/// How many periods after the current one have a partition ready: a pass
/// that fails (or a leader that is away) for less than that loses nothing.
pub const AHEAD: u32 = 3;
/// The change log's retention unless configured.
pub const DEFAULT_CHANGE_LOG_RETENTION_HOURS: f64 = 24.0;
/// Seconds between passes unless configured.
pub const DEFAULT_INTERVAL_SECS: f64 = 300.0;

/// How each history table is kept, and how often the duty passes.
#[derive(Debug, Clone, Copy)]
pub struct RetentionSettings {
    /// The change log's retention (`None`: kept for ever).
    pub change_log: Option<chrono::Duration>,
    pub interval: Duration,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        Self {
            change_log: Some(chrono::Duration::hours(24)),
            interval: Duration::from_secs_f64(DEFAULT_INTERVAL_SECS),
        }
    }
}

/// One partition in the dry run.
#[derive(Debug, Clone)]
pub struct PartitionReport {
    pub stored: StoredPartition,
    /// The next pass drops it.
    pub dropped_next: bool,
}

/// One table in the dry run.
#[derive(Debug, Clone)]
pub struct TableReport {
    pub table: HistoryTable,
    pub period: Period,
    pub retention: Option<chrono::Duration>,
    /// Oldest first.
    pub partitions: Vec<PartitionReport>,
    /// The partitions the next pass makes.
    pub created_next: Vec<Partition>,
}

/// What the next pass would do, table by table.
#[derive(Debug, Clone)]
pub struct RetentionReport {
    pub now: DateTime<Utc>,
    pub last_pass_at: Option<DateTime<Utc>>,
    pub next_pass_at: DateTime<Utc>,
    pub interval: Duration,
    pub tables: Vec<TableReport>,
}

#[derive(Clone)]
pub struct HistoryRetention {
    store: PartitionStore,
    settings: RetentionSettings,
}

impl HistoryRetention {
    pub fn new(store: PartitionStore, settings: RetentionSettings) -> Self {
        Self { store, settings }
    }

    pub fn settings(&self) -> RetentionSettings {
        self.settings
    }

    fn policy(&self, table: HistoryTable) -> Policy {
        match table {
            HistoryTable::ChangeLog => Policy {
                retention: self.settings.change_log,
                ahead: AHEAD,
            },
        }
    }

    /// The dry run: every partition, and what the next pass (planned at
    /// its time) would make and drop.
    pub async fn report(&self) -> Result<RetentionReport> {
        let now = self.store.now().await?;
        let last_pass_at = self.store.last_pass().await?;
        let next_pass_at = retention::next_pass(last_pass_at, self.settings.interval, now);
        let mut tables = Vec::new();
        for table in HistoryTable::ALL.to_vec() {
            let stored = self.store.list(table).await?;
            let plan = self.plan(table, next_pass_at, &stored);
            let partitions = stored
                .into_iter()
                .map(|stored| PartitionReport {
                    dropped_next: plan.drop.iter().any(|p| p.name == stored.partition.name),
                    stored,
                })
                .collect();
            tables.push(TableReport {
                table,
                period: table.period(),
                retention: self.policy(table).retention,
                partitions,
                created_next: plan.create,
            });
        }
        Ok(RetentionReport {
            now,
            last_pass_at,
            next_pass_at,
            interval: self.settings.interval,
            tables,
        })
    }

    fn plan(&self, table: HistoryTable, at: DateTime<Utc>, stored: &[StoredPartition]) -> Plan {
        let existing: Vec<Partition> = stored.iter().map(|s| s.partition.clone()).collect();
        retention::plan(table, self.policy(table), at, &existing)
    }

    /// One pass over every table. A partition that cannot be made or
    /// dropped now (a lock not granted in time) is logged and tried again
    /// at the next pass; drops stop at the first failure, so the log is
    /// only ever forgotten from its oldest end.
    pub async fn pass(&self) -> Result<()> {
        let now = self.store.now().await?;
        for table in HistoryTable::ALL.to_vec() {
            let detached = self.store.detached(table).await?;
            for name in detached {
                if let Err(err) = self.store.drop_detached(&name).await {
                    tracing::warn!(error = %err, partition = %name, "could not drop a detached partition");
                }
            }
            let stored = self.store.list(table).await?;
            let plan = self.plan(table, now, &stored);
            for partition in &plan.create {
                match self.store.create(table, partition).await {
                    Ok(()) => tracing::info!(partition = %partition.name, "partition made"),
                    Err(err) => {
                        tracing::warn!(error = %err, partition = %partition.name, "could not make a partition")
                    }
                }
            }
            for partition in &plan.drop {
                let pending = stored
                    .iter()
                    .any(|s| s.partition.name == partition.name && s.detach_pending);
                match self.store.drop_partition(table, partition, pending).await {
                    Ok(()) => tracing::info!(partition = %partition.name, "partition dropped"),
                    Err(err) => {
                        tracing::warn!(error = %err, partition = %partition.name, "could not drop a partition");
                        break;
                    }
                }
            }
        }
        self.store.record_pass(now).await?;
        Ok(())
    }

    /// The duty: while this process holds it, a pass every interval (the
    /// first as soon as it leads).
    pub async fn run(
        self,
        duties: DutyBoard,
        mut lease: DutyLease,
        lease_interval: Duration,
        shutdown: impl Future<Output = ()>,
    ) {
        let duty = Duty::HistoryRetention;
        let mut last_pass: Option<tokio::time::Instant> = None;
        tokio::pin!(shutdown);
        loop {
            let leading = duties.turn(duty, &mut lease).await;
            if !leading {
                last_pass = None;
            } else if last_pass.is_none_or(|at| at.elapsed() >= self.settings.interval) {
                if let Err(err) = self.pass().await {
                    tracing::warn!(error = %err, "retention pass failed");
                }
                last_pass = Some(tokio::time::Instant::now());
            }
            let wait = lease_interval.min(self.settings.interval);
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(wait) => {}
            }
        }
        duties.leave(duty, &mut lease).await;
    }
}
