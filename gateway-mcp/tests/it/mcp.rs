//! MCP integration tests through the real stack: core on an ephemeral port
//! over a fresh database (SQLite, and Postgres when its URL is set), the
//! gateway in front of it, and rmcp's own streamable HTTP client, or plain
//! HTTP where the test is about what the guard answers.

use std::time::Duration;

use reqwest::StatusCode;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use hado_gateway_mcp::config::McpConfig;
use hado_proto::v1;
use hado_testing::{Backend, TestCore, source_event};

pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;

/// Core plus gateway-mcp, each on an ephemeral port.
pub(crate) struct Stack {
    pub(crate) core: TestCore,
    pub(crate) url: String,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Stack {
    pub(crate) async fn start(backend: &Backend, calls_per_minute: u32) -> Self {
        Self::start_with(backend, |config| config.calls_per_minute = calls_per_minute).await
    }

    /// Core and the gateway, its configuration first changed by `change`.
    pub(crate) async fn start_with(backend: &Backend, change: impl FnOnce(&mut McpConfig)) -> Self {
        let core = TestCore::start(backend, "2026-12-01T10:00:00Z").await;
        let mut config = McpConfig::local(&core.url());
        config.allowed_hosts = hado_runtime::AllowedHosts::from_lookup(&|variable| {
            (variable == "HADO_ALLOWED_HOSTS").then(|| "hado.example.com".into())
        })
        .unwrap();
        change(&mut config);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let (shutdown, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            hado_gateway_mcp::run(config, listener, async {
                let _ = stopped.await;
            })
            .await
            .expect("gateway-mcp serves");
        });
        Self { core, url, shutdown: Some(shutdown), task }
    }

    /// What a 401 says in `WWW-Authenticate`: where to start signing in.
    fn challenge(&self) -> String {
        format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"inbox\"",
            self.url.trim_end_matches("/mcp")
        )
    }

    pub(crate) async fn agent_token(&self, login: &str) -> String {
        let issued = self
            .core
            .admin()
            .issue_agent_token(v1::UserLogin { login: login.into() })
            .await
            .expect("agent token issued");
        issued.into_inner().token
    }

    pub(crate) async fn client(&self, token: &str) -> RunningService<RoleClient, ()> {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(self.url.as_str()).auth_header(token),
        );
        ().serve(transport).await.expect("the MCP client connects")
    }

    /// A raw POST to `/mcp`, for what the guard answers.
    pub(crate) async fn post(&self, headers: &[(&str, &str)], body: &str) -> reqwest::Response {
        self.try_post(headers, body).await.expect("the gateway answers")
    }

    async fn try_post(
        &self,
        headers: &[(&str, &str)],
        body: &str,
    ) -> reqwest::Result<reqwest::Response> {
        let mut request = reqwest::Client::new()
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await
    }

    pub(crate) async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        let _ = (&mut self.task).await;
        self.core.stop().await;
    }
}

pub(crate) async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: Value,
) -> CallToolResult {
    let arguments = arguments.as_object().cloned().expect("arguments are an object");
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .unwrap_or_else(|error| panic!("{tool} answered: {error}"))
}

/// The structured content of a successful call, checked against its text.
fn ok(result: CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "the call failed: {result:?}");
    let structured = result.structured_content.clone().expect("structured content");
    let text = result.content[0].as_text().expect("a text block").text.clone();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        structured,
        "the text is the same JSON"
    );
    structured
}

/// The message of a call that failed as a tool result.
fn tool_error(result: CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "the call should have failed: {result:?}");
    result.content[0].as_text().expect("a text block").text.clone()
}

pub(crate) async fn error_body(response: reqwest::Response) -> (StatusCode, Option<String>, Value) {
    let status = response.status();
    let challenge =
        response.headers().get("www-authenticate").map(|value| value.to_str().unwrap().to_owned());
    (status, challenge, response.json().await.expect("a JSON error"))
}

/// A body refused by its declared length: the answer is 413, or, when the
/// gateway answered and closed the connection before the client had sent
/// it all, the send fails there. Either way the body was not taken.
fn refused_as_too_large(sent: reqwest::Result<reqwest::Response>) -> Option<reqwest::Response> {
    match sent {
        Ok(response) => {
            assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
            Some(response)
        }
        Err(error) => {
            assert!(format!("{error:?}").contains("BodyWrite"), "{error:?}");
            None
        }
    }
}

/// A refusal at the door, as a JSON-RPC error object.
fn refused(id: Value, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": message}})
}

fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools.iter().find(|tool| tool.name == name).unwrap_or_else(|| panic!("no tool {name}"))
}

