//! Owns where an open event stands on its checkpoint ladder (DESIGN §6):
//! the next checkpoint, whether it currently needs the person's attention,
//! and when an unanswered reminder repeats. Pure: the instant comes in as an
//! argument, and the ladder says when checkpoints are.

use chrono::{DateTime, Duration, Utc};

use super::checkpoints::Ladder;
use super::event::Lifecycle;
use super::state::State;
use super::time::local_time;

/// How often an unanswered reminder on a today or overdue event repeats.
pub const REPEAT_EVERY: Duration = Duration::hours(3);

/// An open event's place on its ladder. A closed event has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reminders {
    /// The next checkpoint, not yet reached.
    pub checkpoint: Option<DateTime<Utc>>,
    /// Since when the event needs attention: the reminder that raised it is
    /// unanswered (neither Remember nor Done).
    pub attention_since: Option<DateTime<Utc>>,
    /// When the unanswered reminder of a today or overdue event repeats.
    pub repeat_at: Option<DateTime<Utc>>,
}

/// Why a reminder that came due reaches nobody.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suppressed {
    /// The person pressed Remember and the quiet it bought has not ended.
    Remembered,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReminderKind {
    Checkpoint,
    Repeat,
}

/// A reminder that came due at a tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fired {
    pub kind: ReminderKind,
    /// The checkpoint or repeat moment it stands for.
    pub due: DateTime<Utc>,
    pub suppressed: Option<Suppressed>,
}

/// The next repeat after a reminder at `at`: three hours on, outside quiet
/// hours, and only within the same local day.
fn repeat_after(at: DateTime<Utc>, state: State, ladder: &Ladder) -> Option<DateTime<Utc>> {
    if !matches!(state, State::Today | State::Overdue) {
        return None;
    }
    let candidate = ladder.quiet.push_out(ladder.zone, at + REPEAT_EVERY);
    (local_time(ladder.zone, candidate).date() == local_time(ladder.zone, at).date())
        .then_some(candidate)
}

impl Reminders {
    /// The ladder of an event that starts now (created, rescheduled, revived):
    /// the first checkpoint after `now`, nothing pending.
    pub fn start(lifecycle: &Lifecycle, ladder: &Ladder, now: DateTime<Utc>) -> Self {
        if !lifecycle.state.is_active() {
            return Self::default();
        }
        Self { checkpoint: ladder.next_after(now), ..Self::default() }
    }

    /// The ladder of an event that arrives now from a source or the person
    /// (created, rescheduled, revived): as `start`, but one that came after
    /// its last checkpoint before the due moment is reminded at once (or at
    /// the end of quiet hours) rather than after the deadline.
    pub fn arrived(lifecycle: &Lifecycle, ladder: &Ladder, now: DateTime<Utc>) -> Self {
        let started = Self::start(lifecycle, ladder, now);
        if !lifecycle.state.is_active() {
            return started;
        }
        Self { checkpoint: earliest(ladder.catch_up(now), started.checkpoint), ..started }
    }

    /// The same place after the event's fields or its person's zone or quiet
    /// hours changed: the next checkpoint is worked out again, attention
    /// stays.
    pub fn rebased(self, lifecycle: &Lifecycle, ladder: &Ladder, now: DateTime<Utc>) -> Self {
        if !lifecycle.state.is_active() {
            return Self::default();
        }
        let repeat_at = self
            .attention_since
            .and(self.repeat_at)
            .filter(|_| matches!(lifecycle.state, State::Today | State::Overdue));
        // The end of a quiet the person chose still reminds, wherever the rungs moved.
        let wake = lifecycle.quiet_until.filter(|until| *until > now);
        Self {
            checkpoint: earliest(ladder.next_after(now), wake),
            attention_since: self.attention_since,
            repeat_at,
        }
    }

    /// Remember answers the reminder: no attention and no repeats until the
    /// next checkpoint, or until `wake`, the morning the person chose, which
    /// then reminds in the checkpoint's place.
    pub fn remembered(self, wake: Option<DateTime<Utc>>) -> Self {
        Self { checkpoint: wake.or(self.checkpoint), attention_since: None, repeat_at: None }
    }

