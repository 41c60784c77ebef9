//! Sources' calls arriving together share one transaction, or on Postgres
//! one-event calls an insert each commits alone first
//! (`engine::upsert_group`); each caller must still get its own reports,
//! a key named by several calls must end as one event, and one source's
//! flood must not keep another source's call waiting behind all of it.

use futures::future::join_all;

use hado_domain::event::{Outcome, RawFields, RememberFor};
use hado_domain::state::State;
use hado_engine::{EventPatch, ProfilePatch, RawKey, SourceItem};

use hado_engine::error::CoreError;
use hado_testing::{Backend, TestEngine};

/// At 10:00 UTC on the 1st, anna's event due on the 1st is today's, and
/// overdue in Kiritimati (UTC+14, already the 2nd).
pub(super) fn due_on_the_first(source_ref: &str) -> SourceItem {
    let visa = item("anna", source_ref, "Visa");
    SourceItem { fields: RawFields { due_at: "2026-12-01".into(), ..visa.fields }, ..visa }
}

fn item(user: &str, source_ref: &str, title: &str) -> SourceItem {
    SourceItem {
        user: user.into(),
        source_ref: source_ref.into(),
        topic: String::new(),
        fields: RawFields {
            title: title.into(),
            due_at: "2026-12-14".into(),
            ..RawFields::default()
        },
    }
}

async fn calls_arriving_together_each_get_their_own_reports(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let (_, docs) = engine.create_source("docs").await.unwrap();
    let docs = engine.source_for_token(&docs).await.unwrap().unwrap();
    let (_, bank) = engine.create_source("bank").await.unwrap();
    let bank = engine.source_for_token(&bank).await.unwrap().unwrap();

    // Twenty calls at once from two sources: every one names anna's "visa"
    // (the same key for each source, different keys across sources), one
    // names it twice, and each has an event of its own, for three people
    // not seen before; one call is invalid.
    let calls: Vec<(bool, Vec<SourceItem>)> = (0..20)
        .map(|call| {
            let mut items = vec![
                item("anna", "visa", &format!("Visa, call {call}")),
                item(&format!("person{}", call % 3), &format!("own-{call}"), "Own"),
            ];
            if call == 7 {
                items.push(item("anna", "visa", "Visa, call 7 again"));
            }
            if call == 11 {
                items.push(item("anna", "bad", ""));
            }
            (call % 2 == 0, items)
        })
        .collect();
    let answers = join_all(calls.iter().map(|(from_docs, items)| {
        engine.upsert_batch(if *from_docs { &docs } else { &bank }, items)
    }))
    .await;

    let mut visa = [None, None];
    let mut created = [0, 0];
    let mut own_ids = Vec::new();
    for (call, ((from_docs, items), answer)) in calls.iter().zip(answers).enumerate() {
        if call == 11 {
            let Err(CoreError::Invalid(violations)) = answer else {
                panic!("call 11 has an empty title: {answer:?}")
            };
            assert!(violations.to_string().starts_with("events[2]: title"), "{violations}");
            continue;
        }
        let reports = answer.unwrap_or_else(|error| panic!("call {call}: {error}"));
        assert_eq!(reports.len(), items.len(), "call {call} gets a report per item");
        let source = usize::from(*from_docs);
        let id = *visa[source].get_or_insert(reports[0].id);
        assert_eq!(reports[0].id, id, "call {call}: one visa event per source");
        created[source] += usize::from(reports[0].outcome == Outcome::Created);
        if call == 7 {
            assert_eq!(reports[2].id, id);
            assert_eq!(reports[2].outcome, Outcome::Updated, "the repeat meets its first write");
        }
        assert_eq!(reports[1].outcome, Outcome::Created, "call {call}");
        own_ids.push(reports[1].id);
    }
    assert_eq!(created, [1, 1], "each source's visa is created once");
    assert_ne!(visa[0], visa[1], "two sources' refs are two events");
    let mut unique = own_ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), own_ids.len(), "every call's own event has its own id");

    // What was stored is what the reports say.
    let anna = engine.user_for_login("anna").await.unwrap();
    assert_eq!(engine.list_events(&anna, None, false, None).await.unwrap().len(), 2);
    for person in 0..3 {
        let login = format!("person{person}");
        let user = engine.user_for_login(&login).await.unwrap();
        let count = engine.list_events(&user, None, false, None).await.unwrap().len();
        let expected = (0..20).filter(|call| call % 3 == person && *call != 11).count();
        assert_eq!(count, expected, "{login}'s events");
    }
    test.stop().await;
}

/// One-event calls of one source arriving together, for people core keeps
/// (on Postgres their group's insert is its own transaction, and the rest
/// follow in one more): each call gets its own report, a key named by
/// several calls ends as one event that each after the first updates, and
/// stored events pushed again are updated.
async fn one_event_calls_arriving_together_each_get_their_own_reports(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    keeping(engine).await;
    let docs = source(engine, "docs").await;
    for person in ["anna", "bob"] {
        let stored: Vec<SourceItem> =
            (0..4).map(|n| item(person, &format!("stored-{n}"), "Stored")).collect();
        engine.upsert_batch(&docs, &stored).await.unwrap();
    }
    // Newcomers until read once more, when core keeps them.
    let known = [item("anna", "known", "Known"), item("bob", "known", "Known")];
    engine.upsert_batch(&docs, &known).await.unwrap();

    let calls: Vec<SourceItem> = (0..24)
        .map(|call| {
            let person = if call % 2 == 0 { "anna" } else { "bob" };
            // The first call's key is taken, so the first group has
            // something left after its insert.
            match call % 3 {
                0 => {
                    item(person, &format!("stored-{}", call % 4), &format!("Changed, call {call}"))
                }
                1 => item("anna", "visa", &format!("Visa, call {call}")),
                _ => item(person, &format!("new-{call}"), "New"),
            }
        })
        .collect();
    let alone = engine.upsert_groups_inserted_alone();
    let answers =
        join_all(calls.iter().map(|call| engine.upsert_batch(&docs, std::slice::from_ref(call))))
            .await;
    if matches!(backend, Backend::Postgres(_)) {
        assert!(engine.upsert_groups_inserted_alone() > alone, "a group was inserted alone");
    }

    let (mut visa, mut visas_created) = (None, 0);
    let mut reports = Vec::new();
    for (call, answer) in answers.into_iter().enumerate() {
        let mut answer = answer.unwrap_or_else(|error| panic!("call {call}: {error}"));
        assert_eq!(answer.len(), 1, "call {call} gets a report for its one item");
        let report = answer.pop().unwrap();
        match call % 3 {
            0 => assert_eq!(report.outcome, Outcome::Updated, "call {call}"),
            1 => {
                assert_eq!(report.id, *visa.get_or_insert(report.id), "call {call}: one visa");
                match report.outcome {
                    Outcome::Created => visas_created += 1,
                    outcome => assert_eq!(outcome, Outcome::Updated, "call {call}"),
                }
            }
            _ => assert_eq!(report.outcome, Outcome::Created, "call {call}"),
        }
        reports.push(report);
    }
    assert_eq!(visas_created, 1, "the visa is created once, then updated");

    // What was stored is what the reports say: each names its call's
    // event, in its state, and a key holds the title of the last call
    // that named it, as a source's calls are applied in the order sent.
    for (call, (pushed, report)) in calls.iter().zip(&reports).enumerate() {
        let person = engine.user_for_login(&pushed.user).await.unwrap();
        let stored = engine.get_event(&person, report.id).await.unwrap();
        assert_eq!(stored.source_ref, pushed.source_ref, "call {call}");
        assert_eq!(stored.lifecycle.state, report.state, "call {call}");
        let last = calls
            .iter()
            .rev()
            .find(|later| later.user == pushed.user && later.source_ref == pushed.source_ref);
        assert_eq!(stored.spec.title.as_str(), last.unwrap().fields.title, "call {call}");
    }
    for (login, count) in [("anna", 4 + 1 + 1 + 4), ("bob", 4 + 1 + 4)] {
        let person = engine.user_for_login(login).await.unwrap();
        let events = engine.list_events(&person, None, false, None).await.unwrap();
        assert_eq!(events.len(), count, "{login}'s events");
    }
    test.stop().await;
}

