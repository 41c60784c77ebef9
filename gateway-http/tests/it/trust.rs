//! What a person meets in the web inbox when someone tries to turn Hado
//! against them, on both backends: an old Done link after its event and
//! source were deleted and a newer event was added is the expired-link
//! page and closes nothing; a burst of "Send a test" stops at the cap with
//! a 429 in the person's words and when to try again.

use reqwest::StatusCode;

use crate::web::Stack;
use hado_engine::links::LinkAction;
use hado_proto::v1;
use hado_testing::Backend;

fn fields(title: &str, due_at: &str) -> v1::EventFields {
    v1::EventFields { title: title.into(), due_at: due_at.into(), ..Default::default() }
}

async fn an_old_link_is_the_expired_link_page_and_a_burst_of_tests_is_capped(backend: Backend) {
    let stack = Stack::start_configured(&backend, "2026-12-01T10:00:00Z", |_| {}).await;
    let core = &stack.core;

    // The newest event, its Done link kept; then its source deleted and
    // another event added, which on an old SQLite took the same id.
    let docs = core.source_token("docs").await;
    let newest = core.push(&docs, "anna", "permit", fields("Permit", "2026-12-20")).await;
    let anna = core.engine.user_for_login("anna").await.unwrap();
    let token = core.engine.issue_action_link(&anna, newest, LinkAction::Done).await.unwrap();
    core.engine.delete_source("docs").await.unwrap();
    let bills = core.source_token("bills").await;
    let rent = core.push(&bills, "anna", "rent", fields("Rent", "2026-12-10")).await;
    let (status, page) = stack.get(&format!("/a/{token}")).await;
    assert_eq!(status, StatusCode::GONE, "{page}");
    assert!(page.contains("This link has expired."), "{page}");
    let (status, _, page) = stack.post(&format!("/a/{token}"), &[]).await;
    assert_eq!(status, StatusCode::GONE, "{page}");
    assert!(page.contains("This link has expired."), "{page}");
    let rent = core.inbox_as("anna").get_event(v1::EventId { id: rent }).await.unwrap();
    assert_ne!(rent.into_inner().state(), v1::EventState::Done);

    // Five tests to one channel, then a 429 that says when to try again.
    let hook = core
        .inbox_as("anna")
        .add_webhook(v1::AddWebhookRequest { url: "http://127.0.0.1:9/hook".into() })
        .await
        .unwrap()
        .into_inner()
        .channel
        .unwrap()
        .id;
    for _ in 0..5 {
        let (status, location, _) =
            stack.post(&format!("/settings/channels/{hook}/test"), &[]).await;
        assert_eq!(
            (status, location.as_str()),
            (StatusCode::SEE_OTHER, "/settings?tested=1#reminders")
        );
    }
    let response = stack
        .client
        .post(format!("{}/settings/channels/{hook}/test", stack.base))
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "600");
    let page = response.text().await.unwrap();
    assert!(page.contains("Too many test messages for now. Try again in 10 min."), "{page}");
    stack.stop().await;
}

hado_testing::on_both_backends!(
    an_old_link_is_the_expired_link_page_and_a_burst_of_tests_is_capped
);
