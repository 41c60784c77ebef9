//! Reminders by Telegram against a fake Bot API (real HTTP on loopback, the
//! way Telegram's own answers look): linking a chat with a one-time code, a
//! reminder with its buttons after a 429 with `retry_after`, both buttons
//! pressed, a duplicate `update_id`, and `/list`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::Duration as Span;
use serde_json::{Value, json};

use hado_core::config::TelegramConfig;
use hado_core::delivery;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore, utc};

const CHAT: i64 = 5550001;

/// A fake Telegram Bot API: it records every call, hands out queued updates,
/// and answers the first reminder with 429.
#[derive(Clone, Default)]
struct FakeTelegram {
    calls: Arc<Mutex<Vec<(String, Value)>>>,
    updates: Arc<Mutex<VecDeque<Value>>>,
    throttled_once: Arc<Mutex<bool>>,
}

async fn bot_api(
    State(fake): State<FakeTelegram>,
    Path((_token, method)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    fake.calls.lock().unwrap().push((method.clone(), body.clone()));
    match method.as_str() {
        "getMe" => (
            StatusCode::OK,
            Json(
                json!({"ok": true, "result": {"id": 1, "is_bot": true, "username": "hado_test_bot"}}),
            ),
        ),
        "getUpdates" => {
            let queued: Vec<Value> = fake.updates.lock().unwrap().drain(..).collect();
            if queued.is_empty() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            (StatusCode::OK, Json(json!({"ok": true, "result": queued})))
        }
        "sendMessage" => {
            let mut throttled = fake.throttled_once.lock().unwrap();
            if body.get("reply_markup").is_some() && !*throttled {
                *throttled = true;
                return (
                    StatusCode::TOO_MANY_REQUESTS,
                    Json(
                        json!({"ok": false, "error_code": 429, "description": "Too Many Requests: retry after 3", "parameters": {"retry_after": 3}}),
                    ),
                );
            }
            (
                StatusCode::OK,
                Json(
                    json!({"ok": true, "result": {"message_id": 77, "chat": {"id": body["chat_id"]}}}),
                ),
            )
        }
        _ => (StatusCode::OK, Json(json!({"ok": true, "result": true}))),
    }
}

impl FakeTelegram {
    async fn start(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route("/{token}/{method}", axum::routing::post(bot_api))
            .with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        base
    }

    fn push(&self, update: Value) {
        self.updates.lock().unwrap().push_back(update);
    }

    fn calls_to(&self, method: &str) -> Vec<Value> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(called, _)| called == method)
            .map(|(_, body)| body.clone())
            .collect()
    }

    /// Waits until `method` has been called `count` times.
    async fn wait_for(&self, method: &str, count: usize) -> Vec<Value> {
        for _ in 0..200 {
            let calls = self.calls_to(method);
            if calls.len() >= count {
                return calls;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "{method} was called {} times, not {count}: {:?}",
            self.calls_to(method).len(),
            self.calls.lock().unwrap()
        );
    }
}

fn message(update_id: i64, text: &str) -> Value {
    json!({"update_id": update_id, "message": {"message_id": update_id, "chat": {"id": CHAT, "type": "private"}, "text": text}})
}

fn press(update_id: i64, data: &str) -> Value {
    json!({"update_id": update_id, "callback_query": {"id": format!("cb{update_id}"), "data": data, "message": {"message_id": 77, "chat": {"id": CHAT}}}})
}

