//! Owns what callers hand the engine, as it arrives (a source's items and
//! keys, the person's patches and filters), and the checks every batch
//! and single value meets before the engine decides anything.

use crate::error::CoreError;
use hado_domain::event::RawFields;
use hado_domain::event_record::EventRecord;
use hado_domain::fields::SourceName;
use hado_domain::violations::Violations;

/// A batch holds at most this many items.
pub(crate) const MAX_BATCH: usize = 1000;

/// The source a caller authenticated as.
#[derive(Clone, Debug)]
pub struct SourceCaller {
    pub id: i64,
    pub name: SourceName,
}

/// One item of a source's batch, as it arrives.
#[derive(Clone, Debug, Default)]
pub struct SourceItem {
    pub user: String,
    pub source_ref: String,
    pub topic: String,
    pub fields: RawFields,
}

/// A key of a source's event, as it arrives.
#[derive(Clone, Debug, Default)]
pub struct RawKey {
    pub user: String,
    pub source_ref: String,
    pub topic: String,
}

/// A partial change to the user's own event: `None` leaves a field as it is.
#[derive(Clone, Debug, Default)]
pub struct EventPatch {
    pub title: Option<String>,
    pub due_at: Option<String>,
    pub subtitle: Option<String>,
    pub fire_at: Option<String>,
    pub after_due: Option<String>,
    pub done_label: Option<String>,
    pub deep_link: Option<String>,
}

/// What a list is narrowed to, as it arrives: text in the title or
/// subtitle, and a source.
#[derive(Clone, Debug, Default)]
pub struct EventFilter {
    pub text: Option<String>,
    pub source: Option<String>,
}

/// The longest text a list may be searched for.
const MAX_SEARCH_CHARS: usize = hado_words::fields::SEARCH.max;

/// An [`EventFilter`], checked: the text in lower case.
pub(super) struct Matches {
    text: Option<String>,
    source: Option<SourceName>,
}

impl EventFilter {
    pub(super) fn parse(&self) -> Result<Matches, CoreError> {
        let mut violations = Violations::default();
        let text = self.text.as_deref().map(str::trim).filter(|text| !text.is_empty());
        if text.is_some_and(|text| text.chars().count() > MAX_SEARCH_CHARS) {
            violations.add("text", format!("text is over {MAX_SEARCH_CHARS} characters"));
        }
        let source = self
            .source
            .as_deref()
            .filter(|source| !source.is_empty())
            .map(|raw| SourceName::parse("source", raw, &mut violations));
        let matches = Matches { text: text.map(str::to_lowercase), source: source.flatten() };
        violations.into_result(Some(matches)).map_err(CoreError::Invalid)
    }
}

/// The events a search reads at a time.
pub(super) const SEARCH_CHUNK: u32 = 1000;

impl Matches {
    /// Whether nothing narrows the list.
    pub(super) fn admits_all(&self) -> bool {
        self.text.is_none() && self.source.is_none()
    }

    pub(super) fn admits(&self, record: &EventRecord) -> bool {
        let source = self.source.as_ref().is_none_or(|source| record.source == source.as_str());
        let text = self.text.as_deref().is_none_or(|text| {
            record.spec.title.as_str().to_lowercase().contains(text)
                || record
                    .spec
                    .subtitle
                    .as_deref()
                    .is_some_and(|subtitle| subtitle.to_lowercase().contains(text))
        });
        source && text
    }
}

/// A partial change to a user's settings.
#[derive(Clone, Debug, Default)]
pub struct ProfilePatch {
    pub tz: Option<String>,
    pub quiet_start: Option<String>,
    pub quiet_end: Option<String>,
    pub locale: Option<String>,
}

/// Parses one value, turning its violations into the caller's error.
pub(super) fn parse_one<T>(
    parse: impl FnOnce(&mut Violations) -> Option<T>,
) -> Result<T, CoreError> {
    let mut violations = Violations::default();
    let value = parse(&mut violations);
    violations.into_result(value).map_err(CoreError::Invalid)
}

pub(super) fn check_batch_size(field: &str, len: usize) -> Result<(), CoreError> {
    if len > MAX_BATCH {
        return Err(CoreError::invalid(
            field,
            format!("{field} holds {len} items; a batch holds at most {MAX_BATCH}"),
        ));
    }
    Ok(())
}

/// The error for a user's change to another source's event.
pub(super) fn owned_elsewhere(record: &EventRecord) -> CoreError {
    CoreError::SourceOwned(record.source.clone())
}
