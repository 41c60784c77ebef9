//! Owns the `hado.v1.Inbox` service: the person's (and their agent's) calls,
//! each taking the same four steps (who is calling, the engine's answer,
//! a refusal in the caller's words, the reply) in [`InboxService::answer`],
//! and handed to its family for what differs: `events`, `profile`,
//! `channels` and `credentials`.

mod channels;
mod credentials;
mod events;
mod profile;

use std::future::Future;
use std::sync::Arc;

use tonic::{Request, Response, Status};

use hado_proto::metadata::IDEMPOTENCY_KEY;
use hado_proto::v1::{self, inbox_server::Inbox};

use super::auth::{self, Credentials, UserCaller};
use crate::status::OrStatus;
use hado_engine::Engine;
use hado_engine::error::CoreError;

pub(crate) struct InboxService {
    pub(crate) engine: Arc<Engine>,
    pub(crate) credentials: Credentials,
    /// The Telegram bot, when one is set up: linking a chat asks its name.
    pub(crate) telegram: Option<crate::telegram::Bot>,
    /// Whether email is set up (`HADO_SMTP_URL`), so that an address can be added.
    pub(crate) email: bool,
}

/// Who may make a call.
#[derive(Clone, Copy)]
enum Who {
    /// The person, or their agent.
    Anyone,
    /// The person at the inbox, not their agent: see [`auth::person_at_inbox`].
    Person,
}

impl InboxService {
    /// A call's four steps: who is calling, `handler` with the request's
    /// message, its refusal in the caller's words, the reply.
    async fn answer<'a, T, R, F>(
        &'a self,
        who: Who,
        request: Request<T>,
        handler: impl FnOnce(&'a Self, UserCaller, T) -> F,
    ) -> Result<Response<R>, Status>
    where
        F: Future<Output = Result<R, CoreError>>,
    {
        let caller =
            auth::user(&self.engine, &self.credentials, request.metadata()).await.or_status()?;
        let caller = match who {
            Who::Anyone => caller,
            Who::Person => auth::person_at_inbox(caller).or_status()?,
        };
        let refusal = caller.refusal();
        handler(self, caller, request.into_inner()).await.map(Response::new).map_err(refusal)
    }
}

/// The key a caller that may send a call again names it by, so that it is
/// done once.
fn idempotency_key<T>(request: &Request<T>) -> Option<String> {
    let key = request.metadata().get(IDEMPOTENCY_KEY)?;
    Some(key.to_str().map(str::to_owned).unwrap_or_default())
}

#[tonic::async_trait]
impl Inbox for InboxService {
    async fn get_inbox(
        &self,
        request: Request<v1::GetInboxRequest>,
    ) -> Result<Response<v1::InboxView>, Status> {
        self.answer(Who::Anyone, request, events::view).await
    }

    async fn list_events(
        &self,
        request: Request<v1::ListEventsRequest>,
    ) -> Result<Response<v1::EventList>, Status> {
        self.answer(Who::Anyone, request, events::list).await
    }

