//! Owns core's one translation of the engine's errors into gRPC statuses,
//! made only at the gRPC edge: each error picks its code in
//! `hado_proto::errors`, whose table gives the status.

use hado_proto::errors::{ErrorCode, STORAGE_UNAVAILABLE};
use tonic::Status;
use tonic_types::{ErrorDetails, FieldViolation, LocalizedMessage, StatusExt};

use hado_words::{self as words, Words};

use hado_domain::profile::Locale;
use hado_domain::violations::{Reason, Violations};
use hado_engine::error::{CoreError, Said};
use hado_engine::links::LinkProblem;
use hado_storage::StoreError;

/// The status of an engine's error, for a caller whose language is not
/// known.
pub(crate) fn status(error: CoreError) -> Status {
    status_for(error, None)
}

/// An engine's answer as a gRPC handler gives it: its error as a status.
pub(crate) trait OrStatus<T> {
    fn or_status(self) -> Result<T, Status>;
}

impl<T> OrStatus<T> for Result<T, CoreError> {
    fn or_status(self) -> Result<T, Status> {
        self.map_err(status)
    }
}

/// The status for a person whose language is `locale`: each field
/// violation with a stable reason also carries that reason's words in
/// their language (`localized_message`), for whoever shows it to them;
/// programs read the English description and the reason.
pub(crate) fn status_in(error: CoreError, locale: Locale) -> Status {
    status_for(error, Some(locale))
}

/// The code the error is refused with; its gRPC status, and what every
/// edge makes of it, are the table's.
pub(crate) fn code(error: &CoreError) -> ErrorCode {
    match error {
        CoreError::Invalid(_) => ErrorCode::Invalid,
        CoreError::NotFound(_) | CoreError::EventNotFound(_) => ErrorCode::NotFound,
        CoreError::FailedPrecondition(_)
        | CoreError::NotNow { .. }
        | CoreError::Withdrawn { .. }
        | CoreError::SourceOwned(_) => ErrorCode::NotNow,
        CoreError::PermissionDenied(_) => ErrorCode::NotAllowed,
        CoreError::Unauthenticated(_) => ErrorCode::Unauthenticated,
        CoreError::AlreadyExists(_) => ErrorCode::AlreadyExists,
        CoreError::Exhausted { .. } => ErrorCode::TooOften,
        CoreError::Link { problem: LinkProblem::Forged, .. } => ErrorCode::Unauthenticated,
        CoreError::Link {
            problem: LinkProblem::Expired { .. } | LinkProblem::Gone { .. }, ..
        } => ErrorCode::NotNow,
        CoreError::Link { problem: LinkProblem::Outdated, .. } => ErrorCode::Outdated,
        CoreError::Store(error) if error.is_unavailable() => ErrorCode::StorageAway,
        CoreError::Store(_) => ErrorCode::Internal,
    }
}

/// A reason's words in a person's language (for `field`); none for a
/// reason without a code.
fn reason_words(reason: Reason, field: &str, words: &Words) -> Option<String> {
    Some(match reason {
        Reason::Unspecified => return None,
        Reason::Required if field.ends_with("due_at") => words.refusal_due.to_owned(),
        Reason::Required => words.refusal_required.to_owned(),
        Reason::TooLong { max } => words.refusal_too_long.replace("{max}", &max.to_string()),
        Reason::ControlCharacter => words.refusal_control.to_owned(),
        Reason::BidiControl => words.refusal_bidi.to_owned(),
        Reason::InvisibleCharacter => words.refusal_invisible.to_owned(),
        Reason::NotAUrl => words.refusal_url.to_owned(),
        Reason::NotAnEmailAddress => words.refusal_email.to_owned(),
        Reason::NotADueMoment => words.refusal_due.to_owned(),
        Reason::NotADate => words.refusal_date.to_owned(),
        Reason::YearOutOfRange => words.refusal_year.to_owned(),
        Reason::FireAfterDue => words.refusal_fire_after_due.to_owned(),
        Reason::NotATimeZone => words.refusal_zone.to_owned(),
        Reason::NotATimeOfDay => words.refusal_time.to_owned(),
        Reason::NotALanguage => words.refusal_language.to_owned(),
        Reason::NotAnAfterDue => words.refusal_after_due.to_owned(),
        Reason::NotARememberChoice => words.refusal_remember.to_owned(),
        Reason::RememberDayOutOfRange => words.refusal_remember_day.to_owned(),
        Reason::PrivateAddress => words.refusal_private_address.to_owned(),
        Reason::AddressRefusedMail => words.refusal_address_refused.to_owned(),
        Reason::IdempotencyKeyReused => words.refusal_key_reused.to_owned(),
        Reason::NotALogin => {
            words.refusal_login.replace("{max}", &hado_words::fields::USER.max.to_string())
        }
        Reason::SurroundingSpaces => words.refusal_spaces.to_owned(),
    })
}

