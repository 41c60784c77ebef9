//! Owns a person's devices as push channels: a browser's subscription
//! added (its endpoint checked exactly as a webhook's URL is, its keys read
//! once), a device renamed, and what Settings says of a device whose push
//! service ended its subscription.

use chrono::{DateTime, Utc};

use crate::Engine;
use crate::error::CoreError;
use crate::web_push::SubscriptionKeys;
use hado_domain::channel::{ChannelKind, ChannelRecord};
use hado_domain::device::{NAME_MAX, device_name};
use hado_domain::text::{quoted, required_text};
use hado_domain::user::UserRecord;
use hado_domain::violations::{Reason, Violations};
use hado_storage::channels;
use hado_storage::{push, send_requests};

/// The most devices one person keeps: each is a channel every reminder
/// goes to, and a post Hado makes.
const DEVICES_PER_PERSON: i64 = 20;

/// A browser's `PushSubscription.toJSON()`, as it arrives, with the
/// `User-Agent` that subscribed.
#[derive(Clone, Debug, Default)]
pub struct NewPush {
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
    /// When the subscription ends, in Unix milliseconds, if the browser says.
    pub expiration_time: Option<i64>,
    pub user_agent: String,
}

impl Engine {
    /// The VAPID public key browsers subscribe with; none when push is off.
    pub fn push_public_key(&self) -> Option<String> {
        self.outbound.push.as_ref().map(|vapid| vapid.public_key())
    }

    /// Adds a device's subscription as a push channel named from its
    /// browser and system, or, for an endpoint the person has already,
    /// takes its new keys and turns it on again.
    pub async fn add_push(
        &self,
        user: &UserRecord,
        new: NewPush,
    ) -> Result<ChannelRecord, CoreError> {
        if self.outbound.push.is_none() {
            return Err(CoreError::FailedPrecondition(
                "push is not set up on this Hado: the operator sets HADO_VAPID_SUBJECT".into(),
            ));
        }
        let now = self.now();
        let (endpoint, keys) = self.checked_subscription(&new, now).await?;
        let target = endpoint.as_str();
        let mut transaction = self.store.begin_write().await?;
        // On Postgres, a person's devices are counted and added one request
        // at a time, so a burst of subscriptions cannot pass the cap
        // together (SQLite's one writer does this already).
        send_requests::lock(
            &mut transaction,
            user.id,
            &send_requests::target_hash(ChannelKind::Push, target),
        )
        .await?;
        let known =
            channels::find_own_by_target(&mut transaction, user.id, ChannelKind::Push, target)
                .await?;
        let id = match known {
            Some(channel) => {
                push::renew(&mut transaction, channel.id, &keys.stored(), now).await?;
                channel.id
            }
            None => {
                let held =
                    channels::count_of_kind(&mut transaction, user.id, ChannelKind::Push).await?;
                if held >= DEVICES_PER_PERSON {
                    return Err(CoreError::invalid(
                        "endpoint",
                        format!(
                            "endpoint: you have {held} devices already, the most Hado keeps; remove one first"
                        ),
                    ));
                }
                let stored = keys.stored();
                let channel = channels::add(
                    &mut transaction,
                    user.id,
                    ChannelKind::Push,
                    target,
                    Some(&stored),
                    now,
                )
                .await?;
                let name: String = device_name(&new.user_agent).chars().take(NAME_MAX).collect();
                push::set_name(&mut transaction, user.id, channel.id, &name, now).await?;
                channel.id
            }
        };
        push::forget_gone_device(&mut transaction, user.id).await?;
        let channel = self.own_channel(&mut transaction, user, id).await?;
        transaction.commit().await?;
        Ok(channel)
    }

    /// A subscription's endpoint, checked as a webhook's URL is (and https
    /// unless the operator allows otherwise), and its keys, read once.
    async fn checked_subscription(
        &self,
        new: &NewPush,
        now: DateTime<Utc>,
    ) -> Result<(url::Url, SubscriptionKeys), CoreError> {
        let raw = new.endpoint.trim();
        // Push services are reached over https; plain http is for tests,
        // with the operator's leave. Checked before any name is resolved.
        let plain = url::Url::parse(raw).is_ok_and(|url| url.scheme() != "https");
        if plain && !self.outbound.allow_private {
            return Err(CoreError::invalid_because(
                "endpoint",
                Reason::NotAUrl,
                format!(
                    "endpoint {} is not https: push services are reached over https",
                    quoted(raw)
                ),
            ));
        }
        // The same rules as a webhook's URL: a push endpoint is where Hado
        // posts, whoever says it is a push service.
        let endpoint = self.reachable_url("endpoint", raw).await?;
        let keys = SubscriptionKeys::parse(&new.p256dh, &new.auth)
            .map_err(|(field, message)| CoreError::invalid(field, message))?;
        if let Some(expires) = new.expiration_time
            && expires <= now.timestamp_millis()
        {
            return Err(CoreError::invalid(
                "expirationTime",
                format!(
                    "expirationTime {expires} has passed: subscribe again for a new subscription"
                ),
            ));
        }
        Ok((endpoint, keys))
    }

    /// Gives one of the person's channels the name they chose.
    pub async fn rename_channel(
        &self,
        user: &UserRecord,
        id: i64,
        raw: &str,
    ) -> Result<ChannelRecord, CoreError> {
        let mut violations = Violations::default();
        let name = required_text("name", raw, NAME_MAX, &mut violations);
        let name = violations.into_result(name).map_err(CoreError::Invalid)?;
        let mut transaction = self.store.begin_write().await?;
        if !push::set_name(&mut transaction, user.id, id, &name, self.now()).await? {
            return Err(CoreError::NotFound(format!("channel {id} not found")));
        }
        let channel = self.own_channel(&mut transaction, user, id).await?;
        transaction.commit().await?;
        Ok(channel)
    }

    /// The device whose push service last ended its subscription (so that
    /// its channel was removed), and when, until another device subscribes.
    pub async fn gone_device(
        &self,
        user: &UserRecord,
    ) -> Result<Option<(String, DateTime<Utc>)>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(push::gone_device(&mut connection, user.id).await?)
    }
}
