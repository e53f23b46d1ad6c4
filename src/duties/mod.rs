//! The background duties in one table: each one's name, what it does, which
//! subcommands carry it (and on what condition), whether it is
//! leader-elected, and how it is started.
//!
//! Everything else is derived from [`TABLE`]: what `app::run_service`
//! starts, the roles `/readyz` reports for every-process duties, the
//! `serve`, `api` and `worker` help texts, and the README's duty table
//! (`acp duties --markdown`; a test compares the two). The loops that live
//! here are the reconciler's and the alert evaluator's; the others are the
//! use cases' (`acp_service`).

pub mod alerting;
pub mod reconcile;

use std::fmt::Write as _;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use acp_service::Services;
use acp_service::duties::{Duty, Role};

use crate::app::Service;
use crate::config::Settings;
use Service::{Api, Serve, Worker};
use When::{Always, ConsumingSources};
use alerting::Evaluator;
use reconcile::Reconciler;

/// How often an idle event dispatcher looks for rows other processes left.
const DISPATCH_POLL: Duration = Duration::from_secs(1);

/// A future that resolves when the process stops.
pub type Stop = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A started duty: runs until its [`Stop`] resolves.
pub type Running = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What a duty is started from.
pub struct Context<'a> {
    pub services: &'a Arc<Services>,
    pub settings: &'a Settings,
}

/// Whether the fleet has one active instance of a duty or every process
/// that carries it acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Election {
    /// Every process carrying it asks for its PostgreSQL lease each
    /// interval; only the holder acts, the others stand by.
    Leader,
    /// Every process carrying it acts; they divide the work by row leases,
    /// the broker or the task queue.
    EveryProcess,
}

/// On what condition a subcommand carries a duty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    /// Only while the process consumes the broker sources
    /// (`ACP_CONSUME_SOURCES`, on by default).
    ConsumingSources,
}

impl When {
    fn holds(self, settings: &Settings) -> bool {
        match self {
            When::Always => true,
            When::ConsumingSources => settings.consume_sources,
        }
    }

    /// The condition in words, its setting quoted by `quote`.
    fn note(self, quote: &str) -> Option<String> {
        match self {
            When::Always => None,
            When::ConsumingSources => {
                Some(format!("unless {quote}ACP_CONSUME_SOURCES=false{quote}"))
            }
        }
    }
}

/// One background duty.
pub struct Entry {
    /// Its name: `/readyz`'s and `acp_duty_leader`'s for a reported duty.
    pub name: &'static str,
    /// The duty `/readyz` reports, if it reports this one.
    pub reported: Option<Duty>,
    /// What it does, in one line.
    pub about: &'static str,
    /// The subcommands that carry it, each with its condition.
    pub carriers: &'static [(Service, When)],
    pub election: Election,
    start: fn(&Context<'_>, Stop) -> anyhow::Result<Running>,
}

impl Entry {
    /// Whether `service`, configured by `settings`, runs this duty.
    pub fn carried_by(&self, service: Service, settings: &Settings) -> bool {
        self.carriers
            .iter()
            .any(|(s, when)| *s == service && when.holds(settings))
    }

    /// Starts the duty. An every-process duty's role is known at once; a
    /// leader-elected one's is its loop's to report, turn by turn.
    pub fn start(&self, context: &Context<'_>, stop: Stop) -> anyhow::Result<Running> {
        if let (Some(duty), Election::EveryProcess) = (self.reported, self.election) {
            context.services.duties.set(duty, Role::Shared);
        }
        (self.start)(context, stop)
    }

