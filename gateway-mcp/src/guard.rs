//! Owns who may reach the MCP server over HTTP, checked before rmcp sees a
//! request: only POST; a `Host` and `Origin` the gateway serves (so a web
//! page cannot rebind a name to it); an agent bearer token from the
//! `Authorization` header only (never the query string, never
//! `X-Remote-User`); a per-token rate limit; and at most 1 MiB of body, read
//! only once the token is known. Every refusal is JSON `{"error": …}`.
//!
//! Core resolves the token on every request, so a revoked or re-issued token
//! stops at once. A `tools/call` is checked by the call it makes: core
//! authenticates every call anyway, and a refusal there is answered 401, as
//! a refusal here is. Other requests (`initialize`, `tools/list`, `ping`)
//! make no call, so the guard asks core (`GetProfile`, one read). A token
//! core has not accepted within the last minute is asked about before the
//! body is read, whatever the request is.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::header::{ALLOW, AUTHORIZATION, CONTENT_LENGTH, ORIGIN, RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use hado_proto::v1::GetProfileRequest;

use crate::core_link::{self, AgentToken, Core, Failure};
use crate::rate_limit::RateLimiter;
use hado_runtime::AllowedHosts;
use hado_runtime::known_tokens::{KnownTokens, TokenDigest};

/// How long core's acceptance of a token lets the guard read a request's
/// body before asking core again.
const TOKEN_MEMORY: Duration = Duration::from_secs(60);

/// The largest request body `/mcp` reads.
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024;

pub(crate) struct Guard {
    core: Core,
    allowed_hosts: AllowedHosts,
    limiter: RateLimiter,
    calls_per_minute: u32,
    known: KnownTokens,
}

impl Guard {
    pub(crate) fn new(core: Core, allowed_hosts: AllowedHosts, calls_per_minute: u32) -> Self {
        Self { core, allowed_hosts, limiter: RateLimiter::per_minute(calls_per_minute), calls_per_minute, known: KnownTokens::new(TOKEN_MEMORY) }
    }

    /// Asks core whether the token names a person; the refusal to send when
    /// it does not.
    async fn check(&self, token: &AgentToken, digest: TokenDigest) -> Option<Response> {
        match core_link::inbox(&self.core, token).get_profile(GetProfileRequest {}).await {
            Ok(_) => self.known.accepted(digest, Instant::now()),
            Err(status) => match self.core.explain(&status) {
                Failure::Unauthenticated(_) => {
                    self.known.refused(digest);
                    return Some(unauthorized("unknown agent token"));
                }
                // Core is down or refused for another reason: let the request
                // through, so that a tool call answers with what went wrong.
                failure => tracing::warn!(reason = failure.message(), "could not check an agent token with core"),
            },
        }
        None
    }
}

/// What core said of the request's token during a tool call: set when it
/// refused it, so that the guard answers 401 instead of the tool's result.
#[derive(Clone, Debug, Default)]
pub(crate) struct TokenVerdict(Arc<AtomicBool>);

impl TokenVerdict {
    pub(crate) fn refuse(&self) {
        self.0.store(true, Ordering::Release);
    }

    fn refused(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// Whether a body is one JSON-RPC `tools/call` request.
fn is_tool_call(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Message<'_>>(body).is_ok_and(|message| message.method.as_deref() == Some("tools/call"))
}

fn refusal(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "error": message }))).into_response()
}

fn unauthorized(message: &str) -> Response {
    let mut response = refusal(StatusCode::UNAUTHORIZED, message);
    response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// The bearer token of the `Authorization` header, if there is one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Counts every request to `/mcp` by status, whatever the guard decided.
pub(crate) async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let response = admit(guard, request, next).await;
    metrics::counter!("hado_http_requests_total", "route" => "/mcp", "method" => method, "status" => response.status().as_u16().to_string()).increment(1);
    response
}

async fn admit(guard: Arc<Guard>, request: Request, next: Next) -> Response {
    if let Err(refusal_reason) = guard.allowed_hosts.admit(request.headers(), request.uri()) {
        return refusal(StatusCode::FORBIDDEN, &refusal_reason.to_string());
    }
    if request.method() != Method::POST {
        let mut response = refusal(StatusCode::METHOD_NOT_ALLOWED, "/mcp takes POST only: this server keeps no sessions and opens no event streams");
        response.headers_mut().insert(ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    if let Some(origin) = request.headers().get(ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !guard.allowed_hosts.serves_origin(origin) {
            return refusal(StatusCode::FORBIDDEN, &format!("origin {origin} may not call this server"));
        }
    }
    let Some(token) = bearer(request.headers()) else {
        return unauthorized("an agent bearer token is required");
    };
    let Some(agent_token) = AgentToken::parse(token) else {
        return unauthorized("unknown agent token");
    };
    if let Err(wait) = guard.limiter.take(token, Instant::now()) {
        let mut response = refusal(StatusCode::TOO_MANY_REQUESTS, &format!("too many calls: the limit is {} a minute per agent token", guard.calls_per_minute));
        let seconds = wait.max(Duration::from_secs(1)).as_secs_f64().ceil() as u64;
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
        return response;
    }
    let digest = TokenDigest::of(token.as_bytes());
    let unknown = !guard.known.recently_accepted(digest, Instant::now());
    if unknown && let Some(refused) = guard.check(&agent_token, digest).await {
        return refused;
    }
    let too_large = || refusal(StatusCode::PAYLOAD_TOO_LARGE, &format!("the request body is over {} KiB", MAX_BODY_BYTES / 1024));
    let declared = request.headers().get(CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES) {
        return too_large();
    }
    let (mut parts, body) = request.into_parts();
    let Ok(body) = to_bytes(body, MAX_BODY_BYTES).await else {
        return too_large();
    };
    if !unknown
        && !is_tool_call(&body)
        && let Some(refused) = guard.check(&agent_token, digest).await
    {
        return refused;
    }
    let verdict = TokenVerdict::default();
    parts.extensions.insert(agent_token);
    parts.extensions.insert(verdict.clone());
    let response = next.run(Request::from_parts(parts, Body::from(body))).await;
    if verdict.refused() {
        guard.known.refused(digest);
        return unauthorized("unknown agent token");
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_authorization_header_carries_a_token() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&headers), None);
        headers.insert(AUTHORIZATION, HeaderValue::from_static("bearer  hado_agent_x "));
        assert_eq!(bearer(&headers), Some("hado_agent_x"));
    }

    #[test]
    fn only_a_tools_call_is_left_to_its_own_check() {
        assert!(is_tool_call(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_profile"}}"#));
        assert!(!is_tool_call(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#));
        assert!(!is_tool_call(br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]"#));
        assert!(!is_tool_call(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(!is_tool_call(b"not json"));
    }
}