/// How long a caller is told to wait before retrying while storage is
/// unavailable: about two of the health probe's rounds.
const STORAGE_RETRY: std::time::Duration = std::time::Duration::from_secs(2);

/// The one translation into a status; with a locale, the reasons that have
/// words carry them in it too.
fn status_for(error: CoreError, locale: Option<Locale>) -> Status {
    // The person's language and its words, when it is known.
    let language =
        locale.map(|locale| (locale.as_str().to_owned(), words::for_locale(locale.as_str())));
    let code = code(&error).grpc();
    match error {
        CoreError::EventNotFound(id) => {
            let mut details = ErrorDetails::with_error_info(
                "EVENT_NOT_FOUND",
                "hado",
                [("id".to_owned(), id.to_string())],
            );
            if let Some((lang, words)) = language {
                details.set_localized_message(lang, words.event_not_found);
            }
            Status::with_error_details(code, format!("event {id} not found"), details)
        }
        CoreError::Invalid(violations) => bad_request(code, &violations, language.as_ref()),
        CoreError::Withdrawn { id, by: ref source, deleted } => {
            let metadata =
                [("id".to_owned(), id.to_string()), ("source".to_owned(), source.clone())];
            let mut details = ErrorDetails::with_error_info("EVENT_WITHDRAWN", "hado", metadata);
            if let Some((lang, words)) = language {
                let words = if deleted {
                    words.event_deleted.to_owned()
                } else {
                    words.event_withdrawn.replace("{source}", source)
                };
                details.set_localized_message(lang, words);
            }
            Status::with_error_details(code, error.to_string(), details)
        }
        CoreError::SourceOwned(ref source) => {
            let message = error.to_string();
            let mut details = ErrorDetails::with_error_info(
                "EVENT_OWNED_BY_SOURCE",
                "hado",
                [("source".to_owned(), source.clone())],
            );
            if let Some((lang, words)) = language {
                details.set_localized_message(
                    lang,
                    words.refusal_source_owned.replace("{source}", source),
                );
            }
            Status::with_error_details(code, message, details)
        }
        CoreError::Link { problem, locale } => link_status(code, &problem, locale),
        CoreError::NotFound(message)
        | CoreError::FailedPrecondition(message)
        | CoreError::PermissionDenied(message)
        | CoreError::Unauthenticated(message)
        | CoreError::AlreadyExists(message) => Status::new(code, message),
        CoreError::Exhausted { message, retry_after, said } => {
            let mut details = ErrorDetails::new();
            details.set_retry_info(Some(retry_after));
            if let Some(said) = said {
                put_in(&said, &mut details);
            }
            Status::with_error_details(code, message, details)
        }
        CoreError::NotNow { message, said } => {
            let mut details = ErrorDetails::new();
            put_in(&said, &mut details);
            Status::with_error_details(code, message, details)
        }
        CoreError::Store(error) => storage_status(code, &error),
    }
}

