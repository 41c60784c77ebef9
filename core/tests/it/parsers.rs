//! Property tests for every parser that takes outside text: the three
//! `due_at` forms, `fire_at`, time zones, quiet hours, logins, refs, deep
//! links, action-link tokens and Telegram callback data. For each, any
//! input is answered without a panic, and every value accepted reads back
//! the same from its own text. 10,000 cases each by default;
//! `HADO_PROPTEST_CASES=1000000 cargo test -p hado-core --test it parsers`
//! runs longer.

use chrono::{DateTime, Duration, Utc};
use proptest::prelude::*;

use hado_core::telegram::button_id;
use hado_domain::fields::{DeepLink, Login, SourceRef, Title, Topic};
use hado_domain::profile::{format_clock_time, parse_clock_time, parse_time_zone};
use hado_domain::time::{Due, format_date, parse_date};
use hado_domain::violations::Violations;
use hado_engine::links::{LinkAction, LinkSigner, LinkedEvent};

fn config() -> ProptestConfig {
    let cases = std::env::var("HADO_PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(10_000);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Parses with a fresh collection of violations; `Some` only when it
/// accepted the value and reported nothing.
fn accepted<T>(parse: impl FnOnce(&mut Violations) -> Option<T>) -> Option<T> {
    let mut violations = Violations::default();
    let value = parse(&mut violations);
    match value {
        Some(value) if violations.is_empty() => Some(value),
        Some(_) => panic!("a value was returned together with violations: {violations}"),
        None => {
            assert!(!violations.is_empty(), "a refusal names its field");
            None
        }
    }
}

/// Text shaped like a due moment, with each part sometimes out of range.
fn due_like() -> impl Strategy<Value = String> {
    "[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2})?)?"
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn due_at_never_panics_and_reads_back_the_same(text in prop_oneof![due_like(), any::<String>()]) {
        if let Some(due) = accepted(|violations| Due::parse("due_at", &text, violations)) {
            let again = accepted(|violations| Due::parse("due_at", &due.text, violations)).expect("its own text is accepted");
            prop_assert_eq!(&again, &due);
            let stored = due.at.to_stored();
            prop_assert_eq!(hado_domain::time::DueAt::from_stored(&stored), Some(due.at));
        }
    }

    #[test]
    fn fire_at_never_panics_and_reads_back_the_same(text in prop_oneof!["[0-9]{4}-[0-9]{2}-[0-9]{2}", any::<String>()]) {
        if let Some(date) = accepted(|violations| parse_date("fire_at", &text, violations)) {
            let written = format_date(date);
            prop_assert_eq!(accepted(|violations| parse_date("fire_at", &written, violations)), Some(date));
        }
    }

    #[test]
    fn time_zones_never_panic_and_read_back_the_same(text in prop_oneof!["[A-Z][a-z]{2,9}/[A-Z][a-z_]{2,12}", any::<String>()]) {
        if let Some(zone) = accepted(|violations| parse_time_zone("tz", &text, violations)) {
            prop_assert_eq!(accepted(|violations| parse_time_zone("tz", zone.name(), violations)), Some(zone));
        }
    }

    #[test]
    fn quiet_hours_never_panic_and_read_back_the_same(text in prop_oneof!["[0-9]{2}:[0-9]{2}", any::<String>()]) {
        if let Some(time) = accepted(|violations| parse_clock_time("quiet_start", &text, violations)) {
            let written = format_clock_time(time);
            prop_assert_eq!(accepted(|violations| parse_clock_time("quiet_start", &written, violations)), Some(time));
        }
    }

    #[test]
    fn logins_never_panic_are_lowercase_and_read_back_the_same(text in prop_oneof!["[A-Za-z0-9][A-Za-z0-9._@-]{0,70}", any::<String>()]) {
        if let Some(login) = accepted(|violations| Login::parse("user", &text, violations)) {
            prop_assert_eq!(login.as_str(), text.to_ascii_lowercase());
            prop_assert_eq!(accepted(|violations| Login::parse("user", login.as_str(), violations)), Some(login.clone()));
        }
    }

    #[test]
    fn refs_topics_and_titles_never_panic_and_hold_no_control_characters(text in any::<String>()) {
        if let Some(source_ref) = accepted(|violations| SourceRef::parse("ref", &text, violations)) {
            prop_assert_eq!(source_ref.as_str(), text.as_str(), "a ref is kept exactly");
            prop_assert!(!source_ref.as_str().chars().any(|c| c.is_ascii_control() && c != '\t'));
        }
        if let Some(topic) = accepted(|violations| Topic::parse("topic", &text, violations)) {
            prop_assert_eq!(topic.as_str(), text.as_str());
        }
        if let Some(title) = accepted(|violations| Title::parse("title", &text, violations)) {
            prop_assert!(!title.as_str().chars().any(|c| c.is_ascii_control() && c != '\t'));
            prop_assert_eq!(accepted(|violations| Title::parse("title", title.as_str(), violations)), Some(title.clone()));
        }
    }

    #[test]
    fn deep_links_never_panic_and_are_absolute_urls_with_a_host(
        text in prop_oneof!["(https?|HTTP|ftp|javascript)://[a-z@:.0-9\\[\\]/?#%-]{0,40}", any::<String>()]
    ) {
        // A blank link means none: not a refusal.
        prop_assume!(!text.trim().is_empty());
        if let Some(link) = accepted(|violations| DeepLink::parse_optional("deep_link", Some(&text), violations)) {
            let url = url::Url::parse(link.as_str()).expect("an accepted link parses");
            prop_assert!(matches!(url.scheme(), "http" | "https"));
            prop_assert!(url.host_str().is_some_and(|host| !host.is_empty()));
            prop_assert!(url.username().is_empty() && url.password().is_none());
            prop_assert_eq!(accepted(|violations| DeepLink::parse_optional("deep_link", Some(link.as_str()), violations)), Some(link.clone()));
        }
    }

    #[test]
    fn action_link_tokens_never_panic_and_round_trip(
        garbage in any::<String>(),
        event_id in any::<i64>(),
        user_id in any::<i64>(),
        done in any::<bool>(),
        revision in any::<i64>(),
        seconds in 946_684_800i64..7_258_118_400,
        created_before in 0i64..100_000_000_000,
    ) {
        let signer = LinkSigner::new("link-secret-for-property-tests-0123456789");
        let now = DateTime::<Utc>::from_timestamp(seconds, 0).unwrap();
        prop_assert!(signer.check(&garbage, now).is_err(), "random text is never a valid link");
        let action = if done { LinkAction::Done } else { LinkAction::Remember };
        let created_at = now - Duration::milliseconds(created_before);
        let token = signer.issue(LinkedEvent { id: event_id, user_id, revision, created_at }, action, now);
        let link = signer.check(&token, now + Duration::days(1)).expect("a fresh link is valid");
        prop_assert_eq!((link.event_id, link.user_id, link.action, link.revision), (event_id, user_id, action, revision));
        prop_assert!(link.created.admits(created_at));
        prop_assert!(!link.created.admits(created_at + Duration::milliseconds(1)));
    }

    #[test]
    fn telegram_callback_data_never_panics_and_round_trips(data in any::<String>(), id in "[a-z2-9]{12}") {
        if let Some(found) = button_id(&data) {
            prop_assert_eq!(format!("b:{found}"), data.clone());
        }
        let data = format!("b:{id}");
        prop_assert_eq!(button_id(&data), Some(id.as_str()));
    }
}
