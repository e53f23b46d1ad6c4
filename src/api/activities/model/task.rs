//! One task of an activity as the API speaks it: its body, the schema of its
//! retry settings, and its parsing into the domain's `TaskSpec`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::task_schema::TaskBodyDoc;
use crate::api::field_errors::{Errors, check_text};
use acp_domain::activity::{TaskSpec, TaskType};

/// One task of each run. Its schema in the document is [`TaskBodyDoc`]'s:
/// one per kind of type, each with its own `config`.
///
/// `task_type` is `noop`, `webhook`, or the name of an activity type
/// implemented by a worker on `config.task_queue`. `config` is
/// type-specific: `webhook` takes `url` (required), `secret_ref` and
/// `timeout` (the older place for the task's `timeout`); other types take
/// `task_queue` (required), the rest is passed to the activity; `noop`
/// ignores it. `timeout` and `retry` are not for `noop`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskBody {
    pub task_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub config: serde_json::Map<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<serde_json::Value>,
}

impl utoipa::PartialSchema for TaskBody {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        TaskBodyDoc::schema()
    }
}

impl ToSchema for TaskBody {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        TaskBodyDoc::schemas(schemas);
    }
}

/// The schema of `retry.non_retryable`: up to 50 HTTP statuses.
fn status_list() -> utoipa::openapi::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(300))
                .maximum(Some(599)),
        )
        .max_items(Some(acp_domain::task::MAX_NON_RETRYABLE))
        .description(Some(
            "`webhook` only: HTTP statuses (300 to 599) that end the task at once.\n\
             Replaces the default list (every 4xx except 408 and 429).",
        ))
        .examples([serde_json::json!([400, 401, 403, 404, 503])])
        .build()
}

/// How failed attempts of a task are retried (Temporal activity retries).
/// Left-out fields keep the defaults of the task's type. `webhook`: 5
/// attempts, `PT1S` initial interval, backoff 2, `PT30S` maximum interval,
/// and every 4xx except 408 and 429 is not retried. Other types: 3 attempts,
/// `PT1S`, backoff 2, maximum interval 100 × the initial interval. Problems
/// with any field, unknown fields included, are 422 problems naming it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // the schema of `TaskBody.retry`; `domain::task` parses it
pub struct RetryBody {
    /// Attempts in all, the first included: 1 means no retry.
    #[schema(minimum = 1, maximum = 100, example = 3)]
    pub max_attempts: Option<u32>,
    /// The wait before the first retry, ISO-8601, `PT0.1S` to `PT1H`.
    #[schema(
        pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$",
        example = "PT1S"
    )]
    pub initial_interval: Option<String>,
    /// Each wait is the previous one times this: 1 (constant) to 10.
    #[schema(minimum = 1, maximum = 10, example = 2.0)]
    pub backoff: Option<f64>,
    /// The longest wait, ISO-8601, `PT0.1S` to `PT24H`, not shorter than
    /// `initial_interval`.
    #[schema(
        pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$",
        example = "PT30S"
    )]
    pub max_interval: Option<String>,
    #[schema(schema_with = status_list)]
    pub non_retryable: Option<Vec<u16>>,
}

pub(super) fn parse_task(errors: &mut Errors, index: usize, body: TaskBody) -> Option<TaskSpec> {
    let at = |field: &str| format!("tasks[{index}].{field}");
    let task_type = errors.take(&at("task_type"), TaskType::parse(&body.task_type));
    if let Some(name) = &body.name {
        check_text(errors, &at("name"), name, 200);
    }
    if serde_json::to_vec(&body.config)
        .map(|v| v.len())
        .unwrap_or(0)
        > 64 * 1024
    {
        errors.push(at("config"), "must be at most 64 KiB of JSON");
    }
    let spec = TaskSpec {
        task_type: task_type?,
        name: body.name,
        config: body.config,
        timeout: body.timeout,
        // `"retry": null` is no retry settings.
        retry: body.retry.filter(|r| !r.is_null()),
    };
    if let Err(found) = spec.parse() {
        let parent = format!("tasks[{index}]");
        errors.0.extend(found.into_iter().map(|e| e.under(&parent)));
    }
    Some(spec)
}
