//! Owns an email address as Hado keeps it and hands it to the mail server:
//! one plain mailbox at a domain on the internet, in the form plain SMTP
//! carries, parsed once when a person adds it.

use std::fmt;
use std::net::Ipv4Addr;

use idna::uts46::{AsciiDenyList, DnsLength, Hyphens, Uts46};

use crate::text::{quoted, refuse_hidden_characters, trim_text};
use crate::violations::{Reason, Violations};

/// The field every refusal names.
const FIELD: &str = "address";
/// RFC 5321 section 4.5.3.1's maxima, in octets: a local part, a domain,
/// and a path (the address in its angle brackets, 256, less the brackets).
/// A label's is RFC 1035's. The path's is the one that binds a domain: with
/// a local part and its `@`, a domain can be at most 252 octets long.
const LOCAL_PART_MAX: usize = 64;
const DOMAIN_MAX: usize = 255;
const LABEL_MAX: usize = 63;
const ADDRESS_MAX: usize = 254;

/// An email address that a mail server delivers as it is written: a local
/// part of ASCII letters, digits and `atext` symbols with single dots
/// between them, `@`, and a domain name with at least one dot.
///
/// Refused, because a mailer would not deliver them where they seem to go:
/// a quoted local part (`"a b"@example.com`), an address literal
/// (`a@[127.0.0.1]`) or an IP address, source routing through another
/// server (`victim%other.example@relay.example`, and `!` bang paths), a
/// domain with no dot (`root@localhost`: a name on the mail server's own
/// network), a label that starts or ends with `-`, and anything beyond
/// RFC 5321's lengths. A local part outside ASCII is refused too: lettre
/// sends one only with SMTPUTF8 (RFC 6531), when the operator's mail server
/// announces it, and otherwise fails the send before `RCPT TO`, which
/// the outbox would take for a mail server out of reach; and Cyrillic or
/// Greek lookalikes would let one address pass for another in Settings.
///
/// Kept in one form, so that the same address typed twice is one channel
/// and what Settings shows is what the mailer sends: the local part in
/// lower case (as Hado always kept it: RFC 5321 lets a server tell `Anna`
/// from `anna`, but mail services do not), and the domain in lower case
/// with international labels in their ASCII form (UTS 46, as browsers
/// read host names): `anna@Bücher.example` is `anna@xn--bcher-kva.example`,
/// which every mail server carries without extensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmailAddress(String);

impl EmailAddress {
    /// Reads an address as a person typed it, trimmed; every refusal names
    /// the field `address`.
    pub fn parse(raw: &str) -> Result<Self, Violations> {
        let mut violations = Violations::default();
        let address = read(trim_text(raw), &mut violations);
        violations.into_result(address)
    }

    /// The address as it is kept and mailed.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for EmailAddress {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

fn read(text: &str, violations: &mut Violations) -> Option<EmailAddress> {
    if text.is_empty() {
        violations.refuse(
            FIELD,
            Reason::Required,
            "address is required: the email address reminders go to",
        );
        return None;
    }
    if refuse_hidden_characters(FIELD, text, violations) {
        return None;
    }
    let checked = match text.chars().count() {
        // Checked first, so that a huge value is not worked through.
        count if count > ADDRESS_MAX => {
            Err(format!("is {count} characters long; at most {ADDRESS_MAX} are allowed"))
        }
        _ => mailbox(text),
    };
    match checked {
        Ok(address) => Some(address),
        Err(why) => {
            violations.refuse(
                FIELD,
                Reason::NotAnEmailAddress,
                format!("address {} {why}", quoted(text)),
            );
            None
        }
    }
}

/// The address in its kept form, or why it is refused (after the quoted
/// address).
fn mailbox(text: &str) -> Result<EmailAddress, String> {
    let Some((local_part, domain)) = text.rsplit_once('@') else {
        return Err("is not an email address such as anna@example.com".into());
    };
    let local_part = self::local_part(local_part)?;
    let domain = self::domain(domain)?;
    let address = format!("{local_part}@{domain}");
    if address.len() > ADDRESS_MAX {
        return Err(format!(
            "is {} characters long as mailed; at most {ADDRESS_MAX} are allowed",
            address.len()
        ));
    }
    Ok(EmailAddress(address))
}

/// RFC 5321's `Dot-string`, in ASCII, without the routing characters.
fn local_part(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("has nothing before the @".into());
    }
    if text.contains('"') {
        return Err("has a quoted local part; give a plain address such as anna@example.com".into());
    }
    if text.contains('@') {
        return Err("has more than one @".into());
    }
    if let Some(routing) = text.chars().find(|c| matches!(c, '%' | '!')) {
        return Err(format!(
            "routes mail through another server with '{routing}'; give the mailbox's own address"
        ));
    }
    if let Some(other) = text.chars().find(|c| !c.is_ascii()) {
        return Err(format!(
            "has the character '{other}' (U+{:04X}) before the @; give that part in ASCII, which every mail server delivers",
            u32::from(other)
        ));
    }
    if let Some(other) = text.chars().find(|c| *c != '.' && !is_atext(*c)) {
        return Err(format!(
            "has the character '{other}' before the @, which an address may not hold"
        ));
    }
    if text.starts_with('.') || text.ends_with('.') || text.contains("..") {
        return Err("has a dot at the start or the end of its local part, or two in a row".into());
    }
    if text.len() > LOCAL_PART_MAX {
        return Err(format!(
            "has a local part of {} characters; at most {LOCAL_PART_MAX} are allowed",
            text.len()
        ));
    }
    Ok(text.to_ascii_lowercase())
}

