//! Owns what the MCP tools take and give back, as the model reads them:
//! each argument with its description (its schema comes from these types),
//! and the two results that are not core's own messages.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use hado_proto::v1;
use hado_proto::v1::EventState;
use hado_views::UserEvent;
use hado_words::fields::{
    AFTER, AFTER_DUE, DEEP_LINK, DONE_LABEL, DUE_AT, FIRE_AT, SEARCH, SOURCE, SUBTITLE, TITLE,
};

/// The active states `list_events` can filter by.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[schemars(inline)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ActiveState {
    Scheduled,
    Preparing,
    Today,
    Overdue,
}

impl From<ActiveState> for EventState {
    fn from(state: ActiveState) -> Self {
        match state {
            ActiveState::Scheduled => Self::Scheduled,
            ActiveState::Preparing => Self::Preparing,
            ActiveState::Today => Self::Today,
            ActiveState::Overdue => Self::Overdue,
        }
    }
}

/// What happens after the due day (its description is the field's:
/// `fields::AFTER_DUE`).
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[schemars(inline)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AfterDue {
    Keep,
    Expire,
}

impl AfterDue {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Keep => "keep",
            Self::Expire => "expire",
        }
    }
}

/// The language of the user's inbox, reminders and default labels.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[schemars(inline)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Locale {
    En,
    Ru,
}

impl Locale {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Ru => "ru",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListEventsArgs {
    /// Only active events in this state. Leave out for every active event.
    #[serde(default)]
    pub state: Option<ActiveState>,
    /// true for the archive instead: the 100 events that most recently closed or were deleted (done, expired, withdrawn). Default false.
    #[serde(default)]
    pub archive: bool,
    #[serde(default)]
    #[schemars(length(max = SEARCH.max), description = SEARCH.description())]
    pub text: Option<String>,
    #[serde(default)]
    #[schemars(length(max = SOURCE.max), description = SOURCE.description())]
    pub source: Option<String>,
    /// At most this many events (1 to 1000, default 100): active ones, the most urgent first, with next saying where to go on when more follow; or in the archive, the most recently closed of its latest 100.
    #[serde(default, deserialize_with = "page_size")]
    #[schemars(range(min = 1, max = LARGEST_PAGE))]
    pub limit: Option<u32>,
    #[serde(default)]
    #[schemars(length(max = AFTER.max), description = AFTER.description())]
    pub after: Option<String>,
}

/// Active events a page of `list_events` holds when the call does not say.
pub(crate) const DEFAULT_PAGE: u32 = 100;
/// The most a page of `list_events` may hold: a page is one reply, held
/// whole in memory by core and by the gateway.
const LARGEST_PAGE: u32 = 1000;

/// A page size from 1 to [`LARGEST_PAGE`].
fn page_size<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    let size = Option::<u32>::deserialize(deserializer)?;
    match size {
        Some(size) if !(1..=LARGEST_PAGE).contains(&size) => {
            Err(serde::de::Error::custom(format!("{size} is not from 1 to {LARGEST_PAGE}")))
        }
        size => Ok(size),
    }
}

