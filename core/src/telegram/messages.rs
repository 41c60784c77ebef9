//! What the bot writes: a reminder's text with its [done label] [Remember]
//! [Open] buttons, and a due moment or an instant in the person's zone and
//! language.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use hado_words::wording::{self, Lang};
use hado_words::{self as words, Words};

use hado_domain::event_record::EventRecord;
use hado_domain::profile::Locale;
use hado_domain::state::State;
use hado_engine::Engine;
use hado_engine::error::CoreError;

/// The language of a person's replies, from their profile.
pub(super) fn lang(locale: Locale) -> Lang {
    match locale {
        Locale::En => Lang::En,
        Locale::Ru => Lang::Ru,
    }
}

/// The words of a person's replies.
pub(crate) fn words_for(locale: Locale) -> &'static Words {
    words::for_lang(lang(locale))
}

/// The event's due moment in words, in its person's zone and language.
pub(crate) fn due_words(event: &EventRecord, now: DateTime<Utc>) -> String {
    let lang = lang(event.locale);
    let today = now.with_timezone(&event.zone).date_naive();
    // A date's due moment is the end of its day, so the day comes from the date.
    let day = event.spec.due.at.day_in(event.zone);
    let time = event
        .spec
        .due
        .at
        .has_time_of_day()
        .then(|| event.spec.due.at.moment_in(event.zone).with_timezone(&event.zone).time());
    wording::due_in_words(lang, today, day, time, event.lifecycle.state == State::Overdue)
}

/// What the event's Done says: its own label, or Done in its person's language.
pub(crate) fn done_label(event: &EventRecord) -> String {
    match &event.spec.done_label {
        Some(label) => label.as_str().to_owned(),
        None => event.locale.default_done_label().to_owned(),
    }
}

/// An instant as the event's person reads it: "Mon 14 Dec 08:00".
pub(super) fn local(event: &EventRecord, instant: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let local = instant.with_timezone(&event.zone);
    words_for(event.locale).day_and_time(
        now.with_timezone(&event.zone).date_naive(),
        local.date_naive(),
        Some(local.time()),
    )
}

/// A reminder's text and buttons for `chat_id`; the buttons' ids are
/// stored first, bound to that chat.
pub(crate) async fn reminder(
    engine: &Engine,
    event: &EventRecord,
    chat_id: i64,
) -> Result<(String, Value), CoreError> {
    let words = words_for(event.locale);
    let now = engine.now();
    let mut text = format!("⏰ {}", event.spec.title.as_str());
    if let Some(subtitle) = &event.spec.subtitle {
        text.push_str(&format!("\n{subtitle}"));
    }
    text.push_str(&format!("\n{}", due_words(event, now)));
    let done_label = done_label(event);
    let [done, remember, tomorrow, next_week] =
        engine.store_reminder_buttons(event, chat_id).await?;
    let mut keyboard = vec![
        json!([{ "text": done_label, "callback_data": format!("b:{done}") }, { "text": words.remember, "callback_data": format!("b:{remember}") }]),
        json!([{ "text": words.remember_tomorrow, "callback_data": format!("b:{tomorrow}") }, { "text": words.remember_next_week, "callback_data": format!("b:{next_week}") }]),
    ];
    if let Some(link) = &event.spec.deep_link {
        keyboard.push(json!([{ "text": words.open_link, "url": link.as_str() }]));
    }
    Ok((text, Value::Array(keyboard)))
}
