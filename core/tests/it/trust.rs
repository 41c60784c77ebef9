//! What one person can make Hado do to someone who never agreed, tried as
//! an attacker would, on both backends: an old link against a row that
//! took a deleted row's place, a stranger's address flooded with
//! confirmations by removing and adding it (from one account or two), a
//! burst of tests, a test to a paused or unconfirmed channel, a recipient's
//! unsubscribe undone by the account, and an idempotency key sent again
//! with other fields. Mail goes to a real SMTP server on loopback.

use std::time::Duration;

use tonic::Code;
use tonic_types::StatusExt;

use hado_core::delivery;
use hado_engine::links::LinkAction;
use hado_proto::v1;
use hado_testing::{Backend, MailSink, TestCore, utc};

fn fields(title: &str, due_at: &str) -> v1::EventFields {
    v1::EventFields { title: title.into(), due_at: due_at.into(), ..Default::default() }
}

fn reason(status: &tonic::Status) -> String {
    status.get_details_error_info().map(|info| info.reason).unwrap_or_default()
}

/// Deleting the newest event (with its source) and adding another: the new
/// one gets a new id, and the old Done link is an expired link, never an
/// action on the new event.
async fn an_old_link_never_acts_on_a_newer_row(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let docs = core.source_token("docs").await;
    core.push(&docs, "anna", "visa", fields("Visa", "2026-12-14")).await;
    let newest = core.push(&docs, "anna", "permit", fields("Permit", "2026-12-20")).await;
    let anna = core.engine.user_for_login("anna").await.unwrap();
    let old_done = core.engine.issue_action_link(&anna, newest, LinkAction::Done).await.unwrap();

    core.engine.delete_source("docs").await.unwrap();
    let bills = core.source_token("bills").await;
    let replacement = core.push(&bills, "anna", "rent", fields("Rent", "2026-12-10")).await;
    assert!(replacement > newest, "an id is never handed out twice: {replacement} after {newest}");

    let mut links = core.links();
    let request = v1::ActionLinkRequest { token: old_done };
    for refused in [
        links.inspect_action_link(request.clone()).await.unwrap_err(),
        links.use_action_link(request).await.unwrap_err(),
    ] {
        assert_eq!(
            (refused.code(), reason(&refused)),
            (Code::FailedPrecondition, "LINK_EXPIRED".into())
        );
    }
    let rent = core.inbox_as("anna").get_event(v1::EventId { id: replacement }).await.unwrap();
    assert_ne!(rent.into_inner().state(), v1::EventState::Done, "the new event is untouched");
    core.stop().await;
}

/// Manual events too: the newest deleted for good is never reborn under
/// its id, on SQLite as on Postgres.
async fn a_deleted_newest_id_is_not_reused(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut anna = core.inbox_as("anna");
    let mut webhook_ids = Vec::new();
    for round in 0..2 {
        let url = format!("http://127.0.0.1:9/hook{round}");
        let added = anna.add_webhook(v1::AddWebhookRequest { url }).await.unwrap();
        let id = added.into_inner().channel.unwrap().id;
        anna.remove_channel(v1::ChannelId { id }).await.unwrap();
        webhook_ids.push(id);
    }
    assert!(webhook_ids[1] > webhook_ids[0], "channel ids: {webhook_ids:?}");
    core.stop().await;
}

struct Mailed {
    core: TestCore,
    sink: MailSink,
}

impl Mailed {
    async fn start(backend: &Backend) -> Option<Self> {
        let sink = MailSink::start("trust over email").await?;
        let core = TestCore::start_configured(backend, "2026-12-01T10:00:00Z", |config| {
            config.smtp = Some(sink.config("Hado <hado@example.com>"));
        })
        .await;
        Some(Self { core, sink })
    }

    async fn settle(&self) {
        hado_core::scheduler::drain(&self.core.engine).await.unwrap();
        delivery::drain(&self.core.deliverer()).await.unwrap();
        self.core.deliveries_settled().await;
    }

    async fn add(&self, login: &str, address: &str) -> Result<v1::Channel, tonic::Status> {
        let request = v1::AddEmailRequest { address: address.into() };
        let added = self.core.inbox_as(login).add_email(request).await?;
        Ok(added.into_inner().channel.unwrap())
    }

    async fn remove(&self, login: &str, id: i64) {
        self.core.inbox_as(login).remove_channel(v1::ChannelId { id }).await.unwrap();
    }