/// A tool that takes no arguments refuses any it is given.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventIdArgs {
    /// The event's id, from list_events or get_event.
    pub id: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MarkAckArgs {
    /// The event's id, from list_events or get_event.
    pub id: i64,
    /// How long to stay quiet: next_checkpoint (the default: the next checkpoint reminds), tomorrow (tomorrow morning), next_week (Monday morning), or a day YYYY-MM-DD within a year (that morning). "Morning" is when the user's quiet hours end; the user is reminded then.
    #[serde(default)]
    #[schemars(length(max = 15))]
    pub until: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateEventArgs {
    #[schemars(length(min = TITLE.min, max = TITLE.max), description = TITLE.description())]
    pub title: String,
    #[schemars(description = DUE_AT.description())]
    pub due_at: String,
    #[serde(default)]
    #[schemars(length(max = SUBTITLE.max), description = SUBTITLE.description())]
    pub subtitle: Option<String>,
    #[serde(default)]
    #[schemars(length(max = FIRE_AT.max), description = FIRE_AT.description())]
    pub fire_at: Option<String>,
    #[serde(default)]
    #[schemars(description = AFTER_DUE.description())]
    pub after_due: Option<AfterDue>,
    #[serde(default)]
    #[schemars(length(max = DONE_LABEL.max), description = DONE_LABEL.description())]
    pub done_label: Option<String>,
    #[serde(default)]
    #[schemars(length(max = DEEP_LINK.max), description = DEEP_LINK.description())]
    pub deep_link: Option<String>,
}

/// Each field as in `create_event`, and left out to keep the event's.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateEventArgs {
    /// The id of an editable (manual) event.
    pub id: i64,
    #[serde(default)]
    #[schemars(
        length(min = TITLE.min, max = TITLE.max),
        description = TITLE.edit_description()
    )]
    pub title: Option<String>,
    #[serde(default)]
    #[schemars(description = DUE_AT.edit_description())]
    pub due_at: Option<String>,
    #[serde(default)]
    #[schemars(length(max = SUBTITLE.max), description = SUBTITLE.edit_description())]
    pub subtitle: Option<String>,
    #[serde(default)]
    #[schemars(length(max = FIRE_AT.max), description = FIRE_AT.edit_description())]
    pub fire_at: Option<String>,
    #[serde(default)]
    #[schemars(description = AFTER_DUE.edit_description())]
    pub after_due: Option<AfterDue>,
    #[serde(default)]
    #[schemars(length(max = DONE_LABEL.max), description = DONE_LABEL.edit_description())]
    pub done_label: Option<String>,
    #[serde(default)]
    #[schemars(length(max = DEEP_LINK.max), description = DEEP_LINK.edit_description())]
    pub deep_link: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateProfileArgs {
    /// An IANA time zone name, such as Europe/Berlin. Local due times follow it.
    #[serde(default)]
    pub tz: Option<String>,
    /// Start of quiet hours, HH:MM local time: no reminders from then.
    #[serde(default)]
    pub quiet_start: Option<String>,
    /// End of quiet hours, HH:MM local time. Quiet hours may cross midnight.
    #[serde(default)]
    pub quiet_end: Option<String>,
    /// The language of the inbox, the reminders and the default Done label: en or ru.
    #[serde(default)]
    pub locale: Option<Locale>,
}

/// The events `list_events` found.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct UserEventList {
    pub events: Vec<UserEvent>,
    /// Set when more active events follow this page: pass it as after for the next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

// What each tool's arguments ask of core: the one place where an argument
// becomes a field of the wire.

impl From<ListEventsArgs> for v1::ListEventsRequest {
    fn from(args: ListEventsArgs) -> Self {
        Self {
            state: args.state.map(|state| EventState::from(state).word().to_owned()),
            archive: args.archive,
            text: args.text,
            source: args.source,
            // The archive is its latest 100 at most.
            limit: Some(args.limit.unwrap_or(DEFAULT_PAGE)),
            after: args.after,
        }
    }
}

impl From<CreateEventArgs> for v1::EventFields {
    fn from(args: CreateEventArgs) -> Self {
        Self {
            title: args.title,
            due_at: args.due_at,
            subtitle: args.subtitle,
            fire_at: args.fire_at,
            after_due: args.after_due.map(|after_due| after_due.as_str().to_owned()),
            done_label: args.done_label,
            deep_link: args.deep_link,
        }
    }
}

impl From<UpdateEventArgs> for v1::UpdateEventRequest {
    fn from(args: UpdateEventArgs) -> Self {
        Self {
            id: args.id,
            title: args.title,
            due_at: args.due_at,
            subtitle: args.subtitle,
            fire_at: args.fire_at,
            after_due: args.after_due.map(|after_due| after_due.as_str().to_owned()),
            done_label: args.done_label,
            deep_link: args.deep_link,
        }
    }
}

impl From<UpdateProfileArgs> for v1::UpdateProfileRequest {
    fn from(args: UpdateProfileArgs) -> Self {
        Self {
            tz: args.tz,
            quiet_start: args.quiet_start,
            quiet_end: args.quiet_end,
            locale: args.locale.map(|locale| locale.as_str().to_owned()),
        }
    }
}
