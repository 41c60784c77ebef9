//! Owns the person's channels and the outbox of deliveries: webhooks added
//! (their targets checked), channels turned on, off, tested and removed,
//! deliveries claimed with a lease and their attempts recorded.

use chrono::{DateTime, Utc};
use hado_storage::Connection;

use crate::caps::TESTS;
use crate::error::{CoreError, Said};
use crate::links::LinkAction;
use crate::outcomes::{Attempt, ChannelOutcome, Strain, Tally};
use crate::tokens;
use crate::{Engine, Outbound};
use hado_domain::channel::{ChannelKind, ChannelRecord};
use hado_domain::delivery::{ClaimedDelivery, DeliveryKind, DeliveryRecord, DeliveryStatus};
use hado_domain::event_record::EventRecord;
use hado_domain::fields::DeepLink;
use hado_domain::text::quoted;
use hado_domain::user::UserRecord;
use hado_domain::violations::{Reason, Violations};
use hado_storage::deliveries::{self, NewDelivery};
use hado_storage::{channels, delivery_log, events, send_requests};
use std::collections::HashMap;

impl Engine {
    pub fn outbound(&self) -> &Outbound {
        &self.outbound
    }

    pub async fn list_channels(&self, user: &UserRecord) -> Result<Vec<ChannelRecord>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(channels::for_user(&mut connection, user.id).await?)
    }

    /// Adds a webhook for the user and makes its signing secret.
    pub async fn add_webhook(
        &self,
        user: &UserRecord,
        raw_url: &str,
    ) -> Result<AddedWebhook, CoreError> {
        let url = raw_url.trim();
        self.reachable_url("url", url).await?;
        let secret = tokens::webhook_secret();
        let mut transaction = self.store.begin_write().await?;
        let channel = channels::add(
            &mut transaction,
            user.id,
            ChannelKind::Webhook,
            url,
            Some(&secret),
            self.now(),
        )
        .await?;
        transaction.commit().await?;
        Ok(AddedWebhook { channel, secret })
    }

    /// `raw` as an absolute http or https URL that Hado may post to: not a
    /// private or loopback address unless the operator allows them, the
    /// name's addresses checked too. A refusal names `field`.
    pub(super) async fn reachable_url(
        &self,
        field: &str,
        raw: &str,
    ) -> Result<url::Url, CoreError> {
        let parsed = DeepLink::parse_optional(field, Some(raw), &mut Violations::default());
        let Some(parsed) = parsed.and_then(|link| url::Url::parse(link.as_str()).ok()) else {
            return Err(CoreError::invalid_because(
                field,
                Reason::NotAUrl,
                format!("{field} {} is not an absolute http or https URL", quoted(raw)),
            ));
        };
        let checked = match self.outbound.targets().check_written(&parsed) {
            Ok(()) if self.outbound.allow_private => Ok(()),
            Ok(()) => self.network.check_webhook(&parsed).await,
            refused => refused,
        };
        match checked {
            Ok(()) => Ok(parsed),
            Err(problem) => Err(CoreError::invalid_because(
                field,
                Reason::PrivateAddress,
                format!("{field} {}: {problem}", quoted(raw)),
            )),
        }
    }

    pub(super) async fn own_channel(
        &self,
        connection: &mut impl Connection,
        user: &UserRecord,
        id: i64,
    ) -> Result<ChannelRecord, CoreError> {
        channels::find(connection, user.id, id)
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("channel {id} not found")))
    }

    /// Turns one of the person's channels on or off. An email address that
    /// is not confirmed (its recipient unsubscribed, say) is sent its
    /// confirmation again as it is turned on, within the caps: only its
    /// recipient can start its reminders again.
    pub async fn set_channel_enabled(
        &self,
        user: &UserRecord,
        id: i64,
        enabled: bool,
    ) -> Result<ChannelRecord, CoreError> {
        let mut transaction = self.store.begin_write().await?;
        let channel = self.own_channel(&mut transaction, user, id).await?;
        let reconfirm = enabled && !channel.enabled && channel.confirmed_at.is_none();
        if reconfirm {
            let address = channel.target.clone();
            self.queue_confirmation(&mut transaction, user, Some(channel), &address).await?;
        }
        channels::set_enabled(&mut transaction, user.id, id, enabled, self.now()).await?;
        let channel = self.own_channel(&mut transaction, user, id).await?;
        transaction.commit().await?;
        if reconfirm {
            self.deliveries_queued.notify_one();
        }
        Ok(channel)
    }

    pub async fn remove_channel(&self, user: &UserRecord, id: i64) -> Result<(), CoreError> {
        let mut transaction = self.store.begin_write().await?;
        if !channels::remove(&mut transaction, user.id, id).await? {
            return Err(CoreError::NotFound(format!("channel {id} not found")));
        }
        transaction.commit().await?;
        Ok(())
    }

    /// Queues a test message to one of the user's channels, now: never to
    /// a paused or unconfirmed one, and within [`TESTS`]' caps.
    pub async fn test_channel(&self, user: &UserRecord, id: i64) -> Result<(), CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let channel = self.own_channel(&mut transaction, user, id).await?;
        let words = hado_words::for_locale(user.locale.as_str());
        if channel.confirmed_at.is_none() {
            return Err(CoreError::NotNow {
                message: format!(
                    "{} is not confirmed yet: follow the link in its confirmation email first",
                    channel.target
                ),
                said: Said::new(
                    user.locale,
                    words.test_unconfirmed.replace("{address}", &channel.target),
                ),
            });
        }
        if !channel.enabled {
            return Err(CoreError::NotNow {
                message: format!("channel {id} is paused: turn it on before sending a test"),
                said: Said::new(user.locale, words.test_paused.to_owned()),
            });
        }
        let hash = send_requests::target_hash(channel.kind, &channel.target);
        self.take_send(&mut transaction, user, &channel.target, &hash, TESTS).await?;
        let test = NewDelivery {
            event_id: None,
            channel_id: Some(id),
            kind: DeliveryKind::Test,
            due_at: now,
            status: DeliveryStatus::Pending,
            next_attempt_at: Some(now),
            note: None,
        };
        deliveries::insert(&mut transaction, &[test], now).await?;
        transaction.commit().await?;
        self.deliveries_queued.notify_one();
        Ok(())
    }

    /// The delivery log of one of the user's events.
    pub async fn event_deliveries(
        &self,
        user: &UserRecord,
        id: i64,
    ) -> Result<Vec<DeliveryRecord>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        self.own_event_or_deleted(&mut connection, user, id).await?;
        Ok(delivery_log::for_event(&mut connection, id).await?)
    }

    /// Records how the last group of sends went (see [`Self::record`]) and
    /// claims the next due deliveries, each with its event (none for a
    /// test message), leased for `lease`, at most `per_receiver` in flight
    /// to one receiver across all cores: one transaction, a handful of
    /// statements however many.
    pub async fn record_and_claim(
        &self,
        outcomes: &[(&ClaimedDelivery, &Attempt)],
        limit: i64,
        per_receiver: i64,
        lease: chrono::Duration,
    ) -> Result<Vec<(ClaimedDelivery, Option<EventRecord>)>, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        Self::record(&mut transaction, outcomes, now).await?;
        let claimed =
            deliveries::pick(&mut transaction, self.store.backend(), now, limit, per_receiver)
                .await?;
        let event_ids: Vec<i64> = claimed.iter().filter_map(|delivery| delivery.event_id).collect();
        // The leases are written and committed while the events are read on
        // a reader's own connection: on SQLite the two run at once. (The
        // claim does not change events; a reader sees them as committed.)
        let leasing = async {
            deliveries::lease(&mut transaction, &claimed, now + lease).await?;
            transaction.commit().await?;
            Ok::<_, CoreError>(())
        };
        let reading = async {
            if event_ids.is_empty() {
                return Ok(Vec::new());
            }
            let mut reader = self.store.reader().acquire().await?;
            Ok::<_, CoreError>(
                events::find_by_ids(&mut reader, &event_ids, events::ReadFor::Answering).await?,
            )
        };
        let ((), found) = tokio::try_join!(leasing, reading)?;
        let found: HashMap<i64, EventRecord> =
            found.into_iter().map(|event| (event.id, event)).collect();
        Ok(claimed
            .into_iter()
            .map(|delivery| {
                // An event is sent only to its own person's channels.
                let event = delivery.event_id.and_then(|id| {
                    found
                        .get(&id)
                        .filter(|event| event.user_id == delivery.channel.user_id)
                        .cloned()
                });
                (delivery, event)
            })
            .collect())
    }

    /// Writes how a group of sends went: each delivery's outcome; on each
    /// channel what its last attempt says (a failure's error and time, to
    /// be retried or not, or none after a success; a 410 turns it off); and on each receiver whether it
    /// strained, which pauses it, or answered at ease, which ends its
    /// pauses.
    async fn record(
        transaction: &mut impl Connection,
        outcomes: &[(&ClaimedDelivery, &Attempt)],
        now: DateTime<Utc>,
    ) -> Result<(), CoreError> {
        if outcomes.is_empty() {
            return Ok(());
        }
        let Tally { finished, channels: channel_states, receivers } = Tally::of(outcomes);
        deliveries::finish(&mut *transaction, &finished, now).await?;
        // Channels whose last send went through are cleared in one statement.
        let mut cleared = Vec::new();
        for ChannelOutcome { id, gone, last_error } in channel_states {
            if let Some(gone) = gone {
                channels::disable_with_error(&mut *transaction, id, gone, now).await?;
                // A device's ended subscription is removed instead.
                hado_storage::push::remove_gone(&mut *transaction, id, now).await?;
            }
            match last_error {
                Some(None) => cleared.push(id),
                Some(Some(error)) if Some(error) != gone => {
                    channels::set_last_error(&mut *transaction, id, error, now).await?
                }
                _ => {}
            }
        }
        channels::clear_last_errors(&mut *transaction, &cleared, now).await?;
        let mut easy = Vec::new();
        for (receiver, strain) in receivers {
            match strain {
                Some(Strain { asked }) => {
                    deliveries::strained(&mut *transaction, receiver, asked, now).await?
                }
                None => easy.push(receiver),
            }
        }
        deliveries::at_ease(&mut *transaction, &easy).await?;
        Ok(())
    }

    /// An action link for the event of a delivery.
    pub fn action_url(&self, event: &EventRecord, action: LinkAction) -> String {
        self.public_address(&format!("/a/{}", self.link_token(event, action)))
    }

    /// `path` under the address people reach Hado at (`HADO_PUBLIC_URL`).
    pub fn public_address(&self, path: &str) -> String {
        format!("{}{path}", self.outbound.public_url.trim_end_matches('/'))
    }

    /// How many deliveries wait to be sent (the queue depth).
    pub async fn pending_deliveries(&self) -> Result<i64, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(deliveries::pending_count(&mut connection).await?)
    }

    pub async fn earliest_delivery(&self) -> Result<Option<DateTime<Utc>>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(deliveries::earliest_pending(&mut connection).await?)
    }
}

/// A webhook channel just added, with its signing secret (shown this once).
#[derive(Clone, Debug)]
pub struct AddedWebhook {
    pub channel: ChannelRecord,
    pub secret: String,
}
