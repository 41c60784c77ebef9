//! Owns what `show_inbox` answers: the person's open events in the inbox's
//! groups, most urgent first (Overdue, Today, Preparing, Scheduled, as
//! DESIGN §11 orders them), as the view's structured content and as text
//! that names every event for the model and for hosts without apps.
//!
//! `read_inbox` is the one place that asks core for it: one `GetInbox`
//! call, the same view of the inbox the web inbox is built from.

use chrono::{NaiveDate, Utc};
use chrono_tz::Tz;
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Serialize;

use hado_proto::convert;
use hado_proto::v1::{self, EventState};
use hado_views::UserEvent;
use hado_words::{EN, RU, Words};

use crate::core_link::Inbox;

/// The groups in the order the view and the text show them: what is late
/// first, then what is due today.
const GROUPS: [EventState; 4] =
    [EventState::Overdue, EventState::Today, EventState::Preparing, EventState::Scheduled];

/// The most events of a group the answer holds: all that a person reads in
/// a chat, and a bounded reply however large the inbox.
fn page_of(group: EventState) -> u32 {
    match group {
        EventState::Overdue | EventState::Today => 50,
        _ => 25,
    }
}

/// The inbox as core gives it.
#[derive(Debug)]
pub(crate) struct CoreInbox {
    profile: v1::Profile,
    groups: Vec<CoreGroup>,
}

#[derive(Debug)]
struct CoreGroup {
    state: EventState,
    events: Vec<v1::Event>,
    /// How many events the group holds, when core counted them.
    count: Option<u32>,
    /// More events follow the ones given.
    more: bool,
}

/// Asks core for the inbox in one call: the person, every group's count
/// and the nearest page of each group.
pub(crate) async fn read_inbox(
    mut inbox: Inbox,
) -> Result<tonic::Response<CoreInbox>, tonic::Status> {
    let pages = GROUPS
        .iter()
        .map(|group| v1::InboxPage {
            state: group.word().to_owned(),
            limit: Some(page_of(*group)),
            after: None,
        })
        .collect();
    let request = v1::GetInboxRequest { pages, ..Default::default() };
    let view = inbox.get_inbox(request).await?.into_inner();
    let profile = view
        .profile
        .ok_or_else(|| tonic::Status::internal("core's inbox view came without its person"))?;
    let groups = view
        .groups
        .into_iter()
        .map(|group| CoreGroup {
            state: group.state(),
            // Core counts a group up to a thousand; past that it says more.
            count: (!group.more).then_some(group.count),
            more: group.next.is_some(),
            events: group.events,
        })
        .collect();
    Ok(tonic::Response::new(CoreInbox { profile, groups }))
}

/// What `show_inbox` gives the view: its structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct InboxView {
    pub person: Person,
    /// The active groups, most urgent first: overdue, today, preparing, scheduled (empty ones too).
    pub groups: Vec<Group>,
}

/// Whose inbox it is, and how its moments read.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Person {
    pub login: String,
    /// The IANA zone the due moments read in.
    pub tz: String,
    /// The zone is still this Hado's default, which the user never chose.
    pub tz_is_default: bool,
    /// The user's own language in Hado: en or ru.
    pub locale: String,
    /// The user's current local date and time with the weekday.
    pub local_time: String,
}

/// One group of the inbox.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Group {
    /// overdue, today, preparing or scheduled.
    pub state: String,
    /// How many events the group holds, counted up to 1000; absent past that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// The group's nearest events, by due moment.
    pub events: Vec<InboxEvent>,
    /// More events follow the listed ones: list_events with this state gives them.
    pub more: bool,
}

/// One event as the view shows it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct InboxEvent {
    #[serde(flatten)]
    pub event: UserEvent,
    /// The due moment in the user's zone, in words, in each language the view speaks.
    pub when: Said,
    /// After Remember, until when reminders stay quiet, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet_until_words: Option<Said>,
}

/// Words in each language the view speaks; it shows the host's.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Said {
    pub en: String,
    pub ru: String,
}

impl Said {
    fn new(say: impl Fn(&Words) -> String) -> Self {
        Self { en: say(&EN), ru: say(&RU) }
    }
}

/// The person's zone and today, as core gave them.
struct Day {
    zone: Tz,
    today: NaiveDate,
}

impl Day {
    fn of(profile: &v1::Profile) -> Self {
        let zone = profile.tz.parse().unwrap_or(chrono_tz::UTC);
        let today = profile
            .local_time
            .get(..10)
            .and_then(|date| date.parse().ok())
            .unwrap_or_else(|| Utc::now().with_timezone(&zone).date_naive());
        Self { zone, today }
    }

    fn moment(&self, words: &Words, instant: &prost_types::Timestamp) -> Option<String> {
        let local = convert::instant(instant)?.with_timezone(&self.zone);
        Some(words.moment(self.today, local.date_naive(), local.time()))
    }
}

impl InboxView {
    fn new(inbox: &CoreInbox) -> Self {
        let day = Day::of(&inbox.profile);
        let profile = &inbox.profile;
        let event = |event: &v1::Event| InboxEvent {
            event: UserEvent::from(event),
            when: Said::new(|words| {
                hado_views::due::due_in_words(event, day.zone, day.today, words)
            }),
            quiet_until_words: event.quiet_until.as_ref().and_then(|until| {
                Some(Said { en: day.moment(&EN, until)?, ru: day.moment(&RU, until)? })
            }),
        };
        Self {
            person: Person {
                login: profile.login.clone(),
                tz: profile.tz.clone(),
                tz_is_default: profile.tz_is_default,
                locale: profile.locale.clone(),
                local_time: profile.local_time.clone(),
            },
            groups: inbox
                .groups
                .iter()
                .map(|group| Group {
                    state: group.state.word().to_owned(),
                    count: group.count,
                    events: group.events.iter().map(event).collect(),
                    more: group.more,
                })
                .collect(),
        }
    }
}

