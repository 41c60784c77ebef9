//! Owns the state machine of DESIGN §4: which state an event is in at a given
//! instant in its user's zone, and when that next changes.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

use super::fields::AfterDue;
use super::time::{DueAt, start_of_day};
use super::violations::Violations;
use crate::text::quoted;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    Scheduled,
    Preparing,
    Today,
    Overdue,
    Done,
    Expired,
    Withdrawn,
}

impl State {
    /// Every state, each spelled once, in [`State::as_str`]: the stored
    /// column is read back through it, and a test holds the wire's words
    /// (`hado_proto::convert`) to it.
    pub const ALL: [State; 7] = [
        State::Scheduled,
        State::Preparing,
        State::Today,
        State::Overdue,
        State::Done,
        State::Expired,
        State::Withdrawn,
    ];
    pub const ACTIVE: [State; 4] =
        [State::Scheduled, State::Preparing, State::Today, State::Overdue];
    /// The active states in the inbox's order, which is the due moment's:
    /// what is late leads, then what is due today, then the rest.
    pub const INBOX: [State; 4] =
        [State::Overdue, State::Today, State::Preparing, State::Scheduled];
    /// What the archive shows: the events that closed by themselves or by Done.
    /// Whether Reopen brings back an event in this state: a done one, or a
    /// deleted one of the person's own (`own`); a source's withdrawal is the
    /// source's to undo.
    pub fn reopenable(self, own: bool) -> bool {
        self == State::Done || (self == State::Withdrawn && own)
    }

    /// What the archive lists: the closed events (done, expired) and the
    /// withdrawn ones (deleted by their person or withdrawn by their source).
    pub const ARCHIVED: [State; 3] = [State::Done, State::Expired, State::Withdrawn];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "scheduled",
            Self::Preparing => "preparing",
            Self::Today => "today",
            Self::Overdue => "overdue",
            Self::Done => "done",
            Self::Expired => "expired",
            Self::Withdrawn => "withdrawn",
        }
    }

    pub fn from_stored(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == raw)
    }

    /// Parses the inbox's state filter, which names active states only.
    pub fn parse_active_filter(
        field: &str,
        raw: &str,
        violations: &mut Violations,
    ) -> Option<Self> {
        let found = Self::ACTIVE.into_iter().find(|state| state.as_str() == raw.trim());
        if found.is_none() {
            violations.add(
                field,
                format!(
                    "{field} {} is not an active state: use scheduled, preparing, today or overdue",
                    quoted(raw)
                ),
            );
        }
        found
    }

    pub fn is_active(self) -> bool {
        Self::ACTIVE.contains(&self)
    }
}

/// The instants at which an event's state changes, in its user's zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// The start of the fire day: scheduled → preparing.
    pub preparing_start: DateTime<Utc>,
    /// The start of the due day: preparing → today.
    pub due_day_start: DateTime<Utc>,
    /// The due moment: today → overdue or expired.
    pub due_moment: DateTime<Utc>,
}

impl Timeline {
    pub fn new(due: &DueAt, preparing_date: NaiveDate, zone: Tz) -> Self {
        Self {
            preparing_start: start_of_day(zone, preparing_date),
            due_day_start: start_of_day(zone, due.day_in(zone)),
            due_moment: due.moment_in(zone),
        }
    }

    /// The state an open event is in at `now`. Checked from the latest
    /// boundary down, so that a zone in which the fire day starts after the
    /// due day still gives the latest state that applies.
    pub fn open_state(&self, after_due: AfterDue, now: DateTime<Utc>) -> State {
        if now >= self.due_moment {
            match after_due {
                AfterDue::Keep => State::Overdue,
                AfterDue::Expire => State::Expired,
            }
        } else if now >= self.due_day_start {
            State::Today
        } else if now >= self.preparing_start {
            State::Preparing
        } else {
            State::Scheduled
        }
    }

