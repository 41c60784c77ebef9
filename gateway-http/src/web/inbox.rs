//! Owns the inbox page (the four groups, most urgent first, with the
//! nearest scheduled events and a link to the rest) and the archive.

use super::*;

pub(super) struct Section<'a> {
    pub state: &'static str,
    pub heading: &'static str,
    pub cards: &'a [Card],
}

#[derive(Template)]
#[template(path = "inbox.html")]
struct InboxPage {
    t: &'static Words,
    nav: Option<Nav>,
    groups: Groups,
    more_scheduled: bool,
    feedback: Option<Feedback>,
}

impl InboxPage {
    /// Each card's title is a heading under its group's.
    fn card_heading(&self) -> &'static str {
        "h3"
    }

    fn sections(&self) -> Vec<Section<'_>> {
        let (t, groups) = (self.t, &self.groups);
        vec![
            Section { state: EventState::Today.as_str(), heading: t.today, cards: &groups.today },
            Section { state: EventState::Overdue.as_str(), heading: t.overdue, cards: &groups.overdue },
            Section { state: EventState::Preparing.as_str(), heading: t.preparing, cards: &groups.preparing },
            Section { state: EventState::Scheduled.as_str(), heading: t.scheduled, cards: &groups.scheduled },
        ]
    }
}

#[derive(Template)]
#[template(path = "archive.html")]
struct ArchivePage {
    t: &'static Words,
    nav: Option<Nav>,
    cards: Vec<Card>,
}

/// How many scheduled events the inbox shows before "show all": the
/// page's cost follows what needs attention soon, not everything stored.
pub(super) const SCHEDULED_SHOWN: u32 = 50;

#[derive(serde::Deserialize)]
pub(crate) struct InboxQuery {
    all: Option<String>,
    /// The event the person just finished, deleted or remembered: the page
    /// says so, and offers Undo where there is one.
    done: Option<String>,
    deleted: Option<String>,
    remembered: Option<String>,
}

/// What the inbox says about the person's last action.
pub(super) struct Feedback {
    pub text: String,
    /// Where Undo posts: Reopen after Done and Delete, taking Remember
    /// back after Remember.
    pub undo: String,
}

/// The message for `?done=`, `?deleted=` or `?remembered=`, from the event
/// as it is now; an id that is not the person's says nothing.
async fn feedback(session: &mut Session, query: &InboxQuery) -> Option<Feedback> {
    let t = session.t;
    let (word, raw, remembered) = if let Some(id) = &query.done {
        (t.feedback_done, id, false)
    } else if let Some(id) = &query.deleted {
        (t.feedback_deleted, id, false)
    } else {
        (t.feedback_remembered, query.remembered.as_ref()?, true)
    };
    let id: i64 = raw.parse().ok()?;
    let event = session.inbox.get_event(v1::EventId { id }).await.ok()?.into_inner();
    let quiet_until = event.quiet_until.as_deref().and_then(|instant| session.viewer.when(t, instant)).filter(|_| remembered);
    let text = match quiet_until {
        Some(until) => format!("{word} {} · {} {until}.", event.title, t.quiet_until),
        None => format!("{word} {}.", event.title),
    };
    let undo = if remembered { format!("/events/{id}/unack") } else { format!("/events/{id}/reopen") };
    Some(Feedback { text, undo })
}

pub(crate) async fn inbox_page(State(state): State<AppState>, mut session: Session, Query(query): Query<InboxQuery>) -> Response {
    let show_all = query.all.is_some();
    let mut events = Vec::new();
    let mut more_scheduled = false;
    for group in EventState::ACTIVE {
        let limit = (group == EventState::Scheduled && !show_all).then_some(SCHEDULED_SHOWN + 1);
        match session.inbox.list_events(v1::ListEventsRequest { state: Some(group.as_str().into()), archive: false, limit, after: None }).await {
            Ok(list) => {
                let mut list = list.into_inner().events;
                if limit.is_some() && list.len() > SCHEDULED_SHOWN as usize {
                    list.truncate(SCHEDULED_SHOWN as usize);
                    more_scheduled = true;
                }
                events.extend(list);
            }
            Err(status) => return failure_page(&state, session.t, &status),
        }
    }
    let groups = Groups::new(&events, &session.viewer, session.t);
    let feedback = feedback(&mut session, &query).await;
    let nav = session.nav("inbox");
    render(StatusCode::OK, InboxPage { t: session.t, nav, groups, more_scheduled, feedback })
}

pub(crate) async fn archive_page(State(state): State<AppState>, mut session: Session) -> Response {
    let list = match session.inbox.list_events(v1::ListEventsRequest { state: None, archive: true, limit: None, after: None }).await {
        Ok(list) => list.into_inner(),
        Err(status) => return failure_page(&state, session.t, &status),
    };
    let cards = list.events.iter().map(|event| Card::new(event, &session.viewer, session.t)).collect();
    let nav = session.nav("archive");
    render(StatusCode::OK, ArchivePage { t: session.t, nav, cards })
}
