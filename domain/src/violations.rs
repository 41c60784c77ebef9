//! Owns the collection of validation failures: every bad field of a request
//! (every bad item of a batch) is reported at once, by its path.

use std::fmt;

/// One field that failed validation, named by its path (`events[3].due_at`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldViolation {
    pub field: String,
    pub message: String,
    pub reason: Reason,
}

/// Why a field was refused: a stable code for programs, which the gRPC edge
/// also puts in the person's words. The English message stays precise for
/// programs and logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// No stable code: the English message says it all.
    Unspecified,
    Required,
    TooLong {
        max: usize,
    },
    ControlCharacter,
    /// A bidirectional formatting character (U+202A to U+202E, U+2066 to
    /// U+2069, U+200E, U+200F, U+061C), which reorders the text around it.
    BidiControl,
    /// A character that shows nothing (a zero width space, a soft hyphen,
    /// a line separator, a noncharacter), or a value made only of such.
    InvisibleCharacter,
    NotAUrl,
    NotAnEmailAddress,
    NotADueMoment,
    NotADate,
    YearOutOfRange,
    FireAfterDue,
    NotATimeZone,
    NotATimeOfDay,
    NotALanguage,
    NotAnAfterDue,
    NotARememberChoice,
    RememberDayOutOfRange,
    /// A webhook address that reaches only this machine or a private network.
    PrivateAddress,
    /// A login outside `[a-z0-9][a-z0-9._@-]{0,63}`.
    NotALogin,
    /// A key (a ref) with spaces around it, which would never match.
    SurroundingSpaces,
    /// An email address whose owner asked for no confirmation from Hado.
    AddressRefusedMail,
    /// An idempotency key sent again with other fields.
    IdempotencyKeyReused,
}

impl Reason {
    /// The code, SCREAMING_SNAKE_CASE as `google.rpc.BadRequest` has it;
    /// empty when there is none.
    pub fn code(self) -> &'static str {
        match self {
            Self::Unspecified => "",
            Self::Required => "REQUIRED",
            Self::TooLong { .. } => "TOO_LONG",
            Self::ControlCharacter => "CONTROL_CHARACTER",
            Self::BidiControl => "BIDI_CONTROL",
            Self::InvisibleCharacter => "INVISIBLE_CHARACTER",
            Self::NotAUrl => "NOT_A_URL",
            Self::NotAnEmailAddress => "NOT_AN_EMAIL_ADDRESS",
            Self::NotADueMoment => "NOT_A_DUE_MOMENT",
            Self::NotADate => "NOT_A_DATE",
            Self::YearOutOfRange => "YEAR_OUT_OF_RANGE",
            Self::FireAfterDue => "FIRE_AFTER_DUE",
            Self::NotATimeZone => "NOT_A_TIME_ZONE",
            Self::NotATimeOfDay => "NOT_A_TIME_OF_DAY",
            Self::NotALanguage => "NOT_A_LANGUAGE",
            Self::NotAnAfterDue => "NOT_AN_AFTER_DUE",
            Self::NotARememberChoice => "NOT_A_REMEMBER_CHOICE",
            Self::RememberDayOutOfRange => "REMEMBER_DAY_OUT_OF_RANGE",
            Self::PrivateAddress => "PRIVATE_ADDRESS",
            Self::NotALogin => "NOT_A_LOGIN",
            Self::SurroundingSpaces => "SURROUNDING_SPACES",
            Self::AddressRefusedMail => "ADDRESS_REFUSED_MAIL",
            Self::IdempotencyKeyReused => "IDEMPOTENCY_KEY_REUSED",
        }
    }
}

/// Every violation found in one request, in the order they were found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Violations(Vec<FieldViolation>);

impl Violations {
    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        self.refuse(field, Reason::Unspecified, message);
    }

    /// A violation with its stable reason.
    pub fn refuse(&mut self, field: &str, reason: Reason, message: impl Into<String>) {
        self.0.push(FieldViolation { field: field.to_owned(), message: message.into(), reason });
    }

    /// Adds `other`'s violations as they are.
    pub fn extend(&mut self, other: Violations) {
        self.0.extend(other.0);
    }

    /// Adds `other`'s violations with their fields put under `prefix`
    /// (`events[3]` + `due_at` = `events[3].due_at`).
    pub fn extend_prefixed(&mut self, prefix: &str, other: Violations) {
        for violation in other.0 {
            let field = format!("{prefix}.{}", violation.field);
            let message = format!("{prefix}: {}", violation.message);
            self.0.push(FieldViolation { field, message, reason: violation.reason });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &FieldViolation> {
        self.0.iter()
    }

    /// `Ok(value)` when nothing was found wrong.
    pub fn into_result<T>(self, value: Option<T>) -> Result<T, Violations> {
        match value {
            Some(value) if self.is_empty() => Ok(value),
            _ => Err(self),
        }
    }
}

/// How many messages the one-line summary lists. The summary travels as a
/// gRPC header, which clients cap (16 KiB is common); every violation still
/// travels in the status details.
pub const SUMMARY_LIMIT: usize = 20;

/// The messages alone (each already names its field), the first
/// [`SUMMARY_LIMIT`] of them.
impl fmt::Display for Violations {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, violation) in self.0.iter().take(SUMMARY_LIMIT).enumerate() {
            if index > 0 {
                formatter.write_str("; ")?;
            }
            formatter.write_str(&violation.message)?;
        }
        if self.0.len() > SUMMARY_LIMIT {
            write!(
                formatter,
                "; and {} more, all listed in the error details",
                self.0.len() - SUMMARY_LIMIT
            )?;
        }
        Ok(())
    }
}

/// A parse's value, or its refusals as one line: how the parsers' tests
/// read a result.
#[cfg(test)]
pub fn check<T>(parse: impl FnOnce(&mut Violations) -> Option<T>) -> Result<T, String> {
    let mut violations = Violations::default();
    let value = parse(&mut violations);
    match value {
        Some(value) if violations.is_empty() => Ok(value),
        _ => Err(violations.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_the_first_twenty_and_counts_the_rest() {
        let mut violations = Violations::default();
        for index in 0..25 {
            violations.add("title", format!("events[{index}]: title is required"));
        }
        let summary = violations.to_string();
        assert!(summary.starts_with("events[0]: title is required; events[1]"));
        assert!(summary.contains("events[19]") && !summary.contains("events[20]"));
        assert!(summary.ends_with("; and 5 more, all listed in the error details"));
        assert_eq!(violations.iter().count(), 25, "every violation is kept for the details");
    }
}
