//! Owns an event's own page (with its delivery log) and the Add and Edit
//! form with its errors by field.

use std::collections::HashMap;

use askama::Template;
use axum::Form;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use chrono::NaiveDate;
use tonic::Code;

use hado_proto::v1::{self, ChannelKind, DeliveryKind, DeliveryStatus};
use hado_words::Words;

use crate::quick_add;
use crate::state::AppState;
use crate::web::nav::Nav;
use crate::web::render::{MessagePage, refusal, render};
use crate::web::said::{Said, redirect_saying};
use crate::web::session::{Session, call_keeping};
use crate::web::view::Card;

use super::answers::at_card;

/// One line of an event's delivery log, as the page shows it.
pub(super) struct LogLine {
    pub when: String,
    /// A checkpoint's reminder or a repeat, in words.
    pub kind: &'static str,
    /// The channel by name: the webhook's host, or Telegram.
    pub channel: String,
    /// The status as stored, for the line's class.
    pub status: String,
    /// The status in words.
    pub status_word: &'static str,
    pub attempts: i64,
    pub note: String,
}

#[derive(Template)]
#[template(path = "event.html")]
struct EventPage {
    words: &'static Words,
    nav: Option<Nav>,
    card: Card,
    schedule: Schedule,
    log: Vec<LogLine>,
}

/// When an open event's preparation starts and when it next reminds.
pub(super) struct Schedule {
    pub prepare_from: String,
    pub next_reminder: Option<String>,
    pub open: bool,
}

impl EventPage {
    /// The card's title is the page's own heading.
    fn card_heading(&self) -> &'static str {
        "h1"
    }
}

/// The Add and Edit form, with what was typed and each field's error.
#[derive(Default)]
pub(super) struct EventForm {
    pub id: Option<i64>,
    pub title: String,
    pub subtitle: String,
    pub due_date: String,
    pub due_time: String,
    /// The offset of a fixed-instant due moment, kept as it was.
    pub due_offset: String,
    pub fire_date: String,
    pub after_due: String,
    pub done_label: String,
    pub deep_link: String,
    pub errors: HashMap<String, String>,
    pub general: String,
}

impl EventForm {
    pub(super) fn error(&self, field: &str) -> &str {
        self.errors.get(field).map(String::as_str).unwrap_or("")
    }

    /// A date field's value in the page's language ("14 Mar 2027",
    /// "14.03.2027"), or as typed when it is not a date.
    pub(super) fn shown(&self, words: &Words, value: &str) -> String {
        NaiveDate::parse_from_str(value, "%Y-%m-%d")
            .map_or_else(|_| value.to_owned(), |date| words.field_date(date))
    }

    /// The form as posted. Dates and times may be typed as the person
    /// writes them ("14 Mar 2027", "14.03.2027", "3pm"); they go to core as
    /// `YYYY-MM-DD` and `HH:MM`, and what cannot be read goes as typed, for
    /// core to refuse by field.
    fn from_input(id: Option<i64>, input: &HashMap<String, String>, today: NaiveDate) -> Self {
        let field =
            |name: &str| input.get(name).map(|value| value.trim().to_owned()).unwrap_or_default();
        let date = |name: &str| {
            let typed = field(name);
            quick_add::read_date(&typed, today)
                .map_or(typed, |date| date.format("%Y-%m-%d").to_string())
        };
        let time = field("due_time");
        let time =
            quick_add::read_time(&time).map_or(time, |time| time.format("%H:%M").to_string());
        Self {
            id,
            title: field("title"),
            subtitle: field("subtitle"),
            due_date: date("due_date"),
            due_time: time,
            due_offset: field("due_offset"),
            fire_date: date("fire_date"),
            after_due: field("after_due"),
            done_label: field("done_label"),
            deep_link: field("deep_link"),
            ..Self::default()
        }
    }

    fn from_event(event: &v1::Event) -> Self {
        Self {
            id: Some(event.id),
            title: event.title.clone(),
            subtitle: event.subtitle.clone(),
            due_date: event.due_date.clone(),
            due_time: event.due_time.clone(),
            due_offset: event.due_offset.clone(),
            fire_date: event.fire_at.clone(),
            after_due: event.after_due().word().to_owned(),
            done_label: event.done_label.clone(),
            deep_link: event.deep_link.clone(),
            ..Self::default()
        }
    }

    /// `due_at` in one of core's forms: a date, a local time, or as given with its offset.
    fn due_at(&self) -> String {
        match (self.due_time.is_empty(), self.due_offset.is_empty()) {
            (true, _) => self.due_date.clone(),
            (false, true) => format!("{}T{}", self.due_date, self.due_time),
            (false, false) => format!("{}T{}{}", self.due_date, self.due_time, self.due_offset),
        }
    }

    fn optional(value: &str) -> Option<String> {
        (!value.is_empty()).then(|| value.to_owned())
    }

