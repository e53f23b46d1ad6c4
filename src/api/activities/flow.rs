//! The `flow` part of an activity as the API speaks it, and its parsing into
//! the domain.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use acp_domain::FieldError;
use acp_domain::duration::IsoDuration;
use acp_domain::flow::KeyUsage;
use acp_domain::flow::{
    Concurrency, Debounce, Flow, FlowKey, MAX_DEBOUNCE_PERIOD, MAX_LIMIT, MAX_RATE_PERIOD,
    MIN_RATE_PERIOD, OnLimit, RateLimit, RateOnLimit,
};

/// Flow control of this activity's runs, whatever started them (schedule,
/// event, manual trigger, backfill, retry).
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowBody {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<ConcurrencyBody>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimitBody>,
    /// Event triggers only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debounce: Option<DebounceBody>,
}

/// At most `limit` runs of this activity running at once, per `key`.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConcurrencyBody {
    /// Runs allowed to run at once per key, 1 to 1000.
    #[schema(minimum = 1, maximum = 1000, example = 2)]
    pub limit: i64,
    /// What groups runs: a JSON pointer into the run's event
    /// (`/payload/customer`; a string value is the key, any other value its
    /// JSON text, nothing found the empty key), or a constant. Absent: one
    /// group for the whole activity. At most 200 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "/payload/customer", max_length = 200)]
    pub key: Option<String>,
    /// `queue` (default): the run waits with status `queued`, first in first
    /// out per key; `skip`: it is recorded `skipped` with reason
    /// `concurrency_limit`; `cancel_oldest`: the oldest running run of the
    /// key is cancelled, then this one starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<OnLimit>)]
    pub on_limit: Option<String>,
}

/// At most `limit` run starts of this activity per `period`, per `key`, in
/// any window of that length (sliding). With `concurrency` too, a run first
/// takes its concurrency slot, then waits for its start.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimitBody {
    /// Run starts allowed per `period` per key, 1 to 1000.
    #[schema(minimum = 1, maximum = 1000, example = 5)]
    pub limit: i64,
    /// The window, an ISO-8601 duration from `PT0.1S` to `P1D` (days,
    /// hours, minutes, seconds).
    #[schema(
        example = "PT1S",
        pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$"
    )]
    pub period: String,
    /// What groups runs, as in `concurrency.key`. Absent: one group for the
    /// whole activity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "/payload/customer", max_length = 200)]
    pub key: Option<String>,
    /// `queue` (default): the run waits with status `queued` until the
    /// window has room for it, first in first out per key; `skip`: it is
    /// recorded `skipped` with reason `rate_limited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<RateOnLimit>)]
    pub on_limit: Option<String>,
}

/// A burst of events of one `key`, each within `period` of the one before,
/// becomes one run of the burst's last event, started `period` after it; its
/// event carries `debounce: {absorbed_count, absorbed_event_ids}`. The other
/// events are recorded as `skipped` runs (reason `debounced`), and their
/// dispatches name the run that took them. Event triggers only.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DebounceBody {
    /// The quiet time that ends a burst, an ISO-8601 duration from `PT0.1S`
    /// to `P1D`.
    #[schema(
        example = "PT2S",
        pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$"
    )]
    pub period: String,
    /// What groups events, a JSON pointer into the event or a constant, as
    /// in `concurrency.key`. Absent: one group for the whole activity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "/payload/doc", max_length = 200)]
    pub key: Option<String>,
}