    /// Brought up to `now` after the lifecycle has been: a checkpoint that has
    /// passed fires (after downtime only the latest, never a backlog, and
    /// not before the person's quiet hours end), or else a repeat that has
    /// come due. A closed event has no reminders left.
    pub fn tick(
        self,
        lifecycle: &Lifecycle,
        ladder: &Ladder,
        now: DateTime<Utc>,
    ) -> (Self, Option<Fired>) {
        if !lifecycle.state.is_active() {
            return (Self::default(), None);
        }
        if let Some(checkpoint) = self.checkpoint.filter(|checkpoint| *checkpoint <= now) {
            let next = ladder.next_after(now);
            if lifecycle.quiet_until.is_some_and(|until| until > now) {
                let fired = Fired {
                    kind: ReminderKind::Checkpoint,
                    due: checkpoint,
                    suppressed: Some(Suppressed::Remembered),
                };
                return (
                    Self { checkpoint: next, attention_since: None, repeat_at: None },
                    Some(fired),
                );
            }
            // Found late (the scheduler was down) in the person's quiet
            // hours: it fires when they end, never in the night.
            let awake = ladder.quiet.push_out(ladder.zone, now);
            if awake > now {
                return (Self { checkpoint: Some(awake), ..self }, None);
            }
            let fired = Fired { kind: ReminderKind::Checkpoint, due: checkpoint, suppressed: None };
            let reminders = Self {
                checkpoint: next,
                attention_since: Some(now),
                repeat_at: repeat_after(now, lifecycle.state, ladder),
            };
            return (reminders, Some(fired));
        }
        if let Some(repeat) = self.repeat_at.filter(|repeat| *repeat <= now) {
            if self.attention_since.is_none() {
                return (Self { repeat_at: None, ..self }, None);
            }
            let fired = Fired { kind: ReminderKind::Repeat, due: repeat, suppressed: None };
            return (
                Self { repeat_at: repeat_after(now, lifecycle.state, ladder), ..self },
                Some(fired),
            );
        }
        // A state change may have ended the repeats (today → expired is
        // closed above; preparing never repeats).
        let repeat_at =
            self.repeat_at.filter(|_| matches!(lifecycle.state, State::Today | State::Overdue));
        (Self { repeat_at, ..self }, None)
    }

    /// When the person is next reminded, as things stand: the earlier of
    /// the next repeat and the next checkpoint, passing over checkpoints
    /// that Remember's quiet covers (the scheduler records those as
    /// suppressed). None for a closed event or one with nothing left.
    pub fn next_reminder(&self, lifecycle: &Lifecycle, ladder: &Ladder) -> Option<DateTime<Utc>> {
        if !lifecycle.state.is_active() {
            return None;
        }
        let mut checkpoint = self.checkpoint;
        // The ladder's rungs are days apart, so a handful covers any quiet.
        for _ in 0..64 {
            match (checkpoint, lifecycle.quiet_until) {
                (Some(at), Some(until)) if at < until => checkpoint = ladder.next_after(at),
                _ => break,
            }
        }
        earliest(checkpoint, self.repeat_at)
    }

    /// When the scheduler must look at the event for its reminders.
    pub fn next_check(&self) -> Option<DateTime<Utc>> {
        earliest(self.checkpoint, self.repeat_at)
    }

    pub fn needs_attention(&self) -> bool {
        self.attention_since.is_some()
    }
}

/// Whether an open event needs the person's attention (the inbox's badge
/// and highlight): a reminder of it is unanswered, or it is due today or
/// overdue and they have not answered it with Remember. The attention
/// count in storage asks the same in SQL.
pub fn needs_attention(lifecycle: &Lifecycle, reminders: &Reminders) -> bool {
    lifecycle.state.is_active()
        && (reminders.needs_attention()
            || (matches!(lifecycle.state, State::Today | State::Overdue)
                && lifecycle.quiet_until.is_none()))
}

