//! Owns what a write does to an event (DESIGN §5): the one validation of an
//! event's fields for every entry point, the upsert decision (new,
//! reschedule, update, revive), and the Done and Remember actions.

use chrono::{DateTime, Datelike, NaiveDate, Utc};
use chrono_tz::Tz;

use super::checkpoints::Ladder;
use super::fields::{AfterDue, DeepLink, DoneLabel, Title, parse_subtitle};
use super::state::{State, Timeline};
use super::time::{DEFAULT_LEAD_DAYS, Due, format_date, local_time, parse_date, resolve_local};
use super::violations::{Reason, Violations};
use crate::text::quoted;

/// An event's fields as they arrive, before validation.
#[derive(Clone, Debug, Default)]
pub struct RawFields {
    pub title: String,
    pub due_at: String,
    pub subtitle: Option<String>,
    pub fire_at: Option<String>,
    pub after_due: Option<String>,
    pub done_label: Option<String>,
    pub deep_link: Option<String>,
}

/// An event's fields, validated. Absent values stay absent (`fire_at`,
/// `done_label`) so that their defaults follow the due day and the reader's
/// language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSpec {
    pub title: Title,
    pub subtitle: Option<String>,
    pub due: Due,
    /// The fire day as given; `None` means 30 days before the due day.
    /// The day preparation starts (the wire's and the column's `fire_at`).
    pub preparing_from: Option<NaiveDate>,
    pub after_due: AfterDue,
    pub done_label: Option<DoneLabel>,
    pub deep_link: Option<DeepLink>,
}

impl EventSpec {
    /// Validates every field, reporting all problems at once.
    pub fn parse(raw: &RawFields) -> Result<Self, Violations> {
        let mut violations = Violations::default();
        let title = Title::parse("title", &raw.title, &mut violations);
        let subtitle = parse_subtitle("subtitle", raw.subtitle.as_deref(), &mut violations);
        let due = Due::parse("due_at", &raw.due_at, &mut violations);
        let preparing_from = raw
            .fire_at
            .as_deref()
            .filter(|text| !text.trim().is_empty())
            .and_then(|text| parse_date("fire_at", text, &mut violations).map(Some))
            .unwrap_or(None);
        let after_due =
            AfterDue::parse_optional("after_due", raw.after_due.as_deref(), &mut violations);
        let done_label =
            DoneLabel::parse_optional("done_label", raw.done_label.as_deref(), &mut violations);
        let deep_link =
            DeepLink::parse_optional("deep_link", raw.deep_link.as_deref(), &mut violations);
        if let (Some(due), Some(fire)) = (&due, preparing_from) {
            let due_day = due.at.written_day();
            if fire > due_day {
                violations.refuse(
                    "fire_at",
                    Reason::FireAfterDue,
                    format!(
                        "fire_at {} is after the due day {}",
                        format_date(fire),
                        format_date(due_day)
                    ),
                );
            }
        }
        let spec = match (title, due, after_due) {
            (Some(title), Some(due), Some(after_due)) => Some(Self {
                title,
                subtitle,
                due,
                preparing_from,
                after_due,
                done_label,
                deep_link,
            }),
            _ => None,
        };
        violations.into_result(spec)
    }

    /// The day preparation starts: as given, or 30 days before the due day.
    pub fn preparing_date(&self) -> NaiveDate {
        self.preparing_from.unwrap_or_else(|| {
            self.due
                .at
                .written_day()
                .checked_sub_days(chrono::Days::new(DEFAULT_LEAD_DAYS))
                .unwrap_or(self.due.at.written_day())
        })
    }

    pub fn timeline(&self, zone: Tz) -> Timeline {
        Timeline::new(&self.due.at, self.preparing_date(), zone)
    }

    /// The raw form of these fields, for merging a partial update into them.
    pub fn to_raw(&self) -> RawFields {
        RawFields {
            title: self.title.as_str().to_owned(),
            due_at: self.due.text.clone(),
            subtitle: self.subtitle.clone(),
            fire_at: self.preparing_from.map(format_date),
            after_due: Some(self.after_due.as_str().to_owned()),
            done_label: self.done_label.as_ref().map(|label| label.as_str().to_owned()),
            deep_link: self.deep_link.as_ref().map(|link| link.as_str().to_owned()),
        }
    }
}