    /// `address` added for `login` and confirmed through its mail, then sent
    /// a test: the channel, and the token of the test's unsubscribe.
    async fn confirmed_and_tested(&self, login: &str, address: &str) -> (v1::Channel, String) {
        let channel = self.add(login, address).await.unwrap();
        self.settle().await;
        let sent = self.sink.received().len();
        let confirm = self.link(sent - 1, "/c/").await;
        let mut links = self.core.links();
        links.use_channel_link(v1::ChannelLinkRequest { token: confirm }).await.unwrap();
        let id = channel.id;
        self.core.inbox_as(login).test_channel(v1::ChannelId { id }).await.unwrap();
        self.settle().await;
        let test = self.sink.wait_for(sent + 1).await[sent].clone();
        let stop = test.header("list-unsubscribe").unwrap().trim_matches(['<', '>']).to_owned();
        (channel, stop.rsplit('/').next().unwrap().to_owned())
    }

    /// The token of the last link to `path` in the `index`th mail.
    async fn link(&self, index: usize, path: &str) -> String {
        let mail = self.sink.wait_for(index + 1).await[index].clone();
        let url = mail.links(path).remove(0);
        url.rsplit('/').next().unwrap().to_owned()
    }
}

/// Remove A, add B (which may take A's row): A's confirmation link is an
/// expired link and confirms nothing.
async fn a_confirmation_confirms_only_the_address_it_was_sent_to(backend: Backend) {
    let Some(mailed) = Mailed::start(&backend).await else { return };
    let first = mailed.add("anna", "first@example.com").await.unwrap();
    mailed.settle().await;
    let first_link = mailed.link(0, "/c/").await;
    mailed.remove("anna", first.id).await;
    let second = mailed.add("anna", "second@example.com").await.unwrap();
    assert_ne!(first.id, second.id);

    let refused = mailed
        .core
        .links()
        .use_channel_link(v1::ChannelLinkRequest { token: first_link })
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "LINK_EXPIRED", "{refused:?}");
    let channels = mailed.core.inbox_as("anna").list_channels(v1::ListChannelsRequest {}).await;
    let channels = channels.unwrap().into_inner().channels;
    assert!(channels.iter().all(|channel| channel.confirmed_at.is_none()), "{channels:?}");
    mailed.core.stop().await;
}

