//! Owns the HTTP side of signing an agent in (MCP authorization,
//! 2025-11-25): the metadata documents a client discovers (RFC 9728's
//! protected resource metadata, RFC 8414's authorization server metadata),
//! client registration (RFC 7591) and the token endpoint. Each is a call to
//! core's `OAuth` service, which needs no credential of the gateway's: the
//! client's own is in the request. Core decides, and its refusals are
//! answered with the RFC's error code as they are. The
//! authorization page itself is the web inbox's (`/oauth/authorize` on
//! gateway-http), behind the person's sign-in.
//!
//! Every route checks `Host` and `Origin` like `/mcp`, and the two that
//! write (`/register`, `/token`) have a body limit and a rate limit per
//! client address, checked before core is called.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Json;
use axum::body::to_bytes;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN, RETRY_AFTER, WWW_AUTHENTICATE,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use hado_runtime::client::CoreChannel;
use serde::Deserialize;
use serde_json::json;

use hado_proto::v1::{self, o_auth_client::OAuthClient};
use hado_runtime::per_minute::PerMinute;
use hado_runtime::{AllowedHosts, ClientAddress};

use crate::core_link::{Core, Failure};
use crate::{MCP_PATH, MESSAGES_PATH, SSE_PATH, metrics::count};

/// The largest registration or token request read.
const MAX_BODY_BYTES: usize = 16 * 1024;
/// Registrations a minute from one address.
const REGISTRATIONS_PER_MINUTE: u32 = 10;
/// Token requests a minute from one address.
const TOKEN_REQUESTS_PER_MINUTE: u32 = 60;

pub(crate) const PROTECTED_RESOURCE_PATH: &str = "/.well-known/oauth-protected-resource";
pub(crate) const AUTHORIZATION_SERVER_PATH: &str = "/.well-known/oauth-authorization-server";
pub(crate) const REGISTER_PATH: &str = "/register";
pub(crate) const TOKEN_PATH: &str = "/token";
/// Where the web inbox asks the person (gateway-http).
const AUTHORIZE_PATH: &str = "/oauth/authorize";

/// An MCP endpoint, each a protected resource of its own (RFC 9728 section
/// 3.1: its metadata at the well-known path with the endpoint's path
/// appended). A token issued for either works at both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// Streamable HTTP, `/mcp`.
    Mcp,
    /// The legacy HTTP+SSE transport, `/sse` and its `/messages`.
    Sse,
}

impl Endpoint {
    pub(crate) fn path(self) -> &'static str {
        match self {
            Self::Mcp => MCP_PATH,
            Self::Sse => SSE_PATH,
        }
    }

    /// The endpoint a request's path belongs to.
    pub(crate) fn of(path: &str) -> Self {
        if path == SSE_PATH || path == MESSAGES_PATH || path.ends_with(SSE_PATH) {
            Self::Sse
        } else {
            Self::Mcp
        }
    }
}

/// What signing in needs: core's OAuth service, and where the web inbox is.
#[derive(Clone)]
pub(crate) struct SignIn {
    core: Core,
    oauth: OAuthClient<CoreChannel>,
    /// The web inbox's address, where the authorization page is.
    web_url: String,
    /// This server's public address, when the operator set one.
    public_url: Option<String>,
    allowed_hosts: AllowedHosts,
    registrations: Arc<AddressLimit>,
    token_requests: Arc<AddressLimit>,
}

/// Requests a minute per client address.
struct AddressLimit(PerMinute<IpAddr>);

impl AddressLimit {
    fn per_minute(per_minute: u32) -> Self {
        Self(PerMinute::new(per_minute))
    }

    fn take(&self, address: IpAddr, what: &str) -> Result<(), Refused> {
        self.0.take(&address).map_err(|wait| {
            let seconds = wait.as_secs().max(1);
            let description = format!(
                "too many {what}: at most {} a minute from one address; try again in {seconds} s",
                self.0.per_minute()
            );
            Refused {
                status: StatusCode::TOO_MANY_REQUESTS,
                code: "temporarily_unavailable",
                description,
                retry_after: Some(seconds),
            }
        })
    }
}