    fn when(&self, service: Service) -> Option<When> {
        self.carriers
            .iter()
            .find(|(s, _)| *s == service)
            .map(|(_, when)| *when)
    }
}

/// Every background duty, in the order a process starts them.
pub const TABLE: &[Entry] = &[
    Entry {
        name: "reconcile",
        reported: Some(Duty::Reconcile),
        about: "Makes Temporal's schedules match PostgreSQL: syncs, repairs drift, removes \
                orphans, hands backfills over, starts DST extra times, enforces run timeouts.",
        // Every API process, so that a fleet without `serve` still syncs
        // schedules, repairs drift and starts DST extra times.
        carriers: &[(Serve, Always), (Api, Always)],
        election: Election::Leader,
        start: |cx, stop| {
            let reconciler = Reconciler::new(cx.services);
            Ok(Box::pin(
                reconciler.run(cx.settings.reconcile_interval(), stop),
            ))
        },
    },
    Entry {
        name: "alert_evaluation",
        reported: Some(Duty::AlertEvaluation),
        about: "Turns expectations into alerts, opening and resolving them; reads only \
                PostgreSQL, so it runs with the API, not only in the worker.",
        carriers: &[(Serve, Always), (Api, Always)],
        election: Election::Leader,
        start: |cx, stop| {
            let evaluator = Evaluator::new(cx.services);
            Ok(Box::pin(evaluator.run(cx.settings.alert_interval(), stop)))
        },
    },
    Entry {
        name: "change_sequencer",
        reported: Some(Duty::ChangeSequencer),
        about: "Numbers committed changes into the change log (the stream's order) and prunes it.",
        carriers: &[(Serve, Always), (Api, Always)],
        election: Election::Leader,
        start: |cx, stop| {
            let feed = cx.services.changes.clone();
            let board = cx.services.duties.clone();
            let interval = cx.settings.reconcile_interval();
            Ok(Box::pin(feed.run_sequencer(board, interval, stop)))
        },
    },
    Entry {
        name: "history_retention",
        reported: Some(Duty::HistoryRetention),
        about: "Makes the change log's day partitions ahead and drops those wholly older than \
                its retention (`GET /v1/retention` shows the next pass).",
        carriers: &[(Serve, Always), (Api, Always)],
        election: Election::Leader,
        start: |cx, stop| {
            let retention = cx.services.retention.clone();
            let board = cx.services.duties.clone();
            let lease = cx.services.duty_lease(Duty::HistoryRetention);
            let interval = cx.settings.reconcile_interval();
            Ok(Box::pin(retention.run(board, lease, interval, stop)))
        },
    },
    Entry {
        name: "flow_recovery",
        reported: Some(Duty::FlowRecovery),
        about: "Frees the concurrency slots of runs whose workflows closed without ending them.",
        carriers: &[(Serve, Always), (Api, Always)],
        election: Election::EveryProcess,
        start: |cx, stop| {
            let flow = cx.services.flow.clone();
            Ok(Box::pin(
                flow.run_recovery(cx.settings.reconcile_interval(), stop),
            ))
        },
    },
    Entry {
        name: "notification_hand_over",
        reported: Some(Duty::NotificationHandOver),
        about: "Hands recorded notifications to Temporal for delivery.",
        carriers: &[(Serve, Always), (Api, Always)],
        election: Election::EveryProcess,
        start: |cx, stop| {
            let dispatcher = cx.services.notifications.clone();
            Ok(Box::pin(
                dispatcher.run_dispatcher(cx.settings.notify_interval(), stop),
            ))
        },
    },
    Entry {
        name: "change_fanout",
        reported: None,
        about: "Hands each change the log gains to this process's change streams (one LISTEN \
                per process); not listed by /readyz.",
        carriers: &[(Serve, Always), (Api, Always)],
        election: Election::EveryProcess,
        start: |cx, stop| Ok(Box::pin(cx.services.changes.clone().run_fanout(stop))),
    },
    Entry {
        name: "event_dispatch",
        reported: Some(Duty::EventDispatch),
        about: "Starts the runs of accepted events; wherever events are accepted (the API, \
                the broker consumers).",
        // Whatever accepts events starts their runs; the dispatchers lease
        // rows, so every process's shares the work.
        carriers: &[(Serve, Always), (Api, Always), (Worker, ConsumingSources)],
        election: Election::EveryProcess,
        start: |cx, stop| {
            let dispatcher = cx
                .services
                .events
                .clone()
                .with_max_running(cx.settings.dispatch_max_running);
            Ok(Box::pin(dispatcher.run_dispatcher(DISPATCH_POLL, stop)))
        },
    },
    Entry {
        name: "broker_consumption",
        reported: Some(Duty::BrokerConsumption),
        about: "Consumes the enabled broker sources (NATS JetStream, RabbitMQ) into events.",
        carriers: &[(Serve, ConsumingSources), (Worker, ConsumingSources)],
        election: Election::EveryProcess,
        start: |cx, stop| {
            let consumers = crate::brokers::Context {
                sources: cx.services.sources.clone(),
                settings: Arc::new(cx.settings.consumers()),
            };
            Ok(Box::pin(crate::brokers::run(consumers, stop)))
        },
    },
    Entry {
        name: "temporal_worker",
        reported: Some(Duty::TemporalWorker),
        about: "Executes workflows and activities from the task queue.",
        carriers: &[(Serve, Always), (Worker, Always)],
        election: Election::EveryProcess,
        start: |cx, stop| {
            let config = cx.settings.worker()?;
            Ok(Box::pin(crate::worker::run(config, stop)))
        },
    },
];

/// The duties `service` runs with `settings`, in the order it starts them.
pub fn carried_by<'a>(
    service: Service,
    settings: &'a Settings,
) -> impl Iterator<Item = &'static Entry> + 'a {
    TABLE
        .iter()
        .filter(move |e| e.carried_by(service, settings))
}

