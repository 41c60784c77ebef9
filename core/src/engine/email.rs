//! Owns email channels: an address added unconfirmed with one confirmation
//! message queued, the same address again only queueing another (a few an
//! hour at most), and the channel links an email carries, which confirm
//! the address or pause the channel (its one-click unsubscribe).

use chrono::{DateTime, Duration, Utc};

use crate::domain::address::EmailAddress;
use crate::domain::violations::Reason;
use crate::engine::Engine;
use crate::error::CoreError;
use crate::links::{ChannelLink, ChannelLinkAction};
use crate::storage::channels::{self, ChannelKind, ChannelRecord};
use crate::storage::deliveries::{self, DeliveryKind, DeliveryStatus, NewDelivery};
use crate::storage::delivery_log;
use crate::storage::{UserRecord, users};

/// Confirmations one address may be sent in [`CONFIRMATION_WINDOW`].
pub(crate) const CONFIRMATIONS_PER_WINDOW: i64 = 3;
const CONFIRMATION_WINDOW: Duration = Duration::hours(1);
/// Email addresses one person may have, confirmed or not: each new one
/// sends a message to whoever owns it.
const ADDRESSES_PER_PERSON: i64 = 10;

/// An email address just added, or added again.
#[derive(Clone, Debug)]
pub struct AddedEmail {
    pub(crate) channel: ChannelRecord,
    /// Whether it was there already, so that only its confirmation went again.
    pub(crate) resent: bool,
}

impl Engine {
    /// Adds an email address for the user, unconfirmed, and queues its
    /// confirmation; an address already there gets its confirmation again
    /// (none once it is confirmed), at most [`CONFIRMATIONS_PER_WINDOW`] an
    /// hour.
    pub(crate) async fn add_email(
        &self,
        user: &UserRecord,
        raw: &str,
    ) -> Result<AddedEmail, CoreError> {
        let address = EmailAddress::parse(raw).map_err(CoreError::Invalid)?.into_string();
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let known =
            channels::find_own_by_target(&mut transaction, user.id, ChannelKind::Email, &address)
                .await?;
        let (channel, resent) = match known {
            Some(channel) if channel.confirmed_at.is_some() => {
                return Ok(AddedEmail { channel, resent: false });
            }
            Some(channel) => {
                let (sent, since) = confirmations_after(&channel, now)?;
                channels::count_confirmation(&mut transaction, channel.id, sent, since, now)
                    .await?;
                (channel, true)
            }
            None => {
                let held =
                    channels::count_of_kind(&mut transaction, user.id, ChannelKind::Email).await?;
                if held >= ADDRESSES_PER_PERSON {
                    return Err(CoreError::invalid_because(
                        "address",
                        Reason::Unspecified,
                        format!(
                            "address: you have {held} email addresses already, the most Hado keeps; remove one first"
                        ),
                    ));
                }
                let channel = channels::add(
                    &mut transaction,
                    user.id,
                    ChannelKind::Email,
                    &address,
                    None,
                    now,
                )
                .await?;
                (channel, false)
            }
        };
        let confirmation = NewDelivery {
            event_id: None,
            channel_id: Some(channel.id),
            kind: DeliveryKind::Confirmation,
            due_at: now,
            status: DeliveryStatus::Pending,
            next_attempt_at: Some(now),
            note: None,
        };
        deliveries::insert(&mut transaction, &[confirmation], now).await?;
        let channel = self.own_channel(&mut transaction, user, channel.id).await?;
        transaction.commit().await?;
        self.deliveries_queued.notify_one();
        Ok(AddedEmail { channel, resent })
    }

    /// A channel's person, for an email that is not about an event.
    pub(crate) async fn person(&self, user_id: i64) -> Result<UserRecord, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(users::user_by_id(&mut connection, user_id).await?)
    }

    /// When the first reminder of an event to a channel was due: the root
    /// of the thread its emails form.
    pub(crate) async fn first_email_of(
        &self,
        event_id: i64,
        channel_id: i64,
    ) -> Result<Option<DateTime<Utc>>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(delivery_log::first_reminder_at(&mut connection, event_id, channel_id).await?)
    }

    /// A channel link's address, for the channel's email.
    pub(crate) fn channel_link_url(
        &self,
        channel: &ChannelRecord,
        action: ChannelLinkAction,
    ) -> String {
        let token = self.links.issue_for_channel(channel.id, channel.user_id, action, self.now());
        self.public_address(&format!("/c/{token}"))
    }

    /// What a channel link names, checked, with its person and channel as
    /// they are now.
    pub(crate) async fn inspect_channel_link(
        &self,
        token: &str,
    ) -> Result<(ChannelLink, UserRecord, ChannelRecord), CoreError> {
        let link = self.link_or_refusal(self.links.check_channel(token, self.now())).await?;
        let mut connection = self.store.reader().acquire().await?;
        let gone = || CoreError::NotFound("this address was removed from Hado".into());
        let user = users::user_by_id(&mut connection, link.user_id).await.map_err(|_| gone())?;
        let channel =
            channels::find(&mut connection, user.id, link.channel_id).await?.ok_or_else(gone)?;
        Ok((link, user, channel))
    }

    /// Performs a channel link: confirms the address, or pauses the channel.
    pub(crate) async fn use_channel_link(
        &self,
        token: &str,
    ) -> Result<(ChannelLink, UserRecord, ChannelRecord), CoreError> {
        let (link, user, channel) = self.inspect_channel_link(token).await?;
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        match link.action {
            ChannelLinkAction::Confirm => {
                channels::confirm(&mut transaction, channel.id, now).await?;
            }
            ChannelLinkAction::Pause if channel.enabled => {
                channels::set_enabled(&mut transaction, user.id, channel.id, false, now).await?;
            }
            ChannelLinkAction::Pause => {}
        }
        let channel = self.own_channel(&mut transaction, &user, channel.id).await?;
        transaction.commit().await?;
        Ok((link, user, channel))
    }
}

/// The count of confirmations after one more is sent now, and the start of
/// its window; refused when the window's are spent.
fn confirmations_after(
    channel: &ChannelRecord,
    now: DateTime<Utc>,
) -> Result<(i64, DateTime<Utc>), CoreError> {
    match channel.confirmations_since {
        Some(since) if now < since + CONFIRMATION_WINDOW => {
            if channel.confirmations_sent >= CONFIRMATIONS_PER_WINDOW {
                let again = since + CONFIRMATION_WINDOW;
                return Err(CoreError::Exhausted {
                    message: format!(
                        "a confirmation went to {} {} times in the last hour; look for it (and in spam), or add the address again after {}",
                        channel.target,
                        channel.confirmations_sent,
                        again.format("%H:%M UTC")
                    ),
                    retry_after: (again - now).to_std().unwrap_or_default(),
                });
            }
            Ok((channel.confirmations_sent + 1, since))
        }
        _ => Ok((1, now)),
    }
}
