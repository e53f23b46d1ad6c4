//! The Temporal worker, a driver: it polls the task queue, runs the
//! workflows (`temporal::workflows`, `temporal::notify`) and the activities
//! they call, whose implementations here hand their inputs to the use cases
//! (`service::execution`, `service::deliveries`).
//!
//! `Worker::run` is not `Send`, so the worker lives on its own thread with a
//! current-thread runtime and a `LocalSet`; it has its own Temporal client
//! and database pool there. It waits for Temporal when it is down, restarts
//! after a fatal poll error, and on stop lets in-flight tasks finish (or hands
//! them back to the server) before it returns.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use temporalio_sdk::{Runtime, Worker, WorkerOptions};
use tokio::sync::oneshot;

use acp_service::deliveries::Deliveries;
use acp_service::execution::Execution;
use acp_temporal::notify::DeliverNotificationWorkflow;
use acp_temporal::workflows::{
    LaunchScheduledRunWorkflow, RunActivityWorkflow, TaskInstanceWorkflow,
};
use acp_temporal::{TemporalGateway, TemporalSettings};
use execution::ExecutionHandlers;
use notify::NotifyHandlers;

mod attempt;
pub mod execution;
pub mod notify;

#[derive(Clone)]
pub struct WorkerConfig {
    pub temporal: TemporalSettings,
    pub task_queue: String,
    pub database: PgConnectOptions,
    pub db_max_connections: u32,
    pub allow_internal_webhooks: bool,
    /// Test-only fault hooks (the `fault-injection` feature).
    #[cfg(feature = "fault-injection")]
    pub faults: std::sync::Arc<acp_service::faults::Faults>,
}

/// A running worker; `stop` shuts it down gracefully.
pub struct WorkerHandle {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WorkerHandle {
    /// Asks the worker to stop and waits until it has.
    pub async fn stop(mut self) {
        self.stop_inner().await;
    }

    async fn stop_inner(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

impl Drop for WorkerHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub fn spawn(config: WorkerConfig) -> std::io::Result<WorkerHandle> {
    let (stop_tx, stop_rx) = oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("acp-worker".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(err) => {
                    tracing::error!(error = %err, "worker runtime");
                    return;
                }
            };
            let local = tokio::task::LocalSet::new();
            local.block_on(&runtime, run_loop(config, stop_rx));
        })?;
    Ok(WorkerHandle {
        stop: Some(stop_tx),
        thread: Some(thread),
    })
}

/// Runs a worker until `shutdown` resolves.
pub async fn run(config: WorkerConfig, shutdown: impl Future<Output = ()>) {
    match spawn(config) {
        Ok(handle) => {
            shutdown.await;
            handle.stop().await;
        }
        Err(err) => tracing::error!(error = %err, "could not start the worker thread"),
    }
}

async fn run_loop(config: WorkerConfig, mut stop: oneshot::Receiver<()>) {
    let sdk_runtime = match Runtime::from_current_tokio(Default::default()) {
        Ok(r) => r,
        Err(err) => {
            tracing::error!(error = %err, "worker: SDK runtime");
            return;
        }
    };
    let pool = PgPoolOptions::new()
        .max_connections(config.db_max_connections)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy_with(config.database.clone());
    let gateway = Arc::new(TemporalGateway::new(config.temporal.clone()));
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default();
    loop {
        let client = tokio::select! {
            _ = &mut stop => return,
            client = gateway.client() => client,
        };
        let client = match client {
            Ok(c) => c,
            Err(err) => {
                tracing::info!(error = %err, "worker waiting for Temporal");
                tokio::select! {
                    _ = &mut stop => return,
                    _ = tokio::time::sleep(Duration::from_secs(2)) => continue,
                }
            }
        };
        let execution = Execution::new(
            pool.clone(),
            gateway.clone(),
            http.clone(),
            config.allow_internal_webhooks,
        );
        #[cfg(feature = "fault-injection")]
        let execution = execution.with_faults(config.faults.clone());
        let activities = ExecutionHandlers { execution };
        let options = match WorkerOptions::new(config.task_queue.clone())
            .register_workflow::<LaunchScheduledRunWorkflow>()
            .and_then(|o| o.register_workflow::<RunActivityWorkflow>())
            .and_then(|o| o.register_workflow::<TaskInstanceWorkflow>())
            .and_then(|o| o.register_workflow::<DeliverNotificationWorkflow>())
        {
            Ok(o) => o
                .register_activities(activities)
                .register_activities(NotifyHandlers {
                    deliveries: Deliveries::new(
                        pool.clone(),
                        http.clone(),
                        config.allow_internal_webhooks,
                    ),
                })
                .build(),
            Err(err) => {
                tracing::error!(error = %err, "worker: workflow registration");
                return;
            }
        };
        let mut worker = match Worker::new(&sdk_runtime, client, options) {
            Ok(w) => w,
            Err(err) => {
                tracing::warn!(error = %err, "worker could not be created; retrying");
                tokio::select! {
                    _ = &mut stop => return,
                    _ = tokio::time::sleep(Duration::from_secs(2)) => continue,
                }
            }
        };
        let shutdown = worker.shutdown_handle();
        tracing::info!(task_queue = %config.task_queue, "worker polling");
        let stopped = {
            let run = worker.run();
            tokio::pin!(run);
            tokio::select! {
                result = &mut run => {
                    if let Err(err) = result {
                        tracing::warn!(error = %err, "worker stopped; restarting");
                    }
                    false
                }
                _ = &mut stop => {
                    shutdown();
                    if let Err(err) = run.await {
                        tracing::warn!(error = %err, "worker shutdown");
                    }
                    true
                }
            }
        };
        if stopped {
            tracing::info!("worker stopped");
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