/// The status of invalid input: each field's violation, with its reason
/// and, for a person whose language is known, the reason's words.
fn bad_request(
    code: tonic::Code,
    violations: &Violations,
    language: Option<&(String, &'static Words)>,
) -> Status {
    let field_violations: Vec<FieldViolation> = violations
        .iter()
        .map(|violation| FieldViolation {
            field: violation.field.clone(),
            description: violation.message.clone(),
            reason: violation.reason.code().to_owned(),
            localized_message: language.and_then(|(lang, words)| {
                reason_words(violation.reason, &violation.field, words)
                    .map(|message| LocalizedMessage { locale: lang.clone(), message })
            }),
        })
        .collect();
    let details = ErrorDetails::with_bad_request(field_violations);
    Status::with_error_details(code, violations.to_string(), details)
}

/// The status of an action link that cannot be used, in the words of the
/// person the link was for.
fn link_status(code: tonic::Code, problem: &LinkProblem, locale: Option<Locale>) -> Status {
    let (reason, pick): (&str, fn(&Words) -> &'static str) = match problem {
        LinkProblem::Forged => ("LINK_NOT_VALID", |words| words.link_not_valid),
        LinkProblem::Expired { .. } | LinkProblem::Gone { .. } => {
            ("LINK_EXPIRED", |words| words.link_expired)
        }
        LinkProblem::Outdated => ("LINK_OUTDATED", |words| words.link_outdated),
    };
    let metadata: Vec<(String, String)> = match problem {
        LinkProblem::Expired { at, .. } => vec![("expired_at".to_owned(), at.to_rfc3339())],
        _ => Vec::new(),
    };
    let mut details = ErrorDetails::with_error_info(
        reason,
        "hado",
        metadata.into_iter().collect::<std::collections::HashMap<_, _>>(),
    );
    // The words are for the person the link was for, whoever asks.
    if let Some(locale) = locale {
        details.set_localized_message(locale.as_str(), pick(words::for_locale(locale.as_str())));
    }
    Status::with_error_details(code, problem.to_string(), details)
}

/// The status of a failed storage: unavailable with a time to retry while
/// the database is away, internal (with the cause in the log only)
/// otherwise.
fn storage_status(code: tonic::Code, error: &StoreError) -> Status {
    if !error.is_unavailable() {
        tracing::error!(%error, "storage failed");
        return Status::new(code, "core could not reach its storage; see core's log");
    }
    tracing::warn!(%error, "storage is unavailable");
    let mut details = ErrorDetails::with_error_info(
        STORAGE_UNAVAILABLE,
        "hado",
        std::collections::HashMap::<String, String>::new(),
    );
    details.set_retry_info(Some(STORAGE_RETRY));
    let message = format!(
        "core's storage cannot be reached or written right now; nothing is half-written, retry in {} s",
        STORAGE_RETRY.as_secs()
    );
    let mut status = Status::with_error_details(code, message, details);
    status.metadata_mut().insert(
        hado_proto::metadata::STORAGE_FAILED,
        tonic::metadata::MetadataValue::from_static("unavailable"),
    );
    status
}

/// A refusal's words, in the person's language, as `LocalizedMessage`.
fn put_in(said: &Said, details: &mut ErrorDetails) {
    details.set_localized_message(said.locale().as_str(), said.words().to_owned());
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic_types::StatusExt;

    /// One of each error core can answer with; a new variant does not
    /// compile until it is named here, and so until it has a code.
    fn one_of_each() -> Vec<CoreError> {
        let said = Said::new(Locale::En, "not now".to_owned());
        let every = [
            CoreError::invalid("title", "is required"),
            CoreError::NotFound("no such channel".to_owned()),
            CoreError::EventNotFound(7),
            CoreError::FailedPrecondition("confirm it first".to_owned()),
            CoreError::PermissionDenied("not yours".to_owned()),
            CoreError::Unauthenticated("unknown token".to_owned()),
            CoreError::AlreadyExists("taken".to_owned()),
            CoreError::Exhausted {
                message: "too often".to_owned(),
                retry_after: std::time::Duration::from_secs(3),
                said: None,
            },
            CoreError::NotNow { message: "not now".to_owned(), said },
            CoreError::Withdrawn { id: 7, by: "ci".to_owned(), deleted: false },
            CoreError::SourceOwned("ci".to_owned()),
            CoreError::Link { problem: LinkProblem::Forged, locale: None },
            CoreError::Link { problem: LinkProblem::Outdated, locale: None },
            CoreError::Link {
                problem: LinkProblem::Expired { at: chrono::Utc::now(), user_id: 1 },
                locale: Some(Locale::Ru),
            },
            CoreError::Store(StoreError::TimedOut),
            CoreError::Store(StoreError::Corrupt("a bad row".to_owned())),
        ];
        for error in &every {
            match error {
                CoreError::Invalid(_)
                | CoreError::NotFound(_)
                | CoreError::EventNotFound(_)
                | CoreError::FailedPrecondition(_)
                | CoreError::PermissionDenied(_)
                | CoreError::Unauthenticated(_)
                | CoreError::AlreadyExists(_)
                | CoreError::Exhausted { .. }
                | CoreError::NotNow { .. }
                | CoreError::Withdrawn { .. }
                | CoreError::SourceOwned(_)
                | CoreError::Link { .. }
                | CoreError::Store(_) => {}
            }
        }
        every.into()
    }

    #[test]
    fn every_code_core_sends_has_a_row_that_the_gateways_read_back() {
        for error in one_of_each() {
            let shown = format!("{error:?}");
            let code = code(&error);
            assert!(ErrorCode::ALL.contains(&code), "{shown}: {code:?} has no row");
            let status = status(error);
            assert_eq!(status.code(), code.grpc(), "{shown}");
            let reason = status.get_details_error_info().map(|info| info.reason);
            assert_eq!(ErrorCode::of(status.code(), reason.as_deref()), code, "{shown}");
            assert_ne!(code, ErrorCode::CoreAway, "{shown}: only a channel says core is away");
        }
    }

    /// Storage that failed a call is said so where a gateway looks before
    /// it sends a repeatable call to another core; nothing else is.
    #[test]
    fn only_storage_that_failed_marks_its_answer_for_another_core() {
        for error in one_of_each() {
            let shown = format!("{error:?}");
            let storage = code(&error) == ErrorCode::StorageAway;
            let answer = status(error).into_http::<tonic::body::Body>();
            let marked = answer.headers().contains_key(hado_proto::metadata::STORAGE_FAILED);
            assert_eq!(marked, storage, "{shown}");
        }
    }
}
