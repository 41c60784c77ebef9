//! Reminders by email through the web inbox, as a person and their mail
//! app meet them: the address is added in Settings, confirmed from the
//! message that arrives (a real SMTP server on loopback, every message
//! parsed by Python's email package), and a checkpoint's reminder carries
//! Done, which a mail scanner's GET leaves alone and the person's POST
//! acts on. The one-click unsubscribe pauses the channel.

use reqwest::StatusCode;

use crate::web::Stack;
use hado_core::delivery;
use hado_proto::v1;
use hado_testing::{Backend, Mail, MailSink, utc};

/// The path of a link core wrote with its public address.
fn path_of(link: &str) -> String {
    let (_, rest) = link.split_once("://").unwrap_or_else(|| panic!("{link} is not a URL"));
    rest[rest.find('/').expect("a path")..].to_owned()
}

async fn an_address_added_in_settings_is_confirmed_reminded_and_answered(backend: Backend) {
    let Some(sink) = MailSink::start("reminders by email through the web inbox").await else {
        return;
    };
    let stack = Stack::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.smtp = Some(sink.config("Hado <hado@example.com>"));
    })
    .await;
    let (core, base, browser) = (&stack.core, &stack.base, &stack.client);
    let on = &stack;
    let get = move |path: String| async move { on.get(&path).await };
    let post = move |path: String, form: Vec<(&'static str, String)>| async move {
        let form: Vec<(&str, &str)> =
            form.iter().map(|(name, value)| (*name, value.as_str())).collect();
        let (status, _, page) = on.post(&path, &form).await;
        (status, page)
    };
    let deliverer = core.deliverer();
    let at = |instant: &'static str| {
        let deliverer = &deliverer;
        async move {
            // What is on its way first: a send still out when the manual
            // clock jumps would see its lease end and go again.
            core.deliveries_settled().await;
            core.clock.set(utc(instant));
            hado_core::scheduler::drain(&core.engine).await.unwrap();
            delivery::drain(deliverer).await.unwrap();
            core.deliveries_settled().await;
        }
    };
    let mut anna = core.inbox_as("anna");

    // Settings offers an address; a wrong one is named, a right one added.
    let (_, page) = get("/settings".into()).await;
    assert!(page.contains(r#"action="/settings/emails#email""#), "{page}");
    let (status, page) = post("/settings/emails".into(), vec![("address", "anna".into())]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        page.contains(r#"<p class="error" id="address-error">Give an email address such as"#),
        "{page}"
    );
    let (status, page) =
        post("/settings/emails".into(), vec![("address", "anna@example.com".into())]).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        page.contains("anna@example.com") && page.contains("waiting for confirmation"),
        "{page}"
    );
    // "Send the confirmation again" on its card, three times a day at most.
    assert!(page.contains("Send the confirmation again"), "{page}");
    for _ in 0..2 {
        let (status, _) =
            post("/settings/emails".into(), vec![("address", "anna@example.com".into())]).await;
        assert_eq!(status, StatusCode::OK);
    }
    let response = browser
        .post(format!("{base}/settings/emails"))
        .header("sec-fetch-site", "same-origin")
        .form(&[("address", "anna@example.com")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "86400");
    let page = response.text().await.unwrap();
    assert!(page.contains("try again in 24 h"), "{page}");
    let event = anna
        .create_event(v1::EventFields {
            title: "Visa".into(),
            due_at: "2026-12-05".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();

    // A checkpoint before the address is confirmed sends it nothing.
    at("2026-12-02T07:00:00Z").await;
    let received = sink.received();
    assert_eq!(received.len(), 3, "only the confirmations: {received:?}");
    assert!(received.iter().all(|mail| mail.header("subject").unwrap().starts_with("Confirm")));
    let confirm = path_of(&received[0].links("/c/")[0]);

    // A scanner's GET shows one button and confirms nothing; the POST does.
    let (status, page) = get(confirm.clone()).await;
    assert!(status == StatusCode::OK && page.contains(r#"<form method="post">"#), "{page}");
    let (_, settings) = get("/settings".into()).await;
    assert!(settings.contains("waiting for confirmation"));
    let (status, page) = post(confirm.clone(), vec![]).await;
    assert!(
        status == StatusCode::OK && page.contains("Confirmed: reminders go to anna@example.com"),
        "{page}"
    );
    let (_, settings) = get("/settings".into()).await;
    assert!(!settings.contains("waiting for confirmation"), "{settings}");

    // The next two checkpoints remind, in one thread.
    at("2026-12-04T07:00:00Z").await;
    at("2026-12-05T07:00:00Z").await;
    let reminders: Vec<Mail> = sink
        .received()
        .into_iter()
        .filter(|mail| mail.header("message-id").unwrap().starts_with("<reminder."))
        .collect();
    assert_eq!(reminders.len(), 2, "{reminders:?}");
    let root = reminders[0].header("message-id").unwrap();
    assert_eq!(reminders[1].header("in-reply-to"), Some(root));
    assert_eq!(reminders[1].header("references"), Some(root));
    assert!(reminders[1].header("subject").unwrap().starts_with("Visa — today"));

    // Done: the scanner's GET changes nothing, the person's POST closes it.
    let done = path_of(&reminders[1].links("/a/")[0]);
    let (status, page) = get(done.clone()).await;
    assert!(status == StatusCode::OK && page.contains("Mark as done?"), "{page}");
    let state = || {
        let mut anna = core.inbox_as("anna");
        async move {
            let event = anna.get_event(v1::EventId { id: event.id }).await.unwrap();
            event.into_inner().state()
        }
    };
    assert_ne!(state().await, v1::EventState::Done);
    let (status, page) = post(done, vec![]).await;
    assert!(status == StatusCode::OK && page.contains("Marked as done."), "{page}");
    assert_eq!(state().await, v1::EventState::Done);
    at("2026-12-05T13:00:00Z").await;
    assert_eq!(sink.received().len(), 5, "nothing more once it is done");

    // The mail app's one-click unsubscribe (RFC 8058) is a POST from its
    // server: no browser headers, the fixed body. It pauses the channel.
    let unsubscribe = reminders[1].header("list-unsubscribe").unwrap();
    let unsubscribe = path_of(unsubscribe.trim_matches(|c| c == '<' || c == '>'));
    let (_, page) = get(unsubscribe.clone()).await;
    assert!(page.contains(r#"<form method="post">"#), "{page}");
    let one_click = browser
        .post(format!("{base}{unsubscribe}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(one_click.status(), StatusCode::OK);
    let channels = anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
    assert!(channels.email_available);
    let id = channels.channels[0].id;
    assert!(!channels.channels[0].enabled, "paused by the unsubscribe");

    // The unsubscribe took the confirmation back: turned on again from
    // Settings, the address is sent a new confirmation, and nothing else
    // (not even a test) until its recipient follows it.
    assert!(channels.channels[0].confirmed_at.is_none(), "only its recipient can resume it");
    let (status, _) = post(format!("/settings/channels/{id}/on"), vec![]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, page) = post(format!("/settings/channels/{id}/test"), vec![]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("is not confirmed yet"), "{page}");
    delivery::drain(&deliverer).await.unwrap();
    let again = sink.wait_for(6).await.pop().unwrap();
    assert!(again.header("subject").unwrap().starts_with("Confirm your address"), "{again:?}");
    let confirm = path_of(&again.links("/c/").remove(0));
    let (status, page) = post(confirm, vec![]).await;
    assert!(status == StatusCode::OK && page.contains("Confirmed"), "{page}");

    // Tested and removed from Settings like the other channels.
    let (status, _) = post(format!("/settings/channels/{id}/test"), vec![]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    delivery::drain(&deliverer).await.unwrap();
    let test = sink.wait_for(7).await.pop().unwrap();
    assert!(test.part("text/plain").contains("This is a test message from Hado"), "{test:?}");
    let (status, _) = post(format!("/settings/channels/{id}/remove"), vec![]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let channels = anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
    assert!(channels.channels.is_empty());

    stack.stop().await;
}

hado_testing::on_both_backends!(an_address_added_in_settings_is_confirmed_reminded_and_answered);
