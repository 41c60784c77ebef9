//! Owns checking a request's JSON body in one pass over its bytes, building
//! nothing of it: whether it is JSON, whether an object names a key twice,
//! how many values it holds, and where an array stands in place of an
//! object. The caller then reads its own types from the same bytes
//! (`serde_json::from_slice`), which keep only the fields they name.
//!
//! Why no tree: a JSON value held as `serde_json::Value` costs 32 bytes
//! and more for each value, and the body `[0,0,…]` spends two bytes on
//! each, so a megabyte of it took tens of megabytes before any typed check
//! ran, and more again in rmcp's own buffering. Here a body costs its
//! bytes, the keys of the objects open at once and a path; and since the
//! pass stops at the first value past the caller's count, whatever the
//! caller builds afterwards is bounded by that count too.
//!
//! Why keys are checked: serde_json keeps the last of two equal keys, so
//! `{"title": "Visa", "title": "x"}` would mean whatever the last one says
//! while a proxy or a log in front may have read the first; both gateways
//! refuse such a body instead, naming the key and where it stands. serde_json
//! has no switch for this, so the walk is written here.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Why a body could not be read as JSON.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BodyProblem {
    /// Not JSON: serde_json's words.
    #[error("the body is not valid JSON: {0}")]
    Syntax(String),
    /// An object names `key` twice; `field` is the key's full path.
    #[error("{field}: the key {key:?} appears twice in one object; send it once")]
    DuplicateKey { field: String, key: String },
    /// More values than the caller reads (every number, string, `true`,
    /// `false`, `null`, array and object counts one; keys do not).
    #[error("the body holds more than {limit} JSON values, more than any request here needs")]
    TooManyValues { limit: usize },
}

/// What the pass saw of a body that passed it.
#[derive(Debug, PartialEq, Eq)]
pub struct Outline {
    /// The values it holds, as [`BodyProblem::TooManyValues`] counts them.
    pub values: usize,
    /// Where the first array stands in place of an object: the body itself
    /// (`.`) or an element of an array (`events[1]`).
    pub array_in_array: Option<String>,
}

/// Checks `bytes` as one JSON value of at most `max_values` values, each
/// object naming each key once.
pub fn check(bytes: &[u8], max_values: usize) -> Result<Outline, BodyProblem> {
    let walk = RefCell::new(Walk {
        values: 0,
        max_values,
        path: Vec::new(),
        problem: None,
        array_in_array: None,
    });
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let parsed = Value { walk: &walk, in_array: true }
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    let walk = walk.into_inner();
    match (parsed, walk.problem) {
        (_, Some(problem)) => Err(problem),
        (Ok(()), None) => Ok(Outline { values: walk.values, array_in_array: walk.array_in_array }),
        (Err(error), None) => Err(BodyProblem::Syntax(error.to_string())),
    }
}

/// serde_json's message without the place it adds (` at line 1 column 80`),
/// for a typed read of a body [`check`] passed, whose place is the field's
/// path the caller names.
pub fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let place = format!(" at line {} column {}", error.line(), error.column());
    text.strip_suffix(&place).map_or(text.clone(), str::to_owned)
}

/// One step of the path to the value being read.
enum Segment {
    Key(String),
    Index(usize),
}

/// What the pass carries: the count, the path, and what it found.
struct Walk {
    values: usize,
    max_values: usize,
    path: Vec<Segment>,
    problem: Option<BodyProblem>,
    array_in_array: Option<String>,
}

impl Walk {
    /// The path as the callers name fields: `events[1].ref`, or `.` for the body.
    fn shown(&self) -> String {
        let mut shown = String::new();
        for segment in &self.path {
            match segment {
                Segment::Key(key) if shown.is_empty() => shown.push_str(key),
                Segment::Key(key) => {
                    shown.push('.');
                    shown.push_str(key);
                }
                Segment::Index(index) => shown.push_str(&format!("[{index}]")),
            }
        }
        if shown.is_empty() { ".".to_owned() } else { shown }
    }
}

/// A value; `in_array` when it stands where only an object may (the body
/// itself, or an element of an array).
struct Value<'a> {
    walk: &'a RefCell<Walk>,
    in_array: bool,
}