/// A refusal at the door, before core is asked.
struct Refused {
    status: StatusCode,
    code: &'static str,
    description: String,
    /// Seconds, for `Retry-After`.
    retry_after: Option<u64>,
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
fn error(status: StatusCode, code: &str, description: &str) -> Response {
    let mut response =
        (status, Json(json!({ "error": code, "error_description": description }))).into_response();
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The HTTP status RFC 6749 gives an error code.
fn status_of(code: &str) -> StatusCode {
    match code {
        "invalid_client" => StatusCode::UNAUTHORIZED,
        "temporarily_unavailable" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::BAD_REQUEST,
    }
}

fn from_core(core: &Core, status: &tonic::Status) -> Response {
    match core.explain(status) {
        Failure::Unreachable(message) => {
            let mut response =
                error(StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable", &message);
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(hado_runtime::client::RETRY_AFTER_SECONDS));
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

impl SignIn {
    pub(crate) fn new(
        core: &Core,
        web_url: &str,
        public_url: Option<&str>,
        allowed_hosts: AllowedHosts,
    ) -> Self {
        Self {
            core: core.clone(),
            oauth: OAuthClient::new(core.channel()),
            web_url: web_url.trim_end_matches('/').to_owned(),
            public_url: public_url.map(|url| url.trim_end_matches('/').to_owned()),
            allowed_hosts,
            registrations: Arc::new(AddressLimit::per_minute(REGISTRATIONS_PER_MINUTE)),
            token_requests: Arc::new(AddressLimit::per_minute(TOKEN_REQUESTS_PER_MINUTE)),
        }
    }

    /// This server's address as the client reached it: the public URL when
    /// set, else the `Host` it named (one the gateway serves).
    pub(crate) fn base(&self, headers: &HeaderMap) -> String {
        match &self.public_url {
            Some(url) => url.clone(),
            None => {
                let host =
                    headers.get(HOST).and_then(|value| value.to_str().ok()).unwrap_or("127.0.0.1");
                format!("http://{host}")
            }
        }
    }

    /// A resource a token may be issued for: one of this server's MCP
    /// endpoints' URLs (`/mcp`, or the legacy `/sse`).
    fn resource(&self, headers: &HeaderMap, endpoint: Endpoint) -> String {
        format!("{}{}", self.base(headers), endpoint.path())
    }

    /// The `WWW-Authenticate` of a 401 on `endpoint`, pointing at that
    /// endpoint's resource metadata (RFC 9728 section 5.1).
    pub(crate) fn challenge(&self, headers: &HeaderMap, endpoint: Endpoint) -> HeaderValue {
        let value = format!(
            "Bearer resource_metadata=\"{}{PROTECTED_RESOURCE_PATH}{}\", scope=\"inbox\"",
            self.base(headers),
            endpoint.path()
        );
        HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("Bearer"))
    }

    /// `Host` and `Origin` as `/mcp` checks them.
    fn admit(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Refused> {
        let forbidden = |description: String| Refused {
            status: StatusCode::FORBIDDEN,
            code: "invalid_request",
            description,
            retry_after: None,
        };
        if let Err(refusal) = self.allowed_hosts.admit(headers, uri) {
            return Err(forbidden(refusal.to_string()));
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !self.allowed_hosts.serves_origin(origin) {
                return Err(forbidden(format!("origin {origin} may not call this server")));
            }
        }
        Ok(())
    }
}

/// Counts one answered request of `route`.
fn counted(route: &'static str, method: &str, response: Response) -> Response {
    count(route, method.to_owned(), &response);
    response
}

/// `GET /.well-known/oauth-protected-resource[/mcp|/sse]` (RFC 9728): the
/// document of the endpoint the path names (`/mcp` when it names none).
pub(crate) async fn protected_resource(
    State(sign_in): State<SignIn>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    if let Err(refused) = sign_in.admit(&headers, &uri) {
        return counted(PROTECTED_RESOURCE_PATH, "GET", refused.into_response());
    }
    let base = sign_in.base(&headers);
    let endpoint = Endpoint::of(uri.path());
    let document = json!({
        "resource": sign_in.resource(&headers, endpoint),
        "authorization_servers": [base],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["inbox"],
        "resource_name": "Hado",
    });
    counted(PROTECTED_RESOURCE_PATH, "GET", Json(document).into_response())
}

/// `GET /.well-known/oauth-authorization-server` (RFC 8414).
pub(crate) async fn authorization_server(
    State(sign_in): State<SignIn>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    if let Err(refused) = sign_in.admit(&headers, &uri) {
        return counted(AUTHORIZATION_SERVER_PATH, "GET", refused.into_response());
    }
    let base = sign_in.base(&headers);
    let document = json!({
        "issuer": base,
        "authorization_endpoint": format!("{}{AUTHORIZE_PATH}", sign_in.web_url),
        "token_endpoint": format!("{base}{TOKEN_PATH}"),
        "registration_endpoint": format!("{base}{REGISTER_PATH}"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["inbox"],
        "client_id_metadata_document_supported": true,
    });
    counted(AUTHORIZATION_SERVER_PATH, "GET", Json(document).into_response())
}

/// The caller's address, for the rate limits: the client behind a trusted
/// proxy, else the peer (`hado_runtime::serve` names it on every request).
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
