//! A burst of events sent the way a producer with retries sends them.

use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

/// Posts each of `events` to `POST /v1/events`, 16 in flight, sending an
/// unanswered one again (to `base(n, attempt)`, which may name another
/// service) every 100 ms, at most 300 times. Answers, per event, whether a
/// service accepted it.
pub fn post_events_until_accepted<B>(
    http: reqwest::Client,
    events: Vec<Value>,
    base: B,
) -> tokio::task::JoinHandle<Vec<bool>>
where
    B: Fn(usize, usize) -> String + Send + Sync + 'static,
{
    let base = std::sync::Arc::new(base);
    tokio::spawn(async move {
        futures::stream::iter(events.into_iter().enumerate())
            .map(|(n, event)| {
                let (http, base) = (http.clone(), base.clone());
                async move {
                    for attempt in 0..300 {
                        let accepted = http
                            .post(format!("{}/v1/events", base(n, attempt)))
                            .json(&event)
                            .timeout(Duration::from_secs(10))
                            .send()
                            .await
                            .is_ok_and(|r| r.status().is_success());
                        if accepted {
                            return true;
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    false
                }
            })
            .buffer_unordered(16)
            .collect()
            .await
    })
}
