//! Owns what an email says: a reminder (the event's title, details, due
//! moment, source and link, with Done and Remember as action links), an
//! address's confirmation, and a channel's test, each in its person's
//! language as text/plain and HTML (multipart/alternative, no images, light
//! and dark). Every reminder of an event to one address has a Message-ID of
//! its own checkpoint and refers to the first one, so that they form one
//! thread; each carries its one-click unsubscribe (RFC 8058), which pauses
//! the channel, except a confirmation's, which refuses every later
//! confirmation to the address.

use askama::Template;
use chrono::{DateTime, Utc};
use email_encoding::headers::{rfc2047, writer::EmailWriter};
use lettre::Message;
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};

use hado_words::Words;

use super::email::Mailer;
use crate::telegram::{done_label, due_words, words_for};
use hado_domain::channel::ChannelRecord;
use hado_domain::event_record::EventRecord;
use hado_domain::user::UserRecord;
use hado_engine::Engine;
use hado_engine::links::{ChannelLinkAction, LinkAction};

/// What a reminder says, which both its parts show.
struct Reminder<'a> {
    words: &'static Words,
    title: &'a str,
    subtitle: Option<&'a str>,
    due: &'a str,
    source: Option<&'a str>,
    deep_link: Option<&'a str>,
    done_label: &'a str,
    done_url: &'a str,
    remember_url: &'a str,
    footer: &'a str,
    stop_url: &'a str,
}

#[derive(Template)]
#[template(path = "email/reminder.txt")]
struct ReminderText<'a> {
    r: &'a Reminder<'a>,
}

#[derive(Template)]
#[template(path = "email/reminder.html")]
struct ReminderHtml<'a> {
    lang: &'a str,
    r: &'a Reminder<'a>,
}

/// A short message with at most one link (a confirmation, a test), which
/// both its parts show.
struct Notice<'a> {
    subject: &'a str,
    lead: &'a str,
    url: Option<&'a str>,
    button: &'a str,
    after: &'a str,
    /// The one-click unsubscribe, also shown as a link: its words and address.
    stop: Option<(&'a str, &'a str)>,
}

#[derive(Template)]
#[template(path = "email/notice.txt")]
struct NoticeText<'a> {
    n: &'a Notice<'a>,
}

#[derive(Template)]
#[template(path = "email/notice.html")]
struct NoticeHtml<'a> {
    lang: &'a str,
    n: &'a Notice<'a>,
}

/// The Message-ID of the reminder of `event_id` due at `due_at` to `channel`.
fn message_id(
    mailer: &Mailer,
    event_id: i64,
    channel: &ChannelRecord,
    due_at: DateTime<Utc>,
) -> String {
    format!("<reminder.{event_id}.{}.{}@{}>", channel.id, due_at.timestamp_millis(), mailer.domain)
}

/// The Message-ID of a confirmation or a test sent to `channel` now.
fn notice_id(mailer: &Mailer, kind: &str, channel: &ChannelRecord, now: DateTime<Utc>) -> String {
    format!("<{kind}.{}.{}@{}>", channel.id, now.timestamp_millis(), mailer.domain)
}

/// The headers every email shares, to `channel`'s address.
fn envelope(
    mailer: &Mailer,
    channel: &ChannelRecord,
    subject: &str,
    now: DateTime<Utc>,
) -> Result<lettre::message::MessageBuilder, String> {
    let to: Mailbox = channel.target.parse().map_err(|_| {
        format!("{:?} is not an email address; remove it and add it again", channel.target)
    })?;
    Ok(Message::builder()
        .from(mailer.from.clone())
        .to(to)
        .raw_header(self::subject(subject))
        .date(now.into())
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("Auto-Submitted"),
            "auto-generated".to_owned(),
        )))
}

