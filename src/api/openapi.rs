//! The OpenAPI document, built from the handlers' annotations.

use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "activity-control-plane",
        description = "Activity definitions with trigger policies, turned into Temporal schedules and runs, with exact idempotency and full run history.",
        license(name = "Apache-2.0"),
    ),
    tags(
        (name = "activities", description = "Activity definitions and their schedules"),
        (name = "schedules", description = "Pause, resume, backfill, and what happened to every nominal time"),
        (name = "runs", description = "Run history: every execution and its task instances"),
        (name = "events", description = "External events, routed to event-triggered activities exactly once"),
        (name = "sources", description = "Brokers (NATS JetStream, RabbitMQ) consumed for events (scope `admin`)"),
        (name = "calendars", description = "Business calendars: weekend days, holidays, added working days, blackouts, coverage (writes need scope `admin`)"),
        (name = "alerts", description = "Broken expectations of activities: missed starts, stuck runs, failure streaks, missed fires"),
        (name = "subscriptions", description = "Signed CloudEvents notifications of runs and alerts (scope `admin`)"),
        (name = "stream", description = "Every change as Server-Sent Events, resumable from the change log"),
        (name = "keys", description = "API keys (scope `admin`, in its project)"),
        (name = "projects", description = "Projects: the teams sharing the service, their weights, quotas and usage (scope `operator`)"),
        (name = "audit", description = "Which API key made which write to what (scope `admin`)"),
        (name = "retention", description = "How long history is kept, and what the next retention pass drops (scope `admin`)"),
        (name = "health", description = "Liveness, readiness and metrics (no key needed)"),
    ),
    // A source's `config` refers to these by name (its schema depends on
    // the source's kind), and every problem response to `Problem` (see
    // `problems`), so they are listed here rather than found.
    components(schemas(
        acp_domain::source::NatsConfig,
        acp_domain::source::RabbitmqConfig,
        crate::api::error::Problem
    ))
)]
pub struct ApiDoc;

/// The document as served at `/openapi.json` and printed by `acp openapi`:
/// pretty JSON with a trailing newline, byte for byte what is committed in
/// `openapi/openapi.json`.
pub fn document_json() -> String {
    let mut text = document().to_pretty_json().unwrap_or_default();
    text.push('\n');
    text
}

/// The document: every route's operation, plus the bearer scheme and the
/// answers every secured operation can give (401, 403, 503).
pub fn document() -> utoipa::openapi::OpenApi {
    let (_, mut doc) = super::router().split_for_parts();
    project_header(&mut doc);
    secure(&mut doc);
    optional_bodies(&mut doc);
    named_page_items(&mut doc);
    doc
}

/// Routes that act on no one project: the projects themselves, and the
/// retention of history that holds every project's.
const ACROSS_PROJECTS: [&str; 2] = ["/v1/projects", "/v1/retention"];

/// Every secured operation that acts in a project takes the optional
/// `Acp-Project` header (see `api::project_header`), and may answer 404 for
/// it. It is written into each operation: OpenAPI's reusable parameters
/// (`components.parameters`) are not in the document model utoipa builds.
fn project_header(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    use utoipa::openapi::{ObjectBuilder, RefOr, Required, schema::Type};

    let header = ParameterBuilder::new()
        .name(super::project_header::HEADER)
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "The project the request acts in. An `operator` key (of no project) chooses it here, `default` when absent; with authentication disabled it chooses too. A project's key may name its own project only: any other answers 404, as a project that does not exist does.",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(acp_domain::project::ProjectId::PATTERN))
                .max_length(Some(63))
                .examples(["default"]),
        ))
        .build();
    const NOT_FOUND: &str = "The `Acp-Project` header names no project this key may act in";
    for (path, item) in doc.paths.paths.iter_mut() {
        if ACROSS_PROJECTS.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            if operation.security.as_ref().is_none_or(|s| s.is_empty()) {
                continue;
            }
            operation
                .parameters
                .get_or_insert_with(Vec::new)
                .push(header.clone());
            match operation.responses.responses.get_mut("404") {
                Some(RefOr::T(response)) => {
                    response.description = format!("{}; or {NOT_FOUND}", response.description);
                }
                Some(RefOr::Ref(_)) => {}
                None => {
                    operation
                        .responses
                        .responses
                        .insert("404".to_owned(), RefOr::T(problem(NOT_FOUND)));
                }
            }
        }
    }
}

