//! Owns Hado's time rules (DESIGN §3): the three forms of a due moment, the
//! day preparation starts, and how a wall-clock time in a person's zone
//! becomes an instant, across DST gaps and folds.

use chrono::{
    DateTime, Datelike, Days, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime,
    Offset, TimeZone, Timelike, Utc,
};
use chrono_tz::Tz;

use super::violations::{Reason, Violations};
use crate::text::quoted;

/// Days between the default start of preparation and the due day.
pub const DEFAULT_LEAD_DAYS: u64 = 30;

/// An event's due moment in one of its three forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DueAt {
    /// All day, in the user's current zone: due at the end of that day.
    Date(NaiveDate),
    /// A wall-clock time in the user's current zone; it floats with the user.
    Local(NaiveDateTime),
    /// A fixed instant, for events tied to a place.
    Fixed(DateTime<FixedOffset>),
}

/// A due moment together with the text it was given as, which replies echo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Due {
    pub at: DueAt,
    pub text: String,
}

/// The parts a due moment is stored as, so that it can be read back into a
/// [`DueAt`] without parsing its text again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredDue {
    /// `YYYY-MM-DD`: the day as written.
    pub date: String,
    /// `HH:MM:SS`, absent for an all-day event.
    pub time: Option<String>,
    /// Minutes east of UTC, present only for a fixed instant.
    pub offset_minutes: Option<i32>,
}

const FORMS: &str =
    "YYYY-MM-DD, YYYY-MM-DDTHH:MM, or YYYY-MM-DDTHH:MM with an offset such as +09:00 or Z";

impl DueAt {
    /// The day as written, before any zone is applied.
    pub fn written_day(&self) -> NaiveDate {
        match self {
            Self::Date(date) => *date,
            Self::Local(local) => local.date(),
            Self::Fixed(instant) => instant.date_naive(),
        }
    }

    pub fn has_time_of_day(&self) -> bool {
        !matches!(self, Self::Date(_))
    }

    /// The due day in `zone`: the written day for the floating forms, the
    /// instant's local day for a fixed instant.
    pub fn day_in(&self, zone: Tz) -> NaiveDate {
        match self {
            Self::Date(_) | Self::Local(_) => self.written_day(),
            Self::Fixed(instant) => instant.with_timezone(&zone).date_naive(),
        }
    }

    /// The due moment as an instant, with the floating forms read in `zone`.
    /// An all-day event is due at the end of its day.
    pub fn moment_in(&self, zone: Tz) -> DateTime<Utc> {
        match self {
            Self::Date(date) => start_of_day(zone, next_day(*date)),
            Self::Local(local) => resolve_local(zone, *local),
            Self::Fixed(instant) => instant.with_timezone(&Utc),
        }
    }

    pub fn to_stored(&self) -> StoredDue {
        let (date, time, offset_minutes) = match self {
            Self::Date(date) => (*date, None, None),
            Self::Local(local) => (local.date(), Some(local.time()), None),
            Self::Fixed(instant) => {
                let local = instant.naive_local();
                (local.date(), Some(local.time()), Some(instant.offset().local_minus_utc() / 60))
            }
        };
        StoredDue {
            date: date.format("%Y-%m-%d").to_string(),
            time: time.map(|time| time.format("%H:%M:%S").to_string()),
            offset_minutes,
        }
    }

    /// Reads back what [`DueAt::to_stored`] wrote. Storage holds only values
    /// that were validated on write, so a failure here is corruption.
    pub fn from_stored(stored: &StoredDue) -> Option<Self> {
        let date = NaiveDate::parse_from_str(&stored.date, "%Y-%m-%d").ok()?;
        let Some(time) = &stored.time else { return Some(Self::Date(date)) };
        let local = date.and_time(NaiveTime::parse_from_str(time, "%H:%M:%S").ok()?);
        match stored.offset_minutes {
            None => Some(Self::Local(local)),
            Some(minutes) => {
                let offset = FixedOffset::east_opt(minutes * 60)?;
                offset.from_local_datetime(&local).single().map(Self::Fixed)
            }
        }
    }
}

