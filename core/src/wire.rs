//! Owns the translation of core's records into `hado.v1` messages, with every
//! computed field filled in so that no client works one out: for the gRPC
//! edge and for the webhook payloads the outbox sends alike.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use hado_proto::v1;
use prost_types::Timestamp;

use hado_domain::channel::{ChannelKind, ChannelRecord};
use hado_domain::delivery::DeliveryRecord;
use hado_domain::delivery::{DeliveryKind, DeliveryStatus};
use hado_domain::event::{Outcome, RawFields, RememberFor};
use hado_domain::event_record::EventRecord;
use hado_domain::fields::AfterDue;
use hado_domain::oauth::Problem;
use hado_domain::profile::format_clock_time;
use hado_domain::reminders;
use hado_domain::state::State;
use hado_domain::time::format_date;
use hado_domain::user::UserRecord;
use hado_domain::violations::Violations;
use hado_engine::InboxView;
use hado_engine::error::CoreError;
use hado_engine::links::LinkAction;

/// An instant as the wire carries it.
pub(crate) fn timestamp(instant: DateTime<Utc>) -> Timestamp {
    hado_proto::convert::timestamp(instant)
}

/// An instant as the webhook payloads write it: the JSON views' form.
pub(crate) fn rfc3339(instant: DateTime<Utc>) -> String {
    hado_proto::convert::rfc3339_at(&timestamp(instant))
}

/// Each of core's fixed sets of cases as the contract's enum: a match, so
/// that a case added on either side does not compile until it is mapped.
pub(crate) fn state(state: State) -> v1::EventState {
    match state {
        State::Scheduled => v1::EventState::Scheduled,
        State::Preparing => v1::EventState::Preparing,
        State::Today => v1::EventState::Today,
        State::Overdue => v1::EventState::Overdue,
        State::Done => v1::EventState::Done,
        State::Expired => v1::EventState::Expired,
        State::Withdrawn => v1::EventState::Withdrawn,
    }
}

fn after_due(after_due: AfterDue) -> v1::AfterDue {
    match after_due {
        AfterDue::Keep => v1::AfterDue::Keep,
        AfterDue::Expire => v1::AfterDue::Expire,
    }
}

pub(crate) fn outcome(outcome: Outcome) -> v1::Outcome {
    match outcome {
        Outcome::Created => v1::Outcome::Created,
        Outcome::Updated => v1::Outcome::Updated,
        Outcome::Rescheduled => v1::Outcome::Rescheduled,
        Outcome::Unchanged => v1::Outcome::Unchanged,
        Outcome::Revived => v1::Outcome::Revived,
    }
}

pub(crate) fn link_action(action: LinkAction) -> v1::LinkAction {
    match action {
        LinkAction::Done => v1::LinkAction::Done,
        LinkAction::Remember => v1::LinkAction::Remember,
    }
}

pub(crate) fn authorization_problem(problem: Problem) -> v1::AuthorizationProblem {
    match problem {
        Problem::Client => v1::AuthorizationProblem::Client,
        Problem::RedirectUri => v1::AuthorizationProblem::RedirectUri,
        Problem::ResponseType => v1::AuthorizationProblem::ResponseType,
        Problem::CodeChallenge => v1::AuthorizationProblem::CodeChallenge,
        Problem::CodeChallengeMethod => v1::AuthorizationProblem::CodeChallengeMethod,
        Problem::Resource => v1::AuthorizationProblem::Resource,
        Problem::Scope => v1::AuthorizationProblem::Scope,
        Problem::State => v1::AuthorizationProblem::State,
    }
}

fn channel_kind(kind: ChannelKind) -> v1::ChannelKind {
    match kind {
        ChannelKind::Webhook => v1::ChannelKind::Webhook,
        ChannelKind::Telegram => v1::ChannelKind::Telegram,
        ChannelKind::Email => v1::ChannelKind::Email,
        ChannelKind::Push => v1::ChannelKind::Push,
    }
}

fn delivery_kind(kind: DeliveryKind) -> v1::DeliveryKind {
    match kind {
        DeliveryKind::Checkpoint => v1::DeliveryKind::Checkpoint,
        DeliveryKind::Repeat => v1::DeliveryKind::Repeat,
        DeliveryKind::Test => v1::DeliveryKind::Test,
        DeliveryKind::Confirmation => v1::DeliveryKind::Confirmation,
    }
}

fn delivery_status(status: DeliveryStatus) -> v1::DeliveryStatus {
    match status {
        DeliveryStatus::Pending => v1::DeliveryStatus::Pending,
        DeliveryStatus::Sent => v1::DeliveryStatus::Sent,
        DeliveryStatus::Failed => v1::DeliveryStatus::Failed,
        DeliveryStatus::Suppressed => v1::DeliveryStatus::Suppressed,
    }
}

