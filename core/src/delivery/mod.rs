//! Owns sending reminders: the delivery loop that claims pending deliveries,
//! sends each to its Telegram chat or posts it to its webhook, signed per the
//! Standard Webhooks spec
//! (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,…`), and records
//! the outcome: sent; retried on the Standard Webhooks schedule with jitter,
//! honouring `Retry-After`; failed, with the error shown on the channel; or,
//! on 410 Gone, the channel disabled (a device's, removed). `webhook` is
//! what a webhook receives and its signature, `push` what a device's push
//! service does; `email` the mail server, and `mail` what an email says;
//! `retries` when a failed delivery is tried again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::watch;

use crate::telegram::{self, BotError};
use hado_domain::delivery::{ClaimedDelivery, DeliveryKind};
use hado_domain::event_record::EventRecord;
use hado_engine::outbound_tls::OutboundClient;
use hado_engine::{Attempt, Engine};

mod attempt;
mod email;
mod mail;
mod push;
mod retries;
mod webhook;

pub use email::Mailer;

/// How long a receiver has to answer.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(15);
/// How long a claimed delivery is this core's before another may send it:
/// longer than a receiver may take ([`TIMEOUT`]).
const LEASE: chrono::Duration = chrono::Duration::seconds(20);
const CLAIM_BATCH: i64 = crate::config::DEFAULT_DELIVERY_CONCURRENCY as i64;
/// Posts one core has on their way at once, to all receivers together.
const IN_FLIGHT: usize = 4 * CLAIM_BATCH as usize;
/// How soon the loop looks again when due deliveries were held back for
/// their receiver (paused, or with as many posts in flight as it may have).
const HELD_BACK_RECHECK: Duration = Duration::from_millis(250);
const MAX_IDLE: Duration = Duration::from_secs(30);
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(2);

/// Sends deliveries.
#[derive(Clone)]
pub struct Deliverer {
    engine: Arc<Engine>,
    http: OutboundClient,
    telegram: Option<telegram::Bot>,
    mailer: Option<Mailer>,
    per_receiver: i64,
}

impl Deliverer {
    /// Sends the engine's deliveries: webhooks over its own client, Telegram
    /// through `telegram` when a bot is set up; at most `per_receiver` in
    /// flight to one receiver (a webhook's host, or Telegram) across all
    /// cores.
    pub fn new(engine: Arc<Engine>, telegram: Option<telegram::Bot>, per_receiver: u32) -> Self {
        let http = engine.outbound().targets().client(TIMEOUT);
        Self { engine, http, telegram, mailer: None, per_receiver: i64::from(per_receiver.max(1)) }
    }

    /// Sends email through `mailer` (none: an email delivery fails, saying so).
    pub fn with_mailer(self, mailer: Option<Mailer>) -> Self {
        Self { mailer, ..self }
    }

    /// The target, parsed once for both the check and the post; refused
    /// when its written address is one webhooks may not reach (names are
    /// checked by the client's resolver as they are connected to).
    fn check_target(&self, url: &str) -> Result<url::Url, String> {
        let parsed = url::Url::parse(url)
            .map_err(|error| format!("the URL {url:?} is not valid: {error}"))?;
        self.engine
            .outbound()
            .targets()
            .check_written(&parsed)
            .map_err(|problem| format!("the URL {url:?}: {problem}"))?;
        Ok(parsed)
    }
}

impl Deliverer {
    /// Puts together the email `delivery` is (a reminder, a confirmation, a
    /// test) and sends it; an error is one no retry mends.
    async fn send_email(
        &self,
        delivery: &ClaimedDelivery,
        event: Option<&EventRecord>,
    ) -> Result<email::Sent, String> {
        let mailer = self.mailer.as_ref().ok_or_else(|| {
            "email is not set up on this Hado (HADO_SMTP_URL), so nothing can go to this address"
                .to_owned()
        })?;
        let channel = &delivery.channel;
        let later = |error: hado_engine::error::CoreError| email::Sent::Later {
            error: format!("the email could not be put together: {error}"),
            strain: false,
        };
        // Looked at again as it goes, whatever was true when it was queued:
        // a confirmation never goes to an address that refused them, and
        // nothing else to one that is paused or not confirmed (its
        // recipient may have unsubscribed since).
        if delivery.kind == DeliveryKind::Confirmation {
            match self.engine.refused_confirmations(channel).await {
                Ok(false) => {}
                Ok(true) => {
                    return Err("the address asked Hado for no more confirmation emails".into());
                }
                Err(error) => return Ok(later(error)),
            }
        } else if !channel.enabled || channel.confirmed_at.is_none() {
            return Err("the address is paused or not confirmed, so nothing goes to it".into());
        }
        let message = match (delivery.kind, event) {
            (DeliveryKind::Confirmation | DeliveryKind::Test, _) => {
                let person = match self.engine.person(channel.user_id).await {
                    Ok(person) => person,
                    Err(error) => return Ok(later(error)),
                };
                if delivery.kind == DeliveryKind::Confirmation {
                    mail::confirmation(&self.engine, mailer, channel, &person)?
                } else {
                    mail::test(&self.engine, mailer, channel, &person)?
                }
            }
            (_, Some(event)) => {
                let first = match self.engine.first_email_of(event.id, channel.id).await {
                    Ok(first) => first,
                    Err(error) => return Ok(later(error)),
                };
                mail::reminder(&self.engine, mailer, channel, event, delivery.due_at, first)?
            }
            (_, None) => return Err("the event of this reminder is gone".into()),
        };
        Ok(mailer.send(message).await)
    }

