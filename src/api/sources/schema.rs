//! A source as the document describes it: one schema per kind, a `oneOf`
//! told apart by `kind`, each with its own `config`, so that a client
//! generator pairs a kind with its settings and a fuzzer builds sources this
//! API takes. The wire type stays [`SourceRequest`], checked field by field
//! with an error naming each field.
//!
//! [`SourceRequest`]: super::handlers::SourceRequest
#![allow(dead_code)]

use utoipa::ToSchema;

use acp_domain::source::{NatsConfig, RabbitmqConfig};

/// A broker to consume events from. Messages may be CloudEvents (structured
/// or binary mode) or this API's event JSON.
#[derive(ToSchema, serde::Deserialize)]
#[serde(untagged)]
pub enum SourceRequestDoc {
    Nats(NatsSourceRequest),
    Rabbitmq(RabbitmqSourceRequest),
}

/// The kind of a NATS source.
#[derive(ToSchema, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NatsKind {
    Nats,
}

/// The kind of a RabbitMQ source.
#[derive(ToSchema, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RabbitmqKind {
    Rabbitmq,
}

/// A NATS JetStream stream, through a durable pull consumer.
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NatsSourceRequest {
    /// Unique, 1 to 200 characters.
    #[schema(example = "orders", min_length = 1, max_length = 200)]
    name: String,
    #[schema(inline)]
    kind: NatsKind,
    config: NatsConfig,
    /// Name of an environment variable of the consuming processes holding
    /// the credentials (a token or `user:password`). The value is never
    /// stored.
    #[schema(
        example = "ORDERS_BROKER_SECRET",
        pattern = r"^[A-Z_][A-Z0-9_]{0,127}$"
    )]
    secret_ref: Option<String>,
    /// Consumed when true (default).
    enabled: Option<bool>,
}

/// A RabbitMQ queue (AMQP 0-9-1).
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RabbitmqSourceRequest {
    /// Unique, 1 to 200 characters.
    #[schema(example = "orders", min_length = 1, max_length = 200)]
    name: String,
    #[schema(inline)]
    kind: RabbitmqKind,
    config: RabbitmqConfig,
    /// Name of an environment variable of the consuming processes holding
    /// the credentials (the password or `user:password`). The value is
    /// never stored.
    #[schema(
        example = "ORDERS_BROKER_SECRET",
        pattern = r"^[A-Z_][A-Z0-9_]{0,127}$"
    )]
    secret_ref: Option<String>,
    /// Consumed when true (default).
    enabled: Option<bool>,
}
