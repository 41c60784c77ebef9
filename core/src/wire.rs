//! Owns the translation of core's records into `hado.v1` messages, with every
//! computed field filled in so that no client works one out: for the gRPC
//! edge and for the webhook payloads the outbox sends alike.

use chrono::{DateTime, SecondsFormat, Utc};

use hado_proto::v1;

use crate::domain::event::{RawFields, RememberFor};
use crate::domain::profile::format_clock_time;
use crate::domain::state::State;
use crate::domain::time::format_date;
use crate::domain::violations::Violations;
use crate::error::CoreError;
use crate::storage::channels::{ChannelKind, ChannelRecord};
use crate::storage::deliveries::DeliveryRecord;
use crate::storage::{EventRecord, UserRecord};

pub(crate) fn timestamp(instant: DateTime<Utc>) -> String {
    instant.to_rfc3339_opts(SecondsFormat::Secs, true)
}

pub(crate) fn event(record: &EventRecord) -> v1::Event {
    let spec = &record.spec;
    let done_label = spec
        .done_label
        .as_ref()
        .map(|label| label.as_str().to_owned())
        .unwrap_or_else(|| record.locale.default_done_label().to_owned());
    let manual = record.source == crate::domain::fields::SourceName::MANUAL;
    let closed_as = match record.lifecycle.state {
        State::Done => Some(done_label.clone()),
        State::Expired => Some(record.locale.expired_label().to_owned()),
        State::Withdrawn => Some(record.locale.withdrawn_label(manual).to_owned()),
        _ => None,
    };
    let due_moment = spec.due.at.moment_in(record.zone);
    let (due_date, due_time, due_offset) = spec.due.written_parts();
    v1::Event {
        id: record.id,
        source: record.source.clone(),
        user: record.login.clone(),
        r#ref: record.source_ref.clone(),
        topic: record.topic.clone(),
        title: spec.title.as_str().to_owned(),
        subtitle: spec.subtitle.clone().unwrap_or_default(),
        due_at: spec.due.text.clone(),
        fire_at: format_date(spec.fire_date()),
        after_due: spec.after_due.as_str().to_owned(),
        done_label,
        deep_link: spec.deep_link.as_ref().map(|link| link.as_str().to_owned()).unwrap_or_default(),
        state: record.lifecycle.state.as_str().to_owned(),
        quiet_until: record.lifecycle.quiet_until.map(timestamp),
        closed_at: record.lifecycle.closed_at.map(timestamp),
        closed_as,
        editable: manual,
        reopenable: record.lifecycle.state.reopenable(manual),
        due_instant: due_moment
            .with_timezone(&record.zone)
            .to_rfc3339_opts(SecondsFormat::Secs, true),
        all_day: !spec.due.at.has_time_of_day(),
        created_at: timestamp(record.created_at),
        updated_at: timestamp(record.updated_at),
        needs_attention: record.lifecycle.state.is_active() && record.reminders.needs_attention(),
        deliveries: Vec::new(),
        due_date,
        due_time,
        due_offset,
        next_reminder_at: None,
    }
}

/// The list of `records`, each dropped as soon as it is converted, so a
/// long list is not held twice.
pub(crate) fn events(records: Vec<EventRecord>) -> v1::EventList {
    v1::EventList { events: records.into_iter().map(|record| event(&record)).collect(), next: None }
}

pub(crate) fn profile(user: &UserRecord, now: DateTime<Utc>, attention: u32) -> v1::Profile {
    v1::Profile {
        login: user.login.as_str().to_owned(),
        tz: user.zone.name().to_owned(),
        quiet_start: format_clock_time(user.quiet.start),
        quiet_end: format_clock_time(user.quiet.end),
        locale: user.locale.as_str().to_owned(),
        local_time: now.with_timezone(&user.zone).format("%Y-%m-%dT%H:%M (%A)").to_string(),
        attention,
    }
}

pub(crate) fn channel(record: &ChannelRecord) -> v1::Channel {
    v1::Channel {
        id: record.id,
        kind: record.kind.as_str().to_owned(),
        target: record.target.clone(),
        enabled: record.enabled,
        last_error: record.last_error.clone(),
        last_error_at: record.last_error_at.map(timestamp),
        created_at: timestamp(record.created_at),
    }
}

pub(crate) fn delivery(record: &DeliveryRecord) -> v1::Delivery {
    v1::Delivery {
        id: record.id,
        channel: match (&record.channel_kind, record.channel_id) {
            (Some(kind), Some(id)) => format!("{kind} {id}"),
            _ => String::new(),
        },
        kind: record.kind.as_str().to_owned(),
        due_at: timestamp(record.due_at),
        status: record.status.as_str().to_owned(),
        attempts: record.attempts,
        note: record.note.clone(),
        updated_at: timestamp(record.updated_at),
        channel_kind: record.channel_kind.map(|kind| kind.as_str().to_owned()).unwrap_or_default(),
        channel_host: match (record.channel_kind, &record.channel_target) {
            (Some(ChannelKind::Webhook), Some(url)) => url::Url::parse(url)
                .ok()
                .and_then(|url| url.host_str().map(str::to_owned))
                .unwrap_or_default(),
            _ => String::new(),
        },
    }
}

/// An app the person signed in with, as Settings lists it.
pub(crate) fn connected_app(app: &crate::storage::oauth::ConnectedApp) -> v1::ConnectedApp {
    let first_redirect = app.redirect_uris.lines().next().unwrap_or("");
    v1::ConnectedApp {
        id: app.id,
        name: app.name.clone(),
        redirect_host: crate::domain::oauth::host_of(first_redirect),
        connected_at: timestamp(app.connected_at),
        last_used_at: timestamp(app.last_used_at),
    }
}

/// The wire's event fields as the domain's raw input.
pub(crate) fn raw_fields(fields: v1::EventFields) -> RawFields {
    RawFields {
        title: fields.title,
        due_at: fields.due_at,
        subtitle: fields.subtitle,
        fire_at: fields.fire_at,
        after_due: fields.after_due,
        done_label: fields.done_label,
        deep_link: fields.deep_link,
    }
}

/// How long Remember quiets an event, from the wire's `until` (none: until
/// the next checkpoint).
pub(crate) fn remember_for(until: Option<&str>) -> Result<RememberFor, CoreError> {
    let mut violations = Violations::default();
    let remember = RememberFor::parse("until", until.unwrap_or_default(), &mut violations);
    violations.into_result(remember).map_err(CoreError::Invalid)
}
