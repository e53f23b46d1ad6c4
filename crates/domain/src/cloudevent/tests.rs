use super::*;
use serde_json::json;

fn structured(value: Value) -> Result<MappedEvent, Vec<String>> {
    from_structured(&value, "").map_err(|errors| errors.into_iter().map(|e| e.field).collect())
}

#[test]
fn attributes_map_onto_the_event() {
    let event = structured(json!({
        "specversion": "1.0", "id": "A234-1234-1234", "source": "https://example.com/crm",
        "type": "com.example.order.created", "time": "2026-03-01T09:00:00+01:00",
        "datacontenttype": "application/json", "data": {"order": 7}, "traceparent": "x"
    }))
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(event.event_type.as_str(), "com.example.order.created");
    assert_eq!(event.source, "https://example.com/crm");
    assert_eq!(
        event.occurred_at.map(|t| t.to_rfc3339()),
        Some("2026-03-01T08:00:00+00:00".to_owned())
    );
    assert_eq!(event.payload, json!({"order": 7}));
    assert_eq!(
        event.event_id,
        event_id("https://example.com/crm", "A234-1234-1234")
    );
}

#[test]
fn event_ids_are_readable_when_short_and_plain_and_digests_otherwise() {
    let table = [
        ("crm", "evt-1", "ce:crm:evt-1"),
        ("crm.eu", "42", "ce:crm.eu:42"),
    ];
    for (source, id, expected) in table {
        assert_eq!(event_id(source, id).as_str(), expected);
    }
    for (source, id) in [
        ("https://example.com/crm", "evt-1"), // `:` and `/` in the source
        ("crm", "has space"),
        ("crm", &"x".repeat(200)),
        ("a", "b:c"), // fine: `ce:a:b:c` splits at the first `:` after `ce:`
    ] {
        let id_ = event_id(source, id);
        assert!(EventId::parse(id_.as_str()).is_ok(), "{id_:?}");
        if source == "a" {
            assert_eq!(id_.as_str(), "ce:a:b:c");
        } else {
            assert!(id_.as_str().starts_with("ce-sha256:"), "{id_:?}");
            assert_eq!(id_.as_str().len(), 10 + 64);
        }
    }
}

#[test]
fn one_source_and_id_is_one_event_and_two_sources_are_two() {
    assert_eq!(event_id("/crm", "1"), event_id("/crm", "1"));
    assert_ne!(event_id("/crm", "1"), event_id("/erp", "1"));
    assert_ne!(event_id("crm", "1"), event_id("erp", "1"));
    // The length prefix keeps the split unambiguous in the digest.
    assert_ne!(event_id("/ab", "c"), event_id("/a", "bc"));
    // A source with `:` cannot pose as a readable one.
    assert_ne!(event_id("a:b", "c"), event_id("a", "b:c"));
}

#[test]
fn bad_attributes_are_named() {
    let table: [(Value, &[&str]); 6] = [
        (
            json!({"id": "1", "source": "s", "type": "t"}),
            &["specversion"],
        ),
        (
            json!({"specversion": "0.3", "id": "1", "source": "s", "type": "t"}),
            &["specversion"],
        ),
        (
            json!({"specversion": "1.0", "source": "s"}),
            &["id", "type"],
        ),
        (
            json!({"specversion": "1.0", "id": "", "source": "", "type": "a b"}),
            &["id", "source", "type"],
        ),
        (
            json!({"specversion": "1.0", "id": 1, "source": "s", "type": "t", "time": "yesterday"}),
            &["id", "id", "time"],
        ),
        (
            json!({"specversion": "1.0", "id": "1", "source": "s", "type": "t", "data": 1, "data_base64": "AA=="}),
            &["data_base64"],
        ),
    ];
    for (value, fields) in table {
        let mut got = structured(value.clone()).err().unwrap_or_default();
        got.dedup();
        let mut want: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        want.dedup();
        assert_eq!(got, want, "{value}");
    }
    assert_eq!(structured(json!([1])).err(), Some(vec!["body".to_owned()]));
    assert_eq!(
        from_structured(&json!({"specversion": "1.0"}), "[3].")
            .err()
            .map(|e| e[0].field.clone()),
        Some("[3].id".to_owned())
    );
}

#[test]
fn data_of_every_shape_becomes_the_payload() {
    let base = json!({"specversion": "1.0", "id": "1", "source": "s", "type": "t"});
    let with = |key: &str, value: Value| {
        let mut v = base.clone();
        v[key] = value;
        structured(v).map(|e| e.payload)
    };
    assert_eq!(structured(base.clone()).map(|e| e.payload), Ok(json!({})));
    assert_eq!(with("data", json!("text")), Ok(json!("text")));
    assert_eq!(with("data", json!([1, 2])), Ok(json!([1, 2])));
    assert_eq!(
        with("data_base64", json!("AAE=")),
        Ok(json!({"data_base64": "AAE="}))
    );
    assert!(with("data_base64", json!("!!")).is_err());
}

#[test]
fn binary_mode_reads_headers_and_body() {
    let attrs: BTreeMap<String, String> = [
        ("specversion", "1.0"),
        ("id", "9"),
        ("source", "crm"),
        ("type", "order.created"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let name = |f: &str| format!("ce-{f}");
    let json = from_binary(&attrs, Some("application/json"), br#"{"a":1}"#, &name);
    assert_eq!(
        json.map(|e| (e.event_id, e.payload)),
        Ok((event_id("crm", "9"), json!({"a": 1})))
    );
    let text = from_binary(&attrs, Some("text/plain"), b"hello", &name);
    assert_eq!(text.map(|e| e.payload), Ok(json!("hello")));
    let nul = from_binary(&attrs, Some("text/plain"), b"a\0b", &name);
    assert_eq!(
        nul.err().map(|e| e[0].field.clone()),
        Some("ce-data".to_owned())
    );
    let bytes = from_binary(&attrs, Some("application/octet-stream"), &[0xff, 0], &name);
    assert_eq!(bytes.map(|e| e.payload), Ok(json!({"data_base64": "/wA="})));
    let untyped = from_binary(&attrs, None, b"hello", &name);
    assert_eq!(untyped.map(|e| e.payload), Ok(json!("hello")));
    let untyped_json = from_binary(&attrs, None, b"[1]", &name);
    assert_eq!(untyped_json.map(|e| e.payload), Ok(json!([1])));
    let empty = from_binary(&attrs, None, b"", &name);
    assert_eq!(empty.map(|e| e.payload), Ok(json!({})));
    let bad = from_binary(&attrs, Some("application/json"), b"{", &name);
    assert_eq!(
        bad.err().map(|e| e[0].field.clone()),
        Some("body".to_owned())
    );
    let missing = from_binary(&BTreeMap::new(), None, b"", &name)
        .err()
        .unwrap_or_default();
    let fields: Vec<_> = missing.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["ce-specversion", "ce-id", "ce-source", "ce-type"]);
}

#[test]
fn header_values_are_percent_decoded() {
    assert_eq!(percent_decode("a%20b%3Ac"), "a b:c");
    assert_eq!(
        percent_decode("2026-03-01T09:00:00Z"),
        "2026-03-01T09:00:00Z"
    );
    assert_eq!(percent_decode("a+b"), "a+b");
    assert_eq!(percent_decode("%E2%82%AC"), "€");
}
