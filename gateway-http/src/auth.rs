//! Owns who a request comes from. Sources present a bearer token, which
//! core resolves. The inbox's person is named by `X-Remote-User`, believed
//! only from a trusted proxy's address; a gateway bound to loopback with
//! `HADO_LOCAL_USER` set serves that one user instead. Nothing else names a
//! user: a header from anyone else is ignored and the request refused. A
//! trusted proxy's request that names more than one person (the header twice,
//! or a list in one) is refused too: a proxy that adds to a client's header
//! rather than replacing it must not let the client choose who it is.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRef, FromRequestParts};
use axum::http::StatusCode;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use hado_proto::metadata::Credential;

use crate::error::ApiError;
use crate::state::AppState;

/// The header a trusted proxy names the signed-in user with.
pub(crate) const REMOTE_USER: &str = "x-remote-user";

/// A source's bearer token, to be resolved by core.
pub(crate) struct SourceCredential(pub Credential);

impl<S: Send + Sync> FromRequestParts<S> for SourceCredential {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let token = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, token)| {
                scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty()
            })
            .map(|(_, token)| token.trim());
        let token = token.ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "a source bearer token is required (Authorization: Bearer hado_src_…)",
            )
        })?;
        Credential::bearer(token)
            .map(Self)
            .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "unknown source token"))
    }
}

/// The person using the inbox.
#[derive(Clone, Debug)]
pub(crate) struct InboxUser(pub String);

/// Why no person could be named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoUser {
    /// Nobody is signed in (401).
    SignedOut(&'static str),
    /// The trusted proxy named more than one person (400).
    Ambiguous,
}

impl NoUser {
    pub(crate) const AMBIGUOUS: &'static str = "the trusted proxy named more than one user in \
        X-Remote-User; it must replace a client's X-Remote-User header, not add to it";

    pub(crate) fn status(self) -> StatusCode {
        match self {
            Self::SignedOut(_) => StatusCode::UNAUTHORIZED,
            Self::Ambiguous => StatusCode::BAD_REQUEST,
        }
    }

    pub(crate) fn reason(self) -> &'static str {
        match self {
            Self::SignedOut(reason) => reason,
            Self::Ambiguous => Self::AMBIGUOUS,
        }
    }
}

/// Who the person is, or why no one could be named.
pub(crate) fn inbox_user(
    state: &AppState,
    peer: SocketAddr,
    headers: &axum::http::HeaderMap,
) -> Result<InboxUser, NoUser> {
    if state.config.trusts(peer.ip()) {
        return named_by_proxy(headers);
    }
    match &state.config.local_user {
        Some(login) if state.config.addr.ip().is_loopback() && peer.ip().is_loopback() => {
            Ok(InboxUser(login.clone()))
        }
        _ => Err(NoUser::SignedOut("sign in through the proxy in front of Hado")),
    }
}

/// The one person a trusted proxy's `X-Remote-User` names. A second header,
/// even an empty one, or a comma (how a proxy joins two values into one
/// header; no login holds one) makes the request ambiguous.
fn named_by_proxy(headers: &axum::http::HeaderMap) -> Result<InboxUser, NoUser> {
    let mut values = headers.get_all(REMOTE_USER).iter();
    let (first, second) = (values.next(), values.next());
    if second.is_some() {
        return Err(NoUser::Ambiguous);
    }
    let login = first.and_then(|value| value.to_str().ok()).map(str::trim);
    if login.is_some_and(|login| login.contains(',')) {
        return Err(NoUser::Ambiguous);
    }
    login
        .filter(|login| !login.is_empty())
        .map(|login| InboxUser(login.to_owned()))
        .ok_or(NoUser::SignedOut("the trusted proxy did not name a user in X-Remote-User"))
}

impl<S> FromRequestParts<S> for InboxUser
where
    AppState: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let state = AppState::from_ref(state);
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|info| info.0);
        let peer = peer.ok_or_else(|| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the peer address is unknown")
        })?;
        inbox_user(&state, peer, &parts.headers)
            .map_err(|refusal| ApiError::new(refusal.status(), refusal.reason()))
    }
}
