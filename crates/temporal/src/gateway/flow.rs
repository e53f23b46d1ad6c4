//! What flow control asks Temporal: whether a run's workflow is still open,
//! for the pass that recovers slots of runs that are gone.

use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::common::v1::WorkflowExecution;
use temporalio_common::protos::temporal::api::enums::v1::WorkflowExecutionStatus;
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    DescribeWorkflowExecutionRequest, SignalWorkflowExecutionRequest,
};
use tonic::Code;

use super::{GatewayError, TemporalGateway};

impl TemporalGateway {
    /// Whether the latest execution of `workflow_id` is still running:
    /// `false` when it closed (however: completed, failed, cancelled,
    /// terminated, timed out) or Temporal does not know it.
    #[tracing::instrument(skip(self))]
    pub async fn workflow_is_open(&self, workflow_id: &str) -> Result<bool, GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(DescribeWorkflowExecutionRequest {
                namespace: self.settings.namespace.clone(),
                execution: Some(WorkflowExecution {
                    workflow_id: workflow_id.to_owned(),
                    run_id: String::new(),
                }),
            });
            match WorkflowService::describe_workflow_execution(&mut client, request).await {
                Ok(response) => Ok(response
                    .into_inner()
                    .workflow_execution_info
                    .is_some_and(|info| info.status == WorkflowExecutionStatus::Running as i32)),
                Err(status) if status.code() == Code::NotFound => Ok(false),
                Err(status) => Err(status.into()),
            }
        })
        .await
    }

    /// Sends `signal` (no input) to the latest execution of `workflow_id`.
    /// `false` when there is nothing open to signal.
    #[tracing::instrument(skip(self))]
    pub async fn signal_workflow(
        &self,
        workflow_id: &str,
        signal: &str,
    ) -> Result<bool, GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(SignalWorkflowExecutionRequest {
                namespace: self.settings.namespace.clone(),
                workflow_execution: Some(WorkflowExecution {
                    workflow_id: workflow_id.to_owned(),
                    run_id: String::new(),
                }),
                signal_name: signal.to_owned(),
                identity: self.settings.identity.clone(),
                request_id: uuid::Uuid::new_v4().to_string(),
                ..Default::default()
            });
            match WorkflowService::signal_workflow_execution(&mut client, request).await {
                Ok(_) => Ok(true),
                Err(status) if status.code() == Code::NotFound => Ok(false),
                Err(status) => Err(status.into()),
            }
        })
        .await
    }
}
