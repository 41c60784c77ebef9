//! `Inbox.GetInbox`, what an inbox shows in one call, through a real tonic
//! client on both backends: the groups in the inbox's order with their
//! counts, pages and cursors, narrowing, the archive, the count's cap, one
//! person's view holding nobody else's events, and each bad field named.

use tonic::Code;
use tonic_types::StatusExt;

use hado_proto::v1::{
    self, EventState, GetInboxRequest, GetProfileRequest, InboxPage, InboxView, MarkAckRequest,
    UpsertEventsRequest, UserLogin,
};
use hado_testing::{Backend, TestCore, source_event};

fn page(state: &str, limit: Option<u32>, after: Option<&str>) -> InboxPage {
    InboxPage { state: state.into(), limit, after: after.map(str::to_owned) }
}

/// Each group's state and count, in the reply's order.
fn counts(view: &InboxView) -> Vec<(EventState, u32, bool)> {
    view.groups.iter().map(|group| (group.state(), group.count, group.more)).collect()
}

/// Each group's titles, in the reply's order.
fn titles(view: &InboxView) -> Vec<Vec<&str>> {
    view.groups
        .iter()
        .map(|group| group.events.iter().map(|event| event.title.as_str()).collect())
        .collect()
}

/// The field each violation of a refused call names.
fn refused_fields(status: &tonic::Status) -> Vec<String> {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    status
        .get_details_bad_request()
        .expect("field violations")
        .field_violations
        .into_iter()
        .map(|violation| violation.field)
        .collect()
}

