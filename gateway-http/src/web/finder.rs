//! Owns the search form and density switch at the top of the inbox and the
//! archive: what narrows a list, read from the URL, and the links that keep
//! it (the other density, a group's next page).

use hado_proto::v1::{self, EventState};

use hado_words::Words;

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
    pub(super) fn new<'a>(
        words: &Words,
        action: &'static str,
        query: &ListQuery,
        with_states: bool,
        events: impl IntoIterator<Item = &'a v1::Event>,
    ) -> Self {
        let mut sources: Vec<String> =
            events.into_iter().map(|event| event.source.clone()).collect();
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
                    ("overdue", words.overdue),
                    ("today", words.today),
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
    pub(super) fn next_page(&self, group: EventState, cursor: &str) -> String {
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
    /// The group to show alone.
    pub(super) state: Option<String>,
    density: Option<String>,
}

impl ListQuery {
    pub(super) fn compact(&self) -> bool {
        self.density.as_deref() == Some("compact")
    }

    pub(super) fn narrowed(&self) -> bool {
        [&self.q, &self.source]
            .iter()
            .any(|value| value.as_deref().is_some_and(|value| !value.trim().is_empty()))
    }

    pub(super) fn text(&self) -> Option<String> {
        self.q.clone().filter(|q| !q.trim().is_empty())
    }

    pub(super) fn source(&self) -> Option<String> {
        self.source.clone().filter(|source| !source.is_empty())
    }
}
