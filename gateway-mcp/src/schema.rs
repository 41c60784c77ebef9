//! Owns how the tools' JSON schemas are written, for the widest range of
//! MCP clients: schemars writes what JSON Schema allows, and some clients
//! read less. Applied once, when the tool list is built.
//!
//! - A nullable type is written `"type": ["string", "null"]`, which clients
//!   that read `type` as one string reject or misread. In an input schema
//!   the `null` goes (an optional argument is simply left out); in an output
//!   schema, where a field can be null, it becomes `anyOf` of the type and
//!   `null`.
//! - Number formats (`uint32`, `int64`, `double`) are not JSON Schema
//!   formats, and validators warn about each; they go, and an unsigned one
//!   leaves `"minimum": 0` behind.

use rmcp::model::JsonObject;
use serde_json::{Value, json};

/// Which side of a tool a schema describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Input,
    Output,
}

/// `schema`, written portably for `side`.
pub(crate) fn portable(schema: &JsonObject, side: Side) -> JsonObject {
    let mut value = Value::Object(schema.clone());
    rewrite(&mut value, side);
    match value {
        Value::Object(object) => object,
        _ => unreachable!("a schema object stays an object"),
    }
}

/// Keywords that describe a value rather than constrain its type: they stay
/// on the outside when a nullable type becomes `anyOf`.
const ANNOTATIONS: &[&str] =
    &["description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly"];

fn rewrite(value: &mut Value, side: Side) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite(item, side)),
        Value::Object(object) => {
            // Children first: a property's schema, an item's, a definition's.
            for child in object.values_mut() {
                rewrite(child, side);
            }
            drop_number_format(object);
            if let Some(inner) = nullable_type(object) {
                match side {
                    Side::Input => {
                        object.insert("type".into(), Value::String(inner));
                        drop_null_from_enum(object);
                    }
                    Side::Output => into_any_of(object, inner),
                }
            }
        }
        _ => {}
    }
}

fn drop_number_format(object: &mut JsonObject) {
    let Some(Value::String(format)) = object.get("format") else { return };
    let numeric = matches!(object.get("type"), Some(Value::String(kind)) if kind == "integer" || kind == "number")
        || matches!(object.get("type"), Some(Value::Array(kinds)) if kinds.iter().any(|kind| kind == "integer" || kind == "number"));
    if !numeric {
        return;
    }
    let unsigned = format.starts_with("uint");
    object.remove("format");
    if unsigned && !object.contains_key("minimum") {
        object.insert("minimum".into(), json!(0));
    }
}

/// The one other type of `"type": [T, "null"]`.
fn nullable_type(object: &JsonObject) -> Option<String> {
    let Some(Value::Array(kinds)) = object.get("type") else { return None };
    let others: Vec<&str> =
        kinds.iter().filter_map(Value::as_str).filter(|kind| *kind != "null").collect();
    (kinds.len() == 2 && others.len() == 1).then(|| others[0].to_owned())
}

fn drop_null_from_enum(object: &mut JsonObject) {
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
}

fn into_any_of(object: &mut JsonObject, inner: String) {
    let mut typed = JsonObject::new();
    typed.insert("type".into(), Value::String(inner));
    let keys: Vec<String> = object
        .keys()
        .filter(|key| *key != "type" && !ANNOTATIONS.contains(&key.as_str()))
        .cloned()
        .collect();
    for key in keys {
        if let Some(value) = object.remove(&key) {
            typed.insert(key, value);
        }
    }
    drop_null_from_enum(&mut typed);
    object.remove("type");
    object.insert("anyOf".into(), json!([Value::Object(typed), { "type": "null" }]));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn a_nullable_argument_is_its_type() {
        let schema = object(json!({"type": "object", "properties": {
            "subtitle": {"type": ["string", "null"], "maxLength": 200, "description": "A line."},
            "after_due": {"type": ["string", "null"], "enum": ["keep", "expire", null]},
        }}));
        let portable = Value::Object(portable(&schema, Side::Input));
        assert_eq!(
            portable["properties"]["subtitle"],
            json!({"type": "string", "maxLength": 200, "description": "A line."})
        );
        assert_eq!(
            portable["properties"]["after_due"],
            json!({"type": "string", "enum": ["keep", "expire"]})
        );
    }

    #[test]
    fn a_nullable_result_field_is_any_of_its_type_and_null() {
        let schema = object(json!({"type": "object", "properties": {
            "quiet_until": {"type": ["string", "null"], "description": "When.", "format": "date-time"},
            "attention": {"type": ["integer", "null"], "format": "uint32"},
        }}));
        let portable = Value::Object(portable(&schema, Side::Output));
        assert_eq!(
            portable["properties"]["quiet_until"],
            json!({"description": "When.", "anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]})
        );
        assert_eq!(
            portable["properties"]["attention"],
            json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]})
        );
    }

    #[test]
    fn number_formats_go_and_unsigned_ones_leave_a_minimum() {
        let schema = object(json!({"type": "object", "properties": {
            "id": {"type": "integer", "format": "int64"},
            "count": {"type": "integer", "format": "uint32", "minimum": 1},
            "items": {"type": "array", "items": {"type": "integer", "format": "uint64"}},
        }}));
        let portable = Value::Object(portable(&schema, Side::Output));
        assert_eq!(portable["properties"]["id"], json!({"type": "integer"}));
        assert_eq!(portable["properties"]["count"], json!({"type": "integer", "minimum": 1}));
        assert_eq!(
            portable["properties"]["items"]["items"],
            json!({"type": "integer", "minimum": 0})
        );
    }
}