/// RFC 5322's `atext` with `%` and `!` already refused.
fn is_atext(character: char) -> bool {
    character.is_ascii_alphanumeric() || "#$&'*+-/=?^_`{|}~".contains(character)
}

/// A domain name on the internet, in lower case and ASCII.
fn domain(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("has nothing after the @".into());
    }
    if text.starts_with('[') {
        return Err(
            "names a server by its IP address; give a domain name such as example.com".into()
        );
    }
    // Letters, digits and hyphens only (STD3), mapped as UTS 46 maps them:
    // lower case, full-width forms and other dots folded, international
    // labels in their ASCII form after UTS 46's own checks (normalisation,
    // joiners, right-to-left labels).
    let ascii = to_ascii(text, Hyphens::Allow)
        .ok_or_else(|| "has a domain that is not a valid domain name".to_owned())?;
    let labels: Vec<&str> = ascii.split('.').collect();
    if labels.iter().any(|label| label.is_empty()) {
        return Err(
            "has an empty label in its domain: a dot at the start or the end, or two in a row"
                .into(),
        );
    }
    if let Some(long) = labels.iter().find(|label| label.len() > LABEL_MAX) {
        return Err(format!(
            "has a domain label of {} characters; at most {LABEL_MAX} are allowed",
            long.len()
        ));
    }
    if ascii.len() > DOMAIN_MAX {
        return Err(format!(
            "has a domain of {} characters; at most {DOMAIN_MAX} are allowed",
            ascii.len()
        ));
    }
    // The same mapping with hyphens checked, so that a label written in
    // another script (`-bücher`, whose ASCII form starts `xn--`) meets
    // the rule too.
    if to_ascii(text, Hyphens::CheckFirstLast).is_none() {
        return Err("has a domain label that starts or ends with '-'".into());
    }
    if labels.len() < 2 {
        return Err(format!(
            "has a domain with no dot ('{ascii}'), which names a host on the mail server's own network; give a full domain such as example.com"
        ));
    }
    if ascii.parse::<Ipv4Addr>().is_ok() {
        return Err(
            "names a server by its IP address; give a domain name such as example.com".into()
        );
    }
    if labels.last().is_some_and(|top| top.bytes().all(|byte| byte.is_ascii_digit())) {
        return Err("has a top-level domain of digits only, which no domain name has".into());
    }
    Ok(ascii)
}