/// Adding and removing a stranger's address, from one account and from a
/// second one, sends it three confirmations a day and no more; one person
/// is capped across addresses too.
async fn a_stranger_gets_three_confirmations_a_day_whoever_asks(backend: Backend) {
    let Some(mailed) = Mailed::start(&backend).await else { return };
    let mut refusals = Vec::new();
    for round in 0..10 {
        let login = if round % 2 == 0 { "mallory" } else { "trudy" };
        match mailed.add(login, "Victim@EXAMPLE.com").await {
            Ok(channel) => {
                mailed.settle().await;
                mailed.remove(login, channel.id).await;
            }
            Err(status) => refusals.push(status),
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(mailed.sink.received().len(), 3, "three confirmations, whoever asked");
    assert_eq!(refusals.len(), 7);
    let refused = &refusals[0];
    assert_eq!(refused.code(), Code::ResourceExhausted);
    let wait = refused.get_details_retry_info().and_then(|info| info.retry_delay).unwrap();
    assert!(wait > Duration::from_secs(23 * 3600), "a day's window: {wait:?}");
    assert!(
        refused.get_details_localized_message().unwrap().message.contains("victim@example.com")
    );

    // A day later the address may be asked again.
    mailed.core.clock.set(utc("2026-12-02T10:00:01Z"));
    mailed.add("mallory", "victim@example.com").await.unwrap();

    // One person: ten confirmations a day across addresses.
    let mut sent = 0;
    let last = loop {
        match mailed.add("oscar", &format!("someone{sent}@example.com")).await {
            Ok(channel) => {
                mailed.remove("oscar", channel.id).await;
                sent += 1;
            }
            Err(status) => break status,
        }
    };
    assert_eq!((sent, last.code()), (10, Code::ResourceExhausted));
    mailed.core.stop().await;
}

/// A confirmation carries a one-click unsubscribe that refuses every later
/// confirmation to the address, whoever asks, until its owner signs up
/// with it; a pending confirmation to it is dropped.
async fn a_confirmations_unsubscribe_refuses_every_later_one(backend: Backend) {
    let Some(mailed) = Mailed::start(&backend).await else { return };
    mailed.add("mallory", "victim@example.com").await.unwrap();
    mailed.settle().await;
    let mail = mailed.sink.wait_for(1).await[0].clone();
    assert_eq!(mail.header("list-unsubscribe-post"), Some("List-Unsubscribe=One-Click"));
    let unsubscribe = mail.header("list-unsubscribe").unwrap().to_owned();
    assert!(mail.part("text/plain").contains(unsubscribe.trim_matches(['<', '>'])));
    let token = unsubscribe.trim_matches(['<', '>']).rsplit('/').next().unwrap().to_owned();
    let request = v1::ChannelLinkRequest { token };
    let mut links = mailed.core.links();
    let looked = links.inspect_channel_link(request.clone()).await.unwrap().into_inner();
    assert_eq!(looked.action(), v1::ChannelLinkAction::Refuse);
    // Removed before its recipient answers: the refusal still works.
    let channel = looked.channel.unwrap();
    mailed.remove("mallory", channel.id).await;
    let used = links.use_channel_link(request).await.unwrap().into_inner();
    assert!(used.channel.is_none());

    for login in ["mallory", "trudy"] {
        let refused = mailed.add(login, "victim@example.com").await.unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument);
        let violations = refused.get_details_bad_request().unwrap().field_violations;
        assert_eq!(violations[0].field, "address");
        assert_eq!(violations[0].reason, "ADDRESS_REFUSED_MAIL");
    }
    // A tagged form of the address is the same mailbox.
    let tagged = mailed.add("trudy", "victim+hado@example.com").await.unwrap_err();
    assert_eq!(tagged.code(), Code::InvalidArgument);
    // Its owner, signed in as that address, may still add it for
    // themselves; the refusal stands for everyone else.
    mailed.add("victim@example.com", "victim@example.com").await.unwrap();
    mailed.settle().await;
    assert_eq!(mailed.sink.wait_for(2).await.len(), 2);
    assert_eq!(
        mailed.add("mallory", "victim@example.com").await.unwrap_err().code(),
        Code::InvalidArgument
    );
    mailed.core.stop().await;
}

/// A recipient who unsubscribes while the account has the channel paused
/// still takes the confirmation back: turning it on sends a confirmation,
/// not reminders.
async fn an_unsubscribe_while_paused_still_takes_the_confirmation_back(backend: Backend) {
    let Some(mailed) = Mailed::start(&backend).await else { return };
    let (channel, stop) = mailed.confirmed_and_tested("anna", "anna@example.com").await;
    let mut links = mailed.core.links();
    let mut anna = mailed.core.inbox_as("anna");
    let off = v1::SetChannelEnabledRequest { id: channel.id, enabled: false };
    anna.set_channel_enabled(off).await.unwrap();
    let used = links.use_channel_link(v1::ChannelLinkRequest { token: stop }).await.unwrap();
    assert!(used.into_inner().channel.unwrap().confirmed_at.is_none());
    let on = v1::SetChannelEnabledRequest { id: channel.id, enabled: true };
    let resumed = anna.set_channel_enabled(on).await.unwrap().into_inner();
    assert!(resumed.confirmed_at.is_none());
    mailed.settle().await;
    let mails = mailed.sink.wait_for(3).await;
    assert!(mails[2].header("subject").unwrap().starts_with("Confirm your address"));
    mailed.core.stop().await;
}

/// Tests: five to a channel in ten minutes (removing and adding it again
/// does not reset that), twenty from a person; never to a paused or an
/// unconfirmed channel.
async fn tests_are_capped_and_only_go_where_they_may(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut anna = core.inbox_as("anna");
    let inbox = anna.clone();
    let add = |url: &str| {
        let (mut anna, url) = (inbox.clone(), url.to_owned());
        async move {
            let added = anna.add_webhook(v1::AddWebhookRequest { url }).await.unwrap();
            added.into_inner().channel.unwrap().id
        }
    };
    let hook = add("http://127.0.0.1:9/victim").await;
    for _ in 0..5 {
        anna.test_channel(v1::ChannelId { id: hook }).await.unwrap();
    }
    anna.remove_channel(v1::ChannelId { id: hook }).await.unwrap();
    let again = add("http://127.0.0.1:9/victim").await;
    let refused = anna.test_channel(v1::ChannelId { id: again }).await.unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted);
    let wait = refused.get_details_retry_info().and_then(|info| info.retry_delay).unwrap();
    assert!(wait <= Duration::from_secs(600) && wait > Duration::from_secs(500), "{wait:?}");
    assert!(refused.get_details_localized_message().unwrap().message.contains("min"));

    // The person's own cap, across channels.
    let mut sent = 5;
    let last = loop {
        let id = add(&format!("http://127.0.0.1:9/other{sent}")).await;
        match anna.test_channel(v1::ChannelId { id }).await {
            Ok(_) => sent += 1,
            Err(status) => break status,
        }
    };
    assert_eq!((sent, last.code()), (20, Code::ResourceExhausted));

    // Ten minutes on, a paused channel is still refused.
    core.clock.set(utc("2026-12-01T10:10:01Z"));
    anna.set_channel_enabled(v1::SetChannelEnabledRequest { id: again, enabled: false })
        .await
        .unwrap();
    let paused = anna.test_channel(v1::ChannelId { id: again }).await.unwrap_err();
    assert_eq!(paused.code(), Code::FailedPrecondition);
    assert!(paused.get_details_localized_message().unwrap().message.contains("paused"));
    core.stop().await;
}

