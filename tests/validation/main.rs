//! Bad input: every malformed request gets a 4xx problem document that names
//! the field. None gets a 5xx.

mod activity_bodies;
use crate::common;
mod other_requests;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

fn valid() -> Value {
    json!({
        "name": "ok",
        "trigger": {"type": "cron", "cron": "0 * * * *", "timezone": "UTC"},
        "tasks": [{"task_type": "noop"}]
    })
}

/// `valid()` with one JSON pointer replaced (or removed, for `None`).
fn with(pointer: &str, value: Option<Value>) -> Value {
    let mut body = valid();
    let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    let target = if parent.is_empty() {
        Some(&mut body)
    } else {
        body.pointer_mut(parent)
    };
    let Some(Value::Object(map)) = target else {
        panic!("bad pointer {pointer}");
    };
    match value {
        Some(v) => {
            map.insert(key.to_owned(), v);
        }
        None => {
            map.remove(key);
        }
    }
    body
}

/// `valid()` with one webhook task carrying `extra` next to its config.
fn webhook_with(extra: Value) -> Value {
    let mut task =
        json!({"task_type": "webhook", "config": {"url": "https://hooks.example.com/x"}});
    if let (Some(task), Some(extra)) = (task.as_object_mut(), extra.as_object()) {
        task.extend(extra.clone());
    }
    with("/tasks", Some(json!([task])))
}

fn interval(every: Value) -> Value {
    with(
        "/trigger",
        Some(json!({"type": "interval", "every": every})),
    )
}
