//! Workflow executions the service starts and stops itself: runs (the
//! contract ID, RejectDuplicate; a retry's AllowDuplicateFailedOnly), the
//! launchers of times the engine would not fire, notification deliveries,
//! and cancel / terminate for run control.

use chrono::{DateTime, Utc};
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::common::v1::{
    Payload, Payloads, WorkflowExecution, WorkflowType,
};
use temporalio_common::protos::temporal::api::enums::v1::WorkflowIdReusePolicy;
use temporalio_common::protos::temporal::api::taskqueue::v1::TaskQueue;
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    RequestCancelWorkflowExecutionRequest, StartWorkflowExecutionRequest,
    TerminateWorkflowExecutionRequest,
};
use tonic::Code;

use super::{GatewayError, StartOutcome, TemporalGateway};
use crate::messages::RunInput;
use crate::translate::{LAUNCHER_WORKFLOW_TYPE, LauncherInput, json_payload, launcher_workflow_id};
use crate::workflows::RUN_WORKFLOW_TYPE;

impl TemporalGateway {
    /// Starts `RunActivityWorkflow` under `workflow_id` with RejectDuplicate.
    #[tracing::instrument(skip(self, input))]
    pub async fn start_run(
        &self,
        workflow_id: &str,
        task_queue: &str,
        input: &RunInput,
    ) -> Result<StartOutcome, GatewayError> {
        self.start_run_workflow(
            workflow_id,
            task_queue,
            input,
            uuid::Uuid::new_v4(),
            WorkflowIdReusePolicy::RejectDuplicate,
        )
        .await
    }

    /// Starts a new execution of a run's `workflow_id` for a retry, allowed
    /// only after a failed, cancelled or terminated one
    /// (AllowDuplicateFailedOnly): an ID that succeeded never runs twice.
    /// `Duplicate` when the last execution is running or completed.
    /// `request_id` makes a repeated start of one attempt the same start.
    #[tracing::instrument(skip(self, input))]
    pub async fn start_retry(
        &self,
        workflow_id: &str,
        task_queue: &str,
        input: &RunInput,
        request_id: uuid::Uuid,
    ) -> Result<StartOutcome, GatewayError> {
        self.start_run_workflow(
            workflow_id,
            task_queue,
            input,
            request_id,
            WorkflowIdReusePolicy::AllowDuplicateFailedOnly,
        )
        .await
    }

    async fn start_run_workflow(
        &self,
        workflow_id: &str,
        task_queue: &str,
        input: &RunInput,
        request_id: uuid::Uuid,
        reuse: WorkflowIdReusePolicy,
    ) -> Result<StartOutcome, GatewayError> {
        self.start_workflow(Start {
            workflow_type: RUN_WORKFLOW_TYPE,
            workflow_id,
            task_queue,
            input: json_payload(input),
            request_id,
            reuse,
        })
        .await
    }

