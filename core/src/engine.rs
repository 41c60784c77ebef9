//! Owns every operation on the inbox — for sources, for the person and their
//! agent, and for the operator — as one path from validated input through the
//! domain's decisions to storage, with the clock as an input. The gRPC layer
//! only authenticates and translates; gateways only call that.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use sqlx::AnyConnection;
use tokio::sync::Notify;

use crate::clock::Clock;
use crate::domain::checkpoints::Ladder;
use crate::domain::event::{self, EventSpec, Existing, Lifecycle, Outcome, RawFields};
use crate::domain::fields::{DeepLink, Locale, Login, SourceName, SourceRef, Topic, parse_clock_time, parse_time_zone, quoted};
use crate::domain::reminders::{self, Fired, ReminderKind, Reminders};
use crate::domain::state::State;
use crate::domain::violations::Violations;
use crate::error::CoreError;
use crate::links::{ActionLink, LinkAction, LinkProblem, LinkSigner, revision_of};
use crate::storage::channels::{self, ChannelRecord, NewDelivery};
use crate::storage::events::LifecycleWrite;
use crate::storage::{EventKey, EventRecord, EventWrite, SourceRecord, Store, UserRecord, UserSummary, events, users};
use crate::targets::TargetPolicy;
use crate::tokens;

/// A batch holds at most this many items.
pub const MAX_BATCH: usize = 1000;

