//! The reminders a deadline must never miss, end to end through gRPC, the
//! scheduler and a real webhook receiver: an event that arrives after its
//! last checkpoint is reminded at once (or when quiet hours end), every open
//! event is reminded at its due moment, Remember quiets it only until then,
//! a new zone never leaves Remember's quiet past the deadline, and the
//! inbox's badge counts every unanswered event due today or overdue.

use chrono::Duration as Span;
use serde_json::Value;

use hado_core::delivery;
use hado_proto::convert::rfc3339;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore, utc};

use super::webhooks::Receiver;

/// The checkpoints of the reminders `path` has received, in order.
fn checkpoints(receiver: &Receiver, path: &str) -> Vec<String> {
    receiver
        .at(path)
        .iter()
        .map(|received| serde_json::from_str::<Value>(&received.body).unwrap())
        .filter(|body| body["type"] == "reminder.checkpoint")
        .map(|body| format!("{} {}", body["event"]["title"].as_str().unwrap(), body["checkpoint"]))
        .collect()
}

type Inbox = v1::inbox_client::InboxClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, testing::Bearer>,
>;

/// anna, in Berlin, with a webhook at `/anna` on a receiver of her own.
async fn anna_in_berlin_with_a_webhook(core: &TestCore) -> (Receiver, Inbox) {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let mut anna = core.inbox_as("anna");
    anna.update_profile(v1::UpdateProfileRequest {
        tz: Some("Europe/Berlin".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    anna.add_webhook(v1::AddWebhookRequest { url: format!("{base}/anna") }).await.unwrap();
    (receiver, anna)
}

async fn tick(core: &TestCore) {
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    delivery::drain(&core.deliverer()).await.unwrap();
}

async fn late_arrivals_are_reminded_at_once_and_every_deadline_at_its_moment(backend: Backend) {
    // 14:32 in Berlin; quiet hours are the default 22:00–08:00.
    let core = TestCore::start(&backend, "2026-12-14T13:32:00Z").await;
    let (receiver, mut anna) = anna_in_berlin_with_a_webhook(&core).await;

    // A source pushes an event due at 14:50 today: its morning and its hour
    // before have passed. It is reminded now, not tomorrow morning.
    let token = core.source_token("visa-office").await;
    let pushed = v1::EventFields {
        title: "Pick up visa".into(),
        due_at: "2026-12-14T14:50".into(),
        ..Default::default()
    };
    let visa = core.push(&token, "anna", "visa-1", pushed.clone()).await;
    tick(&core).await;
    receiver.wait_for("anna", 1).await;
    assert_eq!(checkpoints(&receiver, "anna"), [r#"Pick up visa "2026-12-14T13:32:00Z""#]);
    // The same push again is no arrival: nothing more.
    core.push(&token, "anna", "visa-1", pushed).await;
    tick(&core).await;
    assert_eq!(checkpoints(&receiver, "anna").len(), 1, "an unchanged upsert reminds no more");

    // Remember quiets it until the next checkpoint: its due moment.
    let remembered =
        anna.mark_ack(v1::MarkAckRequest { id: visa, until: None }).await.unwrap().into_inner();
    assert_eq!(rfc3339(remembered.quiet_until.as_ref()), "2026-12-14T13:50:00Z");

    // The person's own event, as the web form and an agent add it: due at
    // 15:30, after its last rung, so reminded at once too.
    let call = anna
        .create_event(v1::EventFields {
            title: "Call the bank".into(),
            due_at: "2026-12-14T15:30".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    tick(&core).await;
    receiver.wait_for("anna", 2).await;

    // At 14:50 the visa's deadline arrives: it reminds, Remember or not.
    core.clock.set(utc("2026-12-14T13:50:00Z"));
    tick(&core).await;
    receiver.wait_for("anna", 3).await;
    assert_eq!(
        checkpoints(&receiver, "anna"),
        [
            r#"Pick up visa "2026-12-14T13:32:00Z""#,
            r#"Call the bank "2026-12-14T13:32:00Z""#,
            r#"Pick up visa "2026-12-14T13:50:00Z""#,
        ]
    );

    // Remembered at 14:55 Berlin, the call is quiet until its due moment,
    // 15:30. In Tokyo, 15:30 is long past (it is 22:55 there): the quiet
    // moves with the zone and never outlives the deadline.
    core.clock.set(utc("2026-12-14T13:55:00Z"));
    let quiet =
        anna.mark_ack(v1::MarkAckRequest { id: call.id, until: None }).await.unwrap().into_inner();
    assert_eq!(rfc3339(quiet.quiet_until.as_ref()), "2026-12-14T14:30:00Z");
    anna.update_profile(v1::UpdateProfileRequest {
        tz: Some("Asia/Tokyo".into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let moved = anna.get_event(v1::EventId { id: call.id }).await.unwrap().into_inner();
    let (until, due) = (moved.quiet_until.unwrap(), moved.due_instant.unwrap());
    assert!(until.seconds <= due.seconds, "quiet until {until:?}, due {due:?}");
    assert_eq!(rfc3339(Some(&due)), "2026-12-14T06:30:00Z", "15:30 in Tokyo");
    core.stop().await;
}

async fn a_late_arrival_in_quiet_hours_waits_for_their_end(backend: Backend) {
    // 22:30 in Berlin, inside the quiet hours.
    let core = TestCore::start(&backend, "2026-12-14T21:30:00Z").await;
    let (receiver, mut anna) = anna_in_berlin_with_a_webhook(&core).await;
    // Due today, all day: its morning has passed, and no rung is left before midnight.
    anna.create_event(v1::EventFields {
        title: "Send the form".into(),
        due_at: "2026-12-14".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    tick(&core).await;
    assert!(receiver.at("anna").is_empty(), "nothing during quiet hours");
    // 08:00, when the quiet hours end, it is reminded.
    core.clock.set(utc("2026-12-15T07:00:00Z"));
    tick(&core).await;
    receiver.wait_for("anna", 1).await;
    assert_eq!(checkpoints(&receiver, "anna"), [r#"Send the form "2026-12-15T07:00:00Z""#]);
    core.clock.advance(Span::minutes(1));
    tick(&core).await;
    assert_eq!(receiver.at("anna").len(), 1, "one reminder, not two");
    core.stop().await;
}

async fn the_badge_counts_every_unanswered_event_due_today_or_overdue(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-14T09:00:00Z").await;
    let mut anna = core.inbox_as("anna");
    let token = core.source_token("office").await;
    // Eight overdue and five due today, pushed by a source after their
    // checkpoints: no reminder has fired for any of them yet.
    let mut ids = Vec::new();
    for (day, count) in [("2026-12-02", 8), ("2026-12-14", 5)] {
        for index in 0..count {
            let fields = v1::EventFields {
                title: format!("Bill {day} {index}"),
                due_at: day.into(),
                ..Default::default()
            };
            ids.push(core.push(&token, "anna", &format!("{day}-{index}"), fields).await);
        }
    }
    anna.create_event(v1::EventFields {
        title: "Later".into(),
        due_at: "2027-03-01".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let attention = |mut inbox: v1::inbox_client::InboxClient<_>| async move {
        inbox.get_profile(v1::GetProfileRequest::default()).await.unwrap().into_inner().attention
    };
    assert_eq!(attention(anna.clone()).await, 13);
    let listed = anna
        .list_events(v1::ListEventsRequest { state: Some("overdue".into()), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .events;
    assert!(listed.iter().all(|event| event.needs_attention), "{listed:?}");
    // Remember answers one, Done another; the rest still count.
    anna.mark_ack(v1::MarkAckRequest { id: ids[0], until: None }).await.unwrap();
    anna.mark_done(v1::EventId { id: ids[1] }).await.unwrap();
    assert_eq!(attention(anna.clone()).await, 11);
    // The scheduler's reminders do not count them twice.
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    assert_eq!(attention(anna.clone()).await, 11);
    core.stop().await;
}

hado_testing::on_both_backends!(
    the_badge_counts_every_unanswered_event_due_today_or_overdue,
    late_arrivals_are_reminded_at_once_and_every_deadline_at_its_moment,
    a_late_arrival_in_quiet_hours_waits_for_their_end
);
