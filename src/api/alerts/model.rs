//! The `alerts` and `notify` parts of an activity as the API speaks them,
//! and their parsing into the domain.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use acp_domain::FieldError;
use acp_domain::alert::{Expectations, MAX_FAILURE_STREAK};
use acp_domain::duration::IsoDuration;
use acp_domain::notify::{NotificationType, NotifyTarget};

/// The most notification targets one activity may name.
pub const MAX_NOTIFY_TARGETS: usize = 10;

/// What is expected of the activity; a broken expectation opens an alert
/// (`GET /v1/alerts`), which resolves when it holds again.
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertsBody {
    /// A nominal time (or an accepted event) must have a running or finished
    /// run within this ISO-8601 duration (`late_start` alert). At least `PT1S`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        example = "PT5M",
        pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$"
    )]
    pub start_within: Option<String>,
    /// A run still running after this ISO-8601 duration is `stuck`. At least `PT1S`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        example = "PT1H",
        pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$"
    )]
    pub max_duration: Option<String>,
    /// This many failed runs in a row (1 to 1000) open a `failure_streak` alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1000)]
    pub failure_streak: Option<i64>,
    /// Scheduled activities only: a nominal time that ends without a run for
    /// a reason other than a pause or the misfire/overlap policy opens a
    /// `missed_fire` alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_fires: Option<bool>,
    /// Scheduled activities whose trigger names a business calendar: this
    /// long (an ISO-8601 duration, at least `PT1S`) before the calendar's
    /// coverage ends (the day after its `covered_until`, in its zone) a
    /// `calendar_coverage` alert opens; it resolves when the calendar is
    /// extended past the notice. It stays open while the activity is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        example = "P30D",
        pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$"
    )]
    pub calendar_coverage: Option<String>,
}

/// Where run and alert notifications of this activity are POSTed, as
/// CloudEvents 1.0 structured JSON, signed like webhook tasks.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NotifyBody {
    /// Absolute http(s) URL. Internal addresses are refused at delivery
    /// unless the SSRF guard is off (`ACP_WEBHOOK_ALLOW_INTERNAL`).
    #[schema(example = "https://hooks.example.com/acp", max_length = 2048)]
    pub url: String,
    /// Name of a worker environment variable holding the HMAC-SHA256 secret
    /// (`X-Signature: sha256=<hex>` of the body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "NOTIFY_SECRET", pattern = r"^[A-Z_][A-Z0-9_]{0,127}$")]
    pub secret_ref: Option<String>,
    /// Only these notification types; absent or empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<NotificationType>)]
    pub types: Vec<String>,
}

fn positive_duration(
    errors: &mut Vec<FieldError>,
    field: &str,
    text: Option<&str>,
) -> Option<IsoDuration> {
    let text = text?;
    match IsoDuration::parse(text) {
        Ok(d) if d.as_std() >= std::time::Duration::from_secs(1) => Some(d),
        Ok(_) => {
            errors.push(FieldError::new(field, "must be at least PT1S"));
            None
        }
        Err(m) => {
            errors.push(FieldError::new(field, m));
            None
        }
    }
}

/// Parses `alerts`; `scheduled` says whether `missed_fires` may be asked for.
pub fn parse_alerts(
    errors: &mut Vec<FieldError>,
    body: Option<AlertsBody>,
    scheduled: bool,
) -> Option<Expectations> {
    let body = body?;
    let start_within =
        positive_duration(errors, "alerts.start_within", body.start_within.as_deref());
    let max_duration =
        positive_duration(errors, "alerts.max_duration", body.max_duration.as_deref());
    let failure_streak = match body.failure_streak {
        Some(n) if (1..=i64::from(MAX_FAILURE_STREAK)).contains(&n) => Some(n as u32),
        Some(_) => {
            errors.push(FieldError::new(
                "alerts.failure_streak",
                format!("must be from 1 to {MAX_FAILURE_STREAK}"),
            ));
            None
        }
        None => None,
    };
    let missed_fires = body.missed_fires.unwrap_or(false);
    if missed_fires && !scheduled {
        errors.push(FieldError::new(
            "alerts.missed_fires",
            "is only for scheduled (cron or interval) activities",
        ));
    }
    let calendar_coverage = positive_duration(
        errors,
        "alerts.calendar_coverage",
        body.calendar_coverage.as_deref(),
    );
    if calendar_coverage.is_some() && !scheduled {
        errors.push(FieldError::new(
            "alerts.calendar_coverage",
            "is only for scheduled (cron or interval) activities",
        ));
    }
    let expectations = Expectations {
        start_within,
        max_duration,
        failure_streak,
        missed_fires,
        calendar_coverage,
    };
    (!expectations.is_empty()).then_some(expectations)
}