impl Value<'_> {
    /// Counts one value; an error once past the count, which stops the pass.
    fn count<E: de::Error>(&self) -> Result<(), E> {
        let mut walk = self.walk.borrow_mut();
        walk.values += 1;
        if walk.values > walk.max_values {
            walk.problem = Some(BodyProblem::TooManyValues { limit: walk.max_values });
            return Err(E::custom("too many values"));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Value<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Value<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.count()
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.count()
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.count()
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.count()
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.count()
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.count()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        self.count()?;
        {
            let mut walk = self.walk.borrow_mut();
            if self.in_array && walk.array_in_array.is_none() {
                walk.array_in_array = Some(walk.shown());
            }
        }
        let mut index = 0;
        loop {
            self.walk.borrow_mut().path.push(Segment::Index(index));
            let item = items.next_element_seed(Value { walk: self.walk, in_array: true })?;
            self.walk.borrow_mut().path.pop();
            if item.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<(), A::Error> {
        self.count()?;
        let mut keys = HashSet::new();
        while let Some(key) = entries.next_key::<String>()? {
            if keys.contains(&key) {
                let mut walk = self.walk.borrow_mut();
                walk.path.push(Segment::Key(key.clone()));
                let field = walk.shown();
                walk.problem = Some(BodyProblem::DuplicateKey { field, key });
                return Err(de::Error::custom("a duplicate key"));
            }
            self.walk.borrow_mut().path.push(Segment::Key(key.clone()));
            entries.next_value_seed(Value { walk: self.walk, in_array: false })?;
            self.walk.borrow_mut().path.pop();
            keys.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLENTY: usize = 1_000;

    #[test]
    fn a_body_that_serde_json_reads_passes_and_is_counted() {
        let text = r#"{"events": [{"user": "anna", "n": -1, "big": 18446744073709551615, "x": 1.5, "ok": true, "none": null, "s": "a\"b"}], "e": []}"#;
        assert!(serde_json::from_str::<serde_json::Value>(text).is_ok());
        assert_eq!(
            check(text.as_bytes(), PLENTY),
            Ok(Outline { values: 11, array_in_array: None })
        );
    }

    #[test]
    fn a_key_twice_is_named_with_its_place() {
        let duplicate = |text: &str| match check(text.as_bytes(), PLENTY) {
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
        assert_eq!(duplicate(r#"[{"k": 1, "k": 2}]"#), ("[0].k".into(), "k".into()));
        // The same key in different objects is fine, and so is an escaped look-alike.
        assert!(
            check(br#"{"a": {"k": 1}, "b": {"k": 1}, "k\u0041": 2, "kA ": 3}"#, PLENTY).is_ok()
        );
    }

    #[test]
    fn what_is_not_json_is_a_syntax_problem() {
        assert!(matches!(check(b"{\"a\": 1,}", PLENTY), Err(BodyProblem::Syntax(_))));
        assert!(matches!(check(b"{} {}", PLENTY), Err(BodyProblem::Syntax(_))));
        assert!(matches!(check(b"", PLENTY), Err(BodyProblem::Syntax(_))));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(check(deep.as_bytes(), PLENTY), Err(BodyProblem::Syntax(_))));
    }

    #[test]
    fn the_pass_stops_at_the_first_value_past_the_count() {
        assert_eq!(check(b"[0,0,0]", 4).map(|outline| outline.values), Ok(4));
        assert_eq!(check(b"[0,0,0,0]", 4), Err(BodyProblem::TooManyValues { limit: 4 }));
        // Past the count, what follows is not read: its syntax does not matter.
        assert_eq!(check(b"[0,0,0,0,0 oops", 4), Err(BodyProblem::TooManyValues { limit: 4 }));
        assert_eq!(
            check(br#"{"a": {}, "b": [], "c": "x"}"#, 3),
            Err(BodyProblem::TooManyValues { limit: 3 })
        );
    }

    #[test]
    fn arrays_standing_for_objects_are_found() {
        let found = |text: &str| check(text.as_bytes(), PLENTY).unwrap().array_in_array;
        assert_eq!(found("[[]]").as_deref(), Some("."));
        assert_eq!(found("[]").as_deref(), Some("."));
        assert_eq!(found(r#"{"events": [{}, ["anna", "visa"]]}"#).as_deref(), Some("events[1]"));
        assert_eq!(
            found(r#"{"events": [{"tags": [["x"]]}]}"#).as_deref(),
            Some("events[0].tags[0]")
        );
        assert_eq!(found(r#"{"events": [{"user": "anna", "tags": []}]}"#), None);
    }

    #[test]
    fn a_typed_reads_message_loses_only_its_position() {
        let error = serde_json::from_slice::<Vec<String>>(b"[1]").unwrap_err();
        assert_eq!(without_position(&error), "invalid type: integer `1`, expected a string");
    }
}
