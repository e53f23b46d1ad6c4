//! The raw-SDK baseline of benchmark 6: the least a run of this shape
//! costs on Temporal. A parent workflow starts one child workflow per task,
//! one after the other, and every workflow writes one row through one
//! activity; no HTTP, no dispatch rows, no definitions. The worker uses the
//! SDK's default options, as `acp`'s does.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use temporalio_macros::{activities, workflow, workflow_methods};
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_sdk::{
    ActivityOptions, ChildWorkflowOptions, Runtime, Worker, WorkerOptions, WorkflowContext,
    WorkflowResult,
};
use tokio::sync::oneshot;

pub const PARENT_TYPE: &str = "BenchParentWorkflow";

/// The baseline's rows: one per workflow.
pub const TABLE: &str = "CREATE TABLE IF NOT EXISTS bench_rows (workflow_id text PRIMARY KEY, written_at timestamptz NOT NULL DEFAULT now())";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParentInput {
    pub tasks: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RowInput {
    pub workflow_id: String,
}

pub struct RowActivities {
    pub pool: sqlx::PgPool,
}

#[activities]
impl RowActivities {
    #[activity(name = "bench_write_row")]
    pub async fn write_row(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: RowInput,
    ) -> Result<(), ActivityError> {
        sqlx::query("INSERT INTO bench_rows (workflow_id) VALUES ($1) ON CONFLICT DO NOTHING")
            .bind(&input.workflow_id)
            .execute(&self.pool)
            .await
            .map_err(|e| ActivityError::from(anyhow::anyhow!(e)))?;
        Ok(())
    }
}

fn row_options() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30)).build()
}

#[workflow]
#[derive(Default)]
pub struct BenchChildWorkflow;

#[workflow_methods]
impl BenchChildWorkflow {
    #[run(name = "BenchChildWorkflow")]
    pub async fn run(ctx: &mut WorkflowContext<Self>, _input: ParentInput) -> WorkflowResult<()> {
        let workflow_id = ctx.workflow_id().to_owned();
        ctx.execute_activity(
            RowActivities::write_row,
            RowInput { workflow_id },
            row_options(),
        )
        .await?;
        Ok(())
    }
}

#[workflow]
#[derive(Default)]
pub struct BenchParentWorkflow;

#[workflow_methods]
impl BenchParentWorkflow {
    #[run(name = "BenchParentWorkflow")]
    pub async fn run(ctx: &mut WorkflowContext<Self>, input: ParentInput) -> WorkflowResult<()> {
        let workflow_id = ctx.workflow_id().to_owned();
        for index in 0..input.tasks {
            let options = ChildWorkflowOptions::builder()
                .workflow_id(format!("{workflow_id}:task-{index}"))
                .build();
            let child = ctx
                .start_child_workflow(BenchChildWorkflow::run, ParentInput { tasks: 0 }, options)
                .await?;
            child.result().await?;
        }
        ctx.execute_activity(
            RowActivities::write_row,
            RowInput { workflow_id },
            row_options(),
        )
        .await?;
        Ok(())
    }
}

/// The baseline worker on its own thread (the SDK's worker is not `Send`),
/// until the returned sender is dropped or sent to.
pub fn spawn_worker(
    client: temporalio_client::Client,
    pool: sqlx::PgPool,
    task_queue: String,
) -> anyhow::Result<(oneshot::Sender<()>, std::thread::JoinHandle<()>)> {
    let (stop, stopped) = oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("bench-baseline-worker".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let local = tokio::task::LocalSet::new();
            local.block_on(&runtime, async move {
                let result: anyhow::Result<()> = async {
                    let sdk = Runtime::from_current_tokio(Default::default())?;
                    let options = WorkerOptions::new(task_queue)
                        .register_workflow::<BenchParentWorkflow>()?
                        .register_workflow::<BenchChildWorkflow>()?
                        .register_activities(RowActivities { pool })
                        .build();
                    let mut worker = Worker::new(&sdk, client, options)?;
                    let shutdown = worker.shutdown_handle();
                    let run = worker.run();
                    tokio::pin!(run);
                    tokio::select! {
                        result = &mut run => result?,
                        _ = stopped => {
                            shutdown();
                            run.await?;
                        }
                    }
                    Ok(())
                }
                .await;
                if let Err(err) = result {
                    eprintln!("baseline worker: {err:#}");
                }
            });
        })?;
    Ok((stop, thread))
}