/// UTS 46's ToASCII of `domain` with the STD3 rules and `hyphens`, or none
/// when it is not a domain name.
fn to_ascii(domain: &str, hyphens: Hyphens) -> Option<String> {
    Uts46::new()
        .to_ascii(domain.as_bytes(), AsciiDenyList::STD3, hyphens, DnsLength::Ignore)
        .ok()
        .map(|ascii| ascii.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The address as kept, or the one-line refusal.
    fn parsed(raw: &str) -> Result<String, String> {
        EmailAddress::parse(raw)
            .map(EmailAddress::into_string)
            .map_err(|violations| violations.to_string())
    }

    /// Each `(typed, kept)` is accepted as `kept`, an address lettre
    /// carries as plain ASCII.
    fn accepts(table: &[(&str, &str)]) {
        for (typed, kept) in table {
            assert_eq!(parsed(typed).as_deref(), Ok(*kept), "{typed:?}");
            let lettre: lettre::Address = kept.parse().expect("lettre reads it too");
            assert!(lettre.to_string().is_ascii(), "{kept}");
        }
    }

    /// Each `(typed, why)` is refused, naming the field `address` and
    /// saying `why`.
    fn refuses(table: &[(&str, &str)]) {
        for (typed, why) in table {
            let error = parsed(typed).expect_err(typed);
            assert!(error.starts_with("address "), "{typed:?}: {error}");
            assert!(error.contains(why), "{typed:?}: {error}");
        }
    }

    #[test]
    fn a_plain_address_is_trimmed_and_kept_in_lower_case() {
        accepts(&[
            ("  Anna@Example.COM ", "anna@example.com"),
            ("anna.k+hado@mail.example.com", "anna.k+hado@mail.example.com"),
            ("o'brien@example.ie", "o'brien@example.ie"),
            ("x_y-z#1@sub-domain.example", "x_y-z#1@sub-domain.example"),
            ("a@b.co", "a@b.co"),
            ("ab--cd@ab--cd.example", "ab--cd@ab--cd.example"),
            ("a@123.example", "a@123.example"),
        ]);
    }

    #[test]
    fn an_international_domain_is_kept_in_its_ascii_form() {
        accepts(&[
            ("anna@bücher.example", "anna@xn--bcher-kva.example"),
            ("Anna@BÜCHER.Example", "anna@xn--bcher-kva.example"),
            ("anna@XN--BCHER-KVA.example", "anna@xn--bcher-kva.example"),
            ("anna@пример.рф", "anna@xn--e1afmkfd.xn--p1ai"),
            ("anna@ＥＸＡＭＰＬＥ.com", "anna@example.com"),
            ("anna@example。com", "anna@example.com"),
            ("anna@bu\u{308}cher.example", "anna@xn--bcher-kva.example"),
            // What UTS 46 drops (a soft hyphen, a zero-width space) is
            // gone from what is kept, shown and mailed alike.
            ("anna@exa\u{AD}mple.com", "anna@example.com"),
            ("anna@exa\u{200B}mple.com", "anna@example.com"),
        ]);
    }

    #[test]
    fn the_longest_parts_rfc_5321_allows_are_accepted() {
        let local = "l".repeat(64);
        let label = "d".repeat(63);
        let longest = format!("{local}@{label}.example");
        accepts(&[(&longest, &longest)]);
        // 254 octets: 64, the @, and 189 of labels and dots.
        let path = format!("{local}@{label}.{label}.{}.example", "d".repeat(53));
        assert_eq!(path.len(), 254);
        accepts(&[(&path, &path)]);
        // An international label's ASCII form counts, not its letters.
        let long_idn = format!("a@{}ü.example", "b".repeat(55));
        assert_eq!(
            to_ascii(&long_idn[2..], Hyphens::Allow).unwrap().split('.').next().unwrap().len(),
            63
        );
        assert!(parsed(&long_idn).is_ok());
    }

    #[test]
    fn a_part_longer_than_rfc_5321_allows_is_refused() {
        let label = "d".repeat(63);
        refuses(&[
            (
                &format!("{}@example.com", "l".repeat(65)),
                "has a local part of 65 characters; at most 64 are allowed",
            ),
            (
                &format!("a@{}.example", "d".repeat(64)),
                "has a domain label of 64 characters; at most 63 are allowed",
            ),
            (
                &format!("{}@{label}.{label}.{}.example", "l".repeat(64), "d".repeat(54)),
                "is 255 characters long; at most 254 are allowed",
            ),
            (&format!("a@{}ü.example", "b".repeat(56)), "has a domain label of 64 characters"),
            (&format!("{}@example.com", "a".repeat(250)), "is 262 characters long; at most 254"),
        ]);
        // Letters that become more octets in ASCII: 140 typed, 280 mailed.
        let label = "中文域名测试例子网站邮件地址长度";
        let wide = format!("{}@{label}.{label}.{label}.{label}.example", "l".repeat(64));
        refuses(&[(&wide, "is 280 characters long as mailed; at most 254 are allowed")]);
    }

    #[test]
    fn a_quoted_local_part_is_refused() {
        refuses(&[
            (r#""a b"@example.com"#, "has a quoted local part"),
            (r#""anna"@example.com"#, "has a quoted local part"),
            (r#""a@b"@example.com"#, "has a quoted local part"),
            (r#"a"b@example.com"#, "has a quoted local part"),
            (r"a\ b@example.com", "has the character '\\' before the @"),
        ]);
    }

    #[test]
    fn an_address_literal_or_an_ip_address_is_refused() {
        refuses(&[
            ("a@[127.0.0.1]", "names a server by its IP address"),
            ("a@[IPv6:::1]", "names a server by its IP address"),
            ("a@127.0.0.1", "names a server by its IP address"),
            ("a@10.0.0.1", "names a server by its IP address"),
            ("a@0x7f.0.0.1", "has a top-level domain of digits only"),
            ("a@example.123", "has a top-level domain of digits only"),
            ("a@::1", "is not a valid domain name"),
        ]);
    }

    #[test]
    fn routing_through_another_server_is_refused() {
        refuses(&[
            ("victim%other.com@relay.example.com", "routes mail through another server with '%'"),
            (
                "other.example!victim@relay.example.com",
                "routes mail through another server with '!'",
            ),
            ("a@b%c.example.com", "is not a valid domain name"),
            ("a@b!c.example.com", "is not a valid domain name"),
            ("@relay.example:victim@other.example", "has more than one @"),
            ("relay.example:victim@other.example", "has the character ':' before the @"),
            ("a@b@example.com", "has more than one @"),
        ]);
    }

    #[test]
    fn a_domain_with_no_dot_is_refused_localhost_included() {
        refuses(&[
            ("root@localhost", "has a domain with no dot ('localhost')"),
            ("root@LOCALHOST", "has a domain with no dot ('localhost')"),
            ("anna@example", "has a domain with no dot ('example')"),
            ("postmaster@mailhost", "has a domain with no dot"),
            ("anna@bücher", "has a domain with no dot ('xn--bcher-kva')"),
        ]);
    }

    #[test]
    fn a_trailing_dot_or_an_empty_label_is_refused() {
        refuses(&[
            ("a@example.com.", "has an empty label in its domain"),
            ("a@.example.com", "has an empty label in its domain"),
            ("a@example..com", "has an empty label in its domain"),
            ("a@example。。com", "has an empty label in its domain"),
            ("a@", "has nothing after the @"),
            ("@example.com", "has nothing before the @"),
            ("a.@example.com", "has a dot at the start or the end of its local part"),
            (".a@example.com", "has a dot at the start or the end of its local part"),
            ("a..b@example.com", "two in a row"),
        ]);
    }

    #[test]
    fn a_label_that_starts_or_ends_with_a_hyphen_is_refused() {
        refuses(&[
            ("a@-example.com", "has a domain label that starts or ends with '-'"),
            ("a@example-.com", "has a domain label that starts or ends with '-'"),
            ("a@mail.-x-.example", "has a domain label that starts or ends with '-'"),
            ("a@-bücher.example", "has a domain label that starts or ends with '-'"),
            ("a@example.com-", "has a domain label that starts or ends with '-'"),
            ("a@ex_ample.com", "is not a valid domain name"),
            ("a@exa mple.com", "is not a valid domain name"),
            ("a@xn--.example", "is not a valid domain name"),
            ("a@xn--a.example", "is not a valid domain name"),
            ("a@exa\u{A0}mple.com", "is not a valid domain name"),
            ("a@exa\u{200D}mple.com", "is not a valid domain name"),
        ]);
    }

    #[test]
    fn a_local_part_outside_ascii_is_refused_lookalikes_included() {
        refuses(&[
            ("аnna@example.com", "has the character 'а' (U+0430) before the @"),
            ("annа@example.com", "has the character 'а' (U+0430) before the @"),
            ("ΑΝΝΑ@example.com", "(U+0391)"),
            ("ａnna@example.com", "(U+FF41)"),
            ("анна@пример.рф", "(U+0430)"),
            ("josé@example.com", "(U+00E9)"),
            ("an\u{A0}na@example.com", "(U+00A0)"),
        ]);
    }

    #[test]
    fn line_breaks_and_direction_controls_are_refused_anywhere() {
        let refused = |typed: &str, reason: Reason| {
            let violations = EmailAddress::parse(typed).expect_err(typed);
            let violation = violations.iter().next().unwrap();
            assert_eq!((violation.field.as_str(), violation.reason), (FIELD, reason), "{typed:?}");
        };
        for typed in [
            "anna@example.com\r\nBcc: mallory@evil.example",
            "anna\r@example.com",
            "anna@exam\nple.com",
            "anna@example.com\u{0}",
            "an\u{85}na@example.com",
        ] {
            refused(typed, Reason::ControlCharacter);
        }
        for typed in
            ["anna@\u{202E}moc.elpmaxe", "\u{2066}anna@example.com", "anna\u{200F}@example.com"]
        {
            refused(typed, Reason::BidiControl);
        }
        // A line break at the very end is trimmed like any white space.
        accepts(&[("anna@example.com\r\n", "anna@example.com")]);
    }

    #[test]
    fn every_refusal_names_the_field_address_with_a_reason() {
        let refused = |typed: &str| EmailAddress::parse(typed).expect_err(typed);
        let blank = refused("   ");
        let violation = blank.iter().next().unwrap();
        assert_eq!((violation.field.as_str(), violation.reason), ("address", Reason::Required));
        assert_eq!(blank.to_string(), "address is required: the email address reminders go to");
        for typed in ["anna", "a b@example.com", "root@localhost", "a@[127.0.0.1]"] {
            let violations = refused(typed);
            assert_eq!(violations.len(), 1, "{typed}");
            let violation = violations.iter().next().unwrap();
            assert_eq!(
                (violation.field.as_str(), violation.reason),
                ("address", Reason::NotAnEmailAddress),
                "{typed}"
            );
        }
        assert_eq!(
            refused("anna").to_string(),
            "address 'anna' is not an email address such as anna@example.com"
        );
        let huge = format!("{}@example.com", "a".repeat(10_000));
        assert!(refused(&huge).to_string().len() < 200, "a huge value is not echoed");
    }
}
