//! Owns the small validated values of Hado's data model: each is parsed once
//! at the edge into a type, and code past the edge never checks it again.

use std::fmt;

use hado_words::fields::{DEEP_LINK, DONE_LABEL, REF, SOURCE, SUBTITLE, TITLE, TOPIC, USER};

use crate::text::{char_count, optional_text, quoted, refuse_hidden_characters, required_text};
use crate::violations::{Reason, Violations};

macro_rules! text_value {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Wraps a value read back from storage, where it was validated
            /// on its way in.
            #[allow(dead_code, reason = "not every value is read back from storage")]
            pub fn from_stored(raw: String) -> Self {
                Self(raw)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str(&self.0)
            }
        }
    };
}

text_value!(
    /// An event's title: `fields::TITLE`'s characters, counted after trimming.
    Title
);
text_value!(
    /// A label for the Done button: `fields::DONE_LABEL`'s characters.
    DoneLabel
);
text_value!(
    /// An absolute `http` or `https` URL of `fields::DEEP_LINK`'s characters.
    DeepLink
);
text_value!(
    /// A source's own key for an event: `fields::REF`'s characters.
    SourceRef
);
text_value!(
    /// A second part of an event's key: `fields::TOPIC`'s characters, often empty.
    Topic
);
text_value!(
    /// A user's login: a letter or digit, then letters, digits and `._@-`,
    /// `fields::USER`'s characters at most. Logins are not case
    /// sensitive: `Anna` (as a sign-in provider may send it) is read as
    /// `anna`, so one person is always one user.
    Login
);
text_value!(
    /// A source's name: a letter or digit, then letters, digits, `_` and `-`,
    /// `fields::SOURCE`'s characters at most.
    SourceName
);

impl Title {
    pub fn parse(field: &str, raw: &str, violations: &mut Violations) -> Option<Self> {
        required_text(field, raw, TITLE.max, violations).map(Self)
    }
}

/// An optional subtitle of `fields::SUBTITLE`'s characters; blank means none.
pub fn parse_subtitle(
    field: &str,
    raw: Option<&str>,
    violations: &mut Violations,
) -> Option<String> {
    optional_text(field, raw, SUBTITLE.max, violations)
}

impl DoneLabel {
    /// An absent or blank label is `None`: the reader's language supplies
    /// the default.
    pub fn parse_optional(
        field: &str,
        raw: Option<&str>,
        violations: &mut Violations,
    ) -> Option<Self> {
        optional_text(field, raw, DONE_LABEL.max, violations).map(Self)
    }
}

impl DeepLink {
    /// Only absolute `http(s)` URLs pass: `javascript:`, `data:` and relative
    /// links would run or resolve somewhere the person did not expect.
    pub fn parse_optional(
        field: &str,
        raw: Option<&str>,
        violations: &mut Violations,
    ) -> Option<Self> {
        let text = raw.map(str::trim).filter(|text| !text.is_empty())?;
        let count = char_count(text);
        let max = DEEP_LINK.max;
        if count > max {
            violations.refuse(
                field,
                Reason::TooLong { max },
                format!("{field} is {count} characters long; at most {max} are allowed"),
            );
            return None;
        }
        if refuse_hidden_characters(field, text, violations) {
            return None;
        }
        // Parsed as browsers parse it: a scheme of http or https written
        // out with `//`, a host, and no user name or password (which would
        // make `https://bank.example@evil.example` read as the bank).
        let lower = text.to_ascii_lowercase();
        let authority_first =
            lower.strip_prefix("https://").or_else(|| lower.strip_prefix("http://"));
        let written_absolute =
            authority_first.is_some_and(|rest| !rest.starts_with('/')) && !text.contains('\\');
        let parsed = url::Url::parse(text).ok().filter(|url| {
            written_absolute
                && matches!(url.scheme(), "http" | "https")
                && url.host_str().is_some_and(|host| !host.is_empty())
                && url.username().is_empty()
                && url.password().is_none()
        });
        if parsed.is_none() || text.chars().any(char::is_whitespace) {
            violations.refuse(
                field,
                Reason::NotAUrl,
                format!("{field} {} must be an absolute http or https URL with a host and no user name or password", quoted(text)),
            );
            return None;
        }
        Some(Self(text.to_owned()))
    }
}

