//! Owns the JSON shapes of an event that both gateways serve: the client
//! view (what a source reads back and what webhooks carry) and the user view
//! (the inbox and the agent), built from core's `hado.v1.Event` with every
//! computed field already filled in by core.

use serde::Serialize;

use crate::v1;

/// An event as a source sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClientEvent {
    pub id: i64,
    pub user: String,
    #[serde(rename = "ref")]
    pub source_ref: String,
    pub topic: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
    pub due_at: String,
    pub fire_at: String,
    pub after_due: String,
    pub done_label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deep_link: Option<String>,
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet_until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// An event as its user (or their agent) sees it: the client view plus who
/// owns it, whether they may edit it, and how it closed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UserEvent {
    #[serde(flatten)]
    pub event: ClientEvent,
    pub source: String,
    pub editable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_as: Option<String>,
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
            after_due: event.after_due.clone(),
            done_label: event.done_label.clone(),
            deep_link: non_empty(&event.deep_link),
            state: event.state.clone(),
            quiet_until: event.quiet_until.clone(),
            closed_at: event.closed_at.clone(),
            created_at: event.created_at.clone(),
            updated_at: event.updated_at.clone(),
        }
    }
}

impl From<&v1::Event> for UserEvent {
    fn from(event: &v1::Event) -> Self {
        Self { event: ClientEvent::from(event), source: event.source.clone(), editable: event.editable, closed_as: event.closed_as.clone() }
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
            after_due: "keep".into(),
            done_label: "Done".into(),
            state: "done".into(),
            closed_at: Some("2026-12-01T10:00:00Z".into()),
            closed_as: Some("Done".into()),
            editable: true,
            ..v1::Event::default()
        };
        let json = serde_json::to_value(UserEvent::from(&event)).unwrap();
        assert_eq!(json["ref"], "manual:01J");
        assert_eq!(json["editable"], true);
        assert_eq!(json["closed_as"], "Done");
        assert!(json.get("subtitle").is_none(), "empty optional fields are left out");
        let client = serde_json::to_value(ClientEvent::from(&event)).unwrap();
        assert!(client.get("source").is_none() && client.get("editable").is_none());
    }
}
