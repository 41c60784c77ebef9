//! Owns an event as core reads it back: its checked fields and lifecycle
//! with what its replies and its ladder need from its person and source.
//! Storage makes it from a row; the engine hands it to the edges.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::checkpoints::{Ladder, QuietHours};
use super::event::{EventSpec, Lifecycle};
use super::profile::Locale;
use super::reminders::Reminders;

/// One event with what its replies need from its user and source.
#[derive(Clone, Debug)]
pub struct EventRecord {
    pub id: i64,
    pub user_id: i64,
    pub login: String,
    pub zone: Tz,
    pub locale: Locale,
    pub source_id: i64,
    pub source: String,
    pub source_ref: String,
    pub topic: String,
    pub spec: EventSpec,
    pub lifecycle: Lifecycle,
    /// The user's quiet hours, which place the event's checkpoints.
    pub quiet: QuietHours,
    pub reminders: Reminders,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The due moment as stored (milliseconds, in the user's zone when it
    /// was written): what orders the inbox, and what a page of it continues after.
    pub due_ms: i64,
    /// How many times a person or a source changed the event: action links
    /// name it, so that an old link does not act on a changed event.
    pub revision: i64,
}

impl EventRecord {
    /// The event's checkpoint ladder in its user's zone and quiet hours.
    pub fn ladder(&self) -> Ladder {
        Ladder {
            due: self.spec.due.at,
            preparing_date: self.spec.preparing_date(),
            after_due: self.spec.after_due,
            zone: self.zone,
            quiet: self.quiet,
        }
    }
}