impl SourceRef {
    pub fn parse(field: &str, raw: &str, violations: &mut Violations) -> Option<Self> {
        key_part(field, raw, REF.max, true, violations).map(Self)
    }

    /// The key of a new event of the `manual` source.
    pub fn new_manual(ulid: ulid::Ulid) -> Self {
        Self(format!("manual:{ulid}"))
    }

    /// The idempotency key a [`Self::keyed_manual`] ref was made from.
    pub fn manual_key(&self) -> Option<&str> {
        self.0.strip_prefix("manual:key:")
    }

    /// The key of a new event of the `manual` source that its creator
    /// named (an idempotency key): 1 to 64 ASCII letters, digits, `-` and
    /// `_`, so that it reads the same in every log and header.
    pub fn keyed_manual(field: &str, raw: &str, violations: &mut Violations) -> Option<Self> {
        let fits = (1..=64).contains(&raw.len())
            && raw.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
        if fits {
            Some(Self(format!("manual:key:{raw}")))
        } else {
            violations.refuse(
                field,
                Reason::Unspecified,
                format!(
                    "{field} {} must be 1 to 64 ASCII letters, digits, '-' or '_'",
                    quoted(raw)
                ),
            );
            None
        }
    }
}

impl Topic {
    pub fn parse(field: &str, raw: &str, violations: &mut Violations) -> Option<Self> {
        key_part(field, raw, TOPIC.max, false, violations).map(Self)
    }

    pub fn empty() -> Self {
        Self(String::new())
    }
}

/// One part of an event's key (its ref or topic), kept exactly as given:
/// surrounding spaces would make a different key, so they are refused
/// rather than trimmed.
fn key_part(
    field: &str,
    raw: &str,
    max: usize,
    required: bool,
    violations: &mut Violations,
) -> Option<String> {
    let count = char_count(raw);
    if refuse_hidden_characters(field, raw, violations) {
        None
    } else if required && count == 0 {
        violations.refuse(field, Reason::Required, format!("{field} is required"));
        None
    } else if count > max {
        violations.refuse(
            field,
            Reason::TooLong { max },
            format!("{field} is {count} characters long; at most {max} are allowed"),
        );
        None
    } else if raw.trim() != raw {
        violations.refuse(
            field,
            Reason::SurroundingSpaces,
            format!("{field} {} has leading or trailing spaces", quoted(raw)),
        );
        None
    } else {
        Some(raw.to_owned())
    }
}

/// Checks `text` against `[a-z0-9][<first and rest>]{0,max-1}`.
fn matches_name(text: &str, max: usize, extra: &[char]) -> bool {
    let mut chars = text.chars();
    let Some(first) = chars.next() else { return false };
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    allowed(first) && text.len() <= max && chars.all(|c| allowed(c) || extra.contains(&c))
}

impl Login {
    pub fn parse(field: &str, raw: &str, violations: &mut Violations) -> Option<Self> {
        let login = raw.to_ascii_lowercase();
        if matches_name(&login, USER.max, &['.', '_', '@', '-']) {
            Some(Self(login))
        } else {
            violations.refuse(
                field,
                Reason::NotALogin,
                format!("{field} {} is not a valid login: use 1 to {} characters of a-z, 0-9 and . _ @ -, starting with a letter or digit", quoted(raw), USER.max),
            );
            None
        }
    }
}

impl SourceName {
    /// The source of the events a person (or their agent) makes themselves.
    pub const MANUAL: &'static str = "manual";

    pub fn parse(field: &str, raw: &str, violations: &mut Violations) -> Option<Self> {
        if matches_name(raw, SOURCE.max, &['_', '-']) {
            Some(Self(raw.to_owned()))
        } else {
            violations.add(
                field,
                format!("{field} {} is not a valid source name: use 1 to {} characters of a-z, 0-9, _ and -, starting with a letter or digit", quoted(raw), SOURCE.max),
            );
            None
        }
    }

    pub fn is_manual(&self) -> bool {
        self.0 == Self::MANUAL
    }
}

/// What happens when the due moment passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterDue {
    /// The event stays in the inbox as overdue until it is done.
    Keep,
    /// The event closes as expired.
    Expire,
}