    async fn get_event(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::Event>, Status> {
        self.answer(Who::Anyone, request, events::get).await
    }

    async fn create_event(
        &self,
        request: Request<v1::EventFields>,
    ) -> Result<Response<v1::Event>, Status> {
        let once = idempotency_key(&request);
        self.answer(Who::Anyone, request, |inbox, caller, fields| {
            events::create(inbox, caller, fields, once)
        })
        .await
    }

    async fn update_event(
        &self,
        request: Request<v1::UpdateEventRequest>,
    ) -> Result<Response<v1::Event>, Status> {
        self.answer(Who::Anyone, request, events::update).await
    }

    async fn delete_event(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::DeleteEventReply>, Status> {
        self.answer(Who::Anyone, request, events::delete).await
    }

    async fn mark_done(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::Event>, Status> {
        self.answer(Who::Anyone, request, events::mark_done).await
    }

    async fn mark_ack(
        &self,
        request: Request<v1::MarkAckRequest>,
    ) -> Result<Response<v1::Event>, Status> {
        self.answer(Who::Anyone, request, events::mark_ack).await
    }

    async fn take_back_ack(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::Event>, Status> {
        self.answer(Who::Anyone, request, events::take_back_ack).await
    }

    async fn reopen_event(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::Event>, Status> {
        self.answer(Who::Anyone, request, events::reopen).await
    }

    async fn get_profile(
        &self,
        request: Request<v1::GetProfileRequest>,
    ) -> Result<Response<v1::Profile>, Status> {
        self.answer(Who::Anyone, request, profile::get).await
    }

    async fn update_profile(
        &self,
        request: Request<v1::UpdateProfileRequest>,
    ) -> Result<Response<v1::Profile>, Status> {
        self.answer(Who::Anyone, request, profile::update).await
    }

    async fn get_agent_token(
        &self,
        request: Request<v1::GetAgentTokenRequest>,
    ) -> Result<Response<v1::AgentTokenStatus>, Status> {
        self.answer(Who::Person, request, credentials::agent_token).await
    }

    async fn issue_agent_token(
        &self,
        request: Request<v1::IssueMyAgentTokenRequest>,
    ) -> Result<Response<v1::IssuedToken>, Status> {
        self.answer(Who::Person, request, credentials::issue_agent_token).await
    }

    async fn revoke_agent_token(
        &self,
        request: Request<v1::RevokeMyAgentTokenRequest>,
    ) -> Result<Response<v1::RevokeAgentTokenReply>, Status> {
        self.answer(Who::Person, request, credentials::revoke_agent_token).await
    }

    async fn get_calendar_feed(
        &self,
        request: Request<v1::GetCalendarFeedRequest>,
    ) -> Result<Response<v1::CalendarFeedStatus>, Status> {
        self.answer(Who::Person, request, credentials::calendar_feed).await
    }

    async fn issue_calendar_feed(
        &self,
        request: Request<v1::IssueCalendarFeedRequest>,
    ) -> Result<Response<v1::IssuedToken>, Status> {
        self.answer(Who::Person, request, credentials::issue_calendar_feed).await
    }

    async fn revoke_calendar_feed(
        &self,
        request: Request<v1::RevokeCalendarFeedRequest>,
    ) -> Result<Response<v1::RevokeAgentTokenReply>, Status> {
        self.answer(Who::Person, request, credentials::revoke_calendar_feed).await
    }

    async fn list_connected_apps(
        &self,
        request: Request<v1::ListConnectedAppsRequest>,
    ) -> Result<Response<v1::ConnectedAppList>, Status> {
        self.answer(Who::Person, request, credentials::connected_apps).await
    }

    async fn disconnect_app(
        &self,
        request: Request<v1::ConnectedAppId>,
    ) -> Result<Response<v1::DisconnectAppReply>, Status> {
        self.answer(Who::Person, request, credentials::disconnect_app).await
    }

    async fn create_telegram_link(
        &self,
        request: Request<v1::CreateTelegramLinkRequest>,
    ) -> Result<Response<v1::TelegramLink>, Status> {
        self.answer(Who::Person, request, channels::telegram_link).await
    }

    async fn list_channels(
        &self,
        request: Request<v1::ListChannelsRequest>,
    ) -> Result<Response<v1::ChannelList>, Status> {
        self.answer(Who::Person, request, channels::list).await
    }

    async fn add_webhook(
        &self,
        request: Request<v1::AddWebhookRequest>,
    ) -> Result<Response<v1::AddedWebhook>, Status> {
        self.answer(Who::Person, request, channels::add_webhook).await
    }

    async fn add_email(
        &self,
        request: Request<v1::AddEmailRequest>,
    ) -> Result<Response<v1::AddedEmail>, Status> {
        self.answer(Who::Person, request, channels::add_email).await
    }

    async fn add_push(
        &self,
        request: Request<v1::AddPushRequest>,
    ) -> Result<Response<v1::Channel>, Status> {
        self.answer(Who::Person, request, channels::add_push).await
    }

    async fn rename_channel(
        &self,
        request: Request<v1::RenameChannelRequest>,
    ) -> Result<Response<v1::Channel>, Status> {
        self.answer(Who::Person, request, channels::rename).await
    }

    async fn test_channel(
        &self,
        request: Request<v1::ChannelId>,
    ) -> Result<Response<v1::TestChannelReply>, Status> {
        self.answer(Who::Person, request, channels::test).await
    }

    async fn set_channel_enabled(
        &self,
        request: Request<v1::SetChannelEnabledRequest>,
    ) -> Result<Response<v1::Channel>, Status> {
        self.answer(Who::Person, request, channels::set_enabled).await
    }

    async fn remove_channel(
        &self,
        request: Request<v1::ChannelId>,
    ) -> Result<Response<v1::RemoveChannelReply>, Status> {
        self.answer(Who::Person, request, channels::remove).await
    }
}