/// On Postgres, a group of one-event calls whose insert committed some of
/// them before the rest failed: the calls that went in are answered as
/// they went in, and of the rest only the call the database refuses
/// fails. The second call names the first one's key again, so it is left
/// to the rest, where the database refuses its title.
#[tokio::test]
async fn a_call_refused_after_its_group_inserted_others_fails_alone() {
    let name = "upsert_groups::a_call_refused_after_its_group_inserted_others_fails_alone";
    let Some(backend) = Backend::postgres(name) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    keeping(engine).await;
    let docs = source(engine, "docs").await;
    engine.upsert_batch(&docs, &[item("anna", "stored", "Stored")]).await.unwrap();
    // A newcomer until read once more, when core keeps her.
    engine.upsert_batch(&docs, &[item("anna", "known", "Known")]).await.unwrap();
    test.refuse_events_titled("Refused").await;

    // The three calls wait together behind a group held by the test, so
    // that they make the next group, bet to be new keys as the held one was.
    let alone = engine.upsert_groups_inserted_alone();
    let (mut other, pid) = other_writer(engine).await;
    sqlx::query("LOCK TABLE events IN EXCLUSIVE MODE").execute(&mut *other).await.unwrap();
    let held = tokio::spawn({
        let (engine, docs) = (engine.clone(), docs.clone());
        async move { engine.upsert_batch(&docs, &[item("anna", "held", "Held")]).await }
    });
    blocked_by(engine, pid).await;
    let calls = [
        item("anna", "first", "Kept"),
        item("anna", "first", "Refused"),
        item("anna", "stored", "Changed"),
    ];
    // The calls are queued as this runtime's one thread first polls them,
    // before the held group can end.
    let (answers, ()) = tokio::join!(
        join_all(calls.iter().map(|call| engine.upsert_batch(&docs, std::slice::from_ref(call)))),
        async { other.commit().await.unwrap() },
    );
    held.await.unwrap().unwrap();
    assert_eq!(engine.upsert_groups_inserted_alone(), alone + 2, "both groups went in alone");

    let created = answers[0].as_ref().expect("the first call went in");
    assert_eq!(created[0].outcome, Outcome::Created, "answered as it went in");
    assert!(matches!(answers[1], Err(CoreError::Store(_))), "{:?}", answers[1]);
    let updated = answers[2].as_ref().expect("the third call is applied alone");
    assert_eq!(updated[0].outcome, Outcome::Updated);
    let anna = engine.user_for_login("anna").await.unwrap();
    assert_eq!(engine.get_event(&anna, created[0].id).await.unwrap().spec.title.as_str(), "Kept");
    assert_eq!(
        engine.get_event(&anna, updated[0].id).await.unwrap().spec.title.as_str(),
        "Changed"
    );
    test.stop().await;
}

async fn a_call_the_database_refuses_fails_alone(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let (_, docs) = engine.create_source("docs").await.unwrap();
    let docs = engine.source_for_token(&docs).await.unwrap().unwrap();
    test.refuse_events_titled("Refused").await;

    // Ten calls at once; the database refuses one row of call 4.
    let calls: Vec<Vec<SourceItem>> = (0..10)
        .map(|call| {
            let title = if call == 4 { "Refused" } else { "Kept" };
            vec![
                item("anna", &format!("first-{call}"), "Kept"),
                item("anna", &format!("second-{call}"), title),
            ]
        })
        .collect();
    let answers = join_all(calls.iter().map(|items| engine.upsert_batch(&docs, items))).await;
    for (call, answer) in answers.into_iter().enumerate() {
        match answer {
            Err(CoreError::Store(_)) if call == 4 => {}
            Ok(reports) if call != 4 => assert_eq!(reports.len(), 2),
            other => panic!("call {call}: {other:?}"),
        }
    }
    // The other calls' rows are stored; nothing of call 4 is, not even
    // the row the database did not refuse.
    let anna = engine.user_for_login("anna").await.unwrap();
    let stored = engine.list_events(&anna, None, false, None).await.unwrap();
    let mut refs: Vec<_> = stored.iter().map(|record| record.source_ref.clone()).collect();
    refs.sort();
    let mut expected: Vec<_> = (0..10)
        .filter(|call| *call != 4)
        .flat_map(|call| [format!("first-{call}"), format!("second-{call}")])
        .collect();
    expected.sort();
    assert_eq!(refs, expected);
    test.stop().await;
}

async fn a_call_whose_caller_has_gone_is_not_applied(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let (_, docs) = test.engine.create_source("docs").await.unwrap();
    let docs = test.engine.source_for_token(&docs).await.unwrap().unwrap();
    test.engine.upsert_batch(&docs, &[item("anna", "known", "Known")]).await.unwrap();

    // While writes are held, the first call waits in the database, and the
    // next two wait in the queue; the second's caller gives up.
    let held = test.hold_writes().await;
    let call = |source_ref: &'static str| {
        let (engine, docs) = (test.engine.clone(), docs.clone());
        tokio::spawn(async move {
            engine.upsert_batch(&docs, &[item("anna", source_ref, "Waits")]).await
        })
    };
    let first = call("first");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let gone = call("gone");
    let third = call("third");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    gone.abort();
    assert!(gone.await.unwrap_err().is_cancelled());
    held.commit().await.unwrap();
    first.await.unwrap().unwrap();
    third.await.unwrap().unwrap();

    let anna = test.engine.user_for_login("anna").await.unwrap();
    let stored = test.engine.list_events(&anna, None, false, None).await.unwrap();
    let mut refs: Vec<_> = stored.iter().map(|record| record.source_ref.as_str()).collect();
    refs.sort_unstable();
    assert_eq!(refs, ["first", "known", "third"], "the call given up on was not applied");
    test.stop().await;
}

async fn a_flood_of_full_batches_puts_one_group_ahead_of_another_sources_call(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let source = |name: &'static str| {
        let engine = test.engine.clone();
        async move {
            let (_, token) = engine.create_source(name).await.unwrap();
            engine.source_for_token(&token).await.unwrap().unwrap()
        }
    };
    let (docs, bank) = (source("docs").await, source("bank").await);

    // While writes are held, docs's first full batch waits in the
    // database; three more, and then bank's one event, wait in the queue.
    let held = test.hold_writes().await;
    let call = |source: &hado_engine::SourceCaller, items: Vec<SourceItem>| {
        let (engine, source) = (test.engine.clone(), source.clone());
        tokio::spawn(async move { engine.upsert_batch(&source, &items).await.unwrap() })
    };
    let full = |batch: usize| -> Vec<SourceItem> {
        (0..1000).map(|index| item("anna", &format!("flood-{batch}-{index}"), "Flood")).collect()
    };
    // Each call is validated before it queues: the pauses let a full
    // batch's validation end before the next call starts, so that they
    // queue in this order on a loaded machine too.
    let pause = || tokio::time::sleep(std::time::Duration::from_millis(300));
    let mut flood = Vec::new();
    for batch in 0..4 {
        flood.push(call(&docs, full(batch)));
        pause().await;
    }
    let alone = call(&bank, vec![item("anna", "statement", "Statement")]);
    pause().await;
    held.commit().await.unwrap();

    let alone = alone.await.unwrap()[0].id;
    let mut first_ids = Vec::new();
    for batch in flood {
        first_ids.push(batch.await.unwrap().iter().map(|report| report.id).min().unwrap());
    }
    // Ids follow the order of the commits: bank's event went in after the
    // batch that was waiting in the database and the one group docs's
    // turn allowed, and before the two after them.
    assert!(first_ids[1] < alone, "{first_ids:?}, bank's {alone}");
    assert!(alone < first_ids[2] && alone < first_ids[3], "{first_ids:?}, bank's {alone}");
    test.stop().await;
}

