//! Owns one attempt at one delivery: a Telegram message, an email, or a
//! post to a webhook or a device's push service; and what its answer
//! means: sent, tried again (when, and whether the receiver strained),
//! failed, or gone for good.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::delivery::retries::{self, next_attempt};
use crate::delivery::{Deliverer, TIMEOUT, email, push, webhook};
use hado_domain::channel::ChannelKind;
use hado_domain::delivery::ClaimedDelivery;
use hado_domain::event_record::EventRecord;
use hado_engine::targets::RefusedTarget;
use hado_engine::{Attempt, Strain};

/// What a failed attempt becomes: another try on the schedule, or a
/// failure once the schedule is spent.
struct Retrying {
    now: DateTime<Utc>,
    /// This attempt's number, the first being 1.
    attempts: i64,
}

impl Retrying {
    fn retry_or_fail(
        &self,
        error: String,
        retry_after: Option<Duration>,
        strain: Option<Strain>,
    ) -> Attempt {
        match next_attempt(self.now, self.attempts, retry_after) {
            Some(at) => Attempt::Retry { at, error, strain },
            None => Attempt::Failed {
                error: format!("{error} (gave up after {} attempts)", self.attempts),
            },
        }
    }
}

/// The strain of a receiver that asked for `retry_after`, or asked nothing.
fn asked(retry_after: Option<Duration>) -> Strain {
    Strain { asked: retry_after.and_then(|wait| chrono::Duration::from_std(wait).ok()) }
}

impl Deliverer {
    /// One attempt at one delivery.
    pub(crate) async fn attempt(
        &self,
        delivery: &ClaimedDelivery,
        event: Option<&EventRecord>,
    ) -> Attempt {
        let retrying = Retrying { now: self.engine.now(), attempts: delivery.attempts + 1 };
        match delivery.channel.kind {
            ChannelKind::Telegram => self.by_telegram(delivery, event, &retrying).await,
            ChannelKind::Email => self.by_email(delivery, event, &retrying).await,
            _ => self.posted(delivery, event, &retrying).await,
        }
    }

    async fn by_telegram(
        &self,
        delivery: &ClaimedDelivery,
        event: Option<&EventRecord>,
        retrying: &Retrying,
    ) -> Attempt {
        match self.send_telegram(delivery, event).await {
            Ok(()) => Attempt::Sent,
            Err(error) if error.forbidden => Attempt::Gone {
                error: format!(
                    "{}; the bot may no longer write to this chat, so the channel was turned off",
                    error.message
                ),
            },
            Err(error) => {
                // Telegram's 429 asks for a wait that holds for the whole bot.
                let retry_after = error.retry_after.map(Duration::from_secs);
                retrying.retry_or_fail(
                    error.message,
                    retry_after,
                    retry_after.map(|_| asked(retry_after)),
                )
            }
        }
    }

    async fn by_email(
        &self,
        delivery: &ClaimedDelivery,
        event: Option<&EventRecord>,
        retrying: &Retrying,
    ) -> Attempt {
        match self.send_email(delivery, event).await {
            Ok(email::Sent::Accepted) => Attempt::Sent,
            Ok(email::Sent::Refused(error)) => {
                Attempt::Gone { error: format!("{error}; so emails to this address were paused") }
            }
            Ok(email::Sent::Later { error, strain }) => {
                retrying.retry_or_fail(error, None, strain.then(|| asked(None)))
            }
            Err(error) => Attempt::Failed { error },
        }
    }

    /// A post to a webhook or to a device's push service.
    async fn posted(
        &self,
        delivery: &ClaimedDelivery,
        event: Option<&EventRecord>,
        retrying: &Retrying,
    ) -> Attempt {
        let kind = delivery.channel.kind;
        let target = match self.check_target(&delivery.channel.target) {
            Ok(target) => target,
            Err(error) => return Attempt::Failed { error },
        };
        let post = match self.http.post(target.clone()) {
            Ok(post) => post,
            // Kept for retries: the fix is the operator's, with a restart.
            Err(error) => return retrying.retry_or_fail(error, None, None),
        };
        let request = match kind {
            ChannelKind::Push => push::request(self, delivery, event, &target, post),
            _ => webhook::request(self, delivery, event, post),
        };
        let sent = match request {
            Ok(request) => request.send().await,
            Err(error) => return Attempt::Failed { error },
        };
        if let Ok(response) = &sent
            && kind == ChannelKind::Push
            && let Some(settled) = push::final_answer(response.status())
        {
            return settled;
        }
        answered(kind, sent, retrying)
    }
}

/// What a post's answer (or its lack) means for the delivery.
fn answered(
    kind: ChannelKind,
    sent: Result<reqwest::Response, reqwest::Error>,
    retrying: &Retrying,
) -> Attempt {
    match sent {
        Ok(response) if response.status().is_success() => Attempt::Sent,
        Ok(response) if response.status() == reqwest::StatusCode::GONE => Attempt::Gone {
            error: "the receiver answered 410 Gone, so this webhook was turned off".into(),
        },
        Ok(response) => {
            let status = response.status();
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| retries::retry_after(value, retrying.now));
            // A push service limits each subscription: one device's 429
            // holds that device, not every device at the service.
            let per_device = kind == ChannelKind::Push && status.as_u16() == 429;
            let overloaded = matches!(status.as_u16(), 429 | 502 | 503 | 504) && !per_device;
            retrying.retry_or_fail(
                format!("the receiver answered {status}"),
                retry_after,
                overloaded.then(|| asked(retry_after)),
            )
        }
        Err(error) if error.is_timeout() => retrying.retry_or_fail(
            format!("the receiver did not answer within {} s", TIMEOUT.as_secs()),
            None,
            Some(asked(None)),
        ),
        Err(error) => match RefusedTarget::behind(&error) {
            Some(refused) => Attempt::Failed { error: refused.to_string() },
            None => retrying.retry_or_fail(
                format!("the receiver could not be reached: {}", error.without_url()),
                None,
                Some(asked(None)),
            ),
        },
    }
}
