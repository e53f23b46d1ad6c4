//! The trigger rendered back from the domain into the API's shape (the
//! inverse of `trigger_model`'s parsing), for every answer that shows one.

use super::trigger_model::{CalendarBody, DstBody, TriggerBody, TriggerKind};
use acp_domain::trigger::{Cadence, Trigger};

pub(super) fn trigger_body(trigger: &Trigger) -> TriggerBody {
    let mut body = TriggerBody {
        kind: TriggerKind::Event,
        cron: None,
        timezone: None,
        every: None,
        event_types: None,
        misfire_policy: None,
        catchup_limit: None,
        misfire_grace: None,
        start_at: None,
        end_at: None,
        jitter: None,
        dst: None,
        calendar: None,
    };
    match trigger {
        Trigger::Event { event_types } => {
            body.event_types = Some(event_types.iter().map(|t| t.as_str().to_owned()).collect());
        }
        Trigger::Scheduled(s) => {
            match &s.cadence {
                Cadence::Cron {
                    cron,
                    timezone,
                    dst,
                } => {
                    body.kind = TriggerKind::Cron;
                    body.cron = Some(cron.as_str().to_owned());
                    body.timezone = Some(timezone.name().to_owned());
                    body.dst = Some(DstBody {
                        repeated: Some(dst.repeated.as_str().to_owned()),
                        skipped: Some(dst.skipped.as_str().to_owned()),
                    });
                }
                Cadence::Interval { every } => {
                    body.kind = TriggerKind::Interval;
                    body.every = Some(every.to_string());
                }
            }
            body.misfire_policy = Some(s.misfire_policy.as_str().to_owned());
            body.catchup_limit = Some(i64::from(s.catchup_limit.get()));
            body.misfire_grace = Some(s.misfire_grace.to_string());
            body.start_at = s
                .start_at
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true));
            body.end_at = s
                .end_at
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true));
            body.jitter = s.jitter.map(|j| j.to_string());
            body.calendar = s.calendar.map(|c| CalendarBody {
                id: c.id.to_string(),
                mode: Some(c.mode.as_str().to_owned()),
                roll: Some(c.roll.as_str().to_owned()),
                beyond_coverage: Some(c.beyond_coverage.as_str().to_owned()),
            });
        }
    }
    body
}
