//! Subcommands of the one binary, and what each one runs.

use acp_domain::audit::Actor;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};

use crate::app::{self, Service};
use crate::config::Settings;
use crate::duties;
use acp_domain::auth::Scope;
use acp_domain::project::ProjectId;
use acp_service::Keys;

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
    #[command(
        about = duties::about(Service::Serve),
        long_about = duties::long_about(Service::Serve)
    )]
    Serve,
    #[command(
        about = duties::about(Service::Api),
        long_about = duties::long_about(Service::Api)
    )]
    Api,
    #[command(
        about = duties::about(Service::Worker),
        long_about = duties::long_about(Service::Worker)
    )]
    Worker,
    /// Print the background duties: what each does, which subcommands
    /// carry it, whether it is leader-elected.
    Duties {
        /// The README's table (Markdown) instead of plain text.
        #[arg(long)]
        markdown: bool,
    },
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
        #[arg(long, value_parser = scope_parser(), required_unless_present = "operator")]
        scope: Option<Scope>,
        /// The project the key acts in.
        #[arg(long, default_value = "default", conflicts_with = "operator")]
        project: String,
        /// An operator key: scope `operator`, no project; it manages
        /// projects (and everything else).
        #[arg(long)]
        operator: bool,
    },
    /// List every key (never their tokens).
    List,
    /// Revoke a key: it authenticates nothing from now on.
    Revoke {
        /// The key's ID, as `acp keys list` shows it.
        id: uuid::Uuid,
    },
}

/// `--scope`: one of the scopes' names (the domain's `Scope` knows nothing
/// of clap), listed in `--help`.
fn scope_parser() -> impl TypedValueParser<Value = Scope> {
    PossibleValuesParser::new(Scope::ALL.map(Scope::as_str))
        .try_map(|name: String| Scope::parse(&name).ok_or("not a scope"))
}

/// Runs one subcommand to completion.
pub async fn run(command: Command, settings: Settings) -> anyhow::Result<()> {
    match command {
        Command::Openapi => {
            print!("{}", crate::api::openapi::document_json());
            Ok(())
        }
        Command::Migrate => {
            let pool = acp_service::lazy_pool(&settings.database_url, 2)?;
            acp_service::migrate(&pool).await?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Duties { markdown } => {
            if markdown {
                print!("{}", duties::markdown());
            } else {
                print!("{}", duties::text());
            }
            Ok(())
        }
        Command::Keys(keys) => run_keys(keys, &settings).await,
        Command::Serve => app::run_service(Service::Serve, settings).await,
        Command::Api => app::run_service(Service::Api, settings).await,
        Command::Worker => app::run_service(Service::Worker, settings).await,
    }
}

/// `acp keys …`: the token of a new key goes to stdout alone, so that
/// `TOKEN=$(acp keys create …)` works; everything else is for people.
async fn run_keys(command: KeysCommand, settings: &Settings) -> anyhow::Result<()> {
    let pool = acp_service::lazy_pool(&settings.database_url, 2)?;
    acp_service::migrate(&pool).await?;
    let keys = Keys::new(pool);
    match command {
        KeysCommand::Create {
            name,
            scope,
            project,
            operator,
        } => {
            let name = crate::api::keys::validate_name(&name).map_err(|_| {
                anyhow::anyhow!("--name must be 1 to 200 characters, no control characters")
            })?;
            let project = match (operator, scope) {
                (true, Some(scope)) if !matches!(scope, Scope::Admin | Scope::Operator) => {
                    anyhow::bail!("--operator makes a key of scope operator; leave out --scope")
                }
                (true, _) | (false, Some(Scope::Operator)) => None,
                (false, _) => Some(
                    ProjectId::parse(&project).map_err(|e| anyhow::anyhow!("--project: {e}"))?,
                ),
            };
            let scope = if project.is_none() {
                Scope::Operator
            } else {
                scope.unwrap_or(Scope::Read)
            };
            let (key, token) = match keys
                .create_in(
                    name,
                    scope,
                    project.as_ref(),
                    &Actor::command_line("create_key"),
                )
                .await
            {
                Err(acp_service::Error::Invalid(errors)) => anyhow::bail!(
                    "{}",
                    errors
                        .iter()
                        .map(|e| format!("--{}: {}", e.field, e.message))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                other => other?,
            };
            let project = key
                .project
                .as_ref()
                .map_or("none".into(), |p| p.to_string());
            eprintln!(
                "created API key {} ({}, scope {}, project {project}); the token below is shown only now:",
                key.id, key.name, key.scope
            );
            println!("{token}");
        }
        KeysCommand::List => {
            println!(
                "{:<36}  {:<8}  {:<20}  {:<25}  {:<25}  name",
                "id", "scope", "project", "created", "revoked"
            );
            for key in keys.list().await? {
                println!(
                    "{:<36}  {:<8}  {:<20}  {:<25}  {:<25}  {}",
                    key.id,
                    key.scope,
                    key.project.as_ref().map_or("-".into(), |p| p.to_string()),
                    key.created_at.to_rfc3339(),
                    key.revoked_at
                        .map(|t| t.to_rfc3339())
                        .unwrap_or_else(|| "-".into()),
                    key.name
                );
            }
        }
        KeysCommand::Revoke { id } => {
            match keys.revoke(id, &Actor::command_line("revoke_key")).await {
                Ok(key) => eprintln!("revoked API key {} ({})", key.id, key.name),
                Err(acp_service::Error::NotFound(_)) => anyhow::bail!("no API key {id}"),
                Err(err) => return Err(err.into()),
            }
        }
    }
    Ok(())
}
