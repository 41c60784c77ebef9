//! Owns the Inbox calls on the person's events: the inbox view, list, get,
//! create, change, delete, Done, Remember and its undo, Reopen.

use hado_proto::v1;

use super::InboxService;
use crate::grpc::auth::UserCaller;
use crate::wire::{self, raw_fields};
use hado_engine::error::CoreError;
use hado_engine::{EventFilter, EventPatch, InboxAsk, PageAsk};

/// What an inbox shows; its attention count is the view's own, read with
/// its groups' counts, whoever the caller is.
pub(super) async fn view(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::GetInboxRequest,
) -> Result<v1::InboxView, CoreError> {
    let ask = InboxAsk {
        pages: body
            .pages
            .into_iter()
            .map(|page| PageAsk { state: page.state, limit: page.limit, after: page.after })
            .collect(),
        archive: body.archive,
        filter: EventFilter { text: body.text, source: body.source },
    };
    let view = inbox.engine.inbox_view(&caller.user, &ask).await?;
    Ok(wire::inbox_view(&caller.user, inbox.engine.now(), inbox.engine.default_zone(), view))
}

pub(super) async fn list(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::ListEventsRequest,
) -> Result<v1::EventList, CoreError> {
    let filter = EventFilter { text: body.text, source: body.source };
    let (records, next) = inbox
        .engine
        .list_events_after(
            &caller.user,
            body.state.as_deref(),
            body.archive,
            body.limit,
            body.after.as_deref(),
            &filter,
        )
        .await?;
    let mut list = wire::events(records);
    list.next = next;
    Ok(list)
}

pub(super) async fn get(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::EventId,
) -> Result<v1::Event, CoreError> {
    let record = inbox.engine.get_event(&caller.user, body.id).await?;
    let mut event = wire::event(&record);
    event.next_reminder_at =
        record.reminders.next_reminder(&record.lifecycle, &record.ladder()).map(wire::timestamp);
    event.deliveries = inbox
        .engine
        .event_deliveries(&caller.user, record.id)
        .await?
        .iter()
        .map(wire::delivery)
        .collect();
    Ok(event)
}

/// Creates the person's own event; once per `once` key, when the caller
/// named one.
pub(super) async fn create(
    inbox: &InboxService,
    caller: UserCaller,
    fields: v1::EventFields,
    once: Option<String>,
) -> Result<v1::Event, CoreError> {
    let fields = raw_fields(fields);
    let record = match once {
        Some(key) => inbox.engine.create_manual_once(&caller.user, &fields, &key).await?,
        None => inbox.engine.create_manual(&caller.user, &fields).await?,
    };
    Ok(wire::event(&record))
}

pub(super) async fn update(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::UpdateEventRequest,
) -> Result<v1::Event, CoreError> {
    let patch = EventPatch {
        title: body.title,
        due_at: body.due_at,
        subtitle: body.subtitle,
        fire_at: body.fire_at,
        after_due: body.after_due,
        done_label: body.done_label,
        deep_link: body.deep_link,
    };
    Ok(wire::event(&inbox.engine.update_manual(&caller.user, body.id, patch).await?))
}

pub(super) async fn delete(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::EventId,
) -> Result<v1::DeleteEventReply, CoreError> {
    let deleted = inbox.engine.delete_manual(&caller.user, body.id).await?;
    let event = wire::event(&deleted);
    Ok(v1::DeleteEventReply { id: event.id, state: event.state, event: Some(event) })
}

pub(super) async fn mark_done(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::EventId,
) -> Result<v1::Event, CoreError> {
    Ok(wire::event(&inbox.engine.mark_done(&caller.user, body.id).await?))
}

pub(super) async fn mark_ack(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::MarkAckRequest,
) -> Result<v1::Event, CoreError> {
    let remember = wire::remember_for(body.until.as_deref())?;
    Ok(wire::event(&inbox.engine.remember(&caller.user, body.id, remember).await?))
}

pub(super) async fn take_back_ack(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::EventId,
) -> Result<v1::Event, CoreError> {
    Ok(wire::event(&inbox.engine.take_back_remember(&caller.user, body.id).await?))
}

pub(super) async fn reopen(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::EventId,
) -> Result<v1::Event, CoreError> {
    Ok(wire::event(&inbox.engine.reopen(&caller.user, body.id).await?))
}
