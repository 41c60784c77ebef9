//! Signing an agent in (MCP authorization): core, gateway-mcp with sign-in
//! on, and gateway-http behind a "proxy" on loopback that names the person,
//! each on an ephemeral port. The official Python SDK's OAuth client
//! provider goes the whole way (`tests/python/sdk_oauth.py`); bad input is
//! sent by hand and each refusal is checked for the RFC's error code and
//! for changing nothing.

use std::collections::HashMap;

use reqwest::StatusCode;
use reqwest::redirect::Policy;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use hado_gateway::TrustedProxies;
use hado_gateway_http::config::HttpConfig;
use hado_gateway_mcp::config::McpConfig;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, GATEWAY_TOKEN, TestCore};

const SCENARIO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/sdk_oauth.py");

/// RFC 7636 appendix B's verifier and its S256 challenge.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// Both gateways in front of a test core, stopped when the test is done.
struct Stack {
    core: TestCore,
    mcp: String,
    web: String,
    stops: Vec<(oneshot::Sender<()>, tokio::task::JoinHandle<()>)>,
}

impl Stack {
    async fn start(backend: &Backend) -> Self {
        Self::start_with(backend, |_| {}).await
    }

    /// The stack with gateway-http's configuration changed by `configure`.
    async fn start_with(backend: &Backend, configure: impl FnOnce(&mut HttpConfig)) -> Self {
        let core = TestCore::start(backend, "2026-12-01T10:00:00Z").await;
        let web_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let web = format!("http://{}", web_listener.local_addr().unwrap());
        let mcp_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mcp = format!("http://{}", mcp_listener.local_addr().unwrap());
        let mut http_config = HttpConfig {
            addr: web_listener.local_addr().unwrap(),
            // The test plays the sign-in proxy: it names the person.
            trusted_proxies: TrustedProxies::parse("127.0.0.1").unwrap(),
            // Where agents reach gateway-mcp, as `hado up` tells the inbox.
            mcp_url: Some(format!("{mcp}/mcp")),
            ..HttpConfig::local(&core.url(), GATEWAY_TOKEN)
        };
        configure(&mut http_config);
        // ...and stands in front of gateway-mcp too, naming each client.
        let mcp_config = McpConfig {
            web_url: web.clone(),
            trusted_proxies: TrustedProxies::parse("127.0.0.1").unwrap(),
            ..McpConfig::local(&core.url())
        };
        let mut stops = Vec::new();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            hado_gateway_http::run(http_config, web_listener, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        stops.push((stop, task));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            hado_gateway_mcp::run(mcp_config, mcp_listener, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        stops.push((stop, task));
        Self { core, mcp, web, stops }
    }

    async fn stop(self) {
        for (stop, task) in self.stops {
            let _ = stop.send(());
            task.await.unwrap();
        }
        self.core.stop().await;
    }
}

/// A client that does not follow redirects, so that each one can be read.
fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(Policy::none()).build().unwrap()
}

async fn the_python_sdk_signs_in_refreshes_and_is_stopped_by_disconnect(backend: Backend) {
    let found = testing::runs("python3", &["-c", "import mcp.client.auth, httpx2"]);
    if !testing::tool_available(
        "the Python MCP SDK's OAuth scenario",
        found,
        "pip install 'mcp>=2,<3'",
    ) {
        return;
    }
    let stack = Stack::start(&backend).await;
    // Over streamable HTTP, and over the legacy SSE transport, which has
    // resource metadata of its own.
    for transport in ["streamable", "sse"] {
        let mut scenario = tokio::process::Command::new("python3");
        scenario.arg(SCENARIO).arg(&stack.mcp).arg(&stack.web).arg("anna").arg(transport);
        let output = scenario.output().await.expect("python3 runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "the SDK's OAuth scenario over {transport} failed:\n{stdout}\n{stderr}"
        );
        for step in ["signed in:", "tools: 12 listed", "refreshed:", "disconnected:"] {
            assert!(stdout.contains(step), "{transport}: {step} missing from:\n{stdout}");
        }
    }
    // The events the agent made are the person's.
    let events = stack
        .core
        .inbox_as("anna")
        .list_events(v1::ListEventsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .events;
    assert_eq!(
        events.iter().map(|event| event.title.as_str()).collect::<Vec<_>>(),
        ["Renew the visa", "Renew the visa"]
    );
    stack.stop().await;
}

/// Registers a client with one redirect URI; its client_id.
async fn register(stack: &Stack) -> String {
    let reply = client()
        .post(format!("{}/register", stack.mcp))
        .json(&json!({ "client_name": "Probe", "redirect_uris": [REDIRECT] }))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), StatusCode::CREATED);
    let body: Value = reply.json().await.unwrap();
    assert_eq!(body["token_endpoint_auth_method"], "none");
    body["client_id"].as_str().unwrap().to_owned()
}