/// Checks a notification URL, secret reference and type list, naming fields
/// under `at` (`notify[0]`, or empty for a subscription).
pub fn parse_target(
    errors: &mut Vec<FieldError>,
    at: &str,
    url: &str,
    secret_ref: Option<&str>,
    types: &[String],
) -> Option<NotifyTarget> {
    let field = |name: &str| {
        if at.is_empty() {
            name.to_owned()
        } else {
            format!("{at}.{name}")
        }
    };
    let before = errors.len();
    let parsed = url::Url::parse(url);
    if url.len() > 2048 || url.chars().any(char::is_control) {
        errors.push(FieldError::new(
            field("url"),
            "must be at most 2048 characters, no control characters",
        ));
    } else if !parsed.is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some()) {
        errors.push(FieldError::new(
            field("url"),
            "must be an absolute http(s) URL",
        ));
    }
    if let Some(name) = secret_ref
        && !acp_domain::task::is_env_var_name(name)
    {
        errors.push(FieldError::new(
            field("secret_ref"),
            "must name an environment variable (A-Z, 0-9, _)",
        ));
    }
    let mut parsed = Vec::new();
    for (i, t) in types.iter().enumerate() {
        match NotificationType::parse(t) {
            Ok(t) if !parsed.contains(&t) => parsed.push(t),
            Ok(_) => {}
            Err(m) => errors.push(FieldError::new(field(&format!("types[{i}]")), m)),
        }
    }
    (errors.len() == before).then(|| NotifyTarget {
        url: url.to_owned(),
        secret_ref: secret_ref.map(str::to_owned),
        types: parsed,
    })
}

pub fn parse_notify(
    errors: &mut Vec<FieldError>,
    body: Option<Vec<NotifyBody>>,
) -> Vec<NotifyTarget> {
    let body = body.unwrap_or_default();
    if body.len() > MAX_NOTIFY_TARGETS {
        errors.push(FieldError::new(
            "notify",
            format!("at most {MAX_NOTIFY_TARGETS} targets"),
        ));
    }
    body.iter()
        .enumerate()
        .filter_map(|(i, t)| {
            parse_target(
                errors,
                &format!("notify[{i}]"),
                &t.url,
                t.secret_ref.as_deref(),
                &t.types,
            )
        })
        .collect()
}

pub fn alerts_body(e: &Expectations) -> AlertsBody {
    AlertsBody {
        start_within: e.start_within.map(|d| d.to_string()),
        max_duration: e.max_duration.map(|d| d.to_string()),
        failure_streak: e.failure_streak.map(i64::from),
        missed_fires: e.missed_fires.then_some(true),
        calendar_coverage: e.calendar_coverage.map(|d| d.to_string()),
    }
}

pub fn notify_body(t: &NotifyTarget) -> NotifyBody {
    NotifyBody {
        url: t.url.clone(),
        secret_ref: t.secret_ref.clone(),
        types: t.types.iter().map(|t| t.as_str().to_owned()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(body: serde_json::Value, scheduled: bool) -> Vec<String> {
        let body: AlertsBody = serde_json::from_value(body).unwrap();
        let mut errors = Vec::new();
        parse_alerts(&mut errors, Some(body), scheduled);
        errors.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn every_bad_field_is_named() {
        let got = fields(
            serde_json::json!({"start_within": "PT0S", "max_duration": "soon", "failure_streak": 0, "missed_fires": true}),
            false,
        );
        assert_eq!(
            got,
            [
                "alerts.start_within",
                "alerts.max_duration",
                "alerts.failure_streak",
                "alerts.missed_fires"
            ]
        );
        assert!(
            fields(
                serde_json::json!({"start_within": "PT5S", "missed_fires": true}),
                true
            )
            .is_empty()
        );
        let mut errors = Vec::new();
        let targets = parse_notify(
            &mut errors,
            Some(vec![NotifyBody {
                url: "ftp://x".into(),
                secret_ref: Some("lower".into()),
                types: vec!["run.failed".into(), "nope".into()],
            }]),
        );
        assert!(targets.is_empty());
        let got: Vec<_> = errors.into_iter().map(|e| e.field).collect();
        assert_eq!(
            got,
            [
                "notify[0].url",
                "notify[0].secret_ref",
                "notify[0].types[1]"
            ]
        );
    }

    #[test]
    fn round_trip() {
        let mut errors = Vec::new();
        let body = AlertsBody {
            start_within: Some("PT5S".into()),
            max_duration: None,
            failure_streak: Some(3),
            missed_fires: Some(true),
            calendar_coverage: Some("P30D".into()),
        };
        let parsed = parse_alerts(&mut errors, Some(body), true).unwrap();
        let again = parse_alerts(&mut errors, Some(alerts_body(&parsed)), true).unwrap();
        assert_eq!(parsed, again);
        assert!(errors.is_empty());
    }
}
