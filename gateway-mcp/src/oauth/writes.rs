//! Owns the two routes of signing in that write, `/register` (RFC 7591) and
//! `/token`: each admitted at the door (`Host` and `Origin`, the client
//! address's allowance, the body's type and size) before core is asked.

use crate::oauth::Endpoint;
use crate::oauth::MAX_BODY_BYTES;
use crate::oauth::REGISTER_PATH;
use crate::oauth::SignIn;
use crate::oauth::TOKEN_PATH;
use crate::oauth::counted;
use crate::oauth::limits::AddressLimit;
use crate::oauth::refused::{error, from_core, status_of};

use std::net::{IpAddr, SocketAddr};

use axum::Json;
use axum::body::to_bytes;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use hado_gateway::ClientAddress;
use hado_proto::v1::{self};

/// The caller's address, for the rate limits: the client behind a trusted
/// proxy, else the peer (`hado_gateway::serve` names it on every request).
fn client(request: &Request) -> IpAddr {
    let named = request.extensions().get::<ClientAddress>().map(|client| client.0);
    named
        .or_else(|| request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0.ip()))
        .unwrap_or(IpAddr::from([127, 0, 0, 1]))
}

/// What a write route expects of a request: its allowance per address, its
/// body's type, and the error code that names a body of another type.
struct Door<'a> {
    limit: &'a AddressLimit,
    what: &'static str,
    content_type: &'static str,
    wrong_type: (&'static str, &'static str),
}

/// Admits a request to `/register` or `/token`: `Host` and `Origin`, the
/// address's allowance, the body's type, and at most 16 KiB of it, in that
/// order and before core is asked. Its headers and body, or the refusal.
async fn admit_body(
    sign_in: &SignIn,
    door: Door<'_>,
    request: Request,
) -> Result<(HeaderMap, axum::body::Bytes), Response> {
    sign_in
        .admit(request.headers(), request.uri())
        .and_then(|()| door.limit.take(client(&request), door.what))
        .map_err(IntoResponse::into_response)?;
    let (parts, body) = request.into_parts();
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .unwrap_or("");
    if !content_type.trim().eq_ignore_ascii_case(door.content_type) {
        let (code, description) = door.wrong_type;
        return Err(error(StatusCode::BAD_REQUEST, code, description));
    }
    let too_large = || {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request",
            &format!("the body is over {} KiB", MAX_BODY_BYTES / 1024),
        )
    };
    let declared = parts
        .headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES) {
        return Err(too_large());
    }
    let body = to_bytes(body, MAX_BODY_BYTES).await.map_err(|_| too_large())?;
    Ok((parts.headers, body))
}

/// `POST /register` (RFC 7591).
pub(crate) async fn register(State(sign_in): State<SignIn>, request: Request) -> Response {
    counted(REGISTER_PATH, "POST", register_inner(sign_in, request).await)
}

async fn register_inner(mut sign_in: SignIn, request: Request) -> Response {
    let door = Door {
        limit: &sign_in.registrations,
        what: "registrations",
        content_type: "application/json",
        wrong_type: (
            "invalid_client_metadata",
            "send the client metadata as JSON (Content-Type: application/json)",
        ),
    };
    let body = match admit_body(&sign_in, door, request).await {
        Ok((_, body)) => body,
        Err(refused) => return refused,
    };
    let Ok(metadata_json) = String::from_utf8(body.to_vec()) else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "the body is not UTF-8 text",
        );
    };
    let reply =
        match sign_in.oauth.register_client(v1::RegisterClientRequest { metadata_json }).await {
            Ok(reply) => reply.into_inner(),
            Err(status) => return from_core(&sign_in.core, &status),
        };
    match reply.outcome {
        Some(v1::register_client_reply::Outcome::ClientJson(client)) => {
            let mut response =
                (StatusCode::CREATED, [(CONTENT_TYPE, "application/json")], client).into_response();
            response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Some(v1::register_client_reply::Outcome::Error(refusal)) => {
            error(status_of(&refusal.error), &refusal.error, &refusal.description)
        }
        None => error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "core gave no answer"),
    }
}

/// A token request's form (RFC 6749 sections 4.1.3 and 6).
#[derive(Deserialize, Default)]
#[serde(default)]
struct TokenForm {
    grant_type: String,
    client_id: String,
    code: String,
    redirect_uri: String,
    code_verifier: String,
    refresh_token: String,
    resource: String,
}

/// The endpoint a token request names as its `resource`: `/sse` when it
/// names that one, else `/mcp` (core refuses a resource that is neither).
fn requested_endpoint(sign_in: &SignIn, headers: &HeaderMap, resource: &str) -> Endpoint {
    let sse = sign_in.resource(headers, Endpoint::Sse);
    if resource.trim_end_matches('/').eq_ignore_ascii_case(&sse) {
        Endpoint::Sse
    } else {
        Endpoint::Mcp
    }
}

/// `POST /token`.
pub(crate) async fn token(State(sign_in): State<SignIn>, request: Request) -> Response {
    counted(TOKEN_PATH, "POST", token_inner(sign_in, request).await)
}

async fn token_inner(mut sign_in: SignIn, request: Request) -> Response {
    let door = Door {
        limit: &sign_in.token_requests,
        what: "token requests",
        content_type: "application/x-www-form-urlencoded",
        wrong_type: (
            "invalid_request",
            "send the token request as a form (Content-Type: application/x-www-form-urlencoded)",
        ),
    };
    let (headers, body) = match admit_body(&sign_in, door, request).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let form: TokenForm = match serde_urlencoded::from_bytes(&body) {
        Ok(form) => form,
        Err(problem) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                &format!("the form could not be read: {problem}"),
            );
        }
    };
    let served_resource =
        sign_in.resource(&headers, requested_endpoint(&sign_in, &headers, &form.resource));
    let request = v1::TokenRequest {
        grant_type: form.grant_type,
        client_id: form.client_id,
        code: form.code,
        redirect_uri: form.redirect_uri,
        code_verifier: form.code_verifier,
        refresh_token: form.refresh_token,
        resource: form.resource,
        served_resource,
    };
    let reply = match sign_in.oauth.token(request).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return from_core(&sign_in.core, &status),
    };
    match reply.outcome {
        Some(v1::token_reply::Outcome::Tokens(tokens)) => {
            let body = json!({
                "access_token": tokens.access_token,
                "token_type": "Bearer",
                "expires_in": tokens.expires_in,
                "refresh_token": tokens.refresh_token,
                "scope": tokens.scope,
            });
            let mut response = Json(body).into_response();
            response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Some(v1::token_reply::Outcome::Error(refusal)) => {
            let mut response =
                error(status_of(&refusal.error), &refusal.error, &refusal.description);
            if response.status() == StatusCode::UNAUTHORIZED {
                response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            response
        }
        None => error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "core gave no answer"),
    }
}