    /// Starts one workflow execution; `Duplicate` when the reuse policy
    /// refuses the ID (running, or closed in a way the policy does not
    /// allow again).
    async fn start_workflow(&self, start: Start<'_>) -> Result<StartOutcome, GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(StartWorkflowExecutionRequest {
                namespace: self.settings.namespace.clone(),
                workflow_id: start.workflow_id.to_owned(),
                workflow_type: Some(WorkflowType {
                    name: start.workflow_type.to_owned(),
                }),
                task_queue: Some(TaskQueue {
                    name: start.task_queue.to_owned(),
                    ..Default::default()
                }),
                input: Some(Payloads {
                    payloads: vec![start.input],
                }),
                identity: self.settings.identity.clone(),
                request_id: start.request_id.to_string(),
                workflow_id_reuse_policy: start.reuse as i32,
                ..Default::default()
            });
            match WorkflowService::start_workflow_execution(&mut client, request).await {
                Ok(_) => Ok(StartOutcome::Started),
                Err(status) if status.code() == Code::AlreadyExists => {
                    tracing::info!(
                        workflow_id = %start.workflow_id,
                        workflow_type = start.workflow_type,
                        "already started: duplicate"
                    );
                    Ok(StartOutcome::Duplicate)
                }
                Err(status) => Err(status.into()),
            }
        })
        .await
    }

    /// Starts the launcher of `scheduled_for` as the schedule would have:
    /// under the workflow ID the schedule gives it (`launcher-{id}-{time}`),
    /// from which the launcher learns its nominal time and runs it under its
    /// contract ID (RejectDuplicate: the run itself happens at most once,
    /// however many launchers). For times the engine will not fire itself (a
    /// DST policy's extra time, a backfill the engine would not find).
    /// `again`: start it even if a launcher of that time ran before (a
    /// backfill asks again for a time that was skipped); otherwise
    /// `Duplicate` when one was started before. A launcher still running is
    /// `Duplicate` either way.
    #[tracing::instrument(skip(self))]
    pub async fn start_launcher(
        &self,
        activity_id: uuid::Uuid,
        scheduled_for: DateTime<Utc>,
        task_queue: &str,
        again: bool,
    ) -> Result<StartOutcome, GatewayError> {
        let reuse = if again {
            WorkflowIdReusePolicy::AllowDuplicate
        } else {
            WorkflowIdReusePolicy::RejectDuplicate
        };
        let workflow_id = launcher_workflow_id(activity_id, scheduled_for);
        self.start_workflow(Start {
            workflow_type: LAUNCHER_WORKFLOW_TYPE,
            workflow_id: &workflow_id,
            task_queue,
            input: json_payload(&LauncherInput { activity_id }),
            request_id: uuid::Uuid::new_v4(),
            reuse,
        })
        .await
    }

    /// Starts a notification delivery workflow under `workflow_id`
    /// (RejectDuplicate: a delivery is handed over at most once).
    #[tracing::instrument(skip(self))]
    pub async fn start_delivery(
        &self,
        workflow_id: &str,
        task_queue: &str,
        delivery_id: uuid::Uuid,
    ) -> Result<StartOutcome, GatewayError> {
        self.start_workflow(Start {
            workflow_type: crate::notify::DELIVERY_WORKFLOW_TYPE,
            workflow_id,
            task_queue,
            input: json_payload(&crate::notify::DeliveryInput { delivery_id }),
            request_id: uuid::Uuid::new_v4(),
            reuse: WorkflowIdReusePolicy::RejectDuplicate,
        })
        .await
    }

    // --- run control ---

    /// Asks the latest execution of `workflow_id` to cancel. `false` when
    /// there is nothing open to cancel.
    #[tracing::instrument(skip(self))]
    pub async fn cancel_workflow(
        &self,
        workflow_id: &str,
        reason: &str,
    ) -> Result<bool, GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(RequestCancelWorkflowExecutionRequest {
                namespace: self.settings.namespace.clone(),
                workflow_execution: Some(WorkflowExecution {
                    workflow_id: workflow_id.to_owned(),
                    run_id: String::new(),
                }),
                identity: self.settings.identity.clone(),
                request_id: uuid::Uuid::new_v4().to_string(),
                reason: reason.to_owned(),
                ..Default::default()
            });
            match WorkflowService::request_cancel_workflow_execution(&mut client, request).await {
                Ok(_) => Ok(true),
                Err(status) if status.code() == Code::NotFound => Ok(false),
                Err(status) => Err(status.into()),
            }
        })
        .await
    }

    /// Terminates the latest execution of `workflow_id` (no cleanup runs in
    /// it). `false` when there is nothing open to terminate.
    #[tracing::instrument(skip(self))]
    pub async fn terminate_workflow(
        &self,
        workflow_id: &str,
        reason: &str,
    ) -> Result<bool, GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(TerminateWorkflowExecutionRequest {
                namespace: self.settings.namespace.clone(),
                workflow_execution: Some(WorkflowExecution {
                    workflow_id: workflow_id.to_owned(),
                    run_id: String::new(),
                }),
                identity: self.settings.identity.clone(),
                reason: reason.to_owned(),
                ..Default::default()
            });
            match WorkflowService::terminate_workflow_execution(&mut client, request).await {
                Ok(_) => Ok(true),
                Err(status) if status.code() == Code::NotFound => Ok(false),
                Err(status) => Err(status.into()),
            }
        })
        .await
    }
}

/// What differs between the workflow starts this service makes.
struct Start<'a> {
    workflow_type: &'a str,
    workflow_id: &'a str,
    task_queue: &'a str,
    input: Payload,
    request_id: uuid::Uuid,
    reuse: WorkflowIdReusePolicy,
}
