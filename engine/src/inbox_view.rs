//! Owns the inbox view (DESIGN §11): what an inbox shows, read in one call
//! on one connection: how many of the person's events need them, the four
//! active groups' counts, a page of each group asked for, or the archive.
//!
//! What it costs: one statement for every count (each group's stops at
//! [`COUNT_LIMIT`] rows of its index range; the attention count walks its
//! partial indexes), and one a page, from the page's cursor to its limit.
//! Nothing reads the closed events but the archive, which reads its latest
//! hundred. So an inbox costs its pages and what is open, however long the
//! person's history; a search reads the open events of its groups.

use crate::Engine;
use crate::error::CoreError;
use crate::inbox::matching_page;
use crate::inputs::{EventFilter, Matches, SEARCH_CHUNK};
use hado_domain::event_record::EventRecord;
use hado_domain::state::State;
use hado_domain::user::UserRecord;
use hado_domain::violations::Violations;
use hado_storage::events::{self, After};

/// A group's events a page holds when the caller does not say.
pub(crate) const DEFAULT_PAGE: u32 = 100;
/// The most a page of one group may hold: a reply holds four at most.
pub(crate) const LARGEST_PAGE: u32 = 1000;
/// How far a group is counted: past it, the count says "more".
pub(crate) const COUNT_LIMIT: u32 = 1000;

/// A page of one group, as asked: text, checked by [`InboxAsk::parse`].
#[derive(Clone, Debug, Default)]
pub struct PageAsk {
    pub state: String,
    pub limit: Option<u32>,
    pub after: Option<String>,
}

/// What an inbox asks for, as it arrives.
#[derive(Clone, Debug, Default)]
pub struct InboxAsk {
    /// Empty: every group, [`DEFAULT_PAGE`] events each (none with `archive`).
    pub pages: Vec<PageAsk>,
    pub archive: bool,
    pub filter: EventFilter,
}

/// A page asked for, checked.
struct Page {
    state: State,
    limit: u32,
    after: After,
}

/// One active group of the view.
#[derive(Debug)]
pub struct GroupView {
    pub state: State,
    /// At most [`COUNT_LIMIT`].
    pub count: u32,
    /// The group holds more than `count`.
    pub more: bool,
    pub events: Vec<EventRecord>,
    /// Where the group goes on after `events`, when it does.
    pub next: Option<String>,
}

/// What an inbox shows.
#[derive(Debug)]
pub struct InboxView {
    pub attention: crate::inbox::Attention,
    /// The four groups, in [`State::INBOX`]'s order.
    pub groups: Vec<GroupView>,
    pub archive: Vec<EventRecord>,
}

impl InboxAsk {
    /// Every page checked, each bad field named by its place in `pages`.
    fn parse(&self) -> Result<(Vec<Page>, Matches), CoreError> {
        let mut violations = Violations::default();
        if self.archive && !self.pages.is_empty() {
            violations.add("pages", "pages ask for active groups; leave them out with archive");
        }
        let mut pages: Vec<Page> = Vec::with_capacity(self.pages.len());
        let mut named = Vec::with_capacity(self.pages.len());
        for (index, ask) in self.pages.iter().enumerate() {
            let field = |name: &str| format!("pages[{index}].{name}");
            let state = State::parse_active_filter(&field("state"), &ask.state, &mut violations);
            if let Some(state) = state
                && named.contains(&state)
            {
                violations.add(
                    &field("state"),
                    format!("{} is asked for twice; ask for each group once", state.as_str()),
                );
            }
            let limit = ask.limit.unwrap_or(DEFAULT_PAGE);
            if limit > LARGEST_PAGE {
                violations.add(
                    &field("limit"),
                    format!("limit {limit} is over {LARGEST_PAGE}; ask for the rest with after"),
                );
            }
            let after = match ask.after.as_deref().filter(|text| !text.is_empty()) {
                None => Some(After::START),
                Some(text) => {
                    let after = After::parse(text);
                    if after.is_none() {
                        violations.add(
                            &field("after"),
                            format!("after {text:?} is not a cursor from a previous reply's next"),
                        );
                    }
                    after
                }
            };
            named.extend(state);
            if let (Some(state), Some(after)) = (state, after) {
                pages.push(Page { state, limit, after });
            }
        }
        if self.pages.is_empty() && !self.archive {
            pages = State::INBOX
                .into_iter()
                .map(|state| Page { state, limit: DEFAULT_PAGE, after: After::START })
                .collect();
        }
        let matches = self.filter.parse();
        if !violations.is_empty() {
            // Every bad field at once: the filter's too.
            if let Err(CoreError::Invalid(found)) = matches {
                violations.extend(found);
            }
            return Err(CoreError::Invalid(violations));
        }
        Ok((pages, matches?))
    }
}

impl Engine {
    /// What an inbox shows: see the module's header for what it reads.
    pub async fn inbox_view(
        &self,
        user: &UserRecord,
        ask: &InboxAsk,
    ) -> Result<InboxView, CoreError> {
        let (pages, matches) = ask.parse()?;
        let mut connection = self.store.reader().acquire().await?;
        let counts =
            events::inbox_counts(&mut connection, user.id, i64::from(COUNT_LIMIT) + 1).await?;
        let mut groups = Vec::with_capacity(State::INBOX.len());
        for (state, counted) in State::INBOX.into_iter().zip(counts.groups) {
            let counted = if matches.admits_all() {
                usize::try_from(counted).unwrap_or(usize::MAX)
            } else {
                count_matching(&mut connection, user.id, state, &matches).await?
            };
            let (events, next) = match pages.iter().find(|page| page.state == state) {
                Some(page) => {
                    // One more than the page, to know whether the group goes on.
                    let mut events = matching_page(
                        &mut connection,
                        user.id,
                        Some(state),
                        page.after,
                        Some(page.limit + 1),
                        &matches,
                    )
                    .await?;
                    let goes_on = events.len() > page.limit as usize;
                    events.truncate(page.limit as usize);
                    let next =
                        events.last().filter(|_| goes_on).map(|last| After::of(last).to_string());
                    (events, next)
                }
                None => (Vec::new(), None),
            };
            let more = counted > COUNT_LIMIT as usize;
            let count = if more { COUNT_LIMIT } else { counted as u32 };
            groups.push(GroupView { state, count, more, events, next });
        }
        let archive = if ask.archive {
            let mut records = events::archive(&mut connection, user.id).await?;
            records.retain(|record| matches.admits(record));
            records
        } else {
            Vec::new()
        };
        let attention = crate::inbox::Attention::of(counts.attention);
        Ok(InboxView { attention, groups, archive })
    }
}

/// How many of a group's events `matches` admits, counted to one past
/// [`COUNT_LIMIT`]: the group's events are read [`SEARCH_CHUNK`] at a time
/// until then, as a search reads them.
async fn count_matching(
    connection: &mut impl hado_storage::Connection,
    user_id: i64,
    state: State,
    matches: &Matches,
) -> Result<usize, CoreError> {
    let (mut counted, mut after) = (0, After::START);
    loop {
        let chunk =
            events::active_page(connection, user_id, Some(state), after, Some(SEARCH_CHUNK))
                .await?;
        counted += chunk.iter().filter(|record| matches.admits(record)).count();
        match chunk.last() {
            Some(last)
                if chunk.len() == SEARCH_CHUNK as usize && counted <= COUNT_LIMIT as usize =>
            {
                after = After::of(last);
            }
            _ => return Ok(counted),
        }
    }
}
