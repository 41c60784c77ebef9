//! Hado's HTTP gateway: the sources' REST API (`/api`), the inbox's JSON API
//! (`/me`), the web inbox (`/`), action links (`/a/<token>`), health (`/up`)
//! and the API's OpenAPI document. Each request
//! becomes gRPC calls to core; the gateway stores nothing and decides
//! nothing about events. See ARCHITECTURE.md for the map.

mod api;
mod auth;
pub mod config;
mod edge;
mod error;
mod hooks;
mod ics;
mod lists;
mod me;
mod metrics;
mod openapi;
mod web;

use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{get, post};
use hado_runtime::client::CoreChannel;
use tokio::net::TcpListener;
use tonic::service::interceptor::InterceptedService;

use config::HttpConfig;
use error::ApiError;
use hado_proto::metadata::Credential;
use hado_proto::v1::inbox_client::InboxClient;
use hado_proto::v1::ingest_client::IngestClient;
use hado_proto::v1::links_client::LinksClient;
use hado_proto::v1::o_auth_client::OAuthClient;
use hado_runtime::client::{Core, MAX_REPLY_BYTES};
use hado_runtime::known_tokens::KnownTokens;
use hado_runtime::process::{self, ConfigError};

/// The largest request body read: a full batch of 1000 events fits easily.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

pub(crate) type Inbox = InboxClient<InterceptedService<CoreChannel, Credential>>;
pub(crate) type Ingest = IngestClient<InterceptedService<CoreChannel, Credential>>;
pub(crate) type Links = LinksClient<InterceptedService<CoreChannel, Credential>>;
pub(crate) type OAuth = OAuthClient<InterceptedService<CoreChannel, Credential>>;

/// What every handler shares.
#[derive(Clone)]
pub(crate) struct AppState {
    pub core: Core,
    pub config: Arc<HttpConfig>,
    /// Core's recent answers for source tokens, checked before a body is read.
    pub known_sources: Arc<KnownTokens>,
    /// The gateway's own credential, for the Links service.
    gateway: Credential,
    /// Each person's allowance of requests to let an app sign in.
    pub authorize_limit: Arc<web::AuthorizeLimit>,
}

