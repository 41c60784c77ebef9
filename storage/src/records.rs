//! Owns the rows core reads back, decoded into domain values. Everything in
//! the database was validated on its way in, so a value that fails to decode
//! is reported as damage, not as bad input.

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use chrono_tz::Tz;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::StoreError;
use hado_domain::checkpoints::QuietHours;
use hado_domain::event::{EventSpec, Lifecycle};
use hado_domain::event_record::EventRecord;
use hado_domain::fields::{AfterDue, DeepLink, DoneLabel, Login, Title};
use hado_domain::profile::Locale;
use hado_domain::reminders::Reminders;
use hado_domain::state::State;
use hado_domain::time::{Due, DueAt, StoredDue};
use hado_domain::user::UserRecord;

pub fn millis(instant: DateTime<Utc>) -> i64 {
    instant.timestamp_millis()
}

pub fn instant(millis: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_millis(millis)
        .ok_or_else(|| StoreError::Corrupt(format!("instant {millis} is out of range")))
}

fn optional_instant(millis: Option<i64>) -> Result<Option<DateTime<Utc>>, StoreError> {
    millis.map(instant).transpose()
}

fn parse_date(text: &str) -> Result<NaiveDate, StoreError> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|_| StoreError::Corrupt(format!("date {text:?}")))
}

fn parse_zone(text: &str) -> Result<Tz, StoreError> {
    text.parse().map_err(|_| StoreError::Corrupt(format!("time zone {text:?}")))
}

fn parse_clock(text: &str) -> Result<NaiveTime, StoreError> {
    NaiveTime::parse_from_str(text, "%H:%M")
        .map_err(|_| StoreError::Corrupt(format!("clock time {text:?}")))
}

/// A domain record read back from its row (the domain's types know no SQL,
/// so storage says how each is read).
pub trait FromRow: Sized {
    fn from_row(row: &AnyRow) -> Result<Self, StoreError>;
}

impl FromRow for UserRecord {
    fn from_row(row: &AnyRow) -> Result<Self, StoreError> {
        Ok(Self {
            id: row.try_get("id")?,
            login: Login::from_stored(row.try_get("login")?),
            zone: parse_zone(row.try_get("tz")?)?,
            zone_chosen: row.try_get::<i64, _>("tz_chosen")? != 0,
            quiet: QuietHours {
                start: parse_clock(row.try_get("quiet_start")?)?,
                end: parse_clock(row.try_get("quiet_end")?)?,
            },
            locale: Locale::from_stored(row.try_get("locale")?),
        })
    }
}

/// The columns [`EventRecord::from_row`] reads, joined with the event's
/// user and source.
macro_rules! select_events {
    ($($tail:literal)*) => {
        concat!(
            "SELECT e.id, e.user_id, u.login, u.tz, u.locale, e.source_id, s.name AS source, e.source_ref, e.topic, \
             e.title, e.subtitle, e.due_at, e.due_date, e.due_time, e.due_offset_min, e.fire_at, e.fire_date, \
             e.after_due, e.done_label, e.deep_link, e.state, e.quiet_until, e.closed_at, e.created_at, e.updated_at, \
             e.checkpoint_at, e.attention_since, e.repeat_at, e.due_ms, e.revision, u.quiet_start, u.quiet_end \
             FROM events e JOIN users u ON u.id = e.user_id JOIN sources s ON s.id = e.source_id ",
            $($tail),*
        )
    };
}
pub(super) use select_events;

/// The SQL list of `states`, such as `'done', 'expired'`, written from the
/// domain's own lists so that the queries and [`State`] cannot drift apart.
pub(super) fn state_list(states: &[State]) -> String {
    states.iter().map(|state| format!("'{}'", state.as_str())).collect::<Vec<_>>().join(", ")
}

/// How far the attention count goes: past it, a count says only "more"
/// (the inbox's badge reads "99+"), so that it reads at most this many rows
/// however many events are overdue. A person cannot act on the difference
/// between a hundred events waiting and a thousand, and every profile and
/// page pays for each row counted: at 1,000, a person with that many
/// overdue paid a fifth more for every profile (BENCHMARKS.md, issue 51).
pub const ATTENTION_CAP: i64 = 99;

/// How many open events of the user `u` need their attention, as
/// `reminders::needs_attention` decides it: those with an unanswered
/// reminder, plus those due today or overdue that have neither one nor a
/// Remember. Each half walks its own index and stops one row past
/// [`ATTENTION_CAP`], so the count costs what is due up to the cap, not
/// what is stored: a sum past the cap means more than it (each half alone
/// is exact below its stop).
pub(super) fn attention_count() -> String {
    let stop = ATTENTION_CAP + 1;
    format!(
        "((SELECT COUNT(*) FROM (SELECT 1 FROM events e WHERE e.user_id = u.id AND e.attention_since IS NOT NULL AND e.state IN ({}) LIMIT {stop}) AS reminded) \
         + (SELECT COUNT(*) FROM (SELECT 1 FROM events e WHERE e.user_id = u.id AND e.state IN ({}) AND e.attention_since IS NULL AND e.quiet_until IS NULL LIMIT {stop}) AS due))",
        state_list(&State::ACTIVE),
        state_list(&[State::Today, State::Overdue])
    )
}