async fn a_chat_links_gets_a_reminder_and_answers_it(backend: Backend) {
    let fake = FakeTelegram::default();
    let api_url = fake.start().await;
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.telegram =
            Some(TelegramConfig { token: "123456:test-token".into(), api_url, webhook: false });
    })
    .await;
    let mut anna = core.inbox_as("anna");

    // Linking: a one-time link to the bot; /start with its code binds the chat.
    let link =
        anna.create_telegram_link(v1::CreateTelegramLinkRequest {}).await.unwrap().into_inner();
    let code = link
        .url
        .strip_prefix("https://t.me/hado_test_bot?start=")
        .expect("a t.me link to the bot")
        .to_owned();
    fake.push(message(1, &format!("/start {code}")));
    let replies = fake.wait_for("sendMessage", 1).await;
    assert_eq!(replies[0]["chat_id"], CHAT);
    assert!(
        replies[0]["text"].as_str().unwrap().starts_with("Linked: Hado's reminders for anna"),
        "{replies:?}"
    );
    let channels =
        anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner().channels;
    assert_eq!(
        (channels[0].kind().word(), channels[0].target.as_str()),
        ("telegram", CHAT.to_string().as_str())
    );
    // The same update again is dropped: the used code would otherwise be refused in a second reply.
    fake.push(message(1, &format!("/start {code}")));
    fake.push(message(2, "/list"));
    let replies = fake.wait_for("sendMessage", 2).await;
    assert_eq!(replies.len(), 2, "update 1 was handled once");
    assert_eq!(replies[1]["text"], "Nothing needs you right now.");

    // A checkpoint's reminder: Telegram first says 429 with retry_after 3, the retry goes through.
    let event = anna
        .create_event(v1::EventFields {
            title: "Visa".into(),
            due_at: "2026-12-05".into(),
            deep_link: Some("https://docs.example.com/visa".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    core.clock.set(utc("2026-12-02T07:00:00Z"));
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    let deliverer = core.deliverer();
    delivery::drain(&deliverer).await.unwrap();
    let log = testing::eventually("the first attempt is recorded", || {
        let mut anna = anna.clone();
        async move {
            let log =
                anna.get_event(v1::EventId { id: event.id }).await.unwrap().into_inner().deliveries;
            log.first().is_some_and(|line| line.attempts == 1).then_some(log)
        }
    })
    .await;
    assert_eq!((log[0].status().word(), log[0].attempts), ("pending", 1));
    assert!(log[0].note.as_deref().unwrap().contains("retry after 3"), "{log:?}");
    core.clock.advance(Span::seconds(2));
    delivery::drain(&deliverer).await.unwrap();
    assert_eq!(
        fake.calls_to("sendMessage")
            .iter()
            .filter(|body| body.get("reply_markup").is_some())
            .count(),
        1,
        "not before retry_after"
    );
    core.clock.advance(Span::seconds(2));
    delivery::drain(&deliverer).await.unwrap();
    let sent = testing::eventually("the throttled attempt and the retry", || {
        let sent = fake
            .calls_to("sendMessage")
            .into_iter()
            .filter(|body| body.get("reply_markup").is_some())
            .collect::<Vec<_>>();
        std::future::ready((sent.len() >= 2).then_some(sent))
    })
    .await;
    assert_eq!(sent.len(), 2, "the throttled attempt and the retry");
    let reminder = &sent[1];
    assert_eq!(reminder["text"], "⏰ Visa\nin 3 days, Sat 5 Dec");
    let keyboard = &reminder["reply_markup"]["inline_keyboard"];
    assert_eq!(
        (keyboard[0][0]["text"].as_str(), keyboard[0][1]["text"].as_str()),
        (Some("Done"), Some("Remember"))
    );
    assert_eq!(
        (keyboard[1][0]["text"].as_str(), keyboard[1][1]["text"].as_str()),
        (Some("Until tomorrow"), Some("Until next week"))
    );
    assert_eq!(keyboard[2][0]["url"], "https://docs.example.com/visa");
    let tomorrow = keyboard[1][0]["callback_data"].as_str().unwrap().to_owned();
    let (done, remember) = (
        keyboard[0][0]["callback_data"].as_str().unwrap().to_owned(),
        keyboard[0][1]["callback_data"].as_str().unwrap().to_owned(),
    );
    assert!(done.len() <= 64 && remember.len() <= 64, "callback_data fits Telegram's 64 bytes");
    testing::eventually("the retry is recorded as sent", || {
        let mut anna = anna.clone();
        async move {
            let log =
                anna.get_event(v1::EventId { id: event.id }).await.unwrap().into_inner().deliveries;
            (log[0].status().word() == "sent").then_some(())
        }
    })
    .await;

    // /list now shows the event that needs attention.
    fake.push(message(3, "/list"));
    let replies = fake.wait_for("sendMessage", 5).await;
    assert_eq!(replies[4]["text"], "Needs your attention:\n• Visa — in 3 days, Sat 5 Dec");

    // A real button pressed in a chat the reminder never went to acts on nothing.
    let stranger = json!({"update_id": 4, "callback_query": {"id": "cb-stranger", "data": done, "message": {"message_id": 5, "chat": {"id": CHAT + 1}}}});
    fake.push(stranger);
    let answers = fake.wait_for("answerCallbackQuery", 1).await;
    assert_eq!(
        (answers[0]["callback_query_id"].as_str(), answers[0]["text"].as_str()),
        (
            Some("cb-stranger"),
            Some("This button no longer works. / Эта кнопка больше не работает.")
        )
    );
    assert_eq!(
        anna.get_event(v1::EventId { id: event.id }).await.unwrap().into_inner().state().word(),
        "preparing"
    );
    assert!(
        fake.calls_to("editMessageText").is_empty(),
        "no message in the stranger's chat was edited"
    );

    // Remember: answered, the message edited, the event quiet.
    fake.push(press(5, &remember));
    let answers = fake.wait_for("answerCallbackQuery", 2).await;
    assert_eq!(answers[1]["callback_query_id"], "cb5");
    let edits = fake.wait_for("editMessageText", 1).await;
    assert_eq!(
        (edits[0]["chat_id"].as_i64(), edits[0]["message_id"].as_i64()),
        (Some(CHAT), Some(77))
    );
    assert_eq!(edits[0]["text"], "🔕 Visa — quiet until Fri 4 Dec 08:00");
    let quiet = anna.get_event(v1::EventId { id: event.id }).await.unwrap().into_inner();
    assert!(quiet.quiet_until.is_some() && !quiet.needs_attention);
    // "Until tomorrow" from the second row: quiet until tomorrow morning, which reminds.
    fake.push(press(8, &tomorrow));
    let edits = fake.wait_for("editMessageText", 2).await;
    assert_eq!(edits[1]["text"], "🔕 Visa — quiet until Thu 3 Dec 08:00");
    let quiet = anna.get_event(v1::EventId { id: event.id }).await.unwrap().into_inner();
    assert_eq!(
        quiet.next_reminder_at.as_ref().map(hado_proto::convert::rfc3339_at).as_deref(),
        Some("2026-12-03T07:00:00Z"),
        "08:00 in Berlin"
    );

    // Done, then a press on a button that means nothing: both answered.
    fake.push(press(6, &done));
    fake.push(press(7, "b:nothing"));
    let answers = fake.wait_for("answerCallbackQuery", 5).await;
    assert_eq!(answers[4]["text"], "This button no longer works. / Эта кнопка больше не работает.");
    let edits = fake.wait_for("editMessageText", 3).await;
    assert_eq!(edits[2]["text"], "✅ Visa — Done");
    assert_eq!(
        anna.get_event(v1::EventId { id: event.id }).await.unwrap().into_inner().state().word(),
        "done"
    );

    core.stop().await;
}

hado_testing::on_both_backends!(a_chat_links_gets_a_reminder_and_answers_it);
