//! Owns what the guard reads of a body before rmcp does: whether it is JSON
//! with each key once, its `id`, and whether it is a `tools/call`.

use serde_json::Value;

use hado_gateway::json::BodyProblem;

/// What the guard reads of a body before rmcp does.
#[derive(Debug, PartialEq)]
pub(crate) enum Peeked {
    /// Not JSON at all: JSON-RPC's parse error, with serde's reason.
    NotJson(String),
    /// An object names a key twice: refused (422), naming it, since rmcp
    /// would read the last one and whatever stands in front the first.
    DuplicateKey(String),
    /// JSON: the request's id when it has one, and whether it is a `tools/call`.
    Json { id: Option<Value>, tool_call: bool },
}

pub(crate) fn peek(body: &[u8]) -> Peeked {
    match hado_gateway::json::parse(body) {
        Ok(Value::Object(message)) => Peeked::Json {
            id: message.get("id").cloned(),
            tool_call: message.get("method").and_then(Value::as_str) == Some("tools/call"),
        },
        // JSON of another shape (an array, a number): rmcp says what is wrong with it.
        Ok(_) => Peeked::Json { id: None, tool_call: false },
        Err(BodyProblem::Syntax(reason)) => Peeked::NotJson(reason),
        Err(problem @ BodyProblem::DuplicateKey { .. }) => {
            Peeked::DuplicateKey(problem.to_string())
        }
    }
}