/// A page's items refer to their component (`Page_RunResponse` to
/// `RunResponse`) instead of repeating it inline: one schema per type for
/// client generators, and no component left unused.
fn named_page_items(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::{ArrayItems, Schema};
    use utoipa::openapi::{Ref, RefOr};

    let Some(components) = doc.components.as_mut() else {
        return;
    };
    let names: std::collections::HashSet<String> = components.schemas.keys().cloned().collect();
    for (name, schema) in components.schemas.iter_mut() {
        let Some(item) = name.strip_prefix("Page_") else {
            continue;
        };
        if !names.contains(item) {
            continue;
        }
        if let RefOr::T(Schema::Object(page)) = schema
            && let Some(RefOr::T(Schema::Array(items))) = page.properties.get_mut("items")
        {
            items.items =
                ArrayItems::RefOrSchema(Box::new(RefOr::Ref(Ref::from_schema_name(item))));
        }
    }
}

/// An optional body (`Option<T>` in a handler) is declared as what it is: a
/// body that need not be sent (`required` absent) whose schema is `T`. The
/// `oneOf [null, T]` utoipa writes for it makes generated clients send a
/// JSON `null` or fail to serialise "no body" (openapi-python-client raised
/// a TypeError for pause/resume without one).
fn optional_bodies(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::{Schema, SchemaType, Type};
    use utoipa::openapi::{RefOr, Required};

    let is_null = |s: &RefOr<Schema>| matches!(s, RefOr::T(Schema::Object(o)) if o.schema_type == SchemaType::Type(Type::Null));
    for item in doc.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            let Some(body) = operation.request_body.as_mut() else {
                continue;
            };
            if body.required == Some(Required::True) {
                continue;
            }
            for content in body.content.values_mut() {
                if let Some(RefOr::T(Schema::OneOf(one_of))) = &content.schema {
                    let mut rest = one_of.items.iter().filter(|s| !is_null(s));
                    if let (Some(only), None) = (rest.next(), rest.next())
                        && one_of.items.len() == 2
                    {
                        content.schema = Some(only.clone());
                    }
                }
            }
        }
    }
}

/// A problem response: a [`crate::api::error::Problem`] with these words.
pub(super) fn problem(description: &str) -> utoipa::openapi::Response {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/problem+json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build(),
        )
        .build()
}

/// A problem response that says when to ask again (`Retry-After`, in
/// seconds).
pub(super) fn problem_retry_after(description: &str) -> utoipa::openapi::Response {
    use utoipa::openapi::ObjectBuilder;
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::schema::Type;

    let mut response = problem(description);
    response.headers.insert(
        "Retry-After".to_owned(),
        HeaderBuilder::new()
            .schema(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0)),
            )
            .description(Some("Seconds to wait before asking again"))
            .build(),
    );
    response
}

fn secure(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        super::auth::SCHEME,
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "An API key from `acp keys create` or `POST /v1/keys`. Scopes: `read` (GETs), `write` (read + definitions, trigger, pause, resume, backfill), `events` (`POST /v1/events` only), `admin` (everything in its project, its keys too), `operator` (everything, projects too; a key of no project). The scope an operation lists is the least it needs.",
                ))
                .build(),
        ),
    );
    for item in doc.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            let has_body = operation.request_body.is_some();
            let has_params = operation.parameters.as_ref().is_some_and(|p| !p.is_empty());
            let responses = &mut operation.responses.responses;
            // Any body can be unreadable, too large or not JSON; any
            // parameter can be malformed.
            let mut common = vec![];
            if has_body || has_params {
                common.push(("400", "Unreadable body or malformed parameter"));
            }
            if has_body {
                common.push(("413", "Body too large"));
                common.push(("415", "Not JSON"));
            }
            for (status, description) in common {
                responses
                    .entry(status.to_owned())
                    .or_insert_with(|| RefOr::T(problem(description)));
            }
            if operation.security.as_ref().is_none_or(|s| s.is_empty()) {
                continue;
            }
            for (status, description) in [
                ("401", "No bearer token, or not a live API key"),
                ("403", "The key's scope does not cover this operation"),
                (
                    "503",
                    "A dependency is unavailable, or the request timed out",
                ),
            ] {
                responses
                    .entry(status.to_owned())
                    .or_insert_with(|| RefOr::T(problem(description)));
            }
        }
    }
}
