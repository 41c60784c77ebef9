//! Hado's MCP gateway: the agent's door to its owner's inbox. It serves the
//! twelve tools over streamable HTTP at `POST /mcp` (stateless: no sessions,
//! so any number of gateways can stand behind a proxy), over the legacy
//! HTTP+SSE transport at `GET /sse` for older clients, or over stdio, and
//! turns each tool call into one gRPC call to core. `show_inbox` comes with
//! an in-chat view (`view`, an MCP App). An agent presents an agent token,
//! or signs in as its person with OAuth (`oauth`). It stores nothing and
//! decides nothing about events. See ARCHITECTURE.md for the map.

mod args;
pub mod config;
mod core_link;
mod guard;
mod legacy_sse;
mod metrics;
mod oauth;
mod schema;
mod tools;
mod view;

use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;

use axum::Router;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use config::McpConfig;
use core_link::{AgentToken, Core, Failure};
use guard::{Guard, MAX_BODY_BYTES};
use hado_runtime::process;
use hado_runtime::settings::{self, ConfigError};
use tools::HadoMcp;

/// The route the MCP server answers on.
pub const MCP_PATH: &str = "/mcp";
/// The legacy HTTP+SSE transport's event stream, and where its messages go.
pub const SSE_PATH: &str = "/sse";
pub const MESSAGES_PATH: &str = "/messages";

/// The HTTP application: the guard in front of rmcp's streamable HTTP
/// service. `stop` ends any response still streaming at shutdown.
pub(crate) fn router(config: &McpConfig, core: Core, stop: CancellationToken) -> Router {
    let prototype = HadoMcp::new(core.clone(), None);
    let sessions = prototype.clone();
    let transport = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        // The guard checks Host and Origin against the configured hosts
        // before rmcp sees the request.
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(stop.clone());
    let service = StreamableHttpService::new(
        move || Ok(sessions.clone()),
        Arc::new(LocalSessionManager::default()),
        transport,
    );
    let sign_in = oauth::SignIn::new(
        &core,
        &config.web_url,
        config.public_url.as_deref(),
        config.allowed_hosts.clone(),
    );
    let guard = Arc::new(Guard::new(
        core.clone(),
        sign_in.clone(),
        config.allowed_hosts.clone(),
        config.calls_per_minute,
    ));
    let streams = Arc::new(legacy_sse::Streams::new(prototype.clone(), guard.clone(), stop));
    let legacy = Router::new()
        .route(SSE_PATH, axum::routing::get(legacy_sse::open))
        .route(MESSAGES_PATH, axum::routing::post(legacy_sse::message))
        .with_state(streams);
    let up = Router::new()
        .route("/up", axum::routing::get(up))
        .with_state((core.clone(), config.allowed_hosts.clone()));
    let budget = hado_gateway::BodyBudget::new(config.limits.body_budget);
    Router::new()
        .route_service(MCP_PATH, service)
        .route_layer(axum::middleware::from_fn_with_state(guard, guard::guard))
        .merge(legacy)
        .merge(oauth_routes(sign_in))
        .merge(up)
        .layer(axum::middleware::from_fn_with_state(budget, bodies_in_flight))
        .layer(axum::middleware::map_response(stamp_security_headers))
}

/// Counts each request's body against the budget of bodies held at once
/// (`hado_gateway::bodies`); a body past it is answered 503 with
/// `Retry-After`, as a JSON-RPC error. A legacy stream's message takes its
/// bytes along into the stream's queue ([`hado_gateway::bodies::Share`]).
async fn bodies_in_flight(
    axum::extract::State(budget): axum::extract::State<hado_gateway::BodyBudget>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let (mut request, share) = budget.meter(request);
    request.extensions_mut().insert(share.clone());
    let response = next.run(request).await;
    if !share.refused() {
        return response;
    }
    let retry_after = hado_gateway::client::RETRY_AFTER_SECONDS;
    let mut response = guard::refusal_with(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        guard::REFUSED,
        &budget.busy(),
        None,
        Some(serde_json::json!({ "retry_after": retry_after })),
    );
    response
        .headers_mut()
        .insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(retry_after));
    response
}

