//! Owns the inbox page (the four groups, most urgent first: the nearest of
//! a long group with a link to the rest, and Scheduled folded, out of the
//! page, until opened) and the archive, both searchable by text and source
//! (and the inbox by state) with the filters in the URL, in a comfortable or
//! a compact density. Core does the filtering.

use super::*;

pub(super) struct Section<'a> {
    pub state: &'static str,
    pub heading: &'static str,
    pub cards: &'a [Card],
    /// Where the rest of the group is, and the words for the link: all of
    /// it, when the page shows only its nearest; its next page, when the
    /// page shows a page of the whole group; or, for a folded Scheduled (no
    /// cards on the page), its nearest.
    pub more: Option<(String, &'static str)>,
}

#[derive(Template)]
#[template(path = "inbox.html")]
struct InboxPage {
    words: &'static Words,
    nav: Option<Nav>,
    groups: Groups,
    /// The groups the page shows only the nearest of.
    cut: Vec<EventState>,
    /// The groups shown whole that go on past this page, with the cursor
    /// their next page starts after.
    pages: Vec<(EventState, String)>,
    /// Scheduled has events but is folded: the page holds none of them.
    folded: bool,
    feedback: Option<Feedback>,
    finder: Finder,
}

/// The search form and density switch at the top of a list, from the URL.
pub(super) struct Finder {
    /// Where the form goes: `/` or `/archive`.
    pub action: &'static str,
    pub q: String,
    pub source: String,
    /// The inbox's state filter (empty for all); the archive has none.
    pub state: String,
    /// The states to offer, with their words: the inbox's groups, or none.
    pub states: Vec<(&'static str, &'static str)>,
    /// The sources to offer: those of the events listed, and the chosen one.
    pub sources: Vec<String>,
    pub compact: bool,
}

impl Finder {
    fn new(
        words: &Words,
        action: &'static str,
        query: &ListQuery,
        with_states: bool,
        events: &[v1::Event],
    ) -> Self {
        let mut sources: Vec<String> = events.iter().map(|event| event.source.clone()).collect();
        sources.extend(query.source.clone().filter(|source| !source.is_empty()));
        sources.sort();
        sources.dedup();
        Self {
            action,
            q: query.q.clone().unwrap_or_default(),
            source: query.source.clone().unwrap_or_default(),
            state: query.state.clone().unwrap_or_default(),
            states: if with_states {
                vec![
                    ("today", words.today),
                    ("overdue", words.overdue),
                    ("preparing", words.preparing),
                    ("scheduled", words.scheduled),
                ]
            } else {
                Vec::new()
            },
            sources,
            compact: query.compact(),
        }
    }

    /// Whether anything narrows the list.
    pub(super) fn active(&self) -> bool {
        !(self.q.is_empty() && self.source.is_empty() && self.state.is_empty())
    }

    /// The search's own query pairs that are set: `q`, `source` and, when
    /// the link keeps it, `state`.
    fn search_pairs(&self, with_state: bool) -> form_urlencoded::Serializer<'static, String> {
        let mut pairs = form_urlencoded::Serializer::new(String::new());
        let state = if with_state { self.state.as_str() } else { "" };
        for (name, value) in
            [("q", self.q.as_str()), ("source", self.source.as_str()), ("state", state)]
        {
            if !value.is_empty() {
                pairs.append_pair(name, value);
            }
        }
        pairs
    }

    /// The same list in the other density.
    pub(super) fn other_density(&self) -> String {
        let mut pairs = self.search_pairs(true);
        if !self.compact {
            pairs.append_pair("density", "compact");
        }
        let query = pairs.finish();
        if query.is_empty() { self.action.to_owned() } else { format!("{}?{query}", self.action) }
    }

    /// The page of `group` that starts just after `cursor`, with the same
    /// search and density.
    fn next_page(&self, group: EventState, cursor: &str) -> String {
        let mut pairs = self.search_pairs(false);
        if self.compact {
            pairs.append_pair("density", "compact");
        }
        pairs.append_pair("all", group.word()).append_pair("after", cursor);
        format!("{}?{}#{}", self.action, pairs.finish(), group.word())
    }
}