/// A new zone saved on a core reaches its very next push (on SQLite, whose
/// groups take their people from what core keeps, as on Postgres, whose
/// groups read them).
async fn a_new_zone_reaches_the_next_push_at_once(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let docs = source(engine, "docs").await;
    for source_ref in ["makes-anna", "keeps-anna"] {
        let reports = engine.upsert_batch(&docs, &[due_on_the_first(source_ref)]).await.unwrap();
        assert_eq!(reports[0].state, State::Today);
    }
    let anna = engine.user_for_login("anna").await.unwrap();
    let zone = ProfilePatch { tz: Some("Pacific/Kiritimati".into()), ..ProfilePatch::default() };
    engine.update_profile(&anna, &zone).await.unwrap();
    let reports = engine.upsert_batch(&docs, &[due_on_the_first("after")]).await.unwrap();
    assert_eq!(reports[0].state, State::Overdue, "the next push is in the new zone");
    test.stop().await;
}

/// On Postgres a new zone is written on one core while a push for the same
/// person is applied on another (or on the same one, reading the person
/// before the zone commits): the push must wait for the zone and be
/// written in it, or the zone change must wait for the push and move its
/// event. Here the zone is written behind core's back as core writes one
/// (alone through the person's gate) and held uncommitted; the push, due
/// on the 1st, must wait for it and come out overdue.
#[tokio::test]
async fn a_push_during_a_zone_change_is_written_in_the_new_zone() {
    let test = "upsert_groups::a_push_during_a_zone_change_is_written_in_the_new_zone";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = test.engine.clone();
    let docs = source(&engine, "docs").await;
    let reports = engine.upsert_batch(&docs, &[due_on_the_first("keeps-anna")]).await.unwrap();
    assert_eq!(reports[0].state, State::Today);

    let (other, others) = zone_change_held(&engine, "Pacific/Kiritimati").await;
    let push = tokio::spawn({
        let engine = engine.clone();
        async move { engine.upsert_batch(&docs, &[due_on_the_first("during")]).await }
    });
    blocked_by(&engine, others).await;
    other.commit().await.unwrap();
    let reports = push.await.unwrap().unwrap();
    assert_eq!(reports[0].state, State::Overdue, "the push was written in the old zone");
    test.stop().await;
}

/// The person's own create, as the push above: its one statement passes
/// the gate, so it waits for the zone change under way and, having been
/// decided in the zone the change leaves, is decided again in the new one.
#[tokio::test]
async fn a_create_during_a_zone_change_is_written_in_the_new_zone() {
    let test = "upsert_groups::a_create_during_a_zone_change_is_written_in_the_new_zone";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = test.engine.clone();
    let anna = engine.user_for_login("anna").await.unwrap();

    let (other, others) = zone_change_held(&engine, "Pacific/Kiritimati").await;
    let create = tokio::spawn({
        let engine = engine.clone();
        async move { engine.create_manual(&anna, &due_on_the_first("during").fields).await }
    });
    blocked_by(&engine, others).await;
    other.commit().await.unwrap();
    let created = create.await.unwrap().unwrap();
    assert_eq!(created.lifecycle.state, State::Overdue, "the create was written in the old zone");
    test.stop().await;
}

/// Two creates with one key in one group (a call sent twice, say), the
/// first decided in the zone anna just left and the second in her new one:
/// the row that went in is the second, so the first is answered moved (and
/// decided again by its call), not given the event the second made.
#[tokio::test]
async fn of_a_key_given_twice_the_row_decided_as_its_person_is_gets_the_event() {
    let test =
        "upsert_groups::of_a_key_given_twice_the_row_decided_as_its_person_is_gets_the_event";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let before = engine.user_for_login("anna").await.unwrap();
    let zone = ProfilePatch { tz: Some("Pacific/Kiritimati".into()), ..ProfilePatch::default() };
    let after = engine.update_profile(&before, &zone).await.unwrap();
    let docs = source(engine, "docs").await;
    let now: chrono::DateTime<chrono::Utc> = "2026-12-01T10:00:00Z".parse().unwrap();
    let row = |user: &hado_domain::user::UserRecord| {
        let spec = hado_domain::event::EventSpec::parse(&due_on_the_first("twice").fields).unwrap();
        let timeline = spec.timeline(user.zone);
        hado_storage::NewEventRow {
            user_id: user.id,
            source_id: docs.id,
            source_ref: "twice".into(),
            topic: String::new(),
            lifecycle: hado_domain::event::Lifecycle::fresh(&timeline, spec.after_due, now),
            due_at: timeline.due_moment,
            reminders: hado_domain::reminders::Reminders::default(),
            next_check_at: None,
            now,
            zone: user.zone,
            quiet: user.quiet,
            spec,
        }
    };
    let store = engine.store();
    let (first, second) =
        tokio::join!(store.insert_event(row(&before)), store.insert_event(row(&after)));
    let (first, second) = (first.unwrap(), second.unwrap());
    assert!(matches!(first, hado_storage::Inserted::Moved(_)), "{first:?}");
    assert!(matches!(second, hado_storage::Inserted::New(_)), "{second:?}");
    test.stop().await;
}

/// A gated insert of more rows than one statement carries (a full group of
/// pushes) inserts every row, each statement reading the people its rows
/// were decided for.
#[tokio::test]
async fn a_gated_insert_of_more_rows_than_a_statement_carries_inserts_them_all() {
    let test =
        "upsert_groups::a_gated_insert_of_more_rows_than_a_statement_carries_inserts_them_all";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let anna = test.engine.user_for_login("anna").await.unwrap().id;
    let keys: Vec<(i64, String)> = (0..1000).map(|n| (anna, format!("visa-{n}"))).collect();
    let (throughs, _) = gated_insert_of_visas(&test.engine, &keys).await;
    let new = throughs
        .iter()
        .filter(|through| matches!(through, hado_storage::events::Through::New(_)))
        .count();
    assert_eq!(new, 1000, "{:?}", &throughs[495..505]);
    test.stop().await;
}

/// A gated insert for a person who is gone (deleted after a source's
/// group took them from what core keeps) answers their rows moved, so the
/// group is applied again through the people as they are read now, and
/// inserts the rows of the people it found.
#[tokio::test]
async fn a_gated_insert_answers_the_rows_of_a_person_gone_moved() {
    let test = "upsert_groups::a_gated_insert_answers_the_rows_of_a_person_gone_moved";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let anna = test.engine.user_for_login("anna").await.unwrap().id;
    let keys = [(anna, "visa".to_owned()), (anna + 1_000, "passport".to_owned())];
    let (throughs, people) = gated_insert_of_visas(&test.engine, &keys).await;
    assert!(matches!(throughs[0], hado_storage::events::Through::New(_)), "{throughs:?}");
    assert_eq!(throughs[1], hado_storage::events::Through::Moved);
    assert_eq!(people.iter().map(|person| person.id).collect::<Vec<_>>(), [anna]);
    test.stop().await;
}

