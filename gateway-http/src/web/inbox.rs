//! Owns the inbox page (the four groups in the order of their due moments,
//! overdue first: the nearest of a long group with a link to the rest, and
//! Scheduled folded, out of the page, until opened) and the archive, both
//! searchable by text and source (and the inbox by state) with the filters
//! in the URL, in a comfortable or a compact density.
//!
//! Each page is one call to core, `GetInbox`: the person, every group's
//! count and the pages shown (or the archive). What the person just did
//! comes from the redirect's signed cookie, not from another call. Core
//! does the filtering and the counting.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use hado_proto::v1;
use hado_proto::v1::EventState;
use hado_words as words;
use hado_words::Words;

use crate::state::AppState;
use crate::web::nav::Nav;
use crate::web::render::render;
use crate::web::said::Said;
use crate::web::session::Person;
use crate::web::view::{Card, Groups, Viewer};

use super::finder::{Finder, ListQuery};
use super::nav;
use super::said::{self, Heard};

pub(super) struct Section<'a> {
    pub state: &'static str,
    pub heading: &'static str,
    /// How many events the group holds, as its heading shows it ("12",
    /// "1000+"); empty when none.
    pub count: String,
    pub cards: &'a [Card],
    /// Where the rest of the group is, and the words for the link: all of
    /// it, when the page shows only its nearest; its next page, when the
    /// page shows a page of the whole group; or, for a folded Scheduled (no
    /// cards on the page), its nearest.
    pub more: Option<(String, &'static str)>,
}

/// What the page knows of each group besides its cards.
#[derive(Clone, Debug)]
struct GroupSummary {
    state: EventState,
    /// The group's count as shown: empty when none.
    count: String,
    /// Where its events go on past the page, when they do.
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "inbox.html")]
struct InboxPage {
    words: &'static Words,
    nav: Option<Nav>,
    groups: Groups,
    /// Each group's count and cursor, in the inbox's order.
    summaries: Vec<GroupSummary>,
    /// The groups the page shows only the nearest of (a cursor then means
    /// "show all"); the others, asked for whole, go on a page at a time.
    cut: Vec<EventState>,
    /// The groups the page shows: all four, or the one asked for alone.
    shown: Vec<EventState>,
    /// Scheduled has events but is folded: the page holds none of them.
    folded: bool,
    feedback: Option<Feedback>,
    finder: Finder,
}

/// A group's count as a heading shows it: "12", "1000+" past core's
/// counting, nothing for none.
fn count_text(group: &v1::InboxGroup) -> String {
    match (group.count, group.more) {
        (0, _) => String::new(),
        (count, false) => count.to_string(),
        (count, true) => format!("{count}+"),
    }
}

impl InboxPage {
    /// Each card's title is a heading under its group's.
    fn card_heading(&self) -> &'static str {
        "h3"
    }

    fn summary(&self, state: EventState) -> Option<&GroupSummary> {
        self.summaries.iter().find(|summary| summary.state == state)
    }

    /// One line at the top about what is overdue, which may be below the
    /// first screen: "8 overdue — oldest 12 days".
    fn overdue_line(&self) -> Option<String> {
        let oldest = self.groups.oldest_overdue?;
        let days = (self.groups.today_is - oldest).num_days();
        let count = &self.summary(EventState::Overdue)?.count;
        Some(self.words.overdue_line(count, days))
    }

    fn sections(&self) -> Vec<Section<'_>> {
        let (words, groups) = (self.words, &self.groups);
        // The links keep the density the person reads in.
        let keep = if self.finder.compact { "density=compact&" } else { "" };
        let more = |state: EventState, label: &'static str| {
            let next = self.summary(state)?.next.as_deref()?;
            Some(if self.cut.contains(&state) {
                // Shown its nearest only: the link is to all of it.
                (format!("/?{keep}all={}#{}", state.word(), state.word()), label)
            } else {
                // Shown whole: the link is to its next page.
                (self.finder.next_page(state, next), words.show_next_page)
            })
        };
        let scheduled = if self.folded {
            Some((format!("/?{keep}open=scheduled#scheduled"), words.show_scheduled))
        } else {
            more(EventState::Scheduled, words.show_all_scheduled)
        };
        let section = |state: EventState, heading, cards, more| Section {
            state: state.word(),
            heading,
            count: self.summary(state).map(|summary| summary.count.clone()).unwrap_or_default(),
            cards,
            more,
        };
        [
            section(
                EventState::Overdue,
                words.overdue,
                &groups.overdue,
                more(EventState::Overdue, words.show_next_page),
            ),
            section(
                EventState::Today,
                words.today,
                &groups.today,
                more(EventState::Today, words.show_next_page),
            ),
            section(
                EventState::Preparing,
                words.preparing,
                &groups.preparing,
                more(EventState::Preparing, words.show_all_preparing),
            ),
            section(EventState::Scheduled, words.scheduled, &groups.scheduled, scheduled),
        ]
        .into_iter()
        .filter(|section| self.shown.iter().any(|state| state.word() == section.state))
        .collect()
    }
}