/// `GET /up`, as gateway-http answers it: whether core serves, for a
/// health check or a load balancer in front of this gateway.
async fn up(
    axum::extract::State((core, hosts)): axum::extract::State<(Core, hado_runtime::AllowedHosts)>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    match hosts.admit(&headers, &uri) {
        Ok(_) => hado_gateway::up::answer(&core).await,
        Err(refusal) => {
            guard::refusal(axum::http::StatusCode::MISDIRECTED_REQUEST, &refusal.to_string(), None)
                .into_response()
        }
    }
}

/// The headers every reply carries, as gateway-http's do: this server
/// serves JSON and event streams, never a page, so nothing may load it
/// into a frame or run from it.
const SECURITY_HEADERS: hado_gateway::headers::SecurityHeaders =
    hado_gateway::headers::SecurityHeaders {
        content_security_policy: "default-src 'none'; frame-ancestors 'none'",
        referrer_policy: "no-referrer",
    };

async fn stamp_security_headers(
    mut response: axum::response::Response,
) -> axum::response::Response {
    SECURITY_HEADERS.stamp(response.headers_mut());
    response
}

/// Signing in: the metadata documents, registration and the token endpoint.
fn oauth_routes(sign_in: oauth::SignIn) -> Router {
    use axum::routing::{get, post};
    let protected_resource_of_mcp = format!("{}{MCP_PATH}", oauth::PROTECTED_RESOURCE_PATH);
    let protected_resource_of_sse = format!("{}{SSE_PATH}", oauth::PROTECTED_RESOURCE_PATH);
    Router::new()
        .route(oauth::PROTECTED_RESOURCE_PATH, get(oauth::protected_resource))
        .route(&protected_resource_of_mcp, get(oauth::protected_resource))
        .route(&protected_resource_of_sse, get(oauth::protected_resource))
        .route(oauth::AUTHORIZATION_SERVER_PATH, get(oauth::authorization_server))
        .route(oauth::REGISTER_PATH, post(oauth::register))
        .route(oauth::TOKEN_PATH, post(oauth::token))
        .with_state(sign_in)
}

/// Serves `/mcp` on `listener` until `shutdown` resolves, letting requests
/// in flight finish.
pub async fn run(
    config: McpConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let core = Core::connect_lazy(&config.core_url)?;
    let stop = CancellationToken::new();
    let app = router(&config, core, stop.clone());
    let stopping = stop.clone();
    let shutdown = async move {
        shutdown.await;
        stopping.cancel();
    };
    hado_gateway::serve(listener, app, config.limits, config.trusted_proxies.clone(), shutdown)
        .await
        .map_err(RunError::Serve)
}

/// Serves one agent over stdin/stdout until the client closes them: for
/// clients that launch their servers as processes. The token comes from
/// `HADO_AGENT_TOKEN` and is checked with core first when core is up.
pub async fn run_stdio(core_url: &str, token: &str) -> Result<(), RunError> {
    let core = Core::connect_lazy(core_url)?;
    let token = AgentToken::parse(token).ok_or_else(|| ConfigError {
        variable: "HADO_AGENT_TOKEN",
        problem: "is not an agent token (hado_agent_…); issue one with `hado agent-token LOGIN`"
            .into(),
    })?;
    match core_link::inbox(&core, &token)
        .get_profile(hado_proto::v1::GetProfileRequest { without_attention: true })
        .await
    {
        Ok(_) => {}
        Err(status) => match core.explain(&status) {
            Failure::Unauthenticated(_) => {
                return Err(ConfigError {
                    variable: "HADO_AGENT_TOKEN",
                    problem: "core does not know this agent token".into(),
                }
                .into());
            }
            failure => tracing::warn!(
                reason = failure.message(),
                "serving anyway; tool calls will say when core answers again"
            ),
        },
    }
    let running = HadoMcp::new(core, Some(tools::SessionToken::new(token)))
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| RunError::Stdio(error.to_string()))?;
    running.waiting().await.map_err(|error| RunError::Stdio(error.to_string()))?;
    Ok(())
}

