//! Hado's HTTP gateway: the sources' REST API (`/api`), the inbox's JSON API
//! (`/me`), the web inbox (`/`), action links (`/a/<token>`), health (`/up`)
//! and the API's OpenAPI document. Each request
//! becomes gRPC calls to core; the gateway stores nothing and decides
//! nothing about events. See ARCHITECTURE.md for the map.

mod api;
mod auth;
mod clients;
pub mod config;
mod edge;
mod error;
mod hooks;
mod ics;
mod lists;
mod me;
mod metrics;
mod openapi;
mod push;
mod quick_add;
mod state;
mod web;

use std::future::Future;
use std::process::ExitCode;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tokio::net::TcpListener;

use config::HttpConfig;
use hado_runtime::process;
use hado_runtime::settings::ConfigError;
use state::AppState;

/// The largest request body read: a full batch of 1000 events fits easily.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Every route of the gateway.
pub(crate) fn router(state: AppState) -> Router {
    let pages = Router::new()
        .route("/", get(web::inbox_page))
        .route("/archive", get(web::archive_page))
        .route("/new", get(web::new_page))
        .route("/new/read", get(web::read_line))
        .route("/events", post(web::create))
        .route("/events/{id}", get(web::event_page).post(web::update))
        .route("/events/{id}/edit", get(web::edit_page))
        .route("/events/{id}/done", post(web::done))
        .route("/events/{id}/ack", post(web::remember))
        .route("/events/{id}/reopen", post(web::reopen))
        .route("/events/{id}/unack", post(web::take_back_remember))
        .route("/events/{id}/delete", get(web::confirm_delete).post(web::delete))
        .route("/settings", get(web::settings_page).post(web::save_settings))
        .route("/settings/zone", post(web::save_zone))
        .route("/settings/agent-token", post(web::issue_agent_token))
        .route(
            "/settings/agent-token/revoke",
            get(web::confirm_revoke_agent_token).post(web::revoke_agent_token),
        )
        .route("/settings/webhooks", post(web::add_webhook))
        .route("/settings/emails", post(web::add_email))
        .route("/settings/calendar", post(web::issue_calendar_feed))
        .route("/settings/telegram", post(web::link_telegram))
        .route(
            "/settings/calendar/revoke",
            get(web::confirm_revoke_calendar_feed).post(web::revoke_calendar_feed),
        )
        .route("/settings/channels/{id}/name", post(web::rename_channel))
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
        .route("/me/events/{id}/ack", post(me::remember))
        .route("/me/events/{id}/reopen", post(me::reopen))
        .route("/me/events/{id}/unack", post(me::take_back_remember))
        .route(
            "/me/agent-token",
            get(me::agent_token).post(me::issue_agent_token).delete(me::revoke_agent_token),
        )
        .route("/me/push/key", get(push::key))
        .route(
            "/me/push",
            post(push::subscribe).layer(DefaultBodyLimit::max(push::MAX_SUBSCRIPTION_BYTES)),
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
        .route("/c/{token}", get(web::channel_link_page).post(web::use_channel_link))
        .route("/ics/{file}", get(ics::feed))
        .route("/hooks/telegram", post(hooks::telegram))
        .route("/static/hado.css", get(web::stylesheet))
        .route("/static/hado.js", get(web::script))
        .route("/static/manifest.webmanifest", get(web::manifest))
        .route("/static/offline.html", get(web::offline))
        .route("/static/icons/{name}", get(web::icon))
        .route("/sw.js", get(web::service_worker))
        .route("/openapi.json", get(|| async { axum::Json(openapi::document()) }))
        .route(
            "/up",
            get(|axum::extract::State(state): axum::extract::State<AppState>| async move {
                hado_gateway::up::answer(&state.core).await
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
    hado_gateway::serve(listener, app, limits, proxies, shutdown).await.map_err(RunError::Serve)
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
    if let Err(error) = process::init_logging() {
        eprintln!("hado gateway-http: {error}");
        return ExitCode::from(2);
    }
    process::serve_process(
        "gateway-http",
        HttpConfig::from_env(),
        |config| ("HADO_HTTP_ADDR", config.addr),
        |config, listener| run(config, listener, process::shutdown_signal()),
    )
    .await
}
