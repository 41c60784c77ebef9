//! Owns `/up`: 200 while core answers its gRPC health check, 503 otherwise.
//! The check goes over the gateway's one lazily connected channel, so the
//! gateway notices by itself when core comes back.

use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use crate::AppState;

pub(crate) async fn up(State(state): State<AppState>) -> (StatusCode, axum::Json<Value>) {
    let mut client = HealthClient::new(state.core.channel());
    match client.check(HealthCheckRequest { service: String::new() }).await {
        Ok(reply) if reply.get_ref().status == ServingStatus::Serving as i32 => (StatusCode::OK, axum::Json(json!({ "status": "up" }))),
        Ok(_) => (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({ "status": "down", "error": "core is not serving" }))),
        Err(_) => {
            (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({ "status": "down", "error": format!("core at {} cannot be reached", state.core.url()) })))
        }
    }
}
