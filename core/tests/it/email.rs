//! Reminders by email, end to end: a real SMTP server on loopback
//! (`hado_testing::MailSink`, on PyPI's `aiosmtpd`) receives what
//! core sends, and every message is parsed by Python's email package. An
//! address gets nothing but its confirmation until the link in it is
//! followed; a reminder keeps quiet hours, speaks the person's language,
//! carries both parts, the action links, the one-click unsubscribe and the
//! threading headers; a 451 is retried and a 550 pauses the channel; a
//! title holding an encoded-word reaches the mail app as exactly itself,
//! and an international domain is mailed in its ASCII form.

use std::time::Duration;

use tonic::Code;
use tonic_types::StatusExt;

use hado_core::delivery;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, Mail, MailSink, TestCore, utc};

async fn email_reminders_are_confirmed_threaded_and_paused_by_a_refusal(backend: Backend) {
    let Some(sink) = MailSink::start("reminders by email").await else { return };
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.smtp = Some(sink.config("Hado <hado@example.com>"));
    })
    .await;
    let mut anna = core.inbox_as("anna");
    let deliverer = core.deliverer();
    let settle = || async {
        hado_core::scheduler::drain(&core.engine).await.unwrap();
        delivery::drain(&deliverer).await.unwrap();
        core.deliveries_settled().await;
    };
    let inbox = anna.clone();
    let add = |address: &str| {
        let mut anna = inbox.clone();
        let address = address.to_owned();
        async move { anna.add_email(v1::AddEmailRequest { address }).await }
    };

    // Adding an address sends its confirmation and nothing else.
    let bad = add("anna").await.unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(bad.message().contains("address"), "{}", bad.message());
    let channel = add(" Anna@Example.com ").await.unwrap().into_inner().channel.unwrap();
    assert_eq!((channel.target.as_str(), channel.confirmed_at), ("anna@example.com", None));
    settle().await;
    let confirmation = &sink.wait_for(1).await[0];
    assert_eq!(confirmation.header("to"), Some("anna@example.com"));
    assert_eq!(confirmation.header("from"), Some("Hado <hado@example.com>"));
    assert!(confirmation.header("subject").unwrap().starts_with("Confirm your address"));
    assert_eq!(confirmation.kinds(), ["multipart/alternative", "text/plain", "text/html"]);
    let confirm_url = confirmation.links("/c/").remove(0);
    assert!(confirmation.part("text/html").contains(&confirm_url));
    assert_eq!(
        anna.test_channel(v1::ChannelId { id: channel.id }).await.unwrap_err().code(),
        Code::FailedPrecondition,
        "nothing but the confirmation goes to an unconfirmed address"
    );

    // The same address again resends, a few times an hour at most.
    for _ in 0..2 {
        assert!(add("anna@example.com").await.unwrap().into_inner().resent);
    }
    let refused = add("anna@example.com").await.unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted);
    assert!(refused.message().contains("anna@example.com"), "{}", refused.message());
    settle().await;
    assert_eq!(sink.wait_for(3).await.len(), 3);

    // A checkpoint before confirmation reaches no address.
    anna.create_event(v1::EventFields {
        title: "Visa".into(),
        due_at: "2026-12-05".into(),
        subtitle: Some("Passport office, window 3".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    core.clock.set(utc("2026-12-02T07:00:00Z"));
    settle().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sink.received().len(), 3, "three confirmations, no reminder");

    // Following the link confirms; only looking at it changes nothing.
    let token = confirm_url.rsplit('/').next().unwrap().to_owned();
    let links = core.links();
    let request = v1::ChannelLinkRequest { token };
    let looked = links.clone().inspect_channel_link(request.clone()).await.unwrap().into_inner();
    assert!(looked.channel.unwrap().confirmed_at.is_none(), "looking changes nothing");
    let used = links.clone().use_channel_link(request).await.unwrap().into_inner();
    assert!(used.channel.unwrap().confirmed_at.is_some());

    // In Russian, with quiet hours until 09:00: the checkpoint at 08:00
    // Berlin on the 4th (D−1) waits for the quiet to end.
    anna.update_profile(v1::UpdateProfileRequest {
        locale: Some("ru".into()),
        quiet_end: Some("09:00".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    core.clock.set(utc("2026-12-04T07:00:00Z"));
    settle().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        sink.received().len(),
        3,
        "nothing during quiet hours: {:?}",
        sink.received().last()
    );
    core.clock.set(utc("2026-12-04T08:00:00Z"));
    settle().await;
    let first = sink.wait_for(4).await[3].clone();
    let subject = first.header("subject").unwrap();
    assert!(subject.starts_with("Visa — завтра"), "{subject}");
    assert_eq!(first.header("list-unsubscribe-post"), Some("List-Unsubscribe=One-Click"));
    assert!(first.header("list-unsubscribe").unwrap().contains("http://127.0.0.1:8080/c/"));
    assert_eq!(first.header("auto-submitted"), Some("auto-generated"));
    let first_id = first.header("message-id").unwrap().to_owned();
    assert!(first.header("in-reply-to").is_none(), "the first reminder starts the thread");
    assert_eq!(first.kinds(), ["multipart/alternative", "text/plain", "text/html"]);
    let text = first.part("text/plain");
    assert!(text.contains("Passport office, window 3") && text.contains("Сделано"), "{text}");
    let actions = first.links("/a/");
    assert_eq!(actions.len(), 2, "Done and Remember: {text}");
    let html = first.part("text/html");
    assert!(html.contains(r#"<html lang="ru">"#) && html.contains("color-scheme"), "{html}");
    assert!(!html.contains("<img") && !html.contains("src="), "no images, nothing remote");
    for action in &actions {
        assert!(html.contains(action.as_str()), "the HTML part has the same links");
    }

    // The due day's reminder answers in the same thread.
    core.clock.set(utc("2026-12-05T08:00:00Z"));
    settle().await;
    let received = sink.wait_for(5).await;
    let second = received.last().unwrap();
    assert_ne!(second.header("message-id"), Some(first_id.as_str()));
    assert_eq!(second.header("in-reply-to"), Some(first_id.as_str()));
    assert_eq!(second.header("references"), Some(first_id.as_str()));

    // A mail server that is busy (451) is asked again later; one that
    // refuses an address for good (550) pauses its channel, saying why.
    let busy = add("busy@example.com").await.unwrap().into_inner().channel.unwrap();
    let refused = add("refused@example.com").await.unwrap().into_inner().channel.unwrap();
    delivery::drain(&deliverer).await.unwrap();
    let channels = testing::eventually("both attempts recorded", || {
        let mut anna = anna.clone();
        async move {
            let channels =
                anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
            let of = |id| channels.channels.iter().find(|channel| channel.id == id).cloned();
            let (busy, refused) = (of(busy.id)?, of(refused.id)?);
            (busy.last_error.is_some() && !refused.enabled).then_some((busy, refused))
        }
    })
    .await;
    let (busy, refused) = channels;
    assert!(busy.enabled && busy.last_error.unwrap().contains("451"));
    assert!(refused.last_error.unwrap().contains("550"));
    assert!(refused.last_error_at.is_some(), "the person sees when");
    assert!(core.pending_deliveries().await >= 1, "the 451 is retried");
    core.stop().await;
}

/// Core with a mail server on loopback, and anna's `address` added and
/// confirmed through the link in its confirmation (the first message).
async fn with_a_confirmed_address(backend: &Backend, sink: &MailSink, address: &str) -> TestCore {
    let core = TestCore::start_configured(backend, "2026-12-01T10:00:00Z", |config| {
        config.smtp = Some(sink.config("Hado <hado@example.com>"));
    })
    .await;
    let added = core
        .inbox_as("anna")
        .add_email(v1::AddEmailRequest { address: address.to_owned() })
        .await
        .unwrap()
        .into_inner();
    assert!(added.channel.unwrap().confirmed_at.is_none());
    settle(&core).await;
    let confirm_url = sink.wait_for(1).await[0].links("/c/").remove(0);
    let token = confirm_url.rsplit('/').next().unwrap().to_owned();
    let used = core.links().use_channel_link(v1::ChannelLinkRequest { token }).await.unwrap();
    assert!(used.into_inner().channel.unwrap().confirmed_at.is_some());
    core
}

/// Fires what is due and sends it, until every delivery has its outcome.
async fn settle(core: &TestCore) {
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    delivery::drain(&core.deliverer()).await.unwrap();
    core.deliveries_settled().await;
}

/// The reminder of an event titled `title`, the second message after the
/// address's confirmation.
async fn reminder_of(core: &TestCore, sink: &MailSink, title: &str) -> Mail {
    core.inbox_as("anna")
        .create_event(v1::EventFields {
            title: title.into(),
            due_at: "2026-12-05".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    core.clock.set(utc("2026-12-04T07:00:00Z"));
    settle(core).await;
    sink.wait_for(2).await.remove(1)
}

/// A title holding an encoded-word (RFC 2047) would be shown decoded by
/// a mail app if it reached the `Subject:` as it is: "Pay at
/// evil.example" in place of what the source wrote. The whole subject is
/// encoded instead, and reads back as exactly the title and its due words.
async fn a_title_holding_an_encoded_word_is_mailed_as_exactly_itself(backend: Backend) {
    let Some(sink) = MailSink::start("an encoded word in a title").await else { return };
    let core = with_a_confirmed_address(&backend, &sink, "anna@example.com").await;
    let injected = "=?utf-8?b?UGF5IGF0IGV2aWwuZXhhbXBsZQ==?=";
    let title = format!("Rent {injected} now");
    let reminder = reminder_of(&core, &sink, &title).await;

    let raw = reminder.raw_header("subject").expect("a subject");
    let words: Vec<&str> = raw.split_whitespace().collect();
    assert!(
        words.iter().all(|word| word.starts_with("=?utf-8?b?") && word.ends_with("?=")),
        "every word of the raw subject is an encoded-word: {raw:?}"
    );
    assert!(!raw.contains(injected), "the title's own encoded-word is not there raw: {raw:?}");
    let subject = reminder.header("subject").unwrap();
    assert!(subject.starts_with(&format!("{title} — ")), "{subject:?}");
    assert!(!subject.contains("Pay at evil.example"), "{subject:?}");
    core.stop().await;
}

/// An address at an international domain is kept, shown and mailed in
/// its ASCII form: `RCPT TO` and `To:` carry `xn--`, which every mail
/// server takes without SMTPUTF8. Addresses a mailer would deliver
/// somewhere else than they seem to are refused, and nothing is sent.
async fn an_international_domain_is_mailed_in_its_ascii_form(backend: Backend) {
    let Some(sink) = MailSink::start("an international domain").await else { return };
    let core = with_a_confirmed_address(&backend, &sink, " Anna@BÜCHER.example ").await;
    let ascii = "anna@xn--bcher-kva.example";
    let mut anna = core.inbox_as("anna");
    let channels = anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
    let targets: Vec<&str> =
        channels.channels.iter().map(|channel| channel.target.as_str()).collect();
    assert_eq!(targets, [ascii], "Settings shows what is mailed");

    let confirmation = sink.received().remove(0);
    assert_eq!(confirmation.recipients(), [ascii]);
    assert_eq!(confirmation.raw_header("to"), Some(ascii));
    let reminder = reminder_of(&core, &sink, "Visa").await;
    assert_eq!(reminder.recipients(), [ascii]);
    assert_eq!(reminder.raw_header("to"), Some(ascii));
    assert!(reminder.part("text/plain").contains(ascii), "the footer names the address");

    // The same address typed another way is the same channel.
    let again = anna
        .add_email(v1::AddEmailRequest { address: "anna@XN--BCHER-KVA.EXAMPLE".into() })
        .await
        .unwrap()
        .into_inner();
    assert!(!again.resent && again.channel.unwrap().confirmed_at.is_some());

    for refused in [
        r#""a b"@example.com"#,
        "a@[127.0.0.1]",
        "root@localhost",
        "victim%other.example@relay.example.com",
        "anna@example.com\r\nBcc: mallory@evil.example",
        "аnna@example.com",
    ] {
        let status =
            anna.add_email(v1::AddEmailRequest { address: refused.into() }).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{refused}");
        let violation = status.get_details_bad_request().unwrap().field_violations.remove(0);
        assert_eq!(violation.field, "address", "{refused}");
        assert!(!violation.reason.is_empty(), "{refused}: {violation:?}");
    }
    let channels = anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
    assert_eq!(channels.channels.len(), 1, "nothing else was added");
    settle(&core).await;
    assert_eq!(sink.received().len(), 2, "the confirmation and the reminder, nothing more");
    core.stop().await;
}

hado_testing::on_both_backends!(
    email_reminders_are_confirmed_threaded_and_paused_by_a_refusal,
    a_title_holding_an_encoded_word_is_mailed_as_exactly_itself,
    an_international_domain_is_mailed_in_its_ascii_form,
);