/// The `Subject` header. lettre encodes (RFC 2047) only the words of a
/// subject that are not plain ASCII, so a title holding an ASCII word that
/// is itself an encoded-word (`=?utf-8?b?…?=`) would reach the mail app as
/// it is, and be shown decoded: words the title never said. A subject with
/// `=?` anywhere is encoded whole, so that it reads back as exactly itself;
/// any other stays as lettre writes it, readable in the raw message.
fn subject(text: &str) -> HeaderValue {
    let name = HeaderName::new_from_ascii_str("Subject");
    if !text.contains("=?") {
        return HeaderValue::new(name, text.to_owned());
    }
    let mut encoded = String::new();
    {
        // The line starts after the header's name, as lettre's own
        // encoder counts it, so that folding keeps lines within 76.
        let mut writer = EmailWriter::new(&mut encoded, "Subject: ".len(), 0, false);
        // Writing to a String cannot fail.
        let _ = rfc2047::encode(text, &mut writer);
    }
    HeaderValue::dangerous_new_pre_encoded(name, text.to_owned(), encoded)
}

/// The one-click unsubscribe headers, which pause the channel.
fn unsubscribe(
    builder: lettre::message::MessageBuilder,
    stop_url: &str,
) -> lettre::message::MessageBuilder {
    builder
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("List-Unsubscribe"),
            format!("<{stop_url}>"),
        ))
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("List-Unsubscribe-Post"),
            "List-Unsubscribe=One-Click".to_owned(),
        ))
}

fn finish(
    builder: lettre::message::MessageBuilder,
    text: impl Template,
    html: impl Template,
) -> Result<Message, String> {
    let text =
        text.render().map_err(|error| format!("the email's text failed to render: {error}"))?;
    let html =
        html.render().map_err(|error| format!("the email's HTML failed to render: {error}"))?;
    builder
        .multipart(MultiPart::alternative_plain_html(text, html))
        .map_err(|error| format!("the email could not be put together: {error}"))
}

/// The reminder of `event` due at `due_at` to `channel`; `first` is when
/// the event's first reminder to it was due, the root of its thread.
pub(crate) fn reminder(
    engine: &Engine,
    mailer: &Mailer,
    channel: &ChannelRecord,
    event: &EventRecord,
    due_at: DateTime<Utc>,
    first: Option<DateTime<Utc>>,
) -> Result<Message, String> {
    let words = words_for(event.locale);
    let now = engine.now();
    let title = event.spec.title.as_str();
    let due = due_words(event, now);
    let subject = format!("{title} — {due}");
    let done_label = done_label(event);
    let done_url = engine.action_url(event, LinkAction::Done);
    let remember_url = engine.action_url(event, LinkAction::Remember);
    let stop_url = engine.channel_link_url(channel, ChannelLinkAction::Pause);
    let footer = words.email_footer.replace("{address}", &channel.target);
    let subtitle = event.spec.subtitle.as_deref();
    let source =
        (event.source != hado_domain::fields::SourceName::MANUAL).then_some(event.source.as_str());
    let deep_link = event.spec.deep_link.as_ref().map(|link| link.as_str());
    let mut builder = envelope(mailer, channel, &subject, now)?
        .message_id(Some(message_id(mailer, event.id, channel, due_at)));
    if let Some(first) = first.filter(|first| *first < due_at) {
        let root = message_id(mailer, event.id, channel, first);
        builder = builder.in_reply_to(root.clone()).references(root);
    }
    let builder = unsubscribe(builder, &stop_url);
    let reminder = Reminder {
        words,
        title,
        subtitle,
        due: &due,
        source,
        deep_link,
        done_label: &done_label,
        done_url: &done_url,
        remember_url: &remember_url,
        footer: &footer,
        stop_url: &stop_url,
    };
    let text = ReminderText { r: &reminder };
    let html = ReminderHtml { lang: event.locale.as_str(), r: &reminder };
    finish(builder, text, html)
}

/// The message that asks `channel`'s address to confirm it, with a link
/// that works for a day.
pub(crate) fn confirmation(
    engine: &Engine,
    mailer: &Mailer,
    channel: &ChannelRecord,
    person: &UserRecord,
) -> Result<Message, String> {
    let words = words_for(person.locale);
    let url = engine.channel_link_url(channel, ChannelLinkAction::Confirm);
    // Its unsubscribe refuses every later confirmation to the address,
    // whoever asks for it.
    let refuse_url = engine.channel_link_url(channel, ChannelLinkAction::Refuse);
    let lead = words
        .email_confirm_body
        .replace("{login}", person.login.as_str())
        .replace("{address}", &channel.target);
    let confirm = Notice {
        subject: words.email_confirm_subject,
        lead: &lead,
        url: Some(&url),
        button: words.email_confirm_button,
        after: words.email_confirm_ignore,
        stop: Some((words.email_refuse_link, &refuse_url)),
    };
    notice(engine, mailer, channel, person, "confirm", &confirm)
}

