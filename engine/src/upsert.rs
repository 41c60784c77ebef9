//! Owns the upsert, the one path every new or changed event takes, whoever
//! sends it (a source's batch, the person's own event): each item parsed,
//! the decision made against what is stored, and the decision written.

use chrono::{DateTime, Utc};
use hado_storage::Connection;

use crate::inputs::SourceItem;
use hado_domain::checkpoints::Ladder;
use hado_domain::event::{EventSpec, Existing, Lifecycle, Outcome};
use hado_domain::event_record::EventRecord;
use hado_domain::fields::{Login, SourceRef, Topic};
use hado_domain::reminders::Reminders;
use hado_domain::state::State;
use hado_domain::user::UserRecord;
use hado_domain::violations::Violations;
use hado_domain::{event, reminders};
use hado_storage::{EventWrite, RowKey, StoreError, events};

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
    pub(super) outcome: Outcome,
    pub(super) lifecycle: Lifecycle,
    /// The due moment in the user's current zone.
    pub(super) due_at: DateTime<Utc>,
    pub(super) reminders: Reminders,
    pub(super) next_check_at: Option<DateTime<Utc>>,
}

impl Decision {
    /// The report of this decision, written to the event `id`.
    pub(super) fn report(&self, id: i64) -> UpsertReport {
        UpsertReport { id, outcome: self.outcome, state: self.lifecycle.state }
    }

    pub(super) fn write<'a>(&self, spec: &'a EventSpec) -> EventWrite<'a> {
        EventWrite {
            spec,
            lifecycle: self.lifecycle,
            due_at: self.due_at,
            reminders: self.reminders,
            next_check_at: self.next_check_at,
        }
    }
}

/// Parses one item of a batch, collecting its violations under `events[i]`.
pub(super) fn parse_item(
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

/// The one upsert decision, shared by sources and the user's own events:
/// what the item does to the stored event (if any), its new lifecycle, its
/// place on the reminder ladder and its next check. Writes nothing.
pub(super) fn decide(
    user: &UserRecord,
    stored: Option<&EventRecord>,
    spec: &EventSpec,
    now: DateTime<Utc>,
) -> Decision {
    let existing =
        stored.map(|record| Existing { spec: record.spec.clone(), lifecycle: record.lifecycle });
    let (outcome, lifecycle) = event::decide_upsert(existing.as_ref(), spec, user.zone, now);
    let timeline = spec.timeline(user.zone);
    let ladder = Ladder {
        due: spec.due.at,
        preparing_date: spec.preparing_date(),
        after_due: spec.after_due,
        zone: user.zone,
        quiet: user.quiet,
    };
    let reminders = match (stored, outcome) {
        (Some(record), Outcome::Unchanged) => record.reminders,
        (Some(record), Outcome::Updated) => record.reminders.rebased(&lifecycle, &ladder, now),
        _ => Reminders::arrived(&lifecycle, &ladder, now),
    };
    let next_check_at =
        reminders::earliest(lifecycle.next_check(&timeline, now), reminders.next_check());
    Decision { outcome, lifecycle, due_at: timeline.due_moment, reminders, next_check_at }
}

/// Writes a decision: an insert for a new event, an update for a changed
/// one, nothing for an unchanged one.
pub(super) async fn write_decision(
    connection: &mut impl Connection,
    key: RowKey<'_>,
    stored: Option<&EventRecord>,
    spec: &EventSpec,
    decision: &Decision,
    now: DateTime<Utc>,
) -> Result<UpsertReport, StoreError> {
    let id = match (stored, decision.outcome) {
        (None, _) => events::insert(connection, key, decision.write(spec), now).await?,
        (Some(record), Outcome::Unchanged) => record.id,
        (Some(record), _) => {
            events::update(connection, record.id, decision.write(spec), now).await?;
            record.id
        }
    };
    Ok(decision.report(id))
}