/// Parses `flow`, naming fields `flow.concurrency.limit` and so on.
pub fn parse_flow(errors: &mut Vec<FieldError>, body: Option<FlowBody>) -> Option<Flow> {
    let body = body?;
    let concurrency = body.concurrency.and_then(|c| {
        let before = errors.len();
        let limit = match c.limit {
            n if (1..=i64::from(MAX_LIMIT)).contains(&n) => n as u32,
            _ => {
                errors.push(FieldError::new(
                    "flow.concurrency.limit",
                    format!("must be from 1 to {MAX_LIMIT}"),
                ));
                0
            }
        };
        let key = c.key.as_deref().and_then(|k| {
            FlowKey::parse(k)
                .map_err(|m| errors.push(FieldError::new("flow.concurrency.key", m)))
                .ok()
        });
        let on_limit = match c.on_limit.as_deref() {
            None => OnLimit::Queue,
            Some(text) => OnLimit::parse(text).unwrap_or_else(|m| {
                errors.push(FieldError::new("flow.concurrency.on_limit", m));
                OnLimit::Queue
            }),
        };
        (errors.len() == before).then_some(Concurrency {
            limit,
            key,
            on_limit,
        })
    });
    let rate_limit = body.rate_limit.and_then(|r| {
        let before = errors.len();
        let limit = match r.limit {
            n if (1..=i64::from(MAX_LIMIT)).contains(&n) => n as u32,
            _ => {
                errors.push(FieldError::new(
                    "flow.rate_limit.limit",
                    format!("must be from 1 to {MAX_LIMIT}"),
                ));
                0
            }
        };
        let period = match IsoDuration::parse(&r.period) {
            Ok(p) if (MIN_RATE_PERIOD..=MAX_RATE_PERIOD).contains(&p.as_std()) => Some(p),
            Ok(_) => {
                errors.push(FieldError::new(
                    "flow.rate_limit.period",
                    "must be from PT0.1S to P1D",
                ));
                None
            }
            Err(m) => {
                errors.push(FieldError::new("flow.rate_limit.period", m));
                None
            }
        };
        let key = r.key.as_deref().and_then(|k| {
            FlowKey::parse(k)
                .map_err(|m| errors.push(FieldError::new("flow.rate_limit.key", m)))
                .ok()
        });
        let on_limit = match r.on_limit.as_deref() {
            None => RateOnLimit::Queue,
            Some(text) => RateOnLimit::parse(text).unwrap_or_else(|m| {
                errors.push(FieldError::new("flow.rate_limit.on_limit", m));
                RateOnLimit::Queue
            }),
        };
        match (period, errors.len() == before) {
            (Some(period), true) => Some(RateLimit {
                limit,
                period,
                key,
                on_limit,
            }),
            _ => None,
        }
    });
    let debounce = body.debounce.and_then(|d| {
        let before = errors.len();
        let period = match IsoDuration::parse(&d.period) {
            Ok(p) if (MIN_RATE_PERIOD..=MAX_DEBOUNCE_PERIOD).contains(&p.as_std()) => Some(p),
            Ok(_) => {
                errors.push(FieldError::new(
                    "flow.debounce.period",
                    "must be from PT0.1S to P1D",
                ));
                None
            }
            Err(m) => {
                errors.push(FieldError::new("flow.debounce.period", m));
                None
            }
        };
        let key = d.key.as_deref().and_then(|k| {
            FlowKey::parse(k)
                .map_err(|m| errors.push(FieldError::new("flow.debounce.key", m)))
                .ok()
        });
        match (period, errors.len() == before) {
            (Some(period), true) => Some(Debounce { period, key }),
            _ => None,
        }
    });
    let flow = Flow {
        concurrency,
        rate_limit,
        debounce,
    };
    (!flow.is_empty()).then_some(flow)
}

/// Where an activity's concurrency slots are now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowStateResponse {
    /// Slots in use, all keys together.
    pub in_use: i64,
    /// Runs queued, all keys together.
    pub queued: i64,
    /// Per key with a run holding a slot or queued, busiest first (at most 100).
    pub keys: Vec<KeyStateResponse>,
}

/// Slots in use and runs queued for one key.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct KeyStateResponse {
    pub key: String,
    pub in_use: i64,
    pub queued: i64,
}

pub fn flow_state(usage: Vec<KeyUsage>) -> FlowStateResponse {
    FlowStateResponse {
        in_use: usage.iter().map(|k| k.in_use).sum(),
        queued: usage.iter().map(|k| k.queued).sum(),
        keys: usage
            .into_iter()
            .map(|k| KeyStateResponse {
                key: k.key,
                in_use: k.in_use,
                queued: k.queued,
            })
            .collect(),
    }
}