impl AfterDue {
    pub fn parse_optional(
        field: &str,
        raw: Option<&str>,
        violations: &mut Violations,
    ) -> Option<Self> {
        match raw.map(str::trim) {
            None | Some("") | Some("keep") => Some(Self::Keep),
            Some("expire") => Some(Self::Expire),
            Some(other) => {
                violations.refuse(
                    field,
                    Reason::NotAnAfterDue,
                    format!("{field} {} must be keep or expire", quoted(other)),
                );
                None
            }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keep => "keep",
            Self::Expire => "expire",
        }
    }

    pub fn from_stored(raw: &str) -> Self {
        if raw == "expire" { Self::Expire } else { Self::Keep }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::violations::check;

    #[test]
    fn a_title_is_trimmed_and_must_not_be_blank() {
        assert_eq!(check(|v| Title::parse("title", "  Visa  ", v)).unwrap().as_str(), "Visa");
        assert_eq!(
            check(|v| Title::parse("title", "   ", v)).unwrap_err(),
            "title is required and may not be blank"
        );
    }

    #[test]
    fn a_ten_megabyte_title_is_refused_without_echoing_it() {
        let huge = "x".repeat(10 * 1024 * 1024);
        let error = check(|v| Title::parse("title", &huge, v)).unwrap_err();
        assert_eq!(error, "title is 10485760 characters long; at most 200 are allowed");
    }

    #[test]
    fn limits_count_characters_not_bytes() {
        let cyrillic = "я".repeat(200);
        assert!(check(|v| Title::parse("title", &cyrillic, v)).is_ok());
        let too_long = "я".repeat(201);
        assert!(check(|v| Title::parse("title", &too_long, v)).is_err());
    }

    #[test]
    fn deep_links_must_be_absolute_http_urls() {
        for good in [
            "https://example.com",
            "http://example.com/a?b=c#d",
            "HTTPS://Example.com/x",
            "https://пример.рф/виза",
            "https://bücher.example/",
        ] {
            assert!(
                check(|v| DeepLink::parse_optional("deep_link", Some(good), v)).is_ok(),
                "{good}"
            );
        }
        // International host names go through UTS 46 (the build picks url's
        // unicode-rs backend for it), as a browser would send them.
        assert_eq!(
            url::Url::parse("https://ПРИМЕР.рф/").unwrap().host_str(),
            Some("xn--e1afmkfd.xn--p1ai")
        );
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "/relative",
            "ftp://x",
            "https://",
            "https:///path",
            "data:text/html,x",
            "https://exa mple.com",
            "https://@",
            "https://:80",
            "https://user:pw@example.com",
            "https://bank.example@evil.example/",
            "https:example.com",
            "http://[::1",
        ] {
            let error = check(|v| DeepLink::parse_optional("deep_link", Some(bad), v)).unwrap_err();
            assert!(error.contains("must be an absolute http or https URL"), "{bad}: {error}");
        }
        let long = format!("https://example.com/{}", "a".repeat(2048));
        assert!(
            check(|v| DeepLink::parse_optional("deep_link", Some(&long), v))
                .unwrap_err()
                .contains("at most 2048")
        );
    }

    #[test]
    fn logins_follow_the_documented_pattern() {
        for good in ["anna", "a", "anna.k@example.com", "0day", "x_y-z"] {
            assert!(check(|v| Login::parse("user", good, v)).is_ok(), "{good}");
        }
        assert_eq!(
            check(|v| Login::parse("user", "Anna", v)).unwrap().as_str(),
            "anna",
            "logins are not case sensitive"
        );
        for bad in ["", "anna k", ".anna", "-a", &"a".repeat(65), "анна", "Анна"] {
            let error = check(|v| Login::parse("user", bad, v)).unwrap_err();
            assert!(error.starts_with("user "), "{bad}: {error}");
        }
    }

