//! Owns the checkpoint ladder of DESIGN §6: the moments at which an event
//! needs the person's attention, as wall-clock times in their zone, moved out
//! of their quiet hours. Remember quiets an event until the next of these.

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use chrono_tz::Tz;

use super::fields::AfterDue;
use super::time::{DueAt, add_days, local_time, next_day, resolve_local};

/// A person's quiet hours; they may cross midnight. Equal start and end
/// means none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuietHours {
    pub start: NaiveTime,
    pub end: NaiveTime,
}

impl QuietHours {
    pub fn none_at_all(&self) -> bool {
        self.start == self.end
    }

    /// The morning hour: when quiet hours end, or 09:00 without them.
    pub fn morning(&self) -> NaiveTime {
        if self.none_at_all() {
            NaiveTime::from_hms_opt(9, 0, 0).unwrap_or(NaiveTime::MIN)
        } else {
            self.end
        }
    }

    pub fn contains(&self, time: NaiveTime) -> bool {
        if self.none_at_all() {
            false
        } else if self.start < self.end {
            self.start <= time && time < self.end
        } else {
            time >= self.start || time < self.end
        }
    }

    /// `instant`, or the end of the quiet hours it falls in.
    pub fn push_out(&self, zone: Tz, instant: DateTime<Utc>) -> DateTime<Utc> {
        let local = local_time(zone, instant);
        if !self.contains(local.time()) {
            return instant;
        }
        let end_day = if local.time() < self.end { local.date() } else { next_day(local.date()) };
        resolve_local(zone, end_day.and_time(self.end)).max(instant)
    }
}

/// Everything the ladder of one event depends on.
#[derive(Clone, Copy, Debug)]
pub struct Ladder {
    pub due: DueAt,
    pub preparing_date: NaiveDate,
    pub after_due: AfterDue,
    pub zone: Tz,
    pub quiet: QuietHours,
}

impl Ladder {
    /// The person's morning of `day` (when their quiet hours end).
    pub fn at_morning(&self, day: NaiveDate) -> DateTime<Utc> {
        self.quiet.push_out(self.zone, resolve_local(self.zone, day.and_time(self.quiet.morning())))
    }

    /// The checkpoints up to and including the first overdue week, in order:
    /// the morning of F, D−7, D−3, D−1 and D (each only after the previous one
    /// and not before F), one hour before a timed due moment and the due
    /// moment itself, and while overdue the mornings of D+1, D+3 and D+7.
    /// (An all-day event's due day starts at the morning of D, its rung.)
    fn first_checkpoints(&self) -> Vec<DateTime<Utc>> {
        let due_day = self.due.day_in(self.zone);
        let mut days: Vec<NaiveDate> = Vec::with_capacity(5);
        for day in [
            self.preparing_date,
            add_days(due_day, -7),
            add_days(due_day, -3),
            add_days(due_day, -1),
            due_day,
        ] {
            if day >= self.preparing_date && days.last().is_none_or(|previous| day > *previous) {
                days.push(day);
            }
        }
        let mut checkpoints: Vec<DateTime<Utc>> =
            days.into_iter().map(|day| self.at_morning(day)).collect();
        let due_moment = self.due.moment_in(self.zone);
        if self.due.has_time_of_day() {
            checkpoints
                .push(self.quiet.push_out(self.zone, due_moment - chrono::Duration::hours(1)));
            checkpoints.push(self.quiet.push_out(self.zone, due_moment));
        }
        if self.after_due == AfterDue::Keep {
            checkpoints.extend([1, 3, 7].map(|offset| self.at_morning(add_days(due_day, offset))));
        }
        checkpoints.sort();
        checkpoints.dedup();
        checkpoints
    }

    /// The one prompt reminder of an event that arrives (or is rescheduled)
    /// at `now` inside its reminding window, after every checkpoint before
    /// its due moment has passed: without it, nothing would remind before
    /// the deadline. It comes now, or at the end of the quiet hours `now`
    /// falls in. `None` when a regular checkpoint still comes before the due
    /// moment, when the window has not opened, or when the event is due.
    pub fn catch_up(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let due_moment = self.due.moment_in(self.zone);
        if now >= due_moment {
            return None;
        }
        let checkpoints = self.first_checkpoints();
        let opened = checkpoints.first().is_some_and(|first| *first <= now);
        let one_still_comes =
            checkpoints.iter().any(|checkpoint| now < *checkpoint && *checkpoint < due_moment);
        (opened && !one_still_comes).then(|| self.quiet.push_out(self.zone, now))
    }