/// What an upsert did, as reported to the writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Created,
    Updated,
    Rescheduled,
    Unchanged,
    Revived,
}

/// The lifecycle part of a stored event: what writes and the scheduler
/// change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lifecycle {
    pub state: State,
    pub closed_at: Option<DateTime<Utc>>,
    pub quiet_until: Option<DateTime<Utc>>,
}

impl Lifecycle {
    /// A fresh lifecycle from the timeline alone: nothing quieted, and an
    /// expired event closed at its due moment.
    pub fn fresh(timeline: &Timeline, after_due: AfterDue, now: DateTime<Utc>) -> Self {
        let state = timeline.open_state(after_due, now);
        let closed_at = (state == State::Expired).then_some(timeline.due_moment);
        Self { state, closed_at, quiet_until: None }
    }

    /// The lifecycle of an open event brought up to `now` (its fields or its
    /// user's zone may have changed); closed and withdrawn events stay as they
    /// are.
    pub fn advanced(self, timeline: &Timeline, after_due: AfterDue, now: DateTime<Utc>) -> Self {
        if !self.state.is_active() {
            return self;
        }
        let fresh = Self::fresh(timeline, after_due, now);
        Self { quiet_until: self.quiet_until, ..fresh }
    }

    /// When the scheduler must look at this event next: the next state change
    /// of an open event, never for a closed one.
    pub fn next_check(&self, timeline: &Timeline, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if self.state.is_active() { timeline.next_change_after(now) } else { None }
    }
}

/// The stored event an upsert meets under its key.
#[derive(Clone, Debug)]
pub struct Existing {
    pub spec: EventSpec,
    pub lifecycle: Lifecycle,
}

/// The upsert decision: what the event's lifecycle becomes and how to report
/// it.
pub fn decide_upsert(
    existing: Option<&Existing>,
    new: &EventSpec,
    zone: Tz,
    now: DateTime<Utc>,
) -> (Outcome, Lifecycle) {
    let timeline = new.timeline(zone);
    let fresh = Lifecycle::fresh(&timeline, new.after_due, now);
    let Some(existing) = existing else { return (Outcome::Created, fresh) };
    if existing.lifecycle.state == State::Withdrawn {
        return (Outcome::Revived, fresh);
    }
    if existing.spec.due.at != new.due.at {
        return (Outcome::Rescheduled, fresh);
    }
    let lifecycle = existing.lifecycle.advanced(&timeline, new.after_due, now);
    let outcome = if existing.spec == *new && lifecycle == existing.lifecycle {
        Outcome::Unchanged
    } else {
        Outcome::Updated
    };
    (outcome, lifecycle)
}

/// Done: closes an open event now; a closed or withdrawn one is returned as
/// it is.
pub fn mark_done(lifecycle: Lifecycle, now: DateTime<Utc>) -> Lifecycle {
    if lifecycle.state.is_active() {
        Lifecycle { state: State::Done, closed_at: Some(now), quiet_until: lifecycle.quiet_until }
    } else {
        lifecycle
    }
}

/// Takes Remember back: the event is no longer quiet, so the next checkpoint
/// reminds as if Remember had not been pressed. A closed event, or one not
/// remembered, is returned as it is.
pub fn take_back_remember(lifecycle: Lifecycle) -> Lifecycle {
    if lifecycle.state.is_active() {
        Lifecycle { quiet_until: None, ..lifecycle }
    } else {
        lifecycle
    }
}

/// How long Remember keeps an event quiet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RememberFor {
    /// Until the next checkpoint, which then reminds (the default).
    NextCheckpoint,
    /// Until tomorrow morning (when the person's quiet hours end).
    TomorrowMorning,
    /// Until Monday morning of next week.
    NextWeek,
    /// Until the morning of a day the person picked.
    Day(NaiveDate),
}

/// How far ahead a picked day may be.
const REMEMBER_AT_MOST_DAYS: i64 = 366;