async fn every_tool_works_as_the_tokens_user(backend: Backend) {
    let stack = Stack::start(&backend, 600).await;
    let anna = stack.client(&stack.agent_token("anna").await).await;

    let info = anna.peer_info().expect("the server introduced itself");
    assert!(info.instructions.as_deref().is_some_and(|text| text.contains("Remember")));
    let tools = anna.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "create_event",
            "delete_event",
            "get_event",
            "get_profile",
            "list_events",
            "mark_ack",
            "mark_done",
            "reopen_event",
            "restore_reminders",
            "show_inbox",
            "update_event",
            "update_profile"
        ]
    );
    for read in ["list_events", "get_event", "get_profile"] {
        assert_eq!(
            tool(&tools, read).annotations.as_ref().unwrap().read_only_hint,
            Some(true),
            "{read}"
        );
    }
    assert_eq!(
        tool(&tools, "delete_event").annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
    // Only create_event is purely additive; everything else that writes
    // changes or closes something, and a repeat of it changes nothing more.
    for action in [
        "mark_done",
        "mark_ack",
        "update_event",
        "update_profile",
        "reopen_event",
        "restore_reminders",
        "delete_event",
    ] {
        let annotations = tool(&tools, action).annotations.as_ref().unwrap();
        assert_eq!(
            (annotations.idempotent_hint, annotations.destructive_hint),
            (Some(true), Some(true)),
            "{action}"
        );
    }
    assert_eq!(
        tool(&tools, "create_event").annotations.as_ref().unwrap().destructive_hint,
        Some(false)
    );
    let create = tool(&tools, "create_event");
    assert_eq!(create.input_schema["required"], json!(["title", "due_at"]));
    assert!(
        create
            .description
            .as_deref()
            .unwrap()
            .contains("an offset only when the event is tied to a place")
    );
    assert!(
        tool(&tools, "update_event")
            .description
            .as_deref()
            .unwrap()
            .contains("A new due_at is a reschedule")
    );

    // The profile, with the local time that resolves "tomorrow".
    let profile = ok(call(&anna, "get_profile", json!({})).await);
    assert_eq!(profile["login"], "anna");
    assert_eq!(profile["local_time"], "2026-12-01T11:00 (Tuesday)", "Berlin is UTC+1 in December");
    let profile =
        ok(call(&anna, "update_profile", json!({"tz": "Asia/Tokyo", "quiet_start": "23:00"}))
            .await);
    assert_eq!(
        (profile["tz"].as_str(), profile["quiet_start"].as_str()),
        (Some("Asia/Tokyo"), Some("23:00"))
    );
    assert_eq!(profile["local_time"], "2026-12-01T19:00 (Tuesday)");
    assert_eq!(
        tool_error(call(&anna, "update_profile", json!({"tz": "Mars/Base"})).await),
        "tz 'Mars/Base' is not a time zone: give an IANA name such as Europe/Berlin, or a city such as Tokyo (tz: NOT_A_TIME_ZONE)"
    );

    // create_event takes the inbox's defaults.
    let dentist =
        ok(call(&anna, "create_event", json!({"title": "Dentist", "due_at": "2026-12-20T15:00"}))
            .await);
    assert_eq!(
        (
            dentist["source"].as_str(),
            dentist["editable"].as_bool(),
            dentist["fire_at"].as_str(),
            dentist["after_due"].as_str(),
            dentist["state"].as_str()
        ),
        (Some("manual"), Some(true), Some("2026-11-20"), Some("keep"), Some("preparing"))
    );
    let dentist_id = dentist["id"].as_i64().unwrap();
    let bad = tool_error(
        call(
            &anna,
            "create_event",
            json!({"title": "Visa", "due_at": "2026-12-14", "fire_at": "2026-12-20"}),
        )
        .await,
    );
    assert_eq!(bad, "fire_at 2026-12-20 is after the due day 2026-12-14 (fire_at: FIRE_AFTER_DUE)");

    // A source's event: readable and closable, never changeable.
    let docs = stack.core.source_token("docs").await;
    let visa_id = stack
        .core
        .push(
            &docs,
            "anna",
            "visa",
            v1::EventFields {
                title: "Visa".into(),
                due_at: "2026-12-14".into(),
                ..Default::default()
            },
        )
        .await;
    let visa = ok(call(&anna, "get_event", json!({"id": visa_id})).await);
    assert_eq!((visa["source"].as_str(), visa["editable"].as_bool()), (Some("docs"), Some(false)));
    assert_eq!(
        visa["next_reminder_at"], "2026-12-06T23:00:00Z",
        "a week before, at 08:00 in Tokyo, where anna now is"
    );
    let refused =
        "this event belongs to source docs; only docs can change it (EVENT_OWNED_BY_SOURCE)";
    assert_eq!(
        tool_error(call(&anna, "update_event", json!({"id": visa_id, "title": "Mine"})).await),
        refused
    );
    assert_eq!(tool_error(call(&anna, "delete_event", json!({"id": visa_id})).await), refused);
    assert_eq!(
        ok(call(&anna, "get_event", json!({"id": visa_id})).await),
        visa,
        "the refused calls changed nothing"
    );

    let listed = ok(call(&anna, "list_events", json!({})).await);
    let ids: Vec<i64> = listed["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [visa_id, dentist_id], "by due moment");
    let preparing = ok(call(&anna, "list_events", json!({"state": "preparing"})).await);
    assert_eq!(preparing["events"].as_array().unwrap().len(), 2);
    assert_eq!(
        ok(call(&anna, "list_events", json!({"state": "overdue"})).await)["events"],
        json!([])
    );
    let found = ok(call(&anna, "list_events", json!({"text": "DENT"})).await);
    assert_eq!(
        found["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|event| event["title"].clone())
            .collect::<Vec<_>>(),
        [json!("Dentist")]
    );
    assert_eq!(
        ok(call(&anna, "list_events", json!({"source": "docs"})).await)["events"][0]["title"],
        "Visa"
    );

    // Remember and Done on another source's event; both are idempotent.
    let acked = ok(call(&anna, "mark_ack", json!({"id": visa_id})).await);
    assert!(acked["quiet_until"].is_string() && acked["state"] == "preparing");
    // Remember until a morning the user names.
    let later = ok(call(&anna, "mark_ack", json!({"id": visa_id, "until": "tomorrow"})).await);
    assert_eq!(later["quiet_until"], "2026-12-01T23:00:00Z", "tomorrow at 08:00 in Tokyo");
    let refused =
        tool_error(call(&anna, "mark_ack", json!({"id": visa_id, "until": "someday"})).await);
    assert_eq!(
        refused,
        "until 'someday' is not one of next_checkpoint, tomorrow, next_week or a day YYYY-MM-DD (until: NOT_A_REMEMBER_CHOICE)"
    );
    let done = ok(call(&anna, "mark_done", json!({"id": visa_id})).await);
    assert_eq!((done["state"].as_str(), done["closed_as"].as_str()), (Some("done"), Some("Done")));
    assert_eq!(ok(call(&anna, "mark_done", json!({"id": visa_id})).await), done);
    let archive = ok(call(&anna, "list_events", json!({"archive": true})).await);
    assert_eq!(
        archive["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|event| event["id"].clone())
            .collect::<Vec<_>>(),
        [json!(visa_id)]
    );

    // Updating one's own event: the same due_at leaves a done event closed, a new one reopens it.
    ok(call(&anna, "mark_done", json!({"id": dentist_id})).await);
    let renamed = ok(call(
        &anna,
        "update_event",
        json!({"id": dentist_id, "title": "Dentist, Dr. Weiss", "due_at": "2026-12-20T15:00"}),
    )
    .await);
    assert_eq!(
        (renamed["title"].as_str(), renamed["state"].as_str()),
        (Some("Dentist, Dr. Weiss"), Some("done"))
    );
    let moved =
        ok(call(&anna, "update_event", json!({"id": dentist_id, "due_at": "2026-12-22T09:30"}))
            .await);
    assert_eq!(
        (moved["state"].as_str(), moved["closed_as"].as_str(), moved["due_at"].as_str()),
        (Some("preparing"), None, Some("2026-12-22T09:30"))
    );
    let deleted = ok(call(&anna, "delete_event", json!({"id": dentist_id})).await);
    assert_eq!(deleted, json!({"id": dentist_id, "state": "withdrawn"}));
    assert_eq!(ok(call(&anna, "list_events", json!({})).await)["events"], json!([]));
    // A deleted event can still be read, and an edit brings it back.
    assert_eq!(ok(call(&anna, "get_event", json!({"id": dentist_id})).await)["state"], "withdrawn");
    assert_eq!(
        tool_error(call(&anna, "mark_done", json!({"id": dentist_id})).await),
        format!("event {dentist_id} was deleted; reopen it to act on it again (EVENT_WITHDRAWN)")
    );
    let revived =
        ok(call(&anna, "update_event", json!({"id": dentist_id, "title": "Dentist again"})).await);
    assert_eq!(
        (revived["title"].as_str(), revived["state"].as_str()),
        (Some("Dentist again"), Some("preparing"))
    );
    assert_eq!(
        ok(call(&anna, "list_events", json!({})).await)["events"].as_array().unwrap().len(),
        1
    );
    ok(call(&anna, "delete_event", json!({"id": dentist_id})).await);

    // Another user's agent: anna's ids are simply not found.
    let bob = stack.client(&stack.agent_token("bob").await).await;
    for tool in ["get_event", "mark_done", "mark_ack", "delete_event"] {
        assert_eq!(
            tool_error(call(&bob, tool, json!({"id": visa_id})).await),
            format!("event {visa_id} not found (EVENT_NOT_FOUND)"),
            "{tool}"
        );
    }
    assert_eq!(
        tool_error(call(&bob, "update_event", json!({"id": visa_id, "title": "x"})).await),
        format!("event {visa_id} not found (EVENT_NOT_FOUND)")
    );

    // An unknown tool is a JSON-RPC error; arguments of the wrong shape are
    // a tool result that names the argument and what it takes.
    let unknown = anna.call_tool(CallToolRequestParams::new("drop_everything")).await.unwrap_err();
    assert!(
        unknown.to_string().contains("drop_everything")
            || unknown.to_string().to_lowercase().contains("not found"),
        "{unknown}"
    );
    assert_eq!(
        tool_error(call(&anna, "get_event", json!({"id": "seven"})).await),
        r#"argument `id`: invalid type: string "seven", expected i64"#
    );
    assert_eq!(
        tool_error(call(&anna, "get_event", json!({"id": 1, "colour": "red"})).await),
        "argument `colour`: unknown field `colour`, expected `id`"
    );
    assert_eq!(
        tool_error(call(&anna, "list_events", json!({"state": "done"})).await),
        "argument `state`: unknown variant `done`, expected one of `scheduled`, `preparing`, `today`, `overdue`"
    );
    assert_eq!(
        tool_error(call(&anna, "create_event", json!({"title": "Visa"})).await),
        "arguments: missing field `due_at`"
    );
    assert_eq!(ok(call(&anna, "update_profile", json!({"locale": "ru"})).await)["locale"], "ru");

    anna.cancel().await.unwrap();
    bob.cancel().await.unwrap();
    stack.stop().await;
}

async fn the_guard_answers_each_auth_case(backend: Backend) {
    let stack = Stack::start(&backend, 600).await;
    let token = stack.agent_token("anna").await;
    let bearer = format!("Bearer {token}");

    let missing = "sign in, or send an agent token as a bearer token";
    let expected_challenge = stack.challenge();
    let unknown = "unknown agent token";
    for (headers, message) in [
        (vec![], missing),
        (vec![("x-remote-user", "anna")], missing),
        (vec![("authorization", "Basic YW5uYTpwdw==")], missing),
        (
            vec![(
                "authorization",
                "Bearer hado_agent_0000000000000000000000000000000000000000000000000000000000000000",
            )],
            unknown,
        ),
        (
            vec![(
                "authorization",
                "Bearer hado_src_0000000000000000000000000000000000000000000000000000000000000000",
            )],
            unknown,
        ),
    ] {
        let response = stack.post(&headers, INITIALIZE).await;
        // The body was left unread, so the connection closes, and says so:
        // a client retries with a token on a fresh connection.
        assert_eq!(
            response.headers().get("connection").map(|value| value.to_str().unwrap()),
            Some("close"),
            "{headers:?}"
        );
        let (status, challenge, body) = error_body(response).await;
        assert_eq!(
            (status, challenge.as_deref(), body),
            (
                StatusCode::UNAUTHORIZED,
                Some(expected_challenge.as_str()),
                refused(Value::Null, message)
            ),
            "{headers:?}"
        );
    }
    // A token in the query string is never read.
    let in_query = reqwest::Client::new()
        .post(format!("{}?token={token}&access_token={token}", stack.url))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE)
        .send()
        .await
        .unwrap();
    assert_eq!(in_query.status(), StatusCode::UNAUTHORIZED);

    let accepted = stack.post(&[("authorization", &bearer)], INITIALIZE).await;
    assert_eq!(accepted.status(), StatusCode::OK);
    let reply: Value = accepted.json().await.unwrap();
    assert_eq!(reply["result"]["serverInfo"]["name"], "hado");

    // What an SDK would never send still gets a JSON-RPC answer.
    let (status, _, body) =
        error_body(stack.post(&[("authorization", &bearer)], "{not json").await).await;
    assert_eq!(
        (status, &body["error"]["code"], &body["id"]),
        (StatusCode::BAD_REQUEST, &json!(-32700), &Value::Null),
        "{body}"
    );
    let (status, _, body) =
        error_body(stack.post(&[("authorization", &bearer)], r#"{"jsonrpc":"2.0","id":3}"#).await)
            .await;
    assert_eq!(
        (status, &body["error"]["code"], &body["id"]),
        (StatusCode::BAD_REQUEST, &json!(-32600), &json!(3)),
        "{body}"
    );
    // A key twice: which one a reader takes is anyone's guess, so neither is.
    let twice = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_profile","arguments":{},"arguments":{"x":1}}}"#;
    let (status, _, body) =
        error_body(stack.post(&[("authorization", &bearer)], twice).await).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (StatusCode::UNPROCESSABLE_ENTITY, &json!(-32600)),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains(r#"params.arguments: the key "arguments" appears twice"#),
        "{body}"
    );
    let raw = |content_type: &'static str, accept: Option<&'static str>| {
        let mut request = reqwest::Client::new()
            .post(&stack.url)
            .header("authorization", &bearer)
            .header("content-type", content_type)
            .body(INITIALIZE);
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        request.send()
    };
    let (status, _, body) =
        error_body(raw("text/plain", Some("application/json, text/event-stream")).await.unwrap())
            .await;
    assert_eq!(
        (status, &body["error"]["code"], &body["id"]),
        (StatusCode::UNSUPPORTED_MEDIA_TYPE, &json!(-32000), &json!(1)),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Content-Type must be application/json"),
        "{body}"
    );
    // A client that does not list text/event-stream, or sends no Accept, is served JSON.
    for accept in [Some("application/json"), None] {
        let served = raw("application/json", accept).await.unwrap();
        assert_eq!(served.status(), StatusCode::OK, "{accept:?}");
        assert_eq!(served.json::<Value>().await.unwrap()["result"]["serverInfo"]["name"], "hado");
    }

    // GET and DELETE are not served, with or without a token.
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let response = reqwest::Client::new()
            .request(method.clone(), &stack.url)
            .header("authorization", &bearer)
            .send()
            .await
            .unwrap();
        assert_eq!(
            (response.status(), response.headers()["allow"].to_str().unwrap()),
            (StatusCode::METHOD_NOT_ALLOWED, "POST"),
            "{method}"
        );
        assert_eq!(response.json::<Value>().await.unwrap()["error"]["code"], -32000, "{method}");
    }

    // Re-issuing stops the old token at once, mid-session too; revoking stops the new one.
    let client = stack.client(&token).await;
    ok(call(&client, "get_profile", json!({})).await);
    let reissued = stack.agent_token("anna").await;
    assert_ne!(reissued, token);
    let (status, _, body) =
        error_body(stack.post(&[("authorization", &bearer)], INITIALIZE).await).await;
    // The old token was accepted a moment ago, so its body was read: the refusal carries the id.
    assert_eq!((status, body), (StatusCode::UNAUTHORIZED, refused(json!(1), unknown)));
    assert!(
        client.call_tool(CallToolRequestParams::new("get_profile")).await.is_err(),
        "the old session is refused"
    );
    let renewed = stack.client(&reissued).await;
    assert_eq!(ok(call(&renewed, "get_profile", json!({})).await)["login"], "anna");
    stack.core.admin().revoke_agent_token(v1::UserLogin { login: "anna".into() }).await.unwrap();
    // A tool call is checked by the call it makes; a token the gateway
    // accepted a moment ago is refused there, as HTTP 401, not as a result.
    let revoked = format!("Bearer {reissued}");
    let tool_call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_profile","arguments":{}}}"#;
    let (status, challenge, body) = error_body(
        stack
            .post(&[("authorization", &revoked), ("mcp-protocol-version", "2025-06-18")], tool_call)
            .await,
    )
    .await;
    assert_eq!(
        (status, challenge.as_deref(), body),
        (StatusCode::UNAUTHORIZED, Some(expected_challenge.as_str()), refused(json!(7), unknown))
    );
    let (status, _, _) =
        error_body(stack.post(&[("authorization", &revoked)], INITIALIZE).await).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    stack.stop().await;
}

async fn origin_host_size_and_rate_are_limited(backend: Backend) {
    let stack = Stack::start(&backend, 5).await;
    let bearer = format!("Bearer {}", stack.agent_token("anna").await);
    let authorized = |extra: &[(&'static str, &'static str)]| {
        let mut headers: Vec<(&str, String)> = vec![("authorization", bearer.clone())];
        headers.extend(extra.iter().map(|(name, value)| (*name, value.to_string())));
        headers
    };
    let post = |headers: Vec<(&'static str, String)>, body: String| {
        let stack = &stack;
        async move {
            let borrowed: Vec<(&str, &str)> =
                headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
            stack.post(&borrowed, &body).await
        }
    };

    // A foreign Origin or Host is refused before the token is even looked at.
    let (status, _, body) = error_body(
        post(authorized(&[("origin", "https://evil.example")]), INITIALIZE.into()).await,
    )
    .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::FORBIDDEN,
            refused(Value::Null, "origin https://evil.example may not call this server")
        )
    );
    assert_eq!(
        post(vec![("origin", "null".into())], INITIALIZE.into()).await.status(),
        StatusCode::FORBIDDEN
    );
    let (status, _, body) =
        error_body(post(authorized(&[("host", "evil.example")]), INITIALIZE.into()).await).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::FORBIDDEN,
            refused(
                Value::Null,
                "host evil.example is not served here; the operator can add it to HADO_ALLOWED_HOSTS"
            )
        )
    );
    // The configured public host, and an Origin on it or on loopback, are fine.
    assert_eq!(
        post(authorized(&[("origin", "https://hado.example.com")]), INITIALIZE.into())
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        post(
            authorized(&[("host", "hado.example.com"), ("origin", "http://localhost:5173")]),
            INITIALIZE.into()
        )
        .await
        .status(),
        StatusCode::OK
    );

    // More than 1 MiB of body is refused.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(1024 * 1024)
    );
    if let Some(response) =
        refused_as_too_large(stack.try_post(&[("authorization", &bearer)], &huge).await)
    {
        let (_, _, body) = error_body(response).await;
        assert_eq!(body, refused(Value::Null, "the request body is over 1024 KiB"));
    }

    // Five tool calls a minute; the sixth waits, and its refusal carries its id.
    let tool_call = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_profile","arguments":{{}}}}}}"#
        )
    };
    let versioned = || authorized(&[("mcp-protocol-version", "2025-06-18")]);
    for id in 10..15 {
        assert_eq!(post(versioned(), tool_call(id)).await.status(), StatusCode::OK);
    }
    let limited = post(versioned(), tool_call(15)).await;
    let retry_after: u64 = limited.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(
        (1..=12).contains(&retry_after),
        "one call frees up every 12 s at 5 a minute, not {retry_after}"
    );
    let (status, _, body) = error_body(limited).await;
    let message = format!(
        "too many tool calls: the limit is 5 a minute per agent token; try again in {retry_after} s"
    );
    let expected = json!({"jsonrpc": "2.0", "id": 15, "error": {"code": -32000, "message": message, "data": {"retry_after": retry_after}}});
    assert_eq!((status, body), (StatusCode::TOO_MANY_REQUESTS, expected));
    // Another token has its own allowance.
    let other = format!("Bearer {}", stack.agent_token("bob").await);
    assert_eq!(
        post(
            vec![("authorization", other), ("mcp-protocol-version", "2025-06-18".into())],
            tool_call(16)
        )
        .await
        .status(),
        StatusCode::OK
    );

    // Other requests do not count against the tool calls: a script may
    // initialize and list as it likes, up to ten times the tool-call limit
    // of requests of any kind. Nine requests of anna's were counted above
    // (all but the Origin and Host refusals), so at least 41 more pass
    // (more if the bucket refilled one, every 1.2 s, on a slow machine),
    // and then one is refused.
    let mut passed = 0;
    let refused = loop {
        let response = post(authorized(&[]), INITIALIZE.into()).await;
        if response.status() != StatusCode::OK || passed == 100 {
            break response;
        }
        passed += 1;
    };
    assert!(passed >= 41, "only {passed} requests passed before the limit");
    let (status, _, body) = error_body(refused).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{passed} passed and no request was refused");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("too many requests: the limit is 50 a minute per agent token"),
        "{body}"
    );

    stack.stop().await;
}

