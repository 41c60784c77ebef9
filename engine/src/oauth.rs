//! Owns signing agents in (OAuth 2.1 for the MCP endpoint): clients
//! registered or fetched from their metadata documents, the person's
//! approval turned into a one-time code, codes and refresh tokens exchanged
//! for tokens (refresh tokens rotate), access tokens resolved, and the
//! person's connected apps listed and disconnected.
//!
//! A code or refresh token used twice is a sign that it leaked: the second
//! use is refused and the grant it came from is revoked, as RFC 6749
//! (section 4.1.2) and OAuth 2.1 (section 4.3.1) ask; a refresh token sent
//! again within seconds is the exception (`oauth_tokens` says why).
//!
//! An authorization request goes back to its client only once the person
//! answered it: with a code after Allow, with `access_denied` after Deny,
//! and always with the state and this server's issuer (RFC 9207), so that
//! a client signed in to several servers can tell which one answered. A
//! request that fails a check is shown to the person instead, whoever its
//! redirect URI is (RFC 9700 section 4.11.2).

use crate::Engine;
use crate::error::CoreError;
use crate::tokens;
use hado_domain::user::UserRecord;

use hado_domain::oauth::ConnectedApp;
use hado_domain::oauth::{
    AuthorizationParams, CODE_LIFETIME, ClientKind, ClientMetadata, MAX_UNCONNECTED_CLIENTS,
    Problem, Refusal, RegisteredClient, Server, Unfit, document_url,
};
use hado_storage::oauth::{self as store, ClientRecord, NewCode};

/// Why an OAuth operation did not happen: a refusal the RFCs define, or
/// core's own failure.
#[derive(Debug, thiserror::Error)]
pub enum OAuthFailure {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Core(#[from] CoreError),
}

impl From<hado_storage::StoreError> for OAuthFailure {
    fn from(error: hado_storage::StoreError) -> Self {
        Self::Core(error.into())
    }
}

impl From<hado_storage::QueryError> for OAuthFailure {
    fn from(error: hado_storage::QueryError) -> Self {
        Self::Core(error.into())
    }
}

/// A checked authorization request: who asks, where the answer goes, what
/// the code will be for, and the issuer the answer names.
#[derive(Clone, Debug)]
pub struct Asking {
    pub client: ClientRecord,
    pub redirect_uri: String,
    /// In the form resources compare in; empty when the request named none.
    resource: String,
    issuer: String,
}

/// Where an authorization request's answer goes and what it says.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Asking may go ahead.
    Ask(Asking),
    /// The person answered, and their browser goes back to the client: with
    /// a code after Allow, or with `access_denied` after Deny.
    Redirect { to: String, refusal: Option<Refusal> },
    /// Refused, and only the person hears why: nothing is sent anywhere.
    Show(Unfit),
}

/// `uri` with `pairs` added to its query.
fn with_query(uri: &str, pairs: &[(&str, &str)]) -> String {
    match url::Url::parse(uri) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(pairs.iter().filter(|(_, value)| !value.is_empty()));
            url.into()
        }
        Err(_) => uri.to_owned(),
    }
}

impl Engine {
    /// Registers a client (RFC 7591), first forgetting clients no one
    /// connected within an hour of their last use. A newcomer is never
    /// refused for want of room: past the cap of clients waiting for anyone
    /// to connect them, the least recently used of those are forgotten, so
    /// that a flood of registrations only ever pushes out its own.
    pub async fn register_client(&self, metadata_json: &str) -> Result<String, OAuthFailure> {
        let metadata = ClientMetadata::parse_registration(metadata_json)?;
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        store::sweep(&mut transaction, now).await?;
        let waiting = store::unconnected_clients(&mut transaction).await?;
        if waiting >= MAX_UNCONNECTED_CLIENTS {
            store::forget_least_used_unconnected(
                &mut transaction,
                waiting - MAX_UNCONNECTED_CLIENTS + 1,
            )
            .await?;
        }
        let (client_id, _) = tokens::generate(tokens::CLIENT_PREFIX);
        store::save_client(&mut transaction, &client_id, &metadata, ClientKind::Registered, now)
            .await?;
        transaction.commit().await?;
        let reply = RegisteredClient::new(&client_id, now.timestamp(), &metadata);
        Ok(serde_json::to_string(&reply).expect("the registration reply serializes"))
    }

    /// The client an ID names: a registered one, or the one whose metadata
    /// document is at that URL (fetched now, so that what the person sees
    /// is what the document says today).
    async fn client_named(&self, client_id: &str) -> Result<ClientRecord, OAuthFailure> {
        if client_id.is_empty() {
            return Err(Refusal::invalid_request("client_id is required").into());
        }
        if let Some(url) = document_url(client_id, self.outbound.allow_private)? {
            let metadata = self.fetch_document(&url).await?;
            let mut transaction = self.store.begin_write().await?;
            let client = store::save_client(
                &mut transaction,
                client_id,
                &metadata,
                ClientKind::Document,
                self.now(),
            )
            .await?;
            transaction.commit().await?;
            return Ok(client);
        }
        let mut connection = self.store.reader().acquire().await?;
        store::client(&mut connection, client_id).await?.filter(|client| client.kind == ClientKind::Registered).ok_or_else(|| {
            Refusal::new(
                "invalid_client",
                format!("client_id {client_id:?} is not registered here (registrations no one connects are forgotten an hour after their last use)"),
            )
            .into()
        })
    }

