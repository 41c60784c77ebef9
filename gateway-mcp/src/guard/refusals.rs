//! Owns how the door says no: every refusal a JSON-RPC error object at its
//! HTTP status, with the request's `id` when the body was read, so that an
//! MCP client shows the reason; a 401 carries the sign-in challenge; rmcp's
//! own plain-text refusals are reworded the same way.

use axum::body::to_bytes;
use axum::http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// JSON-RPC's code for a body that is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// The code of every other refusal at the door: the first of the codes
/// JSON-RPC leaves to servers, as the MCP SDKs' own transports use it.
pub(crate) const REFUSED: i64 = -32000;

pub(crate) fn refusal_with(
    status: StatusCode,
    code: i64,
    message: &str,
    id: Option<&Value>,
    data: Option<Value>,
) -> Response {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    (
        status,
        axum::Json(
            json!({ "jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": error }),
        ),
    )
        .into_response()
}

pub(crate) fn refusal(status: StatusCode, message: &str, id: Option<&Value>) -> Response {
    refusal_with(status, REFUSED, message, id, None)
}

/// A 401 with the `WWW-Authenticate` challenge, which points at the
/// resource metadata so that a client can sign in.
pub(crate) fn unauthorized(message: &str, id: Option<&Value>, challenge: &HeaderValue) -> Response {
    let mut response = refusal(StatusCode::UNAUTHORIZED, message, id);
    response.headers_mut().insert(WWW_AUTHENTICATE, challenge.clone());
    response
}

/// rmcp refuses in plain text (a wrong `Content-Type`, JSON that is not a
/// JSON-RPC message); its words become a JSON-RPC error like the guard's.
pub(crate) async fn reword_refusal(response: Response, id: Option<&Value>) -> Response {
    let plain = !response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !(response.status().is_client_error() && plain) {
        return response;
    }
    let status = response.status();
    let text = match to_bytes(response.into_body(), 16 * 1024).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    };
    if status == StatusCode::UNSUPPORTED_MEDIA_TYPE && !text.contains("Content-Type") {
        return refusal_with(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            &format!("the body is not a JSON-RPC message: {text}"),
            id,
            None,
        );
    }
    refusal(
        status,
        if text.is_empty() { status.canonical_reason().unwrap_or("refused") } else { &text },
        id,
    )
}