/// While core cannot be reached, a tool call is answered with a JSON-RPC
/// error that says to retry (not a tool result: the tool did not answer),
/// and the calls succeed again by themselves once core is back.
async fn a_core_outage_is_a_retry_error_and_passes_by_itself(backend: Backend) {
    let mut stack = Stack::start(&backend, 600).await;
    let client = stack.client(&stack.agent_token("anna").await).await;
    ok(call(&client, "create_event", json!({"title": "Passport", "due_at": "2027-01-10"})).await);
    let list = || {
        client.call_tool(
            CallToolRequestParams::new("list_events").with_arguments(serde_json::Map::new()),
        )
    };

    let up = || reqwest::get(stack.url.replace("/mcp", "/up"));
    assert_eq!(up().await.unwrap().status(), StatusCode::OK, "/up says 200 while core serves");
    stack.core.pause().await;
    let down = up().await.unwrap();
    assert_eq!(
        down.status(),
        StatusCode::SERVICE_UNAVAILABLE,
        "and 503 while it cannot be reached"
    );
    assert!(down.headers().contains_key("retry-after"));
    match list().await {
        Err(rmcp::ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32000, "{error:?}");
            assert!(
                error.message.contains("cannot be reached")
                    && error.message.contains(&stack.core.url()),
                "{error:?}"
            );
            assert!(error.message.contains("try again"), "{error:?}");
            assert_eq!(error.data, Some(json!({"retry_after": 2})));
        }
        other => panic!("expected a JSON-RPC error to retry, got {other:?}"),
    }

    stack.core.resume().await;
    let mut listed = None;
    for _ in 0..100 {
        if let Ok(result) = list().await
            && result.is_error != Some(true)
        {
            listed = Some(ok(result));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listed = listed.expect("the gateway reconnects once core is back");
    assert_eq!(up().await.unwrap().status(), StatusCode::OK);
    assert_eq!(listed["events"][0]["title"], "Passport");

    client.cancel().await.unwrap();
    stack.stop().await;
}

/// The same limits as gateway-http: a socket that never sends a whole
/// request is cut off at the header deadline from accept, a body that never
/// comes gets 408, and a connection over the cap gets 503 once every held
/// connection is in use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_surplus_connections_are_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let core = TestCore::start(&Backend::Sqlite, "2026-12-01T10:00:00Z").await;
    let mut config = McpConfig::local(&core.url());
    config.limits = hado_gateway::Limits {
        header_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(4),
        max_connections: 2,
        ..hado_gateway::Limits::default()
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (shutdown, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        hado_gateway_mcp::run(config, listener, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    let read_all = |mut stream: tokio::net::TcpStream| async move {
        let mut reply = Vec::new();
        tokio::time::timeout(Duration::from_secs(8), stream.read_to_end(&mut reply))
            .await
            .expect("the gateway closed the connection")
            .unwrap();
        String::from_utf8_lossy(&reply).into_owned()
    };
    let started = std::time::Instant::now();
    let silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut slow_headers = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow_headers.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.unwrap();
    read_all(slow_headers).await;
    read_all(silent).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "both held connections were cut off at the header deadline: {:?}",
        started.elapsed()
    );

    // Two kept-alive connections in use fill the cap; a third is refused.
    let mut in_use = Vec::new();
    for _ in 0..2 {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(
                b"GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            )
            .await
            .unwrap();
        let mut buffer = [0u8; 4096];
        let read = stream.read(&mut buffer).await.unwrap();
        assert!(
            buffer[..read].starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&buffer[..read])
        );
        in_use.push(stream);
    }
    let mut surplus = tokio::net::TcpStream::connect(addr).await.unwrap();
    surplus.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    assert!(read_all(surplus).await.starts_with("HTTP/1.1 503"));
    drop(in_use);
    tokio::time::sleep(Duration::from_millis(200)).await;

    // A known token's body that never comes: 408 at the request deadline.
    let token = core
        .admin()
        .issue_agent_token(v1::UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    let mut slow_body = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
    );
    slow_body.write_all(head.as_bytes()).await.unwrap();
    assert!(read_all(slow_body).await.starts_with("HTTP/1.1 408"));
    let _ = shutdown.send(());
    let _ = task.await;
    core.stop().await;
}

/// Every reply, whatever route or refusal made it, carries the same
/// security headers as gateway-http's, and none may be cached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reply_carries_the_security_headers() {
    let stack = Stack::start(&Backend::Sqlite, 600).await;
    let base = stack.url.trim_end_matches("/mcp").to_owned();
    let token = stack.agent_token("anna").await;
    let client = reqwest::Client::new();
    let requests = [
        client.post(&stack.url).header("content-type", "application/json").body(INITIALIZE),
        client
            .post(&stack.url)
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(INITIALIZE),
        client.get(&stack.url),
        client.get(format!("{base}/nowhere")),
        client.get(format!("{base}/.well-known/oauth-protected-resource/mcp")),
        client.get(format!("{base}/.well-known/oauth-authorization-server")),
        client
            .post(format!("{base}/register"))
            .json(&json!({"redirect_uris": ["http://127.0.0.1/cb"]})),
        client.post(format!("{base}/token")).form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "hado_rt_nope"),
            ("client_id", "x"),
        ]),
        client.get(format!("{base}/mcp")).header("host", "attacker.example"),
        client.get(format!("{base}/up")),
        client.get(format!("{base}/up")).header("host", "attacker.example"),
    ];
    for request in requests {
        let response = request.send().await.unwrap();
        let (url, headers) = (response.url().to_string(), response.headers().clone());
        assert_eq!(
            headers.get("x-content-type-options").map(|value| value.to_str().unwrap()),
            Some("nosniff"),
            "{url}"
        );
        assert_eq!(
            headers.get("x-frame-options").map(|value| value.to_str().unwrap()),
            Some("DENY"),
            "{url}"
        );
        assert_eq!(
            headers.get("referrer-policy").map(|value| value.to_str().unwrap()),
            Some("no-referrer"),
            "{url}"
        );
        let policy = headers
            .get("content-security-policy")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default();
        assert!(policy.contains("frame-ancestors 'none'"), "{url}: {policy}");
        assert_eq!(
            headers.get("cache-control").map(|value| value.to_str().unwrap()),
            Some("no-store"),
            "{url}"
        );
    }
    stack.stop().await;
}

