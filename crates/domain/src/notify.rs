//! Notifications: what happened (a run ended, an alert opened or resolved),
//! where it goes, and the CloudEvents 1.0 document a receiver gets.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The kinds of notification. Their names carry a dot, so this is not a
/// `named_enum!` (whose serde names are snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub enum NotificationType {
    #[serde(rename = "run.succeeded")]
    RunSucceeded,
    #[serde(rename = "run.failed")]
    RunFailed,
    #[serde(rename = "run.cancelled")]
    RunCancelled,
    #[serde(rename = "run.skipped")]
    RunSkipped,
    #[serde(rename = "alert.opened")]
    AlertOpened,
    #[serde(rename = "alert.resolved")]
    AlertResolved,
}

impl NotificationType {
    pub const ALL: &'static [NotificationType] = &[
        Self::RunSucceeded,
        Self::RunFailed,
        Self::RunCancelled,
        Self::RunSkipped,
        Self::AlertOpened,
        Self::AlertResolved,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::RunSucceeded => "run.succeeded",
            Self::RunFailed => "run.failed",
            Self::RunCancelled => "run.cancelled",
            Self::RunSkipped => "run.skipped",
            Self::AlertOpened => "alert.opened",
            Self::AlertResolved => "alert.resolved",
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.as_str() == text)
            .ok_or_else(|| {
                format!(
                    "`{text}` is not a notification type; expected one of {}",
                    Self::ALL
                        .iter()
                        .map(|t| t.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}

named_enum! {
    /// Where one delivery of one notification to one destination is.
    pub enum DeliveryState ("delivery state") {
        /// Waiting for an earlier notification of the same subject to the
        /// same destination, or for Temporal.
        Pending = "pending",
        /// Handed to Temporal, which delivers it with retries.
        Dispatched = "dispatched",
        Delivered = "delivered",
        /// Every attempt failed, or the target was refused; `last_error` says why.
        Failed = "failed",
    }
}

/// A destination named in an activity's own `notify` list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifyTarget {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<String>,
    /// Only these types; empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<NotificationType>,
}

impl NotifyTarget {
    pub fn wants(&self, kind: NotificationType) -> bool {
        self.types.is_empty() || self.types.contains(&kind)
    }
}

/// The identity of a destination: deliveries to one destination about one
/// subject go out one after another, in the order they happened.
pub fn destination_of_subscription(id: Uuid) -> String {
    format!("subscription:{id}")
}

pub fn destination_of_activity_target(activity_id: Uuid, index: usize) -> String {
    format!("activity:{activity_id}:{index}")
}

/// One delivery's ID: the same notification to the same destination is one
/// delivery, however often the fan-out runs.
pub fn delivery_id(notification_id: Uuid, destination: &str) -> Uuid {
    Uuid::new_v5(
        &super::ids::ID_NAMESPACE,
        format!("delivery:{notification_id}:{destination}").as_bytes(),
    )
}

/// Temporal workflow ID of a delivery.
pub fn delivery_workflow_id(delivery_id: Uuid) -> String {
    format!("notify-{delivery_id}")
}

/// A notification as recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Notification {
    /// The CloudEvent `id`: receivers deduplicate by it.
    pub id: Uuid,
    pub kind: NotificationType,
    pub activity_id: Uuid,
    /// The run or alert it is about.
    pub subject: String,
    pub time: DateTime<Utc>,
    pub data: serde_json::Value,
}

/// The CloudEvents 1.0 structured-mode document of a notification.
pub fn cloud_event(n: &Notification) -> serde_json::Value {
    serde_json::json!({
        "specversion": "1.0",
        "id": n.id,
        "source": format!("/activities/{}", n.activity_id),
        "type": n.kind.as_str(),
        "subject": n.subject,
        "time": n.time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        "datacontenttype": "application/json",
        "data": n.data,
    })
}

/// A namespace-wide subscription.
#[derive(Debug, Clone)]
pub struct Subscription {
    pub id: Uuid,
    pub url: String,
    pub secret_ref: Option<String>,
    pub types: Vec<String>,
    pub activity_id: Option<Uuid>,
    pub description: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// One notification to one destination.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub id: Uuid,
    pub notification_id: Uuid,
    pub destination: String,
    pub subscription_id: Option<Uuid>,
    pub url: String,
    pub secret_ref: Option<String>,
    pub state: DeliveryState,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub dispatched_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// The notification's type (its column is `type`).
    pub kind: String,
}

/// One attempt of one delivery.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub delivery_id: Uuid,
    pub attempt: i32,
    pub attempted_at: DateTime<Utc>,
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in NotificationType::ALL {
            assert_eq!(NotificationType::parse(kind.as_str()), Ok(*kind));
            assert_eq!(
                serde_json::to_value(kind).ok(),
                Some(serde_json::Value::String(kind.as_str().into()))
            );
        }
        assert!(NotificationType::parse("run.exploded").is_err());
    }

    #[test]
    fn cloud_event_has_the_required_attributes() {
        let n = Notification {
            id: Uuid::from_u128(9),
            kind: NotificationType::RunFailed,
            activity_id: Uuid::from_u128(1),
            subject: "r".into(),
            time: DateTime::from_timestamp(1_772_355_600, 0).unwrap_or_default(),
            data: serde_json::json!({"status": "failed"}),
        };
        let event = cloud_event(&n);
        for key in ["specversion", "id", "source", "type", "time", "data"] {
            assert!(!event[key].is_null(), "{key}");
        }
        assert_eq!(event["type"], "run.failed");
        assert_eq!(event["time"], "2026-03-01T09:00:00Z");
    }

    #[test]
    fn deliveries_are_one_per_destination() {
        let n = Uuid::from_u128(3);
        let a = delivery_id(n, &destination_of_subscription(Uuid::from_u128(4)));
        assert_eq!(
            a,
            delivery_id(n, &destination_of_subscription(Uuid::from_u128(4)))
        );
        assert_ne!(
            a,
            delivery_id(n, &destination_of_activity_target(Uuid::from_u128(4), 0))
        );
    }
}
