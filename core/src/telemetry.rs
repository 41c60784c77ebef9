//! Owns how Hado's processes log: `tracing` to stderr, as text or JSON
//! (`HADO_LOG_FORMAT`), filtered by `RUST_LOG` (default `info`).

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let json = std::env::var("HADO_LOG_FORMAT").is_ok_and(|format| format.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    // A second init (a test that starts two processes' worth of code) keeps the first.
    let _ = if json { builder.json().try_init() } else { builder.try_init() };
}
