//! Owns email channels: an address added unconfirmed with one confirmation
//! message queued, the same address again only queueing another, within
//! the caps of `caps` (per address however often it is removed and added,
//! and per person); an address whose owner refused confirmations gets
//! none; and the channel links an email carries, bound to the address they
//! were sent to, which confirm the address, pause the channel (a reminder's
//! one-click unsubscribe, which also takes the confirmation back) or refuse
//! every later confirmation (a confirmation's).

use chrono::{DateTime, Utc};

use crate::Engine;
use crate::caps::CONFIRMATIONS;
use crate::error::CoreError;
use crate::links::{ChannelLink, ChannelLinkAction, LinkProblem};
use hado_domain::address::EmailAddress;
use hado_domain::channel::{ChannelKind, ChannelRecord};
use hado_domain::delivery::{DeliveryKind, DeliveryStatus};
use hado_domain::text::quoted;
use hado_domain::user::UserRecord;
use hado_domain::violations::Reason;
use hado_storage::channels;
use hado_storage::deliveries::{self, NewDelivery};
use hado_storage::delivery_log;
use hado_storage::send_requests::{self, target_hash};
use hado_storage::users;

/// Email addresses one person may have, confirmed or not: each new one
/// sends a message to whoever owns it.
const ADDRESSES_PER_PERSON: i64 = 10;

/// An email address just added, or added again.
#[derive(Clone, Debug)]
pub struct AddedEmail {
    pub channel: ChannelRecord,
    /// Whether it was there already, so that only its confirmation went again.
    pub resent: bool,
}

/// What a channel link names, as it is now: the channel is gone for a
/// refusal whose address was removed since, which still works.
pub type UsedChannelLink = (ChannelLink, UserRecord, Option<ChannelRecord>);

/// Why every unconfirmed channel of a refused address is paused.
const REFUSED: &str = "the address's owner asked Hado for no more confirmation emails";

impl Engine {
    /// Adds an email address for the user, unconfirmed, and queues its
    /// confirmation; an address already there gets its confirmation again
    /// (none once it is confirmed), within [`CONFIRMATIONS`]' caps.
    pub async fn add_email(&self, user: &UserRecord, raw: &str) -> Result<AddedEmail, CoreError> {
        let address = EmailAddress::parse(raw).map_err(CoreError::Invalid)?.into_string();
        let mut transaction = self.store.begin_write().await?;
        let known =
            channels::find_own_by_target(&mut transaction, user.id, ChannelKind::Email, &address)
                .await?;
        if let Some(channel) = known.as_ref().filter(|channel| channel.confirmed_at.is_some()) {
            return Ok(AddedEmail { channel: channel.clone(), resent: false });
        }
        let held = channels::count_of_kind(&mut transaction, user.id, ChannelKind::Email).await?;
        if known.is_none() && held >= ADDRESSES_PER_PERSON {
            return Err(CoreError::invalid(
                "address",
                format!(
                    "address: you have {held} email addresses already, the most Hado keeps; remove one first"
                ),
            ));
        }
        let resent = known.is_some();
        let id = self.queue_confirmation(&mut transaction, user, known, &address).await?;
        let channel = self.own_channel(&mut transaction, user, id).await?;
        transaction.commit().await?;
        self.deliveries_queued.notify_one();
        Ok(AddedEmail { channel, resent })
    }

    /// Queues one confirmation to `address` for `user`, adding its channel
    /// when `known` is none, and answers the channel's id. Refused when the
    /// address asked for no confirmation (unless `user` signed in with it:
    /// its owner signing up), or when a cap is spent. Also what sends an
    /// unconfirmed channel its confirmation again as its person turns it on.
    pub(super) async fn queue_confirmation(
        &self,
        transaction: &mut impl hado_storage::Connection,
        user: &UserRecord,
        known: Option<ChannelRecord>,
        address: &str,
    ) -> Result<i64, CoreError> {
        let now = self.now();
        let hash = target_hash(ChannelKind::Email, address);
        // Only the person signed in with the address itself may still ask,
        // and only for themselves: the refusal stands for everyone else.
        if user.login.as_str() != address
            && send_requests::is_suppressed(transaction, &hash).await?
        {
            return Err(CoreError::invalid_because(
                "address",
                Reason::AddressRefusedMail,
                format!(
                    "address {} asked Hado not to send it confirmation emails",
                    quoted(address)
                ),
            ));
        }
        self.take_send(transaction, user, address, &hash, CONFIRMATIONS).await?;
        let id = match known {
            Some(channel) => channel.id,
            None => {
                channels::add(transaction, user.id, ChannelKind::Email, address, None, now)
                    .await?
                    .id
            }
        };
        let confirmation = NewDelivery {
            event_id: None,
            channel_id: Some(id),
            kind: DeliveryKind::Confirmation,
            due_at: now,
            status: DeliveryStatus::Pending,
            next_attempt_at: Some(now),
            note: None,
        };
        deliveries::insert(transaction, &[confirmation], now).await?;
        Ok(id)
    }

