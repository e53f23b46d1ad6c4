//! The schedules the service keeps in Temporal: read, create, update,
//! delete, backfill and list them, and bring one to its desired state.

use chrono::{DateTime, Utc};
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::enums::v1::ScheduleOverlapPolicy;
use temporalio_common::protos::temporal::api::schedule::v1::{BackfillRequest, SchedulePatch};
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    CreateScheduleRequest, DeleteScheduleRequest, DescribeScheduleRequest,
    ListScheduleMatchingTimesRequest, ListSchedulesRequest, PatchScheduleRequest,
    UpdateScheduleRequest,
};
use tonic::Code;

use super::{GatewayError, TemporalGateway};
use crate::translate::{DesiredSchedule, action_spec_hash};
use crate::{ScheduleActionView, ScheduleView};

fn timestamp(ts: &prost_wkt_types::Timestamp) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(ts.seconds, ts.nanos.max(0) as u32)
}

impl TemporalGateway {
    #[tracing::instrument(skip(self))]
    pub async fn describe(&self, schedule_id: &str) -> Result<Option<ScheduleView>, GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(DescribeScheduleRequest {
                namespace: self.settings.namespace.clone(),
                schedule_id: schedule_id.to_owned(),
            });
            let response = match WorkflowService::describe_schedule(&mut client, request).await {
                Ok(r) => r.into_inner(),
                Err(status) if status.code() == Code::NotFound => return Ok(None),
                Err(status) => return Err(status.into()),
            };
            let state = response
                .schedule
                .as_ref()
                .and_then(|s| s.state.clone())
                .unwrap_or_default();
            let info = response.info.unwrap_or_default();
            Ok(Some(ScheduleView {
                paused: state.paused,
                note: (!state.notes.is_empty()).then_some(state.notes),
                spec_hash: action_spec_hash(response.schedule.as_ref()),
                conflict_token: response.conflict_token,
                future_action_times: info
                    .future_action_times
                    .iter()
                    .filter_map(timestamp)
                    .collect(),
                action_count: info.action_count,
                overlap_skipped: info.overlap_skipped,
                missed_catchup_window: info.missed_catchup_window,
                buffer_dropped: info.buffer_dropped,
                recent_actions: info
                    .recent_actions
                    .iter()
                    .map(|a| ScheduleActionView {
                        scheduled_time: a.schedule_time.as_ref().and_then(timestamp),
                        actual_time: a.actual_time.as_ref().and_then(timestamp),
                        workflow_id: a
                            .start_workflow_result
                            .as_ref()
                            .map(|w| w.workflow_id.clone()),
                    })
                    .collect(),
                running_workflow_ids: info
                    .running_workflows
                    .iter()
                    .map(|w| w.workflow_id.clone())
                    .collect(),
            }))
        })
        .await
    }

    /// Creates a schedule; returns its conflict token.
    #[tracing::instrument(skip(self, desired))]
    pub async fn create(
        &self,
        schedule_id: &str,
        desired: &DesiredSchedule,
    ) -> Result<Vec<u8>, GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(CreateScheduleRequest {
                namespace: self.settings.namespace.clone(),
                schedule_id: schedule_id.to_owned(),
                schedule: Some(desired.schedule.clone()),
                identity: self.settings.identity.clone(),
                // Random on purpose: the server remembers request IDs, and a
                // re-create after a delete with a reused ID is silently dropped.
                // A retried create is safe anyway: it answers AlreadyExists.
                request_id: uuid::Uuid::new_v4().to_string(),
                memo: Some(desired.memo.clone()),
                ..Default::default()
            });
            let response = WorkflowService::create_schedule(&mut client, request).await?;
            Ok(response.into_inner().conflict_token)
        })
        .await
    }

    #[tracing::instrument(skip(self, desired, conflict_token))]
    pub async fn update(
        &self,
        schedule_id: &str,
        desired: &DesiredSchedule,
        conflict_token: Vec<u8>,
    ) -> Result<(), GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(UpdateScheduleRequest {
                namespace: self.settings.namespace.clone(),
                schedule_id: schedule_id.to_owned(),
                schedule: Some(desired.schedule.clone()),
                conflict_token,
                identity: self.settings.identity.clone(),
                request_id: uuid::Uuid::new_v4().to_string(),
                ..Default::default()
            });
            WorkflowService::update_schedule(&mut client, request).await?;
            Ok(())
        })
        .await
    }

    /// Deletes a schedule; `Ok(false)` when there was none.
    #[tracing::instrument(skip(self))]
    pub async fn delete(&self, schedule_id: &str) -> Result<bool, GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(DeleteScheduleRequest {
                namespace: self.settings.namespace.clone(),
                schedule_id: schedule_id.to_owned(),
                identity: self.settings.identity.clone(),
            });
            match WorkflowService::delete_schedule(&mut client, request).await {
                Ok(_) => Ok(true),
                Err(status) if status.code() == Code::NotFound => Ok(false),
                Err(status) => Err(status.into()),
            }
        })
        .await
    }

    /// Asks the schedule to run exactly these nominal times, one after another
    /// (`BufferAll`: a backfill under `Skip` would run almost nothing).
    #[tracing::instrument(skip(self, times), fields(count = times.len()))]
    pub async fn backfill(
        &self,
        schedule_id: &str,
        times: &[DateTime<Utc>],
    ) -> Result<(), GatewayError> {
        let stamp = |t: &DateTime<Utc>| prost_wkt_types::Timestamp {
            seconds: t.timestamp(),
            nanos: t.timestamp_subsec_nanos() as i32,
        };
        for chunk in times.chunks(100) {
            self.bounded(async {
                let mut client = self.client().await?;
                let request = self.request(PatchScheduleRequest {
                    namespace: self.settings.namespace.clone(),
                    schedule_id: schedule_id.to_owned(),
                    patch: Some(SchedulePatch {
                        // Both ends are inclusive: one request per time is exact.
                        backfill_request: chunk
                            .iter()
                            .map(|t| BackfillRequest {
                                start_time: Some(stamp(t)),
                                end_time: Some(stamp(t)),
                                overlap_policy: ScheduleOverlapPolicy::BufferAll as i32,
                            })
                            .collect(),
                        ..Default::default()
                    }),
                    identity: self.settings.identity.clone(),
                    request_id: uuid::Uuid::new_v4().to_string(),
                });
                WorkflowService::patch_schedule(&mut client, request).await?;
                Ok(())
            })
            .await?;
        }
        Ok(())
    }

    /// The schedule's own nominal times in `[start, end]`.
    pub async fn matching_times(
        &self,
        schedule_id: &str,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
    ) -> Result<Vec<DateTime<Utc>>, GatewayError> {
        self.bounded(async {
            let mut client = self.client().await?;
            let request = self.request(ListScheduleMatchingTimesRequest {
                namespace: self.settings.namespace.clone(),
                schedule_id: schedule_id.to_owned(),
                start_time: Some(prost_wkt_types::Timestamp {
                    seconds: start.timestamp(),
                    nanos: start.timestamp_subsec_nanos() as i32,
                }),
                end_time: Some(prost_wkt_types::Timestamp {
                    seconds: end.timestamp(),
                    nanos: end.timestamp_subsec_nanos() as i32,
                }),
            });
            let response = WorkflowService::list_schedule_matching_times(&mut client, request)
                .await?
                .into_inner();
            Ok(response.start_time.iter().filter_map(timestamp).collect())
        })
        .await
    }

    /// IDs of every schedule in the namespace whose ID starts with `prefix`.
    pub async fn list_schedule_ids(&self, prefix: &str) -> Result<Vec<String>, GatewayError> {
        let mut ids = Vec::new();
        let mut page_token = Vec::new();
        loop {
            let response = self
                .bounded(async {
                    let mut client = self.client().await?;
                    let request = self.request(ListSchedulesRequest {
                        namespace: self.settings.namespace.clone(),
                        maximum_page_size: 1000,
                        next_page_token: page_token.clone(),
                        ..Default::default()
                    });
                    Ok(WorkflowService::list_schedules(&mut client, request)
                        .await?
                        .into_inner())
                })
                .await?;
            ids.extend(
                response
                    .schedules
                    .into_iter()
                    .map(|s| s.schedule_id)
                    .filter(|id| id.starts_with(prefix)),
            );
            if response.next_page_token.is_empty() {
                return Ok(ids);
            }
            page_token = response.next_page_token;
        }
    }

    /// Brings one schedule to its desired state (absent when `desired` is
    /// `None`). `known_token` is the conflict token recorded after our last
    /// write: a schedule whose token differs was changed by someone else and
    /// is rewritten even if its memo still looks right. Returns what Temporal
    /// holds afterwards (its conflict token is the next drift check's).
    ///
    /// A schedule we never wrote is created first: one call, and what Temporal
    /// holds is exactly what we sent. Only when it already exists (a retried
    /// create, or a schedule made behind our back) is it read and replaced.
    #[tracing::instrument(skip(self, desired, known_token))]
    pub async fn apply(
        &self,
        schedule_id: &str,
        desired: Option<&DesiredSchedule>,
        known_token: Option<&[u8]>,
    ) -> Result<Option<ScheduleView>, GatewayError> {
        let Some(desired) = desired else {
            self.delete(schedule_id).await?;
            return Ok(None);
        };
        // Only a schedule we wrote before is worth reading first.
        let known = match known_token {
            Some(_) => self.describe(schedule_id).await?,
            None => None,
        };
        let current = match known {
            Some(current) => current,
            // Never written by us, or deleted behind our back since.
            None => match self.create(schedule_id, desired).await {
                Ok(token) => return Ok(Some(ScheduleView::created(desired, token))),
                Err(GatewayError::AlreadyExists) => {
                    self.describe(schedule_id).await?.ok_or_else(|| {
                        GatewayError::Unavailable(
                            "schedule deleted while it was being created; the next sync settles it"
                                .into(),
                        )
                    })?
                }
                Err(e) => return Err(e),
            },
        };
        let untouched = known_token == Some(current.conflict_token.as_slice());
        if untouched && is_current(&current, desired) {
            return Ok(Some(current));
        }
        self.update(schedule_id, desired, current.conflict_token)
            .await?;
        // Read back the new conflict token (an update answers none), and make
        // sure a concurrent writer did not leave something else.
        match self.describe(schedule_id).await? {
            Some(view) if is_current(&view, desired) => Ok(Some(view)),
            Some(view) => {
                self.update(schedule_id, desired, view.conflict_token)
                    .await?;
                self.describe(schedule_id).await
            }
            None => Err(GatewayError::Unavailable(
                "schedule vanished right after it was written".into(),
            )),
        }
    }
}

/// Whether a described schedule already is the desired one, as far as the
/// memo hash and the paused state tell.
pub fn is_current(view: &ScheduleView, desired: &DesiredSchedule) -> bool {
    view.spec_hash.as_deref() == Some(desired.spec_hash.as_str())
        && view.paused == desired.paused
        && view.note.clone().unwrap_or_default()
            == desired
                .schedule
                .state
                .as_ref()
                .map(|s| s.notes.clone())
                .unwrap_or_default()
}
