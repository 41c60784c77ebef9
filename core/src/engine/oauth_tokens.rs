//! Owns the token endpoint's side of signing an agent in: a code exchanged
//! once (with its PKCE verifier) for an access and a refresh token, a
//! refresh that rotates (and revokes the access tokens it replaces), and an
//! access token resolved to its person.

use crate::domain::oauth::{
    self, ACCESS_LIFETIME, CODE_LIFETIME, REFRESH_LIFETIME, Refusal, SCOPE,
};
use crate::engine::Engine;
use crate::error::CoreError;
use crate::storage::UserRecord;
use crate::storage::oauth::{self as store, TokenKind};
use crate::tokens;
use chrono::{DateTime, Utc};

use crate::engine::oauth::OAuthFailure;

/// Tokens just issued.
#[derive(Clone, Debug)]
pub(crate) struct IssuedTokens {
    pub(crate) access_token: String,
    pub(crate) refresh_token: String,
    pub(crate) expires_in: u32,
    pub(crate) scope: &'static str,
}

/// A token request's parameters.
#[derive(Clone, Debug, Default)]
pub(crate) struct TokenParams {
    pub(crate) grant_type: String,
    pub(crate) client_id: String,
    pub(crate) code: String,
    pub(crate) redirect_uri: String,
    pub(crate) code_verifier: String,
    pub(crate) refresh_token: String,
    pub(crate) resource: String,
    pub(crate) served_resource: String,
}

impl Engine {
    /// The token endpoint: a code or a refresh token exchanged for tokens.
    pub(crate) async fn token(&self, params: &TokenParams) -> Result<IssuedTokens, OAuthFailure> {
        let served = oauth::resource(&params.served_resource).map_err(|_| {
            CoreError::invalid("served_resource", "served_resource must be the gateway's MCP URL")
        })?;
        if params.client_id.is_empty() {
            return Err(Refusal::invalid_request(
                "client_id is required (clients here are public and identify themselves with it)",
            )
            .into());
        }
        if !params.resource.is_empty() && oauth::resource(&params.resource)? != served {
            return Err(Refusal::invalid_target(format!(
                "resource {:?} is not this server; tokens here are for {served}",
                params.resource
            ))
            .into());
        }
        match params.grant_type.as_str() {
            "authorization_code" => self.exchange_code(params, &served).await,
            "refresh_token" => self.refresh(params, &served).await,
            "" => Err(Refusal::invalid_request(
                "grant_type is required: authorization_code or refresh_token",
            )
            .into()),
            other => Err(Refusal::new(
                "unsupported_grant_type",
                format!(
                    "grant_type {other:?} is not offered; use authorization_code or refresh_token"
                ),
            )
            .into()),
        }
    }

    async fn exchange_code(
        &self,
        params: &TokenParams,
        served: &str,
    ) -> Result<IssuedTokens, OAuthFailure> {
        if params.code.is_empty() {
            return Err(Refusal::invalid_request("code is required").into());
        }
        if params.code_verifier.is_empty() {
            return Err(Refusal::invalid_request("code_verifier is required (PKCE)").into());
        }
        let now = self.now();
        let code_hash = tokens::hash(&params.code);
        let mut transaction = self.store.begin_write().await?;
        let Some(code) = store::code(&mut transaction, &code_hash).await? else {
            return Err(Refusal::invalid_grant(
                "the code is not known: it may have expired or been mistyped",
            )
            .into());
        };
        if let Some(grant) = code.used {
            if let Some(grant) = grant {
                store::delete_grant(&mut transaction, grant).await?;
                transaction.commit().await?;
            }
            return Err(Refusal::invalid_grant(
                "the code was already used; the tokens it gave are revoked",
            )
            .into());
        }
        if code.expires_at <= now {
            return Err(Refusal::invalid_grant(format!(
                "the code expired; a code is good for {} minutes",
                CODE_LIFETIME.num_minutes()
            ))
            .into());
        }
        if code.client_id != params.client_id {
            return Err(Refusal::invalid_grant("the code was issued to another client").into());
        }
        if params.redirect_uri != code.redirect_uri {
            return Err(Refusal::invalid_grant(
                "redirect_uri must be the one the authorization request used",
            )
            .into());
        }
        if !oauth::verifies(&params.code_verifier, &code.code_challenge) {
            return Err(Refusal::invalid_grant(
                "code_verifier does not match the code_challenge (PKCE S256)",
            )
            .into());
        }
        if !code.resource.is_empty() && code.resource != served {
            return Err(Refusal::invalid_target(format!(
                "the code was issued for {}, not this server ({served})",
                code.resource
            ))
            .into());
        }
        let grant =
            store::insert_grant(&mut transaction, code.user_id, code.client, served, now).await?;
        if !store::use_code(&mut transaction, &code_hash, grant, now).await? {
            return Err(Refusal::invalid_grant("the code was already used").into());
        }
        let issued = issue(&mut transaction, grant, now).await?;
        store::touch_client(&mut transaction, code.client, now).await?;
        transaction.commit().await?;
        Ok(issued)
    }