/// A gated insert of a visa for each person and key given, from the
/// source "docs", each row decided in anna's settings: what became of the
/// rows, and the people the gate read.
async fn gated_insert_of_visas(
    engine: &hado_engine::Engine,
    keys: &[(i64, String)],
) -> (Vec<hado_storage::events::Through>, Vec<hado_domain::user::UserRecord>) {
    let anna = engine.user_for_login("anna").await.unwrap();
    let docs = source(engine, "docs").await;
    let now: chrono::DateTime<chrono::Utc> = "2026-12-01T10:00:00Z".parse().unwrap();
    let spec = hado_domain::event::EventSpec::parse(&item("anna", "", "Visa").fields).unwrap();
    let timeline = spec.timeline(anna.zone);
    let write = hado_storage::EventWrite {
        spec: &spec,
        lifecycle: hado_domain::event::Lifecycle::fresh(&timeline, spec.after_due, now),
        due_at: timeline.due_moment,
        reminders: hado_domain::reminders::Reminders::default(),
        next_check_at: None,
    };
    let decided = hado_storage::events::DecidedFor::of(anna.zone, anna.quiet);
    let rows: Vec<_> = keys
        .iter()
        .map(|(user_id, source_ref)| {
            let key = hado_storage::RowKey {
                user_id: *user_id,
                source_id: docs.id,
                source_ref,
                topic: "",
            };
            (key, write, now, &decided)
        })
        .collect();
    let mut connection = engine.store().writer().acquire().await.unwrap();
    hado_storage::events::insert_new_through_gates(&mut *connection, &rows).await.unwrap()
}

/// The other order: a push under way (held here by another writer on the
/// row it changes) when the zone change comes. The push moves the visa to
/// the 2nd, which in Kiritimati (already the 2nd) is today. The change
/// must wait for the push's group, not only for the row, and then move
/// what the push wrote, not the visa it read before.
#[tokio::test]
async fn a_zone_change_during_a_push_moves_what_the_push_wrote() {
    let Some((test, docs, anna)) =
        with_a_visa("upsert_groups::a_zone_change_during_a_push_moves_what_the_push_wrote").await
    else {
        return;
    };
    let engine = test.engine.clone();

    let (mut other, others) = other_writer(&engine).await;
    elsewhere(&mut other, LOCK, "visa").await.unwrap();
    let push = tokio::spawn({
        let (engine, mut visa) = (engine.clone(), due_on_the_first("visa"));
        visa.fields.title = "Visa, renewed".into();
        visa.fields.due_at = "2026-12-02".into();
        async move { engine.upsert_batch(&docs, &[visa]).await }
    });
    let group = blocked_by(&engine, others).await;
    let zone = ProfilePatch { tz: Some("Pacific/Kiritimati".into()), ..ProfilePatch::default() };
    let change = tokio::spawn({
        let engine = engine.clone();
        async move { engine.update_profile(&anna, &zone).await }
    });
    blocked_by(&engine, group).await;
    other.commit().await.unwrap();
    assert_eq!(push.await.unwrap().unwrap()[0].outcome, Outcome::Rescheduled);
    change.await.unwrap().unwrap();
    let anna = engine.user_for_login("anna").await.unwrap();
    let stored = engine.list_events(&anna, None, false, None).await.unwrap();
    assert_eq!(stored[0].spec.title.as_str(), "Visa, renewed");
    assert_eq!(stored[0].lifecycle.state, State::Today, "the change moved the push's event");
    test.stop().await;
}

/// Remember, Reopen and an edit decide from the person's zone as the event
/// they read carries it: on Postgres they pass the person's gate first, so
/// a zone change under way is waited for, and read as it was committed.
#[tokio::test]
async fn a_remember_waits_for_a_zone_change_under_way() {
    let test = "upsert_groups::a_remember_waits_for_a_zone_change_under_way";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = test.engine.clone();
    let anna = engine.user_for_login("anna").await.unwrap();
    let visa = engine.create_manual(&anna, &due_on_the_first("visa").fields).await.unwrap();

    let (other, others) = zone_change_held(&engine, "Pacific/Kiritimati").await;
    let remember = tokio::spawn({
        let engine = engine.clone();
        async move { engine.remember(&anna, visa.id, RememberFor::TomorrowMorning).await }
    });
    blocked_by(&engine, others).await;
    other.commit().await.unwrap();
    let remembered = remember.await.unwrap().unwrap();
    // Tomorrow morning in Kiritimati, where it is already the 2nd: 08:00
    // on the 3rd there (in UTC it would be 08:00 on the 2nd).
    assert_eq!(
        remembered.lifecycle.quiet_until,
        Some("2026-12-02T18:00:00Z".parse().unwrap()),
        "Remember decided in the zone anna was leaving"
    );
    test.stop().await;
}

/// The scheduler's pass claims due events before it can know their
/// person's zone is being changed: it leaves a person being changed to its
/// next pass, and then advances their events in the new zone. Due on the
/// 2nd, checked at 00:30 UTC on the 2nd: today in UTC, but still the 1st in
/// Pago Pago (UTC−11).
#[tokio::test]
async fn the_scheduler_leaves_a_person_whose_zone_is_changing_to_its_next_pass() {
    let test =
        "upsert_groups::the_scheduler_leaves_a_person_whose_zone_is_changing_to_its_next_pass";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = test.engine.clone();
    let anna = engine.user_for_login("anna").await.unwrap();
    let mut fields = due_on_the_first("visa").fields;
    fields.due_at = "2026-12-02".into();
    let visa = engine.create_manual(&anna, &fields).await.unwrap();
    test.clock.set("2026-12-02T00:30:00Z".parse().unwrap());

    let (other, _) = zone_change_held(&engine, "Pacific/Pago_Pago").await;
    assert_eq!(engine.advance_due(500).await.unwrap(), 0, "anna's zone is being changed");
    other.commit().await.unwrap();
    assert_eq!(engine.advance_due(500).await.unwrap(), 1);
    let visa = engine.get_event(&anna, visa.id).await.unwrap();
    assert_ne!(visa.lifecycle.state, State::Today, "advanced in the zone anna left");
    test.stop().await;
}

/// A zone change moves the open events it reads; one closed meanwhile by a
/// write that takes no gate (a source's withdrawal) must stay closed, not
/// be written back open in the new zone.
#[tokio::test]
async fn a_zone_change_does_not_reopen_an_event_closed_as_it_ran() {
    let Some((test, _, anna)) =
        with_a_visa("upsert_groups::a_zone_change_does_not_reopen_an_event_closed_as_it_ran").await
    else {
        return;
    };
    let engine = test.engine.clone();

    let (mut other, others) = other_writer(&engine).await;
    elsewhere(&mut other, LOCK, "visa").await.unwrap();
    let zone = ProfilePatch { tz: Some("Pacific/Kiritimati".into()), ..ProfilePatch::default() };
    let change = tokio::spawn({
        let engine = engine.clone();
        async move { engine.update_profile(&anna, &zone).await }
    });
    blocked_by(&engine, others).await;
    elsewhere(&mut other, "UPDATE events SET state = 'withdrawn' WHERE source_ref = $1", "visa")
        .await
        .unwrap();
    other.commit().await.unwrap();
    change.await.unwrap().unwrap();
    let state = test.postgres_text("(SELECT state FROM events WHERE source_ref = 'visa')").await;
    assert_eq!(state, "withdrawn", "the zone change wrote the closed event back open");
    test.stop().await;
}

/// A source that pushes without pause for a person must not hold off a
/// change of their zone: a push that comes while the change waits for a
/// write under way queues behind the change (the gate is a queue, not a
/// lock on the person's row, which pushes could pass by turns), and is
/// written in the new zone.
#[tokio::test]
async fn pushes_queue_behind_a_waiting_zone_change() {
    let Some((test, docs, anna)) =
        with_a_visa("upsert_groups::pushes_queue_behind_a_waiting_zone_change").await
    else {
        return;
    };
    let engine = test.engine.clone();

    // A write under way holds the gate shared; the change waits for it.
    let (mut other, others) = other_writer(&engine).await;
    hado_storage::users::gate_shared(&mut other, anna.id).await.unwrap();
    let zone = ProfilePatch { tz: Some("Pacific/Kiritimati".into()), ..ProfilePatch::default() };
    let change = tokio::spawn({
        let engine = engine.clone();
        async move { engine.update_profile(&anna, &zone).await }
    });
    let changing = blocked_by(&engine, others).await;
    // The next push waits behind the change, not beside the write.
    let push = tokio::spawn({
        let engine = engine.clone();
        async move { engine.upsert_batch(&docs, &[due_on_the_first("next")]).await }
    });
    blocked_by(&engine, changing).await;
    other.commit().await.unwrap();
    change.await.unwrap().unwrap();
    let reports = push.await.unwrap().unwrap();
    assert_eq!(reports[0].state, State::Overdue, "the push passed the waiting change");
    test.stop().await;
}