impl Due {
    /// The due moment's parts as written: the day (`YYYY-MM-DD`), the time
    /// of day (`HH:MM`, or `HH:MM:SS` when it has seconds; empty for a date)
    /// and the offset (`Z` or `+09:00`; empty unless the moment is a fixed
    /// instant).
    pub fn written_parts(&self) -> (String, String, String) {
        fn clock(time: NaiveTime) -> String {
            let format = if time.second() == 0 { "%H:%M" } else { "%H:%M:%S" };
            time.format(format).to_string()
        }
        let day = format_date(self.at.written_day());
        match &self.at {
            DueAt::Date(_) => (day, String::new(), String::new()),
            DueAt::Local(local) => (day, clock(local.time()), String::new()),
            DueAt::Fixed(instant) => {
                let offset = if self.text.ends_with(['Z', 'z']) {
                    "Z".to_owned()
                } else {
                    instant.offset().to_string()
                };
                (day, clock(instant.naive_local().time()), offset)
            }
        }
    }

    /// Parses `due_at` in one of its three forms; the text is echoed as given
    /// (trimmed).
    pub fn parse(field: &str, raw: &str, violations: &mut Violations) -> Option<Self> {
        let text = raw.trim();
        if text.is_empty() {
            violations.refuse(field, Reason::Required, format!("{field} is required: {FORMS}"));
            return None;
        }
        let at = match parse_due_text(text) {
            Ok(at) => at,
            Err(problem) => {
                violations.refuse(
                    field,
                    Reason::NotADueMoment,
                    format!("{field} {} {problem}", quoted(text)),
                );
                return None;
            }
        };
        if !year_in_range(at.written_day()) {
            violations.refuse(
                field,
                Reason::YearOutOfRange,
                format!("{field} {} is outside the years 2000 to 2199", quoted(text)),
            );
            return None;
        }
        Some(Self { at, text: text.to_owned() })
    }
}

fn parse_due_text(text: &str) -> Result<DueAt, String> {
    let shape_error = || format!("is not a due moment: use {FORMS}");
    if text.len() < 10 || !text.is_char_boundary(10) {
        return Err(shape_error());
    }
    let date =
        parse_date_text(&text[..10]).map_err(|problem| problem.unwrap_or_else(shape_error))?;
    let rest = &text[10..];
    if rest.is_empty() {
        return Ok(DueAt::Date(date));
    }
    let rest = rest.strip_prefix('T').ok_or_else(shape_error)?;
    let (clock, offset) = split_offset(rest);
    let time = parse_time_of_day(clock).ok_or_else(shape_error)?;
    if time.nanosecond() >= 1_000_000_000 {
        // chrono keeps second 60 as a leap second; RFC 5545, JSON Schema's
        // date-time and most programs that read what Hado repeats refuse it.
        return Err(format!(
            "names second 60, a leap second, which calendars and other programs refuse: write {}:59 or the next minute",
            &clock[..5]
        ));
    }
    let local = date.and_time(time);
    match offset {
        None => Ok(DueAt::Local(local)),
        Some(offset) => {
            let offset = parse_offset(offset)
                .ok_or_else(|| "has an offset that is not Z or ±HH:MM".to_owned())?;
            let instant = offset.from_local_datetime(&local).single().ok_or_else(shape_error)?;
            Ok(DueAt::Fixed(instant))
        }
    }
}

/// Splits `15:00+09:00` into the clock and the offset part.
fn split_offset(rest: &str) -> (&str, Option<&str>) {
    if let Some(clock) = rest.strip_suffix('Z').or_else(|| rest.strip_suffix('z')) {
        return (clock, Some("Z"));
    }
    match rest.find(['+', '-']) {
        Some(index) => (&rest[..index], Some(&rest[index..])),
        None => (rest, None),
    }
}

/// `HH:MM` or `HH:MM:SS`.
fn parse_time_of_day(clock: &str) -> Option<NaiveTime> {
    let digits_at =
        |indexes: &[usize]| indexes.iter().all(|&index| clock.as_bytes()[index].is_ascii_digit());
    match clock.len() {
        5 if digits_at(&[0, 1, 3, 4]) => NaiveTime::parse_from_str(clock, "%H:%M").ok(),
        8 if digits_at(&[0, 1, 3, 4, 6, 7]) => NaiveTime::parse_from_str(clock, "%H:%M:%S").ok(),
        _ => None,
    }
}

