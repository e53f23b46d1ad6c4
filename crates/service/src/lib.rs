//! Use cases: what the product does, one module per capability, over the
//! stores and the Temporal gateway. No HTTP types and no protobuf in here:
//! the API's handlers and the background loops (reconciler, sweeper) both
//! call these, so a write behaves the same whoever makes it.

pub mod activities;
pub mod admission;
pub mod alerts;
pub mod audit;
pub mod calendars;
pub mod changes;
pub mod deliveries;
mod dispatcher;
pub mod duties;
pub mod events;
pub mod execution;
#[cfg(feature = "fault-injection")]
pub mod faults;
pub mod flow;
mod group_commit;
pub mod keys;
pub mod metrics;
pub mod notifications;
pub mod preview;
pub mod projects;
pub mod reconcile;
pub mod retention;
pub mod run_bulk;
pub mod run_control;
pub mod run_retry;
pub mod runs;
pub mod schedules;
pub mod sources;
pub mod subscribers;

use std::sync::Arc;

use sqlx::PgPool;

use acp_domain::FieldError;
use acp_store::{
    ActivityStore, AlertStore, AuditStore, CalendarStore, EventStore, FlowStore, NotificationStore,
    ProjectStore, RunStore, SourceStore,
};
use acp_temporal::{GatewayError, TemporalGateway};

/// The store's typed failures: a use case's [`Error::Store`] carries one, and
/// the HTTP layer gives each its status. The stores themselves stay behind
/// the use cases.
pub use acp_store::{StoreError, StoreResult};

pub use activities::Activities;
pub use alerts::Alerts;
pub use calendars::Calendars;
pub use events::EventIntake;
pub use flow::FlowControl;
pub use keys::Keys;
pub use notifications::Notifications;
pub use projects::Projects;
pub use runs::Runs;
pub use schedules::Schedules;
pub use sources::Sources;

/// Why a use case did not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The input is well-formed but not acceptable, field by field.
    #[error("invalid input")]
    Invalid(Vec<FieldError>),
    /// The request contradicts the resource's state (e.g. pausing an event
    /// activity, which has no schedule).
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Temporal refused (`Rejected`) or could not be reached.
    #[error(transparent)]
    Temporal(#[from] GatewayError),
    /// An event ID seen before arrived with other content: a producer bug,
    /// not a duplicate. The event keeps its first content.
    #[error("event {} was first seen at {} with other content", .0.event_id, .0.first_seen)]
    EventConflict(EventConflict),
}

/// A conflicting re-delivery: which event, when it was first seen, and
/// which fields differ from that first delivery.
#[derive(Debug, Clone)]
pub struct EventConflict {
    pub event_id: String,
    pub first_seen: chrono::DateTime<chrono::Utc>,
    pub differs: Vec<&'static str>,
}

impl Error {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid(vec![FieldError::new(field, message)])
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// A store's `NotFound` as "no such `what`"; other store errors pass through.
pub fn found<T>(result: StoreResult<T>, what: &'static str) -> Result<T> {
    result.map_err(|err| match err {
        StoreError::NotFound => Error::NotFound(what),
        other => other.into(),
    })
}

/// A pool that does not need the database to be up yet: see
/// `acp_store::lazy_pool`.
pub fn lazy_pool(url: &str, max_connections: u32) -> anyhow::Result<PgPool> {
    acp_store::lazy_pool(url, max_connections)
}

/// Applies the migrations (`migrations/`, embedded) that `pool`'s database
/// lacks: `acp migrate`, and `acp serve` at start-up.
pub async fn migrate(pool: &PgPool) -> anyhow::Result<()> {
    acp_store::migrate(pool).await
}

/// How many changes a stream may fall behind before it must resync.
pub const DEFAULT_STREAM_BUFFER: usize = 4096;

/// Every use case, wired to one pool, one gateway and one task queue.
#[derive(Clone)]
pub struct Services {
    pub activities: Activities,
    pub schedules: Schedules,
    pub runs: Runs,
    pub events: EventIntake,
    pub sources: Sources,
    pub alerts: Alerts,
    pub calendars: Calendars,
    pub projects: Projects,
    pub notifications: Notifications,
    pub flow: FlowControl,
    /// The background duties this process carries, and its role in each.
    pub duties: duties::DutyBoard,
    /// The change stream: its log, its live feed, its tokens.
    pub changes: changes::ChangeFeed,
    /// The history tables' partitions and their retention.
    pub retention: retention::HistoryRetention,
    /// The audit log's reading side.
    pub audit: audit::AuditLog,
}

impl Services {
    pub fn new(pool: PgPool, gateway: Arc<TemporalGateway>, task_queue: &str) -> Self {
        let task_queue: Arc<str> = task_queue.into();
        let activities = Activities::new(
            ActivityStore::new(pool.clone()),
            gateway.clone(),
            task_queue.clone(),
        );
        let run_store = RunStore::new(pool.clone());
        let events = EventIntake::new(
            EventStore::new(pool.clone()),
            gateway.clone(),
            task_queue.clone(),
        );
        Self {
            flow: FlowControl::new(FlowStore::new(pool.clone()), gateway.clone()),
            schedules: Schedules::new(activities.clone(), run_store.clone()),
            runs: Runs::new(activities.clone(), run_store, AuditStore::new(pool.clone())),
            audit: audit::AuditLog::new(AuditStore::new(pool.clone())),
            sources: Sources::new(SourceStore::new(pool.clone()), events.clone()),
            alerts: Alerts::new(AlertStore::new(pool.clone()), activities.store().clone()),
            calendars: Calendars::new(CalendarStore::new(pool.clone())),
            projects: Projects::new(ProjectStore::new(pool.clone())),
            notifications: Notifications::new(
                NotificationStore::new(pool.clone()),
                gateway.clone(),
                task_queue.clone(),
            ),
            events,
            activities,
            duties: Default::default(),
            retention: retention::HistoryRetention::new(
                acp_store::partitions::PartitionStore::new(pool.clone()),
                Default::default(),
            ),
            changes: changes::ChangeFeed::new(
                acp_store::changes::ChangeStore::new(pool),
                DEFAULT_STREAM_BUFFER,
            ),
        }
    }

    /// How many changes a stream may fall behind the live feed before it
    /// must resync (`DEFAULT_STREAM_BUFFER` unless set).
    pub fn set_stream_buffer(&mut self, buffer: usize) {
        self.changes = changes::ChangeFeed::new(
            acp_store::changes::ChangeStore::new(self.activities.store().pool().clone()),
            buffer,
        );
    }

    /// How the history tables are kept (the defaults unless set).
    pub fn set_retention(&mut self, settings: retention::RetentionSettings) {
        self.retention = retention::HistoryRetention::new(
            acp_store::partitions::PartitionStore::new(self.activities.store().pool().clone()),
            settings,
        );
    }

    /// Applies the migrations to the services' database.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        migrate(self.activities.store().pool()).await
    }

    /// The lease whose holder acts for a single duty (see
    /// [`duties::DutyBoard::turn`]).
    pub fn duty_lease(&self, duty: duties::Duty) -> duties::DutyLease {
        duties::DutyLease::new(self.activities.store().pool(), duty.lease_key())
    }

    /// Whether PostgreSQL and Temporal answer, each with why not.
    pub async fn readiness(&self) -> (StoreResult<()>, std::result::Result<(), GatewayError>) {
        tokio::join!(
            acp_store::ping(self.activities.store().pool()),
            self.activities.gateway().ping()
        )
    }
}
