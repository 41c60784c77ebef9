//! Owns how an event's due moment reads to its person, in their zone and
//! language: "in 3 days, Mon 14 Dec 09:30", "2 days overdue", "due Mon 14
//! Dec" once closed. The web inbox's cards and the agent's in-chat view
//! both say it this way, from the parts core sends.

use chrono::{NaiveDate, NaiveTime};
use chrono_tz::Tz;

use hado_proto::convert;
use hado_proto::v1::{self, EventState};
use hado_words::Words;

/// The due day and time of an event in its person's zone, from the parts
/// core sends: as written for a date or a local time, `due_instant` in the
/// zone for a fixed instant.
pub fn due_parts(event: &v1::Event, zone: Tz) -> Option<(NaiveDate, Option<NaiveTime>)> {
    if !event.due_offset.is_empty() {
        let instant = convert::instant(event.due_instant.as_ref()?)?.with_timezone(&zone);
        return Some((instant.date_naive(), Some(instant.time())));
    }
    let day = event.due_date.parse().ok()?;
    if event.due_time.is_empty() {
        return Some((day, None));
    }
    let time = NaiveTime::parse_from_str(&event.due_time, "%H:%M")
        .or_else(|_| NaiveTime::parse_from_str(&event.due_time, "%H:%M:%S"))
        .ok()?;
    Some((day, Some(time)))
}

/// A fixed instant's own wall time, "10:00 (+09:00)", when the person's
/// clock reads it differently; `None` when it reads the same, or for a date
/// or a local time.
fn own_wall_time(event: &v1::Event, zone: Tz) -> Option<String> {
    if event.due_offset.is_empty() || event.due_time.is_empty() {
        return None;
    }
    let (date, time) = due_parts(event, zone)?;
    let written = time.map(|time| time.format("%H:%M").to_string());
    let same = date.format("%Y-%m-%d").to_string() == event.due_date
        && written.as_deref() == event.due_time.get(..5);
    let offset = if event.due_offset == "Z" { "UTC" } else { event.due_offset.as_str() };
    (!same).then(|| format!("{} ({offset})", event.due_time.get(..5).unwrap_or(&event.due_time)))
}

/// The event's due moment in `words`, for a person in `zone` whose day is
/// `today`: relative while it is open ("tomorrow 09:30", "2 days
/// overdue"), the day once it is closed ("due Mon 14 Dec"). A moment fixed
/// elsewhere reads in its own clock and in the person's: "in 3 days, Sat 5
/// Dec 10:00 (+09:00) · 02:00 your time".
pub fn due_in_words(event: &v1::Event, zone: Tz, today: NaiveDate, words: &Words) -> String {
    let state = event.state();
    let closed = state.is_closed() || state == EventState::Withdrawn;
    let overdue = state == EventState::Overdue;
    match (due_parts(event, zone), own_wall_time(event, zone)) {
        (Some((date, Some(local))), Some(own)) if !closed => format!(
            "{} {own} · {} {}",
            words.due_in_words(today, date, None, overdue),
            local.format("%H:%M"),
            words.your_time
        ),
        (Some((date, time)), _) if closed => words.due_on(today, date, time),
        (Some((date, time)), _) => words.due_in_words(today, date, time, overdue),
        (None, _) => event.due_at.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(due_at: &str, state: EventState) -> v1::Event {
        let (date, time) = due_at.split_once('T').unwrap_or((due_at, ""));
        v1::Event {
            due_at: due_at.into(),
            due_date: date.into(),
            due_time: time.into(),
            state: state.into(),
            ..v1::Event::default()
        }
    }

    #[test]
    fn a_due_moment_reads_relative_while_open_and_as_a_day_once_closed() {
        let today = NaiveDate::from_ymd_opt(2026, 12, 11).unwrap();
        let zone = chrono_tz::UTC;
        let cases = [
            (event("2026-12-14T09:30", EventState::Preparing), "in 3 days, Mon 14 Dec 09:30"),
            (event("2026-12-14", EventState::Done), "due Mon 14 Dec"),
            (event("not a day", EventState::Today), "not a day"),
        ];
        for (event, expected) in cases {
            assert_eq!(due_in_words(&event, zone, today, &hado_words::EN), expected);
        }
        let preparing = event("2026-12-14T09:30", EventState::Preparing);
        let russian = due_in_words(&preparing, zone, today, &hado_words::RU);
        assert!(russian.contains("14 дек"), "{russian}");
    }
}