#[derive(Template)]
#[template(path = "archive.html")]
struct ArchivePage {
    words: &'static Words,
    nav: Option<Nav>,
    cards: Vec<Card>,
    finder: Finder,
}

/// The most events of one group a page holds when the whole group (or a
/// search) is asked for; the page links to the next. A page is one reply
/// from core, held whole by core and by the gateway, so its size is
/// bounded however large the inbox.
const WHOLE_PAGE: u32 = 500;

/// How many events of a group the inbox shows before "show all": today's
/// and overdue ones always all (a page of them), the nearest 25 in
/// preparation and, once Scheduled is opened, the nearest 50 scheduled.
/// The page's cost (and its size in the browser) follows what needs
/// attention soon, not everything stored.
fn nearest(group: EventState) -> Option<u32> {
    match group {
        EventState::Preparing => Some(25),
        EventState::Scheduled => Some(50),
        _ => None,
    }
}

#[derive(serde::Deserialize)]
pub(crate) struct InboxQuery {
    #[serde(flatten)]
    list: ListQuery,
    /// The group to show whole, a page at a time.
    all: Option<String>,
    /// The cursor the page of `all` starts after (from core's `next`); the
    /// page then holds that group only.
    after: Option<String>,
    /// `scheduled` unfolds Scheduled.
    open: Option<String>,
}

/// What the page asks core for: the groups it shows, and for each how many
/// events from where.
struct Asked {
    request: v1::GetInboxRequest,
    shown: Vec<EventState>,
    cut: Vec<EventState>,
    /// Scheduled is shown folded: counted, none of its events asked for.
    fold: bool,
}

impl InboxQuery {
    fn asked(&self) -> Asked {
        // A search, and a group shown whole, come a page of 500 at a time;
        // otherwise the farther events of a long group wait behind a link
        // to all of them.
        let after = self.after.as_deref().filter(|after| !after.is_empty());
        let only = self
            .list
            .state
            .as_deref()
            .filter(|state| !state.is_empty())
            .or(self.all.as_deref().filter(|_| after.is_some()));
        let shown: Vec<EventState> = EventState::ACTIVE
            .into_iter()
            .filter(|group| only.is_none_or(|only| only == group.word()))
            .collect();
        let (mut pages, mut cut, mut fold) = (Vec::new(), Vec::new(), false);
        for &group in &shown {
            let asked = |value: &Option<String>| value.as_deref() == Some(group.word());
            let whole = self.list.narrowed() || asked(&self.all);
            if group == EventState::Scheduled && !whole && only.is_none() && !asked(&self.open) {
                fold = true;
                continue;
            }
            let nearest = nearest(group).filter(|_| !whole);
            cut.extend(nearest.map(|_| group));
            pages.push(v1::InboxPage {
                state: group.word().into(),
                limit: Some(nearest.unwrap_or(WHOLE_PAGE)),
                after: after.filter(|_| asked(&self.all)).map(str::to_owned),
            });
        }
        // A state the inbox does not know is core's to refuse, in words.
        if shown.is_empty()
            && let Some(only) = only
        {
            pages.push(v1::InboxPage { state: only.to_owned(), ..Default::default() });
        }
        let request = v1::GetInboxRequest {
            pages,
            archive: false,
            text: self.list.text(),
            source: self.list.source(),
        };
        Asked { request, shown, cut, fold }
    }
}

