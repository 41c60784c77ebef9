//! Owns what every Hado process does the same way: logging with `tracing`
//! as text or JSON (`HADO_LOG_FORMAT`), starting from its settings (a bad
//! one stops the process with one line naming it), and stopping on a
//! signal.

use std::net::SocketAddr;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::settings::{ConfigError, environment};

/// The log filter when `RUST_LOG` is not set: Hado at INFO; rmcp only at
/// WARN (at INFO it dumps every request), and its per-request "response
/// error" warning, which a client's bad call triggers, only at ERROR.
pub(crate) const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn,rmcp::service=error";

/// How a process writes its log (`HADO_LOG_FORMAT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// Lines for a person to read: the default.
    Text,
    /// One JSON object a line, for a log collector.
    Json,
}

/// Reads `HADO_LOG_FORMAT`: `text` (the default) or `json`, in any case. A
/// collector that expects JSON would drop every line of another format, so
/// anything else stops the process at start.
pub fn log_format(lookup: crate::settings::Lookup<'_>) -> Result<LogFormat, ConfigError> {
    let Some(value) = crate::settings::read(lookup, "HADO_LOG_FORMAT") else {
        return Ok(LogFormat::Text);
    };
    match value.to_ascii_lowercase().as_str() {
        "text" => Ok(LogFormat::Text),
        "json" => Ok(LogFormat::Json),
        _ => Err(ConfigError {
            variable: "HADO_LOG_FORMAT",
            problem: format!("{value:?} is not a log format: use text or json"),
        }),
    }
}

/// Logs to stderr, filtered by `RUST_LOG` (default [`DEFAULT_LOG_FILTER`]),
/// as text or JSON ([`log_format`]). Colour only on a terminal, and never
/// when `NO_COLOR` is set. A `HADO_LOG_FORMAT` that is neither is returned
/// as the error the process stops with (logging is then text).
///
/// `RUST_LOG` is a comma-separated list of `level` and `target=level`
/// (`warn,hado_core=debug`); the longest matching target wins. A filter
/// that does not parse is named on stderr and the default is used.
pub fn init_logging() -> Result<(), ConfigError> {
    use std::io::IsTerminal;
    let default = || DEFAULT_LOG_FILTER.parse::<Targets>().expect("the default log filter parses");
    let filter = match std::env::var("RUST_LOG") {
        Ok(text) if !text.trim().is_empty() => text.parse::<Targets>().unwrap_or_else(|error| {
            eprintln!("RUST_LOG {text:?} is not a list of level and target=level ({error}); logging at {DEFAULT_LOG_FILTER}");
            default()
        }),
        _ => default(),
    };
    let format = log_format(&environment);
    let json = matches!(format, Ok(LogFormat::Json));
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(colour);
    let registry = tracing_subscriber::registry().with(filter);
    // A second init (a test that starts two processes' worth of code) keeps the first.
    let _ =
        if json { registry.with(layer.json()).try_init() } else { registry.with(layer).try_init() };
    format.map(|_| ())
}

/// Runs a server process the same way for every binary: read its settings,
/// listen on its address, serve until Ctrl-C or SIGTERM. A failure to start
/// is one line naming the setting, and exit code 2.
pub async fn serve_process<C, E, Fut>(
    name: &str,
    settings: Result<C, ConfigError>,
    address: impl Fn(&C) -> (&'static str, SocketAddr),
    serve: impl FnOnce(C, tokio::net::TcpListener) -> Fut,
) -> std::process::ExitCode
where
    E: std::fmt::Display,
    Fut: std::future::Future<Output = Result<(), E>>,
{
    use std::process::ExitCode;
    let config = match settings {
        Ok(config) => config,
        Err(error) => {
            eprintln!("hado {name}: {error}");
            return ExitCode::from(2);
        }
    };
    match crate::metrics_endpoint::start(&environment).await {
        Ok(Some(metrics)) => tracing::info!(%metrics, "{name} serves metrics at /metrics"),
        Ok(None) => {}
        Err(error) => {
            eprintln!("hado {name}: {error}");
            return ExitCode::from(2);
        }
    }
    let (variable, addr) = address(&config);
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("hado {name}: {variable}: cannot listen on {addr}: {error}");
            return ExitCode::from(2);
        }
    };
    tracing::info!(%addr, "{name} listening");
    match serve(config, listener).await {
        Ok(()) => {
            tracing::info!("{name} stopped");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("hado {name}: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {}
        _ = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_format_is_text_or_json_and_nothing_else() {
        let read = |value: &'static str| {
            log_format(&move |variable: &str| {
                (variable == "HADO_LOG_FORMAT").then(|| value.to_owned())
            })
        };
        assert_eq!(read("").unwrap(), LogFormat::Text);
        assert_eq!(read("text").unwrap(), LogFormat::Text);
        assert_eq!(read("JSON").unwrap(), LogFormat::Json);
        for bad in ["xml", "jsonl", "logfmt"] {
            let error = read(bad).unwrap_err();
            assert_eq!(error.variable, "HADO_LOG_FORMAT");
            assert!(error.problem.contains("use text or json"), "{}", error.problem);
        }
    }
}
