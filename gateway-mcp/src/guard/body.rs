//! Owns what the guard reads of a body before rmcp does: the body itself,
//! within its cap; whether it is JSON with each key once and at most
//! [`MAX_BODY_VALUES`] values; its `id`; and whether it is a `tools/call`.
//!
//! Why the count: rmcp reads a message into serde's buffers more than once
//! (its message type is an untagged enum with flattened members) and the
//! arguments into a `serde_json::Value`, each costing tens of bytes a
//! value, so 500,000 zeros in a 1 MB body took a hundred megabytes. The
//! check here builds nothing, and stops at the first value past the count;
//! what rmcp builds afterwards is then bounded by the count and the bytes.

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;

use hado_gateway::bodies::{self, Unread};
use hado_gateway::json::BodyProblem;

use crate::guard::refusals::{INVALID_REQUEST, PARSE_ERROR, refusal, refusal_with};

/// The largest request body `/mcp` and `/messages` read.
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The most values a message may hold (every number, string, `true`,
/// `false`, `null`, array and object counts one). A client's largest
/// message, its `initialize`, holds a few dozen, and the largest tool call
/// (`create_event` with every argument) twenty: four thousand leaves room
/// for any client's metadata while what rmcp builds stays under a
/// megabyte.
pub(crate) const MAX_BODY_VALUES: usize = 4096;

/// What the guard reads of a body before rmcp does.
#[derive(Debug, PartialEq)]
pub(crate) enum Peeked {
    /// Not JSON at all: JSON-RPC's parse error, with serde's reason.
    NotJson(String),
    /// An object names a key twice: refused (422), naming it, since rmcp
    /// would read the last one and whatever stands in front the first.
    DuplicateKey(String),
    /// More values than any message needs: refused (413).
    TooManyValues(String),
    /// JSON: the request's id when it has one, and whether it is a `tools/call`.
    Json { id: Option<Value>, tool_call: bool },
}

/// The members of a message the guard reads; serde skips the others
/// without building anything of them.
#[derive(Deserialize)]
struct Head {
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default)]
    method: Option<Value>,
}

/// A member that is there, even as `null`.
fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(value).map(Some)
}

pub(crate) fn peek(body: &[u8]) -> Peeked {
    // serde reads a struct from an array too, by position: only an object
    // is a message whose members the guard reads.
    let object = body.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'{');
    match hado_gateway::json::check(body, MAX_BODY_VALUES) {
        Ok(_) => match serde_json::from_slice::<Head>(body) {
            Ok(head) if object => Peeked::Json {
                id: head.id,
                tool_call: head.method.as_ref().and_then(Value::as_str) == Some("tools/call"),
            },
            // JSON of another shape (an array, a number): rmcp says what is wrong with it.
            _ => Peeked::Json { id: None, tool_call: false },
        },
        Err(BodyProblem::Syntax(reason)) => Peeked::NotJson(reason),
        Err(problem @ BodyProblem::DuplicateKey { .. }) => {
            Peeked::DuplicateKey(problem.to_string())
        }
        Err(problem @ BodyProblem::TooManyValues { .. }) => {
            Peeked::TooManyValues(problem.to_string())
        }
    }
}

/// A body the guard let through: JSON within the limits.
pub(crate) struct Read {
    pub(crate) body: Bytes,
    pub(crate) id: Option<Value>,
    pub(crate) tool_call: bool,
}

/// The body, at most [`MAX_BODY_BYTES`], and what the guard reads of it; a
/// refusal for a body too long, unread, or not JSON of a fitting size.
pub(crate) async fn read(body: Body, declared: Option<usize>) -> Result<Read, Response> {
    let body = bodies::read(body, declared, MAX_BODY_BYTES).await.map_err(|unread| {
        let status = match unread {
            Unread::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Unread::Failed => StatusCode::BAD_REQUEST,
        };
        refusal(status, &unread.to_string(), None)
    })?;
    let (status, code, message) = match peek(&body) {
        Peeked::Json { id, tool_call } => return Ok(Read { body, id, tool_call }),
        Peeked::NotJson(reason) => {
            (StatusCode::BAD_REQUEST, PARSE_ERROR, format!("the body is not JSON: {reason}"))
        }
        Peeked::DuplicateKey(message) => {
            (StatusCode::UNPROCESSABLE_ENTITY, INVALID_REQUEST, message)
        }
        Peeked::TooManyValues(message) => (StatusCode::PAYLOAD_TOO_LARGE, INVALID_REQUEST, message),
    };
    Err(refusal_with(status, code, &message, None, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_guard_reads_the_id_and_whether_it_is_a_tool_call() {
        let json = |id: Option<Value>, tool_call| Peeked::Json { id, tool_call };
        assert_eq!(peek(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_profile"}}"#), json(Some(json!(1)), true));
        assert_eq!(
            peek(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#),
            json(Some(json!("a")), false)
        );
        assert_eq!(
            peek(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            json(Some(Value::Null), false)
        );
        assert_eq!(peek(br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]"#), json(None, false));
        assert_eq!(
            peek(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            json(None, false)
        );
        assert!(matches!(peek(b"not json"), Peeked::NotJson(_)));
        assert!(matches!(peek(br#"{"jsonrpc":"2.0","id":1"#), Peeked::NotJson(_)));
        let twice = peek(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mark_done","name":"delete_event"}}"#);
        assert_eq!(
            twice,
            Peeked::DuplicateKey(
                r#"params.name: the key "name" appears twice in one object; send it once"#.into()
            )
        );
    }

    #[test]
    fn a_message_of_more_values_than_any_needs_is_refused_before_rmcp_reads_it() {
        let zeros = vec![0; MAX_BODY_VALUES];
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_event", "arguments": {"pad": zeros}}});
        assert_eq!(
            peek(call.to_string().as_bytes()),
            Peeked::TooManyValues(format!(
                "the body holds more than {MAX_BODY_VALUES} JSON values, more than any request here needs"
            ))
        );
        let fits = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_event", "arguments": {"pad": vec![0; MAX_BODY_VALUES - 10]}}});
        assert_eq!(
            peek(fits.to_string().as_bytes()),
            Peeked::Json { id: Some(json!(1)), tool_call: true }
        );
    }
}
