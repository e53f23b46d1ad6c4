//! A RabbitMQ source: a consumer with manual acknowledgement and a prefetch
//! limit. A message is acknowledged after its commit; one that could not be
//! committed is returned to the queue (after a pause, so an outage does not
//! turn into a hot loop).

use std::time::Duration;

use anyhow::Context as _;
use futures::{StreamExt, TryStreamExt};
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicNackOptions, BasicQosOptions, QueueDeclareOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{Connection, ConnectionProperties};
use tokio::sync::watch;

use super::{Context, Status, secret};
use acp_domain::source::RabbitmqConfig;
use acp_domain::source::SourceRecord;
use acp_service::sources::Message;

/// The AMQP URL with the secret as password (`user:password` or just the
/// password, for the URL's user or `guest`).
fn url_with_secret(config: &RabbitmqConfig, secret: Option<String>) -> anyhow::Result<String> {
    let Some(secret) = secret else {
        return Ok(config.url.clone());
    };
    let mut url = url::Url::parse(&config.url).context("config.url")?;
    let (user, password) = match secret.split_once(':') {
        Some((user, password)) => (user.to_owned(), password.to_owned()),
        None if url.username().is_empty() => ("guest".to_owned(), secret),
        None => (url.username().to_owned(), secret),
    };
    url.set_username(&user)
        .and_then(|()| url.set_password(Some(&password)))
        .map_err(|()| anyhow::anyhow!("config.url cannot carry credentials"))?;
    Ok(url.to_string())
}

fn text(value: &AMQPValue) -> Option<String> {
    match value {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
        _ => None,
    }
}

pub async fn run(
    ctx: &Context,
    source: &SourceRecord,
    config: &RabbitmqConfig,
    status: &Status,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let url = url_with_secret(config, secret(source)?)?;
    let connection = tokio::time::timeout(
        Duration::from_secs(10),
        Connection::connect(&url, ConnectionProperties::default()),
    )
    .await
    .context("connect: timed out")?
    .context("connect")?;
    let channel = connection.create_channel().await.context("channel")?;
    channel
        .basic_qos(config.prefetch, BasicQosOptions::default())
        .await
        .context("basic.qos")?;
    let consumer = channel
        .basic_consume(
            config.queue.as_str().into(),
            format!("acp-{}", uuid::Uuid::new_v4()).into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .with_context(|| format!("consume queue {}", config.queue))?;
    status.set_connected(true);
    tracing::info!(source = %source.name, queue = %config.queue, "consuming from RabbitMQ");

    let lag = async {
        loop {
            let passive = QueueDeclareOptions {
                passive: true,
                ..Default::default()
            };
            if let Ok(queue) = channel
                .queue_declare(config.queue.as_str().into(), passive, FieldTable::default())
                .await
            {
                status.set_pending(u64::from(queue.message_count()));
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    };
    let stop_check = stop.clone();
    let stopped = async move {
        let _ = stop.wait_for(|s| *s).await;
    };
    let consume = consumer
        .take_until(stopped)
        .map_err(anyhow::Error::from)
        .try_for_each_concurrent(usize::from(config.prefetch), |delivery| async move {
            let properties = &delivery.properties;
            let headers = properties
                .headers()
                .as_ref()
                .map(|table| {
                    table
                        .inner()
                        .iter()
                        .filter_map(|(k, v)| Some((k.as_str().to_owned(), text(v)?)))
                        .collect()
                })
                .unwrap_or_default();
            let received = Message {
                headers,
                content_type: properties
                    .content_type()
                    .as_ref()
                    .map(|c| c.as_str().to_owned()),
                body: delivery.data.clone(),
            };
            let result = if ctx.handle(source, status, &received).await {
                delivery.acker.ack(BasicAckOptions::default()).await
            } else {
                tokio::time::sleep(Duration::from_secs(2)).await;
                let requeue = BasicNackOptions {
                    requeue: true,
                    ..Default::default()
                };
                delivery.acker.nack(requeue).await
            };
            if let Err(err) = result {
                // Unacknowledged: RabbitMQ requeues it when the channel closes.
                tracing::warn!(error = %err, "acknowledgement failed");
            }
            Ok(())
        });
    let result = tokio::select! {
        result = consume => result.context("RabbitMQ consumer"),
        _ = lag => Ok(()),
    };
    let _ = connection.close(200, "stopping".into()).await;
    result?;
    anyhow::ensure!(
        *stop_check.borrow(),
        "the consumer was cancelled or the connection closed"
    );
    Ok(())
}
