//! Owns every operation on the inbox — for sources, for the person and their
//! agent, and for the operator — as one path from validated input through the
//! domain's decisions to storage, with the clock as an input. The gRPC layer
//! only authenticates and translates; gateways only call that.
//!
//! One `Engine`, its operations in one file per caller: `sources`, `inbox`
//! (the person and their agent), `credentials` (tokens and action links),
//! `oauth` (agents signing in),
//! `operator`, `outbox` (channels and deliveries), `chats` (what Telegram's
//! chats do) and `schedule` (the scheduler's pass). This file holds the
//! shared types and helpers.

mod chats;
mod credentials;
mod inbox;
mod oauth;
mod operator;
mod outbox;
mod schedule;
mod sources;

pub(crate) use chats::BUTTON_ID_LENGTH;
pub(crate) use oauth::{OAuthFailure, TokenParams, Verdict};
pub(crate) use outbox::{Attempt, Strain};

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use sqlx::AnyConnection;
use tokio::sync::Notify;

use crate::clock::Clock;
use crate::domain::checkpoints::Ladder;
use crate::domain::event::{self, EventSpec, Existing, Lifecycle, Outcome, RawFields, RememberFor};
use crate::domain::fields::{DeepLink, Login, SourceName, SourceRef, Topic, quoted};
use crate::domain::profile::{Locale, parse_clock_time, parse_time_zone};
use crate::domain::reminders::{self, Fired, ReminderKind, Reminders};
use crate::domain::state::State;
use crate::domain::violations::{Reason, Violations};
use crate::error::CoreError;
use crate::links::{ActionLink, LinkAction, LinkProblem, LinkSigner};
use crate::storage::channels::{self, ChannelRecord};
use crate::storage::deliveries::NewDelivery;
use crate::storage::events::LifecycleWrite;
use crate::storage::users::AgentTokenUser;
use crate::storage::{
    EventKey, EventRecord, EventWrite, NewEvent, SourceRecord, Store, UserRecord, UserSummary,
    events, users,
};
use crate::targets::TargetPolicy;
use crate::tokens;

/// A batch holds at most this many items.
pub(crate) const MAX_BATCH: usize = 1000;

/// The source a caller authenticated as.
#[derive(Clone, Debug)]
pub struct SourceCaller {
    pub(crate) id: i64,
    pub(crate) name: SourceName,
}

/// One item of a source's batch, as it arrives.
#[derive(Clone, Debug, Default)]
pub struct SourceItem {
    pub user: String,
    pub source_ref: String,
    pub topic: String,
    pub fields: RawFields,
}

/// What an upsert did to one item.
#[derive(Clone, Copy, Debug)]
pub struct UpsertReport {
    pub id: i64,
    pub outcome: Outcome,
    pub state: State,
}

/// What an upsert decided for one item, before anything is written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decision {
    outcome: Outcome,
    lifecycle: Lifecycle,
    /// The due moment in the user's current zone.
    due_at: DateTime<Utc>,
    reminders: Reminders,
    next_check_at: Option<DateTime<Utc>>,
}

impl Decision {
    fn write<'a>(&self, spec: &'a EventSpec) -> EventWrite<'a> {
        EventWrite {
            spec,
            lifecycle: self.lifecycle,
            due_at: self.due_at,
            reminders: self.reminders,
            next_check_at: self.next_check_at,
        }
    }
}

/// A key of a source's event, as it arrives.
#[derive(Clone, Debug, Default)]
pub struct RawKey {
    pub user: String,
    pub source_ref: String,
    pub topic: String,
}

/// What a withdrawal found under one key.
#[derive(Clone, Copy, Debug)]
pub struct WithdrawReport {
    pub found: Option<(i64, State)>,
}

/// A partial change to the user's own event: `None` leaves a field as it is.
#[derive(Clone, Debug, Default)]
pub struct EventPatch {
    pub title: Option<String>,
    pub due_at: Option<String>,
    pub subtitle: Option<String>,
    pub fire_at: Option<String>,
    pub after_due: Option<String>,
    pub done_label: Option<String>,
    pub deep_link: Option<String>,
}

/// What a list is narrowed to, as it arrives: text in the title or
/// subtitle, and a source.
#[derive(Clone, Debug, Default)]
pub struct EventFilter {
    pub text: Option<String>,
    pub source: Option<String>,
}

/// The longest text a list may be searched for.
const MAX_SEARCH_CHARS: usize = 200;

/// An [`EventFilter`], checked: the text in lower case.
struct Matches {
    text: Option<String>,
    source: Option<SourceName>,
}

impl EventFilter {
    fn parse(&self) -> Result<Matches, CoreError> {
        let mut violations = Violations::default();
        let text = self.text.as_deref().map(str::trim).filter(|text| !text.is_empty());
        if text.is_some_and(|text| text.chars().count() > MAX_SEARCH_CHARS) {
            violations.add("text", format!("text is over {MAX_SEARCH_CHARS} characters"));
        }
        let source = self
            .source
            .as_deref()
            .filter(|source| !source.is_empty())
            .map(|raw| SourceName::parse("source", raw, &mut violations));
        let matches = Matches { text: text.map(str::to_lowercase), source: source.flatten() };
        violations.into_result(Some(matches)).map_err(CoreError::Invalid)
    }
}

/// The events a search reads at a time.
const SEARCH_CHUNK: u32 = 1000;

impl Matches {
    /// Whether nothing narrows the list.
    fn admits_all(&self) -> bool {
        self.text.is_none() && self.source.is_none()
    }