impl RememberFor {
    /// `next_checkpoint`, `tomorrow`, `next_week`, or a day `YYYY-MM-DD`.
    pub fn parse(field: &str, raw: &str, violations: &mut Violations) -> Option<Self> {
        match raw.trim() {
            "" | "next_checkpoint" => Some(Self::NextCheckpoint),
            "tomorrow" => Some(Self::TomorrowMorning),
            "next_week" => Some(Self::NextWeek),
            day => match NaiveDate::parse_from_str(day, "%Y-%m-%d") {
                Ok(day) => Some(Self::Day(day)),
                Err(_) => {
                    violations.refuse(
                        field,
                        Reason::NotARememberChoice,
                        format!("{field} {} is not one of next_checkpoint, tomorrow, next_week or a day YYYY-MM-DD", quoted(raw)),
                    );
                    None
                }
            },
        }
    }

    /// As a request spells it: the inverse of `parse`.
    pub fn spelled(self) -> String {
        match self {
            Self::NextCheckpoint => "next_checkpoint".into(),
            Self::TomorrowMorning => "tomorrow".into(),
            Self::NextWeek => "next_week".into(),
            Self::Day(day) => day.format("%Y-%m-%d").to_string(),
        }
    }

    /// The morning the person chose, on the event's ladder (its zone and
    /// quiet hours); `None` for the next checkpoint. A picked day must be
    /// after today and within a year.
    pub fn wake(
        self,
        ladder: &Ladder,
        now: DateTime<Utc>,
    ) -> Result<Option<DateTime<Utc>>, String> {
        let today = local_time(ladder.zone, now).date();
        let day = match self {
            Self::NextCheckpoint => return Ok(None),
            Self::TomorrowMorning => today + chrono::Days::new(1),
            Self::NextWeek => {
                today + chrono::Days::new(7 - u64::from(today.weekday().num_days_from_monday()))
            }
            Self::Day(day) if day <= today => {
                return Err(format!("until {day} is not after today ({today}): pick a later day"));
            }
            Self::Day(day) if (day - today).num_days() > REMEMBER_AT_MOST_DAYS => {
                return Err(format!(
                    "until {day} is more than a year away: pick a day within {REMEMBER_AT_MOST_DAYS} days"
                ));
            }
            Self::Day(day) => day,
        };
        Ok(Some(ladder.at_morning(day)))
    }
}

/// Remember's quiet after the person's zone changed from `from` to the
/// ladder's zone. Checkpoints are wall-clock times, so the quiet ends at the
/// same wall-clock time in the new zone; and a quiet that ended by the due
/// moment in the old zone ends by it in the new one, so that it never
/// outlives the deadline. (A morning picked past the due day stays past it.)
pub fn rezoned(lifecycle: Lifecycle, from: Tz, ladder: &Ladder) -> Lifecycle {
    let Some(until) = lifecycle.quiet_until else { return lifecycle };
    if from == ladder.zone || !lifecycle.state.is_active() {
        return lifecycle;
    }
    let moved = resolve_local(ladder.zone, local_time(from, until));
    let new_due = ladder.due.moment_in(ladder.zone);
    let moved = if until <= ladder.due.moment_in(from) { moved.min(new_due) } else { moved };
    Lifecycle { quiet_until: Some(moved), ..lifecycle }
}