/// A recipient's one-click unsubscribe pauses the channel and takes its
/// confirmation back: the account turning it on again sends a new
/// confirmation, and nothing else reaches the address until it is followed.
async fn a_recipients_unsubscribe_is_undone_only_by_the_recipient(backend: Backend) {
    let Some(mailed) = Mailed::start(&backend).await else { return };
    let (channel, stop) = mailed.confirmed_and_tested("anna", "anna@example.com").await;
    let mut links = mailed.core.links();
    let mut anna = mailed.core.inbox_as("anna");
    let paused = links.use_channel_link(v1::ChannelLinkRequest { token: stop }).await.unwrap();
    let paused = paused.into_inner().channel.unwrap();
    assert!(!paused.enabled && paused.confirmed_at.is_none(), "{paused:?}");

    let refused = anna.test_channel(v1::ChannelId { id: channel.id }).await.unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    let resumed = anna
        .set_channel_enabled(v1::SetChannelEnabledRequest { id: channel.id, enabled: true })
        .await
        .unwrap()
        .into_inner();
    assert!(resumed.confirmed_at.is_none(), "turned on, but waiting for its recipient");
    anna.create_event(fields("Visa", "2026-12-01T12:00")).await.unwrap();
    mailed.settle().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mails = mailed.sink.received();
    assert_eq!(mails.len(), 3, "a new confirmation and no reminder");
    assert!(mails[2].header("subject").unwrap().starts_with("Confirm your address"));
    mailed.core.stop().await;
}

/// The same idempotency key with the same fields is the first event; with
/// other fields it is refused, naming the key.
async fn an_idempotency_key_names_one_creation(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let anna = core.inbox_as("anna");
    let create = |title: &str| {
        let mut anna = anna.clone();
        let mut request = tonic::Request::new(fields(title, "2026-12-14"));
        request.metadata_mut().insert("idempotency-key", "create-visa-1".parse().unwrap());
        async move { anna.create_event(request).await }
    };
    let first = create("Visa").await.unwrap().into_inner();
    let (again, together) = tokio::join!(create("Visa"), create("Visa"));
    assert_eq!(again.unwrap().into_inner().id, first.id);
    assert_eq!(together.unwrap().into_inner().id, first.id);
    let refused = create("Passport").await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert!(refused.message().contains("create-visa-1"), "{}", refused.message());
    let violations = refused.get_details_bad_request().unwrap().field_violations;
    assert_eq!(violations[0].reason, "IDEMPOTENCY_KEY_REUSED");
    let listed = anna
        .clone()
        .list_events(v1::ListEventsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .events;
    assert_eq!(listed.len(), 1, "nothing was written twice");
    assert_eq!(listed[0].title, "Visa");
    core.stop().await;
}

hado_testing::on_both_backends!(
    an_old_link_never_acts_on_a_newer_row,
    a_deleted_newest_id_is_not_reused,
    a_confirmation_confirms_only_the_address_it_was_sent_to,
    a_stranger_gets_three_confirmations_a_day_whoever_asks,
    a_confirmations_unsubscribe_refuses_every_later_one,
    an_unsubscribe_while_paused_still_takes_the_confirmation_back,
    tests_are_capped_and_only_go_where_they_may,
    a_recipients_unsubscribe_is_undone_only_by_the_recipient,
    an_idempotency_key_names_one_creation
);