impl AppState {
    pub(crate) fn new(config: HttpConfig) -> Result<Self, ConfigError> {
        let gateway = Credential::bearer(&config.gateway_token.0).ok_or_else(|| ConfigError {
            variable: "HADO_GATEWAY_TOKEN",
            problem: "holds characters a request header cannot carry".into(),
        })?;
        Ok(Self {
            core: Core::connect_lazy(&config.core_url)?,
            config: Arc::new(config),
            known_sources: Arc::new(KnownTokens::new(edge::SOURCE_TOKEN_MEMORY)),
            gateway,
            authorize_limit: Arc::default(),
        })
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

    pub(crate) fn failed(&self, status: &tonic::Status) -> ApiError {
        ApiError::from_core(&self.core, status)
    }

    /// The line that connects Claude Code to this Hado with `token`. When
    /// gateway-mcp's address is not known (see [`HttpConfig::mcp_url`]), the
    /// line says so in its place rather than guess an address that 404s.
    pub(crate) fn connect_line(&self, token: &str) -> String {
        let url = self.config.mcp_url.as_deref().unwrap_or(UNKNOWN_MCP_URL);
        format!(
            "claude mcp add --transport http hado {url} --header \"Authorization: Bearer {token}\""
        )
    }

    /// Ready configurations for the clients people use, each with `token`:
    /// Claude Code's commands, the `mcpServers` JSON most IDEs read, and VS
    /// Code's `servers`, over streamable HTTP and the legacy SSE transport.
    pub(crate) fn client_configurations(&self, token: &str) -> Vec<(&'static str, String)> {
        let url = self.config.mcp_url.as_deref().unwrap_or(UNKNOWN_MCP_URL);
        let sse = match self.config.mcp_url.as_deref() {
            Some(url) => url
                .strip_suffix("/mcp")
                .map_or_else(|| url.to_owned(), |base| format!("{base}/sse")),
            None => UNKNOWN_SSE_URL.to_owned(),
        };
        let header = serde_json::json!({ "Authorization": format!("Bearer {token}") });
        let json =
            |value: serde_json::Value| serde_json::to_string_pretty(&value).unwrap_or_default();
        vec![
            ("Claude Code (HTTP)", self.connect_line(token)),
            (
                "Claude Code (SSE)",
                format!(
                    "claude mcp add --transport sse hado {sse} --header \"Authorization: Bearer {token}\""
                ),
            ),
            (
                "mcpServers (HTTP)",
                json(
                    serde_json::json!({ "mcpServers": { "hado": { "type": "http", "url": url, "headers": header } } }),
                ),
            ),
            (
                "mcpServers (SSE)",
                json(
                    serde_json::json!({ "mcpServers": { "hado": { "type": "sse", "url": sse, "headers": header } } }),
                ),
            ),
            (
                "VS Code (HTTP)",
                json(
                    serde_json::json!({ "servers": { "hado": { "type": "http", "url": url, "headers": header } } }),
                ),
            ),
            (
                "VS Code (SSE)",
                json(
                    serde_json::json!({ "servers": { "hado": { "type": "sse", "url": sse, "headers": header } } }),
                ),
            ),
        ]
    }

    /// Whether the connect line names gateway-mcp's address.
    pub(crate) fn knows_mcp_url(&self) -> bool {
        self.config.mcp_url.is_some()
    }
}

/// What stands in the connect line for an MCP address gateway-http does not know.
const UNKNOWN_MCP_URL: &str = "<gateway-mcp's /mcp URL>";
const UNKNOWN_SSE_URL: &str = "<gateway-mcp's /sse URL>";

/// Every route of the gateway.
pub(crate) fn router(state: AppState) -> Router {
    let pages = Router::new()
        .route("/", get(web::inbox_page))
        .route("/archive", get(web::archive_page))
        .route("/new", get(web::new_page))
        .route("/events", post(web::create))
        .route("/events/{id}", get(web::event_page).post(web::update))
        .route("/events/{id}/edit", get(web::edit_page))
        .route("/events/{id}/done", post(web::done))
        .route("/events/{id}/ack", post(web::ack))
        .route("/events/{id}/reopen", post(web::reopen))
        .route("/events/{id}/unack", post(web::take_back_ack))
        .route("/events/{id}/delete", get(web::confirm_delete).post(web::delete))
        .route("/settings", get(web::settings_page).post(web::save_settings))
        .route("/settings/agent-token", post(web::issue_agent_token))
        .route(
            "/settings/agent-token/revoke",
            get(web::confirm_revoke_agent_token).post(web::revoke_agent_token),
        )
        .route("/settings/webhooks", post(web::add_webhook))
        .route("/settings/calendar", post(web::issue_calendar_feed))
        .route("/settings/telegram", post(web::link_telegram))
        .route(
            "/settings/calendar/revoke",
            get(web::confirm_revoke_calendar_feed).post(web::revoke_calendar_feed),
        )
        .route(
            "/settings/channels/{id}/{action}",
            get(web::confirm_channel).post(web::channel_action),
        )
        .route(
            "/settings/apps/{id}/disconnect",
            get(web::confirm_app_disconnect).post(web::disconnect_app),
        )
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), web::same_origin_forms));
    // Letting an app sign in: a form like the others, with tighter limits.
    let authorize = Router::new()
        .route("/oauth/authorize", get(web::authorize_page).post(web::authorize))
        // The allowance counts only answers the person's own pages send:
        // cross-site posts are refused before it is taken.
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), web::authorize_limits))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), web::same_origin_forms))
        .route_layer(DefaultBodyLimit::max(web::MAX_AUTHORIZE_BYTES));
    let me = Router::new()
        .route("/me", get(me::profile).patch(me::update_profile))
        .route("/me/events", get(me::events).post(me::create))
        .route("/me/archive", get(me::archive))
        .route("/me/events/{id}", get(me::event).patch(me::update).delete(me::delete))
        .route("/me/events/{id}/done", post(me::done))
        .route("/me/events/{id}/ack", post(me::ack))
        .route("/me/events/{id}/reopen", post(me::reopen))
        .route("/me/events/{id}/unack", post(me::take_back_ack))
        .route(
            "/me/agent-token",
            get(me::agent_token).post(me::issue_agent_token).delete(me::revoke_agent_token),
        )
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), edge::me_writes));
    // A source's token is checked with core before its body is read.
    let api = Router::new()
        .route("/api/events", post(api::upsert).get(api::list))
        .route("/api/events/withdraw", post(api::withdraw))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), edge::source_first));
    Router::new()
        .merge(pages)
        .merge(authorize)
        .merge(me)
        .merge(api)
        .route("/a/{token}", get(web::link_page).post(web::use_link))
        .route("/ics/{file}", get(ics::feed))
        .route("/hooks/telegram", post(hooks::telegram))
        .route("/static/hado.css", get(web::stylesheet))
        .route("/static/hado.js", get(web::script))
        .route("/openapi.json", get(|| async { axum::Json(openapi::document()) }))
        .route(
            "/up",
            get(|axum::extract::State(state): axum::extract::State<AppState>| async move {
                hado_runtime::up::answer(&state.core).await
            }),
        )
        .fallback(web::not_found)
        // Pages, lists and the static files go gzipped to a client that
        // takes it (tower-http leaves small replies and images alone).
        .layer(tower_http::compression::CompressionLayer::new())
        .layer(axum::middleware::from_fn(metrics::record))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        // Outermost: a foreign Host is refused before anything else runs.
        .layer(axum::middleware::from_fn_with_state(state.clone(), edge::edge))
        .with_state(state)
}

/// Serves on `listener` until `shutdown` resolves, letting requests in
/// flight finish.
pub async fn run(
    config: HttpConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let (limits, proxies) = (config.limits, config.trusted_proxies.clone());
    let app = router(AppState::new(config)?);
    hado_runtime::serve(listener, app, limits, proxies, shutdown).await.map_err(RunError::Serve)
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("serving HTTP failed: {0}")]
    Serve(std::io::Error),
}

/// The whole gateway process. One clear line on any failure to start.
pub async fn main_entry() -> ExitCode {
    process::init_logging();
    process::serve_process(
        "gateway-http",
        HttpConfig::from_env(),
        |config| ("HADO_HTTP_ADDR", config.addr),
        |config, listener| run(config, listener, process::shutdown_signal()),
    )
    .await
}
