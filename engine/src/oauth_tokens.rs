//! Owns the token endpoint's side of signing an agent in: a code exchanged
//! once (with its PKCE verifier) for an access and a refresh token, a
//! refresh that rotates (and revokes the access tokens it replaces), and an
//! access token resolved to its person.
//!
//! A refresh token sent again within [`REFRESH_GRACE`] of its exchange gets
//! the same answer. Clients do send one refresh token twice at once (two
//! requests racing after their access token ran out, a retry after a
//! dropped reply), and revoking the grant for that, as reuse detection
//! would, leaves a well-behaved client disconnected: the losing request
//! revokes the grant, and the winner's new tokens with it. Past the window
//! a repeat is what it was, a sign of a leaked token, and revokes.
//!
//! To give the same answer, the exchange keeps it in the refresh token's
//! row, since access and refresh tokens are stored only as hashes. It is
//! sealed (ChaCha20-Poly1305) under a key derived from the refresh token
//! itself, which storage does not hold (only its SHA-256): reading the
//! database, even with `HADO_SECRET`, opens no answer, and whoever can open
//! one holds the refresh token and could have sent it to `/token` anyway.
//! The answer is forgotten once the window has passed. Deriving the new
//! tokens from the old one instead would need no storage, but anyone who
//! ever saw a used refresh token could then work out its successor offline
//! and use it without `/token` ever seeing the old one again, which is
//! exactly the replay reuse detection exists to catch. The state is in the
//! database, so the repeat may reach any core replica: on Postgres a
//! repeat that races the first exchange waits for its row and reads the
//! answer it committed.

use crate::Engine;
use crate::error::CoreError;
use crate::kept::AccessToken;
use crate::tokens;
use chrono::{DateTime, Utc};
use hado_domain::oauth::{
    self, ACCESS_LIFETIME, CODE_LIFETIME, REFRESH_GRACE, REFRESH_LIFETIME, Refusal, SCOPE,
};
use hado_domain::user::UserRecord;
use hado_storage::oauth::{self as store, RefreshRecord, TokenKind};

use crate::oauth::OAuthFailure;

/// Tokens just issued.
#[derive(Clone, Debug)]
pub struct IssuedTokens {
    pub access_token: String,
    pub refresh_token: String,
    pub expires_in: u32,
    pub scope: &'static str,
}

/// A token request's parameters.
#[derive(Clone, Debug, Default)]
pub struct TokenParams {
    pub grant_type: String,
    pub client_id: String,
    pub code: String,
    pub redirect_uri: String,
    pub code_verifier: String,
    pub refresh_token: String,
    pub resource: String,
    pub served_resource: String,
}

impl Engine {
    /// The token endpoint: a code or a refresh token exchanged for tokens.
    pub async fn token(&self, params: &TokenParams) -> Result<IssuedTokens, OAuthFailure> {
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
                // Forgotten only once something was revoked: a code or a
                // token that names nothing changes nothing, so whoever sends
                // made-up ones cannot empty this core's memory.
                let forget = self.kept.forgetting_grant(grant);
                store::delete_grant(&mut transaction, grant).await?;
                transaction.commit().await?;
                forget.landed();
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
        let (issued, hashes) = fresh_pair();
        write_pair(&mut transaction, grant, &hashes, now).await?;
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
        let unknown = || {
            Refusal::invalid_grant(
                "the refresh token is not known: it expired, or the app was disconnected",
            )
        };
        let Some(mut refresh) = store::refresh_token(&mut transaction, &token_hash).await? else {
            return Err(unknown().into());
        };
        if refresh.used_at.is_none() {
            check_refresh(&refresh, params, served, now)?;
            let (issued, hashes) = fresh_pair();
            let answer = tokens::seal_under(
                &params.refresh_token,
                &format!("{} {}", issued.access_token, issued.refresh_token),
            );
            if store::use_refresh_token(&mut transaction, &token_hash, now, &answer).await? {
                // The new access token replaces the grant's old ones: they
                // stop now rather than live out their hour, so a client that
                // refreshes often holds one working token, not dozens.
                let forget = self.kept.forgetting_grant(refresh.grant);
                store::revoke_access_tokens(&mut transaction, refresh.grant).await?;
                store::forget_answers(&mut transaction, refresh.grant, now - REFRESH_GRACE).await?;
                write_pair(&mut transaction, refresh.grant, &hashes, now).await?;
                store::touch_grant(&mut transaction, refresh.grant, now).await?;
                transaction.commit().await?;
                forget.landed();
                return Ok(issued);
            }
            // Another exchange of this token committed first: its answer is
            // the one this repeat gets.
            refresh =
                store::refresh_token(&mut transaction, &token_hash).await?.ok_or_else(unknown)?;
        }
        match answered_again(&refresh, params, served, now) {
            Some(answer) => Ok(answer?),
            None => {
                let forget = self.kept.forgetting_grant(refresh.grant);
                store::delete_grant(&mut transaction, refresh.grant).await?;
                transaction.commit().await?;
                forget.landed();
                Err(Refusal::invalid_grant(
                    "the refresh token was already used; the app is disconnected and must sign in again",
                )
                .into())
            }
        }
    }