async fn the_inbox_view_is_one_call(backend: Backend) {
    // Friday 11 December 2026, 10:00 in anna's zone (the tests' default, Berlin).
    let core = TestCore::start(&backend, "2026-12-11T09:00:00Z").await;
    let docs = core.source_token("docs").await;
    let mut items: Vec<v1::SourceEvent> = [
        ("tax", "Tax return", "2026-12-08"),
        ("rent", "Rent", "2026-12-10"),
        ("fine", "Parking fine", "2026-12-05"),
        ("call", "Call the bank", "2026-12-11T18:00"),
        ("bin", "Bins out", "2026-12-11"),
        ("visa", "Visa renewal", "2026-12-20"),
        ("gift", "Gifts", "2026-12-24"),
        ("car", "Car service", "2027-01-05"),
        ("passport", "Passport", "2027-04-01"),
        ("lease", "Lease renewal", "2027-03-01"),
    ]
    .into_iter()
    .map(|(reference, title, due_at)| source_event("anna", reference, title, due_at))
    .collect();
    // A long history of closed events, and somebody else's open ones.
    for index in 0..120 {
        let mut closed = source_event("anna", &format!("old-{index}"), "Old", "2026-10-01");
        closed.fields.as_mut().unwrap().after_due = Some("expire".into());
        items.push(closed);
    }
    items.push(source_event("bob", "bob-visa", "Bob's visa", "2026-12-09"));
    items.push(source_event("bob", "bob-lease", "Bob's lease", "2027-02-01"));
    core.ingest(&docs).upsert_events(UpsertEventsRequest { events: items }).await.unwrap();
    let mut inbox = core.inbox_as("anna");

    // Asked for nothing in particular: every group, in the inbox's order
    // (overdue first), each counted and in due order.
    let view = inbox.get_inbox(GetInboxRequest::default()).await.unwrap().into_inner();
    assert_eq!(
        counts(&view),
        vec![
            (EventState::Overdue, 3, false),
            (EventState::Today, 2, false),
            (EventState::Preparing, 3, false),
            (EventState::Scheduled, 2, false),
        ]
    );
    assert_eq!(
        titles(&view),
        vec![
            vec!["Parking fine", "Tax return", "Rent"],
            vec!["Call the bank", "Bins out"],
            vec!["Visa renewal", "Gifts", "Car service"],
            vec!["Lease renewal", "Passport"],
        ]
    );
    assert!(view.groups.iter().all(|group| group.next.is_none()), "every group fits its page");
    assert!(view.archive.is_empty(), "the archive only when asked");
    // The person, with the view's own attention count: the same as the profile's.
    let profile = view.profile.clone().expect("the person");
    assert_eq!((profile.login.as_str(), profile.tz.as_str()), ("anna", "Europe/Berlin"));
    assert!(profile.attention >= 5, "the overdue and today's events need anna: {profile:?}");
    let alone = inbox.get_profile(GetProfileRequest::default()).await.unwrap().into_inner();
    assert_eq!(profile, alone);

    // Remember quiets one: the view counts it at once, for an agent too.
    let rent = view.groups[0].events[2].id;
    inbox.mark_ack(MarkAckRequest { id: rent, until: None }).await.unwrap();
    let token = core
        .admin()
        .issue_agent_token(UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    let by_agent = core.agent(&token).get_inbox(GetInboxRequest::default()).await.unwrap();
    assert_eq!(by_agent.get_ref().profile.as_ref().unwrap().attention, profile.attention - 1);
    assert_eq!(counts(by_agent.get_ref()), counts(&view), "Remember keeps it in its group");

    // A page of one group: the others come with their counts only; the
    // cursor goes on where the page ended, and the last page has none.
    let request = |pages| GetInboxRequest { pages, ..Default::default() };
    let first = inbox
        .get_inbox(request(vec![page("preparing", Some(2), None)]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(titles(&first), vec![vec![], vec![], vec!["Visa renewal", "Gifts"], vec![]]);
    assert_eq!(counts(&first), counts(&view), "every group is counted whatever is asked");
    let next = first.groups[2].next.clone().expect("the group goes on");
    let rest = inbox
        .get_inbox(request(vec![page("preparing", Some(2), Some(&next))]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rest.groups[2].events.len(), 1);
    assert_eq!(rest.groups[2].events[0].title, "Car service");
    assert_eq!(rest.groups[2].next, None, "a page that ends the group says so");
    // Exactly a page's worth: no cursor to an empty page.
    let whole = inbox
        .get_inbox(request(vec![page("preparing", Some(3), None), page("overdue", Some(0), None)]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(whole.groups[2].next, None);
    assert!(whole.groups[0].events.is_empty() && whole.groups[0].count == 3, "limit 0 counts");

    // Narrowed by text or source: the counts and the pages alike.
    let narrowed = inbox
        .get_inbox(GetInboxRequest { text: Some("RENEWAL".into()), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        titles(&narrowed),
        vec![vec![], vec![], vec!["Visa renewal"], vec!["Lease renewal"]]
    );
    assert_eq!(narrowed.groups.iter().map(|group| group.count).collect::<Vec<_>>(), [0, 0, 1, 1]);
    let manual = inbox
        .get_inbox(GetInboxRequest { source: Some("manual".into()), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert!(manual.groups.iter().all(|group| group.count == 0 && group.events.is_empty()));

    // The archive instead: its latest hundred, most recently closed first,
    // with the groups still counted.
    let done = view.groups[0].events[0].id;
    core.clock.set(hado_testing::utc("2026-12-11T10:00:00Z"));
    inbox.mark_done(v1::EventId { id: done }).await.unwrap();
    let archive = inbox
        .get_inbox(GetInboxRequest { archive: true, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(archive.archive.len(), 100, "at most 100 of anna's 121 closed events");
    assert_eq!(archive.archive[0].id, done, "the latest closed first");
    assert!(archive.archive.iter().all(|event| event.user == "anna"));
    assert!(archive.groups.iter().all(|group| group.events.is_empty()));
    assert_eq!(archive.groups[0].count, 2, "Done took one out of Overdue");

    // Nobody else's events, in any group.
    let bob = core.inbox_as("bob").get_inbox(GetInboxRequest::default()).await.unwrap();
    assert_eq!(
        titles(bob.get_ref()),
        vec![vec!["Bob's visa"], vec![], vec![], vec!["Bob's lease"]]
    );

    // Each bad field is named by its place, all at once.
    let refused = inbox
        .get_inbox(GetInboxRequest {
            pages: vec![
                page("done", None, None),
                page("today", Some(1001), Some("yesterday")),
                page("today", None, None),
            ],
            text: Some("x".repeat(201)),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused_fields(&refused),
        ["pages[0].state", "pages[1].limit", "pages[1].after", "pages[2].state", "text"]
    );
    let refused = inbox
        .get_inbox(GetInboxRequest {
            pages: vec![page("today", None, None)],
            archive: true,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused_fields(&refused), ["pages"]);

    core.stop().await;
}

async fn a_group_is_counted_up_to_a_thousand(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-11T09:00:00Z").await;
    let docs = core.source_token("docs").await;
    for batch in 0..2 {
        let events = (0..600)
            .map(|index| {
                let day = 1 + index % 28;
                source_event(
                    "anna",
                    &format!("later-{batch}-{index}"),
                    "Later",
                    &format!("2027-06-{day:02}"),
                )
            })
            .collect();
        core.ingest(&docs).upsert_events(UpsertEventsRequest { events }).await.unwrap();
    }
    let mut inbox = core.inbox_as("anna");
    let view = inbox.get_inbox(GetInboxRequest::default()).await.unwrap().into_inner();
    let scheduled = &view.groups[3];
    assert_eq!(
        (scheduled.count, scheduled.more),
        (1000, true),
        "1,200 scheduled, counted to 1,000"
    );
    assert_eq!(scheduled.events.len(), 100, "the default page");
    assert!(scheduled.next.is_some());
    // Narrowed, the count stops at the same place.
    let narrowed = inbox
        .get_inbox(GetInboxRequest { text: Some("later".into()), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((narrowed.groups[3].count, narrowed.groups[3].more), (1000, true));
    // The whole group, a thousand at a time, every event once.
    let mut seen = std::collections::HashSet::new();
    let mut after = None;
    loop {
        let reply = inbox
            .get_inbox(GetInboxRequest {
                pages: vec![page("scheduled", Some(1000), after.as_deref())],
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let group = &reply.groups[3];
        assert!(group.events.iter().all(|event| seen.insert(event.id)), "no event twice");
        match &group.next {
            Some(next) => after = Some(next.clone()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 1200);
    core.stop().await;
}

/// The attention count stops past 99, as a badge's does ("99+"), so that
/// a person whose sources left thousands of events overdue is not read in
/// full by every profile and page: 99 exactly says 99; one more says
/// "more", in `GetProfile` and `GetInbox` alike.
async fn the_attention_count_stops_past_ninety_nine(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-11T09:00:00Z").await;
    let docs = core.source_token("docs").await;
    let overdue = |from: usize, to: usize| -> Vec<v1::SourceEvent> {
        (from..to)
            .map(|index| source_event("anna", &format!("late-{index}"), "Late", "2026-11-20"))
            .collect()
    };
    let attention = |core: &TestCore| {
        let mut inbox = core.inbox_as("anna");
        async move {
            let profile =
                inbox.get_profile(GetProfileRequest::default()).await.unwrap().into_inner();
            let view = inbox.get_inbox(GetInboxRequest::default()).await.unwrap().into_inner();
            let shown = view.profile.expect("the view's profile");
            assert_eq!(
                (shown.attention, shown.attention_more),
                (profile.attention, profile.attention_more),
                "the page and the profile agree"
            );
            (profile.attention, profile.attention_more)
        }
    };
    core.ingest(&docs).upsert_events(UpsertEventsRequest { events: overdue(0, 99) }).await.unwrap();
    assert_eq!(attention(&core).await, (99, false), "99, counted exactly");
    core.ingest(&docs)
        .upsert_events(UpsertEventsRequest { events: overdue(99, 100) })
        .await
        .unwrap();
    assert_eq!(attention(&core).await, (99, true), "one more: counted to 99, and more");
    core.ingest(&docs)
        .upsert_events(UpsertEventsRequest { events: overdue(100, 1100) })
        .await
        .unwrap();
    assert_eq!(attention(&core).await, (99, true));
    core.stop().await;
}

hado_testing::on_both_backends!(
    the_inbox_view_is_one_call,
    a_group_is_counted_up_to_a_thousand,
    the_attention_count_stops_past_ninety_nine
);