/// The earlier of two optional instants.
pub fn earliest(
    first: Option<DateTime<Utc>>,
    second: Option<DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    match (first, second) {
        (Some(first), Some(second)) => Some(first.min(second)),
        (first, second) => first.or(second),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{NaiveDateTime, NaiveTime};
    use chrono_tz::America::New_York;
    use chrono_tz::Europe::Berlin;
    use chrono_tz::Tz;

    use super::*;
    use crate::checkpoints::QuietHours;
    use crate::event::{EventSpec, RawFields};
    use crate::time::resolve_local;

    fn at(zone: Tz, text: &str) -> DateTime<Utc> {
        resolve_local(zone, NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").unwrap())
    }

    /// One event followed by a scheduler that wakes only when something is
    /// due (as the real one does), with the person's answers in between.
    struct Run {
        spec: EventSpec,
        ladder: Ladder,
        lifecycle: Lifecycle,
        reminders: Reminders,
        /// How far the run has gone.
        now: DateTime<Utc>,
    }

    impl Run {
        fn new(
            zone: Tz,
            due_at: &str,
            fire_at: &str,
            after_due: &str,
            quiet: (&str, &str),
            from: DateTime<Utc>,
        ) -> Self {
            let raw = RawFields {
                title: "Visa".into(),
                due_at: due_at.into(),
                fire_at: Some(fire_at.into()),
                after_due: Some(after_due.into()),
                ..RawFields::default()
            };
            let spec = EventSpec::parse(&raw).unwrap();
            let clock = |text: &str| NaiveTime::parse_from_str(text, "%H:%M").unwrap();
            let quiet = QuietHours { start: clock(quiet.0), end: clock(quiet.1) };
            let ladder = Ladder {
                due: spec.due.at,
                preparing_date: spec.preparing_date(),
                after_due: spec.after_due,
                zone,
                quiet,
            };
            let lifecycle = Lifecycle::fresh(&spec.timeline(zone), spec.after_due, from);
            let reminders = Reminders::arrived(&lifecycle, &ladder, from);
            Self { spec, ladder, lifecycle, reminders, now: from }
        }

        fn zone(&self) -> Tz {
            self.ladder.zone
        }

        /// What fires from the last wake until `until`, Remember pressed at `remember_at`.
        fn until(&mut self, until: DateTime<Utc>, remember_at: &[DateTime<Utc>]) -> Vec<String> {
            let timeline = self.spec.timeline(self.zone());
            let mut answers = remember_at.to_vec();
            let mut fired = Vec::new();
            let mut now = self.now;
            loop {
                let state_change = if self.lifecycle.state.is_active() {
                    timeline.next_change_after(now)
                } else {
                    None
                };
                let wake = earliest(
                    earliest(self.reminders.next_check(), state_change),
                    answers.first().copied(),
                );
                let Some(wake) = wake.filter(|wake| *wake <= until) else {
                    self.now = until;
                    return fired;
                };
                now = wake;
                if answers.first() == Some(&now) {
                    answers.remove(0);
                    self.lifecycle.quiet_until = Some(self.ladder.next_after(now).unwrap_or(now));
                    self.reminders = self.reminders.remembered(None);
                    fired.push(format!(
                        "{} remembered",
                        local_time(self.zone(), now).format("%Y-%m-%dT%H:%M")
                    ));
                    continue;
                }
                self.lifecycle = self.lifecycle.advanced(&timeline, self.spec.after_due, now);
                let (reminders, what) = self.reminders.tick(&self.lifecycle, &self.ladder, now);
                self.reminders = reminders;
                if let Some(what) = what {
                    let label = match (what.kind, what.suppressed) {
                        (_, Some(Suppressed::Remembered)) => "quiet",
                        (ReminderKind::Checkpoint, None) => "checkpoint",
                        (ReminderKind::Repeat, None) => "repeat",
                    };
                    fired.push(format!(
                        "{} {label}",
                        local_time(self.zone(), now).format("%Y-%m-%dT%H:%M")
                    ));
                }
            }
        }
    }

    #[test]
    fn the_whole_ladder_with_repeats_on_the_due_day() {
        let mut run = Run::new(
            Berlin,
            "2026-12-14",
            "2026-11-14",
            "expire",
            ("22:00", "08:00"),
            at(Berlin, "2026-11-01T12:00"),
        );
        assert_eq!(
            run.until(at(Berlin, "2026-12-16T00:00"), &[]),
            [
                "2026-11-14T08:00 checkpoint",
                "2026-12-07T08:00 checkpoint",
                "2026-12-11T08:00 checkpoint",
                "2026-12-13T08:00 checkpoint",
                "2026-12-14T08:00 checkpoint",
                "2026-12-14T11:00 repeat",
                "2026-12-14T14:00 repeat",
                "2026-12-14T17:00 repeat",
                "2026-12-14T20:00 repeat",
            ],
            "repeats stop at quiet hours and at the end of the day; preparing days do not repeat"
        );
        assert_eq!(run.lifecycle.state, State::Expired);
        assert_eq!(run.reminders, Reminders::default(), "a closed event has no reminders left");
    }

    #[test]
    fn repeats_leave_quiet_hours_that_fall_in_the_day() {
        let mut run = Run::new(
            Berlin,
            "2026-12-14",
            "2026-12-14",
            "expire",
            ("13:00", "15:00"),
            at(Berlin, "2026-12-01T12:00"),
        );
        assert_eq!(
            run.until(at(Berlin, "2026-12-15T00:00"), &[]),
            ["2026-12-14T15:00 checkpoint", "2026-12-14T18:00 repeat", "2026-12-14T21:00 repeat"],
            "the morning is the end of the quiet hours; 00:00 would be the next day"
        );
        let mut run = Run::new(
            Berlin,
            "2026-12-14",
            "2026-12-14",
            "expire",
            ("02:00", "09:30"),
            at(Berlin, "2026-12-01T12:00"),
        );
        assert_eq!(
            run.until(at(Berlin, "2026-12-15T00:00"), &[]),
            [
                "2026-12-14T09:30 checkpoint",
                "2026-12-14T12:30 repeat",
                "2026-12-14T15:30 repeat",
                "2026-12-14T18:30 repeat",
                "2026-12-14T21:30 repeat"
            ]
        );
    }

    #[test]
    fn remember_quiets_until_the_next_checkpoint_which_then_fires() {
        let mut run = Run::new(
            Berlin,
            "2026-12-14T18:00",
            "2026-12-10",
            "keep",
            ("22:00", "08:00"),
            at(Berlin, "2026-12-01T12:00"),
        );
        let fired = run.until(
            at(Berlin, "2026-12-15T12:00"),
            &[at(Berlin, "2026-12-13T09:00"), at(Berlin, "2026-12-14T09:00")],
        );
        assert_eq!(
            fired,
            [
                "2026-12-10T08:00 checkpoint",
                "2026-12-11T08:00 checkpoint",
                "2026-12-13T08:00 checkpoint",
                "2026-12-13T09:00 remembered",
                "2026-12-14T08:00 checkpoint",
                "2026-12-14T09:00 remembered",
                "2026-12-14T17:00 checkpoint",
                "2026-12-14T18:00 checkpoint",
                "2026-12-14T21:00 repeat",
                "2026-12-15T08:00 checkpoint",
                "2026-12-15T11:00 repeat",
            ],
            "Remember stops the 11:00 and 14:00 repeats; the hour-before checkpoint starts them again, and the due moment reminds"
        );
        assert!(run.reminders.needs_attention());
        assert_eq!(run.reminders.remembered(None).attention_since, None);
    }

    #[test]
    fn the_next_reminder_is_the_one_that_will_reach_the_person() {
        let mut run = Run::new(
            Berlin,
            "2026-12-14T18:00",
            "2026-12-10",
            "keep",
            ("22:00", "08:00"),
            at(Berlin, "2026-12-01T12:00"),
        );
        let next = |run: &Run| {
            run.reminders
                .next_reminder(&run.lifecycle, &run.ladder)
                .map(|next| local_time(Berlin, next).format("%Y-%m-%dT%H:%M").to_string())
        };
        assert_eq!(
            next(&run).as_deref(),
            Some("2026-12-10T08:00"),
            "a fresh event: its first checkpoint"
        );
        run.until(at(Berlin, "2026-12-14T17:30"), &[]);
        assert_eq!(
            next(&run).as_deref(),
            Some("2026-12-14T18:00"),
            "after the hour-before checkpoint: the due moment comes before its repeat"
        );
        // A quiet that reaches past the next checkpoints passes over them.
        run.lifecycle.quiet_until = Some(at(Berlin, "2026-12-16T12:00"));
        run.reminders = run.reminders.remembered(None);
        assert_eq!(
            next(&run).as_deref(),
            Some("2026-12-17T08:00"),
            "the 15th's checkpoint falls in the quiet; the 17th's is the first after it"
        );
        assert_eq!(
            run.until(at(Berlin, "2026-12-17T09:00"), &[]),
            ["2026-12-14T18:00 quiet", "2026-12-15T08:00 quiet", "2026-12-17T08:00 checkpoint"],
            "as the scheduler finds: the due moment and the 15th's checkpoint are quieted"
        );
        run.lifecycle = crate::event::mark_done(run.lifecycle, at(Berlin, "2026-12-14T19:00"));
        assert_eq!(next(&run), None, "a closed event reminds no more");
    }

    #[test]
    fn remember_until_a_morning_keeps_quiet_until_then_and_reminds_then() {
        let mut run = Run::new(
            Berlin,
            "2026-12-14T18:00",
            "2026-12-10",
            "keep",
            ("22:00", "08:00"),
            at(Berlin, "2026-12-01T12:00"),
        );
        assert_eq!(run.until(at(Berlin, "2026-12-10T09:00"), &[]), ["2026-12-10T08:00 checkpoint"]);
        // "Until next week": Monday the 14th is the due day; its morning reminds.
        let now = at(Berlin, "2026-12-10T09:00");
        let wake = at(Berlin, "2026-12-14T08:00");
        run.lifecycle = crate::event::remember(run.lifecycle, &run.ladder, now, Some(wake));
        run.reminders = run.reminders.remembered(Some(wake));
        assert_eq!(run.reminders.next_reminder(&run.lifecycle, &run.ladder), Some(wake));
        assert_eq!(
            run.until(at(Berlin, "2026-12-14T13:00"), &[]),
            ["2026-12-14T08:00 checkpoint", "2026-12-14T11:00 repeat"],
            "the 11th's and 13th's checkpoints are passed over, not even recorded as quieted; the morning of the 14th reminds"
        );
    }

    #[test]
    fn only_the_latest_missed_checkpoint_fires_after_downtime() {
        let run = Run::new(
            Berlin,
            "2026-12-14",
            "2026-11-14",
            "keep",
            ("22:00", "08:00"),
            at(Berlin, "2026-11-01T12:00"),
        );
        let back = at(Berlin, "2026-12-12T10:00");
        let lifecycle =
            run.lifecycle.advanced(&run.spec.timeline(Berlin), run.spec.after_due, back);
        let (reminders, fired) = run.reminders.tick(&lifecycle, &run.ladder, back);
        let fired = fired.expect("one reminder");
        assert_eq!((fired.kind, fired.suppressed), (ReminderKind::Checkpoint, None));
        assert_eq!(
            reminders.checkpoint,
            Some(at(Berlin, "2026-12-13T08:00")),
            "no backlog: the next is still ahead"
        );
        let (_, again) = reminders.tick(&lifecycle, &run.ladder, back);
        assert_eq!(again, None, "nothing fires twice");
    }

    #[test]
    fn a_checkpoint_found_in_the_night_waits_for_the_morning() {
        let run = Run::new(
            Berlin,
            "2026-12-14",
            "2026-11-14",
            "keep",
            ("22:00", "08:00"),
            at(Berlin, "2026-11-01T12:00"),
        );
        // Back at 03:00 on the 12th, after missing the 11th's checkpoint.
        let back = at(Berlin, "2026-12-12T03:00");
        let lifecycle =
            run.lifecycle.advanced(&run.spec.timeline(Berlin), run.spec.after_due, back);
        let (reminders, fired) = run.reminders.tick(&lifecycle, &run.ladder, back);
        assert_eq!(fired, None, "nothing in the quiet hours");
        assert_eq!(reminders.checkpoint, Some(at(Berlin, "2026-12-12T08:00")));
        let morning = at(Berlin, "2026-12-12T08:00");
        let (reminders, fired) = reminders.tick(&lifecycle, &run.ladder, morning);
        assert_eq!(fired.map(|fired| fired.kind), Some(ReminderKind::Checkpoint));
        assert_eq!(reminders.checkpoint, Some(at(Berlin, "2026-12-13T08:00")));
    }

    #[test]
    fn a_reschedule_restarts_the_ladder_and_done_ends_it() {
        let run = Run::new(
            Berlin,
            "2026-12-14",
            "2026-11-14",
            "keep",
            ("22:00", "08:00"),
            at(Berlin, "2026-12-12T10:00"),
        );
        assert_eq!(run.reminders.checkpoint, Some(at(Berlin, "2026-12-13T08:00")));
        let moved = Run::new(
            Berlin,
            "2027-01-20",
            "2026-11-14",
            "keep",
            ("22:00", "08:00"),
            at(Berlin, "2026-12-12T10:00"),
        );
        assert_eq!(
            moved.reminders.checkpoint,
            Some(at(Berlin, "2027-01-13T08:00")),
            "D-7 of the new due day"
        );
        let done = Lifecycle {
            state: State::Done,
            closed_at: Some(at(Berlin, "2026-12-12T10:00")),
            quiet_until: None,
        };
        let busy =
            Reminders { attention_since: Some(at(Berlin, "2026-12-12T08:00")), ..run.reminders };
        assert_eq!(
            busy.tick(&done, &run.ladder, at(Berlin, "2026-12-13T08:00")),
            (Reminders::default(), None)
        );
        assert_eq!(
            busy.rebased(&done, &run.ladder, at(Berlin, "2026-12-13T08:00")),
            Reminders::default()
        );
    }

    #[test]
    fn dst_nights_neither_skip_nor_double_a_reminder() {
        // Berlin springs forward on 2025-03-30 (02:00 → 03:00) and falls back on 2025-10-26.
        let mut spring = Run::new(
            Berlin,
            "2025-03-30",
            "2025-03-29",
            "keep",
            ("00:00", "00:00"),
            at(Berlin, "2025-03-20T12:00"),
        );
        assert_eq!(
            spring.until(at(Berlin, "2025-04-03T00:00"), &[]),
            [
                "2025-03-29T09:00 checkpoint",
                "2025-03-30T09:00 checkpoint",
                "2025-03-30T12:00 repeat",
                "2025-03-30T15:00 repeat",
                "2025-03-30T18:00 repeat",
                "2025-03-30T21:00 repeat",
                "2025-03-31T09:00 checkpoint",
                "2025-03-31T12:00 repeat",
                "2025-03-31T15:00 repeat",
                "2025-03-31T18:00 repeat",
                "2025-03-31T21:00 repeat",
                "2025-04-02T09:00 checkpoint",
                "2025-04-02T12:00 repeat",
                "2025-04-02T15:00 repeat",
                "2025-04-02T18:00 repeat",
                "2025-04-02T21:00 repeat",
            ]
        );
        // New York falls back on 2025-11-02 (02:00 → 01:00): an event due at 02:30 has one hour-before reminder.
        let mut fall = Run::new(
            New_York,
            "2025-11-02T02:30",
            "2025-11-02",
            "expire",
            ("23:00", "01:00"),
            at(New_York, "2025-10-30T12:00"),
        );
        assert_eq!(
            fall.until(at(New_York, "2025-11-03T00:00"), &[]),
            ["2025-11-02T01:00 checkpoint", "2025-11-02T01:30 checkpoint"]
        );
        // New York springs forward on 2025-03-09 (02:00 → 03:00): the reminders keep their wall-clock hours.
        let mut leap = Run::new(
            New_York,
            "2025-03-10",
            "2025-03-08",
            "expire",
            ("23:00", "07:00"),
            at(New_York, "2025-03-01T12:00"),
        );
        assert_eq!(
            leap.until(at(New_York, "2025-03-11T00:00"), &[]),
            [
                "2025-03-08T07:00 checkpoint",
                "2025-03-09T07:00 checkpoint",
                "2025-03-10T07:00 checkpoint",
                "2025-03-10T10:00 repeat",
                "2025-03-10T13:00 repeat",
                "2025-03-10T16:00 repeat",
                "2025-03-10T19:00 repeat",
                "2025-03-10T22:00 repeat",
            ]
        );
    }

    #[test]
    fn an_event_added_after_its_last_rung_is_reminded_now_and_at_its_due_moment() {
        let mut run = Run::new(
            Berlin,
            "2026-12-14T14:50",
            "2026-12-10",
            "keep",
            ("22:00", "08:00"),
            at(Berlin, "2026-12-14T14:32"),
        );
        assert_eq!(
            run.until(at(Berlin, "2026-12-15T09:00"), &[at(Berlin, "2026-12-14T14:40")]),
            [
                "2026-12-14T14:32 checkpoint",
                "2026-12-14T14:40 remembered",
                "2026-12-14T14:50 checkpoint",
                "2026-12-14T17:50 repeat",
                "2026-12-14T20:50 repeat",
                "2026-12-15T08:00 checkpoint",
            ],
            "Remember quiets it until the due moment, a checkpoint, which then reminds"
        );
        let mut night = Run::new(
            Berlin,
            "2026-12-15T09:00",
            "2026-12-10",
            "keep",
            ("22:00", "08:00"),
            at(Berlin, "2026-12-14T23:10"),
        );
        assert_eq!(
            night.until(at(Berlin, "2026-12-15T09:30"), &[]),
            ["2026-12-15T08:00 checkpoint", "2026-12-15T09:00 checkpoint"],
            "arriving in quiet hours: the morning of the due day is its rung; nothing at night"
        );
    }
}
