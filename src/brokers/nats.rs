//! A NATS JetStream source: a durable pull consumer with explicit
//! acknowledgement. A message is acknowledged after its commit; one that
//! could not be committed is negatively acknowledged with a delay, so
//! JetStream delivers it again (as it does any message whose
//! acknowledgement never arrived, after `ack_wait`).

use std::time::Duration;

use anyhow::Context as _;
use async_nats::jetstream::{self, AckKind, consumer::pull};
use futures::{StreamExt, TryStreamExt};
use tokio::sync::watch;

use super::{Context, Status, secret};
use acp_domain::source::NatsConfig;
use acp_domain::source::SourceRecord;
use acp_service::sources::Message;

/// Messages handled at once per source.
const CONCURRENCY: usize = 32;

pub async fn run(
    ctx: &Context,
    source: &SourceRecord,
    config: &NatsConfig,
    status: &Status,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let mut options = async_nats::ConnectOptions::new()
        .name(format!("acp source {}", source.name))
        .connection_timeout(Duration::from_secs(5));
    if let Some(secret) = secret(source)? {
        options = match secret.split_once(':') {
            Some((user, password)) => options.user_and_password(user.into(), password.into()),
            None => options.token(secret),
        };
    }
    let client = options
        .connect(config.url.as_str())
        .await
        .with_context(|| format!("connect to {}", config.url))?;
    let js = jetstream::new(client.clone());
    let stream = js
        .get_stream(&config.stream)
        .await
        .with_context(|| format!("stream {}", config.stream))?;
    let consumer: jetstream::consumer::PullConsumer = stream
        .get_or_create_consumer(
            &config.durable,
            pull::Config {
                durable_name: Some(config.durable.clone()),
                filter_subject: config.subject.clone().unwrap_or_default(),
                ack_policy: jetstream::consumer::AckPolicy::Explicit,
                ack_wait: Duration::from_secs(30),
                max_ack_pending: 1000,
                ..Default::default()
            },
        )
        .await
        .with_context(|| format!("durable consumer {}", config.durable))?;
    let messages = consumer.messages().await.context("pull messages")?;
    status.set_connected(true);
    tracing::info!(source = %source.name, stream = %config.stream, durable = %config.durable, "consuming from NATS JetStream");

    // Lag, every few seconds: messages not yet delivered plus delivered and
    // not yet acknowledged.
    let lag = async {
        loop {
            if let Ok(info) = consumer.get_info().await {
                status.set_pending(info.num_pending + info.num_ack_pending as u64);
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    };
    let stop_check = stop.clone();
    let stopped = async move {
        let _ = stop.wait_for(|s| *s).await;
    };
    let consume = messages
        .take_until(stopped)
        .map_err(anyhow::Error::from)
        .try_for_each_concurrent(CONCURRENCY, |message| async move {
            let headers = message
                .headers
                .as_ref()
                .map(|h| {
                    h.iter()
                        .filter_map(|(name, values)| {
                            Some((name.to_string(), values.first()?.as_str().to_owned()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let received = Message {
                headers,
                content_type: None,
                body: message.payload.to_vec(),
            };
            let result = if ctx.handle(source, status, &received).await {
                message.ack().await
            } else {
                message
                    .ack_with(AckKind::Nak(Some(Duration::from_secs(2))))
                    .await
            };
            if let Err(err) = result {
                // Not acknowledged: JetStream delivers it again, a duplicate.
                tracing::warn!(error = %err, "acknowledgement failed");
            }
            Ok(())
        });
    tokio::select! {
        result = consume => result.context("JetStream message stream")?,
        _ = lag => {}
    }
    anyhow::ensure!(*stop_check.borrow(), "the message stream ended");
    Ok(())
}
