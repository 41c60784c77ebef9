//! Owns the JSON shapes that Hado's edges serve: the client view of an
//! event (what a source reads back and what webhooks carry), the user view
//! (the inbox and the agent) and the profile, built from core's messages
//! with every computed field already filled in by core. Each view also
//! describes itself as a JSON schema, for MCP output schemas and the
//! OpenAPI document. `due` says how a due moment reads to its person.

pub mod due;

use serde::Serialize;

use hado_proto::convert::{rfc3339, rfc3339_at};
use hado_proto::v1;

/// An event as a source sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ClientEvent {
    /// The event's id.
    pub id: i64,
    /// The login of the person the event belongs to.
    pub user: String,
    /// The source's own key for the event.
    #[serde(rename = "ref")]
    pub source_ref: String,
    /// The source's topic within that key ("" when unused).
    pub topic: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
    /// When it is due, as given: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM` (local time) or with an offset (a fixed instant).
    pub due_at: String,
    /// The day preparing starts (`YYYY-MM-DD`).
    pub fire_at: String,
    /// What happens after the due day: `keep` (stays overdue) or `expire` (closes as expired).
    pub after_due: String,
    /// The label of the Done button.
    pub done_label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deep_link: Option<String>,
    /// One of scheduled, preparing, today, overdue, done, expired, withdrawn.
    pub state: String,
    /// Set after Remember: reminders stay quiet until this instant (UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet_until: Option<String>,
    /// When the event closed (UTC), for done, expired and withdrawn events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// An event as its user (or their agent) sees it: the client view plus who
/// owns it, whether they may edit it, and how it closed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct UserEvent {
    #[serde(flatten)]
    pub event: ClientEvent,
    /// The source that owns the event; `manual` for the user's own.
    pub source: String,
    /// True when the user (and their agent) may change or delete it: only `manual` events.
    pub editable: bool,
    /// In the archive, how it ended: the done label, "Expired", "Deleted" (by its person) or "Withdrawn" (by its source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_as: Option<String>,
    /// A reminder reached the event and is unanswered (neither Remember nor Done yet).
    pub needs_attention: bool,
    /// How its reminders went, newest first: only when one event is asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deliveries: Vec<Delivery>,
    /// When the user is next reminded, UTC, as things stand (Remember's quiet
    /// taken into account): only when one open event is asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_reminder_at: Option<String>,
}

/// One reminder to one channel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Delivery {
    /// Such as "webhook 3"; empty when the reminder was quieted.
    pub channel: String,
    /// checkpoint, repeat, or test (a test message the person asked for).
    pub kind: String,
    /// The checkpoint moment, UTC.
    pub due_at: String,
    /// pending, sent, failed or suppressed.
    pub status: String,
    pub attempts: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl From<&v1::Delivery> for Delivery {
    fn from(line: &v1::Delivery) -> Self {
        Self {
            channel: line.channel.clone(),
            kind: line.kind().word().to_owned(),
            due_at: rfc3339(line.due_at.as_ref()),
            status: line.status().word().to_owned(),
            attempts: line.attempts,
            note: line.note.clone(),
        }
    }
}

/// A person's settings and current local time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Profile {
    pub login: String,
    /// IANA time zone name, such as Europe/Berlin.
    pub tz: String,
    /// Start of quiet hours, `HH:MM` local time: no reminders from then.
    pub quiet_start: String,
    /// End of quiet hours, `HH:MM` local time.
    pub quiet_end: String,
    /// Interface language: `en` or `ru`.
    pub locale: String,
    /// The user's current local date and time with the weekday, such as `2026-12-01T09:30 (Tuesday)`, for resolving "tomorrow".
    pub local_time: String,
    /// How many open events need attention: reminded and not yet answered, or due and not remembered. Counted up to 99.
    pub attention: u32,
    /// More than `attention` (99) events need attention.
    pub attention_more: bool,
    /// True while tz is still this Hado's default, which the user never chose: ask them for their zone (or offer the one their device is in) before relying on local times.
    pub tz_is_default: bool,
}

impl From<&v1::Profile> for Profile {
    fn from(profile: &v1::Profile) -> Self {
        Self {
            login: profile.login.clone(),
            tz: profile.tz.clone(),
            quiet_start: profile.quiet_start.clone(),
            quiet_end: profile.quiet_end.clone(),
            locale: profile.locale.clone(),
            local_time: profile.local_time.clone(),
            attention: profile.attention,
            attention_more: profile.attention_more,
            tz_is_default: profile.tz_is_default,
        }
    }
}

/// What deleting an event did: it is withdrawn, and still readable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Deleted {
    pub id: i64,
    /// Always `withdrawn`.
    pub state: String,
}

impl From<&v1::DeleteEventReply> for Deleted {
    fn from(reply: &v1::DeleteEventReply) -> Self {
        Self { id: reply.id, state: reply.state().word().to_owned() }
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

impl From<&v1::Event> for ClientEvent {
    fn from(event: &v1::Event) -> Self {
        Self {
            id: event.id,
            user: event.user.clone(),
            source_ref: event.r#ref.clone(),
            topic: event.topic.clone(),
            title: event.title.clone(),
            subtitle: non_empty(&event.subtitle),
            due_at: event.due_at.clone(),
            fire_at: event.fire_at.clone(),
            after_due: event.after_due().word().to_owned(),
            done_label: event.done_label.clone(),
            deep_link: non_empty(&event.deep_link),
            state: event.state().word().to_owned(),
            quiet_until: event.quiet_until.as_ref().map(rfc3339_at),
            closed_at: event.closed_at.as_ref().map(rfc3339_at),
            created_at: rfc3339(event.created_at.as_ref()),
            updated_at: rfc3339(event.updated_at.as_ref()),
        }
    }
}

impl From<&v1::Event> for UserEvent {
    fn from(event: &v1::Event) -> Self {
        Self {
            event: ClientEvent::from(event),
            source: event.source.clone(),
            editable: event.editable,
            closed_as: event.closed_as.clone(),
            needs_attention: event.needs_attention,
            deliveries: event.deliveries.iter().map(Delivery::from).collect(),
            next_reminder_at: event.next_reminder_at.as_ref().map(rfc3339_at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_view_adds_ownership_and_closing_to_the_client_view() {
        let event = v1::Event {
            id: 7,
            source: "manual".into(),
            user: "anna".into(),
            r#ref: "manual:01J".into(),
            title: "Dentist".into(),
            due_at: "2026-12-14T15:00".into(),
            fire_at: "2026-11-14".into(),
            after_due: v1::AfterDue::Keep.into(),
            done_label: "Done".into(),
            state: v1::EventState::Done.into(),
            closed_at: Some(hado_proto::convert::timestamp(
                chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z").unwrap().to_utc(),
            )),
            closed_as: Some("Done".into()),
            editable: true,
            ..v1::Event::default()
        };
        let json = serde_json::to_value(UserEvent::from(&event)).unwrap();
        assert_eq!(json["ref"], "manual:01J");
        assert_eq!(json["editable"], true);
        assert_eq!(json["closed_as"], "Done");
        assert_eq!((&json["state"], &json["after_due"]), (&"done".into(), &"keep".into()));
        assert_eq!(json["closed_at"], "2026-12-01T10:00:00Z", "instants are RFC 3339, UTC");
        assert!(json.get("subtitle").is_none(), "empty optional fields are left out");
        let client = serde_json::to_value(ClientEvent::from(&event)).unwrap();
        assert!(client.get("source").is_none() && client.get("editable").is_none());
    }
}
