//! Owns the per-token allowances: tool calls a minute
//! (`HADO_MCP_RATE_LIMIT`), and ten times as many requests of any kind, so
//! that no one floods core with profile checks; a used-up allowance is a
//! 429 with `Retry-After`.

use std::time::Duration;

use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use hado_gateway::known_tokens::TokenDigest;
use hado_gateway::per_minute::PerMinute;

use crate::guard::refusals::{REFUSED, refusal_with};

/// Requests of any kind a token may make, per tool call it may make.
pub(crate) const REQUESTS_PER_CALL: u32 = 10;

/// A per-token allowance a minute, by the token's digest.
pub(crate) struct TokenLimit(PerMinute<TokenDigest>);

impl TokenLimit {
    pub(crate) fn per_minute(per_minute: u32) -> Self {
        Self(PerMinute::new(per_minute))
    }

    pub(crate) fn take(&self, digest: TokenDigest) -> Result<(), Duration> {
        self.0.take(&digest)
    }

    /// The answer when the allowance is used up: 429 with `Retry-After`.
    pub(crate) fn refusal(&self, what: &str, wait: Duration, id: Option<&Value>) -> Response {
        let seconds = wait.max(Duration::from_secs(1)).as_secs_f64().ceil() as u64;
        let message = format!(
            "too many {what}: the limit is {} a minute per agent token; try again in {seconds} s",
            self.0.per_minute()
        );
        let mut response = refusal_with(
            StatusCode::TOO_MANY_REQUESTS,
            REFUSED,
            &message,
            id,
            Some(json!({ "retry_after": seconds })),
        );
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
        response
    }
}
