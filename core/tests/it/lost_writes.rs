//! A write that decides from an event it read must not write over a change
//! committed between its read and its own. On Postgres several writers run
//! at once (cores, and a core's own calls); SQLite's one writer orders
//! every write, so these are Postgres's. Each test takes the event in a
//! transaction of its own, as a write under way on another core holds it,
//! starts the write, which must wait for it, then changes the event and
//! commits, and checks that the change stands.

use std::future::Future;

use hado_domain::event::{Outcome, RememberFor};
use hado_domain::state::State;
use hado_engine::error::CoreError;
use hado_engine::{Engine, EventPatch, RawKey};
use hado_testing::TestEngine;

use super::upsert_groups::{
    LOCK, blocked_by, due_on_the_first, elsewhere, other_writer, with_a_visa,
};

/// The source's withdrawal, or the scheduler's expiry, as another core
/// writes it.
const WITHDRAW: &str =
    "UPDATE events SET state = 'withdrawn', next_check_at = NULL WHERE source_ref = $1";

/// The person's Done, as another core writes it.
const DONE: &str = "UPDATE events SET state = 'done', closed_at = updated_at, next_check_at = NULL WHERE source_ref = $1";

/// Another writer takes the event under `source_ref`; `write` starts and
/// must wait for it; the other writer then runs `change` and commits.
/// What `write` answered, and the event's state as stored.
async fn meeting<T: Send + 'static, F: Future<Output = T> + Send + 'static>(
    test: &TestEngine,
    source_ref: &str,
    change: &str,
    write: impl FnOnce(std::sync::Arc<Engine>) -> F,
) -> (T, String) {
    let engine = &test.engine;
    let (mut other, others) = other_writer(engine).await;
    elsewhere(&mut other, LOCK, source_ref).await.unwrap();
    let written = tokio::spawn(write(engine.clone()));
    blocked_by(engine, others).await;
    elsewhere(&mut other, change, source_ref).await.unwrap();
    other.commit().await.unwrap();
    let answer = written.await.unwrap();
    let state = test
        .postgres_text(&format!("(SELECT state FROM events WHERE source_ref = '{source_ref}')"))
        .await;
    (answer, state)
}

/// Done, Remember and taking Remember back, on an event its source
/// withdrew (or the scheduler expired) as they ran, are refused as on any
/// withdrawn event, and the event stays withdrawn: not written back open
/// (Remember, take-back) or done.
#[tokio::test]
async fn answers_do_not_reopen_an_event_withdrawn_as_they_ran() {
    let Some((test, docs, anna)) =
        with_a_visa("lost_writes::answers_do_not_reopen_an_event_withdrawn_as_they_ran").await
    else {
        return;
    };
    for answer in ["done", "remember", "take back"] {
        let reports = test.engine.upsert_batch(&docs, &[due_on_the_first(answer)]).await.unwrap();
        let id = reports[0].id;
        if answer == "take back" {
            test.engine.remember(&anna, id, RememberFor::TomorrowMorning).await.unwrap();
        }
        let anna = anna.clone();
        let (answered, state) = meeting(&test, answer, WITHDRAW, move |engine| async move {
            match answer {
                "done" => engine.mark_done(&anna, id).await,
                "remember" => engine.remember(&anna, id, RememberFor::TomorrowMorning).await,
                _ => engine.take_back_remember(&anna, id).await,
            }
        })
        .await;
        assert!(
            matches!(answered, Err(CoreError::Withdrawn { .. })),
            "{answer} on an event withdrawn as it ran: {answered:?}"
        );
        assert_eq!(state, "withdrawn", "{answer} wrote over the withdrawal");
    }
    test.stop().await;
}

