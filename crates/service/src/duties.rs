//! The background duties a process carries, and its role in each: what
//! `/readyz` and `acp_duty_leader` report, so an operator can see that some
//! process of the fleet reconciles.
//!
//! A duty that must be single in the fleet (reconciliation, alert
//! evaluation, the change sequencer, history retention) runs in every process that carries it, but acts only while
//! that process holds its [`DutyLease`]; the others stand by and take over
//! within one interval of the holder's death. Shared duties (event
//! dispatch, broker consumption, ...) divide their work by row leases and
//! run wherever they are carried.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The session advisory lock a single duty's holder keeps (the store's).
pub use acp_store::lease::DutyLease;

/// A background duty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Duty {
    /// Schedules made to match PostgreSQL, drift repaired, orphans removed,
    /// pending backfills handed over, DST extra times started, run
    /// timeouts enforced. Single.
    Reconcile,
    /// Expectations turned into alerts. Single.
    AlertEvaluation,
    /// Concurrency slots of runs whose workflows closed freed. Shared.
    FlowRecovery,
    /// Recorded notifications handed to Temporal. Shared.
    NotificationHandOver,
    /// Accepted events' runs started. Shared.
    EventDispatch,
    /// Broker sources consumed. Shared.
    BrokerConsumption,
    /// Workflows and activities executed from the task queue. Shared.
    TemporalWorker,
    /// Committed changes numbered into the change log (the stream's order).
    /// Single.
    ChangeSequencer,
    /// History tables' partitions made ahead and dropped past their
    /// retention. Single.
    HistoryRetention,
}

impl Duty {
    pub const ALL: [Duty; 9] = [
        Duty::Reconcile,
        Duty::AlertEvaluation,
        Duty::FlowRecovery,
        Duty::NotificationHandOver,
        Duty::EventDispatch,
        Duty::BrokerConsumption,
        Duty::TemporalWorker,
        Duty::ChangeSequencer,
        Duty::HistoryRetention,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Duty::Reconcile => "reconcile",
            Duty::AlertEvaluation => "alert_evaluation",
            Duty::FlowRecovery => "flow_recovery",
            Duty::NotificationHandOver => "notification_hand_over",
            Duty::EventDispatch => "event_dispatch",
            Duty::BrokerConsumption => "broker_consumption",
            Duty::TemporalWorker => "temporal_worker",
            Duty::ChangeSequencer => "change_sequencer",
            Duty::HistoryRetention => "history_retention",
        }
    }

    /// Whether the fleet must have exactly one active instance.
    pub fn is_single(self) -> bool {
        matches!(
            self,
            Duty::Reconcile
                | Duty::AlertEvaluation
                | Duty::ChangeSequencer
                | Duty::HistoryRetention
        )
    }

    /// The session advisory lock whose holder leads a single duty. Not the
    /// keys each pass takes inside its transaction (those keep two passes
    /// apart even while leadership changes hands).
    pub fn lease_key(self) -> i64 {
        // "acpL" + the duty's index: one key per duty.
        0x6163_704c_0000_0000 + self as i64
    }
}

/// This process's role in a duty it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Holds a single duty and acts on it.
    Leader,
    /// Carries a single duty and takes it over when its holder goes.
    Standby,
    /// Carries a shared duty, beside every other process that does.
    Shared,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Leader => "leader",
            Role::Standby => "standby",
            Role::Shared => "shared",
        }
    }
}

/// The duties this process carries and its role in each.
#[derive(Clone, Default)]
pub struct DutyBoard(Arc<Mutex<BTreeMap<Duty, Role>>>);

impl DutyBoard {
    pub fn set(&self, duty: Duty, role: Role) {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(duty, role);
        if duty.is_single() {
            crate::metrics::DUTY_LEADER
                .with_label_values(&[duty.as_str()])
                .set(i64::from(role == Role::Leader));
        }
    }

    /// Every duty carried, in a fixed order.
    pub fn snapshot(&self) -> Vec<(Duty, Role)> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|(d, r)| (*d, *r))
            .collect()
    }

    /// One turn of a single duty: asks for its lease and records the
    /// answer; true when this process holds the duty and should act now.
    /// The caller's loop asks every interval, acts only on `true`, and at
    /// shutdown gives the lease up ([`DutyBoard::leave`]) so that a standby
    /// takes over at its next turn.
    pub async fn turn(&self, duty: Duty, lease: &mut DutyLease) -> bool {
        let leading = lease.hold().await;
        let role = if leading { Role::Leader } else { Role::Standby };
        if self.role(duty) != Some(role) {
            tracing::info!(duty = duty.as_str(), role = role.as_str(), "duty role");
        }
        self.set(duty, role);
        leading
    }

    /// Gives a single duty's lease up (at shutdown).
    pub async fn leave(&self, duty: Duty, lease: &mut DutyLease) {
        lease.release().await;
        self.set(duty, Role::Standby);
    }

    fn role(&self, duty: Duty) -> Option<Role> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&duty)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_duties_have_distinct_lease_keys() {
        let keys: std::collections::HashSet<i64> =
            Duty::ALL.iter().map(|d| d.lease_key()).collect();
        assert_eq!(keys.len(), Duty::ALL.len());
        let singles: Vec<&str> = Duty::ALL
            .iter()
            .filter(|d| d.is_single())
            .map(|d| d.as_str())
            .collect();
        assert_eq!(
            singles,
            [
                "reconcile",
                "alert_evaluation",
                "change_sequencer",
                "history_retention"
            ]
        );
    }
}