/// The source a caller authenticated as.
#[derive(Clone, Debug)]
pub struct SourceCaller {
    pub id: i64,
    pub name: SourceName,
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
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

pub struct Engine {
    store: Store,
    clock: Arc<dyn Clock>,
    default_zone: Tz,
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
}

/// Where reminders may go and what their links point at.
#[derive(Clone, Debug)]
pub struct Outbound {
    /// The public address of the HTTP gateway, for action links (`HADO_PUBLIC_URL`).
    pub public_url: String,
    /// Whether webhooks may target private and loopback addresses (`HADO_WEBHOOK_ALLOW_PRIVATE`).
    pub allow_private: bool,
    /// The Telegram bot, when one is set up.
    pub telegram: Option<crate::telegram::Bot>,
}

impl Outbound {
    /// Which addresses webhooks may reach.
    pub fn targets(&self) -> TargetPolicy {
        TargetPolicy { allow_private: self.allow_private }
    }
}

/// A webhook channel just added, with its signing secret (shown this once).
#[derive(Clone, Debug)]
pub struct AddedWebhook {
    pub channel: ChannelRecord,
    pub secret: String,
}

/// Parses one item of a batch, collecting its violations under `events[i]`.
fn parse_item(index: usize, item: &SourceItem, violations: &mut Violations) -> Option<(Login, SourceRef, Topic, EventSpec)> {
    let mut own = Violations::default();
    let login = Login::parse("user", &item.user, &mut own);
    let source_ref = SourceRef::parse("ref", &item.source_ref, &mut own);
    let topic = Topic::parse("topic", &item.topic, &mut own);
    let spec = match EventSpec::parse(&item.fields) {
        Ok(spec) => Some(spec),
        Err(spec_violations) => {
            for violation in spec_violations.iter() {
                own.add(&violation.field, violation.message.clone());
            }
            None
        }
    };
    let valid = own.is_empty();
    violations.extend_prefixed(&format!("events[{index}]"), own);
    match (login, source_ref, topic, spec) {
        (Some(login), Some(source_ref), Some(topic), Some(spec)) if valid => Some((login, source_ref, topic, spec)),
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
        return Err(CoreError::invalid(field, format!("{field} holds {len} items; a batch holds at most {MAX_BATCH}")));
    }
    Ok(())
}

/// The error for a user's change to another source's event.
fn owned_elsewhere(record: &EventRecord) -> CoreError {
    let source = &record.source;
    CoreError::FailedPrecondition(format!("this event belongs to source {source}; only {source} can change it"))
}

impl Engine {
    pub async fn new(store: Store, clock: Arc<dyn Clock>, default_zone: Tz, links: LinkSigner, outbound: Outbound) -> Result<Self, CoreError> {
        let manual_source_id =
            store.source_id(SourceName::MANUAL).await?.ok_or_else(|| crate::storage::StoreError::Corrupt("the manual source is missing".into()))?;
        Ok(Self { store, clock, default_zone, manual_source_id, links, outbound, wake: Arc::new(Notify::new()), deliveries_queued: Arc::new(Notify::new()) })
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub fn wake_handle(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    pub fn deliveries_handle(&self) -> Arc<Notify> {
        self.deliveries_queued.clone()
    }

    fn written(&self) {
        self.wake.notify_one();
    }

    // ---- callers -------------------------------------------------------

    pub async fn source_for_token(&self, token: &str) -> Result<Option<SourceCaller>, CoreError> {
        let found = self.store.source_by_token(&tokens::hash(token)).await?;
        Ok(found.map(|(id, name)| SourceCaller { id, name }))
    }

    pub async fn user_for_agent_token(&self, token: &str) -> Result<Option<UserRecord>, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        Ok(users::user_by_agent_token(&mut connection, &tokens::hash(token), self.now()).await?)
    }

    /// The user a gateway names, created on first sight.
    pub async fn user_for_login(&self, raw_login: &str) -> Result<UserRecord, CoreError> {
        let login = parse_one(|violations| Login::parse("user", raw_login, violations))?;
        let mut connection = self.store.pool().acquire().await?;
        if let Some(user) = users::find_user(&mut connection, &login).await? {
            return Ok(user);
        }
        drop(connection);
        let mut transaction = self.store.begin_write().await?;
        let user = users::ensure_user(&mut transaction, &login, self.default_zone, self.now()).await?;
        transaction.commit().await?;
        Ok(user)
    }

    // ---- sources -------------------------------------------------------

    /// Validates the whole batch, then applies it in one transaction.
    pub async fn upsert_batch(&self, source: &SourceCaller, items: &[SourceItem]) -> Result<Vec<UpsertReport>, CoreError> {
        check_batch_size("events", items.len())?;
        let mut violations = Violations::default();
        let parsed: Vec<_> = items.iter().enumerate().map(|(index, item)| parse_item(index, item, &mut violations)).collect();
        if !violations.is_empty() {
            return Err(CoreError::Invalid(violations));
        }
        let now = self.now();
        let parsed: Vec<_> = parsed.into_iter().flatten().collect();
        let mut transaction = self.store.begin_write().await?;
        let mut known_users: HashMap<String, UserRecord> = HashMap::new();
        for (login, ..) in &parsed {
            if !known_users.contains_key(login.as_str()) {
                let user = users::ensure_user(&mut transaction, login, self.default_zone, now).await?;
                known_users.insert(login.as_str().to_owned(), user);
            }
        }
        // The batch's existing events in a few queries, not one per item.
        let keys: Vec<(i64, &str, &str)> =
            parsed.iter().map(|(login, source_ref, topic, _)| (known_users[login.as_str()].id, source_ref.as_str(), topic.as_str())).collect();
        let mut stored = events::find_by_keys(&mut transaction, source.id, &keys).await?;
        let mut reports = Vec::with_capacity(parsed.len());
        let mut seen = std::collections::HashSet::new();
        for ((login, source_ref, topic, spec), (user_id, _, _)) in parsed.iter().zip(&keys) {
            let user = &known_users[login.as_str()];
            let key = EventKey { user_id: *user_id, source_id: source.id, source_ref: source_ref.as_str(), topic: topic.as_str() };
            let lookup = (*user_id, source_ref.as_str().to_owned(), topic.as_str().to_owned());
            // A key that comes twice in one batch meets its own first write.
            let existing = if seen.insert(lookup.clone()) { stored.remove(&lookup) } else { events::find_by_key(&mut transaction, key).await? };
            reports.push(self.upsert_one(&mut transaction, user, key, existing, spec, now).await?);
        }
        transaction.commit().await?;
        self.written();
        Ok(reports)
    }

    /// The one upsert path, shared by sources and the user's own events.
    async fn upsert_one(
        &self,
        connection: &mut AnyConnection,
        user: &UserRecord,
        key: EventKey<'_>,
        stored: Option<EventRecord>,
        spec: &EventSpec,
        now: DateTime<Utc>,
    ) -> Result<UpsertReport, CoreError> {
        let existing = stored.as_ref().map(|record| Existing { spec: record.spec.clone(), lifecycle: record.lifecycle });
        let (outcome, lifecycle) = event::decide_upsert(existing.as_ref(), spec, user.zone, now);
        let timeline = spec.timeline(user.zone);
        let ladder = Ladder { due: spec.due.at, fire_date: spec.fire_date(), after_due: spec.after_due, zone: user.zone, quiet: user.quiet };
        let reminders = match (&stored, outcome) {
            (Some(record), Outcome::Unchanged) => record.reminders,
            (Some(record), Outcome::Updated) => record.reminders.rebased(&lifecycle, &ladder, now),
            _ => Reminders::start(&lifecycle, &ladder, now),
        };
        let next_check_at = reminders::earliest(lifecycle.next_check(&timeline, now), reminders.next_check());
        let write = EventWrite { spec, lifecycle, due_at: timeline.due_moment, reminders, next_check_at };
        let id = match (&stored, outcome) {
            (None, _) => events::insert(connection, key, write, now).await?,
            (Some(record), Outcome::Unchanged) => record.id,
            (Some(record), _) => {
                events::update(connection, record.id, write, now).await?;
                record.id
            }
        };
        Ok(UpsertReport { id, outcome, state: lifecycle.state })
    }

    /// Withdraws events by key; unknown keys are reported as not found.
    pub async fn withdraw_batch(&self, source: &SourceCaller, keys: &[RawKey]) -> Result<Vec<WithdrawReport>, CoreError> {
        check_batch_size("keys", keys.len())?;
        let mut violations = Violations::default();
        let mut parsed = Vec::with_capacity(keys.len());
        for (index, key) in keys.iter().enumerate() {
            let mut own = Violations::default();
            let login = Login::parse("user", &key.user, &mut own);
            let source_ref = SourceRef::parse("ref", &key.source_ref, &mut own);
            let topic = Topic::parse("topic", &key.topic, &mut own);
            violations.extend_prefixed(&format!("keys[{index}]"), own);
            parsed.push((login, source_ref, topic));
        }
        if !violations.is_empty() {
            return Err(CoreError::Invalid(violations));
        }
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let mut reports = Vec::with_capacity(keys.len());
        for (login, source_ref, topic) in parsed {
            let (Some(login), Some(source_ref), Some(topic)) = (login, source_ref, topic) else { continue };
            let Some(user) = users::find_user(&mut transaction, &login).await? else {
                reports.push(WithdrawReport { found: None });
                continue;
            };
            let key = EventKey { user_id: user.id, source_id: source.id, source_ref: source_ref.as_str(), topic: topic.as_str() };
            let found = match events::find_by_key(&mut transaction, key).await? {
                Some(record) => Some((record.id, self.withdraw(&mut transaction, &record, now).await?)),
                None => None,
            };
            reports.push(WithdrawReport { found });
        }
        transaction.commit().await?;
        self.written();
        Ok(reports)
    }

    async fn withdraw(&self, connection: &mut AnyConnection, record: &EventRecord, now: DateTime<Utc>) -> Result<State, CoreError> {
        if record.lifecycle.state != State::Withdrawn {
            let lifecycle = Lifecycle { state: State::Withdrawn, ..record.lifecycle };
            let due_at = record.spec.due.at.moment_in(record.zone);
            let write = LifecycleWrite { lifecycle, reminders: Reminders::default(), due_at, next_check_at: None };
            events::save_lifecycle(connection, record.id, write, now).await?;
        }
        Ok(State::Withdrawn)
    }

    /// A source's events of one user (all, or only the given refs).
    pub async fn list_for_source(&self, source: &SourceCaller, raw_login: &str, refs: &[String]) -> Result<Vec<EventRecord>, CoreError> {
        check_batch_size("refs", refs.len())?;
        let mut violations = Violations::default();
        let login = Login::parse("user", raw_login, &mut violations);
        for (index, source_ref) in refs.iter().enumerate() {
            SourceRef::parse(&format!("refs[{index}]"), source_ref, &mut violations);
        }
        let login = violations.into_result(login).map_err(CoreError::Invalid)?;
        let mut connection = self.store.pool().acquire().await?;
        let Some(user) = users::find_user(&mut connection, &login).await? else { return Ok(Vec::new()) };
        drop(connection);
        Ok(self.store.list_for_source(source.id, user.id, refs).await?)
    }

    // ---- the person and their agent -----------------------------------

    pub async fn list_events(&self, user: &UserRecord, raw_state: Option<&str>, archive: bool, limit: Option<u32>) -> Result<Vec<EventRecord>, CoreError> {
        let state = match raw_state.filter(|raw| !raw.is_empty()) {
            Some(raw) => Some(parse_one(|violations| State::parse_active_filter("state", raw, violations))?),
            None => None,
        };
        if archive {
            if state.is_some() {
                return Err(CoreError::invalid("state", "state filters active events; leave it out with archive"));
            }
            return Ok(self.store.list_archive(user.id).await?);
        }
        Ok(self.store.list_active(user.id, state, limit).await?)
    }

    /// One of the user's events; withdrawn events are gone for them.
    async fn own_event(&self, connection: &mut AnyConnection, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        match events::find_for_user(connection, id, user.id).await? {
            Some(record) if record.lifecycle.state != State::Withdrawn => Ok(record),
            _ => Err(CoreError::event_not_found(id)),
        }
    }

    /// How many of the user's open events need attention (the inbox badge).
    pub async fn attention_count(&self, user: &UserRecord) -> Result<u32, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        let count = events::attention_count(&mut connection, user.id).await?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }

