//! The storage story: one walk through everything core stores, run against
//! SQLite always and Postgres when `HADO_TEST_POSTGRES_URL` is set.

use chrono::Duration;

use hado_domain::event::{Outcome, RawFields, RememberFor};
use hado_domain::state::State;
use hado_engine::clock::Clock;
use hado_engine::error::CoreError;
use hado_engine::{EventPatch, ProfilePatch, RawKey, SourceItem};
use hado_testing::{Backend, TestEngine, utc};

fn item(user: &str, source_ref: &str, title: &str, due_at: &str) -> SourceItem {
    SourceItem {
        user: user.into(),
        source_ref: source_ref.into(),
        topic: String::new(),
        fields: RawFields { title: title.into(), due_at: due_at.into(), ..RawFields::default() },
    }
}

async fn sources_tokens_and_batches(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;

    let (name, token) = engine.create_source("docs").await.unwrap();
    assert_eq!(name.as_str(), "docs");
    assert!(matches!(engine.create_source("docs").await, Err(CoreError::AlreadyExists(_))));
    assert!(matches!(engine.create_source("manual").await, Err(CoreError::FailedPrecondition(_))));
    let docs = engine.source_for_token(&token).await.unwrap().expect("the token finds its source");

    // A batch for a user nobody has seen creates them.
    let batch = [
        item("anna", "visa", "Visa expires", "2026-12-14"),
        item("anna", "rent", "Pay rent", "2026-12-01T18:00"),
        item("anna", "trip", "Flight to Tokyo", "2027-03-01T10:00+09:00"),
    ];
    let reports = engine.upsert_batch(&docs, &batch).await.unwrap();
    let outcomes: Vec<_> = reports.iter().map(|report| (report.outcome, report.state)).collect();
    assert_eq!(
        outcomes,
        [
            (Outcome::Created, State::Preparing),
            (Outcome::Created, State::Today),
            (Outcome::Created, State::Scheduled)
        ]
    );
    let anna = engine.user_for_login("anna").await.unwrap();
    assert_eq!(anna.zone, chrono_tz::Europe::Berlin);

    // The inbox is ordered by due moment; the filter keeps one state.
    let inbox = engine.list_events(&anna, None, false, None).await.unwrap();
    let titles: Vec<_> = inbox.iter().map(|record| record.spec.title.as_str()).collect();
    assert_eq!(titles, ["Pay rent", "Visa expires", "Flight to Tokyo"]);
    let today = engine.list_events(&anna, Some("today"), false, None).await.unwrap();
    assert_eq!(today.len(), 1);
    let first = engine.list_events(&anna, None, false, Some(2)).await.unwrap();
    let first: Vec<_> = first.iter().map(|record| record.spec.title.as_str()).collect();
    assert_eq!(first, ["Pay rent", "Visa expires"], "a limit keeps the most urgent");
    assert!(matches!(
        engine.list_events(&anna, Some("soon"), false, None).await,
        Err(CoreError::Invalid(_))
    ));

    // A key that comes twice in one batch: the second meets the first.
    let repeated = [
        item("bob", "visa", "Visa", "2026-12-14"),
        item("bob", "visa", "Visa", "2026-12-20"),
        item("bob", "visa", "Visa, renewed", "2026-12-20"),
    ];
    let outcomes: Vec<_> = engine
        .upsert_batch(&docs, &repeated)
        .await
        .unwrap()
        .iter()
        .map(|report| report.outcome)
        .collect();
    assert_eq!(outcomes, [Outcome::Created, Outcome::Rescheduled, Outcome::Updated]);

    // Keys and texts with quotes, backslashes, braces, commas, the word NULL,
    // Cyrillic and emoji go in and are found again exactly (Postgres carries
    // a batch's new rows and its keys as arrays written out as text).
    let awkward = |topic: &str| {
        let mut awkward = item(
            "bob",
            r#"{ref, "quoted"} \ back/slash"#,
            "Виза \"продлить\" \\ {a,b} 🛂",
            "2026-12-14",
        );
        awkward.topic = topic.into();
        awkward.fields.subtitle = Some("NULL".into());
        awkward
    };
    // The topic "NULL" is a third key (a NULL would be refused, as topics are NOT NULL).
    let written =
        engine.upsert_batch(&docs, &[awkward(""), awkward("тема"), awkward("NULL")]).await.unwrap();
    assert!(written.iter().all(|report| report.outcome == Outcome::Created));
    let found =
        engine.upsert_batch(&docs, &[awkward(""), awkward("тема"), awkward("NULL")]).await.unwrap();
    assert!(found.iter().all(|report| report.outcome == Outcome::Unchanged), "{found:?}");
    let bob = engine.user_for_login("bob").await.unwrap();
    let stored = engine.get_event(&bob, written[2].id).await.unwrap();
    assert_eq!(stored.spec.title.as_str(), "Виза \"продлить\" \\ {a,b} 🛂");
    assert_eq!(stored.source_ref, r#"{ref, "quoted"} \ back/slash"#);
    assert_eq!(
        stored.spec.subtitle.as_deref(),
        Some("NULL"),
        "the word NULL is text, not an empty column"
    );

    // The same batch again changes nothing; a new title updates; a new due reschedules.
    let again = engine.upsert_batch(&docs, &batch).await.unwrap();
    assert!(again.iter().all(|report| report.outcome == Outcome::Unchanged));
    let renamed = engine
        .upsert_batch(&docs, &[item("anna", "visa", "Visa renewal", "2026-12-14")])
        .await
        .unwrap();
    assert_eq!(renamed[0].outcome, Outcome::Updated);
    let visa_id = renamed[0].id;
    assert_eq!(visa_id, reports[0].id);

    // Done puts it in the archive; the same due keeps it done; a new due reopens it.
    let done = engine.mark_done(&anna, visa_id).await.unwrap();
    assert_eq!(done.lifecycle.state, State::Done);
    assert_eq!(done.lifecycle.closed_at, Some(utc("2026-12-01T10:00:00Z")));
    assert_eq!(engine.list_events(&anna, None, true, None).await.unwrap()[0].id, visa_id);
    let kept = engine
        .upsert_batch(&docs, &[item("anna", "visa", "Visa renewal!", "2026-12-14")])
        .await
        .unwrap();
    assert_eq!((kept[0].outcome, kept[0].state), (Outcome::Updated, State::Done));
    let reopened = engine
        .upsert_batch(&docs, &[item("anna", "visa", "Visa renewal!", "2026-12-20")])
        .await
        .unwrap();
    assert_eq!((reopened[0].outcome, reopened[0].state), (Outcome::Rescheduled, State::Preparing));
    assert!(engine.list_events(&anna, None, true, None).await.unwrap().is_empty());

    // Withdraw hides it everywhere; a re-push revives it.
    let withdrawn = engine
        .withdraw_batch(
            &docs,
            &[
                RawKey { user: "anna".into(), source_ref: "visa".into(), topic: String::new() },
                RawKey { user: "anna".into(), source_ref: "nothing".into(), topic: String::new() },
            ],
        )
        .await
        .unwrap();
    assert_eq!(withdrawn[0].found, Some((visa_id, State::Withdrawn)));
    assert_eq!(withdrawn[1].found, None);
    assert_eq!(
        engine.get_event(&anna, visa_id).await.unwrap().lifecycle.state,
        State::Withdrawn,
        "readable, out of the inbox"
    );
    assert_eq!(engine.list_events(&anna, None, false, None).await.unwrap().len(), 2);
    let revived = engine
        .upsert_batch(&docs, &[item("anna", "visa", "Visa renewal!", "2026-12-20")])
        .await
        .unwrap();
    assert_eq!((revived[0].outcome, revived[0].id), (Outcome::Revived, visa_id));

    // A source reads back its own events, all or by ref.
    assert_eq!(engine.list_for_source(&docs, "anna", &[]).await.unwrap().len(), 3);
    let by_ref =
        engine.list_for_source(&docs, "anna", &["rent".into(), "trip".into()]).await.unwrap();
    assert_eq!(by_ref.len(), 2);
    assert!(engine.list_for_source(&docs, "nobody", &[]).await.unwrap().is_empty());

    // An invalid batch writes nothing, not even its valid items or new users.
    let before = engine.list_events(&anna, None, false, None).await.unwrap().len();
    let invalid =
        [item("anna", "new-one", "New", "2026-12-24"), item("bob smith", "x", "", "2026-02-30")];
    let Err(CoreError::Invalid(violations)) = engine.upsert_batch(&docs, &invalid).await else {
        panic!("the batch is refused")
    };
    let fields: Vec<_> = violations.iter().map(|violation| violation.field.as_str()).collect();
    assert_eq!(fields, ["events[1].user", "events[1].title", "events[1].due_at"]);
    assert_eq!(engine.list_events(&anna, None, false, None).await.unwrap().len(), before);
    assert!(
        engine
            .list_users()
            .await
            .unwrap()
            .iter()
            .all(|summary| summary.user.login.as_str() != "bob smith")
    );
    let too_many: Vec<_> =
        (0..1001).map(|index| item("anna", &format!("r{index}"), "x", "2026-12-24")).collect();
    assert!(matches!(engine.upsert_batch(&docs, &too_many).await, Err(CoreError::Invalid(_))));

    // Rotating the token stops the old one at once; deleting the source takes its events.
    let (_, rotated) = engine.rotate_source_token("docs").await.unwrap();
    assert!(engine.source_for_token(&token).await.unwrap().is_none());
    assert!(engine.source_for_token(&rotated).await.unwrap().is_some());
    let listed = engine.list_sources().await.unwrap();
    let docs_listed = listed.iter().find(|source| source.name == "docs").unwrap();
    assert_eq!(
        (docs_listed.has_token, docs_listed.events),
        (true, 7),
        "anna's three and bob's four"
    );
    assert_eq!(engine.delete_source("docs").await.unwrap().1, 7);
    assert!(engine.list_events(&anna, None, false, None).await.unwrap().is_empty());

    test.stop().await;
}

async fn manual_events_profiles_and_agent_tokens(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let anna = engine.user_for_login("anna").await.unwrap();

    let created = engine
        .create_manual(
            &anna,
            &RawFields {
                title: "Dentist".into(),
                due_at: "2026-12-10T09:00".into(),
                ..RawFields::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(created.source, "manual");
    assert!(created.source_ref.starts_with("manual:"));
    assert_eq!(created.spec.preparing_date().to_string(), "2026-11-10");
    assert_eq!(created.lifecycle.state, State::Preparing);

    // An update merges the given fields; a blank subtitle clears it.
    let patch = EventPatch { subtitle: Some("Dr. Weiss".into()), ..EventPatch::default() };
    let updated = engine.update_manual(&anna, created.id, patch).await.unwrap();
    assert_eq!(updated.spec.subtitle.as_deref(), Some("Dr. Weiss"));
    assert_eq!(updated.spec.due.text, "2026-12-10T09:00");
    let cleared = engine
        .update_manual(
            &anna,
            created.id,
            EventPatch { subtitle: Some(String::new()), ..EventPatch::default() },
        )
        .await
        .unwrap();
    assert_eq!(cleared.spec.subtitle, None);
    let bad = engine
        .update_manual(
            &anna,
            created.id,
            EventPatch { fire_at: Some("2026-12-11".into()), ..EventPatch::default() },
        )
        .await;
    assert!(matches!(bad, Err(CoreError::Invalid(_))));

    // Another user sees "not found", never the event.
    let bob = engine.user_for_login("bob").await.unwrap();
    assert!(
        matches!(engine.get_event(&bob, created.id).await, Err(CoreError::EventNotFound(id)) if id == created.id)
    );
    assert!(
        matches!(engine.mark_done(&bob, created.id).await, Err(CoreError::EventNotFound(id)) if id == created.id)
    );
    assert!(
        matches!(engine.delete_manual(&bob, created.id).await, Err(CoreError::EventNotFound(id)) if id == created.id)
    );

    // Remember quiets until the next checkpoint: D−7, Dec 3rd at 08:00 Berlin time.
    let remembered_once =
        engine.remember(&anna, created.id, RememberFor::NextCheckpoint).await.unwrap();
    assert_eq!(remembered_once.lifecycle.quiet_until, Some(utc("2026-12-03T07:00:00Z")));

    // The scheduler wakes for the next checkpoint or state change, whichever
    // comes first: here the D−7 checkpoint that Remember quieted until.
    assert_eq!(engine.earliest_check().await.unwrap(), Some(utc("2026-12-03T07:00:00Z")));
    assert!(!remembered_once.reminders.needs_attention());
    // Back after a week away: one pass advances the state and fires only the
    // latest missed checkpoint, which asks for attention.
    test.clock.set(utc("2026-12-10T07:00:00Z"));
    assert_eq!(engine.advance_due(500).await.unwrap(), 1);
    let today = engine.get_event(&anna, created.id).await.unwrap();
    assert_eq!(today.lifecycle.state, State::Today);
    assert_eq!(today.reminders.attention_since, Some(utc("2026-12-10T07:00:00Z")));
    assert_eq!(
        today.reminders.checkpoint,
        Some(utc("2026-12-10T08:00:00Z")),
        "the next is the due moment, 09:00 in Berlin; none is left behind"
    );
    assert_eq!(engine.advance_due(500).await.unwrap(), 0, "nothing fires twice");
    test.clock.advance(Duration::hours(2));
    hado_core::scheduler::drain(engine).await.unwrap();
    let overdue = engine.get_event(&anna, created.id).await.unwrap();
    assert_eq!(overdue.lifecycle.state, State::Overdue);
    assert_eq!(
        overdue.reminders.attention_since,
        Some(utc("2026-12-10T09:00:00Z")),
        "the due moment reminded (late by the hour the scheduler slept)"
    );
    assert_eq!(
        engine.earliest_check().await.unwrap(),
        Some(utc("2026-12-10T12:00:00Z")),
        "the unanswered reminder repeats 3 hours on"
    );
    // Remember ends the attention and its repeats until the next checkpoint.
    let remembered = engine.remember(&anna, created.id, RememberFor::NextCheckpoint).await.unwrap();
    assert_eq!(
        (remembered.reminders.attention_since, remembered.reminders.repeat_at),
        (None, None)
    );
    assert_eq!(engine.earliest_check().await.unwrap(), Some(utc("2026-12-11T07:00:00Z")));

    // Moving to Tokyo recomputes the user's floating events at once.
    let evening = engine
        .create_manual(
            &anna,
            &RawFields {
                title: "Call home".into(),
                due_at: "2026-12-10T17:00".into(),
                ..RawFields::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(evening.lifecycle.state, State::Today);
    let moved = engine
        .update_profile(
            &anna,
            &ProfilePatch { tz: Some("Asia/Tokyo".into()), ..ProfilePatch::default() },
        )
        .await
        .unwrap();
    assert_eq!(moved.zone, chrono_tz::Asia::Tokyo);
    // 09:00 UTC is 18:00 in Tokyo: the 17:00 call is now overdue there.
    assert_eq!(engine.get_event(&moved, evening.id).await.unwrap().lifecycle.state, State::Overdue);
    let bad_profile = ProfilePatch {
        tz: Some("Mars/Base".into()),
        quiet_start: Some("25:00".into()),
        ..ProfilePatch::default()
    };
    let Err(CoreError::Invalid(violations)) = engine.update_profile(&moved, &bad_profile).await
    else {
        panic!("refused")
    };
    assert_eq!(violations.len(), 2);

    // Delete is a withdrawal of the user's own event.
    assert_eq!(engine.delete_manual(&moved, evening.id).await.unwrap().id, evening.id);
    assert_eq!(
        engine.get_event(&moved, evening.id).await.unwrap().lifecycle.state,
        State::Withdrawn
    );
    assert!(
        matches!(engine.mark_done(&moved, evening.id).await, Err(CoreError::Withdrawn { id, deleted: true, .. }) if id == evening.id)
    );
    assert!(
        matches!(engine.delete_manual(&moved, evening.id).await, Err(CoreError::Withdrawn { id, deleted: true, .. }) if id == evening.id)
    );

    // One agent token per user: re-issuing stops the old one at once.
    let (_, first) = engine.admin_issue_agent_token("carol").await.unwrap();
    assert_eq!(engine.user_for_agent_token(&first).await.unwrap().unwrap().login.as_str(), "carol");
    let (_, second) = engine.admin_issue_agent_token("carol").await.unwrap();
    assert!(engine.user_for_agent_token(&first).await.unwrap().is_none());
    let carol = engine.user_for_agent_token(&second).await.unwrap().unwrap();
    // The use is recorded after the call, off its path, to the minute.
    let last_used = async || {
        for _ in 0..200 {
            if let Some(used) =
                engine.agent_token_status(&carol).await.unwrap().unwrap().last_used_at
            {
                return used;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!("the agent token's use was never recorded");
    };
    let first_use = last_used().await;
    assert_eq!(first_use, test.clock.now());
    test.clock.advance(Duration::seconds(30));
    engine.user_for_agent_token(&second).await.unwrap().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(last_used().await, first_use, "a use within the minute writes nothing");
    test.clock.advance(Duration::seconds(31));
    engine.user_for_agent_token(&second).await.unwrap().unwrap();
    let mut recorded = last_used().await;
    for _ in 0..200 {
        if recorded != first_use {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        recorded = last_used().await;
    }
    assert_eq!(recorded, test.clock.now(), "a minute later the use is recorded again");
    assert!(engine.admin_revoke_agent_token("carol").await.unwrap());
    assert!(engine.user_for_agent_token(&second).await.unwrap().is_none());
    assert!(!engine.admin_revoke_agent_token("carol").await.unwrap());
    assert!(!engine.admin_revoke_agent_token("nobody").await.unwrap());

    test.stop().await;
}

async fn the_scheduler_claims_only_due_rows_in_batches(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let (_, token) = engine.create_source("bulk").await.unwrap();
    let bulk = engine.source_for_token(&token).await.unwrap().unwrap();
    // 1200 events start preparing on the 2nd; 300 only next year.
    let soon: Vec<_> = (0..1200)
        .map(|index| item("dana", &format!("soon-{index}"), "Soon", "2026-12-20"))
        .collect();
    let later: Vec<_> = (0..300)
        .map(|index| item("dana", &format!("later-{index}"), "Later", "2027-06-01"))
        .collect();
    for chunk in soon.chunks(1000).chain(later.chunks(1000)) {
        engine.upsert_batch(&bulk, chunk).await.unwrap();
    }
    let dana = engine.user_for_login("dana").await.unwrap();
    assert_eq!(
        engine.list_events(&dana, Some("preparing"), false, None).await.unwrap().len(),
        1200
    );
    test.clock.set(utc("2026-12-20T00:30:00Z"));
    assert_eq!(engine.advance_due(500).await.unwrap(), 500);
    assert_eq!(hado_core::scheduler::drain(engine).await.unwrap(), 700);
    assert_eq!(engine.list_events(&dana, Some("today"), false, None).await.unwrap().len(), 1200);
    assert_eq!(engine.list_events(&dana, Some("scheduled"), false, None).await.unwrap().len(), 300);
    test.stop().await;
}

hado_testing::on_both_backends!(
    sources_tokens_and_batches,
    manual_events_profiles_and_agent_tokens,
    the_scheduler_claims_only_due_rows_in_batches
);