    /// The person an OAuth access token acts for: from what this core keeps
    /// (`engine::kept`, never past the token's expiry), or else in one read
    /// and no write.
    pub async fn access_token_user(&self, token: &str) -> Result<Option<UserRecord>, CoreError> {
        let (hash, now) = (tokens::hash(token), self.now());
        if let Some(user) = self.kept.access_token(&hash, now) {
            return Ok(Some(user));
        }
        let began = self.kept.reading();
        let mut connection = self.store.reader().acquire().await?;
        let Some((user, expires_at, grant)) =
            store::user_by_access_token(&mut connection, &hash, now).await?
        else {
            return Ok(None);
        };
        let token = AccessToken { user: user.clone(), expires_at, grant };
        self.kept.keep_access_token(began, hash, token);
        Ok(Some(user))
    }
}

/// Whether `refresh` may be exchanged by this request: unexpired, the
/// requesting client's, and for the served resource.
fn check_refresh(
    refresh: &RefreshRecord,
    params: &TokenParams,
    served: &str,
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    if refresh.expires_at <= now {
        return Err(Refusal::invalid_grant("the refresh token expired; sign in again"));
    }
    if refresh.client_id != params.client_id {
        return Err(Refusal::invalid_grant("the refresh token was issued to another client"));
    }
    if refresh.resource != served {
        return Err(Refusal::invalid_target(format!(
            "the refresh token is for {}, not this server ({served})",
            refresh.resource
        )));
    }
    Ok(())
}

/// The answer an exchanged refresh token's repeat gets: the tokens the
/// exchange gave, while the grace window lasts and the answer opens with
/// the token presented (refused as any exchange would be, for another
/// client or resource); none when it is a reuse, which revokes the grant.
fn answered_again(
    refresh: &RefreshRecord,
    params: &TokenParams,
    served: &str,
    now: DateTime<Utc>,
) -> Option<Result<IssuedTokens, Refusal>> {
    let used_at = refresh.used_at?;
    if now - used_at > REFRESH_GRACE {
        return None;
    }
    let answer = tokens::open_with(&params.refresh_token, refresh.successor.as_deref()?)?;
    let (access_token, refresh_token) = answer.split_once(' ')?;
    // Held to what the exchange was held to, as of the exchange.
    if let Err(refusal) = check_refresh(refresh, params, served, used_at) {
        return Some(Err(refusal));
    }
    // The same tokens, so the access token has lived since the exchange.
    let left = ACCESS_LIFETIME - (now - used_at).max(chrono::Duration::zero());
    Some(Ok(IssuedTokens {
        access_token: access_token.to_owned(),
        refresh_token: refresh_token.to_owned(),
        expires_in: left.num_seconds().max(0) as u32,
        scope: SCOPE,
    }))
}

/// The hashes of a fresh pair, which storage holds in their place.
struct PairHashes {
    access: String,
    refresh: String,
}

/// A fresh access token and refresh token, not yet written.
fn fresh_pair() -> (IssuedTokens, PairHashes) {
    let (access_token, access) = tokens::generate(tokens::ACCESS_PREFIX);
    let (refresh_token, refresh) = tokens::generate(tokens::REFRESH_PREFIX);
    let issued = IssuedTokens {
        access_token,
        refresh_token,
        expires_in: ACCESS_LIFETIME.num_seconds() as u32,
        scope: SCOPE,
    };
    (issued, PairHashes { access, refresh })
}

/// Writes a pair under `grant`, by its hashes.
async fn write_pair(
    connection: &mut impl hado_storage::Connection,
    grant: i64,
    hashes: &PairHashes,
    now: DateTime<Utc>,
) -> Result<(), CoreError> {
    store::insert_token(
        connection,
        &hashes.access,
        grant,
        TokenKind::Access,
        now + ACCESS_LIFETIME,
    )
    .await?;
    store::insert_token(
        connection,
        &hashes.refresh,
        grant,
        TokenKind::Refresh,
        now + REFRESH_LIFETIME,
    )
    .await?;
    Ok(())
}