    async fn refresh(
        &self,
        params: &TokenParams,
        served: &str,
    ) -> Result<IssuedTokens, OAuthFailure> {
        if params.refresh_token.is_empty() {
            return Err(Refusal::invalid_request("refresh_token is required").into());
        }
        let now = self.now();
        let token_hash = tokens::hash(&params.refresh_token);
        let mut transaction = self.store.begin_write().await?;
        let Some(refresh) = store::refresh_token(&mut transaction, &token_hash).await? else {
            return Err(Refusal::invalid_grant(
                "the refresh token is not known: it expired, or the app was disconnected",
            )
            .into());
        };
        if refresh.used {
            store::delete_grant(&mut transaction, refresh.grant).await?;
            transaction.commit().await?;
            return Err(Refusal::invalid_grant("the refresh token was already used; the app is disconnected and must sign in again").into());
        }
        if refresh.expires_at <= now {
            return Err(Refusal::invalid_grant("the refresh token expired; sign in again").into());
        }
        if refresh.client_id != params.client_id {
            return Err(
                Refusal::invalid_grant("the refresh token was issued to another client").into()
            );
        }
        if refresh.resource != served {
            return Err(Refusal::invalid_target(format!(
                "the refresh token is for {}, not this server ({served})",
                refresh.resource
            ))
            .into());
        }
        if !store::use_refresh_token(&mut transaction, &token_hash, now).await? {
            return Err(Refusal::invalid_grant("the refresh token was already used").into());
        }
        // The new access token replaces the grant's old ones: they stop now
        // rather than live out their hour, so a client that refreshes often
        // holds one working token, not dozens.
        store::revoke_access_tokens(&mut transaction, refresh.grant).await?;
        let issued = issue(&mut transaction, refresh.grant, now).await?;
        store::touch_grant(&mut transaction, refresh.grant, now).await?;
        transaction.commit().await?;
        Ok(issued)
    }

    /// The person an OAuth access token acts for, with their attention
    /// count, in one read and no write.
    pub(crate) async fn access_token_user(
        &self,
        token: &str,
    ) -> Result<Option<(UserRecord, i64)>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(store::user_by_access_token(&mut connection, &tokens::hash(token), self.now()).await?)
    }
}

/// A fresh access token and refresh token under `grant`.
async fn issue(
    connection: &mut sqlx::AnyConnection,
    grant: i64,
    now: DateTime<Utc>,
) -> Result<IssuedTokens, CoreError> {
    let (access_token, access_hash) = tokens::generate(tokens::ACCESS_PREFIX);
    let (refresh_token, refresh_hash) = tokens::generate(tokens::REFRESH_PREFIX);
    store::insert_token(connection, &access_hash, grant, TokenKind::Access, now + ACCESS_LIFETIME)
        .await?;
    store::insert_token(
        connection,
        &refresh_hash,
        grant,
        TokenKind::Refresh,
        now + REFRESH_LIFETIME,
    )
    .await?;
    Ok(IssuedTokens {
        access_token,
        refresh_token,
        expires_in: ACCESS_LIFETIME.num_seconds() as u32,
        scope: SCOPE,
    })
}
