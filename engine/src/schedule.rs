//! Owns the scheduler's pass: due events claimed, their states and ladder
//! places advanced, and a delivery queued per enabled channel for each
//! checkpoint that fires, in one transaction.

use chrono::{DateTime, Utc};

use crate::Engine;
use crate::error::CoreError;
use hado_domain::channel::ChannelRecord;
use hado_domain::event_record::EventRecord;
use hado_domain::reminders;
use hado_domain::reminders::{Fired, ReminderKind, Reminders};
use hado_storage::deliveries::NewDelivery;
use hado_storage::events::LifecycleWrite;
use hado_storage::{channels, events, users};

use hado_domain::delivery::{DeliveryKind, DeliveryStatus};
use hado_storage::deliveries;

impl Engine {
    /// Advances up to `limit` events whose next check has come, in one
    /// transaction. Returns how many it advanced; the cost follows the due
    /// rows, never the table.
    pub async fn advance_due(&self, limit: i64) -> Result<usize, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let mut due = events::claim_due(&mut transaction, self.store.backend(), now, limit).await?;
        let mut users: Vec<i64> = due.iter().map(|record| record.user_id).collect();
        users.sort_unstable();
        users.dedup();
        // On Postgres, advanced as each person is now: one whose zone or
        // quiet hours are being changed is left for the next pass (the
        // change moves their events itself), the others read afresh, as
        // the claim may have joined an event with its person as they were.
        if let Some(people) = users::people_through_free_gates(&mut transaction, &users).await? {
            due.retain_mut(|record| match people.get(&record.user_id) {
                Some(person) => {
                    (record.zone, record.quiet) = (person.zone, person.quiet);
                    true
                }
                None => false,
            });
            users.retain(|user| people.contains_key(user));
        }
        let routes = channels::enabled_for_users(&mut transaction, &users).await?;
        // Every row's outcome is decided first, then written in a few
        // statements: the pass costs a handful of round trips, not two per event.
        let mut deliveries = Vec::new();
        let mut writes = Vec::with_capacity(due.len());
        for record in &due {
            let timeline = record.spec.timeline(record.zone);
            let ladder = record.ladder();
            let lifecycle = record.lifecycle.advanced(&timeline, record.spec.after_due, now);
            // An open event without a ladder place (written before reminders
            // existed) takes its place now.
            let placed = if record.reminders == Reminders::default() {
                Reminders::start(&lifecycle, &ladder, now)
            } else {
                record.reminders
            };
            let (reminders, fired) = placed.tick(&lifecycle, &ladder, now);
            if let Some(fired) = fired {
                deliveries.extend(reminder_deliveries(record, fired, &routes, now));
            }
            let next_check_at =
                reminders::earliest(lifecycle.next_check(&timeline, now), reminders.next_check());
            writes.push((
                record.id,
                LifecycleWrite {
                    lifecycle,
                    revised: false,
                    reminders,
                    due_at: timeline.due_moment,
                    next_check_at,
                },
            ));
        }
        events::save_lifecycles(&mut transaction, &writes, now).await?;
        deliveries::insert(&mut transaction, &deliveries, now).await?;
        transaction.commit().await?;
        if deliveries.iter().any(|delivery| delivery.status == DeliveryStatus::Pending) {
            self.deliveries_queued.notify_one();
        }
        Ok(due.len())
    }

    pub async fn earliest_check(&self) -> Result<Option<DateTime<Utc>>, CoreError> {
        Ok(self.store.earliest_check().await?)
    }
}

/// The deliveries of a reminder that came due: one per enabled channel of
/// the event's user, or one line in the event's log saying it was quieted.
fn reminder_deliveries(
    record: &EventRecord,
    fired: Fired,
    routes: &[ChannelRecord],
    now: DateTime<Utc>,
) -> Vec<NewDelivery<'static>> {
    let kind = match fired.kind {
        ReminderKind::Checkpoint => DeliveryKind::Checkpoint,
        ReminderKind::Repeat => DeliveryKind::Repeat,
    };
    if fired.suppressed.is_some() {
        metrics::counter!("hado_reminders_total", "kind" => kind.as_str(), "outcome" => "suppressed").increment(1);
        return vec![NewDelivery {
            event_id: Some(record.id),
            channel_id: None,
            kind,
            due_at: fired.due,
            status: DeliveryStatus::Suppressed,
            next_attempt_at: None,
            note: Some("quiet after Remember"),
        }];
    }
    let deliveries: Vec<_> = routes
        .iter()
        .filter(|route| route.user_id == record.user_id)
        .map(|route| NewDelivery {
            event_id: Some(record.id),
            channel_id: Some(route.id),
            kind,
            due_at: fired.due,
            status: DeliveryStatus::Pending,
            next_attempt_at: Some(now),
            note: None,
        })
        .collect();
    let outcome = if deliveries.is_empty() { "no_channel" } else { "queued" };
    metrics::counter!("hado_reminders_total", "kind" => kind.as_str(), "outcome" => outcome)
        .increment(1);
    deliveries
}