    /// The first checkpoint strictly after `now`, if any is left.
    pub fn next_after(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if let Some(next) =
            self.first_checkpoints().into_iter().find(|checkpoint| *checkpoint > now)
        {
            return Some(next);
        }
        if self.after_due == AfterDue::Expire {
            return None;
        }
        // Past D+7, an overdue event comes back every 7 days: D+14, D+21, …
        let week_start = add_days(self.due.day_in(self.zone), 7);
        let days_past = (local_time(self.zone, now).date() - week_start).num_days().max(0);
        let first_week = (days_past / 7).max(1);
        (first_week..first_week + 3)
            .map(|week| self.at_morning(add_days(week_start, week * 7)))
            .find(|checkpoint| *checkpoint > now)
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDateTime;
    use chrono_tz::America::New_York;
    use chrono_tz::Europe::Berlin;

    use super::*;
    use crate::time::Due;
    use crate::violations::Violations;

    fn clock(text: &str) -> NaiveTime {
        NaiveTime::parse_from_str(text, "%H:%M").unwrap()
    }

    fn at(zone: Tz, text: &str) -> DateTime<Utc> {
        resolve_local(zone, NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").unwrap())
    }

    fn ladder(
        zone: Tz,
        due_at: &str,
        fire_at: &str,
        after_due: AfterDue,
        quiet: (&str, &str),
    ) -> Ladder {
        let mut violations = Violations::default();
        Ladder {
            due: Due::parse("due_at", due_at, &mut violations).unwrap().at,
            preparing_date: NaiveDate::parse_from_str(fire_at, "%Y-%m-%d").unwrap(),
            after_due,
            zone,
            quiet: QuietHours { start: clock(quiet.0), end: clock(quiet.1) },
        }
    }

    /// Walks the ladder from `from`, returning the local times of the first
    /// `count` checkpoints.
    fn walk(ladder: &Ladder, from: DateTime<Utc>, count: usize) -> Vec<String> {
        let mut now = from;
        let mut seen = Vec::new();
        while seen.len() < count {
            let Some(next) = ladder.next_after(now) else { break };
            seen.push(local_time(ladder.zone, next).format("%Y-%m-%dT%H:%M").to_string());
            now = next;
        }
        seen
    }

    #[test]
    fn quiet_hours_may_cross_midnight() {
        let night = QuietHours { start: clock("22:00"), end: clock("08:00") };
        assert!(
            night.contains(clock("23:00"))
                && night.contains(clock("02:00"))
                && night.contains(clock("07:59"))
        );
        assert!(!night.contains(clock("08:00")) && !night.contains(clock("21:59")));
        let afternoon = QuietHours { start: clock("13:00"), end: clock("15:00") };
        assert!(afternoon.contains(clock("14:00")) && !afternoon.contains(clock("15:00")));
        let none = QuietHours { start: clock("00:00"), end: clock("00:00") };
        assert!(!none.contains(clock("03:00")));
        assert_eq!(none.morning(), clock("09:00"));
    }

    #[test]
    fn the_ladder_of_an_all_day_event() {
        let ladder = ladder(Berlin, "2026-12-14", "2026-11-14", AfterDue::Keep, ("22:00", "08:00"));
        assert_eq!(
            walk(&ladder, at(Berlin, "2026-11-01T00:00"), 10),
            [
                "2026-11-14T08:00",
                "2026-12-07T08:00",
                "2026-12-11T08:00",
                "2026-12-13T08:00",
                "2026-12-14T08:00",
                "2026-12-15T08:00",
                "2026-12-17T08:00",
                "2026-12-21T08:00",
                "2026-12-28T08:00",
                "2027-01-04T08:00",
            ]
        );
    }

    #[test]
    fn rungs_before_the_fire_day_are_skipped() {
        let ladder =
            ladder(Berlin, "2026-12-14", "2026-12-12", AfterDue::Expire, ("22:00", "08:00"));
        assert_eq!(
            walk(&ladder, at(Berlin, "2026-12-01T00:00"), 10),
            ["2026-12-12T08:00", "2026-12-13T08:00", "2026-12-14T08:00"]
        );
    }

    #[test]
    fn a_timed_event_also_gets_an_hour_before_and_its_due_moment() {
        let evening =
            ladder(Berlin, "2026-12-14T18:00", "2026-12-14", AfterDue::Expire, ("22:00", "08:00"));
        assert_eq!(
            walk(&evening, at(Berlin, "2026-12-01T00:00"), 10),
            ["2026-12-14T08:00", "2026-12-14T17:00", "2026-12-14T18:00"]
        );
        let early =
            ladder(Berlin, "2026-12-14T08:30", "2026-12-14", AfterDue::Expire, ("22:00", "08:00"));
        assert_eq!(
            walk(&early, at(Berlin, "2026-12-01T00:00"), 10),
            ["2026-12-14T08:00", "2026-12-14T08:30"],
            "the hour before falls in quiet hours and moves to their end"
        );
        let night =
            ladder(Berlin, "2026-12-14T23:30", "2026-12-14", AfterDue::Keep, ("22:00", "08:00"));
        assert_eq!(
            walk(&night, at(Berlin, "2026-12-01T00:00"), 3),
            ["2026-12-14T08:00", "2026-12-15T08:00", "2026-12-17T08:00"],
            "a due moment in quiet hours reminds at their end, with the next morning's rung"
        );
    }

    #[test]
    fn an_event_that_arrives_after_its_last_rung_catches_up_at_once() {
        let afternoon =
            ladder(Berlin, "2026-12-14T14:50", "2026-12-10", AfterDue::Keep, ("22:00", "08:00"));
        let arrived = at(Berlin, "2026-12-14T14:32");
        assert_eq!(afternoon.catch_up(arrived), Some(arrived), "now, not tomorrow morning");
        assert_eq!(afternoon.catch_up(at(Berlin, "2026-12-14T13:10")), None, "13:50 still comes");
        assert_eq!(afternoon.catch_up(at(Berlin, "2026-12-14T14:50")), None, "already due");
        assert_eq!(afternoon.catch_up(at(Berlin, "2026-12-09T14:32")), None, "window not open");
        let all_day =
            ladder(Berlin, "2026-12-14", "2026-12-10", AfterDue::Expire, ("22:00", "08:00"));
        let late = at(Berlin, "2026-12-14T14:00");
        assert_eq!(all_day.catch_up(late), Some(late), "due today, its morning has passed");
        assert_eq!(all_day.catch_up(at(Berlin, "2026-12-13T14:00")), None, "the due day's rung");
        let quiet =
            ladder(Berlin, "2026-12-15T12:00", "2026-12-10", AfterDue::Keep, ("22:00", "08:00"));
        assert_eq!(
            quiet.catch_up(at(Berlin, "2026-12-14T23:00")),
            None,
            "the morning of the due day still comes"
        );
        let quiet_night =
            ladder(Berlin, "2026-12-14", "2026-12-10", AfterDue::Keep, ("22:00", "08:00"));
        assert_eq!(
            quiet_night.catch_up(at(Berlin, "2026-12-14T23:00")),
            Some(at(Berlin, "2026-12-15T08:00")),
            "in quiet hours it waits for their end"
        );
    }

    #[test]
    fn without_quiet_hours_the_morning_is_nine() {
        let ladder =
            ladder(Berlin, "2026-12-14", "2026-12-14", AfterDue::Expire, ("00:00", "00:00"));
        assert_eq!(walk(&ladder, at(Berlin, "2026-12-01T00:00"), 10), ["2026-12-14T09:00"]);
    }

    #[test]
    fn checkpoints_keep_their_wall_clock_time_across_dst() {
        let berlin =
            ladder(Berlin, "2025-04-02", "2025-03-26", AfterDue::Expire, ("22:00", "08:00"));
        assert_eq!(
            walk(&berlin, at(Berlin, "2025-03-01T00:00"), 10),
            ["2025-03-26T08:00", "2025-03-30T08:00", "2025-04-01T08:00", "2025-04-02T08:00"]
        );
        let new_york =
            ladder(New_York, "2025-11-04", "2025-10-30", AfterDue::Expire, ("23:00", "07:00"));
        assert_eq!(
            walk(&new_york, at(New_York, "2025-10-01T00:00"), 10),
            ["2025-10-30T07:00", "2025-11-01T07:00", "2025-11-03T07:00", "2025-11-04T07:00"]
        );
    }

    #[test]
    fn an_overdue_event_far_in_the_past_comes_back_weekly() {
        let ladder = ladder(Berlin, "2026-01-05", "2026-01-01", AfterDue::Keep, ("22:00", "08:00"));
        assert_eq!(
            walk(&ladder, at(Berlin, "2026-06-03T12:00"), 2),
            ["2026-06-08T08:00", "2026-06-15T08:00"]
        );
    }
}
