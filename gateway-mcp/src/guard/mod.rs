//! Owns who may reach the MCP server over HTTP, checked before rmcp sees a
//! request: only POST; a `Host` and `Origin` the gateway serves (so a web
//! page cannot rebind a name to it); an agent bearer token from the
//! `Authorization` header only (never the query string, never
//! `X-Remote-User`) — an agent token, or an access token of an app the
//! person signed in with; per-token rate limits; and at most 1 MiB of body
//! holding at most 4,096 JSON values, read only once the token is known.
//!
//! Every refusal is a JSON-RPC error response at its HTTP status (401, 403,
//! 405, 413, 429, …), with the request's `id` when the body was read, so
//! that MCP clients show the reason: `{"jsonrpc":"2.0","id":…,"error":
//! {"code":…,"message":…}}`. rmcp's own refusals (a body that is not a
//! JSON-RPC message, a wrong `Content-Type`) are reworded the same way, and
//! a body that is not JSON at all is JSON-RPC's parse error, -32700.
//!
//! Only `tools/call` counts against `HADO_MCP_RATE_LIMIT`: `initialize`,
//! `tools/list` and `ping` cost a script nothing. Every request of a token
//! counts against ten times that, so no one floods core with profile checks.
//!
//! Core resolves the token on every request, so a revoked or re-issued token
//! stops at once. A `tools/call` is checked by the call it makes: core
//! authenticates every call anyway, and a refusal there is answered 401, as
//! a refusal here is. Other requests make no call, so the guard asks core
//! (`GetProfile`, one read). A token core has not accepted within the last
//! minute is asked about before the body is read, whatever the request is.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{ACCEPT, ALLOW, AUTHORIZATION, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};

use hado_proto::v1::GetProfileRequest;

mod body;
mod limits;
mod refusals;

pub(crate) use refusals::{INVALID_REQUEST, REFUSED, refusal, refusal_with};

use crate::core_link::{self, AgentToken, Core, Failure};
pub(crate) use crate::guard::body::MAX_BODY_BYTES;
use crate::guard::limits::{REQUESTS_PER_CALL, TokenLimit};
use crate::guard::refusals::{reword_refusal, unauthorized};
use crate::metrics::count;
use crate::oauth::SignIn;
use hado_gateway::known_tokens::{KnownTokens, TokenDigest};
use hado_runtime::AllowedHosts;

/// How long core's acceptance of a token lets the guard read a request's
/// body before asking core again.
const TOKEN_MEMORY: Duration = Duration::from_secs(60);

pub(crate) struct Guard {
    core: Core,
    /// Signing in with OAuth: a 401 points at the resource metadata.
    sign_in: SignIn,
    allowed_hosts: AllowedHosts,
    tool_calls: TokenLimit,
    requests: TokenLimit,
    known: KnownTokens,
}

impl Guard {
    pub(crate) fn new(
        core: Core,
        sign_in: SignIn,
        allowed_hosts: AllowedHosts,
        calls_per_minute: u32,
    ) -> Self {
        Self {
            core,
            sign_in,
            allowed_hosts,
            tool_calls: TokenLimit::per_minute(calls_per_minute),
            requests: TokenLimit::per_minute(calls_per_minute.saturating_mul(REQUESTS_PER_CALL)),
            known: KnownTokens::new(TOKEN_MEMORY),
        }
    }

    /// Asks core for the profile of the person the token names; with the
    /// token's digest, remembers core's verdict (accepted now, or refused).
    async fn ask_profile(
        &self,
        token: &AgentToken,
        digest: Option<TokenDigest>,
    ) -> Result<hado_proto::v1::Profile, Failure> {
        let answer = core_link::inbox(&self.core, token)
            .get_profile(GetProfileRequest { without_attention: true })
            .await;
        let answer =
            answer.map(tonic::Response::into_inner).map_err(|status| self.core.explain(&status));
        match (&answer, digest) {
            (Ok(_), Some(digest)) => self.known.accepted(digest, Instant::now()),
            (Err(Failure::Unauthenticated(_)), Some(digest)) => self.known.refused(digest),
            _ => {}
        }
        answer
    }