/// An event stream is a request in progress for as long as it flows: the
/// idle timeout, which closes kept-alive connections between requests,
/// never cuts it off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_event_stream_outlives_the_idle_timeout() {
    let stack = Stack::start_with(&Backend::Sqlite, |config| {
        config.limits.idle_timeout = Duration::from_secs(1)
    })
    .await;
    let base = stack.url.trim_end_matches("/mcp").to_owned();
    let token = stack.agent_token("anna").await;
    let client = reqwest::Client::new();
    let mut stream = client.get(format!("{base}/sse")).bearer_auth(&token).send().await.unwrap();
    let first = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    let endpoint = first
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .expect("an endpoint event")
        .to_owned();
    // Four idle timeouts pass with nothing to send: the stream stays open.
    let quiet = tokio::time::timeout(Duration::from_secs(4), stream.chunk()).await;
    assert!(quiet.is_err(), "the stream ended while open: {quiet:?}");
    let posted = client
        .post(format!("{base}{endpoint}"))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(INITIALIZE)
        .send()
        .await;
    assert_eq!(posted.unwrap().status(), StatusCode::ACCEPTED);
    let reply = tokio::time::timeout(Duration::from_secs(5), stream.chunk())
        .await
        .expect("a reply on the stream")
        .unwrap()
        .expect("the stream is open");
    assert!(String::from_utf8_lossy(&reply).contains("serverInfo"));
    drop(stream);
    stack.stop().await;
}