    /// Whether the address of `channel` refused every confirmation (and
    /// its person is not signed in with the address itself), as a
    /// confirmation to it is about to go.
    pub async fn refused_confirmations(&self, channel: &ChannelRecord) -> Result<bool, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        let hash = target_hash(channel.kind, &channel.target);
        if !send_requests::is_suppressed(&mut connection, &hash).await? {
            return Ok(false);
        }
        let person = users::user_by_id(&mut connection, channel.user_id).await?;
        Ok(person.login.as_str() != channel.target)
    }

    /// A channel's person, for an email that is not about an event.
    pub async fn person(&self, user_id: i64) -> Result<UserRecord, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(users::user_by_id(&mut connection, user_id).await?)
    }

    /// When the first reminder of an event to a channel was due: the root
    /// of the thread its emails form.
    pub async fn first_email_of(
        &self,
        event_id: i64,
        channel_id: i64,
    ) -> Result<Option<DateTime<Utc>>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(delivery_log::first_reminder_at(&mut connection, event_id, channel_id).await?)
    }

    /// A channel link's address, for the channel's email, bound to its target.
    pub fn channel_link_url(&self, channel: &ChannelRecord, action: ChannelLinkAction) -> String {
        let token = self.links.issue_for_channel(
            channel.id,
            channel.user_id,
            &target_hash(channel.kind, &channel.target),
            action,
            self.now(),
        );
        self.public_address(&format!("/c/{token}"))
    }

    /// What a channel link names, checked, with its person and channel as
    /// they are now. A channel that is gone, or that is not the address the
    /// link was sent to, makes it an expired link, except for a refusal,
    /// which speaks for the address and not for the channel.
    pub async fn inspect_channel_link(&self, token: &str) -> Result<UsedChannelLink, CoreError> {
        let link = self.link_or_refusal(self.links.check_channel(token, self.now())).await?;
        let gone = LinkProblem::Gone { user_id: link.user_id };
        let mut connection = self.store.reader().acquire().await?;
        let Ok(user) = users::user_by_id(&mut connection, link.user_id).await else {
            return self.link_or_refusal(Err(gone)).await;
        };
        let channel =
            channels::find(&mut connection, user.id, link.channel_id).await?.filter(|channel| {
                link.bound.admits(&target_hash(channel.kind, &channel.target), channel.created_at)
            });
        let refusal = link.action == ChannelLinkAction::Refuse;
        if refusal && link.bound.target().is_none() {
            // Only a link that names its address can refuse it.
            return Err(CoreError::Link { problem: LinkProblem::Forged, locale: None });
        }
        if channel.is_none() && !refusal {
            return Err(CoreError::Link { problem: gone, locale: Some(user.locale) });
        }
        Ok((link, user, channel))
    }

    /// Performs a channel link: confirms the address, pauses the channel
    /// (taking its confirmation back), or refuses every later confirmation
    /// to the address.
    pub async fn use_channel_link(&self, token: &str) -> Result<UsedChannelLink, CoreError> {
        let (link, user, channel) = self.inspect_channel_link(token).await?;
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        match (link.action, &channel) {
            (ChannelLinkAction::Confirm, Some(channel)) => {
                channels::confirm(&mut transaction, channel.id, now).await?;
            }
            // Whether or not its person had paused it: the recipient's
            // unsubscribe takes the confirmation back either way.
            (ChannelLinkAction::Pause, Some(channel))
                if channel.enabled || channel.confirmed_at.is_some() =>
            {
                channels::pause_by_recipient(&mut transaction, channel.id, now).await?;
            }
            (ChannelLinkAction::Refuse, _) => {
                let prefix = link.bound.target().unwrap_or_default();
                send_requests::suppress(&mut transaction, prefix, now).await?;
                if let Some(channel) = &channel {
                    let refused = channels::refuse_unconfirmed(
                        &mut transaction,
                        &channel.target,
                        REFUSED,
                        now,
                    )
                    .await?;
                    deliveries::drop_pending_confirmations(
                        &mut transaction,
                        &refused,
                        REFUSED,
                        now,
                    )
                    .await?;
                }
            }
            _ => {}
        }
        let channel = match channel {
            Some(channel) => channels::find(&mut transaction, user.id, channel.id).await?,
            None => None,
        };
        transaction.commit().await?;
        Ok((link, user, channel))
    }
}
