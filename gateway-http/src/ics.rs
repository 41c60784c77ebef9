//! Owns the calendar feed: `GET /ics/<token>.ics` serves a person's active
//! events as RFC 5545 — all-day events for dates, floating local times for
//! local due times, UTC for fixed instants — each with an alarm on its fire
//! day and a stable UID, and answers `If-None-Match` with 304 so that
//! calendar apps poll cheaply.

use axum::extract::{Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, NaiveDate, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use sha2::{Digest, Sha256};

use hado_proto::v1;

use crate::error::ApiError;
use crate::state::AppState;

/// The local time of the alarm on an event's fire day.
const ALARM_TIME: NaiveTime = match NaiveTime::from_hms_opt(9, 0, 0) {
    Some(time) => time,
    None => NaiveTime::MIN,
};

/// Escapes text for a property value (RFC 5545 §3.3.11). Core refuses
/// control characters in text, but the feed does not rely on it: a line
/// break of any kind becomes `\n`, and any other control character but
/// tab is dropped, so no value can start a property of its own.
fn text(value: &str) -> String {
    let escaped = value
        .replace('\\', "\\\\")
        .replace(';', "\\;")
        .replace(',', "\\,")
        .replace("\r\n", "\\n")
        .replace(['\r', '\n'], "\\n");
    escaped.chars().filter(|character| !character.is_control() || *character == '\t').collect()
}

/// Folds a content line at 75 octets, never inside a character (§3.1).
fn fold(line: &str, out: &mut String) {
    let mut width = 0;
    for character in line.chars() {
        let size = character.len_utf8();
        if width + size > 75 {
            out.push_str("\r\n ");
            width = 1;
        }
        out.push(character);
        width += size;
    }
    out.push_str("\r\n");
}

fn utc_stamp(instant: DateTime<Utc>) -> String {
    instant.format("%Y%m%dT%H%M%SZ").to_string()
}

fn instant(timestamp: Option<&prost_types::Timestamp>) -> Option<DateTime<Utc>> {
    hado_proto::convert::instant(timestamp?)
}

/// The DTSTART (and DTEND for a whole day) of an event's due moment, from
/// the parts core sends: an all-day date, a floating local time, or (with an
/// offset) a UTC instant.
fn due_lines(event: &v1::Event) -> Vec<String> {
    if !event.due_offset.is_empty() {
        return instant(event.due_instant.as_ref())
            .map(|instant| vec![format!("DTSTART:{}", utc_stamp(instant))])
            .unwrap_or_default();
    }
    let Ok(date) = NaiveDate::parse_from_str(&event.due_date, "%Y-%m-%d") else {
        return Vec::new();
    };
    if event.due_time.is_empty() {
        let next = date.succ_opt().unwrap_or(date);
        return vec![
            format!("DTSTART;VALUE=DATE:{}", date.format("%Y%m%d")),
            format!("DTEND;VALUE=DATE:{}", next.format("%Y%m%d")),
        ];
    }
    let time = NaiveTime::parse_from_str(&event.due_time, "%H:%M")
        .or_else(|_| NaiveTime::parse_from_str(&event.due_time, "%H:%M:%S"));
    time.map(|time| vec![format!("DTSTART:{}", date.and_time(time).format("%Y%m%dT%H%M%S"))])
        .unwrap_or_default()
}

/// Events a page of the feed reads from core: the feed is written a page
/// at a time, so the gateway holds the text and one page, never every
/// event as core sent it (nor does core hold more than a page).
const PAGE: u32 = 1000;

/// One person's calendar, written a page of events at a time.
struct Calendar {
    out: String,
    zone: Tz,
    host: String,
    /// The events written: a page read while an event moved may bring it
    /// again, and a calendar holds each once.
    written: std::collections::HashSet<i64>,
}

impl Calendar {
    fn new(profile: &v1::Profile, host: &str) -> Self {
        let mut out = String::new();
        for line in [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "PRODID:-//Hado//Deadline inbox//EN",
            "CALSCALE:GREGORIAN",
            "METHOD:PUBLISH",
        ] {
            fold(line, &mut out);
        }
        fold(&format!("X-WR-CALNAME:{}", text(&format!("Hado · {}", profile.login))), &mut out);
        Self {
            out,
            zone: profile.tz.parse().unwrap_or(chrono_tz::UTC),
            host: host.to_owned(),
            written: Default::default(),
        }
    }

    fn add(&mut self, events: &[v1::Event]) {
        let out = &mut self.out;
        for event in events.iter().filter(|event| self.written.insert(event.id)) {
            fold("BEGIN:VEVENT", out);
            fold(&format!("UID:hado-event-{}@{}", event.id, self.host), out);
            let stamp = instant(event.updated_at.as_ref()).unwrap_or_else(Utc::now);
            fold(&format!("DTSTAMP:{}", utc_stamp(stamp)), out);
            for line in due_lines(event) {
                fold(&line, out);
            }
            fold(&format!("SUMMARY:{}", text(&event.title)), out);
            let mut description = Vec::new();
            if !event.subtitle.is_empty() {
                description.push(event.subtitle.clone());
            }
            if event.source != "manual" {
                description.push(format!("from {}", event.source));
            }
            if !description.is_empty() {
                fold(&format!("DESCRIPTION:{}", text(&description.join("\n"))), out);
            }
            if !event.deep_link.is_empty() {
                fold(&format!("URL:{}", event.deep_link), out);
            }
            fold(&format!("CATEGORIES:{}", text(event.state().word())), out);
            if let Ok(fire) = NaiveDate::parse_from_str(&event.fire_at, "%Y-%m-%d") {
                let alarm = self
                    .zone
                    .from_local_datetime(&fire.and_time(ALARM_TIME))
                    .earliest()
                    .map(|local| local.with_timezone(&Utc));
                if let Some(alarm) = alarm {
                    for line in ["BEGIN:VALARM", "ACTION:DISPLAY"] {
                        fold(line, out);
                    }
                    fold(
                        &format!(
                            "DESCRIPTION:{}",
                            text(&format!("Start preparing: {}", event.title))
                        ),
                        out,
                    );
                    fold(&format!("TRIGGER;VALUE=DATE-TIME:{}", utc_stamp(alarm)), out);
                    fold("END:VALARM", out);
                }
            }
            fold("END:VEVENT", out);
        }
    }

    fn finish(mut self) -> String {
        fold("END:VCALENDAR", &mut self.out);
        self.out
    }
}

/// `GET /ics/<token>.ics`.
pub(crate) async fn feed(
    State(state): State<AppState>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    let not_found =
        || ApiError::new(StatusCode::NOT_FOUND, "no such calendar feed").into_response();
    let Some(token) = file.strip_suffix(".ics") else { return not_found() };
    let host = state
        .config
        .public_url
        .as_deref()
        .and_then(hado_runtime::settings::host_of_url)
        .unwrap_or_else(|| "hado".into());
    let (mut calendar, mut after): (Option<Calendar>, _) = (None, None);
    let body = loop {
        let request = v1::CalendarFeedRequest { token: token.to_owned(), limit: Some(PAGE), after };
        let reply = match state.links().calendar_feed(request).await {
            Ok(reply) => reply.into_inner(),
            Err(status) if status.code() == tonic::Code::Unauthenticated => return not_found(),
            Err(status) => return ApiError::from_core(&state.core, &status).into_response(),
        };
        calendar
            .get_or_insert_with(|| {
                Calendar::new(reply.profile.as_ref().unwrap_or(&v1::Profile::default()), &host)
            })
            .add(&reply.events);
        match reply.next {
            Some(next) => after = Some(next),
            None => break calendar.take().map(Calendar::finish).unwrap_or_default(),
        }
    };
    let etag = format!("\"{}\"", &hex::encode(Sha256::digest(body.as_bytes()))[..32]);
    let mut response = if headers
        .get(IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == etag))
    {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(CONTENT_TYPE, "text/calendar; charset=utf-8")], body).into_response()
    };
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(ETAG, value);
    }
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("private, max-age=300"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_fold_at_75_octets_between_characters() {
        let mut out = String::new();
        fold(&format!("SUMMARY:{}", "ё".repeat(60)), &mut out);
        for line in out.split("\r\n").filter(|line| !line.is_empty()) {
            assert!(line.len() <= 75, "{} octets", line.len());
        }
        assert_eq!(out.replace("\r\n ", "").trim_end(), format!("SUMMARY:{}", "ё".repeat(60)));
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(text("a, b; c\\d\ne"), "a\\, b\\; c\\\\d\\ne");
    }

    #[test]
    fn a_lone_carriage_return_cannot_start_a_property() {
        assert_eq!(
            text("Visa\rATTENDEE:mailto:x@example.com"),
            "Visa\\nATTENDEE:mailto:x@example.com"
        );
        assert_eq!(text("nul\0 and bell\u{7}\tend"), "nul and bell\tend");
    }
}
