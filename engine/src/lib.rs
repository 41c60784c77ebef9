//! Owns every operation on the inbox — for sources, for the person and their
//! agent, and for the operator — as one path from validated input through the
//! domain's decisions to storage, with the clock as an input. The gRPC layer
//! only authenticates and translates; gateways only call that.
//!
//! One `Engine`, its operations in one file per caller: `sources` (with
//! `upsert_group`, which applies calls arriving together in one
//! transaction, or one-event calls first each by itself), `inbox`
//! (what the person and their agent read), `inbox_view` (what an inbox
//! shows, in one call), `own_events` (their own events),
//! `answers` (Done, Remember, Reopen), `profile` (their settings), `credentials` (tokens and action links),
//! `oauth` (agents signing in),
//! `operator`, `outbox` (channels and deliveries), `email` (addresses and
//! their links), `caps` (what one person can make Hado send to someone
//! else), `chats` (what Telegram's
//! chats do) and `schedule` (the scheduler's pass). This file holds the
//! shared types and helpers.

mod answers;
mod caps;
mod chats;
pub mod clock;
mod credentials;
mod email;
pub mod error;
mod inbox;
mod inbox_view;
mod inputs;
mod kept;
pub mod links;
pub mod loops;
pub mod network;
mod oauth;
mod oauth_tokens;
mod operator;
pub mod outbound_tls;
mod outbox;
mod outcomes;
mod own_events;
mod profile;
mod push;
mod schedule;
mod sources;
pub mod targets;
pub mod tokens;
/// What one look at storage found, for core's probe (`storage_watch`).
#[derive(Debug)]
pub enum StorageLook {
    /// It answered: the row was written, or the server took a connection.
    Fine,
    /// It did not answer in time: a busy writer, or a lost one.
    Slow,
    /// It failed, and why.
    Failed(hado_storage::StoreError),
}

impl StorageLook {
    fn of(verdict: Result<(), hado_storage::StoreError>) -> Self {
        match verdict {
            Ok(()) => Self::Fine,
            Err(hado_storage::StoreError::TimedOut) => Self::Slow,
            Err(error) => Self::Failed(error),
        }
    }
}

mod upsert;
mod upsert_group;
pub mod web_push;

pub use chats::BUTTON_ID_LENGTH;
pub use credentials::AgentTokenStatus;
pub use email::AddedEmail;
pub use email::UsedChannelLink;
pub use inbox::Attention;
pub use inbox_view::{GroupView, InboxAsk, InboxView, PageAsk};
pub use inputs::{EventFilter, EventPatch, ProfilePatch, RawKey, SourceCaller, SourceItem};
pub use oauth::{OAuthFailure, Verdict};
pub use oauth_tokens::TokenParams;
pub use outbox::AddedWebhook;
pub use outcomes::{Attempt, Strain};
pub use push::NewPush;
pub use sources::WithdrawReport;
pub use upsert::UpsertReport;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use tokio::sync::Notify;

use crate::clock::Clock;
use crate::error::CoreError;
use crate::links::LinkSigner;
use crate::loops::Alarm;
use crate::network::Network;
use crate::targets::TargetPolicy;
use hado_domain::fields::SourceName;
use hado_domain::profile::Locale;
use hado_storage::Store;

pub struct Engine {
    store: Store,
    clock: Arc<dyn Clock>,
    /// The zone and language of a user seen for the first time.
    default_zone: Tz,
    default_locale: Locale,
    manual_source_id: i64,
    /// Signs and checks action links with `HADO_SECRET`.
    links: LinkSigner,
    /// Where reminders may go and what their links point at.
    outbound: Outbound,
    /// The engine's only way out apart from storage.
    network: Arc<dyn Network>,
    /// Rung by a write that may bring a check sooner, so that the scheduler
    /// re-reads the earliest check instead of sleeping past a new one.
    alarm: Arc<Alarm>,
    /// Woken when deliveries are queued, so that the delivery loop sends them
    /// at once.
    deliveries_queued: Arc<Notify>,
    /// Sources' upserts waiting to share a transaction.
    upserts: upsert_group::UpsertGroups,
    /// How many groups of sources' one-event calls were inserted alone
    /// (read by the test harness only).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    upserts_alone: Arc<std::sync::atomic::AtomicU64>,
    /// Users whose agent token's use is being recorded right now.
    token_marks: Arc<std::sync::Mutex<std::collections::HashSet<i64>>>,
    /// Who the credentials name, kept until something changes (`kept`).
    kept: Arc<kept::Kept>,
    /// The SQLite file's lock, which makes this core its only one, held
    /// until the engine closes: what lets `kept` keep without a change feed.
    core_lock: std::sync::Mutex<Option<hado_storage::CoreLock>>,
}