/// The authorization request's query, with `changes` applied.
fn authorization(client_id: &str, changes: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut query: Vec<(String, String)> = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
        ("state", "xyz"),
    ]
    .iter()
    .map(|(name, value)| (name.to_string(), value.to_string()))
    .collect();
    for (name, value) in changes {
        query.retain(|(existing, _)| existing != name);
        if !value.is_empty() {
            query.push((name.to_string(), value.to_string()));
        }
    }
    query
}

/// The authorization page's address with `query`.
fn page_url(stack: &Stack, query: &[(String, String)]) -> reqwest::Url {
    let mut url = reqwest::Url::parse(&format!("{}/oauth/authorize", stack.web)).unwrap();
    url.query_pairs_mut().extend_pairs(query);
    url
}

/// The person (anna) presses Allow or Deny; where the browser is sent.
async fn answer(stack: &Stack, query: &[(String, String)], decision: &str) -> reqwest::Response {
    let mut form = query.to_vec();
    form.push(("decision".into(), decision.into()));
    client()
        .post(format!("{}/oauth/authorize", stack.web))
        .header("x-remote-user", "anna")
        .form(&form)
        .send()
        .await
        .unwrap()
}

/// The query of the URL a redirect sends the browser to.
fn landed(response: &reqwest::Response) -> HashMap<String, String> {
    assert!(response.status().is_redirection(), "not a redirect: {}", response.status());
    let location = response.headers()["location"].to_str().unwrap();
    assert!(location.starts_with(REDIRECT), "{location}");
    reqwest::Url::parse(location).unwrap().query_pairs().into_owned().collect()
}

/// A code for `client_id`, with `changes` to the authorization request.
async fn code(stack: &Stack, client_id: &str, changes: &[(&str, &str)]) -> String {
    let query = landed(&answer(stack, &authorization(client_id, changes), "allow").await);
    assert_eq!(query["state"], "xyz");
    query["code"].clone()
}

async fn token(stack: &Stack, form: &[(&str, &str)]) -> (StatusCode, Value) {
    let reply = client().post(format!("{}/token", stack.mcp)).form(form).send().await.unwrap();
    (reply.status(), reply.json().await.unwrap())
}

async fn exchange(
    stack: &Stack,
    client_id: &str,
    code: &str,
    verifier: &str,
) -> (StatusCode, Value) {
    token(
        stack,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", client_id),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", verifier),
        ],
    )
    .await
}

/// A tool call with `access_token`: its status.
async fn call(stack: &Stack, access_token: &str) -> StatusCode {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "get_profile", "arguments": {} } });
    client()
        .post(format!("{}/mcp", stack.mcp))
        .bearer_auth(access_token)
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
}

async fn connected_apps(stack: &Stack) -> usize {
    stack
        .core
        .inbox_as("anna")
        .list_connected_apps(v1::ListConnectedAppsRequest {})
        .await
        .unwrap()
        .into_inner()
        .apps
        .len()
}

fn refused(reply: &(StatusCode, Value), status: StatusCode, code: &str) {
    assert_eq!((reply.0, reply.1["error"].as_str()), (status, Some(code)), "{}", reply.1);
    assert!(
        !reply.1["error_description"].as_str().unwrap_or("").is_empty(),
        "a refusal says why: {}",
        reply.1
    );
}

