//! Owns what every handler shares (`AppState`): the channel to core, the
//! configuration, what the edge remembers between requests, and each core
//! client built with its credential in one place.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use hado_gateway::BodyBudget;
use hado_gateway::client::{Core, CoreChannel, MAX_REPLY_BYTES};
use hado_gateway::known_tokens::KnownTokens;
use hado_gateway::per_minute::PerMinute;
use hado_proto::metadata::Credential;
use hado_proto::v1::inbox_client::InboxClient;
use hado_proto::v1::ingest_client::IngestClient;
use hado_proto::v1::links_client::LinksClient;
use hado_proto::v1::o_auth_client::OAuthClient;
use hado_runtime::settings::ConfigError;
use tonic::service::interceptor::InterceptedService;

use crate::config::HttpConfig;
use crate::error::ApiError;
use crate::web::said::SaidKey;

/// How long core's word on a source token is trusted before the body of a
/// request is read (core checks the token again on the call itself).
pub(crate) const SOURCE_TOKEN_MEMORY: Duration = Duration::from_secs(5);

/// Authorization requests (the page, and Allow or Deny) a person may make a
/// minute: far more than anyone signs apps in, far fewer than a page that
/// sends a browser round in a loop would.
pub(crate) const AUTHORIZE_REQUESTS_PER_MINUTE: u32 = 30;

pub(crate) type Inbox = InboxClient<InterceptedService<CoreChannel, Credential>>;
pub(crate) type Ingest = IngestClient<InterceptedService<CoreChannel, Credential>>;
pub(crate) type Links = LinksClient<InterceptedService<CoreChannel, Credential>>;
pub(crate) type OAuth = OAuthClient<InterceptedService<CoreChannel, Credential>>;

/// What every handler shares: behind one `Arc`, as axum hands every
/// handler a copy of it (copying its fields, a URL's `String` among them,
/// was an allocation and a free on every request).
#[derive(Clone)]
pub(crate) struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

pub(crate) struct Shared {
    pub core: Core,
    pub config: Arc<HttpConfig>,
    /// Core's recent answers for source tokens, checked before a body is read.
    pub known_sources: Arc<KnownTokens>,
    /// The gateway's own credential, for the Links service.
    gateway: Credential,
    /// Each person's allowance of requests to let an app sign in.
    pub authorize_limit: Arc<PerMinute<String>>,
    /// The request-body bytes held at once, over every request.
    pub bodies: BodyBudget,
    /// Signs what a form's redirect tells the next page (`web::said`).
    pub said_key: SaidKey,
}

impl AppState {
    pub(crate) fn new(config: HttpConfig) -> Result<Self, ConfigError> {
        let gateway = Credential::bearer(&config.gateway_token.0).ok_or_else(|| ConfigError {
            variable: "HADO_GATEWAY_TOKEN",
            problem: "holds characters a request header cannot carry".into(),
        })?;
        Ok(Self(Arc::new(Shared {
            core: Core::connect_lazy(&config.core_url)?,
            bodies: BodyBudget::new(config.limits.body_budget),
            known_sources: Arc::new(KnownTokens::new(SOURCE_TOKEN_MEMORY)),
            gateway,
            authorize_limit: Arc::new(PerMinute::new(AUTHORIZE_REQUESTS_PER_MINUTE)),
            said_key: SaidKey::new(&config.gateway_token.0),
            config: Arc::new(config),
        })))
    }

    /// Ingest, called with a source's own credential.
    pub(crate) fn ingest(&self, credential: Credential) -> Ingest {
        IngestClient::with_interceptor(self.core.channel(), credential)
            .max_decoding_message_size(MAX_REPLY_BYTES)
    }

    /// Links (action links, calendar feeds, Telegram's updates), called with
    /// the gateway credential alone.
    pub(crate) fn links(&self) -> Links {
        LinksClient::with_interceptor(self.core.channel(), self.gateway.clone())
            .max_decoding_message_size(MAX_REPLY_BYTES)
    }

    /// OAuth (checking an app's sign-in request), with the gateway credential alone.
    pub(crate) fn oauth(&self) -> OAuth {
        OAuthClient::with_interceptor(self.core.channel(), self.gateway.clone())
    }

    /// OAuth with the gateway credential for `login`: the person's answer.
    pub(crate) fn oauth_as(&self, login: &str) -> Result<OAuth, ApiError> {
        Ok(OAuthClient::with_interceptor(self.core.channel(), self.vouching_for(login)?))
    }

    /// Inbox, called with the gateway credential for `login`.
    pub(crate) fn inbox(&self, login: &str) -> Result<Inbox, ApiError> {
        Ok(InboxClient::with_interceptor(self.core.channel(), self.vouching_for(login)?)
            .max_decoding_message_size(MAX_REPLY_BYTES))
    }

    /// The gateway credential speaking for `login`.
    fn vouching_for(&self, login: &str) -> Result<Credential, ApiError> {
        Credential::gateway(&self.config.gateway_token.0, login).ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "the signed-in user's name is not a valid login",
            )
        })
    }

    /// Core's reply to one call, or its refusal as the API's error: the
    /// step every JSON route takes with a call.
    pub(crate) async fn call<T>(
        &self,
        reply: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, ApiError> {
        reply
            .await
            .map(tonic::Response::into_inner)
            .map_err(|status| ApiError::from_core(&self.core, &status))
    }
}