    /// Fetches a Client ID Metadata Document through the network's checks
    /// (those of a webhook's target: no private addresses, no redirects, a
    /// size limit), and reads it.
    async fn fetch_document(&self, url: &url::Url) -> Result<ClientMetadata, Refusal> {
        let unreachable = |why: String| {
            Refusal::new(
                "invalid_client",
                format!("the client's metadata document at {url} could not be read: {why}"),
            )
        };
        self.outbound.targets().check_written(url).map_err(unreachable)?;
        let body = self.network.fetch_document(url).await.map_err(unreachable)?;
        ClientMetadata::parse_document(url.as_str(), &body)
    }

    /// Checks an authorization request, for the consent page: the client
    /// and its redirect URI, then the rest. Any refusal is shown to the
    /// person; the request's redirect URI hears nothing until they answer.
    pub async fn check_authorization(
        &self,
        params: &AuthorizationParams,
    ) -> Result<Verdict, CoreError> {
        let server = Server::of_mcp_url(&params.served_resource).ok_or_else(|| {
            CoreError::invalid(
                "served_resource",
                format!(
                    "served_resource {:?} must be the MCP endpoint's http(s) URL, ending in /mcp, such as https://hado.example.com/mcp",
                    params.served_resource
                ),
            )
        })?;
        let client = match self.client_named(&params.client_id).await {
            Ok(client) => client,
            Err(OAuthFailure::Refused(refusal)) => {
                return Ok(Verdict::Show(Problem::Client.of(refusal)));
            }
            Err(OAuthFailure::Core(error)) => return Err(error),
        };
        let redirect_uri = match params.redirect_uri(&client.metadata.redirect_uris) {
            Ok(uri) => uri.to_owned(),
            Err(unfit) => return Ok(Verdict::Show(unfit)),
        };
        match params.check_rest(&server) {
            Ok(resource) => {
                Ok(Verdict::Ask(Asking { client, redirect_uri, resource, issuer: server.issuer }))
            }
            Err(unfit) => Ok(Verdict::Show(unfit)),
        }
    }

    /// The person allowed the request: where their browser goes next, with
    /// a one-time code.
    pub async fn approve(
        &self,
        user: &UserRecord,
        params: &AuthorizationParams,
    ) -> Result<Verdict, CoreError> {
        let asking = match self.check_authorization(params).await? {
            Verdict::Ask(asking) => asking,
            refused => return Ok(refused),
        };
        let (code, code_hash) = tokens::generate(tokens::CODE_PREFIX);
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        store::sweep(&mut transaction, now).await?;
        let new = NewCode {
            code_hash: &code_hash,
            client: asking.client.id,
            user_id: user.id,
            redirect_uri: &asking.redirect_uri,
            code_challenge: &params.code_challenge,
            resource: &asking.resource,
            expires_at: now + CODE_LIFETIME,
        };
        store::insert_code(&mut transaction, &new).await?;
        store::touch_client(&mut transaction, asking.client.id, now).await?;
        transaction.commit().await?;
        let to = with_query(
            &asking.redirect_uri,
            &[("code", &code), ("state", &params.state), ("iss", &asking.issuer)],
        );
        Ok(Verdict::Redirect { to, refusal: None })
    }

    /// The person denied the request: the client hears `access_denied`. A
    /// request that does not pass the checks is refused to the person as
    /// on the page, never sent back.
    pub async fn deny(&self, params: &AuthorizationParams) -> Result<Verdict, CoreError> {
        Ok(match self.check_authorization(params).await? {
            Verdict::Ask(asking) => {
                let refusal = Refusal::new("access_denied", "the person denied the request");
                let to = with_query(
                    &asking.redirect_uri,
                    &[
                        ("error", refusal.code),
                        ("error_description", &refusal.description),
                        ("state", &params.state),
                        ("iss", &asking.issuer),
                    ],
                );
                Verdict::Redirect { to, refusal: Some(refusal) }
            }
            refused => refused,
        })
    }

    pub async fn connected_apps(&self, user: &UserRecord) -> Result<Vec<ConnectedApp>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(store::connected_apps(&mut connection, user.id).await?)
    }

    /// Disconnects one of the user's apps: its tokens stop at once.
    pub async fn disconnect_app(&self, user: &UserRecord, id: i64) -> Result<bool, CoreError> {
        let mut transaction = self.store.begin_write().await?;
        let disconnected = store::delete_user_grant(&mut transaction, user.id, id).await?;
        // Forgotten only when the grant was the person's, from before the
        // change is seen until after: another's id changes nothing.
        let forget = disconnected.then(|| self.kept.forgetting_grant(id));
        transaction.commit().await?;
        if let Some(forget) = forget {
            forget.landed();
        }
        Ok(disconnected)
    }
}