async fn each_bad_request_is_refused_with_the_rfcs_code_and_changes_nothing(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let http = client();

    // Discovery: the 401 points at the resource metadata, which names the
    // authorization server, whose metadata names the endpoints.
    let unauthorized = http
        .post(format!("{}/mcp", stack.mcp))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorized.status(), StatusCode::UNAUTHORIZED);
    let challenge = unauthorized.headers()["www-authenticate"].to_str().unwrap().to_owned();
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", stack.mcp);
    assert!(challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")), "{challenge}");
    let resource: Value = http.get(&metadata_url).send().await.unwrap().json().await.unwrap();
    assert_eq!(resource["resource"], format!("{}/mcp", stack.mcp));
    assert_eq!(resource["authorization_servers"], json!([stack.mcp]));
    // The legacy SSE endpoint is a resource of its own, with its own
    // metadata (RFC 9728 section 3.1), and its 401 points there.
    for path in ["/sse", "/messages?sessionId=x"] {
        let request = if path == "/sse" {
            http.get(format!("{}{path}", stack.mcp))
        } else {
            http.post(format!("{}{path}", stack.mcp)).json(&json!({}))
        };
        let unauthorized = request.send().await.unwrap();
        assert_eq!(unauthorized.status(), StatusCode::UNAUTHORIZED, "{path}");
        let challenge = unauthorized.headers()["www-authenticate"].to_str().unwrap().to_owned();
        let sse_metadata = format!("{}/.well-known/oauth-protected-resource/sse", stack.mcp);
        assert!(
            challenge.contains(&format!("resource_metadata=\"{sse_metadata}\"")),
            "{path}: {challenge}"
        );
        let resource: Value = http.get(&sse_metadata).send().await.unwrap().json().await.unwrap();
        assert_eq!(resource["resource"], format!("{}/sse", stack.mcp));
    }
    let server: Value = http
        .get(format!("{}/.well-known/oauth-authorization-server", stack.mcp))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(server["issuer"], stack.mcp);
    assert_eq!(server["authorization_endpoint"], format!("{}/oauth/authorize", stack.web));
    assert_eq!(server["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(server["client_id_metadata_document_supported"], true);
    let foreign = http
        .get(format!("{}/.well-known/oauth-authorization-server", stack.mcp))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN, "a foreign Host is refused");

    // Registration: bad metadata and an oversized body are refused.
    let bad = http
        .post(format!("{}/register", stack.mcp))
        .json(&json!({ "redirect_uris": ["http://evil.example/cb"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    assert_eq!(bad.json::<Value>().await.unwrap()["error"], "invalid_redirect_uri");
    let huge = http
        .post(format!("{}/register", stack.mcp))
        .header("content-type", "application/json")
        .body(vec![b' '; 17 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(huge.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let client_id = register(&stack).await;

    // The consent page: only for a signed-in person; names the app; a
    // foreign redirect URI is shown to the person and never redirected to.
    let signed_out =
        http.get(page_url(&stack, &authorization(&client_id, &[]))).send().await.unwrap();
    assert_eq!(signed_out.status(), StatusCode::UNAUTHORIZED);
    let page = http
        .get(page_url(&stack, &authorization(&client_id, &[])))
        .header("x-remote-user", "anna")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(
        page.contains("Probe") && page.contains("127.0.0.1") && page.contains("value=\"allow\""),
        "{page}"
    );
    let foreign_redirect =
        authorization(&client_id, &[("redirect_uri", "https://evil.example/cb")]);
    let shown = http
        .get(page_url(&stack, &foreign_redirect))
        .header("x-remote-user", "anna")
        .send()
        .await
        .unwrap();
    assert_eq!(shown.status(), StatusCode::BAD_REQUEST);
    assert!(shown.headers().get("location").is_none());
    assert!(shown.text().await.unwrap().contains("invalid_request"));
    assert!(
        answer(&stack, &foreign_redirect, "allow").await.headers().get("location").is_none(),
        "Allow does not redirect there either"
    );
    // Without PKCE, or with plain PKCE: a page for the person, with no
    // Location, on the page and on Allow alike.
    for change in [("code_challenge", ""), ("code_challenge_method", "plain")] {
        let malformed = authorization(&client_id, &[change]);
        let allowed = answer(&stack, &malformed, "allow").await;
        assert_eq!(allowed.status(), StatusCode::BAD_REQUEST, "{change:?}");
        assert!(allowed.headers().get("location").is_none(), "{change:?}");
        assert!(allowed.text().await.unwrap().contains("invalid_request"), "{change:?}");
    }
    let denied = landed(&answer(&stack, &authorization(&client_id, &[]), "deny").await);
    assert_eq!(
        (denied["error"].as_str(), denied["state"].as_str(), denied["iss"].as_str()),
        ("access_denied", "xyz", stack.mcp.as_str())
    );
    let cross_site = client()
        .post(format!("{}/oauth/authorize", stack.web))
        .header("x-remote-user", "anna")
        .header("origin", "https://evil.example")
        .form(&[("client_id", client_id.as_str()), ("decision", "allow")])
        .send()
        .await
        .unwrap();
    assert_eq!(
        cross_site.status(),
        StatusCode::FORBIDDEN,
        "another site's page cannot press Allow"
    );
    assert_eq!(connected_apps(&stack).await, 0);

    // The token endpoint. A wrong verifier is refused and the code still
    // works with the right one; a second use is refused and revokes what
    // the first gave.
    let first = code(&stack, &client_id, &[]).await;
    refused(
        &exchange(&stack, &client_id, &first, "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXX").await,
        StatusCode::BAD_REQUEST,
        "invalid_grant",
    );
    refused(
        &exchange(&stack, &client_id, &first, "").await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
    refused(
        &exchange(&stack, "hado_client_other", &first, VERIFIER).await,
        StatusCode::BAD_REQUEST,
        "invalid_grant",
    );
    let wrong_redirect = [
        ("grant_type", "authorization_code"),
        ("client_id", &client_id),
        ("code", &first),
        ("redirect_uri", "http://127.0.0.1:9/other"),
        ("code_verifier", VERIFIER),
    ];
    refused(&token(&stack, &wrong_redirect).await, StatusCode::BAD_REQUEST, "invalid_grant");
    assert_eq!(connected_apps(&stack).await, 0, "no refusal connected anything");
    let (status, tokens) = exchange(&stack, &client_id, &first, VERIFIER).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(
        (tokens["token_type"].as_str(), tokens["expires_in"].as_u64()),
        (Some("Bearer"), Some(3600))
    );
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    assert_eq!(call(&stack, &access).await, StatusCode::OK);
    assert_eq!(connected_apps(&stack).await, 1);
    refused(
        &exchange(&stack, &client_id, &first, VERIFIER).await,
        StatusCode::BAD_REQUEST,
        "invalid_grant",
    );
    assert_eq!(
        call(&stack, &access).await,
        StatusCode::UNAUTHORIZED,
        "reusing the code revoked its tokens"
    );
    assert_eq!(connected_apps(&stack).await, 0);

    // A token for another resource: asked for at the token endpoint, or
    // carried by a code that was issued for it.
    let second = code(&stack, &client_id, &[]).await;
    let elsewhere = [
        ("grant_type", "authorization_code"),
        ("client_id", client_id.as_str()),
        ("code", second.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("resource", "https://elsewhere.example/mcp"),
    ];
    refused(&token(&stack, &elsewhere).await, StatusCode::BAD_REQUEST, "invalid_target");
    // A code for another server is never issued: the page refuses it
    // before the person is asked, and Allow sends nothing back.
    let for_elsewhere = authorization(&client_id, &[("resource", "https://elsewhere.example/mcp")]);
    let codes = stack.core.authorization_codes().await;
    let shown = http
        .get(page_url(&stack, &for_elsewhere))
        .header("x-remote-user", "anna")
        .send()
        .await
        .unwrap();
    assert_eq!(shown.status(), StatusCode::BAD_REQUEST);
    assert!(shown.headers().get("location").is_none());
    let shown = shown.text().await.unwrap();
    assert!(shown.contains("invalid_target") && !shown.contains("value=\"allow\""), "{shown}");
    let allowed = answer(&stack, &for_elsewhere, "allow").await;
    assert_eq!(allowed.status(), StatusCode::BAD_REQUEST);
    assert!(allowed.headers().get("location").is_none());
    assert_eq!(stack.core.authorization_codes().await, codes, "no code was issued");
    assert_eq!(connected_apps(&stack).await, 0);

    // An expired code: five minutes later, core refuses it.
    stack.core.clock.advance(chrono::Duration::minutes(6));
    refused(
        &exchange(&stack, &client_id, &second, VERIFIER).await,
        StatusCode::BAD_REQUEST,
        "invalid_grant",
    );
    assert_eq!(connected_apps(&stack).await, 0);

    // Grant types and clients that are not offered or not known.
    refused(
        &token(&stack, &[("grant_type", "password"), ("client_id", &client_id)]).await,
        StatusCode::BAD_REQUEST,
        "unsupported_grant_type",
    );
    refused(
        &token(
            &stack,
            &[
                ("grant_type", "refresh_token"),
                ("client_id", &client_id),
                ("refresh_token", "hado_rt_nope"),
            ],
        )
        .await,
        StatusCode::BAD_REQUEST,
        "invalid_grant",
    );
    let no_form = http
        .post(format!("{}/token", stack.mcp))
        .json(&json!({"grant_type": "authorization_code"}))
        .send()
        .await
        .unwrap();
    assert_eq!(no_form.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        no_form.headers()["connection"],
        "close",
        "refused unread, the connection is not reused"
    );
    let unknown_client = authorization("hado_client_unknown", &[]);
    let shown = http
        .get(page_url(&stack, &unknown_client))
        .header("x-remote-user", "anna")
        .send()
        .await
        .unwrap();
    assert_eq!(shown.status(), StatusCode::BAD_REQUEST);
    assert!(shown.text().await.unwrap().contains("invalid_client"));

    // Never an open redirector (RFC 9700 section 4.11.2): anyone can
    // register a redirect URI, so a malformed request goes back to none,
    // even one the client named and registered exactly; each is a page,
    // with no Location, on the page and on Allow and Deny.
    let long_state = "s".repeat(1001);
    for (changes, expected) in [
        (vec![("response_type", "token")], "unsupported_response_type"),
        (vec![("code_challenge", "")], "invalid_request"),
        (vec![("code_challenge", "too-short")], "invalid_request"),
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (vec![("resource", "https://elsewhere.example/mcp")], "invalid_target"),
        (vec![("scope", "inbox \"all\"")], "invalid_scope"),
        (vec![("state", long_state.as_str())], "invalid_request"),
        (vec![("redirect_uri", ""), ("response_type", "token")], "unsupported_response_type"),
        (vec![("redirect_uri", ""), ("code_challenge", "")], "invalid_request"),
        (
            vec![("redirect_uri", "https://evil.example/cb"), ("response_type", "token")],
            "invalid_request",
        ),
        (
            vec![
                ("redirect_uri", &format!("{REDIRECT}/extra")),
                ("code_challenge_method", "plain"),
            ],
            "invalid_request",
        ),
    ] {
        let malformed = authorization(&client_id, &changes);
        let shown = http
            .get(page_url(&stack, &malformed))
            .header("x-remote-user", "anna")
            .send()
            .await
            .unwrap();
        assert_eq!(shown.status(), StatusCode::BAD_REQUEST, "{changes:?}");
        assert!(shown.headers().get("location").is_none(), "{changes:?}");
        assert!(shown.text().await.unwrap().contains(expected), "{changes:?}");
        for decision in ["allow", "deny"] {
            let answered = answer(&stack, &malformed, decision).await;
            assert_eq!(answered.status(), StatusCode::BAD_REQUEST, "{decision}: {changes:?}");
            assert!(answered.headers().get("location").is_none(), "{decision}: {changes:?}");
        }
    }

    // The page refuses a request that is too long, and more than 30 a
    // minute from one person, before core is asked.
    let long = authorization(&client_id, &[("state", &"s".repeat(17 * 1024))]);
    let too_long =
        http.get(page_url(&stack, &long)).header("x-remote-user", "anna").send().await.unwrap();
    assert_eq!(too_long.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // Only answers count against the allowance: another site can make a
    // browser fetch the page, or post to it and be refused, but not use
    // the person's allowance up.
    let mut pages = Vec::new();
    for _ in 0..32 {
        let page = http
            .get(page_url(&stack, &authorization(&client_id, &[])))
            .header("x-remote-user", "bob")
            .header("sec-fetch-site", "cross-site");
        pages.push(page.send().await.unwrap().status());
        let mut form = authorization(&client_id, &[]);
        form.push(("decision".into(), "deny".into()));
        let forged = client()
            .post(format!("{}/oauth/authorize", stack.web))
            .header("x-remote-user", "bob")
            .header("origin", "https://evil.example");
        pages.push(forged.form(&form).send().await.unwrap().status());
    }
    assert!(
        pages.chunks(2).all(|pair| pair == [StatusCode::OK, StatusCode::FORBIDDEN]),
        "{pages:?}"
    );
    // The allowance refills as the minute passes, so on a slow machine a
    // few more than 30 may be answered before the first refusal.
    let mut answers = Vec::new();
    while answers.last() != Some(&StatusCode::TOO_MANY_REQUESTS) && answers.len() < 64 {
        let mut form = authorization(&client_id, &[]);
        form.push(("decision".into(), "deny".into()));
        answers.push(
            client()
                .post(format!("{}/oauth/authorize", stack.web))
                .header("x-remote-user", "bob")
                .form(&form)
                .send()
                .await
                .unwrap()
                .status(),
        );
    }
    let answered = answers.iter().take_while(|status| status.is_redirection()).count();
    assert!(
        (30..64).contains(&answered) && answers.last() == Some(&StatusCode::TOO_MANY_REQUESTS),
        "{answers:?}"
    );

    // Registration is rate-limited per client before core is asked: behind
    // the trusted proxy, per the right-most address it forwarded for.
    let register = |forwarded_for: &'static str| {
        let request =
            http.post(format!("{}/register", stack.mcp)).header("x-forwarded-for", forwarded_for);
        async move {
            request.json(&json!({ "redirect_uris": [REDIRECT] })).send().await.unwrap().status()
        }
    };
    let mut statuses = Vec::new();
    for _ in 0..12 {
        statuses.push(register("192.0.2.1, 203.0.113.9").await);
    }
    assert_eq!(statuses.last(), Some(&StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
    assert_eq!(
        register("203.0.113.9").await,
        StatusCode::TOO_MANY_REQUESTS,
        "a spoofed left entry does not make a new client"
    );
    assert_eq!(
        register("198.51.100.7").await,
        StatusCode::CREATED,
        "another client behind the same proxy has its own allowance"
    );
    stack.stop().await;
}

/// A client signed in to several servers sends a code only to the server
/// that issued it (RFC 9207): the issuer an answer names is the issuer of
/// the metadata it discovered, which says that answers name it.
async fn every_answer_names_the_issuer_of_the_metadata(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let server: Value = client()
        .get(format!("{}/.well-known/oauth-authorization-server", stack.mcp))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(server["authorization_response_iss_parameter_supported"], true);
    let issuer = server["issuer"].as_str().unwrap().to_owned();
    let client_id = register(&stack).await;
    for resource in ["", &format!("{}/mcp", stack.mcp), &format!("{}/sse", stack.mcp)] {
        let allowed = landed(
            &answer(&stack, &authorization(&client_id, &[("resource", resource)]), "allow").await,
        );
        assert_eq!(allowed["iss"], issuer, "the code's answer names the issuer ({resource:?})");
        let form = [
            ("grant_type", "authorization_code"),
            ("client_id", &client_id),
            ("code", &allowed["code"]),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("resource", resource),
        ];
        let (status, tokens) = token(&stack, &form).await;
        assert_eq!(status, StatusCode::OK, "{tokens}");
    }
    let denied = landed(&answer(&stack, &authorization(&client_id, &[]), "deny").await);
    assert_eq!(denied["iss"], issuer, "so does a denial's");
    stack.stop().await;
}

/// A refused request is told to the person in their language, naming what
/// is wrong; and an inbox that does not know where agents reach
/// gateway-mcp lets no app sign in rather than guess an issuer.
async fn a_refused_request_is_a_page_in_the_persons_language(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let client_id = register(&stack).await;
    stack
        .core
        .inbox_as("anna")
        .update_profile(v1::UpdateProfileRequest {
            locale: Some("ru".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    for (changes, words) in [
        (vec![("code_challenge", "")], "нет верного PKCE-вызова"),
        (vec![("resource", "https://elsewhere.example/mcp")], "на другой сервер"),
        (vec![("redirect_uri", "https://evil.example/cb")], "не регистрировало"),
    ] {
        let page = client()
            .get(page_url(&stack, &authorization(&client_id, &changes)))
            .header("x-remote-user", "anna")
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), StatusCode::BAD_REQUEST);
        let page = page.text().await.unwrap();
        assert!(page.contains(words) && page.contains("Для разработчика"), "{changes:?}: {page}");
    }
    let english = client()
        .get(page_url(&stack, &authorization(&client_id, &[("code_challenge", "")])))
        .header("x-remote-user", "bob")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        english.contains("no valid PKCE challenge") && english.contains("(code_challenge)"),
        "{english}"
    );
    stack.stop().await;

    let stack = Stack::start_with(&backend, |config| config.mcp_url = None).await;
    let client_id = register(&stack).await;
    let page = client()
        .get(page_url(&stack, &authorization(&client_id, &[])))
        .header("x-remote-user", "anna")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(page.text().await.unwrap().contains("HADO_MCP_URL"));
    let allowed = answer(&stack, &authorization(&client_id, &[]), "allow").await;
    assert!(allowed.headers().get("location").is_none());
    assert_eq!(stack.core.authorization_codes().await, 0);
    stack.stop().await;
}

/// `tools/list` with `access_token`: the status and how many tools it lists.
async fn list_tools(stack: &Stack, access_token: &str) -> (StatusCode, usize) {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let reply = client()
        .post(format!("{}/mcp", stack.mcp))
        .bearer_auth(access_token)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = reply.status();
    let listed: Value = reply.json().await.unwrap_or_default();
    (status, listed["result"]["tools"].as_array().map_or(0, Vec::len))
}

/// A client whose access token ran out while two requests were under way
/// refreshes twice at once with one refresh token: both get the one new
/// pair, which works, rather than the second use revoking the first's. A
/// repeat past the grace window still revokes the grant.
async fn two_refreshes_at_once_get_one_pair_that_works(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let client_id = register(&stack).await;
    let (status, first) =
        exchange(&stack, &client_id, &code(&stack, &client_id, &[]).await, VERIFIER).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let old = first["refresh_token"].as_str().unwrap().to_owned();
    let form = [
        ("grant_type", "refresh_token"),
        ("client_id", client_id.as_str()),
        ("refresh_token", old.as_str()),
    ];
    let ((one_status, one), (two_status, two)) =
        tokio::join!(token(&stack, &form), token(&stack, &form));
    assert_eq!((one_status, two_status), (StatusCode::OK, StatusCode::OK), "{one} {two}");
    assert_eq!(
        (&one["access_token"], &one["refresh_token"]),
        (&two["access_token"], &two["refresh_token"]),
        "one answer for both"
    );
    let access = one["access_token"].as_str().unwrap();
    assert_eq!(list_tools(&stack, access).await, (StatusCode::OK, 12));
    assert_eq!(connected_apps(&stack).await, 1);

    stack.core.clock.advance(chrono::Duration::seconds(6));
    refused(&token(&stack, &form).await, StatusCode::BAD_REQUEST, "invalid_grant");
    assert_eq!(
        list_tools(&stack, access).await.0,
        StatusCode::UNAUTHORIZED,
        "the grant is revoked"
    );
    assert_eq!(connected_apps(&stack).await, 0);
    stack.stop().await;
}

/// Opens a legacy event stream with `token`: the response, streaming.
async fn open_stream(stack: &Stack, token: &str) -> reqwest::Response {
    client().get(format!("{}/sse", stack.mcp)).bearer_auth(token).send().await.unwrap()
}

/// Event streams are counted per person, whatever tokens they come with,
/// and a disconnected app's or a revoked token's streams end within seconds.
async fn a_persons_streams_are_capped_and_end_with_their_token(backend: Backend) {
    let stack = Stack::start(&backend).await;
    let client_id = register(&stack).await;
    let mut access = Vec::new();
    for _ in 0..3 {
        let (status, tokens) =
            exchange(&stack, &client_id, &code(&stack, &client_id, &[]).await, VERIFIER).await;
        assert_eq!(status, StatusCode::OK, "{tokens}");
        access.push(tokens["access_token"].as_str().unwrap().to_owned());
    }
    let agent = stack
        .core
        .admin()
        .issue_agent_token(v1::UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    // Eight streams over four tokens of one person: the ninth is refused,
    // with whichever token it comes.
    let mut open = Vec::new();
    for index in 0..8 {
        let token = if index < 2 { &agent } else { &access[index % 3] };
        let stream = open_stream(&stack, token).await;
        assert_eq!(stream.status(), StatusCode::OK, "stream {index}");
        open.push(stream);
    }
    for token in [&agent, &access[0]] {
        let refused = open_stream(&stack, token).await;
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(refused.text().await.unwrap().contains("per person"));
    }
    let bob = stack
        .core
        .admin()
        .issue_agent_token(v1::UserLogin { login: "bob".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    assert_eq!(
        open_stream(&stack, &bob).await.status(),
        StatusCode::OK,
        "another person has their own streams"
    );

    // Disconnect in Settings ends the app's streams within seconds; the
    // agent token's streams go on until it is revoked.
    for stream in &mut open {
        stream.chunk().await.unwrap().expect("the endpoint event");
    }
    let apps = stack
        .core
        .inbox_as("anna")
        .list_connected_apps(v1::ListConnectedAppsRequest {})
        .await
        .unwrap()
        .into_inner()
        .apps;
    for app in apps {
        stack
            .core
            .inbox_as("anna")
            .disconnect_app(v1::ConnectedAppId { id: app.id })
            .await
            .unwrap();
    }
    let (by_agent, by_app) = open.split_at_mut(2);
    for stream in by_app {
        let ended = tokio::time::timeout(std::time::Duration::from_secs(8), async {
            while let Ok(Some(_)) = stream.chunk().await {}
        });
        assert!(ended.await.is_ok(), "a disconnected app's stream was still open after 8 s");
    }
    let still =
        tokio::time::timeout(std::time::Duration::from_millis(500), by_agent[0].chunk()).await;
    assert!(still.is_err(), "the agent token's stream stays open: {still:?}");
    stack.core.admin().revoke_agent_token(v1::UserLogin { login: "anna".into() }).await.unwrap();
    for stream in by_agent {
        let ended = tokio::time::timeout(std::time::Duration::from_secs(8), async {
            while let Ok(Some(_)) = stream.chunk().await {}
        });
        assert!(ended.await.is_ok(), "a revoked token's stream was still open after 8 s");
    }
    // Their places are free again.
    let (status, tokens) =
        exchange(&stack, &client_id, &code(&stack, &client_id, &[]).await, VERIFIER).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(
        open_stream(&stack, tokens["access_token"].as_str().unwrap()).await.status(),
        StatusCode::OK
    );
    stack.stop().await;
}

hado_testing::on_both_backends!(
    every_answer_names_the_issuer_of_the_metadata,
    two_refreshes_at_once_get_one_pair_that_works,
    a_refused_request_is_a_page_in_the_persons_language,
    a_persons_streams_are_capped_and_end_with_their_token,
    the_python_sdk_signs_in_refreshes_and_is_stopped_by_disconnect,
    each_bad_request_is_refused_with_the_rfcs_code_and_changes_nothing
);
