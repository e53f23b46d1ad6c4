//! PostgreSQL repositories. Errors leave here typed, so the API can map them.

pub mod activities;
pub mod alerts;
pub mod audit;
pub mod calendars;
pub mod changes;
pub mod events;
pub mod flow;
pub mod ingest;
pub mod keys;
pub mod lease;
pub mod notifications;
pub mod outbox;
pub mod partitions;
pub mod projects;
pub mod retries;
pub mod run_history;
pub mod run_stats;
pub mod runs;
pub mod skipped_spans;
pub mod sources;

use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

pub use activities::ActivityStore;
pub use alerts::AlertStore;
pub use audit::AuditStore;
pub use calendars::CalendarStore;
pub use events::EventStore;
pub use flow::FlowStore;
pub use keys::KeyStore;
pub use notifications::NotificationStore;
pub use projects::ProjectStore;
pub use runs::RunStore;
pub use sources::SourceStore;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("conflict: {0}")]
    Conflict(String),
    /// The row exists but not at the version the caller expected (If-Match).
    #[error("version mismatch, current version is {current}")]
    VersionMismatch { current: i64 },
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The request's API key was revoked: found by the statement that
    /// served it (see [`acp_domain::auth::UnconfirmedKey`]).
    #[error("the API key has been revoked")]
    KeyRevoked,
    /// A create the project's quota refuses; nothing was written.
    #[error("quota `{}` reached: {} of {}", .0.quota.name(), .0.usage, .0.limit)]
    QuotaExceeded(acp_domain::project::QuotaExceeded),
    #[error(transparent)]
    Other(anyhow::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match &err {
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed => StoreError::Unavailable(err.to_string()),
            sqlx::Error::Database(db) => {
                let code = db.code().unwrap_or_default();
                // Class 08: connection exceptions; 57P0x: the server is shutting
                // down or restarting; 53300: too many connections.
                if code.starts_with("08") || code.starts_with("57P0") || code == "53300" {
                    StoreError::Unavailable(err.to_string())
                } else if code == "23505" {
                    tracing::debug!(constraint = db.constraint(), "unique violation");
                    StoreError::Conflict(conflict_message(db.constraint()).to_owned())
                } else {
                    StoreError::Other(err.into())
                }
            }
            _ => StoreError::Other(err.into()),
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// What a unique violation means to a client, by constraint; the
/// constraint's own name never leaves the store.
fn conflict_message(constraint: Option<&str>) -> &'static str {
    match constraint {
        Some("activities_pkey") => "an activity with this ID exists",
        Some("activity_runs_workflow_id_key" | "activity_runs_pkey") => {
            "a run with this workflow ID exists"
        }
        Some("idempotency_keys_pkey") => "this Idempotency-Key is already in use",
        Some("events_pkey") => "an event with this ID exists",
        Some("sources_name_key") => "a source with this name exists",
        Some("sources_pkey") => "a source with this ID exists",
        Some("calendars_name_key") => "a calendar with this name exists",
        Some("calendars_pkey") => "a calendar with this ID exists",
        Some("projects_pkey") => {
            "a project with this ID exists or existed (the ID of a deleted project is not reused)"
        }
        _ => "the request conflicts with data that already exists",
    }
}

/// A domain name enum read from a TEXT column. The domain knows nothing of
/// sqlx (and Rust lets only sqlx or the domain implement sqlx's traits for
/// the domain's types), so the store decodes through this wrapper: the name
/// read back through the enum's own parser (a name the domain does not know
/// is a decode error). Rows convert with `.into()` or `.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Text<T>(pub T);

/// A domain enum that [`Text`] can decode: one whose names parse back.
pub trait TextName: Sized {
    fn from_name(text: &str) -> Result<Self, sqlx::error::BoxDynError>;
}

impl<T: TextName> sqlx::Type<sqlx::Postgres> for Text<T> {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        <&str as sqlx::Type<sqlx::Postgres>>::type_info()
    }
    fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
        <&str as sqlx::Type<sqlx::Postgres>>::compatible(ty)
    }
}

impl<'r, T: TextName> sqlx::Decode<'r, sqlx::Postgres> for Text<T> {
    fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        let text = <&str as sqlx::Decode<sqlx::Postgres>>::decode(value)?;
        Ok(Text(T::from_name(text)?))
    }
}

/// Lets a domain name enum be a TEXT column, read through [`Text`].
macro_rules! text_column {
    ($($ty:ty),+ $(,)?) => {$(
        impl TextName for $ty {
            fn from_name(text: &str) -> Result<Self, sqlx::error::BoxDynError> {
                Ok(<$ty>::parse(text)?)
            }
        }

        impl From<Text<$ty>> for $ty {
            fn from(text: Text<$ty>) -> Self {
                text.0
            }
        }
    )+};
}

text_column!(
    acp_domain::alert::AlertKind,
    acp_domain::notify::DeliveryState,
    acp_domain::event::DispatchOutcome,
    acp_domain::event::DispatchState,
    acp_domain::event::EventIdOrigin,
    acp_domain::run::RunStatus,
    acp_domain::message::RejectReason,
    acp_domain::source::SourceKind,
);

/// A pool that does not need the database to be up yet: connections are made
/// on demand, and a request waits at most `acquire_timeout` before it gets a
/// 503 instead of hanging.
///
/// sqlx already pings a connection when it goes back to the pool; a second
/// ping when it is taken out again is a round trip per query for nothing
/// under load. Only a connection that sat idle for a while (long enough for
/// the server to have gone away meanwhile) is pinged before use.
pub fn lazy_pool(url: &str, max_connections: u32) -> anyhow::Result<PgPool> {
    Ok(PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(3))
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > IDLE_BEFORE_PING {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
        .connect_lazy(url)?)
}

/// How long a pooled connection may sit idle and still be used unchecked.
const IDLE_BEFORE_PING: Duration = Duration::from_millis(500);

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

pub async fn migrate(pool: &PgPool) -> anyhow::Result<()> {
    MIGRATOR.run(pool).await?;
    Ok(())
}

/// Probes the database for readiness.
pub async fn ping(pool: &PgPool) -> StoreResult<()> {
    sqlx::query!("SELECT 1 AS one").fetch_one(pool).await?;
    Ok(())
}
