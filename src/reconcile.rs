//! Desired state (PostgreSQL) -> Temporal.
//!
//! `sync_activity` is the one path that writes a schedule: request handlers
//! call it right after their commit, and the reconciler calls it for
//! everything that is not known to be in sync, plus a drift check of the
//! rest. One reconciler at a time across replicas, by an advisory lock.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::Connection;
use uuid::Uuid;

use crate::domain::activity::{Activity, SyncState};
use crate::domain::ids;
use crate::store::{ActivityStore, StoreError};
use crate::temporal::translate::desired_schedule;
use crate::temporal::{GatewayError, ScheduleView, TemporalGateway};

/// `pg_try_advisory_xact_lock` key: "acp-reconcile".
pub const RECONCILE_LOCK_KEY: i64 = 0x0061_6370_7265_636f;

/// How many synced schedules one pass re-reads from Temporal to find drift;
/// with a 5 s cadence, 1000 activities are all checked every 100 s.
pub const DRIFT_CHECKS_PER_PASS: usize = 50;

/// What one sync did.
#[derive(Debug, Clone)]
pub struct SyncOutcome {
    pub state: SyncState,
    pub error: Option<String>,
    /// The schedule as Temporal holds it afterwards, when it answered.
    pub view: Option<ScheduleView>,
}

