//! Owns who a gRPC caller is: every credential arrives as
//! `authorization: Bearer …`, and each service accepts only its own kind.

use tonic::metadata::MetadataMap;

use hado_proto::metadata::{AUTHORIZATION, USER};

use hado_domain::user::UserRecord;
use hado_engine::error::CoreError;
use hado_engine::tokens::{self, ACCESS_PREFIX, AGENT_PREFIX, SOURCE_PREFIX};
use hado_engine::{Engine, SourceCaller};

/// The configured secrets that callers present.
#[derive(Clone)]
pub(crate) struct Credentials {
    pub(crate) admin_token: String,
    pub(crate) gateway_token: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Credentials { .. }")
    }
}

/// How the person behind an Inbox call was authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// A gateway vouched for them (the web inbox).
    Gateway,
    /// Their agent token, or an app they signed in with (OAuth): an agent
    /// either way.
    Agent,
}

/// The person behind an Inbox call.
#[derive(Clone, Debug)]
pub(crate) struct UserCaller {
    pub(crate) user: UserRecord,
    pub(crate) via: Via,
}

fn bearer(metadata: &MetadataMap) -> Result<&str, CoreError> {
    let value = metadata.get(AUTHORIZATION).ok_or_else(|| {
        CoreError::Unauthenticated("an authorization header with a bearer token is required".into())
    })?;
    let text = value
        .to_str()
        .map_err(|_| CoreError::Unauthenticated("the authorization header is not text".into()))?;
    let token = text
        .strip_prefix("Bearer ")
        .or_else(|| text.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| {
            CoreError::Unauthenticated("the authorization header must be 'Bearer <token>'".into())
        })?;
    Ok(token)
}

impl UserCaller {
    /// Turns core's error into this person's status: the reasons that have
    /// words carry them in their language.
    pub(crate) fn refusal(&self) -> impl Fn(CoreError) -> tonic::Status + use<> {
        let locale = self.user.locale;
        move |error| crate::status::status_in(error, locale)
    }
}

/// The source behind an Ingest call.
pub(crate) async fn source(
    engine: &Engine,
    metadata: &MetadataMap,
) -> Result<SourceCaller, CoreError> {
    let token = bearer(metadata)?;
    if !token.starts_with(SOURCE_PREFIX) {
        return Err(CoreError::Unauthenticated(
            "the Ingest service takes a source token (hado_src_…)".into(),
        ));
    }
    engine
        .source_for_token(token)
        .await?
        .ok_or_else(|| CoreError::Unauthenticated("unknown source token".into()))
}

/// The person behind an Inbox call: an agent token, an OAuth access token,
/// or the gateway credential with the login the gateway authenticated.
pub(crate) async fn user(
    engine: &Engine,
    credentials: &Credentials,
    metadata: &MetadataMap,
) -> Result<UserCaller, CoreError> {
    let token = bearer(metadata)?;
    if token.starts_with(AGENT_PREFIX) {
        let user = engine
            .agent_token_user(token)
            .await?
            .ok_or_else(|| CoreError::Unauthenticated("unknown agent token".into()))?;
        return Ok(UserCaller { user, via: Via::Agent });
    }
    if token.starts_with(ACCESS_PREFIX) {
        let user = engine.access_token_user(token).await?.ok_or_else(|| {
            CoreError::Unauthenticated(
                "unknown or expired access token; refresh it or sign in again".into(),
            )
        })?;
        return Ok(UserCaller { user, via: Via::Agent });
    }
    if tokens::same_secret(token, &credentials.gateway_token) {
        let login = metadata.get(USER).and_then(|value| value.to_str().ok()).ok_or_else(|| {
            CoreError::Unauthenticated(format!(
                "the gateway credential needs the {USER} header naming the user"
            ))
        })?;
        let user = engine.user_for_login(login).await?;
        return Ok(UserCaller { user, via: Via::Gateway });
    }
    Err(CoreError::Unauthenticated("the Inbox service takes an agent token (hado_agent_…), an access token (hado_at_…) or the gateway credential".into()))
}

/// Admits the operator.
pub(crate) fn admin(credentials: &Credentials, metadata: &MetadataMap) -> Result<(), CoreError> {
    let token = bearer(metadata)?;
    if tokens::same_secret(token, &credentials.admin_token) {
        Ok(())
    } else {
        Err(CoreError::Unauthenticated("the Admin service takes the admin token".into()))
    }
}

/// Admits the gateway credential alone, for calls that name no user.
pub(crate) fn gateway(credentials: &Credentials, metadata: &MetadataMap) -> Result<(), CoreError> {
    let token = bearer(metadata)?;
    if tokens::same_secret(token, &credentials.gateway_token) {
        Ok(())
    } else {
        Err(CoreError::Unauthenticated(
            "the Links and OAuth services take the gateway credential".into(),
        ))
    }
}

/// The person a gateway vouches for, with the gateway credential only: for
/// what an agent may never do for itself (approving an app's sign-in).
pub(crate) async fn person(
    engine: &Engine,
    credentials: &Credentials,
    metadata: &MetadataMap,
) -> Result<UserRecord, CoreError> {
    gateway(credentials, metadata)?;
    let caller = user(engine, credentials, metadata).await?;
    Ok(caller.user)
}

/// A caller who is the person at the inbox (through the gateway), not their
/// agent: the agent token is the person's to manage, and an agent may not
/// mint or revoke its own credentials.
pub(crate) fn person_at_inbox(caller: UserCaller) -> Result<UserCaller, CoreError> {
    if caller.via == Via::Gateway {
        Ok(caller)
    } else {
        Err(CoreError::PermissionDenied(
            "agent tokens are managed from the inbox, not by an agent".into(),
        ))
    }
}
