//! The same calls driven by wrk, the load generator issue 14's figures came
//! from: a client that costs next to nothing, so the two cores go to the
//! servers. Each of wrk's connections is its own MCP session (opened here,
//! with `initialize` and `notifications/initialized`), and sends one
//! JSON-RPC request again and again for a few seconds.

use std::time::Duration;

use serde_json::{Value, json};

/// The protocol version both servers are asked for.
const PROTOCOL: &str = "2025-06-18";

/// How long each run lasts: 6 s, or `HADO_BENCH_WRK_SECONDS` (longer runs
/// leave time to profile a server under the load).
fn run_for() -> Duration {
    let seconds = std::env::var("HADO_BENCH_WRK_SECONDS")
        .ok()
        .and_then(|seconds| seconds.parse().ok())
        .unwrap_or(6);
    Duration::from_secs(seconds)
}

/// Whether wrk is installed (Debian's `wrk`).
pub(crate) async fn available() -> bool {
    tokio::process::Command::new("wrk").arg("--version").output().await.is_ok()
}

/// One MCP server as wrk sees it.
pub(crate) struct Server<'a> {
    pub(crate) url: &'a str,
    pub(crate) token: Option<&'a str>,
}

/// What wrk measured.
pub(crate) struct Measured {
    pub(crate) requests: u64,
    pub(crate) per_second: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
}

impl Server<'_> {
    /// A POST of `body`, in `session` once one is open (the protocol's
    /// version header goes with every request after `initialize`).
    fn post(
        &self,
        http: &reqwest::Client,
        body: &Value,
        session: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut request =
            http.post(self.url).header("accept", "application/json, text/event-stream").json(body);
        if let Some(token) = self.token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        if body.get("method").and_then(Value::as_str) != Some("initialize") {
            request = request.header("mcp-protocol-version", PROTOCOL);
        }
        request
    }

    /// Opens an MCP session and returns its id; none from a stateless
    /// server (Hado's), whose every request stands alone.
    async fn open_session(&self, http: &reqwest::Client) -> Option<String> {
        let post = |body: Value, session: Option<&str>| self.post(http, &body, session);
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "wrk", "version": "4"}}});
        let response = post(initialize, None).send().await.expect("initialize is answered");
        assert!(response.status().is_success(), "initialize: {}", response.status());
        let session =
            response.headers().get("mcp-session-id").map(|id| id.to_str().unwrap().to_owned());
        let answer = response.text().await.unwrap();
        assert!(
            answer.contains(&format!("\"protocolVersion\":\"{PROTOCOL}\"")),
            "the server speaks {PROTOCOL}: {answer}"
        );
        let initialized = post(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            session.as_deref(),
        )
        .send()
        .await
        .unwrap();
        assert!(
            initialized.status().is_success(),
            "notifications/initialized: {}",
            initialized.status()
        );
        session
    }

    /// Sends `request` (a JSON-RPC request) for [`run_for`] over
    /// `connections` connections, each its own session, one request at a
    /// time on each. Panics unless every answer was a success.
    pub(crate) async fn run(&self, label: &str, connections: usize, request: &Value) -> Measured {
        let http = reqwest::Client::new();
        let mut sessions = Vec::with_capacity(connections);
        for _ in 0..connections {
            sessions.push(self.open_session(&http).await);
        }
        let probe = self
            .post(&http, request, sessions[0].as_deref())
            .send()
            .await
            .expect("the request is answered");
        let answer = probe.text().await.unwrap();
        assert!(
            answer.contains("\"result\"") && !answer.contains("\"isError\":true"),
            "{label}: the request succeeds: {answer}"
        );
        let script = tempfile::Builder::new().suffix(".lua").tempfile().unwrap();
        std::fs::write(script.path(), self.script(&sessions, request)).unwrap();
        let output = tokio::process::Command::new("wrk")
            .args(["--latency", "-t", &connections.to_string(), "-c", &connections.to_string()])
            .args(["-d", &format!("{}s", run_for().as_secs()), "-s"])
            .arg(script.path())
            .arg(self.url)
            .output()
            .await
            .expect("wrk runs");
        let report = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "wrk failed: {report}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            !report.contains("Non-2xx") && !report.contains("Socket errors"),
            "every answer is a success:\n{report}"
        );
        let measured = Measured::read(&report);
        println!(
            "{label:<44} {connections:>2} connection(s)  p50 {:>7.2} ms  p99 {:>7.2} ms  {:>7.0} calls/s  ({} calls)",
            measured.p50_ms, measured.p99_ms, measured.per_second, measured.requests
        );
        measured
    }

    /// wrk's script: the request's fixed headers and body, and each
    /// thread (one connection each) its own session.
    fn script(&self, sessions: &[Option<String>], request: &Value) -> String {
        let quoted = |text: &str| serde_json::to_string(text).unwrap();
        let sessions: Vec<String> =
            sessions.iter().map(|session| quoted(session.as_deref().unwrap_or_default())).collect();
        let authorization = self.token.map(|token| {
            format!("wrk.headers[\"Authorization\"] = {}\n", quoted(&format!("Bearer {token}")))
        });
        format!(
            "local sessions = {{{}}}\n\
             local given = 0\n\
             function setup(thread)\n  given = given + 1\n  thread:set(\"session\", sessions[given])\nend\n\
             function init(args)\n  if session ~= \"\" then\n    wrk.headers[\"Mcp-Session-Id\"] = session\n  end\nend\n\
             wrk.method = \"POST\"\n\
             wrk.body = {}\n\
             wrk.headers[\"Content-Type\"] = \"application/json\"\n\
             wrk.headers[\"Accept\"] = \"application/json, text/event-stream\"\n\
             wrk.headers[\"MCP-Protocol-Version\"] = \"{PROTOCOL}\"\n{}",
            sessions.join(", "),
            quoted(&request.to_string()),
            authorization.unwrap_or_default()
        )
    }
}

impl Measured {
    /// Reads wrk's report (`--latency`).
    fn read(report: &str) -> Self {
        let value_after = |prefix: &str| -> &str {
            let line = report
                .lines()
                .map(str::trim)
                .find(|line| line.starts_with(prefix))
                .unwrap_or_else(|| panic!("no {prefix:?} in:\n{report}"));
            line[prefix.len()..].split_whitespace().next().unwrap()
        };
        let millis = |text: &str| -> f64 {
            let unit_at = text.find(|c: char| c.is_ascii_alphabetic()).unwrap();
            let number: f64 = text[..unit_at].parse().unwrap();
            match &text[unit_at..] {
                "us" => number / 1e3,
                "ms" => number,
                "s" => number * 1e3,
                "m" => number * 60e3,
                unit => panic!("wrk's unit {unit:?}"),
            }
        };
        let requests = report
            .lines()
            .find(|line| line.contains(" requests in "))
            .and_then(|line| line.split_whitespace().next())
            .unwrap();
        Self {
            requests: requests.parse().unwrap(),
            per_second: value_after("Requests/sec:").parse().unwrap(),
            p50_ms: millis(value_after("50%")),
            p99_ms: millis(value_after("99%")),
        }
    }
}

/// A `tools/call` request.
pub(crate) fn tool_call(tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

/// A `ping` request.
pub(crate) fn ping() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})
}
