//! Owns the person's settings: time zone, quiet hours and language; a new
//! zone moves every open event's local due moment and checks with it.

use crate::Engine;
use crate::error::CoreError;
use crate::inputs::ProfilePatch;
use hado_domain::checkpoints::Ladder;
use hado_domain::profile::{Locale, parse_clock_time, parse_time_zone};
use hado_domain::user::UserRecord;
use hado_domain::violations::Violations;
use hado_domain::{event, reminders};
use hado_storage::events::LifecycleWrite;
use hado_storage::{events, users};

impl Engine {
    /// Changes the user's settings; a new zone recomputes their open events
    /// in the same transaction.
    pub async fn update_profile(
        &self,
        user: &UserRecord,
        patch: &ProfilePatch,
    ) -> Result<UserRecord, CoreError> {
        let mut violations = Violations::default();
        let zone = patch.tz.as_deref().map(|raw| parse_time_zone("tz", raw, &mut violations));
        let quiet_start = patch
            .quiet_start
            .as_deref()
            .map(|raw| parse_clock_time("quiet_start", raw, &mut violations));
        let quiet_end = patch
            .quiet_end
            .as_deref()
            .map(|raw| parse_clock_time("quiet_end", raw, &mut violations));
        let locale =
            patch.locale.as_deref().map(|raw| Locale::parse("locale", raw, &mut violations));
        if !violations.is_empty() {
            return Err(CoreError::Invalid(violations));
        }
        let now = self.now();
        let forget = self.kept.forgetting();
        let mut transaction = self.store.begin_write().await?;
        // Alone through the person's gate: the writes deciding from the
        // settings end first, and the next read them as saved here.
        users::gate_alone(&mut transaction, user.id).await?;
        let current = users::user_by_id(&mut transaction, user.id).await?;
        // A zone given, even the one already set, is the person's choice.
        let zone_chosen = current.zone_chosen || patch.tz.is_some();
        let zone = zone.flatten().unwrap_or(current.zone);
        let mut quiet = current.quiet;
        quiet.start = quiet_start.flatten().unwrap_or(quiet.start);
        quiet.end = quiet_end.flatten().unwrap_or(quiet.end);
        let locale = locale.flatten().unwrap_or(current.locale);
        // A new zone moves local due moments and every checkpoint; new quiet
        // hours move the checkpoints. The events are locked before the
        // person's row is written: a change holding the row while it waited
        // for events the scheduler claimed could close a circle with the
        // outbox, which holds a channel the scheduler waits for and then
        // writes the person's row.
        let moved = if zone != current.zone || quiet != current.quiet {
            events::open_for_user(&mut transaction, user.id).await?
        } else {
            Vec::new()
        };
        users::save_profile(&mut transaction, user.id, (zone, zone_chosen), quiet, locale, now)
            .await?;
        for record in moved {
            let timeline = record.spec.timeline(zone);
            let ladder = Ladder { zone, quiet, ..record.ladder() };
            let lifecycle = event::rezoned(record.lifecycle, current.zone, &ladder).advanced(
                &timeline,
                record.spec.after_due,
                now,
            );
            let reminders = record.reminders.rebased(&lifecycle, &ladder, now);
            let next_check_at =
                reminders::earliest(lifecycle.next_check(&timeline, now), reminders.next_check());
            let write = LifecycleWrite {
                lifecycle,
                revised: false,
                reminders,
                due_at: timeline.due_moment,
                next_check_at,
            };
            events::save_lifecycle(&mut transaction, record.id, write, now).await?;
        }
        let updated = users::user_by_id(&mut transaction, user.id).await?;
        transaction.commit().await?;
        forget.landed();
        self.written();
        Ok(updated)
    }
}
