//! Subcommands of the one binary.

use clap::{Parser, Subcommand};

use crate::auth::Scope;
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

#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
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
    /// Manage API keys (migrates first).
    #[command(subcommand)]
    Keys(KeysCommand),
}

#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum KeysCommand {
    /// Create a key and print its token on stdout; it is not shown again.
    Create {
        /// Who or what holds the key.
        #[arg(long)]
        name: String,
        #[arg(long, value_enum)]
        scope: Scope,
    },
    /// List every key (never their tokens).
    List,
    /// Revoke a key: it authenticates nothing from now on.
    Revoke {
        /// The key's ID, as `acp keys list` shows it.
        id: uuid::Uuid,
    },
}