/// `show_inbox`'s result: the text the model reads (and a host without
/// apps shows), and the view's structured content.
pub(crate) fn answer(inbox: &CoreInbox) -> CallToolResult {
    let view = InboxView::new(inbox);
    let structured = serde_json::to_value(&view).unwrap_or_default();
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(text(inbox, &view))];
    result
}

/// Every listed event on a line of its own, by group: its id, its title
/// (quoted, as a source wrote it), its due moment as given and in words,
/// its state, and whether it needs the user.
fn text(inbox: &CoreInbox, view: &InboxView) -> String {
    let profile = &inbox.profile;
    let listed: usize = inbox.groups.iter().map(|group| group.events.len()).sum();
    let zone_note = if profile.tz_is_default { ", still this Hado's default" } else { "" };
    let mut text = format!(
        "The inbox of {} (time zone {}{zone_note}; now {}): {listed} open events listed, shown to the user with Done and Remember where the chat shows apps.\n",
        profile.login, profile.tz, profile.local_time
    );
    for (group, shown) in inbox.groups.iter().zip(&view.groups) {
        let name = group.state.word();
        let heading = match (group.count, group.more) {
            (Some(0), _) => {
                text.push_str(&format!("{name}: none.\n"));
                continue;
            }
            (Some(count), false) => format!("{name}, {count}:"),
            (Some(count), true) => format!(
                "{name}, {count}; the nearest {} (list_events state={name} for the rest):",
                group.events.len()
            ),
            (None, _) => format!(
                "{name}, the nearest {} and more (list_events state={name} for the rest):",
                group.events.len()
            ),
        };
        text.push_str(&heading);
        text.push('\n');
        for (event, said) in group.events.iter().zip(&shown.events) {
            let title = serde_json::to_string(&event.title).unwrap_or_default();
            let mut line = format!(
                "- id {}: {title}, due {} ({}), {}",
                event.id,
                event.due_at,
                said.when.en,
                event.state().word()
            );
            if event.needs_attention {
                line.push_str(", needs attention");
            }
            if let Some(until) = &said.quiet_until_words {
                line.push_str(&format!(", quiet until {}", until.en));
            }
            if event.source != "manual" {
                line.push_str(&format!(", from {}", event.source));
            }
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: i64, title: &str, due_at: &str, state: EventState) -> v1::Event {
        v1::Event {
            id,
            title: title.into(),
            due_at: due_at.into(),
            due_date: due_at.into(),
            state: state.into(),
            source: "docs".into(),
            done_label: "Done".into(),
            ..v1::Event::default()
        }
    }

    fn inbox() -> CoreInbox {
        let profile = v1::Profile {
            login: "anna".into(),
            tz: "UTC".into(),
            tz_is_default: true,
            locale: "en".into(),
            local_time: "2026-12-11T09:00 (Friday)".into(),
            ..v1::Profile::default()
        };
        let group = |state, events: Vec<v1::Event>, more: bool| CoreGroup {
            state,
            count: (!more).then_some(events.len() as u32),
            events,
            more,
        };
        CoreInbox {
            profile,
            groups: vec![
                group(
                    EventState::Overdue,
                    vec![event(3, "Pay \"rent\"\nnow", "2026-12-09", EventState::Overdue)],
                    false,
                ),
                group(EventState::Today, vec![], false),
                group(
                    EventState::Preparing,
                    vec![event(5, "<b>Visa</b>", "2026-12-20", EventState::Preparing)],
                    true,
                ),
                group(EventState::Scheduled, vec![], false),
            ],
        }
    }

    #[test]
    fn the_text_names_every_event_by_group_most_urgent_first() {
        let inbox = inbox();
        let text = text(&inbox, &InboxView::new(&inbox));
        let overdue = text.find("overdue, 1:").expect(&text);
        let preparing = text.find("preparing, the nearest 1 and more").expect(&text);
        assert!(overdue < preparing, "{text}");
        assert!(text.contains("today: none.") && text.contains("scheduled: none."), "{text}");
        assert!(
            text.contains(r#"- id 3: "Pay \"rent\"\nnow", due 2026-12-09 (2 days overdue), overdue, from docs"#),
            "a title is quoted, on its one line: {text}"
        );
        assert!(text.contains(r#"- id 5: "<b>Visa</b>", due 2026-12-20"#), "{text}");
        assert!(text.contains("still this Hado's default"), "{text}");
        assert_eq!(Day::of(&inbox.profile).today, "2026-12-11".parse::<NaiveDate>().unwrap());
    }

    #[test]
    fn the_view_holds_the_groups_in_order_with_words_in_both_languages() {
        let view = serde_json::to_value(InboxView::new(&inbox())).unwrap();
        let states: Vec<&str> = view["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["state"].as_str().unwrap())
            .collect();
        assert_eq!(states, ["overdue", "today", "preparing", "scheduled"]);
        let first = &view["groups"][0]["events"][0];
        assert_eq!(
            (first["id"].as_i64(), first["title"].as_str()),
            (Some(3), Some("Pay \"rent\"\nnow"))
        );
        assert_eq!(first["when"]["en"], "2 days overdue");
        assert!(first["when"]["ru"].as_str().unwrap().contains("просроч"), "{first}");
        assert_eq!(view["groups"][2]["more"], true);
        assert!(view["groups"][2].get("count").is_none());
        assert_eq!(view["person"]["tz_is_default"], true);
    }
}
