//! JSON merge patch (RFC 7386), the body of every `PATCH` of a resource.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api::error::ApiError;
use crate::api::extract::from_json_value;

/// A `PATCH` body must be an object: RFC 7386 lets any other value replace
/// the whole document, which no resource here accepts.
pub fn require_object(patch: &serde_json::Value) -> Result<(), ApiError> {
    if patch.is_object() {
        Ok(())
    } else {
        Err(ApiError::bad_field(
            "body",
            "a merge patch must be a JSON object",
        ))
    }
}

/// `current` (a resource in its request form) with `patch` merged in, read
/// back as a request, with errors naming the field.
pub fn patched<R: DeserializeOwned>(
    current: impl Serialize,
    patch: &serde_json::Value,
) -> Result<R, ApiError> {
    let mut document = serde_json::to_value(current).map_err(|e| ApiError::Internal(e.into()))?;
    merge_patch(&mut document, patch);
    from_json_value(document)
}

/// RFC 7386: objects merge key by key, `null` deletes, anything else replaces.
pub fn merge_patch(target: &mut serde_json::Value, patch: &serde_json::Value) {
    let serde_json::Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = serde_json::Value::Object(Default::default());
    }
    if let serde_json::Value::Object(target_map) = target {
        for (key, value) in patch_map {
            if value.is_null() {
                target_map.remove(key);
            } else {
                merge_patch(
                    target_map
                        .entry(key.clone())
                        .or_insert(serde_json::Value::Null),
                    value,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::merge_patch;
    use serde_json::json;

    #[test]
    fn rfc7386_examples() {
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": "b"}),
                json!({"b": "c"}),
                json!({"a": "b", "b": "c"}),
            ),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "d", "c": null}}),
                json!({"a": {"b": "d"}}),
            ),
            (json!({"a": [1]}), json!({"a": [2]}), json!({"a": [2]})),
            (
                json!({"a": "x"}),
                json!({"a": {"b": 1}}),
                json!({"a": {"b": 1}}),
            ),
        ];
        for (mut target, patch, expected) in cases {
            merge_patch(&mut target, &patch);
            assert_eq!(target, expected);
        }
    }
}
