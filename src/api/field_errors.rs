//! Field errors gathered while a request body is parsed into the domain,
//! each named by its JSON path (`trigger.cron`, `tasks[1].name`).

use acp_domain::FieldError;

pub(super) struct Errors(pub(super) Vec<FieldError>);

impl Errors {
    pub(super) fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    pub(super) fn take<T>(&mut self, field: &str, result: Result<T, String>) -> Option<T> {
        result.map_err(|m| self.push(field, m)).ok()
    }
}

pub(super) fn check_text(errors: &mut Errors, field: &str, text: &str, max: usize) {
    if text.trim().is_empty() {
        errors.push(field, "must not be blank");
    } else if text.chars().count() > max {
        errors.push(field, format!("must be at most {max} characters"));
    } else if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        errors.push(field, "must not contain control characters");
    }
}

/// An optional object field as an object (or null): serde reads a struct
/// from an array too (`"flow": [null, null]` would be the defaults), which
/// the document does not allow. Errors inside the object keep their paths.
pub(super) fn object_only<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    struct ObjectOnly<T>(std::marker::PhantomData<T>);
    impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for ObjectOnly<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object or null")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: serde::Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_map(self)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }
    }
    deserializer.deserialize_option(ObjectOnly(std::marker::PhantomData))
}
