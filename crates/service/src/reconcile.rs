//! Reconciliation: desired state (PostgreSQL) -> Temporal, one pass at a
//! time.
//!
//! Each pass syncs everything that is not known to be in sync (the same
//! `Activities::sync` that writes call), re-reads a bounded number of synced
//! schedules for drift, deletes orphan schedules, hands Temporal the
//! backfills it could not take earlier, and starts the due times a DST policy
//! wants that the engine does not fire. A pass takes an advisory lock of its
//! own, so two passes never overlap even while the reconcile duty (the loop
//! in `src/reconcile.rs`) changes hands.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use uuid::Uuid;

use crate::{Activities, Runs, Schedules, Services};
use acp_domain::activity::SyncState;
use acp_domain::ids;
use acp_store::StoreError;
use acp_store::lease::PassLock;
use acp_temporal::translate::desired_schedule;

/// `pg_try_advisory_xact_lock` key: "acp-reconcile".
pub const RECONCILE_LOCK_KEY: i64 = 0x0061_6370_7265_636f;

/// How many synced schedules one pass re-reads from Temporal to find drift;
/// with a 5 s cadence, 1000 activities are all checked every 100 s.
pub const DRIFT_CHECKS_PER_PASS: usize = 50;

/// Where a reconciler reads the time.
pub type Clock = Arc<dyn Fn() -> chrono::DateTime<chrono::Utc> + Send + Sync>;

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
    /// Launchers started for times a DST policy wants and the engine does
    /// not fire, once due.
    pub dst_extras_started: usize,
}

pub struct Reconciliation {
    activities: Activities,
    schedules: Schedules,
    runs: Runs,
    /// The instant passes take for "now" (the wall clock, unless a test
    /// drives it).
    clock: Clock,
    /// When Temporal last answered a pass: the start of an outage found later.
    last_contact: std::sync::Mutex<Option<chrono::DateTime<chrono::Utc>>>,
}

impl Reconciliation {
    pub fn new(services: &Services) -> Self {
        Self {
            activities: services.activities.clone(),
            schedules: services.schedules.clone(),
            runs: services.runs.clone(),
            clock: Arc::new(chrono::Utc::now),
            last_contact: Default::default(),
        }
    }

    /// Passes read "now" from `clock` (tests drive a DST night with it).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Records whether Temporal answers, opening or closing an outage period.
    async fn note_contact(&self) -> Result<(), StoreError> {
        let now = chrono::Utc::now();
        let reachable = self.activities.gateway().ping().await.is_ok();
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
            self.activities.store().end_temporal_outage(now).await
        } else {
            self.activities
                .store()
                .begin_temporal_outage(last.unwrap_or(now), now)
                .await
        }
    }

    /// One pass over everything, under the cluster-wide lock.
    #[tracing::instrument(skip(self))]
    pub async fn pass(&self) -> Result<PassReport, StoreError> {
        // The lock lives as long as its transaction on its own connection;
        // the work itself uses the pool.
        let Some(lock) =
            PassLock::try_take(self.activities.store().pool(), RECONCILE_LOCK_KEY).await?
        else {
            tracing::debug!("another instance is reconciling");
            return Ok(PassReport::default());
        };
        let started = Instant::now();
        if let Err(err) = self.note_contact().await {
            tracing::warn!(error = %err, "could not record Temporal's reachability");
        }
        let mut report = PassReport {
            ran: true,
            ..Default::default()
        };
        // Runs past their activity's run_timeout are cancelled (timed_out).
        match self.runs.enforce_run_timeouts().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(runs = n, "cancelled runs past their run_timeout"),
            Err(err) => tracing::info!(error = %err, "could not enforce run timeouts"),
        }
        let candidates = self.activities.store().reconcile_candidates().await?;
        let mut owned: HashSet<Uuid> = HashSet::new();
        let mut temporal_down = false;
        let mut drift_checks = 0;
        for activity in &candidates {
            let wants_schedule = desired_schedule(activity, self.activities.task_queue()).is_some();
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
            let outcome = self.activities.sync(activity).await?;
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
            report.backfills_dispatched = self.schedules.dispatch_pending_backfills().await;
            report.dst_extras_started = self
                .schedules
                .start_due_dst_extras(&candidates, (self.clock)())
                .await;
        }
        lock.release().await?;
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
        let ids = match self
            .activities
            .gateway()
            .list_schedule_ids("activity-")
            .await
        {
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
            match self.activities.store().get(activity_id).await {
                Ok(a) if desired_schedule(&a, self.activities.task_queue()).is_some() => continue,
                Ok(_) | Err(StoreError::NotFound) => {}
                Err(_) => continue,
            }
            match self.activities.gateway().delete(&schedule_id).await {
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
}
