//! Owns the `hado.v1.Inbox` service: the person's (and their agent's) calls,
//! each authenticated and handed to the engine.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use hado_proto::v1::{self, inbox_server::Inbox};

use super::auth::{self, Credentials, UserCaller};
use crate::engine::Engine;
use crate::engine::{EventFilter, EventPatch, ProfilePatch};
use crate::error::CoreError;
use crate::wire::{self, raw_fields};
use hado_proto::metadata::IDEMPOTENCY_KEY;

pub(crate) struct InboxService {
    pub(crate) engine: Arc<Engine>,
    pub(crate) credentials: Credentials,
    /// The Telegram bot, when one is set up: linking a chat asks its name.
    pub(crate) telegram: Option<crate::telegram::Bot>,
    /// Whether email is set up (`HADO_SMTP_URL`), so that an address can be added.
    pub(crate) email: bool,
}

impl InboxService {
    async fn caller<T>(&self, request: &Request<T>) -> Result<UserCaller, Status> {
        Ok(auth::user(&self.engine, &self.credentials, request.metadata()).await?)
    }

    /// The person at the inbox, not their agent: see [`auth::person_at_inbox`].
    pub(super) async fn inbox_caller<T>(&self, request: &Request<T>) -> Result<UserCaller, Status> {
        Ok(auth::person_at_inbox(self.caller(request).await?)?)
    }
}

#[tonic::async_trait]
impl Inbox for InboxService {
    async fn list_events(
        &self,
        request: Request<v1::ListEventsRequest>,
    ) -> Result<Response<v1::EventList>, Status> {
        let caller = self.caller(&request).await?;
        let body = request.into_inner();
        let filter = EventFilter { text: body.text, source: body.source };
        let (records, next) = self
            .engine
            .list_events_after(
                &caller.user,
                body.state.as_deref(),
                body.archive,
                body.limit,
                body.after.as_deref(),
                &filter,
            )
            .await
            .map_err(caller.refusal())?;
        let mut list = wire::events(records);
        list.next = next;
        Ok(Response::new(list))
    }

    async fn get_event(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::Event>, Status> {
        let caller = self.caller(&request).await?;
        let record = self
            .engine
            .get_event(&caller.user, request.get_ref().id)
            .await
            .map_err(caller.refusal())?;
        let mut event = wire::event(&record);
        event.next_reminder_at = record
            .reminders
            .next_reminder(&record.lifecycle, &record.ladder())
            .map(wire::timestamp);
        event.deliveries = self
            .engine
            .event_deliveries(&caller.user, record.id)
            .await
            .map_err(caller.refusal())?
            .iter()
            .map(wire::delivery)
            .collect();
        Ok(Response::new(event))
    }

    async fn create_event(
        &self,
        request: Request<v1::EventFields>,
    ) -> Result<Response<v1::Event>, Status> {
        let caller = self.caller(&request).await?;
        // A caller that may send the call again names it, and it is done once.
        let once = request
            .metadata()
            .get(IDEMPOTENCY_KEY)
            .map(|key| key.to_str().map(str::to_owned).unwrap_or_default());
        let fields = raw_fields(request.into_inner());
        let created = match once {
            Some(key) => self.engine.create_manual_once(&caller.user, &fields, &key).await,
            None => self.engine.create_manual(&caller.user, &fields).await,
        };
        let record = created.map_err(caller.refusal())?;
        Ok(Response::new(wire::event(&record)))
    }

    async fn update_event(
        &self,
        request: Request<v1::UpdateEventRequest>,
    ) -> Result<Response<v1::Event>, Status> {
        let caller = self.caller(&request).await?;
        let body = request.into_inner();
        let patch = EventPatch {
            title: body.title,
            due_at: body.due_at,
            subtitle: body.subtitle,
            fire_at: body.fire_at,
            after_due: body.after_due,
            done_label: body.done_label,
            deep_link: body.deep_link,
        };
        let record = self
            .engine
            .update_manual(&caller.user, body.id, patch)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(wire::event(&record)))
    }