    /// The next instant after `now` at which the open state changes.
    pub fn next_change_after(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        [self.preparing_start, self.due_day_start, self.due_moment]
            .into_iter()
            .filter(|instant| *instant > now)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDateTime;
    use chrono_tz::America::New_York;
    use chrono_tz::Asia::Tokyo;
    use chrono_tz::Europe::{Berlin, Moscow};

    use super::*;
    use crate::time::Due;

    fn due(text: &str) -> DueAt {
        let mut violations = Violations::default();
        Due::parse("due_at", text, &mut violations).unwrap().at
    }

    fn date(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    /// The instant of a wall-clock time in `zone` (unambiguous ones only).
    fn at(zone: Tz, text: &str) -> DateTime<Utc> {
        let local = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").unwrap();
        crate::time::resolve_local(zone, local)
    }

    struct Case {
        name: &'static str,
        zone: Tz,
        due_at: &'static str,
        fire_at: &'static str,
        after_due: AfterDue,
        now: DateTime<Utc>,
        expected: State,
    }

    fn case(
        name: &'static str,
        zone: Tz,
        due_at: &'static str,
        fire_at: &'static str,
        now: DateTime<Utc>,
        expected: State,
    ) -> Case {
        Case { name, zone, due_at, fire_at, after_due: AfterDue::Keep, now, expected }
    }

    fn check(cases: &[Case]) {
        for case in cases {
            let timeline = Timeline::new(&due(case.due_at), date(case.fire_at), case.zone);
            assert_eq!(
                timeline.open_state(case.after_due, case.now),
                case.expected,
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn an_all_day_event_moves_through_every_state() {
        check(&[
            case(
                "before the fire day it is scheduled",
                Berlin,
                "2026-12-14",
                "2026-11-14",
                at(Berlin, "2026-11-13T23:59"),
                State::Scheduled,
            ),
            case(
                "at the start of the fire day it is preparing",
                Berlin,
                "2026-12-14",
                "2026-11-14",
                at(Berlin, "2026-11-14T00:00"),
                State::Preparing,
            ),
            case(
                "the last minute before the due day is preparing",
                Berlin,
                "2026-12-14",
                "2026-11-14",
                at(Berlin, "2026-12-13T23:59"),
                State::Preparing,
            ),
            case(
                "the whole due day is today",
                Berlin,
                "2026-12-14",
                "2026-11-14",
                at(Berlin, "2026-12-14T23:59"),
                State::Today,
            ),
            case(
                "the next day it is overdue",
                Berlin,
                "2026-12-14",
                "2026-11-14",
                at(Berlin, "2026-12-15T00:00"),
                State::Overdue,
            ),
        ]);
    }

    #[test]
    fn a_timed_event_is_overdue_from_its_due_moment() {
        check(&[
            case(
                "the morning of the due day is today",
                New_York,
                "2026-12-14T15:00",
                "2026-12-01",
                at(New_York, "2026-12-14T09:00"),
                State::Today,
            ),
            case(
                "a minute before the due moment is today",
                New_York,
                "2026-12-14T15:00",
                "2026-12-01",
                at(New_York, "2026-12-14T14:59"),
                State::Today,
            ),
            case(
                "the due moment itself is overdue",
                New_York,
                "2026-12-14T15:00",
                "2026-12-01",
                at(New_York, "2026-12-14T15:00"),
                State::Overdue,
            ),
        ]);
    }

    #[test]
    fn an_event_that_expires_closes_at_its_due_moment() {
        let timeline = Timeline::new(&due("2026-12-14"), date("2026-12-01"), Berlin);
        assert_eq!(
            timeline.open_state(AfterDue::Expire, at(Berlin, "2026-12-14T23:59")),
            State::Today
        );
        assert_eq!(
            timeline.open_state(AfterDue::Expire, at(Berlin, "2026-12-15T00:00")),
            State::Expired
        );
    }

    #[test]
    fn a_fixed_instant_is_due_at_that_instant_whatever_the_zone() {
        check(&[
            case(
                "Tokyo's 15:00 is 07:00 in Berlin: today there",
                Berlin,
                "2026-12-14T15:00+09:00",
                "2026-12-01",
                utc("2026-12-14T05:59:00Z"),
                State::Today,
            ),
            case(
                "and overdue from 07:00 Berlin time",
                Berlin,
                "2026-12-14T15:00+09:00",
                "2026-12-01",
                utc("2026-12-14T06:00:00Z"),
                State::Overdue,
            ),
            case(
                "a late instant falls on the next day in Tokyo",
                Tokyo,
                "2026-12-14T23:30+03:00",
                "2026-12-01",
                utc("2026-12-14T14:59:00Z"),
                State::Preparing,
            ),
            case(
                "and is today there from Tokyo's midnight",
                Tokyo,
                "2026-12-14T23:30+03:00",
                "2026-12-01",
                utc("2026-12-14T15:00:00Z"),
                State::Today,
            ),
        ]);
    }

    #[test]
    fn floating_events_follow_the_user_to_a_new_zone() {
        // At 12:00 UTC on the 14th, Moscow is at 15:00 and Tokyo at 21:00.
        let now = utc("2026-12-14T12:30:00Z");
        check(&[
            case(
                "a 15:00 reminder is past in Moscow",
                Moscow,
                "2026-12-14T15:00",
                "2026-12-01",
                now,
                State::Overdue,
            ),
            case(
                "and past in Tokyo too",
                Tokyo,
                "2026-12-14T15:00",
                "2026-12-01",
                now,
                State::Overdue,
            ),
            case(
                "an 18:00 one is still today in Moscow",
                Moscow,
                "2026-12-14T18:00",
                "2026-12-01",
                now,
                State::Today,
            ),
            case("but past in Tokyo", Tokyo, "2026-12-14T18:00", "2026-12-01", now, State::Overdue),
            case(
                "an all-day event on the 15th is preparing in Moscow",
                Moscow,
                "2026-12-15",
                "2026-12-01",
                now,
                State::Preparing,
            ),
            case(
                "and already today in Tokyo",
                Tokyo,
                "2026-12-15",
                "2026-12-01",
                utc("2026-12-14T15:30:00Z"),
                State::Today,
            ),
        ]);
    }

    #[test]
    fn states_across_the_new_york_dst_changes() {
        check(&[
            // Spring forward: 02:30 on 2025-03-09 does not exist; it reads as 03:30 EDT (07:30 UTC).
            case(
                "02:30 in the gap is not yet due at 07:29 UTC",
                New_York,
                "2025-03-09T02:30",
                "2025-03-01",
                utc("2025-03-09T07:29:00Z"),
                State::Today,
            ),
            case(
                "02:30 in the gap is due at 03:30 EDT",
                New_York,
                "2025-03-09T02:30",
                "2025-03-01",
                utc("2025-03-09T07:30:00Z"),
                State::Overdue,
            ),
            case(
                "the spring-forward day starts at EST midnight",
                New_York,
                "2025-03-09",
                "2025-03-01",
                utc("2025-03-09T05:00:00Z"),
                State::Today,
            ),
            case(
                "and its 23-hour day ends at EDT midnight",
                New_York,
                "2025-03-09",
                "2025-03-01",
                utc("2025-03-10T03:59:00Z"),
                State::Today,
            ),
            case(
                "after which it is overdue",
                New_York,
                "2025-03-09",
                "2025-03-01",
                utc("2025-03-10T04:00:00Z"),
                State::Overdue,
            ),
            // Fall back: 01:30 on 2025-11-02 happens twice; the first (EDT, 05:30 UTC) counts.
            case(
                "01:30 is today before its first occurrence",
                New_York,
                "2025-11-02T01:30",
                "2025-11-01",
                utc("2025-11-02T05:29:00Z"),
                State::Today,
            ),
            case(
                "01:30 is due at its first occurrence",
                New_York,
                "2025-11-02T01:30",
                "2025-11-01",
                utc("2025-11-02T05:30:00Z"),
                State::Overdue,
            ),
            case(
                "the 25-hour day is still today at 23:59 EST",
                New_York,
                "2025-11-02",
                "2025-11-01",
                utc("2025-11-03T04:59:00Z"),
                State::Today,
            ),
            case(
                "and overdue at midnight EST",
                New_York,
                "2025-11-02",
                "2025-11-01",
                utc("2025-11-03T05:00:00Z"),
                State::Overdue,
            ),
        ]);
    }

    #[test]
    fn states_across_the_berlin_dst_changes() {
        check(&[
            case(
                "02:30 in Berlin's gap reads as 03:30 CEST",
                Berlin,
                "2025-03-30T02:30",
                "2025-03-01",
                utc("2025-03-30T01:29:00Z"),
                State::Today,
            ),
            case(
                "and is due then",
                Berlin,
                "2025-03-30T02:30",
                "2025-03-01",
                utc("2025-03-30T01:30:00Z"),
                State::Overdue,
            ),
            case(
                "02:30 on the fall-back night is its first (CEST) occurrence",
                Berlin,
                "2025-10-26T02:30",
                "2025-10-01",
                utc("2025-10-26T00:30:00Z"),
                State::Overdue,
            ),
            case(
                "a minute before that it is today",
                Berlin,
                "2025-10-26T02:30",
                "2025-10-01",
                utc("2025-10-26T00:29:00Z"),
                State::Today,
            ),
            case(
                "a fire day on the spring-forward day starts at CET midnight",
                Berlin,
                "2025-04-10",
                "2025-03-30",
                utc("2025-03-29T23:00:00Z"),
                State::Preparing,
            ),
        ]);
    }

    #[test]
    fn the_next_change_is_the_nearest_boundary_ahead() {
        let timeline = Timeline::new(&due("2026-12-14T15:00"), date("2026-12-01"), Berlin);
        assert_eq!(
            timeline.next_change_after(at(Berlin, "2026-11-20T10:00")),
            Some(at(Berlin, "2026-12-01T00:00"))
        );
        assert_eq!(
            timeline.next_change_after(at(Berlin, "2026-12-01T00:00")),
            Some(at(Berlin, "2026-12-14T00:00"))
        );
        assert_eq!(
            timeline.next_change_after(at(Berlin, "2026-12-14T09:00")),
            Some(at(Berlin, "2026-12-14T15:00"))
        );
        assert_eq!(timeline.next_change_after(at(Berlin, "2026-12-14T15:00")), None);
    }

    #[test]
    fn the_state_filter_takes_active_states_only() {
        let mut violations = Violations::default();
        assert_eq!(
            State::parse_active_filter("state", "today", &mut violations),
            Some(State::Today)
        );
        assert_eq!(State::parse_active_filter("state", "done", &mut violations), None);
        assert_eq!(State::parse_active_filter("state", "soon", &mut violations), None);
        assert_eq!(violations.len(), 2);
        assert!(violations.to_string().starts_with("state 'done' is not an active state"));
    }
}
