//! Owns `/up` for both gateways: 200 while core answers its gRPC health
//! check with SERVING, 503 with `Retry-After` while core cannot be reached
//! or its storage cannot be reached or written. The check goes over the
//! gateway's one lazily connected channel, so the gateway notices by itself
//! when core comes back.

use axum::http::StatusCode;
use axum::http::header::RETRY_AFTER;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::client::{Core, Health, RETRY_AFTER_SECONDS};

/// The answer to `GET /up`.
pub async fn answer(core: &Core) -> Response {
    let down = |error: String| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            [(RETRY_AFTER, RETRY_AFTER_SECONDS.to_string())],
            axum::Json(json!({ "status": "down", "error": error })),
        )
            .into_response()
    };
    match core.health().await {
        Health::Serving => (StatusCode::OK, axum::Json(json!({ "status": "up" }))).into_response(),
        Health::NotServing => {
            down("core is not serving: its storage cannot be reached or written".into())
        }
        Health::Unreachable => down(format!("core at {} cannot be reached", core.url())),
    }
}