fn parse_offset(text: &str) -> Option<FixedOffset> {
    if text == "Z" {
        return FixedOffset::east_opt(0);
    }
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 6
        && bytes[3] == b':'
        && [1, 2, 4, 5].iter().all(|&index| bytes[index].is_ascii_digit());
    if !shaped {
        return None;
    }
    let hours: i32 = text[1..3].parse().ok()?;
    let minutes: i32 = text[4..6].parse().ok()?;
    if hours > 18 || minutes > 59 {
        return None;
    }
    let seconds = (hours * 60 + minutes) * 60;
    FixedOffset::east_opt(if bytes[0] == b'-' { -seconds } else { seconds })
}

/// Parses exactly `YYYY-MM-DD`. `Err(None)` is a shape error; `Err(Some(_))`
/// names a well-shaped date that does not exist.
fn parse_date_text(text: &str) -> Result<NaiveDate, Option<String>> {
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && [0, 1, 2, 3, 5, 6, 8, 9].iter().all(|&index| bytes[index].is_ascii_digit());
    if !shaped {
        return Err(None);
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|_| Some("is not a real calendar date".to_owned()))
}

fn year_in_range(date: NaiveDate) -> bool {
    (2000..=2199).contains(&date.year())
}

/// Parses a plain date field (`fire_at`): `YYYY-MM-DD`, a real date between
/// 2000 and 2199.
pub fn parse_date(field: &str, raw: &str, violations: &mut Violations) -> Option<NaiveDate> {
    let text = raw.trim();
    match parse_date_text(text) {
        Ok(date) if year_in_range(date) => Some(date),
        Ok(_) => {
            violations.refuse(
                field,
                Reason::YearOutOfRange,
                format!("{field} {} is outside the years 2000 to 2199", quoted(text)),
            );
            None
        }
        Err(Some(problem)) => {
            violations.refuse(
                field,
                Reason::NotADate,
                format!("{field} {} {problem}", quoted(text)),
            );
            None
        }
        Err(None) => {
            violations.refuse(
                field,
                Reason::NotADate,
                format!("{field} {} must be a date as YYYY-MM-DD", quoted(text)),
            );
            None
        }
    }
}

