//! Telegram in webhook mode: updates posted to `/hooks/telegram` with the
//! secret from `setWebhook` reach core, which answers through the Bot API (a
//! fake on loopback); anything else is refused. And the settings page's
//! "Connect Telegram" link.

use crate::common;

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Path, State};
use reqwest::StatusCode;
use reqwest::redirect::Policy;
use serde_json::{Value, json};

use common::Gateway;
use hado_core::config::TelegramConfig;
use hado_gateway_http::config::Secret;
use hado_testing::{Backend, TestCore};

const SECRET: &str = "telegram-hook-secret-0123456789abcdef";

type Calls = Arc<Mutex<Vec<(String, Value)>>>;

async fn bot_api(
    State(calls): State<Calls>,
    Path((_token, method)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> Json<Value> {
    calls.lock().unwrap().push((method.clone(), body));
    match method.as_str() {
        "getMe" => Json(json!({"ok": true, "result": {"username": "hado_test_bot"}})),
        _ => Json(json!({"ok": true, "result": {"message_id": 1}})),
    }
}

async fn updates_posted_with_the_secret_reach_core(backend: Backend) {
    let calls: Calls = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api_url = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .route("/{token}/{method}", axum::routing::post(bot_api))
        .with_state(calls.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.telegram =
            Some(TelegramConfig { token: "123456:test-token".into(), api_url, webhook: true });
    })
    .await;
    let mut config = common::config(&core);
    config.local_user = Some("anna".into());
    config.telegram_webhook_secret = Some(Secret(SECRET.into()));
    let gateway = Gateway::start(config).await;
    let client = reqwest::Client::builder().redirect(Policy::none()).build().unwrap();

    // The settings page makes the one-time link.
    let page = client
        .post(format!("{}/settings/telegram", gateway.base))
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(r#"<form method="post" action="/settings/telegram#telegram">"#),
        "with a bot, Connect is offered and lands where it was pressed"
    );
    let link = page
        .split(r#"<a id="telegram-link" href=""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a link on the page")
        .to_owned();
    let code = link
        .strip_prefix("https://t.me/hado_test_bot?start=")
        .expect("a t.me link to the bot")
        .to_owned();

    let hook = format!("{}/hooks/telegram", gateway.base);
    let update = json!({"update_id": 10, "message": {"message_id": 1, "chat": {"id": 4242, "type": "private"}, "text": format!("/start {code}")}});
    for secret in [None, Some("wrong")] {
        let mut request = client.post(&hook).json(&update);
        if let Some(secret) = secret {
            request = request.header("x-telegram-bot-api-secret-token", secret);
        }
        assert_eq!(request.send().await.unwrap().status(), StatusCode::UNAUTHORIZED, "{secret:?}");
    }
    assert!(
        calls.lock().unwrap().iter().all(|(method, _)| method != "sendMessage"),
        "a refused update does nothing"
    );
    let accepted = client
        .post(&hook)
        .header("x-telegram-bot-api-secret-token", SECRET)
        .json(&update)
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), StatusCode::OK);
    let sent: Vec<Value> = calls
        .lock()
        .unwrap()
        .iter()
        .filter(|(method, _)| method == "sendMessage")
        .map(|(_, body)| body.clone())
        .collect();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["chat_id"], 4242);
    assert!(sent[0]["text"].as_str().unwrap().starts_with("Linked"));
    let settings = client
        .get(format!("{}/settings", gateway.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(settings.contains("Telegram chat 4242"), "{settings}");

    // Not JSON: acknowledged (Telegram would only send it again), nothing done.
    let garbage = client
        .post(&hook)
        .header("x-telegram-bot-api-secret-token", SECRET)
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), StatusCode::OK);

    // A Hado without webhook mode has no such hook.
    let plain = Gateway::start(common::config(&core)).await;
    let missing = client
        .post(format!("{}/hooks/telegram", plain.base))
        .header("x-telegram-bot-api-secret-token", SECRET)
        .json(&update)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);

    plain.stop().await;
    gateway.stop().await;
    core.stop().await;
}

hado_testing::on_both_backends!(updates_posted_with_the_secret_reach_core);