/// A transaction of the test's own that changes anna's zone as core does,
/// alone through her gate, left uncommitted; and its session's pid.
async fn zone_change_held(engine: &hado_engine::Engine, zone: &str) -> (hado_storage::Tx, i32) {
    let anna = engine.user_for_login("anna").await.unwrap();
    let (mut other, pid) = other_writer(engine).await;
    hado_storage::users::gate_alone(&mut other, anna.id).await.unwrap();
    sqlx::query("UPDATE users SET tz = $1 WHERE id = $2")
        .bind(zone)
        .bind(anna.id)
        .execute(&mut *other)
        .await
        .unwrap();
    (other, pid)
}

/// A person's own create, decided in the zone its call read them in, whose
/// zone moved before it was written (by a call beside it, or on another
/// core), is decided again in the new zone, as the zone change could not
/// see it to move it; the event stored is the one answered.
async fn a_create_decided_in_a_zone_just_left_is_decided_again(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let read_before = engine.user_for_login("anna").await.unwrap();
    let zone = ProfilePatch { tz: Some("Pacific/Kiritimati".into()), ..ProfilePatch::default() };
    engine.update_profile(&read_before, &zone).await.unwrap();
    let fields = due_on_the_first("visa").fields;
    let made = engine.create_manual(&read_before, &fields).await.unwrap();
    assert_eq!(
        made.lifecycle.state,
        State::Overdue,
        "the create was written in the zone its call read, not the new one"
    );
    assert_eq!(made.zone, chrono_tz::Pacific::Kiritimati);
    let stored = engine.list_events(&read_before, None, false, None).await.unwrap();
    assert_eq!(stored[0].lifecycle, made.lifecycle);
    test.stop().await;
}

/// The same for an edit of the person's own event: decided as the person
/// is when it is written, not as its call read them, or it would put back
/// the old zone's day the zone change had just moved away from.
async fn an_edit_decided_in_a_zone_just_left_is_decided_again(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let read_before = engine.user_for_login("anna").await.unwrap();
    let visa = engine.create_manual(&read_before, &due_on_the_first("visa").fields).await.unwrap();
    assert_eq!(visa.lifecycle.state, State::Today);
    let zone = ProfilePatch { tz: Some("Pacific/Kiritimati".into()), ..ProfilePatch::default() };
    engine.update_profile(&read_before, &zone).await.unwrap();
    let patch = EventPatch { title: Some("Visa, renewed".into()), ..EventPatch::default() };
    let edited = engine.update_manual(&read_before, visa.id, patch).await.unwrap();
    assert_eq!(edited.lifecycle.state, State::Overdue, "the edit put back the old zone's day");
    test.stop().await;
}

/// A source pushing its stored events again in one call: each changed
/// one is written with its own fields (in one statement on Postgres), the
/// unchanged one is left as it was, and a key named twice meets its first
/// write and is written after it.
async fn stored_events_pushed_again_together_are_each_written_with_their_own_fields(
    backend: Backend,
) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let docs = source(engine, "docs").await;
    let first: Vec<SourceItem> =
        (0..5).map(|n| item("anna", &format!("visa-{n}"), &format!("Visa {n}"))).collect();
    let created = engine.upsert_batch(&docs, &first).await.unwrap();
    let mut again: Vec<SourceItem> = first.clone();
    for (n, event) in again.iter_mut().enumerate().filter(|(n, _)| *n != 2) {
        event.fields.title = format!("Visa {n}, renewed");
        event.fields.due_at = format!("2026-12-2{n}");
    }
    let mut twice = item("anna", "visa-3", "Visa 3, twice");
    twice.fields.due_at = "2026-12-29".into();
    again.push(twice);
    let reports = engine.upsert_batch(&docs, &again).await.unwrap();

    let outcomes: Vec<Outcome> = reports.iter().map(|report| report.outcome).collect();
    use Outcome::{Rescheduled, Unchanged};
    assert_eq!(
        outcomes,
        [Rescheduled, Rescheduled, Unchanged, Rescheduled, Rescheduled, Rescheduled]
    );
    assert_eq!(reports[5].id, created[3].id, "the key named twice is the same event");
    let anna = engine.user_for_login("anna").await.unwrap();
    for (n, report) in created.iter().enumerate() {
        let stored = engine.get_event(&anna, report.id).await.unwrap();
        let (title, due, revision) = match n {
            2 => ("Visa 2".to_owned(), "2026-12-14".to_owned(), 0),
            3 => ("Visa 3, twice".to_owned(), "2026-12-29".to_owned(), 2),
            _ => (format!("Visa {n}, renewed"), format!("2026-12-2{n}"), 1),
        };
        assert_eq!(
            (stored.spec.title.as_str(), stored.spec.due.text.as_str(), stored.revision),
            (title.as_str(), due.as_str(), revision),
            "visa-{n}"
        );
    }
    test.stop().await;
}

/// More changed stored events than one statement carries, each keeping
/// its own words however they are written (quotes, backslashes, commas,
/// braces), and a subtitle cleared written as none.
async fn more_changed_events_than_a_statement_carries_are_each_written(backend: Backend) {
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let docs = source(engine, "docs").await;
    let mut first: Vec<SourceItem> =
        (0..501).map(|n| item("anna", &format!("visa-{n}"), &format!("Visa {n}"))).collect();
    for event in &mut first {
        event.fields.subtitle = Some("Embassy, \"main\" desk".into());
    }
    let created = engine.upsert_batch(&docs, &first).await.unwrap();
    let again: Vec<SourceItem> = (0..501)
        .map(|n| item("anna", &format!("visa-{n}"), &format!("Visa {{{n}}}, \"renewed\" \\ NULL")))
        .collect();
    let reports = engine.upsert_batch(&docs, &again).await.unwrap();
    assert!(reports.iter().all(|report| report.outcome == Outcome::Updated), "{reports:?}");
    let anna = engine.user_for_login("anna").await.unwrap();
    for (n, report) in created.iter().enumerate() {
        let stored = engine.get_event(&anna, report.id).await.unwrap();
        assert_eq!(stored.spec.title.as_str(), format!("Visa {{{n}}}, \"renewed\" \\ NULL"));
        assert_eq!(stored.spec.subtitle, None, "visa-{n}");
        assert_eq!(stored.revision, 1, "visa-{n}");
    }
    test.stop().await;
}

hado_testing::on_both_backends!(
    one_event_calls_arriving_together_each_get_their_own_reports,
    more_changed_events_than_a_statement_carries_are_each_written,
    stored_events_pushed_again_together_are_each_written_with_their_own_fields,
    a_create_decided_in_a_zone_just_left_is_decided_again,
    an_edit_decided_in_a_zone_just_left_is_decided_again,
    a_new_zone_reaches_the_next_push_at_once,
    a_flood_of_full_batches_puts_one_group_ahead_of_another_sources_call,
    calls_arriving_together_each_get_their_own_reports,
    a_call_the_database_refuses_fails_alone,
    a_call_whose_caller_has_gone_is_not_applied
);

