//! Malformed settings stop each process at start with one line naming the
//! variable and exit code 2, rather than running on something else than
//! the operator wrote: a log format no collector reads, a core URL read as
//! the host `https`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{HADO, free_port};

/// Runs `hado ROLE` with `settings`; its exit code and what it printed on
/// stderr, or a failure when it is still running after ten seconds.
fn refused_at_start(role: &str, settings: &[(&str, String)]) -> (Option<i32>, String) {
    let folder = tempfile::tempdir().unwrap();
    let mut command = Command::new(HADO);
    command.arg(role).current_dir(folder.path()).stdin(Stdio::null()).stdout(Stdio::null());
    for variable in ["HADO_DATABASE_URL", "HADO_CORE_URL", "HADO_METRICS_ADDR", "HADO_LOG_FORMAT"] {
        command.env_remove(variable);
    }
    let stderr = folder.path().join("stderr");
    command.stderr(std::fs::File::create(&stderr).unwrap());
    command.envs(settings.iter().map(|(name, value)| (*name, value.as_str())));
    let mut child = command.spawn().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "hado {role} started with {settings:?}:\n{}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code(), std::fs::read_to_string(&stderr).unwrap())
}

fn core_settings() -> Vec<(&'static str, String)> {
    vec![
        ("HADO_DATABASE_URL", "sqlite://hado.db".to_owned()),
        ("HADO_GRPC_ADDR", format!("127.0.0.1:{}", free_port())),
        ("HADO_ADMIN_TOKEN", "admin-secret-for-the-settings-tests-0123456789".to_owned()),
        ("HADO_GATEWAY_TOKEN", "gateway-secret-for-the-settings-tests-0123456789".to_owned()),
        ("HADO_SECRET", "link-secret-for-the-settings-tests-0123456789abcdef".to_owned()),
    ]
}

fn gateway_settings(role: &str) -> Vec<(&'static str, String)> {
    let address = format!("127.0.0.1:{}", free_port());
    match role {
        "gateway-http" => vec![
            ("HADO_HTTP_ADDR", address),
            ("HADO_GATEWAY_TOKEN", "gateway-secret-for-the-settings-tests-0123456789".to_owned()),
        ],
        _ => vec![("HADO_MCP_ADDR", address)],
    }
}

#[test]
fn a_log_format_that_is_neither_text_nor_json_stops_every_process() {
    for role in ["core", "gateway-http", "gateway-mcp"] {
        let mut settings = if role == "core" { core_settings() } else { gateway_settings(role) };
        settings.push(("HADO_LOG_FORMAT", "xml".to_owned()));
        let (code, said) = refused_at_start(role, &settings);
        assert_eq!(code, Some(2), "{role}: {said}");
        assert!(
            said.contains("HADO_LOG_FORMAT: \"xml\" is not a log format: use text or json"),
            "{role}: {said}"
        );
    }
}

#[test]
fn a_core_url_that_is_not_a_url_stops_both_gateways() {
    for role in ["gateway-http", "gateway-mcp"] {
        for bad in ["https//127.0.0.1:50051", "core"] {
            let mut settings = gateway_settings(role);
            settings.push(("HADO_CORE_URL", bad.to_owned()));
            let (code, said) = refused_at_start(role, &settings);
            assert_eq!(code, Some(2), "{role} {bad}: {said}");
            assert!(
                said.contains(&format!("HADO_CORE_URL: {bad:?} is not a URL")),
                "{role}: {said}"
            );
        }
    }
}