/// Brings Temporal in line with one activity and records the outcome (unless
/// the activity moved on meanwhile: the newer write syncs itself).
#[tracing::instrument(skip_all, fields(activity_id = %activity.id, version = activity.version))]
pub async fn sync_activity(
    store: &ActivityStore,
    gateway: &TemporalGateway,
    task_queue: &str,
    activity: &Activity,
) -> Result<SyncOutcome, StoreError> {
    let desired = desired_schedule(activity, task_queue);
    let schedule_id = ids::schedule_id(activity.id);
    let outcome = gateway
        .apply(
            &schedule_id,
            desired.as_ref(),
            activity.sync.conflict_token.as_deref(),
        )
        .await;
    let (state, error, view) = match outcome {
        Ok(view) => {
            let state = if desired.is_some() {
                SyncState::Synced
            } else {
                SyncState::NotApplicable
            };
            (state, None, view)
        }
        Err(GatewayError::Rejected(message)) => {
            tracing::warn!(%message, "Temporal rejected the schedule");
            (SyncState::Error, Some(message), None)
        }
        Err(err) => {
            tracing::info!(error = %err, "schedule sync deferred");
            (SyncState::Pending, Some(err.to_string()), None)
        }
    };
    if matches!(state, SyncState::Pending | SyncState::Error) {
        crate::metrics::SYNC_FAILURES
            .with_label_values(&[state.as_str()])
            .inc();
    }
    let token = view.as_ref().map(|v| v.conflict_token.as_slice());
    store
        .record_sync(
            activity.id,
            activity.version,
            state,
            error.as_deref(),
            token,
        )
        .await?;
    Ok(SyncOutcome { state, error, view })
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PassReport {
    /// False when another instance held the lock and this pass did nothing.
    pub ran: bool,
    pub checked: usize,
    pub synced: usize,
    pub failed: usize,
    pub orphans_deleted: usize,
    /// Requested times handed to Temporal after it had been unreachable.
    pub backfills_dispatched: usize,
}

pub struct Reconciler {
    pub store: ActivityStore,
    pub gateway: Arc<TemporalGateway>,
    pub task_queue: String,
    /// When Temporal last answered a pass: the start of an outage found later.
    last_contact: std::sync::Mutex<Option<chrono::DateTime<chrono::Utc>>>,
}

impl Reconciler {
    pub fn new(store: ActivityStore, gateway: Arc<TemporalGateway>, task_queue: &str) -> Self {
        Self {
            store,
            gateway,
            task_queue: task_queue.to_owned(),
            last_contact: Default::default(),
        }
    }

    /// Hands Temporal the requested times it could not take when they were
    /// asked for (a resume's catch-up, a backfill). Five seconds old at least,
    /// so a request still in its handler is left alone.
    async fn dispatch_backfills(&self) -> usize {
        let runs = crate::store::RunStore::new(self.store.pool().clone());
        let pending = match runs.undispatched(Duration::from_secs(5)).await {
            Ok(pending) => pending,
            Err(err) => {
                tracing::warn!(error = %err, "could not read pending backfills");
                return 0;
            }
        };
        let mut dispatched = 0;
        for (activity_id, times) in pending {
            let schedule_id = crate::domain::ids::schedule_id(activity_id);
            match self.gateway.backfill(&schedule_id, &times).await {
                Ok(()) => {
                    if let Err(err) = runs.mark_dispatched(activity_id, &times).await {
                        tracing::warn!(error = %err, %activity_id, "backfill dispatched but not marked");
                    }
                    tracing::info!(%activity_id, times = times.len(), "pending backfill dispatched");
                    dispatched += times.len();
                }
                Err(err) => {
                    tracing::warn!(error = %err, %activity_id, "pending backfill still not accepted");
                }
            }
        }
        dispatched
    }

    /// Records whether Temporal answers, opening or closing an outage period.
    async fn note_contact(&self) -> Result<(), StoreError> {
        let now = chrono::Utc::now();
        let reachable = self.gateway.ping().await.is_ok();
        let last = {
            let mut last = self
                .last_contact
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let previous = *last;
            if reachable {
                *last = Some(now);
            }
            previous
        };
        if reachable {
            self.store.end_temporal_outage(now).await
        } else {
            self.store
                .begin_temporal_outage(last.unwrap_or(now), now)
                .await
        }
    }

    /// One pass over everything, under the cluster-wide lock.
    #[tracing::instrument(skip(self))]
    pub async fn pass(&self) -> Result<PassReport, StoreError> {
        // The lock lives as long as this transaction on its own connection;
        // the work itself uses the pool.
        let mut lock_conn = self.store.pool().acquire().await?;
        let mut lock_tx = lock_conn.begin().await?;
        let (locked,): (bool,) = sqlx::query_as("SELECT pg_try_advisory_xact_lock($1)")
            .bind(RECONCILE_LOCK_KEY)
            .fetch_one(&mut *lock_tx)
            .await?;
        if !locked {
            tracing::debug!("another instance is reconciling");
            return Ok(PassReport::default());
        }
        let started = Instant::now();
        if let Err(err) = self.note_contact().await {
            tracing::warn!(error = %err, "could not record Temporal's reachability");
        }
        let mut report = PassReport {
            ran: true,
            ..Default::default()
        };
        let candidates = self.store.reconcile_candidates().await?;
        let mut owned: HashSet<Uuid> = HashSet::new();
        let mut temporal_down = false;
        let mut drift_checks = 0;
        for activity in &candidates {
            let wants_schedule = desired_schedule(activity, &self.task_queue).is_some();
            if wants_schedule {
                owned.insert(activity.id);
            }
            if temporal_down {
                continue;
            }
            if activity.is_synced() {
                // No schedule wanted and its absence already confirmed: the
                // orphan sweep below removes one made behind our back.
                if !wants_schedule {
                    continue;
                }
                // Drift checks of synced schedules, oldest check first, a
                // bounded number per pass so that Temporal's load does not
                // grow with the number of activities every few seconds.
                if drift_checks == DRIFT_CHECKS_PER_PASS {
                    continue;
                }
                drift_checks += 1;
            }
            report.checked += 1;
            let outcome =
                sync_activity(&self.store, &self.gateway, &self.task_queue, activity).await?;
            match outcome.state {
                SyncState::Synced | SyncState::NotApplicable => report.synced += 1,
                SyncState::Pending => {
                    report.failed += 1;
                    // No point asking again for every row: the next pass retries.
                    temporal_down = true;
                }
                SyncState::Error => report.failed += 1,
            }
        }
        if !temporal_down {
            report.orphans_deleted = self.delete_orphans(&owned).await;
            report.backfills_dispatched = self.dispatch_backfills().await;
        }
        lock_tx.commit().await?;
        crate::metrics::RECONCILE_DURATION
            .with_label_values::<&str>(&[])
            .observe(started.elapsed().as_secs_f64());
        // Every few seconds: quiet unless it did something.
        let level_info = report.failed > 0 || report.orphans_deleted > 0;
        if level_info {
            tracing::info!(
                checked = report.checked,
                failed = report.failed,
                orphans_deleted = report.orphans_deleted,
                "reconcile pass found work"
            );
        }
        tracing::debug!(
            checked = report.checked,
            synced = report.synced,
            failed = report.failed,
            orphans_deleted = report.orphans_deleted,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "reconcile pass"
        );
        Ok(report)
    }

    /// Deletes `activity-{uuid}` schedules that no live activity owns.
    async fn delete_orphans(&self, owned: &HashSet<Uuid>) -> usize {
        let ids = match self.gateway.list_schedule_ids("activity-").await {
            Ok(ids) => ids,
            Err(err) => {
                tracing::info!(error = %err, "could not list schedules");
                return 0;
            }
        };
        let mut deleted = 0;
        for schedule_id in ids {
            let Some(activity_id) = ids::activity_of_schedule(&schedule_id) else {
                continue;
            };
            if owned.contains(&activity_id) {
                continue;
            }
            // The list is eventually consistent: re-check the database so a
            // schedule created after our snapshot is not taken for an orphan.
            match self.store.get(activity_id).await {
                Ok(a) if desired_schedule(&a, &self.task_queue).is_some() => continue,
                Ok(_) | Err(StoreError::NotFound) => {}
                Err(_) => continue,
            }
            match self.gateway.delete(&schedule_id).await {
                Ok(true) => {
                    tracing::info!(%schedule_id, "deleted orphan schedule");
                    deleted += 1;
                }
                Ok(false) => {}
                Err(err) => tracing::info!(%schedule_id, error = %err, "could not delete orphan"),
            }
        }
        deleted
    }

    /// Runs passes at start-up and every `interval` until `shutdown` resolves.
    pub async fn run(self, interval: Duration, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            if let Err(err) = self.pass().await {
                tracing::warn!(error = %err, "reconcile pass failed");
            }
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    }
}
