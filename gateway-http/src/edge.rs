//! Owns what every request passes before and after its route: the `Host`
//! check (a web page cannot rebind its name to this gateway), the budget
//! of request bodies held at once (`hado_gateway::bodies`), refusal of
//! cross-site writes, the browser security headers on every reply, error
//! replies that are JSON or HTML and never echo input as plain text, and a
//! source's token checked with core before its body is read.

use std::net::SocketAddr;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, ORIGIN};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hado_gateway::headers::SecurityHeaders;

use hado_gateway::known_tokens::TokenDigest;
use hado_proto::v1;
use hado_runtime::hosts::same_origin;

use crate::auth::SourceCredential;
use crate::error::{ApiError, is_json};
use crate::state::AppState;

/// The policy every reply carries: only this site's own scripts, styles and
/// images, no framing, no plugins, forms posted only here.
pub(crate) const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/// The headers every reply carries: that policy, and pages of one's own
/// site only as the referrer.
const SECURITY_HEADERS: SecurityHeaders = SecurityHeaders {
    content_security_policy: CONTENT_SECURITY_POLICY_VALUE,
    referrer_policy: "same-origin",
};

/// Serves only the hosts the gateway is configured for, counts each body
/// against the budget of bodies held at once (503 past it), then stamps
/// every reply with the security headers and gives bare or plain-text
/// error replies the JSON error shape.
pub(crate) async fn edge(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let mut response = match state.config.allowed_hosts.admit(request.headers(), request.uri()) {
        Ok(_) => {
            let (request, share) = state.bodies.meter(request);
            let response = next.run(request).await;
            if share.refused() {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, state.bodies.busy()).into_response()
            } else {
                json_errors(response)
            }
        }
        Err(refusal) => {
            ApiError::new(StatusCode::MISDIRECTED_REQUEST, refusal.to_string()).into_response()
        }
    };
    SECURITY_HEADERS.stamp(response.headers_mut());
    response
}

/// An error reply that is plain text or has no body (axum's own
/// rejections of a path or query, a 405) becomes the JSON error shape, with
/// words chosen by status so that nothing the client sent is echoed.
fn json_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let content_type =
        response.headers().get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
    if !(content_type.is_empty() || content_type.starts_with("text/plain")) {
        return response;
    }
    let message = match status {
        StatusCode::BAD_REQUEST => "the request's path, query or body could not be read",
        StatusCode::NOT_FOUND => "no such page",
        StatusCode::METHOD_NOT_ALLOWED => "this route does not take that method",
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is too large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "the request body has the wrong content type",
        StatusCode::UNPROCESSABLE_ENTITY => "the request body could not be read",
        status if status.is_server_error() => "the gateway failed to answer; try again",
        _ => status.canonical_reason().unwrap_or("the request was refused"),
    };
    let (mut parts, _) = response.into_parts();
    parts.headers.remove(CONTENT_LENGTH);
    parts.headers.remove(CONTENT_TYPE);
    let replacement = ApiError::new(status, message).into_response();
    let (replacement_parts, body) = replacement.into_parts();
    for (name, value) in &replacement_parts.headers {
        parts.headers.insert(name, value.clone());
    }
    Response::from_parts(parts, body)
}

/// Why a state-changing request is refused as cross-site, if it is: the
/// browser's `Sec-Fetch-Site` says another site sent it, or its `Origin`
/// is not exactly this site's (scheme, host and port compared).
pub(crate) fn cross_site(
    state: &AppState,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
) -> Option<&'static str> {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|value| value.to_str().ok())
        && !(site == "same-origin" || site == "none")
    {
        return Some("this request was sent by another site's page, so it was not accepted");
    }
    let origin = headers.get(ORIGIN)?;
    let origin = origin.to_str().unwrap_or("");
    let host =
        headers.get(axum::http::header::HOST).and_then(|value| value.to_str().ok()).unwrap_or("");
    // Behind a TLS proxy the browser's scheme is the proxy's, which only a
    // trusted proxy may tell.
    let forwarded = peer
        .filter(|peer| state.config.trusts(peer.ip()))
        .and_then(|_| headers.get("x-forwarded-proto")?.to_str().ok());
    let scheme = match forwarded {
        Some("https") => "https",
        _ => "http",
    };
    let public =
        state.config.public_url.as_deref().is_some_and(|public| same_origin(origin, public));
    if public || same_origin(origin, &format!("{scheme}://{host}/")) {
        None
    } else {
        Some(
            "this request came from another site's page (its Origin is not this site), so it was not accepted",
        )
    }
}

/// The methods `/me` writes with. Any other (PUT, TRACE, a made-up one)
/// writes nothing there and goes on to the router, which answers 405.
fn writes(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::PATCH | Method::DELETE)
}

/// Guards the inbox's JSON writes under `/me`: refused when cross-site, and
/// taken only as `Content-Type: application/json`, which a form on another
/// site cannot send without the browser asking first (a CORS preflight this
/// gateway never grants).
pub(crate) async fn me_writes(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if writes(request.method()) {
        let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0);
        if let Some(reason) = cross_site(&state, peer, request.headers()) {
            return ApiError::new(StatusCode::FORBIDDEN, reason).into_response();
        }
        if !is_json(request.headers()) {
            return ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send writes to /me with Content-Type: application/json (an empty body may be {})",
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// Checks a source's bearer token with core (or core's answer of the last
/// few seconds) before the body is read: an unknown token is answered 401
/// without reading a byte of it.
pub(crate) async fn source_first(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let credential =
        match <SourceCredential as axum::extract::FromRequestParts<AppState>>::from_request_parts(
            &mut parts, &state,
        )
        .await
        {
            Ok(SourceCredential(credential)) => credential,
            Err(error) => return error.into_response(),
        };
    let token = parts
        .headers
        .get(axum::http::header::AUTHORIZATION)
        .map(|value| value.as_bytes())
        .unwrap_or_default();
    let digest = TokenDigest::of(token);
    let now = Instant::now();
    if !state.known_sources.recently_accepted(digest, now) {
        match state.ingest(credential).who_am_i(v1::WhoAmIRequest {}).await {
            Ok(_) => state.known_sources.accepted(digest, now),
            Err(status) => return ApiError::from_core(&state.core, &status).into_response(),
        }
    }
    next.run(Request::from_parts(parts, body)).await
}

/// Reads at most `limit` bytes of a body, or answers 413.
pub(crate) async fn read_body(body: Body, limit: usize) -> Result<axum::body::Bytes, ApiError> {
    axum::body::to_bytes(body, limit).await.map_err(|_| {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is over {} KiB", limit / 1024),
        )
    })
}