/// Where reminders may go and what their links point at.
#[derive(Clone, Debug)]
pub struct Outbound {
    /// The public address of the HTTP gateway, for action links (`HADO_PUBLIC_URL`).
    pub public_url: String,
    /// Whether webhooks may target private and loopback addresses (`HADO_WEBHOOK_ALLOW_PRIVATE`).
    pub allow_private: bool,
    /// This Hado's VAPID identity; none when push is off.
    pub push: Option<Arc<crate::web_push::Vapid>>,
}

impl Outbound {
    /// Which addresses webhooks may reach.
    pub fn targets(&self) -> TargetPolicy {
        TargetPolicy { allow_private: self.allow_private }
    }
}

impl Engine {
    pub async fn new(
        store: Store,
        clock: Arc<dyn Clock>,
        (default_zone, default_locale): (Tz, Locale),
        links: LinkSigner,
        outbound: Outbound,
        network: Arc<dyn Network>,
    ) -> Result<Self, CoreError> {
        let manual_source_id = store.source_id(SourceName::MANUAL).await?.ok_or_else(|| {
            hado_storage::StoreError::Corrupt("the manual source is missing".into())
        })?;
        let kept = match store.change_feed() {
            Some(feed) => {
                let kept = Arc::new(kept::Kept::default());
                kept::listen(feed?, &kept);
                kept
            }
            None => {
                let writer = store.clone();
                Arc::new(kept::Kept::keeping_until(move || Box::pin(writer.writes_settled())))
            }
        };
        let alarm = Arc::<Alarm>::default();
        let (upserts, upserts_alone) = upsert_group::start(
            store.clone(),
            clock.clone(),
            (default_zone, default_locale),
            alarm.clone(),
            kept.clone(),
        );
        Ok(Self {
            store,
            clock,
            default_zone,
            default_locale,
            manual_source_id,
            links,
            outbound,
            network,
            alarm,
            upserts,
            upserts_alone,
            deliveries_queued: Arc::new(Notify::new()),
            token_marks: Arc::default(),
            kept,
            core_lock: std::sync::Mutex::default(),
        })
    }

    /// Holds `core_lock`, taken before the store was opened, until the
    /// engine closes.
    pub fn holding(mut self, core_lock: Option<hado_storage::CoreLock>) -> Self {
        self.core_lock = std::sync::Mutex::new(core_lock);
        self
    }

    /// The store, for the test harness; no caller outside core reaches
    /// storage past the engine.
    #[cfg(feature = "testing")]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Whether this core keeps what it reads of tokens, people and sources
    /// (on Postgres only while it listens for other cores' changes), for
    /// the test harness.
    #[cfg(feature = "testing")]
    pub fn keeps_what_it_reads(&self) -> bool {
        self.kept.is_keeping()
    }

    /// How many groups of sources' one-event calls were inserted alone,
    /// each by a statement its own transaction, for the test harness.
    #[cfg(feature = "testing")]
    pub fn upsert_groups_inserted_alone(&self) -> u64 {
        self.upserts_alone.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The zone of a person seen for the first time (`HADO_DEFAULT_TZ`).
    pub fn default_zone(&self) -> Tz {
        self.default_zone
    }

    /// Whether storage can be written now: the liveness row, written.
    pub async fn probe_storage(&self) -> StorageLook {
        StorageLook::of(self.store.probe(self.now().timestamp_millis()).await)
    }

    /// Whether the database server answers a connection of its own at all,
    /// past the pool: a quick, certain "no" while it is down or restarting.
    pub async fn storage_answers(&self) -> StorageLook {
        StorageLook::of(self.store.answers().await)
    }

    /// Which backend the database is (for core's start-up line).
    pub fn backend(&self) -> hado_storage::Backend {
        self.store.backend()
    }

    /// Whether a failed storage probe means the database cannot be reached
    /// (a server: every call is refused at once), rather than a full disk
    /// under a SQLite file, which still reads.
    pub fn storage_down_refuses_every_call(&self) -> bool {
        self.store.backend().is_a_server()
    }

    /// Closes the database's connections; the engine is done. The SQLite
    /// file's lock goes once they are closed, or once the caller gives up
    /// waiting (dropping this future): the next core may then open it.
    pub async fn close(&self) {
        let _core_lock =
            self.core_lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        self.store.close().await;
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub fn alarm(&self) -> Arc<Alarm> {
        self.alarm.clone()
    }

    pub fn deliveries_handle(&self) -> Arc<Notify> {
        self.deliveries_queued.clone()
    }

    fn written(&self) {
        self.alarm.ring();
    }

    /// After a write: wakes the scheduler only if `earliest`, the earliest
    /// check among the rows written, is due or comes before the check the
    /// scheduler is set for (a check taken away needs no wake: the
    /// scheduler finds nothing due when it looks).
    fn checks_written(&self, earliest: Option<DateTime<Utc>>) {
        self.alarm.checks_written(earliest, self.now());
    }
}
