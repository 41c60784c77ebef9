//! `hado up` as a person runs it: a real process tree in a fresh folder, the
//! admin commands against it, and how it stops.

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const HADO: &str = env!("CARGO_BIN_EXE_hado");

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn hado(folder: &Path, port: u16) -> Command {
    let mut command = Command::new(HADO);
    command
        .current_dir(folder)
        .env("HADO_GRPC_ADDR", format!("127.0.0.1:{port}"))
        .env_remove("HADO_CORE_URL")
        .env_remove("HADO_DATABASE_URL")
        .env_remove("HADO_ADMIN_TOKEN")
        .env_remove("HADO_GATEWAY_TOKEN")
        .env_remove("HADO_DATA_DIR");
    command
}

/// Starts `hado up` and waits for its "running" line.
fn start(folder: &Path, port: u16) -> Child {
    let mut up = hado(folder, port).arg("up").stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let stdout = up.stdout.take().unwrap();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    while let Ok(line) = receiver.recv_timeout(Duration::from_secs(120)) {
        if line == "Hado is running." {
            return up;
        }
    }
    let _ = up.kill();
    let _ = up.wait();
    panic!("hado up did not print that it is running");
}

fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) on a process this test started.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

fn children_of(pid: u32) -> Vec<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(path).unwrap_or_default().split_whitespace().filter_map(|child| child.parse().ok()).collect()
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z ")
}

fn wait_with_timeout(child: &mut Child) -> std::process::ExitStatus {
    for _ in 0..300 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("the process did not stop");
}

#[test]
fn hado_up_runs_core_serves_the_admin_commands_and_stops_on_a_signal() {
    let folder = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut up = start(folder.path(), port);
    let core = children_of(up.id());
    assert_eq!(core.len(), 1, "core runs as a child process");

    let secrets = std::fs::read_to_string(folder.path().join("hado-data/secrets.env")).unwrap();
    assert!(secrets.contains("HADO_ADMIN_TOKEN=") && secrets.contains("HADO_GATEWAY_TOKEN="));
    assert!(folder.path().join("hado-data/hado.db").exists());

    let created = hado(folder.path(), port).args(["source", "create", "docs"]).output().unwrap();
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    assert!(String::from_utf8_lossy(&created.stdout).contains("hado_src_"));
    let again = hado(folder.path(), port).args(["source", "create", "docs"]).output().unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("source docs already exists"));
    let token = hado(folder.path(), port).args(["agent-token", "anna"]).output().unwrap();
    assert!(String::from_utf8_lossy(&token.stdout).contains("hado_agent_"));
    let users = hado(folder.path(), port).arg("users").output().unwrap();
    assert!(String::from_utf8_lossy(&users.stdout).contains("anna"));
    let refused = hado(folder.path(), port).args(["source", "delete", "docs"]).output().unwrap();
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--yes"));

    signal(up.id(), libc::SIGTERM);
    assert!(wait_with_timeout(&mut up).success());
    assert!(core.iter().all(|pid| !alive(*pid)), "core stopped with hado up");

    // A second start reuses the same secrets and database.
    let mut up = start(folder.path(), port);
    let listed = hado(folder.path(), port).args(["source", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("docs"));
    signal(up.id(), libc::SIGINT);
    assert!(wait_with_timeout(&mut up).success());
}

#[test]
fn hado_up_stops_when_core_dies() {
    let folder = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut up = start(folder.path(), port);
    let core = children_of(up.id());
    signal(core[0], libc::SIGKILL);
    let status = wait_with_timeout(&mut up);
    assert!(!status.success(), "a dead child makes hado up fail");
}

#[test]
fn admin_commands_explain_a_missing_core() {
    let folder = tempfile::tempdir().unwrap();
    let output = hado(folder.path(), free_port()).arg("users").output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("HADO_ADMIN_TOKEN is not set"), "{stderr}");
}