/// A test message to a confirmed address.
pub(crate) fn test(
    engine: &Engine,
    mailer: &Mailer,
    channel: &ChannelRecord,
    person: &UserRecord,
) -> Result<Message, String> {
    let words = words_for(person.locale);
    let stop_url = engine.channel_link_url(channel, ChannelLinkAction::Pause);
    let test = Notice {
        subject: words.email_test_subject,
        lead: words.email_test,
        url: None,
        button: "",
        after: "",
        stop: Some((words.email_stop, &stop_url)),
    };
    notice(engine, mailer, channel, person, "test", &test)
}

/// A notice of `kind` to `channel`, with its one-click unsubscribe.
fn notice(
    engine: &Engine,
    mailer: &Mailer,
    channel: &ChannelRecord,
    person: &UserRecord,
    kind: &str,
    notice: &Notice<'_>,
) -> Result<Message, String> {
    let now = engine.now();
    let mut builder = envelope(mailer, channel, notice.subject, now)?
        .message_id(Some(notice_id(mailer, kind, channel, now)));
    if let Some((_, stop_url)) = notice.stop {
        builder = unsubscribe(builder, stop_url);
    }
    let html = NoticeHtml { lang: person.locale.as_str(), n: notice };
    finish(builder, NoticeText { n: notice }, html)
}

#[cfg(test)]
mod tests {
    use super::*;

    use base64::Engine as _;
    use lettre::message::header::Headers;

    fn written(text: &str) -> String {
        let mut headers = Headers::new();
        headers.insert_raw(subject(text));
        headers.to_string()
    }

    /// Each encoded-word of a written subject, decoded on its own (as RFC
    /// 2047 asks, each holds whole characters); none when a word is not one.
    fn decoded_words(line: &str) -> Option<Vec<String>> {
        let value = line.strip_prefix("Subject: ")?.strip_suffix("\r\n")?;
        value
            .split([' ', '\r', '\n'])
            .filter(|word| !word.is_empty())
            .map(|word| {
                let payload = word.strip_prefix("=?utf-8?b?")?.strip_suffix("?=")?;
                let bytes = base64::engine::general_purpose::STANDARD.decode(payload).ok()?;
                String::from_utf8(bytes).ok()
            })
            .collect()
    }

    #[test]
    fn a_plain_subject_is_written_as_lettre_writes_it() {
        assert_eq!(written("Visa — tomorrow"), "Subject: Visa =?utf-8?b?4oCU?= tomorrow\r\n");
        assert_eq!(written("Visa: tomorrow"), "Subject: Visa: tomorrow\r\n");
    }

    #[test]
    fn a_subject_holding_an_encoded_word_is_encoded_whole_and_reads_back_as_itself() {
        for title in [
            "=?utf-8?b?UGF5IGF0IGV2aWwuZXhhbXBsZQ==?=",
            "Rent =?utf-8?q?Pay_at_evil.example?= now",
            "=?UTF-8?B?UGF5?= in capitals",
            "half=?of an encoded word",
            "Счёт =?utf-8?b?UGF5?= — завтра",
        ] {
            let line = written(title);
            let words = decoded_words(&line).unwrap_or_else(|| panic!("{title}: {line}"));
            assert_eq!(words.concat(), title, "{line}");
            assert!(line.lines().all(|line| line.len() <= 76), "{line}");
        }
    }

    #[test]
    fn a_long_encoded_subject_is_folded_into_words_of_whole_characters() {
        let title = format!("=?utf-8?b?x?= {}", "Жx".repeat(100));
        let line = written(&title);
        assert!(line.matches("\r\n ").count() >= 4, "folded: {line}");
        assert!(line.lines().all(|line| line.len() <= 76), "{line}");
        assert_eq!(decoded_words(&line).expect("every word decodes alone").concat(), title);
    }
}