    fn admits(&self, record: &EventRecord) -> bool {
        let source = self.source.as_ref().is_none_or(|source| record.source == source.as_str());
        let text = self.text.as_deref().is_none_or(|text| {
            record.spec.title.as_str().to_lowercase().contains(text)
                || record
                    .spec
                    .subtitle
                    .as_deref()
                    .is_some_and(|subtitle| subtitle.to_lowercase().contains(text))
        });
        source && text
    }
}

/// A partial change to a user's settings.
#[derive(Clone, Debug, Default)]
pub struct ProfilePatch {
    pub tz: Option<String>,
    pub quiet_start: Option<String>,
    pub quiet_end: Option<String>,
    pub locale: Option<String>,
}

/// Whether a user has an agent token, and its history.
#[derive(Clone, Copy, Debug)]
pub struct AgentTokenStatus {
    pub(crate) created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

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
    /// Woken after every write, so that the scheduler re-reads the earliest
    /// check instead of sleeping past a new one.
    wake: Arc<Notify>,
    /// Woken when deliveries are queued, so that the delivery loop sends them
    /// at once.
    deliveries_queued: Arc<Notify>,
    /// Users whose agent token's use is being recorded right now.
    token_marks: Arc<std::sync::Mutex<std::collections::HashSet<i64>>>,
}

/// Where reminders may go and what their links point at.
#[derive(Clone, Debug)]
pub(crate) struct Outbound {
    /// The public address of the HTTP gateway, for action links (`HADO_PUBLIC_URL`).
    pub(crate) public_url: String,
    /// Whether webhooks may target private and loopback addresses (`HADO_WEBHOOK_ALLOW_PRIVATE`).
    pub(crate) allow_private: bool,
}

impl Outbound {
    /// Which addresses webhooks may reach.
    pub(crate) fn targets(&self) -> TargetPolicy {
        TargetPolicy { allow_private: self.allow_private }
    }
}

/// A webhook channel just added, with its signing secret (shown this once).
#[derive(Clone, Debug)]
pub struct AddedWebhook {
    pub(crate) channel: ChannelRecord,
    pub(crate) secret: String,
}

/// Parses one item of a batch, collecting its violations under `events[i]`.
fn parse_item(
    index: usize,
    item: &SourceItem,
    violations: &mut Violations,
) -> Option<(Login, SourceRef, Topic, EventSpec)> {
    let mut own = Violations::default();
    let login = Login::parse("user", &item.user, &mut own);
    let source_ref = SourceRef::parse("ref", &item.source_ref, &mut own);
    let topic = Topic::parse("topic", &item.topic, &mut own);
    let spec = match EventSpec::parse(&item.fields) {
        Ok(spec) => Some(spec),
        Err(spec_violations) => {
            // Each keeps its stable reason, as a single event's does.
            own.extend(spec_violations);
            None
        }
    };
    let valid = own.is_empty();
    violations.extend_prefixed(&format!("events[{index}]"), own);
    match (login, source_ref, topic, spec) {
        (Some(login), Some(source_ref), Some(topic), Some(spec)) if valid => {
            Some((login, source_ref, topic, spec))
        }
        _ => None,
    }
}

/// Parses one value, turning its violations into the caller's error.
fn parse_one<T>(parse: impl FnOnce(&mut Violations) -> Option<T>) -> Result<T, CoreError> {
    let mut violations = Violations::default();
    let value = parse(&mut violations);
    violations.into_result(value).map_err(CoreError::Invalid)
}

fn check_batch_size(field: &str, len: usize) -> Result<(), CoreError> {
    if len > MAX_BATCH {
        return Err(CoreError::invalid(
            field,
            format!("{field} holds {len} items; a batch holds at most {MAX_BATCH}"),
        ));
    }
    Ok(())
}

/// The error for a user's change to another source's event.
fn owned_elsewhere(record: &EventRecord) -> CoreError {
    CoreError::SourceOwned(record.source.clone())
}

impl Engine {
    pub(crate) async fn new(
        store: Store,
        clock: Arc<dyn Clock>,
        (default_zone, default_locale): (Tz, Locale),
        links: LinkSigner,
        outbound: Outbound,
    ) -> Result<Self, CoreError> {
        let manual_source_id = store.source_id(SourceName::MANUAL).await?.ok_or_else(|| {
            crate::storage::StoreError::Corrupt("the manual source is missing".into())
        })?;
        Ok(Self {
            store,
            clock,
            default_zone,
            default_locale,
            manual_source_id,
            links,
            outbound,
            wake: Arc::new(Notify::new()),
            deliveries_queued: Arc::new(Notify::new()),
            token_marks: Arc::default(),
        })
    }

    /// The store, for the test harness; no caller outside core reaches
    /// storage past the engine.
    #[cfg(feature = "testing")]
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// Whether storage can be written now: the liveness row, written.
    pub(crate) async fn probe_storage(&self) -> Result<(), crate::storage::StoreError> {
        self.store.probe(self.now().timestamp_millis()).await
    }

    /// Which backend the database is (for core's start-up line).
    pub(crate) fn backend(&self) -> crate::storage::Backend {
        self.store.backend()
    }

    /// Closes the database's connections; the engine is done.
    pub async fn close(&self) {
        self.store.close().await;
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub(crate) fn wake_handle(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    pub(crate) fn deliveries_handle(&self) -> Arc<Notify> {
        self.deliveries_queued.clone()
    }

    fn written(&self) {
        self.wake.notify_one();
    }
}
