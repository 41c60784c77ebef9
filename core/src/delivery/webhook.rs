//! Owns what a webhook receives: the JSON of a reminder (with its action
//! links) or of a channel's test, and its Standard Webhooks signature.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use serde::Serialize;
use sha2::Sha256;

use hado_views::ClientEvent;

use crate::wire;
use hado_domain::delivery::ClaimedDelivery;
use hado_domain::event_record::EventRecord;
use hado_engine::Engine;
use hado_engine::links::LinkAction;

/// The `v1,…` signature of a Standard Webhooks message.
pub(crate) fn sign(secret: &str, message_id: &str, timestamp: i64, body: &str) -> Option<String> {
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap_or(secret)).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(format!("{message_id}.{timestamp}.{body}").as_bytes());
    Some(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

/// The JSON a webhook receives for a reminder, written straight from these
/// types, keys in alphabetical order.
#[derive(Serialize)]
struct Reminder {
    actions: Actions,
    checkpoint: String,
    event: ClientEvent,
    #[serde(rename = "type")]
    kind: String,
}

/// A reminder's action links: Done and Remember without signing in.
#[derive(Serialize)]
struct Actions {
    done_url: String,
    remember_url: String,
}

/// The JSON a webhook receives for a channel's test.
#[derive(Serialize)]
struct Test {
    message: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The signed post of `delivery` to its webhook, made on `post`.
pub(super) fn request(
    deliverer: &super::Deliverer,
    delivery: &ClaimedDelivery,
    event: Option<&EventRecord>,
    post: reqwest::RequestBuilder,
) -> Result<reqwest::RequestBuilder, String> {
    let body = payload(&deliverer.engine, delivery, event);
    let timestamp = deliverer.engine.now().timestamp();
    let secret = delivery.channel.secret.as_deref().unwrap_or_default();
    let signature = sign(secret, &delivery.message_id, timestamp, &body)
        .ok_or("the channel's signing secret is damaged; remove the webhook and add it again")?;
    Ok(post
        .header("content-type", "application/json")
        .header("webhook-id", &delivery.message_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(body))
}

/// The body a webhook receives for `delivery`.
pub(crate) fn payload(
    engine: &Engine,
    delivery: &ClaimedDelivery,
    event: Option<&EventRecord>,
) -> String {
    let written = match event {
        Some(event) => serde_json::to_string(&Reminder {
            actions: Actions {
                done_url: engine.action_url(event, LinkAction::Done),
                remember_url: engine.action_url(event, LinkAction::Remember),
            },
            checkpoint: wire::rfc3339(delivery.due_at),
            event: ClientEvent::from(&wire::event(event)),
            kind: format!("reminder.{}", delivery.kind),
        }),
        None => serde_json::to_string(&Test {
            message: "This is a test message from Hado: this webhook is connected.",
            kind: "test",
        }),
    };
    written.expect("a payload is plain JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_the_standard_webhooks_example() {
        // The example of the Standard Webhooks specification.
        let signature = sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(signature.as_deref(), Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
    }
}