pub(crate) fn event(record: &EventRecord) -> v1::Event {
    let spec = &record.spec;
    let done_label = spec
        .done_label
        .as_ref()
        .map(|label| label.as_str().to_owned())
        .unwrap_or_else(|| record.locale.default_done_label().to_owned());
    let manual = record.source == hado_domain::fields::SourceName::MANUAL;
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
        fire_at: format_date(spec.preparing_date()),
        after_due: after_due(spec.after_due).into(),
        done_label,
        deep_link: spec.deep_link.as_ref().map(|link| link.as_str().to_owned()).unwrap_or_default(),
        state: state(record.lifecycle.state).into(),
        quiet_until: record.lifecycle.quiet_until.map(timestamp),
        closed_at: record.lifecycle.closed_at.map(timestamp),
        closed_as,
        editable: manual,
        reopenable: record.lifecycle.state.reopenable(manual),
        due_instant: Some(timestamp(due_moment)),
        all_day: !spec.due.at.has_time_of_day(),
        created_at: Some(timestamp(record.created_at)),
        updated_at: Some(timestamp(record.updated_at)),
        needs_attention: reminders::needs_attention(&record.lifecycle, &record.reminders),
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

/// The inbox view: the person's profile with the view's own attention
/// count, and its groups and archive.
pub(crate) fn inbox_view(
    user: &UserRecord,
    now: DateTime<Utc>,
    default_zone: Tz,
    view: InboxView,
) -> v1::InboxView {
    let events = |records: Vec<EventRecord>| records.iter().map(event).collect();
    v1::InboxView {
        profile: Some(profile(user, now, view.attention, default_zone)),
        groups: view
            .groups
            .into_iter()
            .map(|group| v1::InboxGroup {
                state: state(group.state).into(),
                count: group.count,
                more: group.more,
                events: events(group.events),
                next: group.next,
            })
            .collect(),
        archive: events(view.archive),
    }
}

pub(crate) fn profile(
    user: &UserRecord,
    now: DateTime<Utc>,
    attention: hado_engine::Attention,
    default_zone: Tz,
) -> v1::Profile {
    v1::Profile {
        login: user.login.as_str().to_owned(),
        tz: user.zone.name().to_owned(),
        quiet_start: format_clock_time(user.quiet.start),
        quiet_end: format_clock_time(user.quiet.end),
        locale: user.locale.as_str().to_owned(),
        local_time: now.with_timezone(&user.zone).format("%Y-%m-%dT%H:%M (%A)").to_string(),
        attention: attention.count,
        attention_more: attention.more,
        tz_is_default: user.zone_is_default(default_zone),
    }
}

pub(crate) fn channel(record: &ChannelRecord) -> v1::Channel {
    v1::Channel {
        id: record.id,
        kind: channel_kind(record.kind).into(),
        target: record.target.clone(),
        enabled: record.enabled,
        last_error: record.last_error.clone(),
        last_error_at: record.last_error_at.map(timestamp),
        created_at: Some(timestamp(record.created_at)),
        confirmed_at: record.confirmed_at.map(timestamp),
        name: record.name.clone().unwrap_or_default(),
    }
}

pub(crate) fn delivery(record: &DeliveryRecord) -> v1::Delivery {
    v1::Delivery {
        id: record.id,
        channel: match (&record.channel_kind, record.channel_id) {
            (Some(kind), Some(id)) => format!("{kind} {id}"),
            _ => String::new(),
        },
        kind: delivery_kind(record.kind).into(),
        due_at: Some(timestamp(record.due_at)),
        status: delivery_status(record.status).into(),
        attempts: record.attempts,
        note: record.note.clone(),
        updated_at: Some(timestamp(record.updated_at)),
        channel_kind: record.channel_kind.map_or(v1::ChannelKind::Unspecified, channel_kind).into(),
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
pub(crate) fn connected_app(app: &hado_domain::oauth::ConnectedApp) -> v1::ConnectedApp {
    let first_redirect = app.redirect_uris.lines().next().unwrap_or("");
    v1::ConnectedApp {
        id: app.id,
        name: app.name.clone(),
        redirect_host: hado_domain::oauth::host_of(first_redirect),
        connected_at: Some(timestamp(app.connected_at)),
        last_used_at: Some(timestamp(app.last_used_at)),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each fixed set's cases, in the domain's one list, have the same word
    /// in the column and on the wire, and the wire has no case core lacks.
    #[test]
    fn every_channel_kind_and_delivery_kind_and_status_is_one_word_in_the_column_and_on_the_wire() {
        for each in ChannelKind::ALL {
            assert_eq!(channel_kind(*each).word(), each.as_str(), "{each:?}");
        }
        for each in DeliveryKind::ALL {
            assert_eq!(delivery_kind(*each).word(), each.as_str(), "{each:?}");
        }
        for each in DeliveryStatus::ALL {
            assert_eq!(delivery_status(*each).word(), each.as_str(), "{each:?}");
        }
        assert_eq!(
            [ChannelKind::ALL.len(), DeliveryKind::ALL.len(), DeliveryStatus::ALL.len()],
            [
                v1::ChannelKind::ALL.len(),
                v1::DeliveryKind::ALL.len(),
                v1::DeliveryStatus::ALL.len()
            ],
            "every case of the wire is core's"
        );
    }

    #[test]
    fn every_state_is_one_word_in_the_column_and_on_the_wire() {
        for each in State::ALL {
            assert_eq!(state(each).word(), each.as_str(), "{each:?}");
        }
        assert_eq!(
            State::ALL.len(),
            v1::EventState::ALL.len(),
            "every state of the wire is core's"
        );
    }
}
