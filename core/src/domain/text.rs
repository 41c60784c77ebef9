//! Owns the rules every text value of the data model meets: characters
//! counted (not bytes), control characters and bidirectional formatting
//! characters refused, surrounding space trimmed, required and optional
//! text, and a value quoted in a message without echoing all of it.

use crate::domain::violations::{Reason, Violations};

/// Counts characters, not bytes: limits are about what a person reads.
pub(crate) fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// Refuses the characters a person cannot see but that change what they
/// see, anywhere in a text value: control characters, then bidirectional
/// formatting characters. The one rule every text field meets, whoever
/// wrote it and wherever it is shown (a page, an email's subject, a
/// Telegram message, a calendar).
pub(crate) fn refuse_hidden_characters(
    field: &str,
    text: &str,
    violations: &mut Violations,
) -> bool {
    refuse_control(field, text, violations) || refuse_bidi_control(field, text, violations)
}

/// Refuses control characters other than tab anywhere in a text value:
/// C0 and DEL (a carriage return would split a calendar line or a header,
/// and NUL cannot be stored by every backend) and C1 (U+0080 to U+009F: NEL
/// breaks lines in some readers, and CSI starts terminal escapes in others).
fn refuse_control(field: &str, text: &str, violations: &mut Violations) -> bool {
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

/// Refuses Unicode's bidirectional formatting characters anywhere in a
/// text value ([`is_bidi_control`]).
fn refuse_bidi_control(field: &str, text: &str, violations: &mut Violations) -> bool {
    match first_bidi_control(text) {
        Some((position, found)) => {
            violations.refuse(
                field,
                Reason::BidiControl,
                format!(
                    "{field} contains the bidirectional formatting character U+{:04X} at position {position}, which reorders the text shown around it; remove it",
                    u32::from(found)
                ),
            );
            true
        }
        None => false,
    }
}

/// The first bidirectional formatting character of `text` and its place
/// (counted in characters from 1).
pub(crate) fn first_bidi_control(text: &str) -> Option<(usize, char)> {
    text.chars().enumerate().find(|(_, c)| is_bidi_control(*c)).map(|(index, c)| (index + 1, c))
}

/// Unicode's explicit bidirectional formatting characters: the embeddings
/// and overrides (U+202A to U+202E) and the isolates (U+2066 to U+2069),
/// which reorder everything after them up to the end of the line (an
/// override shows `moc.elgoog` as `google.com`, and turns the rest of an
/// email's subject or a Telegram message around); and the marks (U+200E,
/// U+200F, U+061C). The marks are refused too, though each only acts as an
/// invisible letter of its direction: where a reader takes a line's
/// direction from its first strong character, as Telegram, mail apps'
/// subject lines and notifications do, a leading right-to-left mark turns
/// the whole line around, and marks between words swap them (U+200F `com`
/// U+200F `.` U+200F `bank` shows as `bank.com`). Nothing in Hado's
/// languages needs them, and right-to-left letters stay allowed: only the
/// invisible formatting is refused.
pub(crate) fn is_bidi_control(character: char) -> bool {
    matches!(character, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
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
    if refuse_hidden_characters(field, text, violations) {
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
    if refuse_hidden_characters(field, text, violations) {
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