/// Group commit's connections on Postgres keep their plans (Postgres's
/// default, not the other connections' plan for every call), which is
/// safe only while every statement they keep names a row by its key or
/// writes: a read kept there, planned once while the table was empty,
/// could walk every event of a person ever after (BENCHMARKS.md, "Flat
/// in stored history"). Each path through group commit is taken here: a
/// create, a keyed create sent again, a newcomer's upsert, a stored
/// event's update, a key named twice in one call and a call that fails
/// alone; then every statement they keep must be an insert, or an update
/// or a delete of rows named by id.
#[tokio::test]
async fn grouped_statements_that_read_are_planned_per_call() {
    let Some(backend) =
        Backend::postgres("upsert_groups::grouped_statements_that_read_are_planned_per_call")
    else {
        return;
    };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let anna = engine.user_for_login("anna").await.unwrap();
    let fields =
        RawFields { title: "Dentist".into(), due_at: "2026-12-10".into(), ..RawFields::default() };
    for _ in 0..8 {
        engine.create_manual(&anna, &fields).await.unwrap();
        engine.create_manual_once(&anna, &fields, "dentist").await.unwrap();
    }
    let (_, docs) = engine.create_source("docs").await.unwrap();
    let docs = engine.source_for_token(&docs).await.unwrap().unwrap();
    test.refuse_events_titled("Refused").await;
    for round in 0..8 {
        let calls = [
            vec![item(&format!("newcomer{round}"), "visa", "Visa")],
            vec![item("anna", "visa", &format!("Visa, round {round}"))],
            vec![item("anna", "twice", "Once"), item("anna", "twice", &format!("Twice {round}"))],
            vec![item("anna", &format!("refused-{round}"), "Refused")],
        ];
        let answers = join_all(calls.iter().map(|items| engine.upsert_batch(&docs, items))).await;
        assert!(answers[..3].iter().all(Result::is_ok), "{answers:?}");
        assert!(answers[3].is_err(), "the refused call fails: {:?}", answers[3]);
    }

    let (modes, statements) = test.grouped_connections().await;
    assert!(modes.iter().all(|mode| mode == "auto"), "{modes:?}");
    // The creates' insert passes its people's gates in a `WITH` clause: the
    // gate function's reads are planned per call, whatever the statement's
    // plan, and the rest reads its own clauses.
    const GATED: &str = "WITH gate AS MATERIALIZED (SELECT * FROM hado_people_through_gate(";
    assert!(
        statements.iter().any(|statement| statement.starts_with(GATED)),
        "the creates' insert is kept: {statements:#?}"
    );
    let reads: Vec<&String> =
        statements.iter().filter(|statement| reads_a_table(statement)).collect();
    assert!(
        reads.is_empty(),
        "group commit's connections keep a plan for a read; send it unnamed (`.persistent(false)`): {reads:#?}"
    );
    test.stop().await;
}

/// What a kept statement may read rows from: its rows' arrays, a list of
/// values or a subquery (whose own FROM is read in turn), the gate
/// function, and its own `WITH` clauses.
const OWN: [&str; 5] = ["unnest", "(", "hado_people_through_gate", "gate", "ins"];

/// Whether `statement` reads a table: any other name after FROM, JOIN or
/// USING, or after a comma in a FROM list (a comma join), in any case; or
/// an `UPDATE` or `DELETE` that finds its rows by anything but their id
/// (its plan is a read of its own table too).
fn reads_a_table(statement: &str) -> bool {
    const ENDS_A_LIST: [&str; 11] = [
        "where",
        "group",
        "order",
        "limit",
        "returning",
        "union",
        "having",
        "window",
        "for",
        "set",
        "values",
    ];
    let spaced = statement
        .to_lowercase()
        .replace('(', " ( ")
        .replace(')', " ) ")
        .replace(',', " , ")
        .replace('=', " = ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    if matches!(words.first(), Some(&("update" | "delete"))) && !finds_its_rows_by_id(&words) {
        return true;
    }
    // The depths of parentheses the FROM lists open now were opened at.
    let (mut depth, mut lists): (usize, Vec<usize>) = (0, Vec::new());
    for (at, &word) in words.iter().enumerate() {
        let next = words.get(at + 1).copied().unwrap_or_default();
        // A parenthesis that opens a join, not a subquery: its first table.
        let after = words.get(at + 2).copied().unwrap_or_default();
        let a_join = next == "(" && !["select", "values", "with", "("].contains(&after);
        let in_a_list = lists.last() == Some(&depth);
        match word {
            "(" => depth += 1,
            ")" => {
                depth = depth.saturating_sub(1);
                lists.retain(|&opened| opened <= depth);
            }
            // A `DELETE`'s own table, which its filter reads.
            "from" if at == 1 && words[0] == "delete" => {}
            "from" | "join" | "using" => {
                if !OWN.contains(&next) || a_join {
                    return true;
                }
                if !in_a_list {
                    lists.push(depth);
                }
            }
            "," if in_a_list && (!OWN.contains(&next) || a_join) => return true,
            _ if in_a_list && ENDS_A_LIST.contains(&word) => {
                lists.pop();
            }
            _ => {}
        }
    }
    false
}

/// Whether an `UPDATE` or `DELETE` (its `words`) names its rows by id: its
/// top-level `WHERE` compares `id` (or `table.id`) for equality, with no
/// `OR` beside it.
fn finds_its_rows_by_id(words: &[&str]) -> bool {
    let mut depth = 0usize;
    let mut filter = None;
    for (at, &word) in words.iter().enumerate() {
        match word {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            "where" if depth == 0 => filter = Some(at + 1),
            "returning" if depth == 0 && filter.is_some() => {
                return by_id(&words[filter.unwrap_or(at)..at]);
            }
            _ => {}
        }
    }
    filter.is_some_and(|from| by_id(&words[from..]))
}

fn by_id(filter: &[&str]) -> bool {
    let id = |word: &str| word == "id" || word.ends_with(".id");
    !filter.contains(&"or") && filter.windows(2).any(|pair| id(pair[0]) && pair[1] == "=")
}

#[test]
fn a_read_is_seen_after_from_join_using_and_a_comma() {
    for reads in [
        "SELECT id FROM events WHERE id = $1",
        "select 1 from unnest($1) as r join Users u on u.id = r.id",
        "DELETE FROM x USING users WHERE true",
        "SELECT * FROM unnest($1::bigint[]) WITH ORDINALITY AS r (id, ord), users u WHERE u.id = r.id",
        "WITH gate AS (SELECT 1) SELECT * FROM gate g, events e",
        "SELECT * FROM (SELECT id FROM unnest($1) AS i (id)) AS a, users u WHERE u.id = a.id",
        "SELECT 1 FROM unnest($1) r JOIN gate g ON g.id = r.id, events e",
        "UPDATE events SET title = $1 WHERE user_id = $2",
        "SELECT 1 FROM (events e JOIN unnest($1) AS r (id) ON e.id = r.id)",
        "SELECT 1 FROM unnest($1) AS r (id), (users u JOIN gate g ON g.id = u.id)",
        "UPDATE events SET title = $1",
        "UPDATE events SET title = $1 WHERE id = $2 OR source_ref = $3",
        "DELETE FROM events WHERE source_id = $1",
        "DELETE FROM events WHERE source_id=$1 RETURNING id",
    ] {
        assert!(reads_a_table(reads), "{reads}");
    }
    for reads_none in [
        "INSERT INTO events (a, b) SELECT r.a, r.b FROM unnest($1, $2) AS r (a, b) ON CONFLICT DO NOTHING",
        "UPDATE events SET title = $2, state = $3 WHERE id = $1",
        "UPDATE events SET revision = revision + 1 WHERE id=$1 AND revision = $2 RETURNING revision",
        "UPDATE events SET title = r.title FROM unnest($1::bigint[], $2::text[]) AS r (id, title) \
         WHERE events.id = r.id",
        "DELETE FROM events WHERE id = $1",
        "UPDATE events SET title = $1 WHERE (id = $2) RETURNING id",
        "WITH gate AS MATERIALIZED (SELECT * FROM hado_people_through_gate('{}'::text[], $1::bigint[])), \
         ins AS (INSERT INTO events (a) SELECT r.a FROM unnest($2) WITH ORDINALITY AS r (a, ord) \
         JOIN gate g ON g.id = r.a ORDER BY r.ord RETURNING id) \
         SELECT g.id, NULL::bigint FROM gate g UNION ALL SELECT i.id, i.id FROM ins i",
        "SELECT coalesce(max(a), 0), count(b) FROM (VALUES (1, 2), (3, 4)) AS v (a, b)",
    ] {
        assert!(!reads_a_table(reads_none), "{reads_none}");
    }
}

