//! gRPC integration tests: a real tonic client against core on an ephemeral
//! port, on SQLite and on Postgres.

use tonic::Code;
use tonic_types::StatusExt;

use hado_proto::v1::{
    self, EventFields, EventId, EventKey, GetProfileRequest, IngestListRequest, ListEventsRequest,
    MarkAckRequest, SourceEvent, UpdateEventRequest, UpdateProfileRequest, UpsertEventsRequest,
    UserLogin, WithdrawEventsRequest,
};
use hado_testing::{self as testing, Backend, TestCore, source_event};

fn fields(title: &str, due_at: &str) -> EventFields {
    EventFields { title: title.into(), due_at: due_at.into(), ..EventFields::default() }
}

fn push(events: Vec<SourceEvent>) -> UpsertEventsRequest {
    UpsertEventsRequest { events }
}

fn active() -> ListEventsRequest {
    ListEventsRequest {
        state: None,
        archive: false,
        limit: None,
        after: None,
        ..Default::default()
    }
}

async fn the_auth_matrix(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let docs_token = core.source_token("docs").await;
    let mail_token = core.source_token("mail").await;

    // No token, an unknown token, and each wrong kind of token are all UNAUTHENTICATED.
    let channel = core.channel();
    let mut bare = v1::ingest_client::IngestClient::new(channel.clone());
    assert_eq!(bare.upsert_events(push(vec![])).await.unwrap_err().code(), Code::Unauthenticated);
    let unknown_source = "hado_src_".to_owned() + &"0".repeat(64);
    assert_eq!(
        core.ingest(&unknown_source).upsert_events(push(vec![])).await.unwrap_err().message(),
        "unknown source token"
    );
    let unknown_agent = "hado_agent_".to_owned() + &"0".repeat(64);
    assert_eq!(
        core.agent(&unknown_agent).list_events(active()).await.unwrap_err().message(),
        "unknown agent token"
    );
    assert_eq!(
        core.agent(&docs_token).list_events(active()).await.unwrap_err().code(),
        Code::Unauthenticated
    );
    assert_eq!(
        core.ingest(testing::ADMIN_TOKEN).upsert_events(push(vec![])).await.unwrap_err().code(),
        Code::Unauthenticated
    );
    let mut admin_as_source = v1::admin_client::AdminClient::with_interceptor(
        channel.clone(),
        testing::Bearer::new(&docs_token, None),
    );
    assert_eq!(
        admin_as_source.list_users(v1::ListUsersRequest {}).await.unwrap_err().code(),
        Code::Unauthenticated
    );
    let mut gateway_as_admin = v1::admin_client::AdminClient::with_interceptor(
        channel.clone(),
        testing::Bearer::new(testing::GATEWAY_TOKEN, None),
    );
    assert_eq!(
        gateway_as_admin.list_users(v1::ListUsersRequest {}).await.unwrap_err().code(),
        Code::Unauthenticated
    );
    // The gateway credential without a user, or with a malformed one, is refused.
    let mut gateway_alone = v1::inbox_client::InboxClient::with_interceptor(
        channel.clone(),
        testing::Bearer::new(testing::GATEWAY_TOKEN, None),
    );
    assert_eq!(
        gateway_alone.list_events(active()).await.unwrap_err().code(),
        Code::Unauthenticated
    );
    assert_eq!(
        core.inbox_as("Anna Smith").list_events(active()).await.unwrap_err().code(),
        Code::InvalidArgument
    );

    // A source sees only its own events; the other source's key is simply a different key.
    let pushed = core
        .ingest(&docs_token)
        .upsert_events(push(vec![source_event("anna", "visa", "Visa", "2026-12-14")]))
        .await
        .unwrap();
    let visa_id = pushed.get_ref().results[0].id;
    let mail_view = core
        .ingest(&mail_token)
        .list_events(IngestListRequest { user: "anna".into(), refs: vec![] })
        .await
        .unwrap();
    assert!(mail_view.get_ref().events.is_empty());
    let mail_withdraw = core
        .ingest(&mail_token)
        .withdraw_events(WithdrawEventsRequest {
            keys: vec![EventKey {
                user: "anna".into(),
                r#ref: "visa".into(),
                topic: String::new(),
            }],
        })
        .await
        .unwrap();
    assert!(!mail_withdraw.get_ref().results[0].found);
    assert_eq!(
        core.inbox_as("anna")
            .get_event(EventId { id: visa_id })
            .await
            .unwrap()
            .get_ref()
            .state()
            .word(),
        "preparing"
    );

    // Another user's id is "not found", never "forbidden".
    for status in [
        core.inbox_as("bob").get_event(EventId { id: visa_id }).await.unwrap_err(),
        core.inbox_as("bob").mark_done(EventId { id: visa_id }).await.unwrap_err(),
        core.inbox_as("bob")
            .mark_ack(MarkAckRequest { id: visa_id, until: None })
            .await
            .unwrap_err(),
        core.inbox_as("bob").delete_event(EventId { id: visa_id }).await.unwrap_err(),
    ] {
        assert_eq!(
            (status.code(), status.message()),
            (Code::NotFound, format!("event {visa_id} not found").as_str())
        );
    }

    // The user may close but not change another source's event.
    let status = core
        .inbox_as("anna")
        .update_event(UpdateEventRequest {
            id: visa_id,
            title: Some("Mine".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition);
    assert_eq!(status.message(), "this event belongs to source docs; only docs can change it");
    assert_eq!(
        core.inbox_as("anna").delete_event(EventId { id: visa_id }).await.unwrap_err().code(),
        Code::FailedPrecondition
    );
    assert_eq!(
        core.inbox_as("anna").get_event(EventId { id: visa_id }).await.unwrap().get_ref().title,
        "Visa"
    );

    // Agent tokens: issued by the operator, revoked and re-issued tokens stop at once.
    let first = core
        .admin()
        .issue_agent_token(UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    assert!(first.starts_with("hado_agent_"));
    assert_eq!(
        core.agent(&first).get_event(EventId { id: visa_id }).await.unwrap().get_ref().id,
        visa_id
    );
    let second = core
        .admin()
        .issue_agent_token(UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    assert_eq!(
        core.agent(&first).list_events(active()).await.unwrap_err().code(),
        Code::Unauthenticated
    );
    assert_eq!(core.agent(&second).list_events(active()).await.unwrap().get_ref().events.len(), 1);
    // An agent may not manage agent tokens; the inbox may.
    let status =
        core.agent(&second).issue_agent_token(v1::IssueMyAgentTokenRequest {}).await.unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied);
    assert!(
        core.inbox_as("anna")
            .get_agent_token(v1::GetAgentTokenRequest {})
            .await
            .unwrap()
            .get_ref()
            .issued
    );
    assert!(
        core.admin()
            .revoke_agent_token(UserLogin { login: "anna".into() })
            .await
            .unwrap()
            .get_ref()
            .revoked
    );
    assert_eq!(
        core.agent(&second).list_events(active()).await.unwrap_err().code(),
        Code::Unauthenticated
    );
    let third = core
        .inbox_as("anna")
        .issue_agent_token(v1::IssueMyAgentTokenRequest {})
        .await
        .unwrap()
        .into_inner()
        .token;
    assert_eq!(
        core.agent(&third)
            .get_profile(v1::GetProfileRequest::default())
            .await
            .unwrap()
            .get_ref()
            .login,
        "anna"
    );
    assert!(
        core.inbox_as("anna")
            .revoke_agent_token(v1::RevokeMyAgentTokenRequest {})
            .await
            .unwrap()
            .get_ref()
            .revoked
    );
    assert_eq!(
        core.agent(&third).get_profile(v1::GetProfileRequest::default()).await.unwrap_err().code(),
        Code::Unauthenticated
    );

    // A rotated source token stops the old one.
    core.admin().rotate_source_token(v1::SourceName { name: "docs".into() }).await.unwrap();
    assert_eq!(
        core.ingest(&docs_token)
            .list_events(IngestListRequest { user: "anna".into(), refs: vec![] })
            .await
            .unwrap_err()
            .code(),
        Code::Unauthenticated
    );

    core.stop().await;
}

async fn batches_are_validated_whole_and_applied_atomically(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let token = core.source_token("docs").await;
    let mut ingest = core.ingest(&token);

    let mut bad_link = source_event("anna", "b", "B", "2026-12-14");
    bad_link.fields.as_mut().unwrap().deep_link = Some("javascript:alert(1)".into());
    let mut late_fire = source_event("anna", "c", "C", "2026-12-14");
    late_fire.fields.as_mut().unwrap().fire_at = Some("2026-12-20".into());
    let batch = vec![
        source_event("anna", "a", "A", "2026-12-14"),
        bad_link,
        late_fire,
        source_event("anna", "d", &"x".repeat(10 * 1024 * 1024), "2026-12-14"),
    ];
    let status = ingest.upsert_events(push(batch)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let details = status.get_error_details();
    let violations: Vec<(String, String)> = details
        .bad_request()
        .expect("field violations are attached")
        .field_violations
        .iter()
        .map(|violation| (violation.field.clone(), violation.description.clone()))
        .collect();
    assert_eq!(violations.len(), 3);
    assert_eq!(violations[0].0, "events[1].deep_link");
    assert_eq!(
        violations[1],
        (
            "events[2].fire_at".into(),
            "events[2]: fire_at 2026-12-20 is after the due day 2026-12-14".into()
        )
    );
    assert_eq!(
        violations[2],
        (
            "events[3].title".into(),
            "events[3]: title is 10485760 characters long; at most 200 are allowed".into()
        )
    );
    assert!(status.message().len() < 1000, "the message does not echo the huge title");
    let listed =
        ingest.list_events(IngestListRequest { user: "anna".into(), refs: vec![] }).await.unwrap();
    assert!(listed.get_ref().events.is_empty(), "nothing of an invalid batch is written");

    let too_many: Vec<_> = (0..1001)
        .map(|index| source_event("anna", &format!("r{index}"), "T", "2026-12-14"))
        .collect();
    let status = ingest.upsert_events(push(too_many)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(status.message(), "events holds 1001 items; a batch holds at most 1000");

    let full: Vec<_> = (0..1000)
        .map(|index| source_event("anna", &format!("r{index}"), "T", "2026-12-14"))
        .collect();
    let reply = ingest.upsert_events(push(full)).await.unwrap();
    assert_eq!(reply.get_ref().results.len(), 1000);
    assert!(reply.get_ref().results.iter().all(|result| result.outcome().word() == "created"));

    // Bad filters and bad profile values get precise errors.
    let mut inbox = core.inbox_as("anna");
    let status = inbox
        .list_events(ListEventsRequest {
            state: Some("soon".into()),
            archive: false,
            limit: None,
            after: None,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        status.message(),
        "state 'soon' is not an active state: use scheduled, preparing, today or overdue"
    );
    let status = inbox
        .update_profile(UpdateProfileRequest {
            tz: Some("Mars/Base".into()),
            quiet_start: Some("7pm".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("tz 'Mars/Base' is not a time zone"));
    assert!(status.message().contains("quiet_start '7pm' must be a time of day as HH:MM"));
    assert_eq!(
        inbox.get_profile(v1::GetProfileRequest::default()).await.unwrap().get_ref().tz,
        "Europe/Berlin"
    );

    core.stop().await;
}

async fn upsert_semantics_seen_from_outside(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let token = core.source_token("docs").await;
    let mut ingest = core.ingest(&token);
    let mut inbox = core.inbox_as("anna");

    let id = ingest
        .upsert_events(push(vec![source_event("anna", "visa", "Visa", "2026-12-14")]))
        .await
        .unwrap()
        .get_ref()
        .results[0]
        .id;
    let done = inbox.mark_done(EventId { id }).await.unwrap().into_inner();
    assert_eq!((done.state().word(), done.closed_as.as_deref()), ("done", Some("Done")));
    assert_eq!(
        inbox.mark_done(EventId { id }).await.unwrap().into_inner(),
        done,
        "done again is a no-op"
    );

    // The same due moment keeps it done; the source sees it closed.
    let same = ingest
        .upsert_events(push(vec![source_event("anna", "visa", "Visa (renewed)", "2026-12-14")]))
        .await
        .unwrap();
    assert_eq!(
        (same.get_ref().results[0].outcome().word(), same.get_ref().results[0].state().word()),
        ("updated", "done")
    );
    let seen = ingest
        .list_events(IngestListRequest { user: "anna".into(), refs: vec!["visa".into()] })
        .await
        .unwrap();
    assert_eq!(seen.get_ref().events[0].state().word(), "done");

    // A new due moment reopens it.
    let moved = ingest
        .upsert_events(push(vec![source_event("anna", "visa", "Visa (renewed)", "2026-12-21")]))
        .await
        .unwrap();
    assert_eq!(
        (moved.get_ref().results[0].outcome().word(), moved.get_ref().results[0].state().word()),
        ("rescheduled", "preparing")
    );

    // Withdraw, then re-push: revived under the same id.
    let withdrawn = ingest
        .withdraw_events(WithdrawEventsRequest {
            keys: vec![EventKey {
                user: "anna".into(),
                r#ref: "visa".into(),
                topic: String::new(),
            }],
        })
        .await
        .unwrap();
    assert_eq!(withdrawn.get_ref().results[0].state().word(), "withdrawn");
    assert!(inbox.list_events(active()).await.unwrap().get_ref().events.is_empty());
    // Gone from the inbox, but still readable as withdrawn; Done does not
    // reach it, and says why with one code.
    assert_eq!(
        inbox.get_event(EventId { id }).await.unwrap().into_inner().state().word(),
        "withdrawn"
    );
    let refused = inbox.mark_done(EventId { id }).await.unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert_eq!(
        refused.get_details_error_info().map(|info| (info.reason, info.metadata["source"].clone())),
        Some(("EVENT_WITHDRAWN".into(), "docs".into()))
    );
    assert!(refused.message().contains("withdrawn by its source docs"), "{}", refused.message());
    let revived = ingest
        .upsert_events(push(vec![source_event("anna", "visa", "Visa (renewed)", "2026-12-21")]))
        .await
        .unwrap();
    assert_eq!(
        (revived.get_ref().results[0].outcome().word(), revived.get_ref().results[0].id),
        ("revived", id)
    );

    // The user's own events: defaults, computed fields, edits and the archive.
    let mut own = fields("Dentist", "2026-12-03T15:00");
    own.after_due = Some("expire".into());
    let created = inbox.create_event(own).await.unwrap().into_inner();
    assert_eq!(
        (created.source.as_str(), created.editable, created.fire_at.as_str()),
        ("manual", true, "2026-11-03")
    );
    assert_eq!(
        (
            created.due_at.as_str(),
            hado_proto::convert::rfc3339(created.due_instant.as_ref()).as_str(),
            created.all_day
        ),
        ("2026-12-03T15:00", "2026-12-03T14:00:00Z", false)
    );
    assert_eq!(created.done_label, "Done");
    let flight =
        inbox.create_event(fields("Flight", "2026-12-24T10:00+09:00")).await.unwrap().into_inner();
    assert_eq!(flight.due_at, "2026-12-24T10:00+09:00", "due_at echoes the form it was given");
    let docs_event = inbox.get_event(EventId { id }).await.unwrap().into_inner();
    assert!(!docs_event.editable);

    // The event expires with the clock; the archive says how it closed.
    core.clock.set(testing::utc("2026-12-03T14:30:00Z"));
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    let archive = inbox
        .list_events(ListEventsRequest {
            state: None,
            archive: true,
            limit: None,
            after: None,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .events;
    assert_eq!(archive.len(), 1);
    assert_eq!(
        (archive[0].state().word(), archive[0].closed_as.as_deref()),
        ("expired", Some("Expired"))
    );
    // Rescheduling the expired event through UpdateEvent reopens it.
    let reopened = inbox
        .update_event(UpdateEventRequest {
            id: created.id,
            due_at: Some("2026-12-05T15:00".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((reopened.state().word(), reopened.closed_at), ("preparing", None));

    // Russian users get Russian defaults; the profile reports local time.
    let profile = inbox
        .update_profile(UpdateProfileRequest { locale: Some("ru".into()), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(profile.local_time, "2026-12-03T15:30 (Thursday)");
    let acked =
        inbox.mark_ack(MarkAckRequest { id: created.id, until: None }).await.unwrap().into_inner();
    assert_eq!(acked.done_label, "Сделано");
    assert!(acked.quiet_until.is_some());
    let deleted = inbox.delete_event(EventId { id: created.id }).await.unwrap().into_inner();
    assert_eq!(deleted.state().word(), "withdrawn");
    // The archive lists it first, as deleted, in the person's language.
    let archive = inbox
        .list_events(ListEventsRequest {
            state: None,
            archive: true,
            limit: None,
            after: None,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .events;
    let gone = &archive[0];
    assert_eq!(
        (gone.id, gone.state().word(), gone.closed_as.as_deref()),
        (created.id, "withdrawn", Some("Удалено"))
    );
    assert_eq!(
        gone.closed_at.as_ref().map(hado_proto::convert::rfc3339_at).as_deref(),
        Some("2026-12-03T14:30:00Z"),
        "when it was deleted"
    );

    core.stop().await;
}

async fn remember_until_a_morning_passes_over_checkpoints_then_reminds(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    // A channel, so that a checkpoint that fires is recorded as a delivery.
    core.plant_webhook("anna", "http://127.0.0.1:9/hook").await;
    let mut inbox = core.inbox_as("anna");
    let visa = inbox.create_event(fields("Visa", "2026-12-14")).await.unwrap().into_inner();
    let remembered = inbox
        .mark_ack(MarkAckRequest { id: visa.id, until: Some("2026-12-10".into()) })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        remembered.quiet_until.as_ref().map(hado_proto::convert::rfc3339_at).as_deref(),
        Some("2026-12-10T07:00:00Z"),
        "that morning, 08:00 in Berlin"
    );
    let event = inbox.get_event(EventId { id: visa.id }).await.unwrap().into_inner();
    assert_eq!(
        event.next_reminder_at.as_ref().map(hado_proto::convert::rfc3339_at).as_deref(),
        Some("2026-12-10T07:00:00Z")
    );

    // Bad choices name `until` and change nothing.
    for (until, says) in [
        ("2026-12-01", "is not after today"),
        ("someday", "next_checkpoint, tomorrow, next_week or a day"),
    ] {
        let refused = inbox
            .mark_ack(MarkAckRequest { id: visa.id, until: Some(until.into()) })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{until}");
        let violations =
            refused.get_details_bad_request().expect("field violations").field_violations;
        assert_eq!(
            (violations[0].field.as_str(), violations[0].description.contains(says)),
            ("until", true),
            "{violations:?}"
        );
    }
    assert_eq!(
        inbox.get_event(EventId { id: visa.id }).await.unwrap().into_inner().quiet_until,
        remembered.quiet_until
    );

    // The week-before checkpoint (the 7th) is passed over; the chosen morning reminds.
    core.clock.set(testing::utc("2026-12-09T12:00:00Z"));
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    assert!(
        inbox.get_event(EventId { id: visa.id }).await.unwrap().into_inner().deliveries.is_empty(),
        "nothing before the chosen morning"
    );
    core.clock.set(testing::utc("2026-12-10T07:30:00Z"));
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    let event = inbox.get_event(EventId { id: visa.id }).await.unwrap().into_inner();
    let fired: Vec<(&str, String, &str)> = event
        .deliveries
        .iter()
        .map(|line| {
            (
                line.kind().word(),
                hado_proto::convert::rfc3339(line.due_at.as_ref()),
                line.status().word(),
            )
        })
        .collect();
    assert_eq!(fired, [("checkpoint", "2026-12-10T07:00:00Z".to_owned(), "pending")]);
    assert!(event.needs_attention);
    assert_eq!(
        event.next_reminder_at.as_ref().map(hado_proto::convert::rfc3339_at).as_deref(),
        Some("2026-12-11T07:00:00Z"),
        "then the ladder goes on: three days before"
    );
    core.stop().await;
}

async fn lists_narrow_by_text_and_source(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut inbox = core.inbox_as("anna");
    for (title, due_at) in
        [("Виза в Японию", "2026-12-10"), ("Dentist", "2026-12-20"), ("Winter tyres", "2027-01-10")]
    {
        inbox.create_event(fields(title, due_at)).await.unwrap();
    }
    let docs = core.source_token("docs").await;
    core.push(&docs, "anna", "visa", fields("Visa renewal", "2026-12-30")).await;
    let titles =
        |list: v1::EventList| list.events.into_iter().map(|event| event.title).collect::<Vec<_>>();
    let narrowed = |text: Option<&str>, source: Option<&str>| ListEventsRequest {
        text: text.map(str::to_owned),
        source: source.map(str::to_owned),
        ..active()
    };
    assert_eq!(
        titles(inbox.list_events(narrowed(Some("ВИЗА"), None)).await.unwrap().into_inner()),
        ["Виза в Японию"],
        "any letter case, Cyrillic too"
    );
    assert_eq!(
        titles(inbox.list_events(narrowed(Some("visa"), Some("docs"))).await.unwrap().into_inner()),
        ["Visa renewal"]
    );
    assert_eq!(
        titles(inbox.list_events(narrowed(None, Some("manual"))).await.unwrap().into_inner()).len(),
        3
    );

    // Page by page, limit counts the matches; next goes on to the end.
    let mut pages = Vec::new();
    let mut after = None;
    loop {
        let page = inbox
            .list_events(ListEventsRequest {
                limit: Some(1),
                after: after.clone(),
                ..narrowed(Some("i"), None)
            })
            .await
            .unwrap()
            .into_inner();
        after = page.next.clone();
        pages.push(titles(page));
        if after.is_none() {
            break;
        }
    }
    assert_eq!(
        pages.concat(),
        ["Dentist", "Visa renewal", "Winter tyres"],
        "the matches came in order"
    );
    assert!(
        pages.iter().rev().skip(1).all(|page| page.len() == 1),
        "a page holds its limit of matches: {pages:?}"
    );

    // A search reads on past the events it reads at a time (a thousand):
    // every hundredth of 2,400 events matches.
    let mut ingest = core.ingest(&docs);
    for batch in 0..6 {
        let events = (batch * 400..(batch + 1) * 400)
            .map(|index| {
                let title = if index % 100 == 99 {
                    format!("Needle {index}")
                } else {
                    format!("Hay {index}")
                };
                source_event(
                    "anna",
                    &format!("hay-{index}"),
                    &title,
                    &format!("2027-{:02}-{:02}", index % 12 + 1, index % 28 + 1),
                )
            })
            .collect();
        ingest.upsert_events(v1::UpsertEventsRequest { events }).await.unwrap();
    }
    let first = inbox
        .list_events(ListEventsRequest { limit: Some(20), ..narrowed(Some("needle"), None) })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (first.events.len(), first.next.is_some()),
        (20, true),
        "twenty matches, and more may follow"
    );
    let rest = inbox
        .list_events(ListEventsRequest {
            limit: Some(20),
            after: first.next,
            ..narrowed(Some("needle"), None)
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((rest.events.len(), rest.next), (4, None));
    assert_eq!(
        titles(
            inbox.list_events(narrowed(Some("needle"), Some("docs"))).await.unwrap().into_inner()
        )
        .len(),
        24,
        "without a limit, every match"
    );
    for text in [None, Some("needle")] {
        let none = inbox
            .list_events(ListEventsRequest { limit: Some(0), ..narrowed(text, None) })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            (none.events.len(), none.next),
            (0, None),
            "a limit of 0 is an empty page, not every event"
        );
    }

    // Refusals name their field.
    for (request, field) in [
        (narrowed(Some(&"x".repeat(201)), None), "text"),
        (narrowed(None, Some("Not A Source")), "source"),
    ] {
        let refused = inbox.list_events(request).await.unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument);
        assert_eq!(refused.get_details_bad_request().unwrap().field_violations[0].field, field);
    }
    core.stop().await;
}

async fn refusals_carry_a_reason_and_the_persons_words(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let first = |status: tonic::Status| {
        status.get_details_bad_request().expect("field violations").field_violations.remove(0)
    };
    let missing = first(core.inbox_as("anna").create_event(fields("Visa", "")).await.unwrap_err());
    assert_eq!((missing.field.as_str(), missing.reason.as_str()), ("due_at", "REQUIRED"));
    assert!(
        missing.description.starts_with("due_at is required"),
        "the English stays precise: {}",
        missing.description
    );
    let words = missing.localized_message.expect("the person's words");
    assert_eq!(
        (words.locale.as_str(), words.message.as_str()),
        ("en", "Pick a due date, and a time if you like.")
    );

    let mut bob = core.inbox_as("bob");
    bob.update_profile(UpdateProfileRequest { locale: Some("ru".into()), ..Default::default() })
        .await
        .unwrap();
    let zone = first(
        bob.update_profile(UpdateProfileRequest {
            tz: Some("Mars/Base".into()),
            ..Default::default()
        })
        .await
        .unwrap_err(),
    );
    assert_eq!(zone.reason, "NOT_A_TIME_ZONE");
    let words = zone.localized_message.expect("the person's words");
    assert_eq!(
        (words.locale.as_str(), words.message.as_str()),
        ("ru", "Выберите часовой пояс из списка или введите город.")
    );
    // An event that is not the person's: EVENT_NOT_FOUND, and their words.
    let missing = bob.get_event(EventId { id: 9999 }).await.unwrap_err();
    assert_eq!((missing.code(), missing.message()), (Code::NotFound, "event 9999 not found"));
    assert_eq!(
        missing.get_details_error_info().map(|info| info.reason),
        Some("EVENT_NOT_FOUND".to_owned())
    );
    assert_eq!(
        missing.get_details_localized_message().map(|words| words.message),
        Some("Этого события нет в вашем инбоксе.".to_owned())
    );
    // A refusal with no stable reason keeps its English alone.
    let cursor = first(
        bob.list_events(ListEventsRequest { after: Some("nonsense".into()), ..active() })
            .await
            .unwrap_err(),
    );
    assert!(cursor.reason.is_empty() && cursor.localized_message.is_none(), "{cursor:?}");
    core.stop().await;
}

async fn reflection_and_health_answer(backend: Backend) {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut reflection = ServerReflectionClient::new(core.channel());
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut stream = reflection
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let reply = stream.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(services)) = reply.message_response else {
        panic!("a service list")
    };
    let names: Vec<_> = services.service.iter().map(|service| service.name.as_str()).collect();
    for expected in ["hado.v1.Inbox", "hado.v1.Ingest", "hado.v1.Admin", "grpc.health.v1.Health"] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }

    use tonic_reflection::pb::v1alpha::ServerReflectionRequest as AlphaServerReflectionRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient as AlphaClient;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest as AlphaRequest;
    let mut alpha = AlphaClient::new(core.channel());
    let request = AlphaServerReflectionRequest {
        host: String::new(),
        message_request: Some(AlphaRequest::ListServices(String::new())),
    };
    let mut stream =
        alpha.server_reflection_info(tokio_stream::iter([request])).await.unwrap().into_inner();
    assert!(
        stream.message().await.unwrap().unwrap().message_response.is_some(),
        "v1alpha answers too"
    );
    core.stop().await;
}

async fn action_links_act_once_as_the_events_user(backend: Backend) {
    use hado_engine::links::LinkAction;
    use v1::links_client::LinksClient;

    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let event = core
        .inbox_as("anna")
        .create_event(fields("Visa", "2026-12-14"))
        .await
        .unwrap()
        .into_inner();
    let anna = core.engine.user_for_login("anna").await.unwrap();
    let done = core.engine.issue_action_link(&anna, event.id, LinkAction::Done).await.unwrap();
    let request = |token: &str| v1::ActionLinkRequest { token: token.into() };

    // Only the gateway credential may call, and without naming a user.
    let mut as_agent = LinksClient::with_interceptor(
        core.channel(),
        testing::Bearer::new(testing::ADMIN_TOKEN, None),
    );
    assert_eq!(
        as_agent.inspect_action_link(request(&done)).await.unwrap_err().code(),
        Code::Unauthenticated
    );
    let mut links = LinksClient::with_interceptor(
        core.channel(),
        testing::Bearer::new(testing::GATEWAY_TOKEN, None),
    );

    let seen = links.inspect_action_link(request(&done)).await.unwrap().into_inner();
    assert_eq!(
        (seen.action().word(), seen.event.as_ref().unwrap().state().word()),
        ("done", "preparing")
    );
    assert_eq!(
        (
            seen.profile.as_ref().unwrap().login.as_str(),
            seen.profile.as_ref().unwrap().locale.as_str()
        ),
        ("anna", "en")
    );
    let used = links.use_action_link(request(&done)).await.unwrap().into_inner();
    assert_eq!(used.event.as_ref().unwrap().state().word(), "done");
    let again = links.use_action_link(request(&done)).await.unwrap().into_inner();
    assert_eq!(
        again.event.unwrap().closed_at,
        used.event.unwrap().closed_at,
        "a second use changes nothing"
    );

    let forged = links.use_action_link(request(&done.replace('.', "x."))).await.unwrap_err();
    assert_eq!(
        (forged.code(), forged.message()),
        (Code::Unauthenticated, "this link is not valid")
    );
    assert_eq!(forged.get_details_error_info().unwrap().reason, "LINK_NOT_VALID");
    assert!(forged.get_details_localized_message().is_none(), "nobody is known to say it to");
    // An expired link is genuine: the reason, and the words in its person's language.
    let profile = UpdateProfileRequest { locale: Some("ru".into()), ..Default::default() };
    core.inbox_as("anna").update_profile(profile).await.unwrap();
    core.clock.set(testing::utc("2026-12-31T10:00:01Z"));
    let expired = links.use_action_link(request(&done)).await.unwrap_err();
    assert_eq!(
        (expired.code(), expired.message()),
        (Code::FailedPrecondition, "this link expired on 2026-12-31 10:00:00 UTC")
    );
    let info = expired.get_details_error_info().unwrap();
    assert_eq!(
        (info.reason.as_str(), info.metadata["expired_at"].as_str()),
        ("LINK_EXPIRED", "2026-12-31T10:00:00+00:00")
    );
    let words = expired.get_details_localized_message().unwrap();
    assert_eq!(
        (words.locale.as_str(), words.message.as_str()),
        ("ru", hado_words::RU.link_expired)
    );
    core.stop().await;
}

/// Control characters, a bad deep link and a mixed-case login, on both
/// backends: NUL once reached Postgres and failed the whole batch with an
/// internal error, and a lone CR reached the calendar feed.
async fn hostile_text_is_refused_by_field_and_nothing_is_written(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut ingest = core.ingest(&core.source_token("docs").await);
    let mut links = Vec::new();
    for deep_link in
        ["https://@", "https://:80", "https://user:secret@example.com/", "https:///path"]
    {
        let mut item = source_event("anna", &format!("link{}", links.len()), "Link", "2026-12-14");
        item.fields.as_mut().unwrap().deep_link = Some(deep_link.into());
        links.push(item);
    }
    let mut subtitle = source_event("anna", "s", "Subtitle", "2026-12-14");
    subtitle.fields.as_mut().unwrap().subtitle = Some("one\r\nDTSTART:19700101".into());
    let mut batch = vec![
        source_event("anna", "nul", "Visa\0", "2026-12-14"),
        source_event("anna", "cr\r", "Visa\rX-INJECTED:1", "2026-12-14"),
        subtitle,
    ];
    batch.extend(links);
    let status = ingest.upsert_events(push(batch)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{}", status.message());
    let fields: Vec<String> = status
        .get_error_details()
        .bad_request()
        .unwrap()
        .field_violations
        .iter()
        .map(|violation| violation.field.clone())
        .collect();
    assert_eq!(
        fields,
        [
            "events[0].title",
            "events[1].ref",
            "events[1].title",
            "events[2].subtitle",
            "events[3].deep_link",
            "events[4].deep_link",
            "events[5].deep_link",
            "events[6].deep_link",
        ]
    );
    assert!(
        status.message().contains("title contains the control character U+0000"),
        "{}",
        status.message()
    );
    assert!(
        ingest
            .list_events(IngestListRequest { user: "anna".into(), refs: vec![] })
            .await
            .unwrap()
            .get_ref()
            .events
            .is_empty()
    );

    // Logins are not case sensitive: one person, one user.
    ingest
        .upsert_events(push(vec![source_event("Anna", "visa", "Visa", "2026-12-14")]))
        .await
        .unwrap();
    let listed = ingest
        .list_events(IngestListRequest { user: "ANNA".into(), refs: vec![] })
        .await
        .unwrap()
        .into_inner()
        .events;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        core.inbox_as("anna").list_events(active()).await.unwrap().get_ref().events.len(),
        1
    );
    core.stop().await;
}

/// A right-to-left override in a title would turn the rest of a reminder's
/// subject, page line or Telegram message around ("Invoice \u{202E}fdp.exe"
/// shows as "Invoice exe.pdf"): refused on the person's door and a
/// source's, with its reason and the person's words, and nothing written.
async fn a_bidi_control_in_a_title_is_refused_and_nothing_is_written(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let title = "Invoice \u{202E}fdp.exe";
    let mut anna = core.inbox_as("anna");
    let refused = anna.create_event(fields(title, "2026-12-14")).await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{}", refused.message());
    let violation = refused.get_details_bad_request().unwrap().field_violations.remove(0);
    assert_eq!((violation.field.as_str(), violation.reason.as_str()), ("title", "BIDI_CONTROL"));
    assert!(
        violation.description.starts_with(
            "title contains the bidirectional formatting character U+202E at position 9"
        ),
        "{}",
        violation.description
    );
    let words = violation.localized_message.expect("the person's words");
    assert_eq!(
        (words.locale.as_str(), words.message.as_str()),
        ("en", hado_words::EN.refusal_bidi)
    );
    let mut subtitle = fields("Invoice", "2026-12-14");
    subtitle.subtitle = Some("from \u{2067}the bank".into());
    let refused = anna.create_event(subtitle).await.unwrap_err();
    assert_eq!(refused.get_details_bad_request().unwrap().field_violations[0].field, "subtitle");
    assert!(anna.list_events(active()).await.unwrap().get_ref().events.is_empty());

    let mut ingest = core.ingest(&core.source_token("billing").await);
    let mut label = source_event("anna", "label", "Invoice", "2026-12-14");
    label.fields.as_mut().unwrap().done_label = Some("Paid\u{200F}".into());
    let batch = vec![source_event("anna", "invoice", title, "2026-12-14"), label];
    let refused = ingest.upsert_events(push(batch)).await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    let reasons: Vec<(String, String)> = refused
        .get_details_bad_request()
        .unwrap()
        .field_violations
        .into_iter()
        .map(|violation| (violation.field, violation.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            ("events[0].title".to_owned(), "BIDI_CONTROL".to_owned()),
            ("events[1].done_label".to_owned(), "BIDI_CONTROL".to_owned()),
        ]
    );
    let listed = ingest
        .list_events(IngestListRequest { user: "anna".into(), refs: vec![] })
        .await
        .unwrap()
        .into_inner()
        .events;
    assert!(listed.is_empty(), "nothing was written: {listed:?}");
    assert!(anna.list_events(active()).await.unwrap().get_ref().events.is_empty());
    core.stop().await;
}

async fn a_long_list_is_read_page_by_page(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut inbox = core.inbox_as("anna");
    // Five events, two of them due at the same moment: the order is due
    // moment, then id, and no page repeats or skips one.
    let mut created = Vec::new();
    for (title, due_at) in [
        ("A", "2026-12-05"),
        ("B", "2026-12-03"),
        ("C", "2026-12-03"),
        ("D", "2026-12-20"),
        ("E", "2027-01-02"),
    ] {
        created.push(inbox.create_event(fields(title, due_at)).await.unwrap().into_inner().id);
    }
    let mut seen = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let page = inbox
            .list_events(ListEventsRequest { limit: Some(2), after: after.clone(), ..active() })
            .await
            .unwrap()
            .into_inner();
        pages += 1;
        seen.extend(page.events.iter().map(|event| event.title.clone()));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["B", "C", "A", "D", "E"]);
    assert_eq!(pages, 3, "2 + 2 + 1: the last page is short and has no next");
    // A page that ends exactly at the end says so: no next, so no empty
    // page to ask for.
    let first_four = inbox
        .list_events(ListEventsRequest { limit: Some(4), ..active() })
        .await
        .unwrap()
        .into_inner();
    let last = inbox
        .list_events(ListEventsRequest { limit: Some(1), after: first_four.next, ..active() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((last.events.len(), last.next), (1, None));
    let whole = inbox
        .list_events(ListEventsRequest { limit: Some(5), ..active() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((whole.events.len(), whole.next), (5, None));
    // A made-up cursor is refused by name.
    let refused = inbox
        .list_events(ListEventsRequest { after: Some("tomorrow".into()), ..active() })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert_eq!(refused.get_details_bad_request().unwrap().field_violations[0].field, "after");
    core.stop().await;
}

async fn new_people_start_in_the_default_language(backend: Backend) {
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.default_locale = hado_domain::profile::Locale::Ru;
    })
    .await;
    // Seen first through the inbox, and first through a source's push.
    let mut inbox = core.inbox_as("anna");
    assert_eq!(
        inbox.get_profile(GetProfileRequest::default()).await.unwrap().into_inner().locale,
        "ru"
    );
    let docs = core.source_token("docs").await;
    core.push(&docs, "boris", "visa", fields("Visa", "2026-12-14")).await;
    let boris = core.inbox_as("boris").list_events(active()).await.unwrap().into_inner().events;
    assert_eq!(boris[0].done_label, "Сделано");
    // An existing person keeps their own choice.
    inbox
        .update_profile(UpdateProfileRequest { locale: Some("en".into()), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(
        inbox.get_profile(GetProfileRequest::default()).await.unwrap().into_inner().locale,
        "en"
    );
    core.stop().await;
}

/// A person's zone is the deployment's default until they choose one, the
/// default included: the web inbox and the agent's view offer theirs only
/// while it is. Seen through the gateway's credential and an agent token.
async fn the_zone_is_the_default_until_the_person_chooses_one(backend: Backend) {
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.default_zone = chrono_tz::Europe::Berlin;
    })
    .await;
    let mut inbox = core.inbox_as("anna");
    let profile = inbox.get_profile(GetProfileRequest::default()).await.unwrap().into_inner();
    assert_eq!((profile.tz.as_str(), profile.tz_is_default), ("Europe/Berlin", true));
    let token = agent_token(&core, "anna").await;
    let seen =
        core.agent(&token).get_profile(GetProfileRequest::default()).await.unwrap().into_inner();
    assert!(seen.tz_is_default, "an agent's call says it too");
    // Another setting leaves the zone as it was: still the default.
    let quiet = UpdateProfileRequest { quiet_start: Some("23:00".into()), ..Default::default() };
    assert!(inbox.update_profile(quiet).await.unwrap().into_inner().tz_is_default);
    // Keeping the default is a choice.
    let keep = UpdateProfileRequest { tz: Some("Europe/Berlin".into()), ..Default::default() };
    let kept = inbox.update_profile(keep).await.unwrap().into_inner();
    assert_eq!((kept.tz.as_str(), kept.tz_is_default), ("Europe/Berlin", false));
    assert!(
        !core
            .agent(&token)
            .get_profile(GetProfileRequest::default())
            .await
            .unwrap()
            .get_ref()
            .tz_is_default
    );
    // So is another zone, through the agent.
    let mut boris = core.inbox_as("boris");
    assert!(boris.get_profile(GetProfileRequest::default()).await.unwrap().get_ref().tz_is_default);
    let tokyo = UpdateProfileRequest { tz: Some("Asia/Tokyo".into()), ..Default::default() };
    let moved = core.agent(&agent_token(&core, "boris").await).update_profile(tokyo).await.unwrap();
    assert!(!moved.get_ref().tz_is_default);
    assert!(
        !boris.get_profile(GetProfileRequest::default()).await.unwrap().get_ref().tz_is_default
    );
    core.stop().await;
}

async fn agent_token(core: &TestCore, login: &str) -> String {
    let issued = core.admin().issue_agent_token(UserLogin { login: login.into() }).await;
    issued.unwrap().into_inner().token
}

async fn done_and_delete_can_be_undone(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut inbox = core.inbox_as("anna");
    let dentist =
        inbox.create_event(fields("Dentist", "2026-12-03T15:00")).await.unwrap().into_inner();
    // Done, then Reopen: open again where its due moment puts it.
    inbox.mark_done(EventId { id: dentist.id }).await.unwrap();
    let reopened = inbox.reopen_event(EventId { id: dentist.id }).await.unwrap().into_inner();
    assert_eq!(
        (
            reopened.state().word(),
            reopened.closed_at.as_ref().map(hado_proto::convert::rfc3339_at).as_deref(),
            reopened.closed_as.as_deref()
        ),
        ("preparing", None, None)
    );
    assert_eq!(inbox.list_events(active()).await.unwrap().into_inner().events.len(), 1);
    // Remember, taken back: no longer quiet.
    assert!(
        inbox
            .mark_ack(MarkAckRequest { id: dentist.id, until: None })
            .await
            .unwrap()
            .into_inner()
            .quiet_until
            .is_some()
    );
    assert_eq!(
        inbox.take_back_ack(EventId { id: dentist.id }).await.unwrap().into_inner().quiet_until,
        None
    );
    // Reopening an open event changes nothing.
    assert_eq!(
        inbox.reopen_event(EventId { id: dentist.id }).await.unwrap().into_inner().state().word(),
        "preparing"
    );
    // Delete, then Reopen: back in the inbox.
    inbox.delete_event(EventId { id: dentist.id }).await.unwrap();
    assert_eq!(
        inbox.reopen_event(EventId { id: dentist.id }).await.unwrap().into_inner().state().word(),
        "preparing"
    );
    // A source's withdrawal is the source's to undo; its Done is the person's.
    let docs = core.source_token("docs").await;
    let visa = core.push(&docs, "anna", "visa", fields("Visa", "2026-12-14")).await;
    inbox.mark_done(EventId { id: visa }).await.unwrap();
    assert_eq!(
        inbox.reopen_event(EventId { id: visa }).await.unwrap().into_inner().state().word(),
        "preparing"
    );
    core.ingest(&docs)
        .withdraw_events(WithdrawEventsRequest {
            keys: vec![EventKey {
                user: "anna".into(),
                r#ref: "visa".into(),
                topic: String::new(),
            }],
        })
        .await
        .unwrap();
    let refused = inbox.reopen_event(EventId { id: visa }).await.unwrap_err();
    assert_eq!(
        (refused.code(), refused.message()),
        (Code::FailedPrecondition, "this event belongs to source docs; only docs can change it")
    );
    let info = refused.get_details_error_info().unwrap();
    assert_eq!(
        (info.reason.as_str(), info.metadata["source"].as_str()),
        ("EVENT_OWNED_BY_SOURCE", "docs")
    );
    let words = refused.get_details_localized_message().unwrap();
    assert_eq!(
        (words.locale.as_str(), words.message.as_str()),
        ("en", "This event comes from docs, so only docs can change it.")
    );
    // Another person's event is not found.
    assert_eq!(
        core.inbox_as("bob").reopen_event(EventId { id: dentist.id }).await.unwrap_err().code(),
        Code::NotFound
    );
    core.stop().await;
}

/// A `CreateEvent` sent again with the same idempotency key (a gateway
/// repeating a call that a stopped core may have done) makes one event.
async fn a_create_sent_twice_with_one_key_makes_one_event(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut inbox = core.inbox_as("anna");
    let keyed = |title: &str, key: &str| {
        let mut request = tonic::Request::new(fields(title, "2026-12-03T15:00"));
        request.metadata_mut().insert(hado_proto::metadata::IDEMPOTENCY_KEY, key.parse().unwrap());
        request
    };
    let first = inbox.create_event(keyed("Dentist", "01JDA5X3V8K2")).await.unwrap().into_inner();
    let again = inbox.create_event(keyed("Dentist", "01JDA5X3V8K2")).await.unwrap().into_inner();
    assert_eq!(again.id, first.id, "the repeated call returns what the first made");
    let other = inbox.create_event(keyed("Dentist", "01JDA5X3V8K3")).await.unwrap().into_inner();
    assert_ne!(other.id, first.id, "another key is another event");
    // The key is the caller's own: bob's same key is bob's event.
    let bobs = core
        .inbox_as("bob")
        .create_event(keyed("Dentist", "01JDA5X3V8K2"))
        .await
        .unwrap()
        .into_inner();
    assert_ne!(bobs.id, first.id);
    assert_eq!(inbox.list_events(active()).await.unwrap().into_inner().events.len(), 2);
    // A key that is not 1 to 64 letters, digits, '-' or '_' is refused by name.
    for bad in ["", "has space", &"k".repeat(65)] {
        let refused = inbox.create_event(keyed("Dentist", bad)).await.unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{bad:?}");
        let violations =
            refused.get_details_bad_request().expect("field violations").field_violations;
        assert_eq!(violations[0].field, "idempotency-key", "{bad:?}");
    }
    assert_eq!(
        inbox.list_events(active()).await.unwrap().into_inner().events.len(),
        2,
        "nothing was written"
    );
    core.stop().await;
}

/// Each core keeps which source a token names until something changes
/// (`engine::kept`): rotating or deleting ends the old token at once on the
/// core that did it, and on another core within a second.
async fn a_rotated_or_deleted_source_token_stops_on_every_core(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let replica = match backend {
        Backend::Postgres(_) => Some(core.replica().await),
        Backend::Sqlite => None,
    };
    let cores: Vec<&TestCore> = std::iter::once(&core).chain(replica.as_ref()).collect();
    let answer = |core: &TestCore, token: &str| {
        let mut ingest = core.ingest(token);
        async move {
            ingest
                .list_events(IngestListRequest { user: "anna".into(), refs: vec![] })
                .await
                .map(|_| ())
                .map_err(|status| status.code())
        }
    };
    let stops_everywhere = async |token: &str, what: &str| {
        assert_eq!(answer(&core, token).await, Err(Code::Unauthenticated), "{what}: at once");
        for other in &cores[1..] {
            let started = std::time::Instant::now();
            while answer(other, token).await.is_ok() {
                assert!(
                    started.elapsed() < std::time::Duration::from_secs(1),
                    "{what}: another core still takes the old token after {:?}",
                    started.elapsed()
                );
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            assert_eq!(answer(other, token).await, Err(Code::Unauthenticated), "{what}");
        }
    };

    let old = core.source_token("docs").await;
    for each in &cores {
        assert_eq!(answer(each, &old).await, Ok(()), "every core has read the token");
    }
    let rotated = core
        .admin()
        .rotate_source_token(v1::SourceName { name: "docs".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    for each in &cores {
        assert_eq!(answer(each, &rotated).await, Ok(()), "the new token works at once");
    }
    stops_everywhere(&old, "a rotated token").await;

    // Every core has just read the new token, so each keeps it: only
    // forgetting it at the deletion stops it.
    for each in &cores {
        assert_eq!(answer(each, &rotated).await, Ok(()));
    }
    core.admin().delete_source(v1::SourceName { name: "docs".into() }).await.unwrap();
    stops_everywhere(&rotated, "a deleted source's token").await;

    if let Some(replica) = replica {
        replica.stop().await;
    }
    core.stop().await;
}

hado_testing::on_both_backends!(
    the_zone_is_the_default_until_the_person_chooses_one,
    a_rotated_or_deleted_source_token_stops_on_every_core,
    a_create_sent_twice_with_one_key_makes_one_event,
    done_and_delete_can_be_undone,
    new_people_start_in_the_default_language,
    a_long_list_is_read_page_by_page,
    hostile_text_is_refused_by_field_and_nothing_is_written,
    a_bidi_control_in_a_title_is_refused_and_nothing_is_written,
    action_links_act_once_as_the_events_user,
    the_auth_matrix,
    batches_are_validated_whole_and_applied_atomically,
    upsert_semantics_seen_from_outside,
    remember_until_a_morning_passes_over_checkpoints_then_reminds,
    lists_narrow_by_text_and_source,
    refusals_carry_a_reason_and_the_persons_words,
    reflection_and_health_answer,
);