    #[test]
    fn control_characters_other_than_tab_are_refused_in_every_text() {
        for bad in [
            "Visa\rX-INJECTED:1",
            "nul\0byte",
            "line\nbreak",
            "bell\u{7}",
            "del\u{7f}",
            "next\u{85}line",
            "csi\u{9b}31m",
            "pad\u{80}",
        ] {
            assert!(
                check(|v| Title::parse("title", bad, v))
                    .unwrap_err()
                    .starts_with("title contains the control character"),
                "{bad:?}"
            );
            assert!(check(|v| parse_subtitle("subtitle", Some(bad), v)).is_err(), "{bad:?}");
            assert!(
                check(|v| DoneLabel::parse_optional("done_label", Some(bad), v)).is_err(),
                "{bad:?}"
            );
            assert!(check(|v| SourceRef::parse("ref", bad, v)).is_err(), "{bad:?}");
            assert!(check(|v| Topic::parse("topic", bad, v)).is_err(), "{bad:?}");
            let link = format!("https://example.com/{bad}");
            assert!(
                check(|v| DeepLink::parse_optional("deep_link", Some(&link), v)).is_err(),
                "{bad:?}"
            );
        }
        assert_eq!(check(|v| Title::parse("title", "a\tb", v)).unwrap().as_str(), "a\tb");
        let error = check(|v| Title::parse("title", "ab\rc", v)).unwrap_err();
        assert_eq!(
            error,
            "title contains the control character U+000D at position 3; only tab is allowed"
        );
        let error = check(|v| Title::parse("title", "Visa\u{85}", v)).unwrap_err();
        assert_eq!(
            error,
            "title contains the control character U+0085 at position 5; only tab is allowed"
        );
        // Letters just past the C1 block are text.
        assert_eq!(
            check(|v| Title::parse("title", "café\u{a0}Ünïcode", v)).unwrap().as_str(),
            "café\u{a0}Ünïcode"
        );
    }

