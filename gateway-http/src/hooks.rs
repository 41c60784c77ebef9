//! Owns `/hooks/telegram`: in webhook mode Telegram posts each update here
//! with the secret it was given in `setWebhook`; the gateway checks that
//! secret (`X-Telegram-Bot-Api-Secret-Token`) and forwards the update to core
//! as one gRPC call. Any other caller gets 401, and a Hado without webhook
//! mode answers 404.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hado_proto::metadata::same_secret;
use hado_proto::v1;

use crate::error::ApiError;
use crate::state::AppState;

pub(crate) const SECRET_HEADER: &str = "x-telegram-bot-api-secret-token";

/// Telegram's updates are a few KiB; this is far more than any needs.
pub(crate) const MAX_UPDATE_BYTES: usize = 256 * 1024;

/// The secret is checked from the headers before a byte of the body is read.
pub(crate) async fn telegram(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let Some(secret) = &state.config.telegram_webhook_secret else {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "Telegram webhook mode is not set up on this Hado",
        )
        .into_response();
    };
    let given =
        headers.get(SECRET_HEADER).and_then(|value| value.to_str().ok()).unwrap_or_default();
    if !same_secret(given, &secret.0) {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "the Telegram secret token is missing or wrong",
        )
        .into_response();
    }
    let body = match crate::edge::read_body(body, MAX_UPDATE_BYTES).await {
        Ok(bytes) => bytes,
        Err(error) => return error.into_response(),
    };
    let Ok(body) = String::from_utf8(body.to_vec()) else {
        return ApiError::new(StatusCode::BAD_REQUEST, "the update is not UTF-8 text")
            .into_response();
    };
    match state.links().telegram_update(v1::TelegramUpdateRequest { update_json: body }).await {
        Ok(_) => (StatusCode::OK, axum::Json(serde_json::json!({}))).into_response(),
        // Telegram posts an update again until it gets a 2xx: a refusal it
        // cannot fix is acknowledged; core being away is not.
        Err(status)
            if matches!(
                status.code(),
                tonic::Code::InvalidArgument | tonic::Code::FailedPrecondition
            ) =>
        {
            (StatusCode::OK, axum::Json(serde_json::json!({ "ignored": status.message() })))
                .into_response()
        }
        Err(status) => ApiError::from_core(&state.core, &status).into_response(),
    }
}