    async fn send_telegram(
        &self,
        delivery: &ClaimedDelivery,
        event: Option<&EventRecord>,
    ) -> Result<(), BotError> {
        let failed = |message: String| BotError { message, retry_after: None, forbidden: false };
        let bot = self.telegram.clone().ok_or_else(|| {
            failed("Telegram is not set up on this Hado (HADO_TELEGRAM_BOT_TOKEN)".into())
        })?;
        let chat_id: i64 =
            delivery.channel.target.parse().map_err(|_| {
                failed(format!("{:?} is not a Telegram chat", delivery.channel.target))
            })?;
        let (text, keyboard) = match event {
            Some(event) => {
                let (text, keyboard) = telegram::reminder(&self.engine, event, chat_id)
                    .await
                    .map_err(|error| failed(error.to_string()))?;
                (text, Some(keyboard))
            }
            None => (hado_words::both(|words| words.test_message), None),
        };
        bot.send_message(chat_id, &text, keyboard).await.map(|_| ())
    }
}

/// Sends every delivery that is due now and not held back for its
/// receiver. Returns how many it attempted.
///
/// The posts are a window of at most [`IN_FLIGHT`] on their way at once.
/// The next deliveries are claimed when a claim's worth of outcomes has
/// come back (and recorded in the same transaction), when nothing is on
/// its way, or when [`HELD_BACK_RECHECK`] has passed since the last claim:
/// a slow receiver holds up only its own posts, and the posts on their way
/// go on while the claim runs.
pub async fn drain(deliverer: &Deliverer) -> Result<usize, hado_engine::error::CoreError> {
    let mut total = 0;
    let mut in_flight = FuturesUnordered::new();
    // Outcomes not yet recorded: they go into the next claim's transaction.
    let mut finished: Vec<(ClaimedDelivery, Attempt)> = Vec::new();
    let mut claimed_at = Instant::now();
    loop {
        let room = IN_FLIGHT - in_flight.len();
        let claim_now = in_flight.is_empty()
            || finished.len() >= CLAIM_BATCH as usize
            || claimed_at.elapsed() >= HELD_BACK_RECHECK;
        if claim_now && room > 0 {
            let asked = room.min(CLAIM_BATCH as usize);
            let mut arrived = Vec::new();
            let claimed = {
                let recorded: Vec<_> =
                    finished.iter().map(|(delivery, outcome)| (delivery, outcome)).collect();
                let claim = deliverer.engine.record_and_claim(
                    &recorded,
                    asked as i64,
                    deliverer.per_receiver,
                    LEASE,
                );
                tokio::pin!(claim);
                loop {
                    tokio::select! {
                        claimed = &mut claim => break claimed?,
                        Some(outcome) = in_flight.next(), if !in_flight.is_empty() => arrived.push(outcome),
                    }
                }
            };
            claimed_at = Instant::now();
            finished = arrived;
            if claimed.is_empty() && in_flight.is_empty() && finished.is_empty() {
                if let Ok(pending) = deliverer.engine.pending_deliveries().await {
                    metrics::gauge!("hado_deliveries_pending").set(pending as f64);
                }
                return Ok(total);
            }
            total += claimed.len();
            in_flight.extend(claimed.into_iter().map(|(delivery, event)| async move {
                let outcome = deliverer.attempt(&delivery, event.as_ref()).await;
                observe(&delivery, &outcome);
                (delivery, outcome)
            }));
        }
        if let Ok(Some(outcome)) =
            tokio::time::timeout_at((claimed_at + HELD_BACK_RECHECK).into(), in_flight.next()).await
        {
            finished.push(outcome);
        }
    }
}

/// Counts and logs how one attempt went.
fn observe(delivery: &ClaimedDelivery, outcome: &Attempt) {
    if let Attempt::Failed { error } | Attempt::Gone { error } = outcome {
        tracing::warn!(delivery = delivery.id, channel = delivery.channel.id, %error, "delivery failed");
    }
    let label = match outcome {
        Attempt::Sent => "sent",
        Attempt::Retry { .. } => "retry",
        Attempt::Failed { .. } => "failed",
        Attempt::Gone { .. } => "gone",
    };
    metrics::counter!("hado_deliveries_total", "channel" => delivery.channel.kind.as_str(), "outcome" => label).increment(1);
}

/// The delivery loop: sends what is due, sleeps until the next pending
/// delivery (or until woken by newly queued ones), until `stop`.
pub(crate) async fn run(deliverer: Deliverer, mut stop: watch::Receiver<bool>) {
    let queued = deliverer.engine.deliveries_handle();
    loop {
        let pause = match drain(&deliverer).await {
            Ok(_) => match deliverer.engine.earliest_delivery().await {
                // Still due after a drain: held back for its receiver.
                Ok(Some(next)) => (next - deliverer.engine.now())
                    .to_std()
                    .unwrap_or(HELD_BACK_RECHECK)
                    .min(MAX_IDLE),
                Ok(None) => MAX_IDLE,
                Err(error) => {
                    tracing::warn!(%error, "the delivery loop could not read its next delivery");
                    RETRY_AFTER_FAILURE
                }
            },
            Err(error) => {
                tracing::warn!(%error, "a delivery pass failed; retrying");
                RETRY_AFTER_FAILURE
            }
        };
        if !hado_engine::loops::rest(pause, &queued, &mut stop).await {
            return;
        }
    }
}
