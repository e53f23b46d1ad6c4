//! The one place that talks to the Temporal client.
//!
//! The connection is made lazily and kept: the service starts and serves
//! reads while Temporal is down, and picks Temporal up when it returns,
//! without a restart. Every call has a short deadline so that an outage costs
//! a request a few seconds, not a hang.

use std::time::Duration;

use temporalio_client::grpc::WorkflowService;
use temporalio_client::{Client, ClientOptions, Connection, ConnectionOptions, RetryOptions};
use temporalio_common::protos::temporal::api::workflowservice::v1::GetSystemInfoRequest;
use tokio::sync::Mutex;
use tonic::{Code, IntoRequest};
use url::Url;

mod executions;
mod flow;
mod schedules;

pub use schedules::is_current;

#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Temporal did not answer (down, unreachable, timed out). Retry later.
    #[error("Temporal is unavailable: {0}")]
    Unavailable(String),
    /// Temporal answered and refused. Retrying the same request will not help.
    #[error("Temporal rejected the request: {0}")]
    Rejected(String),
    /// This service's own settings for Temporal do not work (a bad
    /// `TEMPORAL_ADDRESS`, a client that cannot be built, credentials or a
    /// namespace Temporal refuses): an operator's to fix, never a caller's.
    #[error("Temporal is misconfigured: {0}")]
    Misconfigured(String),
    #[error("already exists")]
    AlreadyExists,
}

impl From<tonic::Status> for GatewayError {
    fn from(status: tonic::Status) -> Self {
        match status.code() {
            Code::AlreadyExists => GatewayError::AlreadyExists,
            Code::Unavailable
            | Code::DeadlineExceeded
            | Code::Cancelled
            | Code::Unknown
            | Code::ResourceExhausted
            | Code::Aborted
            | Code::Internal => {
                GatewayError::Unavailable(format!("{:?}: {}", status.code(), status.message()))
            }
            Code::Unauthenticated | Code::PermissionDenied => GatewayError::Misconfigured(format!(
                "{:?}: {} (check TEMPORAL_API_KEY, TEMPORAL_TLS and TEMPORAL_NAMESPACE)",
                status.code(),
                status.message()
            )),
            code => GatewayError::Rejected(format!("{code:?}: {}", status.message())),
        }
    }
}

#[derive(Clone)]
pub struct TemporalSettings {
    pub address: String,
    pub namespace: String,
    pub api_key: Option<String>,
    pub tls: bool,
    /// Deadline of one RPC, retries included.
    pub rpc_timeout: Duration,
    pub identity: String,
}

impl std::fmt::Debug for TemporalSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemporalSettings")
            .field("address", &self.address)
            .field("namespace", &self.namespace)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("tls", &self.tls)
            .field("rpc_timeout", &self.rpc_timeout)
            .finish()
    }
}

impl TemporalSettings {
    /// `host:port` or a URL; the SDK wants a URL.
    pub fn target_url(&self) -> Result<Url, GatewayError> {
        let with_scheme = if self.address.contains("://") {
            self.address.clone()
        } else if self.tls || self.api_key.is_some() {
            format!("https://{}", self.address)
        } else {
            format!("http://{}", self.address)
        };
        Url::parse(&with_scheme).map_err(|e| {
            GatewayError::Misconfigured(format!("bad TEMPORAL_ADDRESS `{}`: {e}", self.address))
        })
    }
}

pub use acp_domain::run::StartOutcome;

pub struct TemporalGateway {
    settings: TemporalSettings,
    client: Mutex<Option<Client>>,
}

impl TemporalGateway {
    pub fn new(settings: TemporalSettings) -> Self {
        Self {
            settings,
            client: Mutex::new(None),
        }
    }

    pub fn settings(&self) -> &TemporalSettings {
        &self.settings
    }

    /// The shared client, connecting on first use (and again after a failed
    /// first connect). The underlying channel reconnects by itself afterwards.
    pub async fn client(&self) -> Result<Client, GatewayError> {
        let mut guard = self.client.lock().await;
        if let Some(client) = guard.as_ref() {
            return Ok(client.clone());
        }
        let target = self.settings.target_url()?;
        let retry = RetryOptions::builder()
            .max_retries(2)
            .max_elapsed_time(Some(self.settings.rpc_timeout))
            .max_interval(Duration::from_millis(500))
            .build();
        let options = ConnectionOptions::new(target)
            .identity(self.settings.identity.clone())
            .connect_timeout(self.settings.rpc_timeout)
            .retry_options(retry)
            .maybe_api_key(self.settings.api_key.clone())
            .maybe_tls_options(self.settings.tls.then(Default::default))
            .build();
        let connect = Connection::connect(options);
        let connection = tokio::time::timeout(self.settings.rpc_timeout, connect)
            .await
            .map_err(|_| GatewayError::Unavailable("connect timed out".into()))?
            .map_err(|e| GatewayError::Unavailable(format!("connect failed: {e}")))?;
        let client = Client::new(
            connection,
            ClientOptions::new(self.settings.namespace.clone()).build(),
        )
        .map_err(|e| GatewayError::Misconfigured(format!("client: {e}")))?;
        *guard = Some(client.clone());
        Ok(client)
    }

    fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = message.into_request();
        request.set_timeout(self.settings.rpc_timeout);
        request
    }

    /// Bounds the whole call (connect included) by the RPC deadline.
    async fn bounded<T>(
        &self,
        call: impl Future<Output = Result<T, GatewayError>>,
    ) -> Result<T, GatewayError> {
        tokio::time::timeout(self.settings.rpc_timeout * 2, call)
            .await
            .map_err(|_| GatewayError::Unavailable("timed out".into()))?
    }

    pub async fn ping(&self) -> Result<(), GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            WorkflowService::get_system_info(&mut client, self.request(GetSystemInfoRequest {}))
                .await?;
            Ok(())
        })
        .await
    }
}
