//! Plain domain types and pure decisions. Each value is parsed once at the
//! boundary; inside, it is valid. Nothing here does I/O or knows HTTP.

/// A closed set of names that the API, the database and metrics share: one
/// definition gives the serde names, the OpenAPI `enum`, `as_str` and `parse`.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident ($what:literal) {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash,
            serde::Serialize, serde::Deserialize, utoipa::ToSchema,
        )]
        // `rename_all`, not a `rename` per variant: utoipa does not see a
        // `rename` whose name comes from a macro argument. `as_str` must
        // agree with it; a test below checks every enum.
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            pub fn parse(text: &str) -> Result<Self, String> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == text)
                    .ok_or_else(|| {
                        format!(
                            "`{text}` is not a {}; expected one of {}",
                            $what,
                            [$($text),+].join(", ")
                        )
                    })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub mod activity;
pub mod admission;
pub mod alert;
pub mod audit;
pub mod auth;
pub mod backfill;
pub mod business_calendar;
pub mod calendar;
pub mod change;
pub mod cloudevent;
pub mod duration;
pub mod event;
pub mod fair_share;
pub mod flow;
pub mod ids;
pub mod message;
pub mod misfire;
pub mod notify;
pub mod project;
pub mod query;
pub mod resume;
pub mod retention;
pub mod retry;
pub mod run;
pub mod sketch;
pub mod source;
pub mod stats;
pub mod task;
pub mod timeline;
pub mod trigger;
pub mod window;

/// One problem with one field of a request, named by its JSON path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct FieldError {
    /// JSON path of the offending field, e.g. `trigger.cron` or `tasks[1].config.url`.
    pub field: String,
    /// What is wrong and what would be accepted.
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The same error under a parent field: `config.url` under `tasks[1]`
    /// is `tasks[1].config.url`.
    pub fn under(self, parent: &str) -> Self {
        Self {
            field: format!("{parent}.{}", self.field),
            message: self.message,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    fn agree<T: Serialize + Copy + std::fmt::Display>(all: &[T]) {
        for value in all {
            let serde_name = serde_json::to_value(value).ok();
            let name = value.to_string();
            assert_eq!(serde_name, Some(serde_json::Value::String(name)));
        }
    }

    /// `named_enum!`'s serde names (snake_case of the variant) are its names.
    #[test]
    fn serde_names_are_the_names() {
        agree(super::alert::AlertKind::ALL);
        agree(super::notify::DeliveryState::ALL);
        agree(super::event::DispatchOutcome::ALL);
        agree(super::event::DispatchState::ALL);
        agree(super::event::EventIdOrigin::ALL);
        agree(super::misfire::SkipReason::ALL);
        agree(super::run::RunTrigger::ALL);
        agree(super::run::RunStatus::ALL);
        agree(super::run::TaskStatus::ALL);
        agree(super::run::StartOutcome::ALL);
        agree(super::timeline::TimelineReason::ALL);
        agree(super::timeline::TimelineStatus::ALL);
        agree(super::timeline::TimeAction::ALL);
        agree(super::message::RejectReason::ALL);
        agree(super::source::SourceKind::ALL);
        agree(super::retention::HistoryTable::ALL);
        agree(super::retention::Period::ALL);
    }
}
