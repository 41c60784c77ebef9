//! Owns the rules every text value of the data model meets: characters
//! counted (not bytes), control characters and bidirectional formatting
//! characters refused, surrounding space trimmed, required and optional
//! text (which a person reads, so invisible characters are refused in it,
//! and a value of nothing visible is blank), and a value quoted in a
//! message without echoing all of it.

use unicode_properties::{GeneralCategory, UnicodeEmoji, UnicodeGeneralCategory};

use crate::violations::{Reason, Violations};

/// Counts characters, not bytes: limits are about what a person reads.
pub fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// Refuses the characters a person cannot see but that change what they
/// see, anywhere in a text value: control characters, then bidirectional
/// formatting characters. The one rule every text field meets, whoever
/// wrote it and wherever it is shown (a page, an email's subject, a
/// Telegram message, a calendar).
pub fn refuse_hidden_characters(field: &str, text: &str, violations: &mut Violations) -> bool {
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
pub fn first_bidi_control(text: &str) -> Option<(usize, char)> {
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
pub fn is_bidi_control(character: char) -> bool {
    matches!(character, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Refuses the invisible characters of a text a person reads, named with
/// their place ([`first_invisible`]).
fn refuse_invisible(field: &str, text: &str, violations: &mut Violations) -> bool {
    match first_invisible(text) {
        Some((position, found)) => {
            violations.refuse(
                field,
                Reason::InvisibleCharacter,
                format!(
                    "{field} contains the invisible character U+{:04X} at position {position}; remove it",
                    u32::from(found)
                ),
            );
            true
        }
        None => false,
    }
}

const ZERO_WIDTH_JOINER: char = '\u{200D}';
const ZERO_WIDTH_NON_JOINER: char = '\u{200C}';
/// An emoji tag sequence (the flags of England, Scotland, Wales) is this
/// flag, tag characters, and the cancel tag.
const BLACK_FLAG: char = '\u{1F3F4}';
const CANCEL_TAG: char = '\u{E007F}';

/// The first character of `text` that shows nothing and is not white
/// space, and its place (counted in characters from 1): Unicode's format
/// characters (general category Cf: a zero width space, a byte order mark,
/// a soft hyphen, the interlinear annotations U+FFF9 to U+FFFB, stray tag
/// characters), the line and paragraph separators (U+2028, U+2029, which
/// break a line in some readers and not in others), and noncharacters
/// (U+FDD0 to U+FDEF and the last two of each plane, which no text holds).
/// They hide words from a search, make two titles that look alike differ,
/// and survive into calendars and mail. Kept, where they are what makes a
/// script or an emoji: the joiner between two emoji (a family, a
/// profession, the rainbow flag), the non-joiner between two letters
/// (Persian), a tag sequence after the black flag, and the prepended marks
/// that are visible signs of their own (Arabic's number signs).
pub fn first_invisible(text: &str) -> Option<(usize, char)> {
    let characters: Vec<char> = text.chars().collect();
    let mut index = 0;
    while index < characters.len() {
        if characters[index] == BLACK_FLAG {
            let tags = characters[index + 1..].iter().take_while(|c| is_tag(**c)).count();
            if tags > 0 {
                let run = &characters[index + 1..=index + tags];
                let closed =
                    tags >= 2 && run.iter().position(|c| *c == CANCEL_TAG) == Some(tags - 1);
                if !closed {
                    return Some((index + 2, run[0]));
                }
                index += tags + 1;
                continue;
            }
        }
        if invisible_at(&characters, index) {
            return Some((index + 1, characters[index]));
        }
        index += 1;
    }
    None
}

/// Whether the character at `index` is one [`first_invisible`] refuses,
/// given its neighbours.
fn invisible_at(characters: &[char], index: usize) -> bool {
    let character = characters[index];
    let before = index.checked_sub(1).map(|before| characters[before]);
    let after = characters.get(index + 1).copied();
    match character {
        ZERO_WIDTH_JOINER => {
            !(before.is_some_and(ends_an_emoji) && after.is_some_and(is_pictographic))
        }
        ZERO_WIDTH_NON_JOINER => {
            !(before.is_some_and(is_letter_or_mark) && after.is_some_and(is_letter_or_mark))
        }
        _ => {
            is_noncharacter(character)
                || matches!(
                    character.general_category(),
                    GeneralCategory::Format
                        | GeneralCategory::LineSeparator
                        | GeneralCategory::ParagraphSeparator
                ) && !is_prepended_mark(character)
        }
    }
}

fn is_tag(character: char) -> bool {
    ('\u{E0020}'..='\u{E007F}').contains(&character)
}

/// An emoji that is a picture (not a digit, `#` or `*`, which are emoji
/// only as keycaps).
fn is_pictographic(character: char) -> bool {
    !character.is_ascii() && character.is_emoji_char()
}

/// What an emoji may end with before a joiner: the emoji, its
/// presentation selector, or a skin tone.
fn ends_an_emoji(character: char) -> bool {
    is_pictographic(character)
        || character == '\u{FE0F}'
        || ('\u{1F3FB}'..='\u{1F3FF}').contains(&character)
}

fn is_letter_or_mark(character: char) -> bool {
    use unicode_properties::GeneralCategoryGroup::{Letter, Mark};
    matches!(character.general_category_group(), Letter | Mark)
}

fn is_noncharacter(character: char) -> bool {
    let code = u32::from(character);
    (0xFDD0..=0xFDEF).contains(&code) || code & 0xFFFE == 0xFFFE
}

/// Unicode's prepended concatenation marks: format characters by category,
/// but drawn as signs that span the digits after them.
fn is_prepended_mark(character: char) -> bool {
    matches!(
        character,
        '\u{0600}'..='\u{0605}'
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08E2}'
            | '\u{110BD}'
            | '\u{110CD}'
    )
}

/// Whether `character` draws nothing: white space, format and control
/// characters, the fillers Hangul uses as blanks (U+115F, U+1160, U+3164,
/// U+FFA0), the blank braille pattern (U+2800), and the selectors and
/// joiners that only change the character before them. A title made of
/// these alone looks empty.
fn shows_nothing(character: char) -> bool {
    character.is_whitespace()
        || matches!(
            character,
            '\u{115F}'
                | '\u{1160}'
                | '\u{3164}'
                | '\u{FFA0}'
                | '\u{2800}'
                | '\u{034F}'
                | '\u{180B}'..='\u{180F}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{E0100}'..='\u{E01EF}'
        )
        || matches!(
            character.general_category(),
            GeneralCategory::Format
                | GeneralCategory::Control
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
                | GeneralCategory::SpaceSeparator
        )
}

/// Whether `text` shows nothing at all ([`shows_nothing`]).
fn nothing_visible(text: &str) -> bool {
    text.chars().all(shows_nothing)
}

/// A text without the white space around it, except C1 controls: NEL
/// (U+0085) is white space to Unicode, but a control to refuse, not to
/// trim away.
pub fn trim_text(raw: &str) -> &str {
    raw.trim_matches(|character: char| {
        character.is_whitespace() && !('\u{80}'..='\u{9f}').contains(&character)
    })
}

/// Checks a required text field: trimmed, 1..=max characters.
pub fn required_text(
    field: &str,
    raw: &str,
    max: usize,
    violations: &mut Violations,
) -> Option<String> {
    let text = trim_text(raw);
    let count = char_count(text);
    if refuse_hidden_characters(field, text, violations)
        || refuse_invisible(field, text, violations)
    {
        None
    } else if count == 0 {
        violations.refuse(
            field,
            Reason::Required,
            format!("{field} is required and may not be blank"),
        );
        None
    } else if nothing_visible(text) {
        violations.refuse(
            field,
            Reason::Required,
            format!(
                "{field} is required and may not be blank: it has only characters that show nothing"
            ),
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
pub fn optional_text(
    field: &str,
    raw: Option<&str>,
    max: usize,
    violations: &mut Violations,
) -> Option<String> {
    let text = raw.map(trim_text).filter(|text| !text.is_empty())?;
    let count = char_count(text);
    if refuse_hidden_characters(field, text, violations)
        || refuse_invisible(field, text, violations)
    {
        return None;
    }
    if nothing_visible(text) {
        violations.refuse(
            field,
            Reason::InvisibleCharacter,
            format!("{field} has only characters that show nothing; leave it empty or write text"),
        );
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
pub fn quoted(raw: &str) -> String {
    const SHOWN: usize = 40;
    if raw.chars().count() <= SHOWN {
        format!("'{raw}'")
    } else {
        let head: String = raw.chars().take(SHOWN).collect();
        format!("'{head}…'")
    }
}
