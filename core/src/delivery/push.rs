//! Owns what a device's push service receives: the notification's JSON (the
//! title, the due moment in the person's words and zone, the state, and the
//! signed Done and Remember links), sealed for the subscription (RFC 8291),
//! with RFC 8030's `TTL`, `Urgency` and `Topic` and a VAPID token (RFC 8292).

use serde::Serialize;

use super::Deliverer;
use crate::telegram::{done_label, due_words, words_for};
use hado_domain::delivery::{ClaimedDelivery, DeliveryKind};
use hado_domain::event_record::EventRecord;
use hado_domain::state::State;
use hado_engine::Attempt;
use hado_engine::Engine;
use hado_engine::links::LinkAction;
use hado_engine::web_push::SubscriptionKeys;

/// The most a notification's JSON may take: push services take 4 KB of
/// sealed payload, and the seal adds 86 bytes.
pub(crate) const MAX_PAYLOAD_BYTES: usize = 3 * 1024;
/// How long a push service keeps a message it cannot hand over yet, when
/// nothing sooner is due: a test, or an event with no checkpoint ahead.
const DEFAULT_TTL_SECONDS: i64 = 24 * 3600;
/// The longest `TTL` asked for: push services keep messages four weeks at most.
const MAX_TTL_SECONDS: i64 = 28 * 24 * 3600;

/// What the service worker shows, keys in alphabetical order.
#[derive(Serialize)]
struct Notification {
    /// Done and Remember: what each button says and the link it posts.
    actions: Vec<Action>,
    /// The due moment in the person's words and zone.
    body: String,
    /// The event's id; none for a test.
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<i64>,
    /// Whether to alert again although a notification with this tag is
    /// shown: for every reminder, never for a test.
    renotify: bool,
    /// The event's state (`today`, `overdue`, …), and its word.
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'static str>,
    #[serde(skip_serializing_if = "String::is_empty")]
    state_label: String,
    /// One notification per event: a newer reminder replaces the older.
    tag: String,
    title: String,
    #[serde(rename = "type")]
    kind: String,
    /// The page a click on the notification opens.
    url: String,
}

#[derive(Serialize)]
struct Action {
    /// `done` or `remember`, the service worker's action names.
    action: &'static str,
    title: String,
    url: String,
}

/// The post for `delivery` to the device `target`, made on `post`: its payload sealed for
/// the subscription's keys, its headers, its VAPID token. An error is one
/// no retry mends.
/// What a push service's answer settles for good, beyond a webhook's: 404
/// and 410 say the subscription is gone (the device is removed); 400, 401,
/// 403 and 413 say the service will never take this message or this token
/// as it is (the server's key changed since the device subscribed, say), so
/// a retry cannot help and the person is told to subscribe again.
pub(super) fn final_answer(status: reqwest::StatusCode) -> Option<Attempt> {
    match status.as_u16() {
        404 | 410 => Some(Attempt::Gone {
            error: format!("the push service answered {status}, so this device was removed"),
        }),
        400 | 401 | 403 | 413 => Some(Attempt::Failed {
            error: format!(
                "the push service answered {status}: turn notifications off and on again on this device"
            ),
        }),
        _ => None,
    }
}

