//! gateway-http through the real stack: core on an ephemeral port over a
//! fresh database (SQLite, and Postgres when its URL is set), the gateway in
//! front of it, and plain HTTP from reqwest.

use crate::common;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use common::Gateway;
use hado_gateway::TrustedProxies;
use hado_testing::{Backend, TestCore};

/// How the gateway under test decides who the inbox's person is.
#[derive(Clone, Copy)]
enum Trust {
    /// Requests from loopback (the test) come through a trusted proxy.
    LoopbackProxy,
    /// Only some other address is trusted; loopback is an ordinary peer.
    OtherProxy,
    /// Local mode: no proxy, one local user.
    LocalUser,
}

struct Stack {
    core: TestCore,
    gateway: Gateway,
    base: String,
    client: reqwest::Client,
}

impl Stack {
    async fn start(backend: &Backend, trust: Trust) -> Self {
        let core = TestCore::start(backend, "2026-12-01T10:00:00Z").await;
        let mut config = common::config(&core);
        config.trusted_proxies = match trust {
            Trust::LoopbackProxy => TrustedProxies::parse("127.0.0.0/8").unwrap(),
            Trust::OtherProxy | Trust::LocalUser => TrustedProxies::parse("10.0.0.1").unwrap(),
        };
        config.local_user = matches!(trust, Trust::LocalUser).then(|| "me".to_owned());
        config.mcp_url = Some("https://hado.example.com/mcp".into());
        let gateway = Gateway::start(config).await;
        Self { core, base: gateway.base.clone(), gateway, client: reqwest::Client::new() }
    }