/// Group commit's connections are a pool of their own on Postgres. When
/// they are gone and the server lets no new one open (its connection limit
/// reached), every create and push fails while the other pool still
/// writes: the probe must write through both, so that `/up` says 503 then,
/// and 200 again once a connection can be had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probe_fails_while_group_commit_cannot_connect() {
    use sqlx::Connection as _;
    let Some(backend) =
        Backend::postgres("upsert_groups::the_probe_fails_while_group_commit_cannot_connect")
    else {
        return;
    };
    sqlx::any::install_default_drivers();
    let Backend::Postgres(admin_url) = &backend else { unreachable!() };
    // A role of its own, allowed three connections, owning the database;
    // dropped after the database, even when the test fails.
    let role = format!("hado_limited_{}", ulid::Ulid::new().to_string().to_lowercase());
    let _dropped_after_the_database = DropRole(admin_url.clone(), role.clone());
    let database = hado_testing::TestDatabase::create(&backend).await;
    let name = database.url.rsplit_once('/').unwrap().1.to_owned();
    let mut admin = sqlx::AnyConnection::connect(&database.url).await.unwrap();
    for statement in [
        format!("CREATE ROLE {role} LOGIN CONNECTION LIMIT 3"),
        format!("ALTER DATABASE {name} OWNER TO {role}"),
        format!("ALTER SCHEMA public OWNER TO {role}"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement)).execute(&mut admin).await.unwrap();
    }
    let limited = database.url.replacen("postgres://postgres@", &format!("postgres://{role}@"), 1);
    assert_ne!(limited, database.url, "the test URL names the postgres user");

    let store = hado_storage::Store::connect(&limited).await.unwrap();
    store.probe(1).await.expect("both pools write");

    // Group commit's connection is cut, and the role's other slots taken.
    let ended = database
        .postgres_text(&format!(
            "SELECT bool_or(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity \
             WHERE usename = '{role}' AND application_name = '{}'",
            hado_storage::GROUPED_NAME
        ))
        .await;
    assert_eq!(ended, "true", "group commit's connection was there to end");
    let mut others = Vec::new();
    while let Ok(connection) = sqlx::AnyConnection::connect(&limited).await {
        others.push(connection);
        assert!(others.len() <= 3, "the role's connection limit holds");
    }
    let refused = store.probe(2).await.expect_err("group commit cannot connect");
    assert!(refused.is_unavailable(), "{refused:?}");

    drop(others);
    hado_testing::eventually("the probe writes again", || async { store.probe(3).await.ok() })
        .await;

    store.close().await;
    drop(admin);
    database.drop_now().await;
}

/// A Postgres role a test made, dropped when this is (its database first).
struct DropRole(String, String);

impl Drop for DropRole {
    fn drop(&mut self) {
        use sqlx::Connection as _;
        let (admin_url, role) = (self.0.clone(), self.1.clone());
        // On a thread of its own: the test's runtime cannot be blocked on.
        let dropping = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
            runtime.expect("a runtime to drop the role").block_on(async {
                let statement = format!("DROP ROLE IF EXISTS {role}");
                let dropped = match sqlx::AnyConnection::connect(&admin_url).await {
                    Ok(mut admin) => sqlx::query(sqlx::AssertSqlSafe(statement))
                        .execute(&mut admin)
                        .await
                        .map(|_| ()),
                    Err(error) => Err(error),
                };
                if let Err(error) = dropped {
                    eprintln!("the test's role {role} was left behind: {error}");
                }
            });
        });
        let _ = dropping.join();
    }
}

/// Group commit's connections cut behind its back (a Postgres that
/// restarted, a proxy that dropped them): the next create and the next
/// push go through on new ones, with nothing refused and nothing written
/// twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_commit_goes_on_past_connections_that_died() {
    let Some(backend) =
        Backend::postgres("upsert_groups::group_commit_goes_on_past_connections_that_died")
    else {
        return;
    };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let anna = engine.user_for_login("anna").await.unwrap();
    let (_, docs) = engine.create_source("docs").await.unwrap();
    let docs = engine.source_for_token(&docs).await.unwrap().unwrap();
    let fields =
        RawFields { title: "Dentist".into(), due_at: "2026-12-10".into(), ..RawFields::default() };
    let cut = || async {
        // Both of the pool's connections open, then cut.
        let _ = test.grouped_connections().await;
        test.postgres_text(&format!(
            "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity \
             WHERE datname = current_database() AND application_name = '{}'",
            hado_storage::GROUPED_NAME
        ))
        .await
    };
    for round in 0..3 {
        assert_eq!(cut().await, "2", "round {round}: both connections were there to cut");
        engine.create_manual(&anna, &fields).await.expect("a create after the cut");
        assert_eq!(cut().await, "2", "round {round}");
        let items = [item("anna", &format!("visa-{round}"), "Visa")];
        engine.upsert_batch(&docs, &items).await.expect("a push after the cut");
    }
    let stored = test.postgres_text("(SELECT count(*) FROM events)").await;
    assert_eq!(stored, "6", "each call wrote its one event");
    test.stop().await;
}

/// Runs `statement`, with `$1` bound to `name`, on `other`'s transaction,
/// as a group on another core would: waiting at most half a second for a
/// key or a row another transaction holds.
pub(super) async fn elsewhere(
    other: &mut sqlx::Transaction<'static, sqlx::Any>,
    statement: &str,
    name: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("SET LOCAL lock_timeout = '500ms'").execute(&mut **other).await?;
    sqlx::query(sqlx::AssertSqlSafe(statement)).bind(name).execute(&mut **other).await.map(drop)
}

/// A new event of `docs` for anna, inserted by [`elsewhere`].
const INSERT: &str = "INSERT INTO events (user_id, source_id, source_ref, topic, title, due_at, \
    due_date, due_ms, fire_date, after_due, state, created_at, updated_at) \
    VALUES ((SELECT id FROM users WHERE login = 'anna'), (SELECT id FROM sources WHERE name = 'docs'), \
    $1, '', 'Elsewhere', '2026-12-14', '2026-12-14', 0, '2026-12-01', 'keep', 'scheduled', 0, 0)";

/// Anna's stored event, locked by [`elsewhere`] as an update would lock it.
pub(super) const LOCK: &str = "SELECT id FROM events WHERE source_ref = $1 FOR UPDATE";

/// A newcomer, made by [`elsewhere`] as a group on another core makes one.
const NEWCOMER: &str = "INSERT INTO users (login, tz, locale, created_at, updated_at) \
    VALUES ($1, 'UTC', 'en', 0, 0)";

/// Two groups taking the same rows in opposite orders (two cores, each
/// with its own source's calls) must not each hold a row the other waits
/// for: Postgres would end the deadlock only after a second, by failing
/// one. Another writer takes `names[0]` by `statement`; `docs`'s group of
/// `calls`, which names both, the other last, must then wait for it; and
/// the other writer goes on to `names[1]`, which the group must not hold.
/// The group's reports, once the other writer commits.
async fn in_one_order(
    engine: &std::sync::Arc<hado_engine::Engine>,
    docs: &hado_engine::SourceCaller,
    statement: &str,
    names: [&str; 2],
    calls: Vec<SourceItem>,
) -> Vec<hado_engine::UpsertReport> {
    let (engine_, docs) = (engine.clone(), docs.clone());
    let group = async move { engine_.upsert_batch(&docs, &calls).await };
    in_one_order_of(engine, statement, names, group)
        .await
        .expect("the group is written once the other commits")
}