/// What narrows a list, from the URL.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub(crate) struct ListQuery {
    q: Option<String>,
    source: Option<String>,
    state: Option<String>,
    density: Option<String>,
}

impl ListQuery {
    fn compact(&self) -> bool {
        self.density.as_deref() == Some("compact")
    }

    fn narrowed(&self) -> bool {
        [&self.q, &self.source]
            .iter()
            .any(|value| value.as_deref().is_some_and(|value| !value.trim().is_empty()))
    }

    fn text(&self) -> Option<String> {
        self.q.clone().filter(|q| !q.trim().is_empty())
    }

    fn source(&self) -> Option<String> {
        self.source.clone().filter(|source| !source.is_empty())
    }
}

impl InboxPage {
    /// Each card's title is a heading under its group's.
    fn card_heading(&self) -> &'static str {
        "h3"
    }

    /// One line at the top about what is overdue, which may be below the
    /// first screen: "8 overdue — oldest 12 days".
    fn overdue_line(&self) -> Option<String> {
        let oldest = self.groups.oldest_overdue?;
        let days = (self.groups.today_is - oldest).num_days();
        Some(self.words.overdue_line(self.groups.overdue.len(), days))
    }

    fn sections(&self) -> Vec<Section<'_>> {
        let (words, groups) = (self.words, &self.groups);
        // The links keep the density the person reads in.
        let keep = if self.finder.compact { "density=compact&" } else { "" };
        // A group shown whole links to its next page; one cut short, to all of it.
        let next = |state: EventState| {
            let (_, cursor) = self.pages.iter().find(|(group, _)| *group == state)?;
            Some((self.finder.next_page(state, cursor), words.show_next_page))
        };
        let more = |state: EventState, label: &'static str| {
            next(state).or_else(|| {
                self.cut
                    .contains(&state)
                    .then(|| (format!("/?{keep}all={}#{}", state.word(), state.word()), label))
            })
        };
        let scheduled = if self.folded {
            Some((format!("/?{keep}open=scheduled#scheduled"), words.show_scheduled))
        } else {
            more(EventState::Scheduled, words.show_all_scheduled)
        };
        vec![
            Section {
                state: EventState::Today.word(),
                heading: words.today,
                cards: &groups.today,
                more: next(EventState::Today),
            },
            Section {
                state: EventState::Overdue.word(),
                heading: words.overdue,
                cards: &groups.overdue,
                more: next(EventState::Overdue),
            },
            Section {
                state: EventState::Preparing.word(),
                heading: words.preparing,
                cards: &groups.preparing,
                more: more(EventState::Preparing, words.show_all_preparing),
            },
            Section {
                state: EventState::Scheduled.word(),
                heading: words.scheduled,
                cards: &groups.scheduled,
                more: scheduled,
            },
        ]
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
/// and overdue ones always all, the nearest 25 in preparation and, once
/// Scheduled is opened, the nearest 50 scheduled. The page's cost (and its
/// size in the browser) follows what needs attention soon, not everything
/// stored.
fn shown(group: EventState) -> Option<u32> {
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

/// What the inbox says about the person's last action.
pub(super) struct Feedback {
    pub text: String,
    /// Where Undo posts: Reopen after Done and Delete, taking Remember
    /// back after Remember, Delete after adding; none after an edit, a
    /// Reopen or an Undo.
    pub undo: Option<String>,
}

/// The message for what the person just did (`said`, from the redirect's
/// cookie), naming the event as it is now; an id that is not the person's
/// says nothing.
async fn feedback(session: &mut Session, said: Option<(Said, i64)>) -> Option<Feedback> {
    let (said, id) = said?;
    let words = session.words;
    let (word, undo) = match said {
        Said::Done => (words.feedback_done, Some(format!("/events/{id}/reopen"))),
        Said::Deleted => (words.feedback_deleted, Some(format!("/events/{id}/reopen"))),
        Said::Added => (words.feedback_added, Some(format!("/events/{id}/delete"))),
        Said::Remembered => (words.feedback_remembered, Some(format!("/events/{id}/unack"))),
        Said::Saved => (words.feedback_saved, None),
        Said::Reopened => (words.feedback_reopened, None),
        Said::Unremembered => (words.feedback_unremembered, None),
    };
    let event = session.inbox.get_event(v1::EventId { id }).await.ok()?.into_inner();
    let quiet_until =
        session.viewer.when(words, event.quiet_until.as_ref()).filter(|_| said == Said::Remembered);
    let text = match quiet_until {
        Some(until) => format!("{word} {} · {} {until}.", event.title, words.quiet_until),
        None => format!("{word} {}.", event.title),
    };
    Some(Feedback { text, undo })
}

pub(crate) async fn inbox_page(
    State(state): State<AppState>,
    mut session: Session,
    headers: HeaderMap,
    Query(query): Query<InboxQuery>,
) -> Result<Response, Response> {
    // A search, and a group shown whole, come a page of 500 at a time;
    // otherwise the farther events of a large group wait behind a link to
    // all of them.
    let after = query.after.as_deref().filter(|after| !after.is_empty());
    let only = query
        .list
        .state
        .as_deref()
        .filter(|state| !state.is_empty())
        .or(query.all.as_deref().filter(|_| after.is_some()));
    let mut events = Vec::new();
    let mut cut = Vec::new();
    let mut pages = Vec::new();
    let mut folded = false;
    for group in
        EventState::ACTIVE.into_iter().filter(|group| only.is_none_or(|only| only == group.word()))
    {
        let asked = |value: &Option<String>| value.as_deref() == Some(group.word());
        let whole = query.list.narrowed() || asked(&query.all);
        // Scheduled stays folded unless asked for: one row says whether
        // there is anything to unfold.
        let fold =
            group == EventState::Scheduled && !whole && only.is_none() && !asked(&query.open);
        let shown = if fold { Some(1) } else { shown(group).filter(|_| !whole) };
        let request = v1::ListEventsRequest {
            state: Some(group.word().into()),
            limit: Some(shown.map_or(WHOLE_PAGE, |shown| shown + 1)),
            after: after.filter(|_| asked(&query.all)).map(str::to_owned),
            text: query.list.text(),
            source: query.list.source(),
            ..Default::default()
        };
        let v1::EventList { events: mut list, next } =
            call(&state, session.words, session.inbox.list_events(request)).await?;
        if let Some(next) = next.filter(|_| shown.is_none()) {
            pages.push((group, next));
        }
        if fold {
            folded = !list.is_empty();
            continue;
        }
        if let Some(shown) = shown.map(|shown| shown as usize)
            && list.len() > shown
        {
            list.truncate(shown);
            cut.push(group);
        }
        events.extend(list);
    }
    let groups = Groups::new(&events, &session.viewer, session.words);
    let said = said::heard(&headers);
    let feedback = feedback(&mut session, said).await;
    let nav = session.nav("inbox");
    let finder = Finder::new(session.words, "/", &query.list, true, &events);
    let page =
        InboxPage { words: session.words, nav, groups, cut, pages, folded, feedback, finder };
    let mut response = render(StatusCode::OK, page);
    if said.is_some() {
        said::forget(&mut response);
    }
    Ok(response)
}

pub(crate) async fn archive_page(
    State(state): State<AppState>,
    mut session: Session,
    Query(query): Query<ListQuery>,
) -> Result<Response, Response> {
    let request = v1::ListEventsRequest {
        archive: true,
        text: query.text(),
        source: query.source(),
        ..Default::default()
    };
    let list = call(&state, session.words, session.inbox.list_events(request)).await?;
    let cards =
        list.events.iter().map(|event| Card::new(event, &session.viewer, session.words)).collect();
    let nav = session.nav("archive");
    let finder = Finder::new(session.words, "/archive", &query, false, &list.events);
    Ok(render(StatusCode::OK, ArchivePage { words: session.words, nav, cards, finder }))
}