/// What a subcommand is, before its duties.
fn lead(service: Service) -> &'static str {
    match service {
        Serve => "The HTTP API (migrating first) and the duties",
        Api => "The HTTP API and the duties",
        Worker => "No HTTP API (probes on ACP_PROBE_LISTEN); the duties",
    }
}

/// A duty's name as a subcommand's help lists it, with its election and
/// condition: `reconcile (leader-elected)`.
fn labelled(entry: &Entry, when: When) -> String {
    let notes: Vec<String> = [
        (entry.election == Election::Leader).then(|| "leader-elected".to_owned()),
        when.note(""),
    ]
    .into_iter()
    .flatten()
    .collect();
    if notes.is_empty() {
        entry.name.to_owned()
    } else {
        format!("{} ({})", entry.name, notes.join(", "))
    }
}

/// A subcommand's one-line help: its duties from the table.
pub fn about(service: Service) -> String {
    let duties: Vec<String> = TABLE
        .iter()
        .filter_map(|e| e.when(service).map(|when| labelled(e, when)))
        .collect();
    format!("{}: {}", lead(service), duties.join(", "))
}

/// A subcommand's `--help`: its duties from the table, each with what it does.
pub fn long_about(service: Service) -> String {
    let mut text = format!("{}:\n", lead(service));
    for entry in TABLE {
        if let Some(when) = entry.when(service) {
            let _ = write!(
                text,
                "\n  {}\n      {}\n",
                labelled(entry, when),
                entry.about
            );
        }
    }
    text.push_str(
        "\nA leader-elected duty runs in every process that carries it but acts only in the \
         one holding its PostgreSQL lease; the others stand by and take over within one \
         interval. GET /readyz lists the duties a process carries and its role in each.",
    );
    text
}

/// Every duty, for `acp duties`: its name, election, carriers and what it
/// does.
pub fn text() -> String {
    let mut text = String::new();
    for entry in TABLE {
        let runs = match entry.election {
            Election::Leader => "leader-elected",
            Election::EveryProcess => "every process",
        };
        let _ = writeln!(
            text,
            "{}: {runs}, in {}\n    {}",
            entry.name,
            carriers(entry, "").join(", "),
            entry.about
        );
    }
    text
}

/// The subcommands that carry a duty, each quoted by `quote` and with its
/// condition.
fn carriers(entry: &Entry, quote: &str) -> Vec<String> {
    entry
        .carriers
        .iter()
        .map(|(service, when)| match when.note(quote) {
            None => format!("{quote}{}{quote}", service.as_str()),
            Some(note) => format!("{quote}{}{quote} ({note})", service.as_str()),
        })
        .collect()
}

/// The README's duty table (between its `duties` markers).
pub fn markdown() -> String {
    let mut text = String::from("| duty | what it does | carried by | runs |\n|---|---|---|---|\n");
    for entry in TABLE {
        let runs = match entry.election {
            Election::Leader => "leader-elected",
            Election::EveryProcess => "every process",
        };
        let _ = writeln!(
            text,
            "| `{}` | {} | {} | {runs} |",
            entry.name,
            entry.about,
            carriers(entry, "`").join(", ")
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reported_duty_is_in_the_table_once_under_its_own_name() {
        for duty in Duty::ALL {
            let entries: Vec<&Entry> = TABLE.iter().filter(|e| e.reported == Some(duty)).collect();
            assert_eq!(entries.len(), 1, "{duty:?}");
            assert_eq!(entries[0].name, duty.as_str());
        }
        let mut names: Vec<&str> = TABLE.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
    }

    /// The lease and the `acp_duty_leader` gauge follow `Duty::is_single`.
    #[test]
    fn leader_elected_duties_are_the_single_ones() {
        for entry in TABLE {
            let single = entry.reported.is_some_and(Duty::is_single);
            assert_eq!(entry.election == Election::Leader, single, "{}", entry.name);
        }
    }

    #[test]
    fn help_names_each_carried_duty_with_its_election_and_condition() {
        assert_eq!(
            about(Worker),
            "No HTTP API (probes on ACP_PROBE_LISTEN); the duties: event_dispatch (unless \
             ACP_CONSUME_SOURCES=false), broker_consumption (unless ACP_CONSUME_SOURCES=false), \
             temporal_worker"
        );
        assert!(
            about(Api).starts_with(
                "The HTTP API and the duties: reconcile (leader-elected), alert_evaluation \
                 (leader-elected), change_sequencer (leader-elected), history_retention \
                 (leader-elected), flow_recovery,"
            ),
            "{}",
            about(Api)
        );
        assert!(!about(Api).contains("temporal_worker"));
        assert!(long_about(Serve).contains("\n  temporal_worker\n      Executes workflows"));
    }
}