    pub async fn get_event(&self, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        self.own_event(&mut connection, user, id).await
    }

    async fn reread(&self, connection: &mut AnyConnection, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        events::find_for_user(connection, id, user.id).await?.ok_or_else(|| CoreError::event_not_found(id))
    }

    /// Creates one of the user's own events, from the `manual` source.
    pub async fn create_manual(&self, user: &UserRecord, fields: &RawFields) -> Result<EventRecord, CoreError> {
        let spec = EventSpec::parse(fields).map_err(CoreError::Invalid)?;
        let source_ref = SourceRef::new_manual(ulid::Ulid::new());
        let topic = Topic::empty();
        let key = EventKey { user_id: user.id, source_id: self.manual_source_id, source_ref: source_ref.as_str(), topic: topic.as_str() };
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let existing = events::find_by_key(&mut transaction, key).await?;
        let report = self.upsert_one(&mut transaction, user, key, existing, &spec, now).await?;
        let record = self.reread(&mut transaction, user, report.id).await?;
        transaction.commit().await?;
        self.written();
        Ok(record)
    }

    /// Changes the user's own event through the same upsert path: a new due
    /// moment reschedules (and reopens), the same one only updates.
    pub async fn update_manual(&self, user: &UserRecord, id: i64, patch: EventPatch) -> Result<EventRecord, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let record = self.own_event(&mut transaction, user, id).await?;
        if record.source_id != self.manual_source_id {
            return Err(owned_elsewhere(&record));
        }
        let current = record.spec.to_raw();
        let merged = RawFields {
            title: patch.title.unwrap_or(current.title),
            due_at: patch.due_at.unwrap_or(current.due_at),
            subtitle: patch.subtitle.or(current.subtitle),
            fire_at: patch.fire_at.or(current.fire_at),
            after_due: patch.after_due.or(current.after_due),
            done_label: patch.done_label.or(current.done_label),
            deep_link: patch.deep_link.or(current.deep_link),
        };
        let spec = EventSpec::parse(&merged).map_err(CoreError::Invalid)?;
        let key = EventKey { user_id: user.id, source_id: record.source_id, source_ref: &record.source_ref, topic: &record.topic };
        let existing = events::find_by_key(&mut transaction, key).await?;
        self.upsert_one(&mut transaction, user, key, existing, &spec, now).await?;
        let updated = self.reread(&mut transaction, user, id).await?;
        transaction.commit().await?;
        self.written();
        Ok(updated)
    }

