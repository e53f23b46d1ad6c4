//! Subcommands of the one binary.

use clap::{Parser, Subcommand};

use crate::config::Settings;

#[derive(Parser, Debug)]
#[command(
    name = "acp",
    version,
    about = "activity-control-plane: activities on Temporal, exactly once"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub settings: Settings,
}

#[derive(Subcommand, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// API, worker and reconciler in one process (migrates first).
    Serve,
    /// The HTTP API only.
    Api,
    /// The Temporal worker only.
    Worker,
    /// Apply database migrations and exit.
    Migrate,
    /// Print the OpenAPI document to stdout.
    Openapi,
}
