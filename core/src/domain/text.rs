//! Owns the rules every text value of the data model meets: characters
//! counted (not bytes), control characters refused, surrounding space
//! trimmed, required and optional text, and a value quoted in a message
//! without echoing all of it.

use crate::domain::violations::{Reason, Violations};

/// Counts characters, not bytes: limits are about what a person reads.
pub(crate) fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// Refuses control characters other than tab anywhere in a text value:
/// C0 and DEL (a carriage return would split a calendar line or a header,
/// and NUL cannot be stored by every backend) and C1 (U+0080 to U+009F: NEL
/// breaks lines in some readers, and CSI starts terminal escapes in others).
pub(crate) fn refuse_control(field: &str, text: &str, violations: &mut Violations) -> bool {
    match text.chars().position(|c| c.is_control() && c != '\t') {
        Some(position) => {
            let found = text.chars().nth(position).map_or(0, u32::from);
            violations.refuse(
                field,
                Reason::ControlCharacter,
                format!("{field} contains the control character U+{found:04X} at position {}; only tab is allowed", position + 1),
            );
            true
        }
        None => false,
    }
}

/// A text without the white space around it, except C1 controls: NEL
/// (U+0085) is white space to Unicode, but a control to refuse, not to
/// trim away.
pub(crate) fn trim_text(raw: &str) -> &str {
    raw.trim_matches(|character: char| {
        character.is_whitespace() && !('\u{80}'..='\u{9f}').contains(&character)
    })
}

/// Checks a required text field: trimmed, 1..=max characters.
pub(crate) fn required_text(
    field: &str,
    raw: &str,
    max: usize,
    violations: &mut Violations,
) -> Option<String> {
    let text = trim_text(raw);
    let count = char_count(text);
    if refuse_control(field, text, violations) {
        None
    } else if count == 0 {
        violations.refuse(
            field,
            Reason::Required,
            format!("{field} is required and may not be blank"),
        );
        None
    } else if count > max {
        violations.refuse(
            field,
            Reason::TooLong { max },
            format!("{field} is {count} characters long; at most {max} are allowed"),
        );
        None
    } else {
        Some(text.to_owned())
    }
}

/// Checks an optional text field: trimmed, at most `max` characters; blank
/// means absent.
pub(crate) fn optional_text(
    field: &str,
    raw: Option<&str>,
    max: usize,
    violations: &mut Violations,
) -> Option<String> {
    let text = raw.map(trim_text).filter(|text| !text.is_empty())?;
    let count = char_count(text);
    if refuse_control(field, text, violations) {
        return None;
    }
    if count > max {
        violations.refuse(
            field,
            Reason::TooLong { max },
            format!("{field} is {count} characters long; at most {max} are allowed"),
        );
        return None;
    }
    Some(text.to_owned())
}

/// Quotes user input in a message, cut short so that a 10 MB value does not
/// come back in its own error.
pub(crate) fn quoted(raw: &str) -> String {
    const SHOWN: usize = 40;
    if raw.chars().count() <= SHOWN {
        format!("'{raw}'")
    } else {
        let head: String = raw.chars().take(SHOWN).collect();
        format!("'{head}…'")
    }
}