    /// Deletes (withdraws) the user's own event.
    pub async fn delete_manual(&self, user: &UserRecord, id: i64) -> Result<i64, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let record = self.own_event(&mut transaction, user, id).await?;
        if record.source_id != self.manual_source_id {
            return Err(owned_elsewhere(&record));
        }
        self.withdraw(&mut transaction, &record, now).await?;
        transaction.commit().await?;
        self.written();
        Ok(id)
    }

    /// Done, on an event of any source.
    pub async fn mark_done(&self, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        self.act(user, id, |record, now| event::mark_done(record.lifecycle, now)).await
    }

    /// Remember, on an event of any source.
    pub async fn mark_ack(&self, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        let quiet = user.quiet;
        self.act(user, id, move |record, now| event::mark_ack(record.lifecycle, &record.spec, record.zone, quiet, now)).await
    }

    /// An action link for one of the user's events as it is now, valid for
    /// 30 days or until the event is rescheduled.
    pub async fn issue_action_link(&self, user: &UserRecord, event_id: i64, action: LinkAction) -> Result<String, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        let event = self.own_event(&mut connection, user, event_id).await?;
        Ok(self.link_token(&event, action))
    }

    fn link_token(&self, event: &EventRecord, action: LinkAction) -> String {
        self.links.issue(event.id, event.user_id, action, revision_of(&event.spec.due.text), self.now())
    }

    /// What a link names, checked, with its user and event as they are now.
    pub async fn inspect_action_link(&self, token: &str) -> Result<(ActionLink, UserRecord, EventRecord), CoreError> {
        let link = self.links.check(token, self.now()).map_err(|problem| match problem {
            LinkProblem::Forged => CoreError::Unauthenticated(problem.to_string()),
            LinkProblem::Expired(_) => CoreError::FailedPrecondition(problem.to_string()),
            LinkProblem::Outdated => CoreError::Outdated(problem.to_string()),
        })?;
        let mut connection = self.store.pool().acquire().await?;
        let user = users::user_by_id(&mut connection, link.user_id).await.map_err(|_| CoreError::event_not_found(link.event_id))?;
        let event = self.own_event(&mut connection, &user, link.event_id).await?;
        if link.revision != revision_of(&event.spec.due.text) {
            return Err(CoreError::Outdated(LinkProblem::Outdated.to_string()));
        }
        Ok((link, user, event))
    }

    /// Performs a link's action as the event's user.
    pub async fn use_action_link(&self, token: &str) -> Result<(ActionLink, UserRecord, EventRecord), CoreError> {
        let (link, user, _) = self.inspect_action_link(token).await?;
        let event = match link.action {
            LinkAction::Done => self.mark_done(&user, link.event_id).await?,
            LinkAction::Remember => self.mark_ack(&user, link.event_id).await?,
        };
        Ok((link, user, event))
    }

    async fn act(&self, user: &UserRecord, id: i64, action: impl FnOnce(&EventRecord, DateTime<Utc>) -> Lifecycle) -> Result<EventRecord, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let record = self.own_event(&mut transaction, user, id).await?;
        let lifecycle = action(&record, now);
        // Remember answers the reminder; Done (or any close) ends the ladder.
        let reminders = if !lifecycle.state.is_active() { Reminders::default() } else { record.reminders.remembered() };
        if lifecycle == record.lifecycle && reminders == record.reminders {
            return Ok(record);
        }
        let timeline = record.spec.timeline(record.zone);
        let next_check_at = reminders::earliest(lifecycle.next_check(&timeline, now), reminders.next_check());
        let write = LifecycleWrite { lifecycle, reminders, due_at: timeline.due_moment, next_check_at };
        events::save_lifecycle(&mut transaction, id, write, now).await?;
        let updated = self.reread(&mut transaction, user, id).await?;
        transaction.commit().await?;
        self.written();
        Ok(updated)
    }

    /// Changes the user's settings; a new zone recomputes their open events
    /// in the same transaction.
    pub async fn update_profile(&self, user: &UserRecord, patch: &ProfilePatch) -> Result<UserRecord, CoreError> {
        let mut violations = Violations::default();
        let zone = patch.tz.as_deref().map(|raw| parse_time_zone("tz", raw, &mut violations));
        let quiet_start = patch.quiet_start.as_deref().map(|raw| parse_clock_time("quiet_start", raw, &mut violations));
        let quiet_end = patch.quiet_end.as_deref().map(|raw| parse_clock_time("quiet_end", raw, &mut violations));
        let locale = patch.locale.as_deref().map(|raw| Locale::parse("locale", raw, &mut violations));
        if !violations.is_empty() {
            return Err(CoreError::Invalid(violations));
        }
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let current = users::user_by_id(&mut transaction, user.id).await?;
        let zone = zone.flatten().unwrap_or(current.zone);
        let mut quiet = current.quiet;
        quiet.start = quiet_start.flatten().unwrap_or(quiet.start);
        quiet.end = quiet_end.flatten().unwrap_or(quiet.end);
        let locale = locale.flatten().unwrap_or(current.locale);
        users::save_profile(&mut transaction, user.id, zone, quiet, locale, now).await?;
        // A new zone moves local due moments and every checkpoint; new quiet
        // hours move the checkpoints.
        if zone != current.zone || quiet != current.quiet {
            for record in events::open_for_user(&mut transaction, user.id).await? {
                let timeline = record.spec.timeline(zone);
                let lifecycle = record.lifecycle.advanced(&timeline, record.spec.after_due, now);
                let ladder = Ladder { zone, quiet, ..record.ladder() };
                let reminders = record.reminders.rebased(&lifecycle, &ladder, now);
                let next_check_at = reminders::earliest(lifecycle.next_check(&timeline, now), reminders.next_check());
                let write = LifecycleWrite { lifecycle, reminders, due_at: timeline.due_moment, next_check_at };
                events::save_lifecycle(&mut transaction, record.id, write, now).await?;
            }
        }
        let updated = users::user_by_id(&mut transaction, user.id).await?;
        transaction.commit().await?;
        self.written();
        Ok(updated)
    }

    pub async fn agent_token_status(&self, user: &UserRecord) -> Result<Option<AgentTokenStatus>, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        let status = users::agent_token_status(&mut connection, user.id).await?;
        Ok(status.map(|(created_at, last_used_at)| AgentTokenStatus { created_at, last_used_at }))
    }

    /// Issues the user's agent token, replacing any earlier one at once.
    pub async fn issue_agent_token(&self, user: &UserRecord) -> Result<String, CoreError> {
        let (token, hash) = tokens::generate(tokens::AGENT_PREFIX);
        let mut transaction = self.store.begin_write().await?;
        users::replace_agent_token(&mut transaction, user.id, &hash, self.now()).await?;
        transaction.commit().await?;
        Ok(token)
    }

    pub async fn revoke_agent_token(&self, user: &UserRecord) -> Result<bool, CoreError> {
        let mut transaction = self.store.begin_write().await?;
        let revoked = users::delete_agent_token(&mut transaction, user.id).await?;
        transaction.commit().await?;
        Ok(revoked)
    }

    /// Gives the user a new secret calendar feed; any earlier URL stops working.
    pub async fn issue_calendar_feed(&self, user: &UserRecord) -> Result<String, CoreError> {
        let (token, hash) = tokens::generate(tokens::CALENDAR_PREFIX);
        let mut transaction = self.store.begin_write().await?;
        users::replace_calendar_feed(&mut transaction, user.id, &hash, self.now()).await?;
        transaction.commit().await?;
        Ok(token)
    }

    pub async fn revoke_calendar_feed(&self, user: &UserRecord) -> Result<bool, CoreError> {
        let mut transaction = self.store.begin_write().await?;
        let revoked = users::delete_calendar_feed(&mut transaction, user.id).await?;
        transaction.commit().await?;
        Ok(revoked)
    }

    pub async fn calendar_feed_created(&self, user: &UserRecord) -> Result<Option<DateTime<Utc>>, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        Ok(users::calendar_feed_created(&mut connection, user.id).await?)
    }

    /// The person and active events a calendar feed token opens.
    pub async fn calendar_feed(&self, token: &str) -> Result<(UserRecord, Vec<EventRecord>), CoreError> {
        let unknown = || CoreError::Unauthenticated("unknown calendar feed".into());
        if !token.starts_with(tokens::CALENDAR_PREFIX) {
            return Err(unknown());
        }
        let mut connection = self.store.pool().acquire().await?;
        let user = users::user_by_calendar_feed(&mut connection, &tokens::hash(token)).await?.ok_or_else(unknown)?;
        drop(connection);
        let events = self.store.list_active(user.id, None, None).await?;
        Ok((user, events))
    }

    // ---- the operator ---------------------------------------------------

    fn parse_source_name(raw: &str) -> Result<SourceName, CoreError> {
        parse_one(|violations| SourceName::parse("name", raw, violations))
    }

    fn refuse_manual(name: &SourceName, what: &str) -> Result<(), CoreError> {
        if name.is_manual() {
            return Err(CoreError::FailedPrecondition(format!("the manual source holds the people's own events; it has no token and cannot be {what}")));
        }
        Ok(())
    }

    /// Creates a source; its token is returned this once.
    pub async fn create_source(&self, raw_name: &str) -> Result<(SourceName, String), CoreError> {
        let name = Self::parse_source_name(raw_name)?;
        Self::refuse_manual(&name, "created")?;
        let (token, hash) = tokens::generate(tokens::SOURCE_PREFIX);
        match self.store.create_source(&name, &hash, self.now()).await? {
            Some(_) => Ok((name, token)),
            None => Err(CoreError::AlreadyExists(format!("source {name} already exists; rotate its token with RotateSourceToken"))),
        }
    }

    pub async fn rotate_source_token(&self, raw_name: &str) -> Result<(SourceName, String), CoreError> {
        let name = Self::parse_source_name(raw_name)?;
        Self::refuse_manual(&name, "given one")?;
        let (token, hash) = tokens::generate(tokens::SOURCE_PREFIX);
        if self.store.set_source_token(&name, &hash, self.now()).await? {
            Ok((name, token))
        } else {
            Err(CoreError::NotFound(format!("source {name} not found")))
        }
    }

    pub async fn list_sources(&self) -> Result<Vec<SourceRecord>, CoreError> {
        Ok(self.store.list_sources().await?)
    }

    /// Deletes a source and its events; returns how many events went.
    pub async fn delete_source(&self, raw_name: &str) -> Result<(SourceName, u64), CoreError> {
        let name = Self::parse_source_name(raw_name)?;
        Self::refuse_manual(&name, "deleted")?;
        match self.store.delete_source(&name).await? {
            Some(deleted) => {
                self.written();
                Ok((name, deleted))
            }
            None => Err(CoreError::NotFound(format!("source {name} not found"))),
        }
    }

    pub async fn admin_issue_agent_token(&self, raw_login: &str) -> Result<(UserRecord, String), CoreError> {
        let user = self.user_for_login(raw_login).await?;
        let token = self.issue_agent_token(&user).await?;
        Ok((user, token))
    }

    pub async fn admin_revoke_agent_token(&self, raw_login: &str) -> Result<bool, CoreError> {
        let login = parse_one(|violations| Login::parse("login", raw_login, violations))?;
        let mut connection = self.store.pool().acquire().await?;
        let Some(user) = users::find_user(&mut connection, &login).await? else { return Ok(false) };
        drop(connection);
        self.revoke_agent_token(&user).await
    }

    pub async fn list_users(&self) -> Result<Vec<UserSummary>, CoreError> {
        Ok(self.store.list_users().await?)
    }

    // ---- channels and deliveries ----------------------------------------

    pub fn outbound(&self) -> &Outbound {
        &self.outbound
    }

    pub async fn list_channels(&self, user: &UserRecord) -> Result<Vec<ChannelRecord>, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        Ok(channels::for_user(&mut connection, user.id).await?)
    }

    /// Adds a webhook for the user and makes its signing secret.
    pub async fn add_webhook(&self, user: &UserRecord, raw_url: &str) -> Result<AddedWebhook, CoreError> {
        let url = raw_url.trim();
        let parsed = DeepLink::parse_optional("url", Some(url), &mut Violations::default());
        let Some(parsed) = parsed.and_then(|link| url::Url::parse(link.as_str()).ok()) else {
            return Err(CoreError::invalid("url", format!("url {} is not an absolute http or https URL", quoted(url))));
        };
        if let Err(problem) = self.outbound.targets().check_new(&parsed).await {
            return Err(CoreError::invalid("url", format!("url {}: {problem}", quoted(url))));
        }
        let secret = tokens::webhook_secret();
        let mut transaction = self.store.begin_write().await?;
        let channel = channels::add(&mut transaction, user.id, "webhook", url, Some(&secret), self.now()).await?;
        transaction.commit().await?;
        Ok(AddedWebhook { channel, secret })
    }

    async fn own_channel(&self, connection: &mut AnyConnection, user: &UserRecord, id: i64) -> Result<ChannelRecord, CoreError> {
        channels::find(connection, user.id, id).await?.ok_or_else(|| CoreError::NotFound(format!("channel {id} not found")))
    }

    pub async fn set_channel_enabled(&self, user: &UserRecord, id: i64, enabled: bool) -> Result<ChannelRecord, CoreError> {
        let mut transaction = self.store.begin_write().await?;
        self.own_channel(&mut transaction, user, id).await?;
        channels::set_enabled(&mut transaction, user.id, id, enabled, self.now()).await?;
        let channel = self.own_channel(&mut transaction, user, id).await?;
        transaction.commit().await?;
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

    /// Queues a test message to one of the user's channels, now.
    pub async fn test_channel(&self, user: &UserRecord, id: i64) -> Result<(), CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        self.own_channel(&mut transaction, user, id).await?;
        let test = NewDelivery { event_id: None, channel_id: Some(id), kind: "test", due_at: now, status: "pending", next_attempt_at: Some(now), note: None };
        channels::insert_delivery(&mut transaction, test, now).await?;
        transaction.commit().await?;
        self.deliveries_queued.notify_one();
        Ok(())
    }

    /// The delivery log of one of the user's events.
    pub async fn event_deliveries(&self, user: &UserRecord, id: i64) -> Result<Vec<channels::DeliveryRecord>, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        self.own_event(&mut connection, user, id).await?;
        Ok(channels::for_event(&mut connection, id).await?)
    }

    /// Claims due deliveries for sending, each with its event (none for a
    /// test message), leased for `lease`.
    pub async fn claim_deliveries(&self, limit: i64, lease: chrono::Duration) -> Result<Vec<(channels::ClaimedDelivery, Option<EventRecord>)>, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let claimed = channels::claim_deliveries(&mut transaction, self.store.backend(), now, now + lease, limit).await?;
        let mut with_events = Vec::with_capacity(claimed.len());
        for delivery in claimed {
            let event = match delivery.event_id {
                Some(event_id) => events::find_for_user(&mut transaction, event_id, delivery.channel.user_id).await?,
                None => None,
            };
            with_events.push((delivery, event));
        }
        transaction.commit().await?;
        Ok(with_events)
    }

    /// Records how sending went; a failure or a 410 also shows on the channel.
    pub async fn record_attempt(&self, delivery: &channels::ClaimedDelivery, outcome: &crate::delivery::Attempt) -> Result<(), CoreError> {
        use crate::delivery::Attempt;
        let now = self.now();
        let attempts = delivery.attempts + 1;
        let mut transaction = self.store.begin_write().await?;
        match outcome {
            Attempt::Sent => {
                channels::finish_delivery(&mut transaction, delivery.id, "sent", attempts, None, None, now).await?;
                channels::set_last_error(&mut transaction, delivery.channel.id, None, now).await?;
            }
            Attempt::Retry { at, error } => {
                channels::finish_delivery(&mut transaction, delivery.id, "pending", attempts, Some(*at), Some(error), now).await?;
            }
            Attempt::Failed { error } => {
                channels::finish_delivery(&mut transaction, delivery.id, "failed", attempts, None, Some(error), now).await?;
                channels::set_last_error(&mut transaction, delivery.channel.id, Some(error), now).await?;
            }
            Attempt::Gone { error } => {
                channels::finish_delivery(&mut transaction, delivery.id, "failed", attempts, None, Some(error), now).await?;
                channels::disable_with_error(&mut transaction, delivery.channel.id, error, now).await?;
            }
        }
        transaction.commit().await?;
        Ok(())
    }

    /// An action link for the event of a delivery.
    pub fn action_url(&self, event: &EventRecord, action: LinkAction) -> String {
        let token = self.link_token(event, action);
        format!("{}/a/{token}", self.outbound.public_url.trim_end_matches('/'))
    }

    /// How many deliveries wait to be sent (the queue depth).
    pub async fn pending_deliveries(&self) -> Result<i64, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        Ok(channels::pending_count(&mut connection).await?)
    }

    pub async fn earliest_delivery(&self) -> Result<Option<DateTime<Utc>>, CoreError> {
        let mut connection = self.store.pool().acquire().await?;
        Ok(channels::earliest_pending(&mut connection).await?)
    }

    // ---- the scheduler --------------------------------------------------

    /// Advances up to `limit` events whose next check has come, in one
    /// transaction. Returns how many it advanced; the cost follows the due
    /// rows, never the table.
    pub async fn advance_due(&self, limit: i64) -> Result<usize, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let due = events::claim_due(&mut transaction, self.store.backend(), now, limit).await?;
        let mut users: Vec<i64> = due.iter().map(|record| record.user_id).collect();
        users.sort_unstable();
        users.dedup();
        let routes = channels::enabled_for_users(&mut transaction, &users).await?;
        let mut queued = 0;
        for record in &due {
            let timeline = record.spec.timeline(record.zone);
            let ladder = record.ladder();
            let lifecycle = record.lifecycle.advanced(&timeline, record.spec.after_due, now);
            // An open event without a ladder place (written before reminders
            // existed) takes its place now.
            let placed = if record.reminders == Reminders::default() { Reminders::start(&lifecycle, &ladder, now) } else { record.reminders };
            let (reminders, fired) = placed.tick(&lifecycle, &ladder, now);
            if let Some(fired) = fired {
                queued += self.queue_reminder(&mut transaction, record, fired, &routes, now).await?;
            }
            let next_check_at = reminders::earliest(lifecycle.next_check(&timeline, now), reminders.next_check());
            let write = LifecycleWrite { lifecycle, reminders, due_at: timeline.due_moment, next_check_at };
            events::save_lifecycle(&mut transaction, record.id, write, now).await?;
        }
        transaction.commit().await?;
        if queued > 0 {
            self.deliveries_queued.notify_one();
        }
        Ok(due.len())
    }

    /// Writes the deliveries of a reminder that came due: one per enabled
    /// channel of the event's user, or one line in the event's log saying it
    /// was quieted. Returns how many are to be sent.
    async fn queue_reminder(
        &self,
        connection: &mut AnyConnection,
        record: &EventRecord,
        fired: Fired,
        routes: &[ChannelRecord],
        now: DateTime<Utc>,
    ) -> Result<usize, CoreError> {
        let kind = match fired.kind {
            ReminderKind::Checkpoint => "checkpoint",
            ReminderKind::Repeat => "repeat",
        };
        if fired.suppressed.is_some() {
            metrics::counter!("hado_reminders_total", "kind" => kind, "outcome" => "suppressed").increment(1);
            let quieted = NewDelivery {
                event_id: Some(record.id),
                channel_id: None,
                kind,
                due_at: fired.due,
                status: "suppressed",
                next_attempt_at: None,
                note: Some("quiet after Remember"),
            };
            channels::insert_delivery(connection, quieted, now).await?;
            return Ok(0);
        }
        let mut queued = 0;
        for route in routes.iter().filter(|route| route.user_id == record.user_id) {
            let delivery = NewDelivery {
                event_id: Some(record.id),
                channel_id: Some(route.id),
                kind,
                due_at: fired.due,
                status: "pending",
                next_attempt_at: Some(now),
                note: None,
            };
            channels::insert_delivery(connection, delivery, now).await?;
            queued += 1;
        }
        let outcome = if queued > 0 { "queued" } else { "no_channel" };
        metrics::counter!("hado_reminders_total", "kind" => kind, "outcome" => outcome).increment(1);
        Ok(queued)
    }

    pub async fn earliest_check(&self) -> Result<Option<DateTime<Utc>>, CoreError> {
        Ok(self.store.earliest_check().await?)
    }
}