pub fn format_date(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

pub fn next_day(date: NaiveDate) -> NaiveDate {
    date.checked_add_days(Days::new(1)).unwrap_or(date)
}

pub fn add_days(date: NaiveDate, days: i64) -> NaiveDate {
    let shifted = if days >= 0 {
        date.checked_add_days(Days::new(days.unsigned_abs()))
    } else {
        date.checked_sub_days(Days::new(days.unsigned_abs()))
    };
    shifted.unwrap_or(date)
}

/// The instant a wall-clock time in `zone` names, as RFC 5545 reads it: a
/// time in a DST gap takes the offset from before the gap (02:30 on New
/// York's spring-forward night is 03:30 EDT), and a time that occurs twice
/// means its first occurrence.
pub fn resolve_local(zone: Tz, local: NaiveDateTime) -> DateTime<Utc> {
    match zone.from_local_datetime(&local) {
        LocalResult::Single(instant) => instant.with_timezone(&Utc),
        LocalResult::Ambiguous(first, _) => first.with_timezone(&Utc),
        LocalResult::None => {
            // The offset in force a day earlier is the one before the gap:
            // zones do not change their offset twice within a day.
            let before = local - chrono::Duration::days(1);
            let offset = zone.offset_from_utc_datetime(&before).fix();
            (local - chrono::Duration::seconds(i64::from(offset.local_minus_utc()))).and_utc()
        }
    }
}

/// The first instant of `date` in `zone`.
pub fn start_of_day(zone: Tz, date: NaiveDate) -> DateTime<Utc> {
    resolve_local(zone, date.and_time(NaiveTime::MIN))
}

/// The wall-clock date and time of `instant` in `zone`.
pub fn local_time(zone: Tz, instant: DateTime<Utc>) -> NaiveDateTime {
    instant.with_timezone(&zone).naive_local()
}

#[cfg(test)]
mod tests {
    use chrono_tz::America::New_York;
    use chrono_tz::Asia::Tokyo;
    use chrono_tz::Europe::{Berlin, Moscow};

    use super::*;

    fn due(text: &str) -> Result<Due, String> {
        let mut violations = Violations::default();
        let parsed = Due::parse("due_at", text, &mut violations);
        violations.into_result(parsed).map_err(|violations| violations.to_string())
    }

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn local(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").unwrap()
    }

    #[test]
    fn the_three_forms_parse_and_keep_their_text() {
        let date = due("2026-12-14").unwrap();
        assert_eq!(date.at, DueAt::Date(NaiveDate::from_ymd_opt(2026, 12, 14).unwrap()));
        let local_form = due(" 2026-12-14T15:00 ").unwrap();
        assert_eq!(local_form.at, DueAt::Local(local("2026-12-14T15:00")));
        assert_eq!(local_form.text, "2026-12-14T15:00");
        let fixed = due("2026-12-14T15:00+09:00").unwrap();
        assert_eq!(fixed.at.moment_in(Berlin), utc("2026-12-14T06:00:00Z"));
        assert_eq!(fixed.text, "2026-12-14T15:00+09:00");
        assert_eq!(
            due("2026-12-14T06:00Z").unwrap().at.moment_in(Tokyo),
            utc("2026-12-14T06:00:00Z")
        );
        assert_eq!(
            due("2026-12-14T06:00:30-05:30").unwrap().at.moment_in(Tokyo),
            utc("2026-12-14T11:30:30Z")
        );
    }

    #[test]
    fn the_written_parts_are_what_the_text_says() {
        let parts = |text: &str| due(text).unwrap().written_parts();
        let owned = |day: &str, time: &str, offset: &str| {
            (day.to_owned(), time.to_owned(), offset.to_owned())
        };
        assert_eq!(parts("2026-12-14"), owned("2026-12-14", "", ""));
        assert_eq!(parts("2026-12-14T15:00"), owned("2026-12-14", "15:00", ""));
        assert_eq!(parts("2026-12-14T15:00+09:00"), owned("2026-12-14", "15:00", "+09:00"));
        assert_eq!(parts("2026-12-14T06:00Z"), owned("2026-12-14", "06:00", "Z"));
        assert_eq!(parts("2026-12-14T06:00:30-05:30"), owned("2026-12-14", "06:00:30", "-05:30"));
    }

    #[test]
    fn malformed_due_moments_are_refused_with_the_accepted_forms() {
        for bad in [
            "tomorrow",
            "14.12.2026",
            "2026-12-14 15:00",
            "2026-12-14T15",
            "2026-12-14T1500",
            "2026-12-14T15:00+9",
            "2026-1-14",
            "2026-12-14T15:00+25:00",
        ] {
            let error = due(bad).unwrap_err();
            assert!(error.starts_with("due_at '"), "{bad}: {error}");
        }
        assert_eq!(
            due("2026-02-30").unwrap_err(),
            "due_at '2026-02-30' is not a real calendar date"
        );
        assert_eq!(
            due("1999-12-31").unwrap_err(),
            "due_at '1999-12-31' is outside the years 2000 to 2199"
        );
        assert_eq!(
            due("2200-01-01T10:00").unwrap_err(),
            "due_at '2200-01-01T10:00' is outside the years 2000 to 2199"
        );
        assert!(due("").unwrap_err().starts_with("due_at is required"));
        assert!(due("2026-12-14T25:00").is_err());
    }

    #[test]
    fn a_leap_second_is_refused_with_what_to_write_instead() {
        for (bad, instead) in [
            ("2027-03-14T10:15:60Z", "10:15:59"),
            ("2027-03-14T23:59:60", "23:59:59"),
            ("2016-12-31T23:59:60+00:00", "23:59:59"),
            ("2027-03-14T10:15:60+09:00", "10:15:59"),
        ] {
            let error = due(bad).unwrap_err();
            assert_eq!(
                error,
                format!(
                    "due_at '{bad}' names second 60, a leap second, which calendars and other programs refuse: write {instead} or the next minute"
                )
            );
        }
        let mut violations = Violations::default();
        assert!(Due::parse("due_at", "2027-03-14T23:59:60Z", &mut violations).is_none());
        assert_eq!(violations.iter().next().unwrap().reason, Reason::NotADueMoment);
        assert!(due("2027-03-14T23:59:59Z").is_ok());
    }

    #[test]
    fn stored_parts_read_back_into_the_same_due_moment() {
        for text in [
            "2026-12-14",
            "2026-12-14T15:00",
            "2026-12-14T15:00:10+09:00",
            "2026-03-29T02:30-03:30",
            "2026-12-14T15:00Z",
        ] {
            let parsed = due(text).unwrap().at;
            assert_eq!(DueAt::from_stored(&parsed.to_stored()), Some(parsed), "{text}");
        }
    }

    #[test]
    fn an_all_day_event_is_due_at_the_end_of_its_day_in_the_current_zone() {
        let date = due("2026-12-14").unwrap().at;
        assert_eq!(date.moment_in(Moscow), utc("2026-12-14T21:00:00Z"));
        assert_eq!(date.moment_in(Tokyo), utc("2026-12-14T15:00:00Z"));
        assert_eq!(date.day_in(Tokyo), NaiveDate::from_ymd_opt(2026, 12, 14).unwrap());
    }

    #[test]
    fn a_floating_time_moves_with_the_user_but_a_fixed_instant_does_not() {
        let floating = due("2026-12-14T15:00").unwrap().at;
        assert_eq!(floating.moment_in(Moscow), utc("2026-12-14T12:00:00Z"));
        assert_eq!(floating.moment_in(Tokyo), utc("2026-12-14T06:00:00Z"));
        let fixed = due("2026-12-14T15:00+03:00").unwrap().at;
        assert_eq!(fixed.moment_in(Moscow), fixed.moment_in(Tokyo));
        // The fixed instant's day is the user's local day of that instant.
        let late = due("2026-12-14T23:30+03:00").unwrap().at;
        assert_eq!(late.day_in(Tokyo), NaiveDate::from_ymd_opt(2026, 12, 15).unwrap());
    }

    #[test]
    fn a_time_in_a_dst_gap_takes_the_offset_from_before_the_gap() {
        // New York springs forward at 02:00 on 2025-03-09: 02:30 EST = 03:30 EDT.
        assert_eq!(resolve_local(New_York, local("2025-03-09T02:30")), utc("2025-03-09T07:30:00Z"));
        assert_eq!(
            resolve_local(New_York, local("2025-03-09T02:30"))
                .with_timezone(&New_York)
                .naive_local(),
            local("2025-03-09T03:30")
        );
        // Berlin springs forward at 02:00 on 2025-03-30: 02:30 CET = 03:30 CEST.
        assert_eq!(resolve_local(Berlin, local("2025-03-30T02:30")), utc("2025-03-30T01:30:00Z"));
    }

    #[test]
    fn a_time_that_occurs_twice_means_its_first_occurrence() {
        // New York falls back at 02:00 on 2025-11-02: 01:30 happens in EDT first.
        assert_eq!(resolve_local(New_York, local("2025-11-02T01:30")), utc("2025-11-02T05:30:00Z"));
        // Berlin falls back at 03:00 on 2025-10-26: 02:30 happens in CEST first.
        assert_eq!(resolve_local(Berlin, local("2025-10-26T02:30")), utc("2025-10-26T00:30:00Z"));
    }

    #[test]
    fn days_start_at_local_midnight_across_dst() {
        assert_eq!(
            start_of_day(New_York, NaiveDate::from_ymd_opt(2025, 3, 9).unwrap()),
            utc("2025-03-09T05:00:00Z")
        );
        assert_eq!(
            start_of_day(New_York, NaiveDate::from_ymd_opt(2025, 3, 10).unwrap()),
            utc("2025-03-10T04:00:00Z")
        );
        assert_eq!(
            start_of_day(Berlin, NaiveDate::from_ymd_opt(2025, 10, 27).unwrap()),
            utc("2025-10-26T23:00:00Z")
        );
    }

    #[test]
    fn preparation_days_are_plain_dates() {
        let mut violations = Violations::default();
        assert!(parse_date("fire_at", "2026-12-01", &mut violations).is_some());
        assert!(parse_date("fire_at", "2026-12-01T10:00", &mut violations).is_none());
        assert!(parse_date("fire_at", "2026-13-01", &mut violations).is_none());
        assert_eq!(
            violations.to_string(),
            "fire_at '2026-12-01T10:00' must be a date as YYYY-MM-DD; fire_at '2026-13-01' is not a real calendar date"
        );
    }
}
