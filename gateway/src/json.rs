//! Owns reading a request's JSON body as one value, refusing an object
//! that names a key twice. serde_json keeps the last of two equal keys, so
//! `{"title": "Visa", "title": "x"}` would mean whatever the last one says
//! while a proxy or a log in front may have read the first; both gateways
//! refuse such a body instead, naming the key and where it stands. serde_json
//! has no switch for this, so the walk is written here: a seed that builds
//! the value and carries its path.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Why a body could not be read as JSON.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BodyProblem {
    /// Not JSON: serde_json's words.
    #[error("the body is not valid JSON: {0}")]
    Syntax(String),
    /// An object names `key` twice; `path` is where the object stands
    /// (`.` for the body itself) and `field` the key's full path.
    #[error("{field}: the key {key:?} appears twice in one object; send it once")]
    DuplicateKey { field: String, key: String },
}

/// Reads `bytes` as one JSON value; an object with a key twice is refused.
pub fn parse(bytes: &[u8]) -> Result<Value, BodyProblem> {
    let found = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let parsed = Unique { path: String::new(), duplicate: &found }
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value));
    match (parsed, found.into_inner()) {
        (_, Some(problem)) => Err(problem),
        (Ok(value), None) => Ok(value),
        (Err(error), None) => Err(BodyProblem::Syntax(error.to_string())),
    }
}

/// A value at `path`; a duplicate key found below it is left in `duplicate`.
struct Unique<'a> {
    path: String,
    duplicate: &'a RefCell<Option<BodyProblem>>,
}

impl Unique<'_> {
    fn child(&self, segment: &str) -> Self {
        Self { path: format!("{}{segment}", self.path), duplicate: self.duplicate }
    }
}

impl<'de> DeserializeSeed<'de> for Unique<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut values = Vec::new();
        while let Some(value) =
            items.next_element_seed(self.child(&format!("[{}]", values.len())))?
        {
            values.push(value);
        }
        Ok(Value::Array(values))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            let field =
                if self.path.is_empty() { key.clone() } else { format!("{}.{key}", self.path) };
            if object.contains_key(&key) {
                *self.duplicate.borrow_mut() = Some(BodyProblem::DuplicateKey { field, key });
                return Err(de::Error::custom("a duplicate key"));
            }
            let value =
                entries.next_value_seed(Unique { path: field, duplicate: self.duplicate })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_reads_as_serde_json_reads_it() {
        let text = r#"{"events": [{"user": "anna", "n": -1, "big": 18446744073709551615, "x": 1.5, "ok": true, "none": null}], "e": []}"#;
        assert_eq!(parse(text.as_bytes()).unwrap(), serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn a_key_twice_is_named_with_its_place() {
        let duplicate = |text: &str| match parse(text.as_bytes()) {
            Err(BodyProblem::DuplicateKey { field, key }) => (field, key),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            duplicate(r#"{"title": "Visa", "title": "x"}"#),
            ("title".into(), "title".into())
        );
        assert_eq!(
            duplicate(r#"{"events": [{"ref": "a"}, {"user": "anna", "ref": "a", "ref": "b"}]}"#),
            ("events[1].ref".into(), "ref".into())
        );
        assert_eq!(duplicate(r#"{"a": {"b": {"c": 1, "c": 2}}}"#), ("a.b.c".into(), "c".into()));
        // The same key in different objects is fine, and so is an escaped look-alike.
        assert!(parse(br#"{"a": {"k": 1}, "b": {"k": 1}, "k\u0041": 2, "kA ": 3}"#).is_ok());
    }

    #[test]
    fn what_is_not_json_is_a_syntax_problem() {
        assert!(matches!(parse(b"{\"a\": 1,}"), Err(BodyProblem::Syntax(_))));
        assert!(matches!(parse(b"{} {}"), Err(BodyProblem::Syntax(_))));
        assert!(matches!(parse(b""), Err(BodyProblem::Syntax(_))));
    }
}
