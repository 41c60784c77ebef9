//! `hado up` as a person runs it: a real process tree in a fresh folder, the
//! admin commands against it, and how it stops.

#![cfg(target_os = "linux")]

use crate::common;

use common::{Signal, alive, children_of, free_ports, hado, signal, start, wait_with_timeout};

/// GETs `path` from the web gateway: the status and the body.
fn http_get(port: u16, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let status =
        reply.split_whitespace().nth(1).and_then(|status| status.parse().ok()).unwrap_or(0);
    (status, reply)
}

/// POSTs an MCP initialize with `token` and returns the HTTP status.
fn mcp_initialize(port: u16, token: &str) -> u16 {
    use std::io::{Read, Write};
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply.split_whitespace().nth(1).and_then(|status| status.parse().ok()).unwrap_or(0)
}

#[test]
fn hado_up_runs_core_serves_the_admin_commands_and_stops_on_a_signal() {
    let folder = tempfile::tempdir().unwrap();
    let port = free_ports();
    let (mut up, printed) = start(folder.path(), port);
    let children = children_of(up.id());
    assert_eq!(children.len(), 3, "core and both gateways run as child processes");
    let mcp_url = format!("http://127.0.0.1:{}/mcp", port.mcp);
    let connect = format!(
        "claude mcp add --transport http hado {mcp_url} --header \"Authorization: Bearer hado_agent_…\""
    );
    assert!(
        printed.iter().any(|line| line.trim() == connect),
        "the connect line names the real address: {printed:#?}"
    );
    let agents = include_str!("../../../docs/agents.md");
    assert!(
        agents.contains(&connect.replace(&port.mcp.to_string(), "8081")),
        "the agents' guide shows the same line for the default address"
    );
    // The stdio line names this very binary, so it works without hado on PATH.
    let binary = env!("CARGO_BIN_EXE_hado");
    let stdio =
        printed.iter().find(|line| line.contains("gateway-mcp --stdio")).expect("a stdio line");
    assert!(
        stdio.contains(&format!("-- {binary} gateway-mcp --stdio"))
            && std::path::Path::new(binary).is_absolute(),
        "{stdio}"
    );

    // The secrets are made once, 64 hex digits each, readable by their owner only.
    let secrets_path = folder.path().join("hado-data/secrets.env");
    let secrets = std::fs::read_to_string(&secrets_path).unwrap();
    assert!(secrets.contains("HADO_ADMIN_TOKEN=") && secrets.contains("HADO_GATEWAY_TOKEN="));
    let values: Vec<&str> = secrets
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split_once('=').map(|(_, value)| value))
        .collect();
    assert!(
        values.len() == 3
            && values
                .iter()
                .all(|value| value.len() == 64 && value.chars().all(|c| c.is_ascii_hexdigit())),
        "{values:?}"
    );
    // So are the data folder and the database's files (webhook secrets live there).
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&secrets_path), 0o600);
        assert_eq!(mode(&folder.path().join("hado-data")), 0o700, "the data folder");
        for file in ["hado.db", "hado.db-wal", "hado.db-shm"] {
            assert_eq!(mode(&folder.path().join("hado-data").join(file)), 0o600, "{file}");
        }
    }

    let created = hado(folder.path(), port).args(["source", "create", "docs"]).output().unwrap();
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    assert!(String::from_utf8_lossy(&created.stdout).contains("hado_src_"));
    let again = hado(folder.path(), port).args(["source", "create", "docs"]).output().unwrap();
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains(
            "source docs already exists; to give it a new token, run `hado source rotate docs`"
        ),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let token = hado(folder.path(), port).args(["agent-token", "anna"]).output().unwrap();
    let token = String::from_utf8_lossy(&token.stdout)
        .split_whitespace()
        .find(|word| word.starts_with("hado_agent_"))
        .unwrap()
        .to_owned();
    assert_eq!(mcp_initialize(port.mcp, &token), 200, "gateway-mcp serves the agent through core");
    assert_eq!(mcp_initialize(port.mcp, "hado_agent_unknown"), 401);
    let (status, page) = http_get(port.http, "/");
    assert_eq!(status, 200, "the web inbox serves the local user");
    assert!(page.contains("<title>Inbox · Hado</title>"), "{page}");
    let (status, profile) = http_get(port.http, "/me");
    assert_eq!(status, 200);
    assert!(profile.contains(r#""login":"me""#), "{profile}");

    // Each process serves its metrics, and the scenario above moved them.
    let (status, core_metrics) = http_get(port.metrics[0], "/metrics");
    assert_eq!(status, 200);
    assert!(
        core_metrics
            .contains(r#"hado_grpc_requests_total{method="/hado.v1.Admin/CreateSource",code="0"}"#),
        "{core_metrics}"
    );
    assert!(
        core_metrics.contains(
            r#"hado_grpc_requests_total{method="/hado.v1.Admin/CreateSource",code="6"} 1"#
        ),
        "the refused second source: {core_metrics}"
    );
    assert!(
        core_metrics.contains("hado_grpc_request_duration_seconds_bucket")
            && core_metrics.contains("hado_scheduler_pass_seconds"),
        "{core_metrics}"
    );
    let (_, http_metrics) = http_get(port.metrics[1], "/metrics");
    assert!(
        http_metrics
            .contains(r#"hado_http_requests_total{route="/me",method="GET",status="200"} 1"#),
        "{http_metrics}"
    );
    let (_, mcp_metrics) = http_get(port.metrics[2], "/metrics");
    assert!(
        mcp_metrics
            .contains(r#"hado_http_requests_total{route="/mcp",method="POST",status="401"} 1"#),
        "{mcp_metrics}"
    );
    let users = hado(folder.path(), port).arg("users").output().unwrap();
    assert!(String::from_utf8_lossy(&users.stdout).contains("anna"));
    let refused = hado(folder.path(), port).args(["source", "delete", "docs"]).output().unwrap();
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--yes"));

    signal(up.id(), Signal::SIGTERM);
    assert!(wait_with_timeout(&mut up).success());
    assert!(children.iter().all(|pid| !alive(*pid)), "core and the gateways stopped with hado up");

    // A second start reuses the same secrets and database.
    let (mut up, _) = start(folder.path(), port);
    assert_eq!(std::fs::read_to_string(&secrets_path).unwrap(), secrets, "the secrets are kept");
    let listed = hado(folder.path(), port).args(["source", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("docs"));
    signal(up.id(), Signal::SIGINT);
    assert!(wait_with_timeout(&mut up).success());
}

#[test]
fn hado_up_stops_when_a_child_dies() {
    let folder = tempfile::tempdir().unwrap();
    let (mut up, _) = start(folder.path(), free_ports());
    let children = children_of(up.id());
    signal(children[0], Signal::SIGKILL);
    let status = wait_with_timeout(&mut up);
    assert!(!status.success(), "a dead child makes hado up fail");
    assert!(children.iter().all(|pid| !alive(*pid)), "the other child stopped too");
}

#[test]
fn admin_commands_explain_a_missing_core() {
    let folder = tempfile::tempdir().unwrap();
    let output = hado(folder.path(), free_ports()).arg("users").output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("HADO_ADMIN_TOKEN is not set"), "{stderr}");
}

#[test]
fn hado_up_names_a_port_in_use_and_the_flag_to_change_and_writes_nothing() {
    let folder = tempfile::tempdir().unwrap();
    let port = free_ports();
    let _held = std::net::TcpListener::bind(("127.0.0.1", port.http)).unwrap();
    let output =
        hado(folder.path(), port).arg("up").stdin(std::process::Stdio::null()).output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(!output.status.success());
    assert!(!stdout.contains("Hado is running."), "{stdout}");
    let expected = format!(
        "hado: 127.0.0.1:{} is already in use (another Hado, or another program): stop it, or give --http-addr a free address (or set HADO_HTTP_ADDR)",
        port.http
    );
    assert_eq!(stderr.trim(), expected, "one line naming the flag");
    assert!(!folder.path().join("hado-data").exists(), "nothing half-made is left behind");
}

#[test]
fn hado_up_listens_where_its_flags_say_and_the_admin_commands_find_it() {
    let folder = tempfile::tempdir().unwrap();
    let port = free_ports();
    // Flags win over the variables, which name ports nobody listens on.
    let (decoy_grpc, decoy_http) = (common::free_port(), common::free_port());
    let mut up = hado(folder.path(), port)
        .env("HADO_GRPC_ADDR", format!("127.0.0.1:{decoy_grpc}"))
        .env("HADO_HTTP_ADDR", format!("127.0.0.1:{decoy_http}"))
        .args([
            "up",
            "--grpc-addr",
            &format!("127.0.0.1:{}", port.grpc),
            "--http-addr",
            &format!("127.0.0.1:{}", port.http),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut printed = Vec::new();
    // Held open until the end, so that hado up never writes to a closed pipe.
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(up.stdout.take().unwrap()));
    for line in lines.by_ref().map_while(Result::ok) {
        let running = line == "Hado is running.";
        printed.push(line);
        if running {
            break;
        }
    }
    assert!(printed.last().is_some_and(|line| line == "Hado is running."), "{printed:#?}");
    let (status, _) = http_get(port.http, "/up");
    assert_eq!(status, 200);
    // From the same folder, with no variable at all, the admin commands reach that core.
    let bare = || {
        let mut command = std::process::Command::new(common::HADO);
        command.current_dir(folder.path());
        for variable in [
            "HADO_GRPC_ADDR",
            "HADO_HTTP_ADDR",
            "HADO_MCP_ADDR",
            "HADO_CORE_URL",
            "HADO_ADMIN_TOKEN",
            "HADO_DATA_DIR",
        ] {
            command.env_remove(variable);
        }
        command
    };
    let created = bare().args(["source", "create", "docs"]).output().unwrap();
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    assert!(String::from_utf8_lossy(&created.stdout).contains("hado_src_"));
    signal(up.id(), Signal::SIGTERM);
    assert!(wait_with_timeout(&mut up).success());
    assert!(
        !folder.path().join("hado-data/listening.env").exists(),
        "where it listened is forgotten once it stops"
    );
    let after = bare().arg("users").output().unwrap();
    assert!(!after.status.success(), "no core is found once it stopped");
    drop(lines);
}

/// A script that starts `hado up`, waits for a port and then runs an admin
/// command finds where it listens: `listening.env` is written before any
/// child listens, and forgotten once it stops.
#[test]
fn a_script_waiting_for_a_port_finds_where_hado_up_listens() {
    let folder = tempfile::tempdir().unwrap();
    let port = free_ports();
    let mut up = hado(folder.path(), port)
        .arg("up")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = up.stdout.take().unwrap();
    // Stopped as a person stops it, also when an assertion fails, so that
    // its children stop with it.
    struct Stopped(std::process::Child);
    impl Drop for Stopped {
        fn drop(&mut self) {
            signal(self.0.id(), Signal::SIGTERM);
            let _ = wait_with_timeout(&mut self.0);
        }
    }
    let mut up = Stopped(up);
    let (running, banner_done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            if line == "Ctrl-C stops Hado." {
                let _ = running.send(());
            }
        }
    });
    let listening = folder.path().join("hado-data/listening.env");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for waited_for in [port.grpc, port.mcp, port.http] {
        while std::net::TcpStream::connect(("127.0.0.1", waited_for)).is_err() {
            assert!(std::time::Instant::now() < deadline, "nothing listens on {waited_for}");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let recorded = std::fs::read_to_string(&listening).unwrap_or_default();
        assert!(
            recorded.contains(&format!("HADO_CORE_URL=http://127.0.0.1:{}", port.grpc)),
            "port {waited_for} answered before listening.env said where core is: {recorded:?}"
        );
    }
    // What the script runs next, from the same folder with no variable.
    let mut created = std::process::Command::new(common::HADO);
    created.current_dir(folder.path()).args(["source", "create", "docs"]);
    for variable in ["HADO_GRPC_ADDR", "HADO_CORE_URL", "HADO_ADMIN_TOKEN", "HADO_DATA_DIR"] {
        created.env_remove(variable);
    }
    let created = created.output().unwrap();
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    banner_done.recv_timeout(std::time::Duration::from_secs(60)).expect("hado up runs");
    signal(up.0.id(), Signal::SIGTERM);
    assert!(wait_with_timeout(&mut up.0).success());
    assert!(!listening.exists(), "where it listened is forgotten once it stops");
}

/// An admin command run while core starts (its port takes connections only
/// once its database is open) waits for it, saying so, rather than failing.
#[test]
fn an_admin_command_waits_for_a_core_that_is_starting() {
    let folder = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let admin_token = "admin-secret-for-the-starting-core-0123456789";
    let command = std::process::Command::new(common::HADO)
        .current_dir(folder.path())
        .args(["source", "create", "docs"])
        .env("HADO_CORE_URL", format!("http://127.0.0.1:{port}"))
        .env("HADO_ADMIN_TOKEN", admin_token)
        .env_remove("HADO_DATA_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let _core = common::spawn(
        "core",
        folder.path(),
        &[
            ("HADO_DATABASE_URL", format!("sqlite://{}/hado.db", folder.path().display())),
            ("HADO_GRPC_ADDR", format!("127.0.0.1:{port}")),
            ("HADO_ADMIN_TOKEN", admin_token.into()),
            ("HADO_GATEWAY_TOKEN", "gateway-secret-for-the-starting-core-0123456789".into()),
            ("HADO_SECRET", "link-secret-for-the-starting-core-0123456789abcdef".into()),
        ],
    );
    let output = command.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("hado_src_"));
    assert!(said.contains("takes no connection yet; waiting up to 10 s"), "{said}");
}