    fn fields(&self) -> v1::EventFields {
        v1::EventFields {
            title: self.title.clone(),
            due_at: self.due_at(),
            subtitle: Self::optional(&self.subtitle),
            fire_at: Self::optional(&self.fire_date),
            after_due: Self::optional(&self.after_due),
            done_label: Self::optional(&self.done_label),
            deep_link: Self::optional(&self.deep_link),
        }
    }

    fn change(&self, id: i64) -> v1::UpdateEventRequest {
        v1::UpdateEventRequest {
            id,
            title: Some(self.title.clone()),
            due_at: Some(self.due_at()),
            // An emptied field is cleared: no details or link, and the
            // default fire day and Done label again.
            subtitle: Some(self.subtitle.clone()),
            fire_at: Some(self.fire_date.clone()),
            after_due: Self::optional(&self.after_due),
            done_label: Some(self.done_label.clone()),
            deep_link: Some(self.deep_link.clone()),
        }
    }
}

#[derive(Template)]
#[template(path = "form.html")]
pub(super) struct FormPage {
    pub words: &'static Words,
    pub nav: Option<Nav>,
    pub form: EventForm,
    /// On Add: the one line the form was filled in from, if any.
    pub line: Option<String>,
}

pub(crate) async fn event_page(
    State(state): State<AppState>,
    mut session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    let event = session.event(&state, id).await?;
    let words = session.words;
    let log = event
        .deliveries
        .iter()
        .map(|line| LogLine {
            when: session.viewer.when(words, line.due_at.as_ref()).unwrap_or_default(),
            kind: match line.kind() {
                DeliveryKind::Repeat => words.reminder_repeat,
                _ => words.reminder_checkpoint,
            },
            channel: match line.channel_kind() {
                ChannelKind::Telegram => "Telegram".into(),
                ChannelKind::Email => words.email_label.into(),
                ChannelKind::Push => words.push_device.into(),
                ChannelKind::Webhook if !line.channel_host.is_empty() => line.channel_host.clone(),
                ChannelKind::Webhook => ChannelKind::Webhook.word().into(),
                ChannelKind::Unspecified => words.channel_quieted.into(),
            },
            status_word: match line.status() {
                DeliveryStatus::Pending => words.delivery_pending,
                DeliveryStatus::Sent => words.delivery_sent,
                DeliveryStatus::Failed => words.delivery_failed,
                _ => words.delivery_suppressed,
            },
            status: line.status().word().to_owned(),
            attempts: line.attempts,
            note: line.note.clone().unwrap_or_default(),
        })
        .collect();
    let card = Card::new(&event, &session.viewer, words);
    let schedule = Schedule {
        prepare_from: event
            .fire_at
            .parse()
            .map(|day| words.day_and_time(session.viewer.today, day, None))
            .unwrap_or_default(),
        next_reminder: session.viewer.when(words, event.next_reminder_at.as_ref()),
        open: !card.closed,
    };
    let nav = session.nav("");
    Ok(render(StatusCode::OK, EventPage { words, nav, card, schedule, log }))
}

pub(crate) async fn edit_page(
    State(state): State<AppState>,
    mut session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    let event = session.event(&state, id).await?;
    let nav = session.nav("");
    // A source's event is its source's to change: say so now, not after Save.
    if !event.editable {
        let message = session.words.not_editable.replace("{source}", &event.source);
        return Ok(render(
            StatusCode::CONFLICT,
            MessagePage {
                words: session.words,
                nav,
                message,
                second: String::new(),
                second_words: None,
            },
        ));
    }
    Ok(render(
        StatusCode::OK,
        FormPage { words: session.words, nav, form: EventForm::from_event(&event), line: None },
    ))
}

async fn save_event(
    state: AppState,
    mut session: Session,
    id: Option<i64>,
    input: HashMap<String, String>,
) -> Result<Response, Response> {
    let mut form = EventForm::from_input(id, &input, session.viewer.today);
    let (words, inbox) = (session.words, &mut session.inbox);
    let kept = [Code::InvalidArgument, Code::FailedPrecondition];
    let saved = match id {
        None => {
            let create = inbox.create_event(hado_gateway::cores::once(form.fields()));
            call_keeping(&state, words, &kept, create).await?
        }
        Some(id) => call_keeping(&state, words, &kept, inbox.update_event(form.change(id))).await?,
    };
    match saved {
        // The inbox says what happened, and after adding offers Undo.
        Ok(event) => {
            let said = if id.is_some() { Said::Saved } else { Said::Added };
            Ok(redirect_saying(&state.said_key, &session.login, &at_card(&event), said, &event))
        }
        Err(status) => {
            (form.errors, form.general) = refusal(&state, &status);
            let nav = session.nav(if id.is_some() { "" } else { "new" });
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, FormPage { words, nav, form, line: None }))
        }
    }
}

pub(crate) async fn create(
    State(state): State<AppState>,
    session: Session,
    Form(input): Form<HashMap<String, String>>,
) -> Result<Response, Response> {
    save_event(state, session, None, input).await
}

pub(crate) async fn update(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    Form(input): Form<HashMap<String, String>>,
) -> Result<Response, Response> {
    save_event(state, session, Some(id), input).await
}