/// Reopening a done event its source withdrew as the reopen ran is the
/// source's to undo: refused, and the event stays withdrawn.
#[tokio::test]
async fn a_reopen_does_not_undo_a_withdrawal_made_as_it_ran() {
    let Some((test, _, anna)) =
        with_a_visa("lost_writes::a_reopen_does_not_undo_a_withdrawal_made_as_it_ran").await
    else {
        return;
    };
    let visa = test.engine.list_events(&anna, None, false, None).await.unwrap().remove(0);
    test.engine.mark_done(&anna, visa.id).await.unwrap();
    let (answered, state) = meeting(&test, "visa", WITHDRAW, move |engine| async move {
        engine.reopen(&anna, visa.id).await
    })
    .await;
    assert!(matches!(answered, Err(CoreError::SourceOwned(_))), "{answered:?}");
    assert_eq!(state, "withdrawn", "the reopen wrote over the withdrawal");
    test.stop().await;
}

/// A source's push that changes an event the person marks Done on another
/// core as the push runs keeps the Done: the push is decided from the
/// event as the Done left it.
#[tokio::test]
async fn a_push_does_not_write_over_a_done_made_as_it_ran() {
    let Some((test, docs, _)) =
        with_a_visa("lost_writes::a_push_does_not_write_over_a_done_made_as_it_ran").await
    else {
        return;
    };
    let mut renamed = due_on_the_first("visa");
    renamed.fields.title = "Visa, renewed".into();
    let (answered, state) = meeting(&test, "visa", DONE, move |engine| async move {
        engine.upsert_batch(&docs, &[renamed]).await
    })
    .await;
    let reports = answered.unwrap();
    assert_eq!(reports[0].outcome, Outcome::Updated);
    assert_eq!(reports[0].state, State::Done, "the push answered the state it read before");
    assert_eq!(state, "done", "the push wrote over the Done");
    test.stop().await;
}

/// The person's edit of their own event, which their agent marks Done
/// on another core as the edit runs, keeps the Done.
#[tokio::test]
async fn an_edit_does_not_write_over_a_done_made_as_it_ran() {
    let Some((test, _, anna)) =
        with_a_visa("lost_writes::an_edit_does_not_write_over_a_done_made_as_it_ran").await
    else {
        return;
    };
    let own = test.engine.create_manual(&anna, &due_on_the_first("own").fields).await.unwrap();
    let patch = EventPatch { subtitle: Some("Bring the photos".into()), ..EventPatch::default() };
    let (answered, state) = meeting(&test, &own.source_ref, DONE, move |engine| async move {
        engine.update_manual(&anna, own.id, patch).await
    })
    .await;
    let edited = answered.unwrap();
    assert_eq!(edited.lifecycle.state, State::Done, "the edit answered the state it read before");
    assert_eq!(state, "done", "the edit wrote over the Done");
    test.stop().await;
}

/// A source's withdrawal of an event another withdrawal (or the
/// scheduler's expiry) closed as it ran leaves it as that one closed it:
/// not closed again, at another moment.
#[tokio::test]
async fn a_withdrawal_does_not_close_again_an_event_closed_as_it_ran() {
    let Some((test, docs, _)) =
        with_a_visa("lost_writes::a_withdrawal_does_not_close_again_an_event_closed_as_it_ran")
            .await
    else {
        return;
    };
    let closed = "UPDATE events SET state = 'withdrawn', closed_at = 12345, next_check_at = NULL \
                  WHERE source_ref = $1";
    let key = RawKey { user: "anna".into(), source_ref: "visa".into(), topic: String::new() };
    let (answered, state) = meeting(&test, "visa", closed, move |engine| async move {
        engine.withdraw_batch(&docs, &[key]).await
    })
    .await;
    assert!(answered.unwrap()[0].found.is_some());
    assert_eq!(state, "withdrawn");
    let closed_at =
        test.postgres_text("(SELECT closed_at::text FROM events WHERE source_ref = 'visa')").await;
    assert_eq!(closed_at, "12345", "the withdrawal wrote over the one committed as it ran");
    test.stop().await;
}