/// [`in_one_order`] for any write of the engine's that names both rows.
async fn in_one_order_of<T: Send + 'static>(
    engine: &hado_engine::Engine,
    statement: &str,
    names: [&str; 2],
    write: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    let (mut other, others) = other_writer(engine).await;
    elsewhere(&mut other, statement, names[0]).await.unwrap();
    let write = tokio::spawn(write);
    blocked_by(engine, others).await;
    elsewhere(&mut other, statement, names[1]).await.unwrap_or_else(|error| {
        panic!("the write took {:?} before it waited for {:?}: {error}", names[1], names[0])
    });
    other.commit().await.unwrap();
    write.await.unwrap()
}

/// A group inserts its new keys in one order, whatever order its calls
/// gave.
#[tokio::test]
async fn groups_naming_the_same_new_keys_take_them_in_one_order() {
    let test = "upsert_groups::groups_naming_the_same_new_keys_take_them_in_one_order";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    engine.user_for_login("anna").await.unwrap();
    let docs = source(engine, "docs").await;
    let calls = vec![item("anna", "b", "B"), item("anna", "a", "A")];
    let reports = in_one_order(engine, &docs, INSERT, ["a", "b"], calls).await;
    assert_eq!(reports.len(), 2);
    test.stop().await;
}

/// The sessions of the engine's database that wait for the session `pid`
/// (another writer's).
async fn waiting_for(engine: &hado_engine::Engine, pid: i32) -> Vec<i32> {
    let waiting = "SELECT pid FROM pg_stat_activity \
                   WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))";
    sqlx::query_scalar(waiting).bind(pid).fetch_all(engine.store().reader()).await.unwrap()
}

/// Waits until a session of the engine's database waits for the session
/// `pid` (another writer's), and returns that session's pid.
pub(super) async fn blocked_by(engine: &hado_engine::Engine, pid: i32) -> i32 {
    let started = std::time::Instant::now();
    loop {
        if let Some(waiter) = waiting_for(engine, pid).await.first() {
            return *waiter;
        }
        assert!(started.elapsed().as_secs() < 10, "nothing waited for the other writer");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// A group updates its stored events in one order, whatever order its
/// calls gave. The other writer locks the rows without changing them, so
/// the group's insert passes over them without waiting.
#[tokio::test]
async fn groups_changing_the_same_stored_events_take_them_in_one_order() {
    let test = "upsert_groups::groups_changing_the_same_stored_events_take_them_in_one_order";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let docs = source(engine, "docs").await;
    engine.upsert_batch(&docs, &[item("anna", "a", "A"), item("anna", "b", "B")]).await.unwrap();
    let calls = vec![item("anna", "b", "B, moved"), item("anna", "a", "A, moved")];
    let reports = in_one_order(engine, &docs, LOCK, ["a", "b"], calls).await;
    assert!(reports.iter().all(|report| report.outcome == Outcome::Updated), "{reports:?}");
    test.stop().await;
}

/// A source's withdrawal of several events writes them in one order with
/// the groups' (by id), whatever order its keys gave.
#[tokio::test]
async fn a_withdrawal_takes_its_events_in_the_groups_order() {
    let test = "upsert_groups::a_withdrawal_takes_its_events_in_the_groups_order";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let docs = source(engine, "docs").await;
    engine.upsert_batch(&docs, &[item("anna", "a", "A"), item("anna", "b", "B")]).await.unwrap();
    let key =
        |name: &str| RawKey { user: "anna".into(), source_ref: name.into(), topic: String::new() };
    let keys = vec![key("b"), key("a")];
    let withdrawal = {
        let engine = engine.clone();
        async move { engine.withdraw_batch(&docs, &keys).await }
    };
    let reports = in_one_order_of(engine, LOCK, ["a", "b"], withdrawal).await.unwrap();
    assert!(reports.iter().all(|report| report.found.is_some()), "{reports:?}");
    test.stop().await;
}

/// A zone change takes the open events it moves in id order too, whatever
/// order its read finds them in: here the first, rescheduled, was written
/// anew after the second.
#[tokio::test]
async fn a_zone_change_takes_its_events_in_the_groups_order() {
    let test = "upsert_groups::a_zone_change_takes_its_events_in_the_groups_order";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let docs = source(engine, "docs").await;
    engine.upsert_batch(&docs, &[item("anna", "a", "A"), item("anna", "b", "B")]).await.unwrap();
    let mut later = item("anna", "a", "A");
    later.fields.due_at = "2026-12-20".into();
    engine.upsert_batch(&docs, &[later]).await.unwrap();
    let anna = engine.user_for_login("anna").await.unwrap();
    let zone = ProfilePatch { tz: Some("Pacific/Kiritimati".into()), ..ProfilePatch::default() };
    let change = {
        let engine = engine.clone();
        async move { engine.update_profile(&anna, &zone).await }
    };
    in_one_order_of(engine, LOCK, ["a", "b"], change).await.unwrap();
    test.stop().await;
}

/// Deleting a source takes its events in id order too, whatever order its
/// scan finds them in: here by key, and the later key was pushed first.
#[tokio::test]
async fn a_source_deleted_takes_its_events_in_the_groups_order() {
    let test = "upsert_groups::a_source_deleted_takes_its_events_in_the_groups_order";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let docs = source(engine, "docs").await;
    engine.upsert_batch(&docs, &[item("anna", "b", "B")]).await.unwrap();
    engine.upsert_batch(&docs, &[item("anna", "a", "A")]).await.unwrap();
    let delete = {
        let engine = engine.clone();
        async move { engine.delete_source("docs").await }
    };
    let (_, deleted) = in_one_order_of(engine, LOCK, ["b", "a"], delete).await.unwrap();
    assert_eq!(deleted, 2);
    test.stop().await;
}

/// A group makes its newcomers in the logins' order, whatever order its
/// calls gave.
#[tokio::test]
async fn groups_making_the_same_newcomers_make_them_in_one_order() {
    let test = "upsert_groups::groups_making_the_same_newcomers_make_them_in_one_order";
    let Some(backend) = Backend::postgres(test) else { return };
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let engine = &test.engine;
    let docs = source(engine, "docs").await;
    let calls = vec![item("carl", "visa", "Visa"), item("bob", "visa", "Visa")];
    let reports = in_one_order(engine, &docs, NEWCOMER, ["bob", "carl"], calls).await;
    assert!(reports.iter().all(|report| report.outcome == Outcome::Created), "{reports:?}");
    test.stop().await;
}

/// `name`, a source of the engine's, as its calls name it.
/// Waits until `engine` keeps what it reads (on Postgres, once it listens
/// for other cores' changes), so that its groups take their people from
/// what it keeps.
async fn keeping(engine: &hado_engine::Engine) {
    let started = std::time::Instant::now();
    while !engine.keeps_what_it_reads() {
        assert!(started.elapsed().as_secs() < 10, "the engine never listened for changes");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

async fn source(engine: &hado_engine::Engine, name: &str) -> hado_engine::SourceCaller {
    let (_, token) = engine.create_source(name).await.unwrap();
    engine.source_for_token(&token).await.unwrap().unwrap()
}

/// A transaction of the test's own on the engine's writer, as another core's
/// would be, and its session's pid.
pub(super) async fn other_writer(engine: &hado_engine::Engine) -> (hado_storage::Tx, i32) {
    let mut other = engine.store().writer().begin().await.unwrap();
    let pid = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut *other).await.unwrap();
    (other, pid)
}

/// A Postgres test's engine (none without Postgres), with docs's visa for
/// anna, due on the 1st, pushed: the source, and anna.
pub(super) async fn with_a_visa(
    name: &str,
) -> Option<(TestEngine, hado_engine::SourceCaller, hado_domain::user::UserRecord)> {
    let backend = Backend::postgres(name)?;
    let test = TestEngine::start(&backend, "2026-12-01T10:00:00Z").await;
    let docs = source(&test.engine, "docs").await;
    test.engine.upsert_batch(&docs, &[due_on_the_first("visa")]).await.unwrap();
    let anna = test.engine.user_for_login("anna").await.unwrap();
    Some((test, docs, anna))
}