/// A stored flow as the API returns it.
pub fn flow_body(flow: &Flow) -> FlowBody {
    FlowBody {
        concurrency: flow.concurrency.as_ref().map(|c| ConcurrencyBody {
            limit: i64::from(c.limit),
            key: c.key.as_ref().map(|k| k.as_str().to_owned()),
            on_limit: Some(c.on_limit.as_str().to_owned()),
        }),
        rate_limit: flow.rate_limit.as_ref().map(|r| RateLimitBody {
            limit: i64::from(r.limit),
            period: r.period.to_string(),
            key: r.key.as_ref().map(|k| k.as_str().to_owned()),
            on_limit: Some(r.on_limit.as_str().to_owned()),
        }),
        debounce: flow.debounce.as_ref().map(|d| DebounceBody {
            period: d.period.to_string(),
            key: d.key.as_ref().map(|k| k.as_str().to_owned()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(body: serde_json::Value) -> Vec<String> {
        let body: FlowBody = serde_json::from_value(body).unwrap();
        let mut errors = Vec::new();
        parse_flow(&mut errors, Some(body));
        errors.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn bad_values_name_their_field() {
        assert_eq!(
            fields(serde_json::json!({"concurrency": {"limit": 0}})),
            ["flow.concurrency.limit"]
        );
        assert_eq!(
            fields(
                serde_json::json!({"concurrency": {"limit": 1001, "key": "/a~9", "on_limit": "drop"}})
            ),
            [
                "flow.concurrency.limit",
                "flow.concurrency.key",
                "flow.concurrency.on_limit"
            ]
        );
        assert!(
            fields(serde_json::json!({"concurrency": {"limit": 2, "key": "/payload/c"}}))
                .is_empty()
        );
        assert_eq!(
            fields(serde_json::json!({"rate_limit": {"limit": 0, "period": "PT1S"}})),
            ["flow.rate_limit.limit"]
        );
        assert_eq!(
            fields(
                serde_json::json!({"rate_limit": {"limit": 1001, "period": "P1M",
                "key": "/a~9", "on_limit": "cancel_oldest"}})
            ),
            [
                "flow.rate_limit.limit",
                "flow.rate_limit.period",
                "flow.rate_limit.key",
                "flow.rate_limit.on_limit"
            ]
        );
        for period in ["PT0S", "PT0.05S", "P2D"] {
            assert_eq!(
                fields(serde_json::json!({"rate_limit": {"limit": 5, "period": period}})),
                ["flow.rate_limit.period"],
                "{period}"
            );
        }
        assert!(
            fields(serde_json::json!({"rate_limit": {"limit": 5, "period": "PT1S"}})).is_empty()
        );
        assert_eq!(
            fields(serde_json::json!({"debounce": {"period": "PT0S", "key": "/a~"}})),
            ["flow.debounce.period", "flow.debounce.key"]
        );
        assert!(
            fields(serde_json::json!({"debounce": {"period": "PT2S", "key": "/payload/doc"}}))
                .is_empty()
        );
    }

    #[test]
    fn round_trip_fills_the_default() {
        let body: FlowBody =
            serde_json::from_value(serde_json::json!({"concurrency": {"limit": 3}})).unwrap();
        let flow = parse_flow(&mut Vec::new(), Some(body)).unwrap();
        let back = serde_json::to_value(flow_body(&flow)).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"concurrency": {"limit": 3, "on_limit": "queue"}})
        );
        let body: FlowBody = serde_json::from_value(
            serde_json::json!({"rate_limit": {"limit": 5, "period": "PT60S", "key": "/payload/c"}}),
        )
        .unwrap();
        let flow = parse_flow(&mut Vec::new(), Some(body)).unwrap();
        let back = serde_json::to_value(flow_body(&flow)).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"rate_limit": {"limit": 5, "period": "PT1M", "key": "/payload/c",
                "on_limit": "queue"}})
        );
    }
}