async fn the_legacy_event_stream_has_the_same_guard(backend: Backend) {
    let stack = Stack::start(&backend, 600).await;
    let base = stack.url.trim_end_matches("/mcp").to_owned();
    let anna = format!("Bearer {}", stack.agent_token("anna").await);
    let bob = format!("Bearer {}", stack.agent_token("bob").await);
    // A connection each: the gateway closes one after refusing an unread
    // body, and a pooled connection could be reused just as it closes.
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();

    // Opening a stream takes a token, from a host served here.
    let (status, challenge, body) =
        error_body(client.get(format!("{base}/sse")).send().await.unwrap()).await;
    assert_eq!(
        (status, challenge.as_deref(), body),
        (
            StatusCode::UNAUTHORIZED,
            Some(stack.challenge().replace("/mcp\"", "/sse\"").as_str()),
            refused(Value::Null, "sign in, or send an agent token as a bearer token")
        )
    );
    let foreign = client
        .get(format!("{base}/sse"))
        .header("authorization", &anna)
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);

    // The first event names the endpoint of this stream.
    let mut stream =
        client.get(format!("{base}/sse")).header("authorization", &anna).send().await.unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let first = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    let endpoint = first
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .expect("an endpoint event")
        .to_owned();
    assert!(
        first.starts_with("event: endpoint") && endpoint.starts_with("/messages?sessionId="),
        "{first}"
    );
    let messages = format!("{base}{endpoint}");
    let post = |token: &str, body: String| {
        client
            .post(&messages)
            .header("authorization", token)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };

    // Its owner's messages are taken; another token's stream is unknown.
    assert_eq!(post(&anna, INITIALIZE.into()).await.unwrap().status(), StatusCode::ACCEPTED);
    let (status, _, body) = error_body(post(&bob, INITIALIZE.into()).await.unwrap()).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            refused(json!(1), "no open stream has this sessionId: open one with GET /sse")
        )
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(1024 * 1024)
    );
    refused_as_too_large(post(&anna, huge).await);
    let (status, _, body) = error_body(post(&anna, "{not json".into()).await.unwrap()).await;
    assert_eq!((status, &body["error"]["code"]), (StatusCode::BAD_REQUEST, &json!(-32700)));

    // The reply to initialize comes on the stream.
    let mut seen = String::new();
    while !seen.contains("serverInfo") {
        seen.push_str(
            std::str::from_utf8(&stream.chunk().await.unwrap().expect("the stream stays open"))
                .unwrap(),
        );
    }
    assert!(seen.contains("event: message") && seen.contains(r#""name":"hado""#), "{seen}");

    // A closed stream is forgotten.
    drop(stream);
    let mut gone = false;
    for _ in 0..50 {
        if post(&anna, INITIALIZE.into()).await.unwrap().status() == StatusCode::NOT_FOUND {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(gone, "the session outlived its stream");
    stack.stop().await;
}

/// A large inbox is read a page at a time: 100 events by default, `limit`
/// from 1 to 1000, and `next` to go on from, until it is absent.
async fn list_events_reads_a_page_at_a_time(backend: Backend) {
    let stack = Stack::start(&backend, 600).await;
    let anna = stack.client(&stack.agent_token("anna").await).await;
    let docs = stack.core.source_token("docs").await;
    let batch: Vec<v1::SourceEvent> = (0..130)
        .map(|index| {
            source_event(
                "anna",
                &format!("r{index}"),
                &format!("Event {index:03}"),
                &format!("2027-{:02}-{:02}", index / 28 + 1, index % 28 + 1),
            )
        })
        .collect();
    stack
        .core
        .ingest(&docs)
        .upsert_events(v1::UpsertEventsRequest { events: batch })
        .await
        .unwrap();
    let titles = |page: &Value| {
        page["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|event| event["title"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };

    let first = ok(call(&anna, "list_events", json!({})).await);
    assert_eq!(titles(&first).len(), 100, "a page of 100 unless told");
    assert_eq!(
        (titles(&first)[0].as_str(), titles(&first)[99].as_str()),
        ("Event 000", "Event 099"),
        "the most urgent first"
    );
    let rest = ok(call(&anna, "list_events", json!({"after": first["next"]})).await);
    assert_eq!(titles(&rest).len(), 30);
    assert_eq!(titles(&rest)[0], "Event 100");
    assert!(rest.get("next").is_none(), "nothing follows the last page: {rest}");

    let small = ok(call(&anna, "list_events", json!({"limit": 2, "state": "scheduled"})).await);
    assert_eq!(titles(&small), ["Event 000", "Event 001"]);
    let whole = ok(call(&anna, "list_events", json!({"limit": 1000})).await);
    assert_eq!(titles(&whole).len(), 130);
    assert!(whole.get("next").is_none());

    assert_eq!(
        tool_error(call(&anna, "list_events", json!({"limit": 0})).await),
        "argument `limit`: 0 is not from 1 to 1000"
    );
    assert_eq!(
        tool_error(call(&anna, "list_events", json!({"limit": 1001})).await),
        "argument `limit`: 1001 is not from 1 to 1000"
    );
    let refused = tool_error(call(&anna, "list_events", json!({"after": "nonsense"})).await);
    assert!(refused.starts_with("after \"nonsense\" is not a cursor"), "{refused}");
    stack.stop().await;
}

/// An agent undoes its own answers as the person can in the web inbox, and
/// a withdrawn event is refused with one clear code on every tool.
async fn an_agent_undoes_its_answers_and_hears_when_a_source_withdrew(backend: Backend) {
    let stack = Stack::start(&backend, 600).await;
    let anna = stack.client(&stack.agent_token("anna").await).await;
    let id = |value: &Value| value["id"].as_i64().unwrap();
    let event =
        ok(call(&anna, "create_event", json!({"title": "Passport", "due_at": "2027-01-10"})).await);

    // Done, then undone.
    assert_eq!(ok(call(&anna, "mark_done", json!({"id": id(&event)})).await)["state"], "done");
    let reopened = ok(call(&anna, "reopen_event", json!({"id": id(&event)})).await);
    assert_ne!(reopened["state"], "done", "{reopened}");
    // Remember, then undone.
    let remembered =
        ok(call(&anna, "mark_ack", json!({"id": id(&event), "until": "tomorrow"})).await);
    assert!(remembered["quiet_until"].is_string(), "{remembered}");
    let restored = ok(call(&anna, "restore_reminders", json!({"id": id(&event)})).await);
    assert!(restored["quiet_until"].is_null(), "{restored}");
    // Delete, then undone.
    ok(call(&anna, "delete_event", json!({"id": id(&event)})).await);
    let message = tool_error(call(&anna, "mark_done", json!({"id": id(&event)})).await);
    assert!(message.contains("was deleted") && message.contains("EVENT_WITHDRAWN"), "{message}");
    assert_ne!(
        ok(call(&anna, "reopen_event", json!({"id": id(&event)})).await)["state"],
        "withdrawn"
    );

    // A source's withdrawn event: get_event shows it, every action says why not, with one code.
    let docs = stack.core.source_token("docs").await;
    let mut ingest = stack.core.ingest(&docs);
    let pushed = ingest
        .upsert_events(v1::UpsertEventsRequest {
            events: vec![source_event("anna", "visa", "Visa", "2027-02-01")],
        })
        .await;
    let visa = pushed.unwrap().into_inner().results[0].id;
    let key = v1::EventKey { user: "anna".into(), r#ref: "visa".into(), topic: String::new() };
    ingest.withdraw_events(v1::WithdrawEventsRequest { keys: vec![key] }).await.unwrap();
    assert_eq!(ok(call(&anna, "get_event", json!({"id": visa})).await)["state"], "withdrawn");
    for tool in ["mark_done", "mark_ack", "delete_event", "reopen_event"] {
        let message = tool_error(call(&anna, tool, json!({"id": visa})).await);
        assert!(
            message.contains("withdrawn by its source docs") || message.contains("docs"),
            "{tool}: {message}"
        );
        if tool != "reopen_event" {
            assert!(message.contains("EVENT_WITHDRAWN"), "{tool}: {message}");
        }
    }

    // The archive honours limit; get_profile refuses what it does not take.
    for day in 11..15 {
        let closed = ok(call(
            &anna,
            "create_event",
            json!({"title": format!("Closed {day}"), "due_at": format!("2027-01-{day}")}),
        )
        .await);
        ok(call(&anna, "mark_done", json!({"id": id(&closed)})).await);
    }
    let archive = ok(call(&anna, "list_events", json!({"archive": true, "limit": 2})).await);
    assert_eq!(archive["events"].as_array().unwrap().len(), 2, "{archive}");
    let message = tool_error(call(&anna, "get_profile", json!({"verbose": true})).await);
    assert!(message.contains("unknown field `verbose`"), "{message}");
    anna.cancel().await.unwrap();
    stack.stop().await;
}

hado_testing::on_both_backends!(
    an_agent_undoes_its_answers_and_hears_when_a_source_withdrew,
    list_events_reads_a_page_at_a_time,
    the_legacy_event_stream_has_the_same_guard,
    every_tool_works_as_the_tokens_user,
    the_guard_answers_each_auth_case,
    origin_host_size_and_rate_are_limited,
    a_core_outage_is_a_retry_error_and_passes_by_itself,
);
