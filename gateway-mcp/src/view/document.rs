//! Owns the view's document: `page.html` with `page.css` and `page.js`
//! inline and the view's words (from `hado-words`, both languages) in a
//! JSON block, assembled once. Nothing in it names another origin, loads a
//! font or asks the network for anything, so it runs under MCP Apps'
//! default policy (`default-src 'none'`, inline script and style only).

use std::sync::LazyLock;

use hado_words::{EN, RU, Words};
use serde_json::{Map, Value, json};

const PAGE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

static DOCUMENT: LazyLock<String> = LazyLock::new(|| {
    let data = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "words": { "en": view_words(&EN), "ru": view_words(&RU) },
    });
    PAGE.replace("/*STYLE*/", STYLE)
        .replace("/*DATA*/", &inert_json(&data))
        .replace("/*SCRIPT*/", SCRIPT)
});

/// The whole document, the same for every person.
pub(super) fn html() -> &'static str {
    &DOCUMENT
}

/// The words the view says, by the names the script reads them by.
fn view_words(words: &Words) -> Value {
    let pairs: [(&str, &str); 30] = [
        ("overdue", words.overdue),
        ("today", words.today),
        ("preparing", words.preparing),
        ("scheduled", words.scheduled),
        ("nothing_due", words.nothing_due),
        ("remember", words.remember),
        ("remember_more", words.remember_more),
        ("remember_tomorrow", words.remember_tomorrow),
        ("remember_next_week", words.remember_next_week),
        ("undo", words.undo),
        ("feedback_done", words.feedback_done),
        ("feedback_remembered", words.feedback_remembered),
        ("feedback_reopened", words.feedback_reopened),
        ("feedback_unremembered", words.feedback_unremembered),
        ("quiet_until", words.quiet_until),
        ("from_source", words.from_source),
        ("open_link", words.open_link),
        ("saved", words.saved),
        ("core_down", words.core_down),
        ("event_not_found", words.event_not_found),
        ("event_withdrawn", words.event_withdrawn),
        ("event_deleted", words.event_deleted),
        ("zone_offer", words.zone_offer),
        ("zone_offer_device", words.zone_offer_device),
        ("zone_use", words.zone_use),
        ("zone_keep", words.zone_keep),
        ("view_loading", words.view_loading),
        ("view_failed", words.view_failed),
        ("view_more", words.view_more),
        ("inbox", words.inbox),
    ];
    Value::Object(
        pairs.iter().map(|(name, text)| ((*name).to_owned(), json!(text))).collect::<Map<_, _>>(),
    )
}

/// JSON that stays data inside a `<script>` element: no `<` (so no
/// `</script>` or `<!--`), `>` or `&` as themselves.
fn inert_json(value: &Value) -> String {
    value.to_string().replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_whole_and_self_contained() {
        let html = html();
        assert!(html.starts_with("<!doctype html>"), "an HTML5 document");
        for placeholder in ["/*STYLE*/", "/*DATA*/", "/*SCRIPT*/"] {
            assert!(!html.contains(placeholder), "{placeholder} was filled in");
        }
        let lowered = html.to_lowercase();
        // Nothing that reaches another origin, a font or the network.
        for outside in [
            "http:",
            "https:",
            "\"//",
            "'//",
            "`//",
            "=//",
            "url(",
            "@import",
            "@font-face",
            "<link",
            "<img",
            "<iframe",
            "<object",
            "<embed",
            "<base",
            "src=",
            "href=",
            "fetch(",
            "xmlhttprequest",
            "websocket",
            "eventsource",
            "sendbeacon",
            "import(",
            "100vh",
        ] {
            let at = lowered.find(outside);
            assert!(
                at.is_none(),
                "the document holds {outside:?}: …{}…",
                &html[at.unwrap_or(0)..][..60.min(html.len() - at.unwrap_or(0))]
            );
        }
        // Text from a source is never read as markup.
        for markup in [
            "innerhtml",
            "outerhtml",
            "insertadjacenthtml",
            "document.write",
            "eval(",
            "new function",
            "srcdoc",
        ] {
            assert!(!lowered.contains(markup), "the script uses {markup}");
        }
    }

    #[test]
    fn the_words_are_the_web_inboxs_in_both_languages() {
        let data: Value = {
            let html = html();
            let start = html.find(r#"id="hado-view">"#).unwrap() + r#"id="hado-view">"#.len();
            let end = start + html[start..].find("</script>").unwrap();
            serde_json::from_str(&html[start..end]).unwrap()
        };
        assert_eq!(data["words"]["en"]["remember"], EN.remember);
        assert_eq!(data["words"]["ru"]["remember"], RU.remember);
        assert_eq!(data["words"]["ru"]["overdue"], RU.overdue);
        assert!(
            data["words"]["en"]
                .as_object()
                .unwrap()
                .values()
                .all(|word| word.as_str().is_some_and(|w| !w.is_empty()))
        );
    }

    #[test]
    fn json_in_the_document_cannot_close_its_script() {
        let value = json!({ "title": "</script><script>alert(1)</script> & <!--" });
        let inert = inert_json(&value);
        assert!(!inert.contains('<') && !inert.contains('>') && !inert.contains('&'), "{inert}");
        assert_eq!(serde_json::from_str::<Value>(&inert).unwrap(), value);
    }
}
