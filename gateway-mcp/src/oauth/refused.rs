//! Owns how signing in says no: an OAuth error response (RFC 6749 section
//! 5.2) with the status the RFC gives its code, for a refusal at the door
//! and for one of core's alike.

use axum::Json;
use axum::http::header::{CACHE_CONTROL, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::core_link::{Core, Failure};

/// A refusal at the door, before core is asked.
pub(super) struct Refused {
    pub(super) status: StatusCode,
    pub(super) code: &'static str,
    pub(super) description: String,
    /// Seconds, for `Retry-After`.
    pub(super) retry_after: Option<u64>,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let mut response = error(self.status, self.code, &self.description);
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// An OAuth error response (RFC 6749 section 5.2).
pub(super) fn error(status: StatusCode, code: &str, description: &str) -> Response {
    let mut response =
        (status, Json(json!({ "error": code, "error_description": description }))).into_response();
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The HTTP status RFC 6749 gives an error code.
pub(super) fn status_of(code: &str) -> StatusCode {
    match code {
        "invalid_client" => StatusCode::UNAUTHORIZED,
        "temporarily_unavailable" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::BAD_REQUEST,
    }
}

pub(super) fn from_core(core: &Core, status: &tonic::Status) -> Response {
    match core.explain(status) {
        Failure::Unreachable(message) => {
            let mut response =
                error(StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable", &message);
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(hado_gateway::client::RETRY_AFTER_SECONDS));
            response
        }
        failure => {
            tracing::warn!(reason = failure.message(), "core refused an OAuth call");
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "core refused the call; see the gateway's log",
            )
        }
    }
}