    /// Sends a request; `body` goes as JSON. Returns the status and the JSON reply.
    async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.client.request(method.clone(), format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        match body {
            Some(body) => request = request.json(&body),
            // Writes under /me are taken as JSON only, whether or not they carry a body.
            None if method != Method::GET => {
                request = request.header("content-type", "application/json")
            }
            None => {}
        }
        let response = request.send().await.expect("the gateway answers");
        let status = response.status();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    async fn stop(self) {
        self.gateway.stop().await;
        self.core.stop().await;
    }
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn item(user: &str, source_ref: &str, title: &str, due_at: &str) -> Value {
    json!({"user": user, "ref": source_ref, "title": title, "due_at": due_at})
}

async fn the_rest_contract_holds(backend: Backend) {
    let stack = Stack::start(&backend, Trust::OtherProxy).await;
    let docs = bearer(&stack.core.source_token("docs").await);
    let auth = [("authorization", docs.as_str())];

    let batch = json!({"events": [item("anna", "visa", "Visa", "2026-12-14"), item("anna", "passport", "Passport", "2027-06-01")]});
    let (status, reply) = stack.send(Method::POST, "/api/events", &auth, Some(batch.clone())).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let outcomes: Vec<&str> = reply["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| result["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["created", "created"]);
    assert_eq!(
        (reply["results"][0]["state"].as_str(), reply["results"][1]["state"].as_str()),
        (Some("preparing"), Some("scheduled"))
    );
    let visa_id = reply["results"][0]["id"].as_i64().unwrap();
    let (_, again) = stack.send(Method::POST, "/api/events", &auth, Some(batch)).await;
    assert_eq!(again["results"][0]["outcome"], "unchanged");
    let moved = json!({"events": [item("anna", "visa", "Visa", "2026-12-20")]});
    assert_eq!(
        stack.send(Method::POST, "/api/events", &auth, Some(moved)).await.1["results"][0]["outcome"],
        "rescheduled"
    );

    // Reading back: the client view, one ref or all.
    let (status, listed) =
        stack.send(Method::GET, "/api/events?user=anna&ref=visa", &auth, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed["events"].as_array().unwrap().len(), 1);
    let visa = &listed["events"][0];
    assert_eq!(
        (visa["id"].as_i64(), visa["ref"].as_str(), visa["due_at"].as_str()),
        (Some(visa_id), Some("visa"), Some("2026-12-20"))
    );
    assert!(
        visa.get("editable").is_none() && visa.get("source").is_none(),
        "the client view: {visa}"
    );
    assert_eq!(
        stack.send(Method::GET, "/api/events?user=anna", &auth, None).await.1["events"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // A source sees a closed event as closed.
    stack.core.inbox_as("anna").mark_done(hado_proto::v1::EventId { id: visa_id }).await.unwrap();
    assert_eq!(
        stack.send(Method::GET, "/api/events?user=anna&ref=visa", &auth, None).await.1["events"][0]
            ["state"],
        "done"
    );

    // Withdrawing: a known key and an unknown one; pushing again revives.
    let keys = json!({"events": [{"user": "anna", "ref": "passport"}, {"user": "anna", "ref": "nothing"}]});
    let (status, withdrawn) =
        stack.send(Method::POST, "/api/events/withdraw", &auth, Some(keys)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(withdrawn["results"][0]["state"], "withdrawn");
    assert_eq!(withdrawn["results"][1], json!({"found": false}));
    let revived = json!({"events": [item("anna", "passport", "Passport", "2027-06-01")]});
    assert_eq!(
        stack.send(Method::POST, "/api/events", &auth, Some(revived)).await.1["results"][0]["outcome"],
        "revived"
    );

    // An invalid batch names every bad item and writes nothing.
    let bad = json!({"events": [
        item("anna", "fine", "Fine", "2027-01-01"),
        item("anna", "no-title", "  ", "2027-01-01"),
        {"user": "anna", "ref": "bad-date", "title": "Bad", "due_at": "2027-02-30", "fire_at": "2027-03-01"},
        {"user": "Anna Smith", "ref": "x", "title": "x", "due_at": "2027-01-01", "deep_link": "javascript:alert(1)"},
    ]});
    let (status, error) = stack.send(Method::POST, "/api/events", &auth, Some(bad)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
    let violations: Vec<(i64, &str)> = error["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|violation| {
            (violation["index"].as_i64().unwrap(), violation["field"].as_str().unwrap())
        })
        .collect();
    assert!(
        violations.contains(&(1, "title"))
            && violations.contains(&(2, "due_at"))
            && violations.contains(&(3, "user"))
            && violations.contains(&(3, "deep_link")),
        "{error}"
    );
    assert!(!violations.iter().any(|(index, _)| *index == 0), "the good item is not blamed");
    assert!(error["violations"][0]["message"].as_str().is_some_and(|message| !message.is_empty()));
    assert_eq!(
        stack.send(Method::GET, "/api/events?user=anna&ref=fine", &auth, None).await.1["events"],
        json!([]),
        "nothing was written"
    );
    // A missing required field is reported with the others, by index.
    let (_, missing) = stack
        .send(
            Method::POST,
            "/api/events",
            &auth,
            Some(json!({"events": [{"user": "anna", "ref": "r"}]})),
        )
        .await;
    let fields: Vec<&str> = missing["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|violation| violation["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"title") && fields.contains(&"due_at"), "{missing}");
    // Wrong shapes: the JSON path names the field.
    let (status, shape) =
        stack.send(Method::POST, "/api/events", &auth, Some(json!({"events": [{"user": "anna", "ref": "r", "title": 5, "due_at": "2027-01-01"}]}))).await;
    assert_eq!(
        (
            status,
            shape["violations"][0]["index"].as_i64(),
            shape["violations"][0]["field"].as_str()
        ),
        (StatusCode::UNPROCESSABLE_ENTITY, Some(0), Some("title"))
    );
    let (status, _) = stack
        .send(Method::POST, "/api/events", &auth, Some(json!({"events": [], "extra": 1})))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    // A whole batch of bad items is reported in full (far beyond HTTP/2's usual header size).
    let all_bad: Vec<Value> = (0..1000).map(|index| json!({"user": "Anna K", "ref": format!("r{index}"), "title": " ", "due_at": "2027-13-01"})).collect();
    let (status, error) =
        stack.send(Method::POST, "/api/events", &auth, Some(json!({ "events": all_bad }))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        error["violations"].as_array().unwrap().len(),
        3000,
        "every violation of every item"
    );
    // Each carries its machine code, as a single event's violations do.
    let codes: Vec<(Option<&str>, Option<&str>)> = error["violations"].as_array().unwrap()[..3]
        .iter()
        .map(|violation| (violation["field"].as_str(), violation["code"].as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            (Some("user"), Some("NOT_A_LOGIN")),
            (Some("title"), Some("REQUIRED")),
            (Some("due_at"), Some("NOT_A_DUE_MOMENT"))
        ],
        "{codes:?}"
    );
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .ends_with("and 2980 more, all listed in the error details")
    );
    // Arrays never stand in for objects.
    for body in [json!([[]]), json!({"events": [["anna", "visa", "Visa", "2027-01-01"]]})] {
        let (status, error) = stack.send(Method::POST, "/api/events", &auth, Some(body)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
        assert!(error["error"].as_str().unwrap().ends_with("expected an object, found an array"));
    }
    // A key twice in one object is refused, named with its place, and nothing is written.
    let twice = r#"{"events": [{"user": "anna", "ref": "dup", "title": "Visa", "title": "Passport", "due_at": "2027-01-01"}]}"#;
    let raw = stack
        .client
        .post(format!("{}/api/events", stack.base))
        .header("authorization", &docs)
        .header("content-type", "application/json")
        .body(twice);
    let reply = raw.send().await.unwrap();
    assert_eq!(reply.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let error: Value = reply.json().await.unwrap();
    assert_eq!(
        (error["violations"][0]["index"].as_i64(), error["violations"][0]["field"].as_str()),
        (Some(0), Some("title")),
        "{error}"
    );
    assert!(
        error["error"].as_str().unwrap().contains(r#"the key "title" appears twice"#),
        "{error}"
    );
    let (_, listed) = stack.send(Method::GET, "/api/events?user=anna&ref=dup", &auth, None).await;
    assert_eq!(listed["events"].as_array().map(Vec::len), Some(0), "{listed}");
    let too_many: Vec<Value> =
        (0..1001).map(|index| item("anna", &format!("r{index}"), "t", "2027-01-01")).collect();
    let (status, error) =
        stack.send(Method::POST, "/api/events", &auth, Some(json!({ "events": too_many }))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
    let raw = stack
        .client
        .post(format!("{}/api/events", stack.base))
        .header("authorization", &docs)
        .body("{\"events\": [")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let raw = stack
        .client
        .post(format!("{}/api/events", stack.base))
        .header("authorization", &docs)
        .header("content-type", "application/json")
        .body("{\"events\": [")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), StatusCode::BAD_REQUEST);
    assert!(
        raw.json::<Value>().await.unwrap()["error"]
            .as_str()
            .unwrap()
            .starts_with("the body is not valid JSON")
    );
    let huge = format!(
        "{{\"events\": [], \"pad\": \"{}\"}}",
        "x".repeat(hado_gateway_http::MAX_BODY_BYTES)
    );
    let raw = stack
        .client
        .post(format!("{}/api/events", stack.base))
        .header("authorization", &docs)
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let (status, error) = stack.send(Method::GET, "/api/events", &auth, None).await;
    assert_eq!(
        (status, error["error"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("the user query parameter is required"))
    );

    // Credentials: none, unknown, the wrong kind; the header X-Remote-User changes nothing here.
    let agent = stack
        .core
        .admin()
        .issue_agent_token(hado_proto::v1::UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    for (headers, message) in [
        (
            vec![("x-remote-user", "anna")],
            "a source bearer token is required (Authorization: Bearer hado_src_…)",
        ),
        (vec![("authorization", "Bearer hado_src_0000")], "unknown source token"),
        (
            vec![("authorization", &*bearer(&agent))],
            "the Ingest service takes a source token (hado_src_…)",
        ),
    ] {
        let response = stack
            .client
            .get(format!("{}/api/events?user=anna", stack.base))
            .headers(headers_of(&headers))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        assert_eq!(response.json::<Value>().await.unwrap()["error"], message, "{headers:?}");
    }
    // A write refused before its body is read ends the connection, and says so,
    // so that the client's next request goes on a new one; one read to the end does not.
    let batch = r#"{"events":[]}"#;
    let refused = stack
        .client
        .post(format!("{}/api/events", stack.base))
        .header("content-type", "application/json")
        .body(batch)
        .send()
        .await
        .unwrap();
    assert_eq!(
        (
            refused.status(),
            refused.headers().get("connection").map(|value| value.to_str().unwrap())
        ),
        (StatusCode::UNAUTHORIZED, Some("close"))
    );
    let taken = stack
        .client
        .post(format!("{}/api/events", stack.base))
        .header("authorization", &docs)
        .header("content-type", "application/json")
        .body(batch)
        .send()
        .await
        .unwrap();
    assert!(taken.status().is_success() || taken.status().is_client_error(), "{}", taken.status());
    assert_eq!(
        taken.headers().get("connection"),
        None,
        "the body was read, so the connection stays: {}",
        taken.status()
    );
    // Another source sees none of docs' events.
    let mail = bearer(&stack.core.source_token("mail").await);
    assert_eq!(
        stack.send(Method::GET, "/api/events?user=anna", &[("authorization", &mail)], None).await.1
            ["events"],
        json!([])
    );

    // The OpenAPI document describes exactly these routes.
    let (status, document) = stack.send(Method::GET, "/openapi.json", &[], None).await;
    assert_eq!((status, document["openapi"].as_str()), (StatusCode::OK, Some("3.1.0")));
    let mut paths: Vec<&String> = document["paths"].as_object().unwrap().keys().collect();
    paths.sort();
    assert_eq!(paths, ["/api/events", "/api/events/withdraw", "/me/events"]);

    stack.stop().await;
}

fn headers_of(pairs: &[(&str, &str)]) -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in pairs {
        headers.insert(
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    headers
}

async fn the_inbox_user_comes_only_from_a_trusted_proxy_or_local_mode(backend: Backend) {
    // Loopback is not a trusted proxy: the header is ignored and the request refused.
    let stack = Stack::start(&backend, Trust::OtherProxy).await;
    for headers in [vec![("x-remote-user", "anna")], vec![]] {
        let (status, error) = stack.send(Method::GET, "/me", &headers, None).await;
        assert_eq!(
            (status, error["error"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("sign in through the proxy in front of Hado"))
        );
    }
    let (status, _) = stack
        .send(
            Method::POST,
            "/me/events",
            &[("x-remote-user", "anna")],
            Some(json!({"title": "x", "due_at": "2027-01-01"})),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        stack
            .core
            .inbox_as("anna")
            .list_events(hado_proto::v1::ListEventsRequest::default())
            .await
            .unwrap()
            .get_ref()
            .events
            .is_empty()
    );
    // /up never asks who you are.
    assert_eq!(
        stack.send(Method::GET, "/up", &[("x-remote-user", "anna")], None).await.0,
        StatusCode::OK
    );
    stack.stop().await;

    // Through the trusted proxy, the header names the user.
    let stack = Stack::start(&backend, Trust::LoopbackProxy).await;
    let (status, profile) =
        stack.send(Method::GET, "/me", &[("x-remote-user", "anna")], None).await;
    assert_eq!((status, profile["login"].as_str()), (StatusCode::OK, Some("anna")));
    let (status, error) = stack.send(Method::GET, "/me", &[], None).await;
    assert_eq!(
        (status, error["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("the trusted proxy did not name a user in X-Remote-User"))
    );
    // A proxy that adds its header to the client's, rather than replacing
    // it, must not let the client pick who it is: two headers (even one of
    // them empty) or two names joined into one are refused, on the JSON
    // routes and the pages alike, and nothing is done as either person.
    let ambiguous = "the trusted proxy named more than one user in X-Remote-User; it must \
                     replace a client's X-Remote-User header, not add to it";
    for headers in [
        vec![("x-remote-user", "anna"), ("x-remote-user", "bob")],
        vec![("x-remote-user", "anna"), ("x-remote-user", "anna")],
        vec![("x-remote-user", ""), ("x-remote-user", "anna")],
        vec![("x-remote-user", "anna"), ("x-remote-user", "")],
        vec![("x-remote-user", "bob, anna")],
        vec![("x-remote-user", "anna,")],
    ] {
        let (status, error) = stack.send(Method::GET, "/me", &headers, None).await;
        assert_eq!((status, error["error"].as_str()), (StatusCode::BAD_REQUEST, Some(ambiguous)));
        let (status, _) = stack
            .send(
                Method::POST,
                "/me/events",
                &headers,
                Some(json!({"title": "Chosen by the client", "due_at": "2027-01-01"})),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{headers:?}");
        let (status, page) = stack.send(Method::GET, "/", &headers, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{headers:?}");
        assert!(page.as_str().unwrap().contains("more than one person"), "{page}");
    }
    for login in ["anna", "bob"] {
        let listed = stack
            .core
            .inbox_as(login)
            .list_events(hado_proto::v1::ListEventsRequest::default())
            .await
            .unwrap();
        assert!(listed.get_ref().events.is_empty(), "nothing was created as {login}");
    }
    // Another user's id is not found.
    let (_, created) = stack
        .send(
            Method::POST,
            "/me/events",
            &[("x-remote-user", "anna")],
            Some(json!({"title": "Dentist", "due_at": "2026-12-20"})),
        )
        .await;
    let path = format!("/me/events/{}", created["id"]);
    for (method, suffix) in [
        (Method::GET, ""),
        (Method::POST, "/done"),
        (Method::POST, "/ack"),
        (Method::DELETE, ""),
        (Method::PATCH, ""),
    ] {
        let body = (method == Method::PATCH).then(|| json!({"title": "mine"}));
        let (status, error) = stack
            .send(method.clone(), &format!("{path}{suffix}"), &[("x-remote-user", "bob")], body)
            .await;
        assert_eq!(
            (status, error["error"].as_str(), error["code"].as_str()),
            (
                StatusCode::NOT_FOUND,
                Some(format!("event {} not found", created["id"]).as_str()),
                Some("EVENT_NOT_FOUND")
            ),
            "{method} {suffix}"
        );
    }
    stack.stop().await;

    // Local mode: the one local user, whatever the header says.
    let stack = Stack::start(&backend, Trust::LocalUser).await;
    let (status, profile) =
        stack.send(Method::GET, "/me", &[("x-remote-user", "anna")], None).await;
    assert_eq!((status, profile["login"].as_str()), (StatusCode::OK, Some("me")));
    stack.stop().await;
}

async fn the_inbox_json_api_works(backend: Backend) {
    let stack = Stack::start(&backend, Trust::LoopbackProxy).await;
    let anna = [("x-remote-user", "anna")];

    let (status, profile) = stack
        .send(Method::PATCH, "/me", &anna, Some(json!({"tz": "America/New_York", "locale": "ru"})))
        .await;
    assert_eq!(
        (status, profile["tz"].as_str(), profile["locale"].as_str()),
        (StatusCode::OK, Some("America/New_York"), Some("ru"))
    );
    assert_eq!(profile["local_time"], "2026-12-01T05:00 (Tuesday)");
    let (status, error) =
        stack.send(Method::PATCH, "/me", &anna, Some(json!({"quiet_start": "25:00"}))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error["violations"][0]["field"], "quiet_start");

    // A manual event with the inbox's defaults.
    let (status, created) = stack
        .send(
            Method::POST,
            "/me/events",
            &anna,
            Some(json!({"title": "Dentist", "due_at": "2026-12-20T15:00"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        (created["fire_at"].as_str(), created["after_due"].as_str(), created["editable"].as_bool()),
        (Some("2026-11-20"), Some("keep"), Some(true))
    );
    assert_eq!(created["done_label"], "Сделано", "the default label follows the user's language");
    let id = created["id"].as_i64().unwrap();
    let (status, error) = stack
        .send(Method::POST, "/me/events", &anna, Some(json!({"title": "", "due_at": "soon"})))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let fields: Vec<&str> = error["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|violation| violation["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["title", "due_at"]);

    let (_, listed) = stack.send(Method::GET, "/me/events", &anna, None).await;
    assert_eq!(listed["events"][0]["id"].as_i64(), Some(id));
    assert_eq!(
        stack.send(Method::GET, "/me/events?state=overdue", &anna, None).await.1["events"],
        json!([])
    );
    let (status, error) = stack.send(Method::GET, "/me/events?state=sleeping", &anna, None).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");

    let (_, acked) = stack.send(Method::POST, &format!("/me/events/{id}/ack"), &anna, None).await;
    assert!(acked["quiet_until"].is_string());
    let (_, renamed) = stack
        .send(
            Method::PATCH,
            &format!("/me/events/{id}"),
            &anna,
            Some(json!({"title": "Dentist, Dr. Weiss"})),
        )
        .await;
    assert_eq!(renamed["title"], "Dentist, Dr. Weiss");
    let (_, done) = stack.send(Method::POST, &format!("/me/events/{id}/done"), &anna, None).await;
    assert_eq!(done["state"], "done");
    let (_, reopened) =
        stack.send(Method::POST, &format!("/me/events/{id}/reopen"), &anna, Some(json!({}))).await;
    assert_eq!(reopened["state"], "preparing", "Reopen undoes Done");
    stack.send(Method::POST, &format!("/me/events/{id}/done"), &anna, Some(json!({}))).await;
    let (_, archive) = stack.send(Method::GET, "/me/archive", &anna, None).await;
    assert_eq!(archive["events"][0]["closed_as"], "Сделано");
    let (_, reopened) = stack
        .send(
            Method::PATCH,
            &format!("/me/events/{id}"),
            &anna,
            Some(json!({"due_at": "2026-12-27T15:00"})),
        )
        .await;
    assert_eq!(reopened["state"], "preparing");
    let (_, deleted) = stack.send(Method::DELETE, &format!("/me/events/{id}"), &anna, None).await;
    assert_eq!(deleted, json!({"id": id, "state": "withdrawn"}));
    // A deleted event is still readable, and an edit brings it back.
    let (_, gone) = stack.send(Method::GET, &format!("/me/events/{id}"), &anna, None).await;
    assert_eq!(gone["state"], "withdrawn");
    let (_, back) = stack
        .send(
            Method::PATCH,
            &format!("/me/events/{id}"),
            &anna,
            Some(json!({"title": "Dentist, again"})),
        )
        .await;
    assert_eq!(
        (back["state"].as_str(), back["title"].as_str()),
        (Some("preparing"), Some("Dentist, again"))
    );

    // Another source's event: close it, never change it.
    let docs = bearer(&stack.core.source_token("docs").await);
    let (_, pushed) = stack
        .send(
            Method::POST,
            "/api/events",
            &[("authorization", &docs)],
            Some(json!({"events": [item("anna", "visa", "Visa", "2026-12-14")]})),
        )
        .await;
    let visa = pushed["results"][0]["id"].as_i64().unwrap();
    let (status, error) = stack
        .send(Method::PATCH, &format!("/me/events/{visa}"), &anna, Some(json!({"title": "x"})))
        .await;
    assert_eq!(
        (status, error["error"].as_str(), error["code"].as_str()),
        (
            StatusCode::FORBIDDEN,
            Some("this event belongs to source docs; only docs can change it"),
            Some("EVENT_OWNED_BY_SOURCE")
        )
    );
    assert_eq!(
        stack.send(Method::DELETE, &format!("/me/events/{visa}"), &anna, None).await.0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        stack.send(Method::POST, &format!("/me/events/{visa}/done"), &anna, None).await.1["state"],
        "done"
    );

    // The agent token: issue, see, re-issue (the old one stops), revoke.
    assert_eq!(
        stack.send(Method::GET, "/me/agent-token", &anna, None).await.1,
        json!({"issued": false})
    );
    let (_, issued) = stack.send(Method::POST, "/me/agent-token", &anna, None).await;
    let token = issued["token"].as_str().unwrap().to_owned();
    assert_eq!(
        issued["connect"],
        format!(
            "claude mcp add --transport http hado https://hado.example.com/mcp --header \"Authorization: Bearer {token}\""
        )
    );
    assert_eq!(stack.send(Method::GET, "/me/agent-token", &anna, None).await.1["issued"], true);
    let (_, reissued) = stack.send(Method::POST, "/me/agent-token", &anna, None).await;
    assert_ne!(reissued["token"], issued["token"]);
    let old = stack
        .core
        .agent(&token)
        .get_profile(hado_proto::v1::GetProfileRequest::default())
        .await
        .unwrap_err();
    assert_eq!(old.code(), tonic::Code::Unauthenticated);
    assert_eq!(
        stack.send(Method::DELETE, "/me/agent-token", &anna, None).await.1,
        json!({"revoked": true})
    );
    assert_eq!(stack.send(Method::GET, "/me/agent-token", &anna, None).await.1["issued"], false);

    stack.stop().await;
}

/// A right-to-left override in a title is refused with 422 and its code,
/// from a source and from the person alike, and nothing is written.
async fn a_bidi_control_in_a_title_is_refused_with_422(backend: Backend) {
    let stack = Stack::start(&backend, Trust::LoopbackProxy).await;
    let docs = bearer(&stack.core.source_token("docs").await);
    let auth = [("authorization", docs.as_str())];
    let title = "Invoice \u{202E}fdp.exe";

    let batch = json!({"events": [item("anna", "invoice", title, "2027-01-01")]});
    let (status, error) = stack.send(Method::POST, "/api/events", &auth, Some(batch)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
    let violation = &error["violations"][0];
    assert_eq!(
        (violation["index"].as_i64(), violation["field"].as_str(), violation["code"].as_str()),
        (Some(0), Some("title"), Some("BIDI_CONTROL")),
        "{error}"
    );
    assert!(violation["message"].as_str().unwrap().contains("U+202E at position 9"), "{error}");
    let (_, listed) =
        stack.send(Method::GET, "/api/events?user=anna&ref=invoice", &auth, None).await;
    assert_eq!(listed["events"], json!([]), "nothing was written");

    let anna = [("x-remote-user", "anna")];
    let (status, error) = stack
        .send(
            Method::POST,
            "/me/events",
            &anna,
            Some(json!({"title": title, "due_at": "2027-01-01"})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
    assert_eq!(
        (error["violations"][0]["field"].as_str(), error["violations"][0]["code"].as_str()),
        (Some("title"), Some("BIDI_CONTROL")),
        "{error}"
    );
    let (_, listed) = stack.send(Method::GET, "/me/events", &anna, None).await;
    assert_eq!(listed["events"], json!([]), "nothing was written");
    stack.stop().await;
}

async fn up_follows_core(backend: Backend) {
    let mut stack = Stack::start(&backend, Trust::OtherProxy).await;
    assert_eq!(
        stack.send(Method::GET, "/up", &[], None).await,
        (StatusCode::OK, json!({"status": "up"}))
    );
    stack.core.pause().await;
    let (status, body) = stack.send(Method::GET, "/up", &[], None).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("down")));
    let docs = bearer("hado_src_anything");
    let (status, error) =
        stack.send(Method::GET, "/api/events?user=anna", &[("authorization", &docs)], None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(error["error"].as_str().unwrap().contains("cannot be reached"), "{error}");
    stack.core.resume().await;
    let mut status = StatusCode::SERVICE_UNAVAILABLE;
    for _ in 0..100 {
        status = stack.send(Method::GET, "/up", &[], None).await.0;
        if status == StatusCode::OK {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status, StatusCode::OK, "the gateway reconnects by itself");
    stack.stop().await;
}

/// A list far past gRPC's default 4 MiB reply: 30,000 events of one
/// person, read back whole by their source, and by the person a page at a
/// time (`GET /me/events` answers a page, 100 unless asked for up to 1,000,
/// with the cursor of the next), every event once and in order; and what
/// the person's list refuses.
async fn a_list_of_tens_of_thousands_of_events_is_served(backend: Backend) {
    let stack = Stack::start(&backend, Trust::LoopbackProxy).await;
    let token = stack.core.source_token("bulk").await;
    let mut ingest = stack.core.ingest(&token);
    const EVENTS: usize = 30_000;
    for batch in 0..EVENTS / 1000 {
        let events = (batch * 1000..(batch + 1) * 1000)
            .map(|index| hado_proto::v1::SourceEvent {
                user: "anna".into(),
                r#ref: format!("event-{index}"),
                topic: String::new(),
                fields: Some(hado_proto::v1::EventFields {
                    title: format!("A reminder with a title of ordinary length, number {index}"),
                    due_at: "2027-03-01".into(),
                    ..Default::default()
                }),
            })
            .collect();
        ingest.upsert_events(hado_proto::v1::UpsertEventsRequest { events }).await.unwrap();
    }
    let (status, listed) = stack
        .send(Method::GET, "/api/events?user=anna", &[("authorization", &bearer(&token))], None)
        .await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["events"].as_array().unwrap().len(), EVENTS);
    let anna = [("x-remote-user", "anna")];
    let (status, first) = stack.send(Method::GET, "/me/events", &anna, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(first["events"].as_array().unwrap().len(), 100, "a page unless asked");
    assert!(first["next"].is_string(), "{}", first["next"]);
    // Page after page of a thousand: every event once, in order.
    let (mut ids, mut after, mut pages) = (Vec::new(), None::<String>, 0);
    loop {
        let path = match &after {
            Some(after) => format!("/me/events?limit=1000&after={after}"),
            None => "/me/events?limit=1000".to_owned(),
        };
        let (status, page) = stack.send(Method::GET, &path, &anna, None).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        pages += 1;
        ids.extend(
            page["events"].as_array().unwrap().iter().map(|event| event["id"].as_i64().unwrap()),
        );
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!((ids.len(), pages), (EVENTS, EVENTS / 1000));
    assert!(
        ids.windows(2).all(|pair| pair[0] < pair[1]),
        "no event repeats or goes missing between pages"
    );
    assert_eq!(ids[0], first["events"][0]["id"].as_i64().unwrap());
    // What the list refuses, naming what is wrong.
    for (query, naming) in [
        ("limit=0", "limit 0 is not from 1 to 1000"),
        ("limit=1001", "limit 1001 is not from 1 to 1000"),
        ("limit=-3", "limit"),
        ("limit=many", "limit"),
        ("after=yesterday", "after"),
        ("state=done", "state"),
        ("page=2", "page"),
    ] {
        let (status, error) =
            stack.send(Method::GET, &format!("/me/events?{query}"), &anna, None).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{query}: {error}");
        assert!(
            error["error"].to_string().contains(naming) || error.to_string().contains(naming),
            "{query}: {error}"
        );
    }
    // A method the list does not take is 405, not a write's refusal.
    let trace = stack
        .client
        .request(Method::TRACE, format!("{}/me/events", stack.base))
        .header("x-remote-user", "anna")
        .send()
        .await
        .unwrap();
    assert_eq!(trace.status(), StatusCode::METHOD_NOT_ALLOWED);
    stack.stop().await;
}

hado_testing::on_both_backends!(
    a_list_of_tens_of_thousands_of_events_is_served,
    the_rest_contract_holds,
    the_inbox_user_comes_only_from_a_trusted_proxy_or_local_mode,
    the_inbox_json_api_works,
    a_bidi_control_in_a_title_is_refused_with_422,
    up_follows_core,
);