    /// Asks core whether the token names a person; the refusal to send when
    /// it does not.
    async fn check(
        &self,
        token: &AgentToken,
        digest: TokenDigest,
        id: Option<&Value>,
        challenge: &HeaderValue,
    ) -> Option<Response> {
        match self.ask_profile(token, Some(digest)).await {
            Ok(_) => None,
            Err(Failure::Unauthenticated(_)) => Some(unauthorized(token.unknown(), id, challenge)),
            // Core is down or refused for another reason: let the request
            // through, so that a tool call answers with what went wrong.
            Err(failure) => {
                tracing::warn!(
                    reason = failure.message(),
                    "could not check an agent token with core"
                );
                None
            }
        }
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

/// The bearer token of the `Authorization` header, if there is one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Counts every request to `/mcp` by status, whatever the guard decided.
pub(crate) async fn guard(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().to_string();
    let response = admit(guard, request, next).await;
    count("/mcp", method, &response);
    response
}

async fn admit(guard: Arc<Guard>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        let mut response = refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "/mcp takes POST only: this server keeps no sessions and opens no event streams",
            None,
        );
        response.headers_mut().insert(ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let caller = match guard.caller(request.headers(), request.uri()).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let (mut parts, body) = request.into_parts();
    let message = match guard.message(&caller, &parts.headers, body).await {
        Ok(message) => message,
        Err(refused) => return refused,
    };
    accept_json(&mut parts.headers);
    let verdict = TokenVerdict::default();
    let unknown = caller.token.unknown();
    parts.extensions.insert(caller.token);
    parts.extensions.insert(verdict.clone());
    let response = next.run(Request::from_parts(parts, Body::from(message.body))).await;
    if verdict.refused() {
        guard.known.refused(caller.digest);
        return unauthorized(unknown, message.id.as_ref(), &caller.challenge);
    }
    reword_refusal(response, message.id.as_ref()).await
}

/// A caller the guard let in.
pub(crate) struct Caller {
    pub(crate) token: AgentToken,
    pub(crate) digest: TokenDigest,
    /// Whether core accepted the token within the last minute; if not, it
    /// was just asked.
    familiar: bool,
    /// What a 401 to this caller says in `WWW-Authenticate`.
    challenge: HeaderValue,
}

/// A request body the guard read: JSON, within the limits.
pub(crate) struct Message {
    pub(crate) body: Bytes,
    pub(crate) id: Option<Value>,
}

impl Guard {
    /// Who is calling, and from where: a `Host` and `Origin` served here, an
    /// agent bearer token, within the requests a minute; core is asked
    /// about a token it has not accepted within the last minute. Nothing of
    /// the body is read.
    pub(crate) async fn caller(&self, headers: &HeaderMap, uri: &Uri) -> Result<Caller, Response> {
        if let Err(refusal_reason) = self.allowed_hosts.admit_with_origin(headers, uri) {
            return Err(refusal(StatusCode::FORBIDDEN, &refusal_reason.to_string(), None));
        }
        let challenge = self.sign_in.challenge(headers, crate::oauth::Endpoint::of(uri.path()));
        let token = bearer(headers).ok_or_else(|| {
            unauthorized("sign in, or send an agent token as a bearer token", None, &challenge)
        })?;
        let agent_token = AgentToken::parse(token)
            .ok_or_else(|| unauthorized("unknown agent token", None, &challenge))?;
        let digest = TokenDigest::of(token.as_bytes());
        if let Err(wait) = self.requests.take(digest) {
            return Err(self.requests.refusal("requests", wait, None));
        }
        let familiar = self.known.recently_accepted(digest, Instant::now());
        if !familiar && let Some(refused) = self.check(&agent_token, digest, None, &challenge).await
        {
            return Err(refused);
        }
        Ok(Caller { token: agent_token, digest, familiar, challenge })
    }

    /// The login of the person the caller's token acts for, asked of core
    /// now (an event stream is counted per person); the refusal when core
    /// does not know the token, or cannot be asked.
    pub(crate) async fn person(&self, caller: &Caller) -> Result<String, Response> {
        match self.ask_profile(&caller.token, Some(caller.digest)).await {
            Ok(profile) => Ok(profile.login),
            Err(Failure::Unauthenticated(_)) => {
                Err(unauthorized(caller.token.unknown(), None, &caller.challenge))
            }
            Err(failure) => {
                let retry_after = hado_gateway::client::RETRY_AFTER_SECONDS;
                let data = Some(json!({ "retry_after": retry_after }));
                let mut response = refusal_with(
                    StatusCode::SERVICE_UNAVAILABLE,
                    REFUSED,
                    failure.message(),
                    None,
                    data,
                );
                response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(retry_after));
                Err(response)
            }
        }
    }

    /// Whether core still knows the token (false only when it says so: an
    /// unreachable core is no verdict).
    pub(crate) async fn still_known(&self, token: &AgentToken) -> bool {
        !matches!(self.ask_profile(token, None).await, Err(Failure::Unauthenticated(_)))
    }

    /// Asks core about a familiar token too, for a request that makes no
    /// call of its own to core.
    pub(crate) async fn confirm(
        &self,
        caller: &Caller,
        id: Option<&Value>,
    ) -> Result<(), Response> {
        if caller.familiar {
            self.check(&caller.token, caller.digest, id, &caller.challenge)
                .await
                .map_or(Ok(()), Err)
        } else {
            Ok(())
        }
    }

    /// The caller's request body: at most 1 MiB and 4,096 values, JSON,
    /// and a `tools/call` within the tool-call limit. Anything else is
    /// confirmed with core, since only a tool call is checked by the call
    /// it makes.
    pub(crate) async fn message(
        &self,
        caller: &Caller,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<Message, Response> {
        let declared = hado_gateway::bodies::declared_length(headers);
        let body::Read { body, id, tool_call } = body::read(body, declared).await?;
        if tool_call {
            if let Err(wait) = self.tool_calls.take(caller.digest) {
                return Err(self.tool_calls.refusal("tool calls", wait, id.as_ref()));
            }
        } else {
            self.confirm(caller, id.as_ref()).await?;
        }
        Ok(Message { body, id })
    }
}

/// Every reply is JSON (the server runs rmcp in JSON mode), so a client that
/// does not list `text/event-stream`, or sends no `Accept` at all, is served
/// rather than refused with rmcp's 406.
fn accept_json(headers: &mut HeaderMap) {
    let streams = headers
        .get_all(ACCEPT)
        .iter()
        .any(|value| value.to_str().is_ok_and(|value| value.contains("text/event-stream")));
    if !streams {
        headers.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
    }
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
}