/// How long a stdio server that cannot serve waits for its client's first
/// request, to answer it with the reason.
const STDIO_REFUSAL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Tells an MCP client on stdin/stdout why this server cannot serve it (no
/// token, a malformed one, one core does not know): its first request is
/// answered with a JSON-RPC error carrying the reason. A client shows that;
/// a pipe that just closes shows only "Connection closed".
async fn refuse_over_stdio(reason: &str) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let first_id = async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(serde_json::Value::Object(message)) =
                serde_json::from_str::<serde_json::Value>(&line)
                && let Some(id) = message.get("id")
            {
                return Some(id.clone());
            }
        }
        None
    };
    let Ok(Some(id)) = tokio::time::timeout(STDIO_REFUSAL_WAIT, first_id).await else { return };
    let reply = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32000, "message": format!("hado cannot serve: {reason}") } });
    let mut stdout = tokio::io::stdout();
    let _ = stdout.write_all(format!("{reply}\n").as_bytes()).await;
    let _ = stdout.flush().await;
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("serving HTTP failed: {0}")]
    Serve(std::io::Error),
    #[error("serving stdio failed: {0}")]
    Stdio(String),
}

/// The gateway's command line.
#[derive(Debug, clap::Parser)]
#[command(
    name = "hado-gateway-mcp",
    about = "Serves Hado's MCP tools to an agent",
    long_about = "Serves Hado's MCP tools to an agent: streamable HTTP at POST /mcp on HADO_MCP_ADDR \
(default 127.0.0.1:8081), each request carrying `Authorization: Bearer hado_agent_…`; or, with \
--stdio, one agent over stdin/stdout with the token in HADO_AGENT_TOKEN. Core is reached at \
HADO_CORE_URL (default http://127.0.0.1:50051)."
)]
pub struct Arguments {
    /// Serve one agent over stdin/stdout, with the token in HADO_AGENT_TOKEN.
    #[arg(long)]
    pub stdio: bool,
}

/// The whole gateway process: `--stdio` for one agent over stdin/stdout,
/// otherwise `/mcp` on `HADO_MCP_ADDR`. One clear line on any failure to start.
pub async fn main_entry(arguments: Arguments) -> ExitCode {
    if let Err(error) = process::init_logging() {
        eprintln!("hado gateway-mcp: {error}");
        if arguments.stdio {
            refuse_over_stdio(&error.to_string()).await;
        }
        return ExitCode::from(2);
    }
    if arguments.stdio {
        let started = match (
            hado_gateway::client::core_url(&settings::environment),
            settings::read(&settings::environment, "HADO_AGENT_TOKEN"),
        ) {
            (Ok(core_url), Some(token)) => run_stdio(&core_url, &token).await,
            (Err(error), _) => Err(error.into()),
            (_, None) => Err(ConfigError {
                variable: "HADO_AGENT_TOKEN",
                problem: "is not set; --stdio serves the agent this token belongs to".into(),
            }
            .into()),
        };
        return match started {
            Ok(()) => ExitCode::SUCCESS,
            Err(error @ RunError::Config(_)) => {
                eprintln!("hado gateway-mcp: {error}");
                refuse_over_stdio(&error.to_string()).await;
                ExitCode::from(2)
            }
            Err(error) => {
                eprintln!("hado gateway-mcp: {error}");
                ExitCode::from(2)
            }
        };
    }
    process::serve_process(
        "gateway-mcp",
        McpConfig::from_env(),
        |config| ("HADO_MCP_ADDR", config.addr),
        |config, listener| run(config, listener, process::shutdown_signal()),
    )
    .await
}
