use clap::Parser;
use tracing_subscriber::EnvFilter;

use acp::cli::Cli;
use acp::config::LogFormat;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match cli.settings.log_format {
        LogFormat::Json => subscriber.json().init(),
        LogFormat::Human => subscriber.init(),
    }
    acp::cli::run(cli.command, cli.settings).await
}
