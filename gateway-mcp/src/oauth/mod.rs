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
//!
//! `refused` is how a refusal is answered, and `writes` the two routes that
//! write, `/register` and `/token`.

use crate::oauth::limits::AddressLimit;
use crate::oauth::refused::Refused;

mod limits;
mod refused;
mod writes;

pub(crate) use writes::{register, token};

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::header::HOST;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use hado_gateway::client::CoreChannel;
use serde_json::json;

use hado_proto::v1::o_auth_client::OAuthClient;
use hado_runtime::AllowedHosts;

use crate::core_link::Core;
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
        self.allowed_hosts
            .admit_with_origin(headers, uri)
            .map_err(|refusal| forbidden(refusal.to_string()))?;
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

/// `GET /.well-known/oauth-authorization-server` (RFC 8414). Every
/// authorization response names `issuer` as its `iss` (RFC 9207): core
/// writes it from the MCP address the web inbox is configured with, which
/// is this document's base when both are set up alike (`HADO_PUBLIC_URL`,
/// or `hado up`'s addresses).
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
        "authorization_response_iss_parameter_supported": true,
    });
    counted(AUTHORIZATION_SERVER_PATH, "GET", Json(document).into_response())
}