    async fn delete_event(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::DeleteEventReply>, Status> {
        let caller = self.caller(&request).await?;
        let id = self
            .engine
            .delete_manual(&caller.user, request.get_ref().id)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(v1::DeleteEventReply { id, state: v1::EventState::Withdrawn.into() }))
    }

    async fn mark_done(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::Event>, Status> {
        let caller = self.caller(&request).await?;
        let record = self
            .engine
            .mark_done(&caller.user, request.get_ref().id)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(wire::event(&record)))
    }

    async fn mark_ack(
        &self,
        request: Request<v1::MarkAckRequest>,
    ) -> Result<Response<v1::Event>, Status> {
        let caller = self.caller(&request).await?;
        let remember =
            wire::remember_for(request.get_ref().until.as_deref()).map_err(caller.refusal())?;
        let record = self
            .engine
            .mark_ack(&caller.user, request.get_ref().id, remember)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(wire::event(&record)))
    }

    async fn take_back_ack(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::Event>, Status> {
        let caller = self.caller(&request).await?;
        let record = self
            .engine
            .take_back_ack(&caller.user, request.get_ref().id)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(wire::event(&record)))
    }

    async fn reopen_event(
        &self,
        request: Request<v1::EventId>,
    ) -> Result<Response<v1::Event>, Status> {
        let caller = self.caller(&request).await?;
        let record = self
            .engine
            .reopen(&caller.user, request.get_ref().id)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(wire::event(&record)))
    }

    async fn get_profile(
        &self,
        request: Request<v1::GetProfileRequest>,
    ) -> Result<Response<v1::Profile>, Status> {
        let caller = self.caller(&request).await?;
        let profile = match caller.attention {
            Some(attention) => wire::profile(&caller.user, self.engine.now(), attention),
            None => super::profile(&self.engine, &caller.user).await?,
        };
        Ok(Response::new(profile))
    }

    async fn update_profile(
        &self,
        request: Request<v1::UpdateProfileRequest>,
    ) -> Result<Response<v1::Profile>, Status> {
        let caller = self.caller(&request).await?;
        let body = request.into_inner();
        let patch = ProfilePatch {
            tz: body.tz,
            quiet_start: body.quiet_start,
            quiet_end: body.quiet_end,
            locale: body.locale,
        };
        let user =
            self.engine.update_profile(&caller.user, &patch).await.map_err(caller.refusal())?;
        Ok(Response::new(super::profile(&self.engine, &user).await?))
    }

    async fn get_agent_token(
        &self,
        request: Request<v1::GetAgentTokenRequest>,
    ) -> Result<Response<v1::AgentTokenStatus>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let status =
            self.engine.agent_token_status(&caller.user).await.map_err(caller.refusal())?;
        Ok(Response::new(v1::AgentTokenStatus {
            issued: status.is_some(),
            created_at: status.map(|status| wire::timestamp(status.created_at)),
            last_used_at: status.and_then(|status| status.last_used_at).map(wire::timestamp),
        }))
    }

    async fn issue_agent_token(
        &self,
        request: Request<v1::IssueMyAgentTokenRequest>,
    ) -> Result<Response<v1::IssuedToken>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let token = self.engine.issue_agent_token(&caller.user).await.map_err(caller.refusal())?;
        Ok(Response::new(v1::IssuedToken { token }))
    }

    async fn revoke_agent_token(
        &self,
        request: Request<v1::RevokeMyAgentTokenRequest>,
    ) -> Result<Response<v1::RevokeAgentTokenReply>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let revoked =
            self.engine.revoke_agent_token(&caller.user).await.map_err(caller.refusal())?;
        Ok(Response::new(v1::RevokeAgentTokenReply { revoked }))
    }

    async fn get_calendar_feed(
        &self,
        request: Request<v1::GetCalendarFeedRequest>,
    ) -> Result<Response<v1::CalendarFeedStatus>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let created =
            self.engine.calendar_feed_created(&caller.user).await.map_err(caller.refusal())?;
        Ok(Response::new(v1::CalendarFeedStatus {
            issued: created.is_some(),
            created_at: created.map(wire::timestamp),
        }))
    }

    async fn issue_calendar_feed(
        &self,
        request: Request<v1::IssueCalendarFeedRequest>,
    ) -> Result<Response<v1::IssuedToken>, Status> {
        let caller = self.inbox_caller(&request).await?;
        Ok(Response::new(v1::IssuedToken {
            token: self.engine.issue_calendar_feed(&caller.user).await.map_err(caller.refusal())?,
        }))
    }

    async fn revoke_calendar_feed(
        &self,
        request: Request<v1::RevokeCalendarFeedRequest>,
    ) -> Result<Response<v1::RevokeAgentTokenReply>, Status> {
        let caller = self.inbox_caller(&request).await?;
        Ok(Response::new(v1::RevokeAgentTokenReply {
            revoked: self
                .engine
                .revoke_calendar_feed(&caller.user)
                .await
                .map_err(caller.refusal())?,
        }))
    }

    async fn create_telegram_link(
        &self,
        request: Request<v1::CreateTelegramLinkRequest>,
    ) -> Result<Response<v1::TelegramLink>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let bot = self.telegram.as_ref().ok_or_else(|| {
            CoreError::FailedPrecondition(
                "Telegram is not set up on this Hado: the operator sets HADO_TELEGRAM_BOT_TOKEN"
                    .into(),
            )
        })?;
        let (url, expires_at) = crate::telegram::link_url(&self.engine, bot, &caller.user).await?;
        Ok(Response::new(v1::TelegramLink { url, expires_at: Some(wire::timestamp(expires_at)) }))
    }

    async fn list_connected_apps(
        &self,
        request: Request<v1::ListConnectedAppsRequest>,
    ) -> Result<Response<v1::ConnectedAppList>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let apps = self.engine.connected_apps(&caller.user).await.map_err(caller.refusal())?;
        Ok(Response::new(v1::ConnectedAppList {
            apps: apps.iter().map(wire::connected_app).collect(),
        }))
    }

    async fn disconnect_app(
        &self,
        request: Request<v1::ConnectedAppId>,
    ) -> Result<Response<v1::DisconnectAppReply>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let disconnected = self
            .engine
            .disconnect_app(&caller.user, request.get_ref().id)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(v1::DisconnectAppReply { disconnected }))
    }

    async fn list_channels(
        &self,
        request: Request<v1::ListChannelsRequest>,
    ) -> Result<Response<v1::ChannelList>, Status> {
        self.channels_list(request).await
    }

    async fn add_webhook(
        &self,
        request: Request<v1::AddWebhookRequest>,
    ) -> Result<Response<v1::AddedWebhook>, Status> {
        self.channels_add_webhook(request).await
    }

    async fn add_email(
        &self,
        request: Request<v1::AddEmailRequest>,
    ) -> Result<Response<v1::AddedEmail>, Status> {
        self.channels_add_email(request).await
    }

    async fn add_push(
        &self,
        request: Request<v1::AddPushRequest>,
    ) -> Result<Response<v1::Channel>, Status> {
        self.channels_add_push(request).await
    }

    async fn rename_channel(
        &self,
        request: Request<v1::RenameChannelRequest>,
    ) -> Result<Response<v1::Channel>, Status> {
        self.channels_rename(request).await
    }

    async fn test_channel(
        &self,
        request: Request<v1::ChannelId>,
    ) -> Result<Response<v1::TestChannelReply>, Status> {
        self.channels_test(request).await
    }

    async fn set_channel_enabled(
        &self,
        request: Request<v1::SetChannelEnabledRequest>,
    ) -> Result<Response<v1::Channel>, Status> {
        self.channels_set_enabled(request).await
    }

    async fn remove_channel(
        &self,
        request: Request<v1::ChannelId>,
    ) -> Result<Response<v1::RemoveChannelReply>, Status> {
        self.channels_remove(request).await
    }
}