/// What the inbox says about the person's last action.
pub(super) struct Feedback {
    pub text: String,
    /// Where Undo posts: Reopen after Done and Delete, taking Remember
    /// back after Remember, Delete after adding; none after an edit, a
    /// Reopen or an Undo.
    pub undo: Option<String>,
}

/// The message for what the person just did, from what the redirect's
/// cookie says (the event as the answer returned it).
fn feedback(heard: Heard, viewer: &Viewer, words: &Words) -> Feedback {
    let id = heard.id;
    let (word, undo) = match heard.said {
        Said::Done => (words.feedback_done, Some(format!("/events/{id}/reopen"))),
        Said::Deleted => (words.feedback_deleted, Some(format!("/events/{id}/reopen"))),
        Said::Added => (words.feedback_added, Some(format!("/events/{id}/delete"))),
        Said::Remembered => (words.feedback_remembered, Some(format!("/events/{id}/unack"))),
        Said::Saved => (words.feedback_saved, None),
        Said::Reopened => (words.feedback_reopened, None),
        Said::Unremembered => (words.feedback_unremembered, None),
    };
    let text = match viewer.when(words, heard.quiet_until.as_ref()) {
        Some(until) => format!("{word} {} · {} {until}.", heard.title, words.quiet_until),
        None => format!("{word} {}.", heard.title),
    };
    Feedback { text, undo }
}

/// The person's profile from a view (always there from core), as a page's
/// viewer and words.
fn viewer_of(view: &mut v1::InboxView) -> (Viewer, &'static Words) {
    let viewer = Viewer::new(view.profile.take().unwrap_or_default());
    let words = words::for_locale(&viewer.profile.locale);
    (viewer, words)
}

pub(crate) async fn inbox_page(
    State(state): State<AppState>,
    mut person: Person,
    headers: HeaderMap,
    Query(query): Query<InboxQuery>,
) -> Result<Response, Response> {
    let Asked { request, shown, cut, fold } = query.asked();
    let reply = person.inbox.get_inbox(request).await;
    let mut view = person.reply(&state, reply).await?;
    let (viewer, words) = viewer_of(&mut view);
    let summaries = view
        .groups
        .iter()
        .map(|group| GroupSummary {
            state: group.state(),
            count: count_text(group),
            next: group.next.clone(),
        })
        .collect();
    let folded = fold
        && view
            .groups
            .iter()
            .any(|group| group.state() == EventState::Scheduled && group.count > 0);
    let groups = Groups::new(&view.groups, &viewer, words);
    let heard = said::heard(&state.said_key, &person.login, &headers);
    let feedback = heard.map(|heard| feedback(heard, &viewer, words));
    let nav = nav::bar("inbox", &viewer.profile, person.here.as_deref());
    let listed = view.groups.iter().flat_map(|group| &group.events);
    let finder = Finder::new(words, "/", &query.list, true, listed);
    let page = InboxPage { words, nav, groups, summaries, cut, shown, folded, feedback, finder };
    let mut response = render(StatusCode::OK, page);
    // What was said is forgotten once shown, and a cookie that did not
    // verify with it.
    if said::heard_any(&headers) {
        said::forget(&mut response);
    }
    Ok(response)
}

pub(crate) async fn archive_page(
    State(state): State<AppState>,
    mut person: Person,
    Query(query): Query<ListQuery>,
) -> Result<Response, Response> {
    let request = v1::GetInboxRequest {
        archive: true,
        text: query.text(),
        source: query.source(),
        ..Default::default()
    };
    let reply = person.inbox.get_inbox(request).await;
    let mut view = person.reply(&state, reply).await?;
    let (viewer, words) = viewer_of(&mut view);
    let cards = view.archive.iter().map(|event| Card::new(event, &viewer, words)).collect();
    let nav = nav::bar("archive", &viewer.profile, person.here.as_deref());
    let finder = Finder::new(words, "/archive", &query, false, &view.archive);
    Ok(render(StatusCode::OK, ArchivePage { words, nav, cards, finder }))
}