pub(super) fn request(
    deliverer: &Deliverer,
    delivery: &ClaimedDelivery,
    event: Option<&EventRecord>,
    target: &url::Url,
    post: reqwest::RequestBuilder,
) -> Result<reqwest::RequestBuilder, String> {
    let engine = &deliverer.engine;
    let vapid = engine.outbound().push.clone().ok_or(
        "push is not set up on this Hado (HADO_VAPID_SUBJECT), so nothing can go to this device",
    )?;
    let keys =
        delivery.channel.secret.as_deref().and_then(SubscriptionKeys::from_stored).ok_or(
            "the subscription's keys are damaged: turn notifications on again on this device",
        )?;
    let notification = notification(engine, delivery, event)?;
    let body = serde_json::to_vec(&notification).expect("a notification is plain JSON");
    if body.len() > MAX_PAYLOAD_BYTES {
        return Err(format!(
            "the notification takes {} bytes, more than the {MAX_PAYLOAD_BYTES} a push service takes",
            body.len()
        ));
    }
    let sealed = keys.seal(&body)?;
    let headers = Headers::of(engine, &vapid, delivery, event);
    // The push service checks the token's expiry against its own clock.
    let wall_clock = chrono::Utc::now().timestamp();
    Ok(post
        .header("authorization", vapid.authorization(target, wall_clock))
        .header("content-encoding", "aes128gcm")
        .header("content-type", "application/octet-stream")
        .header("ttl", headers.ttl.to_string())
        .header("urgency", headers.urgency)
        .header("topic", headers.topic)
        .body(sealed))
}

/// RFC 8030's headers of one message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Headers {
    /// Seconds the push service keeps it: until the event's next
    /// checkpoint or repeat, after which a newer reminder says more.
    pub(crate) ttl: i64,
    /// `high` for an event due today or overdue, `normal` otherwise.
    pub(crate) urgency: &'static str,
    /// One per event ([`hado_engine::web_push::Vapid::topic`]), so that a newer
    /// reminder replaces one not yet handed over.
    pub(crate) topic: String,
}

impl Headers {
    pub(crate) fn of(
        engine: &Engine,
        vapid: &hado_engine::web_push::Vapid,
        delivery: &ClaimedDelivery,
        event: Option<&EventRecord>,
    ) -> Self {
        let now = engine.now();
        let Some(event) = event else {
            return Self { ttl: DEFAULT_TTL_SECONDS, urgency: "normal", topic: "test".into() };
        };
        let reminders = &event.reminders;
        let next = [reminders.checkpoint, reminders.repeat_at]
            .into_iter()
            .flatten()
            .filter(|at| *at > delivery.due_at.max(now))
            .min();
        let ttl = next.map_or(DEFAULT_TTL_SECONDS, |next| (next - now).num_seconds());
        let urgent = matches!(event.lifecycle.state, State::Today | State::Overdue);
        Self {
            ttl: ttl.clamp(60, MAX_TTL_SECONDS),
            urgency: if urgent { "high" } else { "normal" },
            topic: vapid.topic(event.id, delivery.channel.id),
        }
    }
}

fn notification(
    engine: &Engine,
    delivery: &ClaimedDelivery,
    event: Option<&EventRecord>,
) -> Result<Notification, String> {
    let Some(event) = event else {
        if delivery.kind != DeliveryKind::Test {
            return Err("the event of this reminder is gone".into());
        }
        return Ok(Notification {
            actions: Vec::new(),
            body: hado_words::both(|words| words.test_message),
            event: None,
            renotify: false,
            state: None,
            state_label: String::new(),
            tag: "test".into(),
            title: "Hado".into(),
            kind: "test".into(),
            url: engine.public_address("/settings#reminders"),
        });
    };
    let words = words_for(event.locale);
    let state = event.lifecycle.state;
    let state_label = match state {
        State::Scheduled => words.scheduled,
        State::Preparing => words.preparing,
        State::Today => words.today,
        State::Overdue => words.overdue,
        State::Done | State::Expired | State::Withdrawn => "",
    };
    Ok(Notification {
        actions: vec![
            Action {
                action: "done",
                title: done_label(event),
                url: engine.action_url(event, LinkAction::Done),
            },
            Action {
                action: "remember",
                title: words.remember.to_owned(),
                url: engine.action_url(event, LinkAction::Remember),
            },
        ],
        body: due_words(event, engine.now()),
        event: Some(event.id),
        renotify: true,
        state: Some(state.as_str()),
        state_label: state_label.to_owned(),
        tag: format!("event-{}", event.id),
        title: event.spec.title.as_str().to_owned(),
        kind: format!("reminder.{}", delivery.kind),
        url: engine.public_address(&format!("/events/{}", event.id)),
    })
}
