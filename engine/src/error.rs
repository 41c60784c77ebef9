//! Owns the engine's error type. It names no protocol: core's gRPC edge
//! translates it into a status (`hado_core`'s `status`), in one place.
//!
//! It is the one file of the engine that names `StoreError` (a failed read
//! or write is `CoreError::Store`); the edges see `CoreError`.

use hado_domain::profile::Locale;
use hado_domain::violations::{Reason, Violations};
use hado_storage::{QueryError, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// Bad input: every violation, by field.
    #[error("{0}")]
    Invalid(Violations),
    #[error("{0}")]
    NotFound(String),
    /// One of the person's events that is not there (or is another
    /// person's): `EVENT_NOT_FOUND` in `ErrorInfo`.
    #[error("event {0} not found")]
    EventNotFound(i64),
    /// The caller may see the thing but not change it this way.
    #[error("{0}")]
    FailedPrecondition(String),
    #[error("{0}")]
    PermissionDenied(String),
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    AlreadyExists(String),
    /// Asked too often: RESOURCE_EXHAUSTED, with when to ask again as
    /// `RetryInfo`, and the person's words when core has them.
    #[error("{message}")]
    Exhausted { message: String, retry_after: std::time::Duration, said: Option<Said> },
    /// Not now, for a reason the person can act on: FAILED_PRECONDITION,
    /// with their words as `LocalizedMessage`.
    #[error("{message}")]
    NotNow { message: String, said: Said },
    /// Done, Remember, Delete or a link on an event that was withdrawn:
    /// `EVENT_WITHDRAWN` in `ErrorInfo`, with its source (`by`). `deleted` when
    /// its person deleted it (a manual event), which Reopen undoes.
    #[error("{}", withdrawn_message(*.id, by, *.deleted))]
    Withdrawn { id: i64, by: String, deleted: bool },
    /// A person's change to an event a source owns: `EVENT_OWNED_BY_SOURCE`
    /// in `ErrorInfo`, with the source.
    #[error("this event belongs to source {0}; only {0} can change it")]
    SourceOwned(String),
    /// An action link that does not work, with the language of the person
    /// it was for when it is genuine: `LINK_NOT_VALID`, `LINK_EXPIRED` or
    /// `LINK_OUTDATED` in `ErrorInfo`, and their words in `LocalizedMessage`.
    #[error("{problem}")]
    Link { problem: crate::links::LinkProblem, locale: Option<Locale> },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A refusal in the words of the person it is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Said {
    locale: Locale,
    words: String,
}

impl Said {
    pub fn new(locale: Locale, words: String) -> Self {
        Self { locale, words }
    }

    pub fn locale(&self) -> Locale {
        self.locale
    }

    pub fn words(&self) -> &str {
        &self.words
    }
}

/// What a refusal on a withdrawn event says.
fn withdrawn_message(id: i64, source: &str, deleted: bool) -> String {
    if deleted {
        format!("event {id} was deleted; reopen it to act on it again")
    } else {
        format!("event {id} was withdrawn by its source {source}; only {source} can bring it back")
    }
}

impl CoreError {
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::invalid_because(field, Reason::Unspecified, message)
    }

    pub fn invalid_because(field: &str, reason: Reason, message: impl Into<String>) -> Self {
        let mut violations = Violations::default();
        violations.refuse(field, reason, message);
        Self::Invalid(violations)
    }

    pub fn event_not_found(id: i64) -> Self {
        Self::EventNotFound(id)
    }
}

impl CoreError {
    /// The refusal of a call made while the storage probe finds the
    /// database down: unavailable, retry soon.
    pub fn storage_down() -> Self {
        Self::Store(StoreError::TimedOut)
    }
}

impl From<QueryError> for CoreError {
    fn from(error: QueryError) -> Self {
        Self::Store(StoreError::Query(error))
    }
}