/// A query whose template names `{active}` (the active states),
/// `{archived}` (done, expired and withdrawn) or `{attention_count}` (how
/// many open events of the user `u` need attention), filled in from
/// [`State`] once, at first use.
macro_rules! with_states {
    ($template:expr) => {{
        static QUERY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            use hado_domain::state::State;
            ($template)
                .replace("{attention_count}", &crate::records::attention_count())
                .replace("{active}", &crate::records::state_list(&State::ACTIVE))
                .replace("{archived}", &crate::records::state_list(&State::ARCHIVED))
        });
        QUERY.as_str()
    }};
}
pub(super) use with_states;

impl FromRow for EventRecord {
    fn from_row(row: &AnyRow) -> Result<Self, StoreError> {
        let stored_due = StoredDue {
            date: row.try_get("due_date")?,
            time: row.try_get("due_time")?,
            offset_minutes: row
                .try_get::<Option<i64>, _>("due_offset_min")?
                .map(|minutes| minutes as i32),
        };
        let due_at = DueAt::from_stored(&stored_due)
            .ok_or_else(|| StoreError::Corrupt(format!("due moment {stored_due:?}")))?;
        let fire_at: Option<String> = row.try_get("fire_at")?;
        let state: String = row.try_get("state")?;
        let spec = EventSpec {
            title: Title::from_stored(row.try_get("title")?),
            subtitle: row.try_get("subtitle")?,
            due: Due { at: due_at, text: row.try_get("due_at")? },
            preparing_from: fire_at.as_deref().map(parse_date).transpose()?,
            after_due: AfterDue::from_stored(row.try_get("after_due")?),
            done_label: row.try_get::<Option<String>, _>("done_label")?.map(DoneLabel::from_stored),
            deep_link: row.try_get::<Option<String>, _>("deep_link")?.map(DeepLink::from_stored),
        };
        let lifecycle = Lifecycle {
            state: State::from_stored(&state)
                .ok_or_else(|| StoreError::Corrupt(format!("state {state:?}")))?,
            closed_at: optional_instant(row.try_get("closed_at")?)?,
            quiet_until: optional_instant(row.try_get("quiet_until")?)?,
        };
        Ok(Self {
            id: row.try_get("id")?,
            user_id: row.try_get("user_id")?,
            login: row.try_get("login")?,
            zone: parse_zone(row.try_get("tz")?)?,
            locale: Locale::from_stored(row.try_get("locale")?),
            source_id: row.try_get("source_id")?,
            source: row.try_get("source")?,
            source_ref: row.try_get("source_ref")?,
            topic: row.try_get("topic")?,
            spec,
            lifecycle,
            quiet: QuietHours {
                start: parse_clock(row.try_get("quiet_start")?)?,
                end: parse_clock(row.try_get("quiet_end")?)?,
            },
            reminders: Reminders {
                checkpoint: optional_instant(row.try_get("checkpoint_at")?)?,
                attention_since: optional_instant(row.try_get("attention_since")?)?,
                repeat_at: optional_instant(row.try_get("repeat_at")?)?,
            },
            created_at: instant(row.try_get("created_at")?)?,
            updated_at: instant(row.try_get("updated_at")?)?,
            due_ms: row.try_get("due_ms")?,
            revision: row.try_get("revision")?,
        })
    }
}

/// The record of an event just inserted, as reading it back would find it,
/// without reading it back.
pub fn inserted_event(
    id: i64,
    user: &UserRecord,
    source: &str,
    key: super::RowKey<'_>,
    write: super::EventWrite<'_>,
    now: DateTime<Utc>,
) -> EventRecord {
    // Instants are stored to the millisecond.
    let stored_now = DateTime::from_timestamp_millis(millis(now)).unwrap_or(now);
    EventRecord {
        id,
        user_id: user.id,
        login: user.login.as_str().to_owned(),
        zone: user.zone,
        locale: user.locale,
        source_id: key.source_id,
        source: source.to_owned(),
        source_ref: key.source_ref.to_owned(),
        topic: key.topic.to_owned(),
        spec: write.spec.clone(),
        lifecycle: write.lifecycle,
        quiet: user.quiet,
        reminders: write.reminders,
        created_at: stored_now,
        updated_at: stored_now,
        due_ms: millis(write.due_at),
        revision: 0,
    }
}