    #[test]
    fn bidirectional_formatting_characters_are_refused_in_every_text() {
        // Each would reorder what a person reads: the rest of an email's
        // subject, a page line, a Telegram message.
        for (bad, code) in [
            ("Invoice \u{202E}fdp.exe", 0x202E),
            ("\u{202A}embedded", 0x202A),
            ("\u{202B}embedded", 0x202B),
            ("popped\u{202C}", 0x202C),
            ("\u{202D}override", 0x202D),
            ("isolate\u{2066}x\u{2069}", 0x2066),
            ("\u{2067}isolate", 0x2067),
            ("\u{2068}isolate", 0x2068),
            ("closed\u{2069}", 0x2069),
            ("left\u{200E}mark", 0x200E),
            ("\u{200F}com\u{200F}.\u{200F}bank", 0x200F),
            ("arabic\u{061C}mark", 0x061C),
        ] {
            let error = check(|v| Title::parse("title", bad, v)).unwrap_err();
            assert!(
                error.starts_with(&format!(
                    "title contains the bidirectional formatting character U+{code:04X} at position "
                )),
                "{bad:?}: {error}"
            );
            let subtitle = check(|v| parse_subtitle("subtitle", Some(bad), v)).unwrap_err();
            assert!(subtitle.starts_with("subtitle contains the bidirectional"), "{subtitle}");
            let label = check(|v| DoneLabel::parse_optional("done_label", Some(bad), v));
            assert!(label.unwrap_err().starts_with("done_label contains the bidirectional"));
            assert!(check(|v| SourceRef::parse("ref", bad, v)).is_err(), "{bad:?}");
            assert!(check(|v| Topic::parse("topic", bad, v)).is_err(), "{bad:?}");
            let link = format!("https://example.com/{bad}");
            assert!(
                check(|v| DeepLink::parse_optional("deep_link", Some(&link), v)).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_bidirectional_control_is_named_with_its_reason_and_place() {
        let mut violations = Violations::default();
        assert!(Title::parse("title", "Pay \u{202E}moc.elgoog", &mut violations).is_none());
        let violation = violations.iter().next().unwrap();
        assert_eq!(
            (violation.field.as_str(), violation.reason, violation.reason.code()),
            ("title", Reason::BidiControl, "BIDI_CONTROL")
        );
        assert_eq!(
            violation.message,
            "title contains the bidirectional formatting character U+202E at position 5, which reorders the text shown around it; remove it"
        );
    }

    #[test]
    fn right_to_left_letters_and_other_invisible_joiners_stay_text() {
        // Only the formatting characters are refused, not the scripts that
        // read right to left, nor the joiners Persian and emoji need.
        for good in ["ויזה", "تأشيرة", "ویزا\u{200C}ی", "👩\u{200D}💻 laptop"] {
            assert_eq!(check(|v| Title::parse("title", good, v)).unwrap().as_str(), good);
        }
    }

    #[test]
    fn a_title_of_only_characters_that_show_nothing_is_blank() {
        for blank in
            ["\u{3164}", "\u{2800}\u{2800}", "\u{115F}\u{1160}", "\u{FFA0} \u{3164}", "\u{FE0F}"]
        {
            let mut violations = Violations::default();
            assert!(Title::parse("title", blank, &mut violations).is_none(), "{blank:?}");
            let violation = violations.iter().next().unwrap();
            assert_eq!((violation.field.as_str(), violation.reason), ("title", Reason::Required));
            assert!(violation.message.contains("show nothing"), "{}", violation.message);
            let subtitle = check(|v| parse_subtitle("subtitle", Some(blank), v)).unwrap_err();
            assert!(subtitle.starts_with("subtitle has only characters"), "{subtitle}");
        }
        // Tag characters alone are refused as invisible, before blankness.
        let tags = check(|v| Title::parse("title", "\u{E0041}\u{E0042}", v)).unwrap_err();
        assert!(tags.starts_with("title contains the invisible character U+E0041"), "{tags}");
        // A filler beside a letter is a title.
        assert!(check(|v| Title::parse("title", "\u{3164}Visa", v)).is_ok());
    }

    #[test]
    fn invisible_characters_inside_a_title_are_named_with_their_place() {
        for (bad, code, position) in [
            ("Pay\u{2028}rent", "U+2028", 4),
            ("Pay\u{2029}rent", "U+2029", 4),
            ("Pay rent\u{FFFE}", "U+FFFE", 9),
            ("Pay \u{10FFFF}rent", "U+10FFFF", 5),
            ("Pay \u{FDD0}", "U+FDD0", 5),
            ("\u{FFF9}Pay\u{FFFA}rent\u{FFFB}", "U+FFF9", 1),
            ("Pa\u{200B}y rent", "U+200B", 3),
            ("\u{FEFF}Pay rent", "U+FEFF", 1),
            ("Pass\u{00AD}port", "U+00AD", 5),
            ("Pay\u{2060}rent", "U+2060", 4),
            ("Visa\u{200D}", "U+200D", 5),
            ("a\u{200D}\u{1F4BB}", "U+200D", 2),
            ("1\u{200D}2", "U+200D", 2),
            ("Visa \u{200C}x", "U+200C", 6),
            ("\u{1F3F4}\u{E0067}\u{E0062}", "U+E0067", 2),
        ] {
            let mut violations = Violations::default();
            assert!(Title::parse("title", bad, &mut violations).is_none(), "{bad:?}");
            let violation = violations.iter().next().unwrap();
            assert_eq!(
                (violation.field.as_str(), violation.reason, violation.reason.code()),
                ("title", Reason::InvisibleCharacter, "INVISIBLE_CHARACTER"),
                "{bad:?}"
            );
            assert_eq!(
                violation.message,
                format!(
                    "title contains the invisible character {code} at position {position}; remove it"
                ),
                "{bad:?}"
            );
            assert!(check(|v| parse_subtitle("subtitle", Some(bad), v)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn emoji_sequences_and_visible_format_signs_stay_text() {
        for good in [
            "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467} family dinner",
            "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308} parade",
            "\u{1F469}\u{1F3FD}\u{200D}\u{1F4BB} review",
            "\u{2764}\u{FE0F}\u{200D}\u{1F525}",
            "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F} match",
            "\u{0600}\u{0661}\u{0662}",
            "Passport",
        ] {
            assert_eq!(check(|v| Title::parse("title", good, v)).unwrap().as_str(), good);
        }
    }

    #[test]
    fn source_names_follow_the_documented_pattern() {
        assert!(check(|v| SourceName::parse("name", "docs-2_x", v)).is_ok());
        assert!(check(|v| SourceName::parse("name", &"a".repeat(50), v)).is_ok());
        for bad in ["", "Docs", "a.b", &"a".repeat(51), "_x"] {
            assert!(check(|v| SourceName::parse("name", bad, v)).is_err(), "{bad}");
        }
    }

    #[test]
    fn refs_and_topics_are_kept_exactly() {
        assert!(check(|v| SourceRef::parse("ref", "visa-1", v)).is_ok());
        assert!(check(|v| SourceRef::parse("ref", " visa", v)).is_err());
        assert!(check(|v| SourceRef::parse("ref", "", v)).is_err());
        assert!(check(|v| SourceRef::parse("ref", &"r".repeat(256), v)).is_err());
        assert!(check(|v| Topic::parse("topic", "", v)).is_ok());
        assert!(check(|v| Topic::parse("topic", &"t".repeat(65), v)).is_err());
    }
}