/// Remember: quiet until the next checkpoint (or, with none left, until the
/// due moment), or until `wake`, the morning the person chose, when they
/// are reminded again; a closed or withdrawn event is returned as it is.
pub fn remember(
    lifecycle: Lifecycle,
    ladder: &Ladder,
    now: DateTime<Utc>,
    wake: Option<DateTime<Utc>>,
) -> Lifecycle {
    if !lifecycle.state.is_active() {
        return lifecycle;
    }
    let until = wake
        .or_else(|| ladder.next_after(now))
        .unwrap_or_else(|| ladder.due.moment_in(ladder.zone).max(now));
    Lifecycle { quiet_until: Some(until), ..lifecycle }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveTime;
    use chrono_tz::Europe::Berlin;

    use super::*;
    use crate::checkpoints::QuietHours;

    fn raw(title: &str, due_at: &str) -> RawFields {
        RawFields { title: title.into(), due_at: due_at.into(), ..RawFields::default() }
    }

    fn spec(raw: RawFields) -> EventSpec {
        EventSpec::parse(&raw).unwrap()
    }

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn existing(spec: EventSpec, state: State) -> Existing {
        let closed_at = State::ARCHIVED.contains(&state).then(|| utc("2026-12-02T10:00:00Z"));
        Existing {
            spec,
            lifecycle: Lifecycle {
                state,
                closed_at,
                quiet_until: Some(utc("2026-12-05T07:00:00Z")),
            },
        }
    }

    const NOW: &str = "2026-12-03T12:00:00Z";

    #[test]
    fn defaults_are_thirty_days_of_preparation_keep_and_no_label() {
        let event = spec(raw("Visa", "2026-12-14"));
        assert_eq!(event.preparing_date(), NaiveDate::from_ymd_opt(2026, 11, 14).unwrap());
        assert_eq!(event.after_due, AfterDue::Keep);
        assert_eq!(event.done_label, None);
        assert_eq!(event.subtitle, None);
    }

    #[test]
    fn every_bad_field_is_reported_at_once() {
        let violations = EventSpec::parse(&RawFields {
            title: " ".into(),
            due_at: "2026-12-14".into(),
            fire_at: Some("2026-12-20".into()),
            after_due: Some("forget".into()),
            done_label: Some("x".repeat(65)),
            deep_link: Some("javascript:alert(1)".into()),
            subtitle: Some("s".repeat(201)),
        })
        .unwrap_err();
        let fields: Vec<&str> =
            violations.iter().map(|violation| violation.field.as_str()).collect();
        assert_eq!(
            fields,
            ["title", "subtitle", "after_due", "done_label", "deep_link", "fire_at"]
        );
        assert!(
            violations.to_string().contains("fire_at 2026-12-20 is after the due day 2026-12-14")
        );
    }

    #[test]
    fn a_past_fire_day_simply_starts_the_event_in_preparing() {
        let event =
            spec(RawFields { fire_at: Some("2026-01-01".into()), ..raw("Visa", "2026-12-14") });
        let (outcome, lifecycle) = decide_upsert(None, &event, Berlin, utc(NOW));
        assert_eq!((outcome, lifecycle.state), (Outcome::Created, State::Preparing));
    }

    #[test]
    fn a_new_key_is_created_in_its_computed_state() {
        let (outcome, lifecycle) =
            decide_upsert(None, &spec(raw("Visa", "2027-06-01")), Berlin, utc(NOW));
        assert_eq!(
            (outcome, lifecycle.state, lifecycle.quiet_until),
            (Outcome::Created, State::Scheduled, None)
        );
    }

    #[test]
    fn a_new_due_date_reopens_a_done_event() {
        let old = existing(spec(raw("Visa", "2026-12-01")), State::Done);
        let (outcome, lifecycle) =
            decide_upsert(Some(&old), &spec(raw("Visa", "2026-12-14")), Berlin, utc(NOW));
        assert_eq!(outcome, Outcome::Rescheduled);
        assert_eq!(
            lifecycle,
            Lifecycle { state: State::Preparing, closed_at: None, quiet_until: None }
        );
    }

    #[test]
    fn a_new_due_date_reopens_an_expired_event_and_clears_remember() {
        let old = existing(
            spec(RawFields { after_due: Some("expire".into()), ..raw("Visa", "2026-12-01") }),
            State::Expired,
        );
        let (outcome, lifecycle) =
            decide_upsert(Some(&old), &spec(raw("Visa", "2026-12-03T18:00")), Berlin, utc(NOW));
        assert_eq!(outcome, Outcome::Rescheduled);
        assert_eq!(
            lifecycle,
            Lifecycle { state: State::Today, closed_at: None, quiet_until: None }
        );
    }

    #[test]
    fn the_same_due_date_keeps_a_done_event_done() {
        let old = existing(spec(raw("Visa", "2026-12-14")), State::Done);
        let (outcome, lifecycle) =
            decide_upsert(Some(&old), &spec(raw("Visa renewal", "2026-12-14")), Berlin, utc(NOW));
        assert_eq!(outcome, Outcome::Updated);
        assert_eq!(lifecycle, old.lifecycle);
    }

    #[test]
    fn the_same_fields_again_are_unchanged() {
        let old = existing(spec(raw("Visa", "2026-12-14")), State::Preparing);
        let (outcome, lifecycle) =
            decide_upsert(Some(&old), &spec(raw("Visa", "2026-12-14")), Berlin, utc(NOW));
        assert_eq!(outcome, Outcome::Unchanged);
        assert_eq!(lifecycle, old.lifecycle);
    }

    #[test]
    fn the_same_instant_in_another_offset_is_not_a_reschedule() {
        let old = existing(spec(raw("Flight", "2026-12-14T15:00+09:00")), State::Done);
        let (outcome, lifecycle) =
            decide_upsert(Some(&old), &spec(raw("Flight", "2026-12-14T06:00Z")), Berlin, utc(NOW));
        assert_eq!((outcome, lifecycle.state), (Outcome::Updated, State::Done));
    }

    #[test]
    fn an_update_of_an_open_event_recomputes_its_state_and_keeps_remember() {
        let old = existing(
            spec(RawFields { fire_at: Some("2026-12-10".into()), ..raw("Visa", "2026-12-14") }),
            State::Scheduled,
        );
        let moved_fire =
            spec(RawFields { fire_at: Some("2026-12-01".into()), ..raw("Visa", "2026-12-14") });
        let (outcome, lifecycle) = decide_upsert(Some(&old), &moved_fire, Berlin, utc(NOW));
        assert_eq!(outcome, Outcome::Updated);
        assert_eq!(lifecycle.state, State::Preparing);
        assert_eq!(lifecycle.quiet_until, old.lifecycle.quiet_until);
    }

    #[test]
    fn switching_an_overdue_event_to_expire_closes_it_at_its_due_moment() {
        let old = existing(spec(raw("Visa", "2026-12-01")), State::Overdue);
        let expiring =
            spec(RawFields { after_due: Some("expire".into()), ..raw("Visa", "2026-12-01") });
        let (outcome, lifecycle) = decide_upsert(Some(&old), &expiring, Berlin, utc(NOW));
        assert_eq!((outcome, lifecycle.state), (Outcome::Updated, State::Expired));
        assert_eq!(lifecycle.closed_at, Some(utc("2026-12-01T23:00:00Z")));
    }

    #[test]
    fn any_upsert_revives_a_withdrawn_event() {
        for due_at in ["2026-12-14", "2026-12-20"] {
            let old = existing(spec(raw("Visa", "2026-12-14")), State::Withdrawn);
            let (outcome, lifecycle) =
                decide_upsert(Some(&old), &spec(raw("Visa", due_at)), Berlin, utc(NOW));
            assert_eq!(outcome, Outcome::Revived, "{due_at}");
            assert_eq!(
                lifecycle,
                Lifecycle { state: State::Preparing, closed_at: None, quiet_until: None }
            );
        }
    }

    #[test]
    fn done_closes_an_open_event_and_is_a_no_op_on_a_closed_one() {
        let now = utc(NOW);
        let open = Lifecycle { state: State::Today, closed_at: None, quiet_until: None };
        assert_eq!(
            mark_done(open, now),
            Lifecycle { state: State::Done, closed_at: Some(now), quiet_until: None }
        );
        let expired = Lifecycle {
            state: State::Expired,
            closed_at: Some(utc("2026-12-01T00:00:00Z")),
            quiet_until: None,
        };
        assert_eq!(mark_done(expired, now), expired);
    }

    fn ladder(event: &EventSpec) -> Ladder {
        let quiet = QuietHours {
            start: NaiveTime::from_hms_opt(22, 0, 0).unwrap(),
            end: NaiveTime::from_hms_opt(8, 0, 0).unwrap(),
        };
        Ladder {
            due: event.due.at,
            preparing_date: event.preparing_date(),
            after_due: event.after_due,
            zone: Berlin,
            quiet,
        }
    }

    #[test]
    fn remember_quiets_until_the_next_checkpoint() {
        let event = spec(raw("Visa", "2026-12-14"));
        let open = Lifecycle { state: State::Preparing, closed_at: None, quiet_until: None };
        // On Dec 3rd the next rung is D−7 = Dec 7th at 08:00 Berlin time.
        let remembered = remember(open, &ladder(&event), utc(NOW), None);
        assert_eq!(remembered.quiet_until, Some(utc("2026-12-07T07:00:00Z")));
        assert_eq!(remembered.state, State::Preparing);
        let done = Lifecycle { state: State::Done, closed_at: Some(utc(NOW)), quiet_until: None };
        assert_eq!(remember(done, &ladder(&event), utc(NOW), None), done);
    }

    #[test]
    fn remember_until_a_chosen_morning() {
        let event = spec(raw("Visa", "2026-12-14"));
        let ladder = ladder(&event);
        let now = utc(NOW); // Thursday, Dec 3rd, 13:00 in Berlin
        let wake = |raw: &str| {
            let mut violations = Violations::default();
            RememberFor::parse("until", raw, &mut violations).expect("parses").wake(&ladder, now)
        };
        assert_eq!(wake("next_checkpoint"), Ok(None));
        assert_eq!(wake(""), Ok(None), "the default");
        assert_eq!(
            wake("tomorrow"),
            Ok(Some(utc("2026-12-04T07:00:00Z"))),
            "08:00 in Berlin, when the quiet hours end"
        );
        assert_eq!(wake("next_week"), Ok(Some(utc("2026-12-07T07:00:00Z"))), "Monday");
        assert_eq!(wake("2026-12-20"), Ok(Some(utc("2026-12-20T07:00:00Z"))));
        assert!(wake("2026-12-03").unwrap_err().contains("not after today"));
        assert!(wake("2028-01-01").unwrap_err().contains("more than a year"));
        let mut violations = Violations::default();
        assert_eq!(RememberFor::parse("until", "someday", &mut violations), None);
        assert!(
            violations.to_string().contains("next_checkpoint, tomorrow, next_week or a day"),
            "{violations}"
        );
        for choice in [
            RememberFor::NextCheckpoint,
            RememberFor::TomorrowMorning,
            RememberFor::NextWeek,
            RememberFor::Day(NaiveDate::from_ymd_opt(2026, 12, 20).unwrap()),
        ] {
            assert_eq!(
                RememberFor::parse("until", &choice.spelled(), &mut Violations::default()),
                Some(choice)
            );
        }
        let open = Lifecycle { state: State::Preparing, closed_at: None, quiet_until: None };
        let remembered = remember(open, &ladder, now, wake("2026-12-20").unwrap());
        assert_eq!(
            remembered.quiet_until,
            Some(utc("2026-12-20T07:00:00Z")),
            "past the due day too: an overdue event waits with it"
        );
    }

    #[test]
    fn a_new_zone_moves_remembers_quiet_and_never_past_the_deadline() {
        let mut violations = Violations::default();
        let due = Due::parse("due_at", "2026-12-14T14:00", &mut violations).unwrap().at;
        let clock = |text| NaiveTime::parse_from_str(text, "%H:%M").unwrap();
        let quiet = QuietHours { start: clock("22:00"), end: clock("08:00") };
        let utc_zone: Tz = "UTC".parse().unwrap();
        let tokyo: Tz = "Asia/Tokyo".parse().unwrap();
        let ladder = |zone| Ladder {
            due,
            preparing_date: NaiveDate::from_ymd_opt(2026, 12, 10).unwrap(),
            after_due: AfterDue::Keep,
            zone,
            quiet,
        };
        // Remembered in UTC at 09:00 on the due day: quiet until 13:00 UTC, the hour before.
        let open = Lifecycle { state: State::Today, closed_at: None, quiet_until: None };
        let remembered = remember(open, &ladder(utc_zone), utc("2026-12-14T09:00:00Z"), None);
        assert_eq!(remembered.quiet_until, Some(utc("2026-12-14T13:00:00Z")));
        // In Tokyo the event is due at 14:00 there, 05:00 UTC: the quiet ends at 13:00 Tokyo.
        let moved = rezoned(remembered, utc_zone, &ladder(tokyo));
        assert_eq!(moved.quiet_until, Some(utc("2026-12-14T04:00:00Z")));
        assert!(moved.quiet_until.unwrap() <= due.moment_in(tokyo), "never past the deadline");
        // Picked past the due day, the morning stays a morning, past it.
        let later = Lifecycle { quiet_until: Some(utc("2026-12-20T08:00:00Z")), ..open };
        assert_eq!(
            rezoned(later, utc_zone, &ladder(tokyo)).quiet_until,
            Some(utc("2026-12-19T23:00:00Z")),
            "08:00 in Tokyo"
        );
        assert_eq!(rezoned(open, utc_zone, &ladder(tokyo)), open, "nothing quiet, nothing moves");
    }
}
