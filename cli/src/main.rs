//! `hado`: the operator's tool. `hado up` runs Hado on this machine; the
//! other commands are calls to core's Admin service.

mod admin;
mod backup;
mod settings;
mod up;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "hado",
    version,
    about = "Hado, the personal deadline inbox: run it and administer it"
)]
struct Cli {
    /// Where `hado up` keeps its database and generated secrets.
    #[arg(long, global = true, env = "HADO_DATA_DIR", default_value = "hado-data")]
    data_dir: std::path::PathBuf,
    /// Core's gRPC address for the admin commands (default: http:// + HADO_GRPC_ADDR).
    #[arg(long, global = true, env = "HADO_CORE_URL")]
    core_url: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run Hado here: core on an embedded SQLite file and both gateways, as child processes, until Ctrl-C.
    Up {
        /// Where core listens for gRPC (wins over HADO_GRPC_ADDR; default 127.0.0.1:50051).
        #[arg(long, env = "HADO_GRPC_ADDR", value_name = "ADDR")]
        grpc_addr: Option<String>,
        /// Where the web inbox and the REST API listen (wins over HADO_HTTP_ADDR; default 127.0.0.1:8080).
        #[arg(long, env = "HADO_HTTP_ADDR", value_name = "ADDR")]
        http_addr: Option<String>,
        /// Where MCP listens (wins over HADO_MCP_ADDR; default 127.0.0.1:8081).
        #[arg(long, env = "HADO_MCP_ADDR", value_name = "ADDR")]
        mcp_addr: Option<String>,
    },
    /// Run the core process itself (what `hado up` starts; configured by HADO_* variables).
    #[command(hide = true)]
    Core,
    /// Serve MCP: with --stdio to one agent over stdin/stdout (token in HADO_AGENT_TOKEN),
    /// otherwise over HTTP at HADO_MCP_ADDR (what `hado up` starts).
    GatewayMcp {
        #[arg(long)]
        stdio: bool,
    },
    /// Run the HTTP gateway: REST for sources, the web inbox, action links
    /// (what `hado up` starts; configured by HADO_* variables).
    #[command(hide = true)]
    GatewayHttp,
    /// Manage the services that push events.
    Source {
        #[command(subcommand)]
        command: SourceCommand,
    },
    /// Issue (or with --revoke, revoke) a user's agent token for MCP; re-issuing stops the old token.
    AgentToken {
        /// The user's login; the user is created if Hado has not seen them yet.
        login: String,
        #[arg(long)]
        revoke: bool,
    },
    /// List the users Hado knows.
    Users,
    /// Print the Bot API call that points Telegram's webhook at this Hado (webhook mode).
    TelegramWebhook {
        /// Hado's public address, such as https://hado.example.com.
        public_url: String,
    },
    /// Copy the database to a new file (SQLite: while Hado runs; Postgres: with pg_dump).
    Backup { file: std::path::PathBuf },
    /// Replace the database with a backup (stop Hado first); newer migrations then run.
    Restore {
        file: std::path::PathBuf,
        /// Confirm replacing the whole database.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Subcommand)]
enum SourceCommand {
    /// Create a source and print its token (shown this once).
    Create { name: String },
    /// Give a source a new token; the old one stops working within a second.
    Rotate { name: String },
    /// List the sources.
    List,
    /// Delete a source together with all of its events.
    Delete {
        name: String,
        /// Confirm the deletion of the source's events.
        #[arg(long)]
        yes: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("hado: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async move {
        let mut settings = settings::Settings::new(cli.data_dir, cli.core_url);
        let result = match cli.command {
            Command::Up { grpc_addr, http_addr, mcp_addr } => {
                settings.listen_on(settings::Addresses {
                    grpc: grpc_addr,
                    http: http_addr,
                    mcp: mcp_addr,
                });
                up::run(&settings).await
            }
            Command::Core => return hado_core::main_entry().await,
            Command::GatewayHttp => return hado_gateway_http::main_entry().await,
            Command::GatewayMcp { stdio } => {
                return hado_gateway_mcp::main_entry(hado_gateway_mcp::Arguments { stdio }).await;
            }
            Command::Source { command } => match command {
                SourceCommand::Create { name } => admin::create_source(&settings, &name).await,
                SourceCommand::Rotate { name } => admin::rotate_source(&settings, &name).await,
                SourceCommand::List => admin::list_sources(&settings).await,
                SourceCommand::Delete { name, yes } => {
                    admin::delete_source(&settings, &name, yes).await
                }
            },
            Command::AgentToken { login, revoke } => {
                admin::agent_token(&settings, &login, revoke).await
            }
            Command::Users => admin::list_users(&settings).await,
            Command::TelegramWebhook { public_url } => telegram_webhook(&public_url),
            Command::Backup { file } => backup::backup(&settings, &file).await,
            Command::Restore { file, yes } => backup::restore(&settings, &file, yes).await,
        };
        match result {
            Ok(code) => code,
            Err(error) => {
                eprintln!("hado: {error:#}");
                ExitCode::FAILURE
            }
        }
    });
    // A name lookup still running on a blocking thread (the gateways look
    // core's name up every two seconds; a slow resolver takes seconds to
    // answer) would hold the process after it is done: leave it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    code
}

/// Prints the `setWebhook` call for webhook mode; the token and the secret
/// stay in the environment, named, never printed.
fn telegram_webhook(public_url: &str) -> anyhow::Result<ExitCode> {
    let base = public_url.trim_end_matches('/');
    if !(base.starts_with("https://") || base.starts_with("http://"))
        || hado_runtime::settings::host_of_url(base).is_none()
    {
        anyhow::bail!(
            "{public_url:?} is not Hado's public address, such as https://hado.example.com"
        );
    }
    let api = std::env::var("HADO_TELEGRAM_API_URL")
        .ok()
        .filter(|url| !url.trim().is_empty())
        .unwrap_or_else(|| "https://api.telegram.org".into());
    println!(
        "Webhook mode: set HADO_TELEGRAM_WEBHOOK_SECRET (a random secret) for core and gateway-http, restart them, then run once:"
    );
    println!();
    println!(
        "  curl -sS \"{}/bot$HADO_TELEGRAM_BOT_TOKEN/setWebhook\" \\",
        api.trim_end_matches('/')
    );
    println!("    --data-urlencode \"url={base}/hooks/telegram\" \\");
    println!("    --data-urlencode \"secret_token=$HADO_TELEGRAM_WEBHOOK_SECRET\" \\");
    println!("    --data-urlencode 'allowed_updates=[\"message\",\"callback_query\"]'");
    println!();
    println!(
        "Telegram then posts each update to {base}/hooks/telegram with that secret; without the secret set, core polls instead."
    );
    Ok(ExitCode::SUCCESS)
}
