//! Owns the `hado.v1.Links` service: checking and using action links and
//! channel links (an email's confirmation and unsubscribe), for
//! the HTTP gateway only (its credential, no user: the link names the user).

use std::sync::Arc;

use tonic::{Request, Response, Status};

use hado_proto::v1::{self, links_server::Links};

use super::auth::{self, Credentials};
use crate::status::OrStatus;
use crate::wire;
use hado_domain::event_record::EventRecord;
use hado_domain::user::UserRecord;
use hado_engine::Engine;
use hado_engine::UsedChannelLink;
use hado_engine::error::CoreError;
use hado_engine::links::{ActionLink, ChannelLinkAction};

pub(crate) struct LinksService {
    pub(crate) engine: Arc<Engine>,
    pub(crate) credentials: Credentials,
    /// The Telegram bot, when one is set up: updates in webhook mode.
    pub(crate) telegram: Option<crate::telegram::Bot>,
}

async fn reply(
    engine: &Engine,
    (link, user, event): (ActionLink, UserRecord, EventRecord),
) -> Result<Response<v1::ActionLinkReply>, Status> {
    Ok(Response::new(v1::ActionLinkReply {
        action: wire::link_action(link.action).into(),
        event: Some(wire::event(&event)),
        expires_at: Some(wire::timestamp(link.expires_at)),
        profile: Some(super::profile(engine, &user).await.or_status()?),
    }))
}

async fn channel_reply(
    engine: &Engine,
    (link, user, channel): UsedChannelLink,
) -> Result<Response<v1::ChannelLinkReply>, Status> {
    let action = match link.action {
        ChannelLinkAction::Confirm => v1::ChannelLinkAction::Confirm,
        ChannelLinkAction::Pause => v1::ChannelLinkAction::Pause,
        ChannelLinkAction::Refuse => v1::ChannelLinkAction::Refuse,
    };
    Ok(Response::new(v1::ChannelLinkReply {
        action: action.into(),
        channel: channel.as_ref().map(wire::channel),
        expires_at: link.expires_at.map(wire::timestamp),
        profile: Some(super::profile(engine, &user).await.or_status()?),
    }))
}

#[tonic::async_trait]
impl Links for LinksService {
    async fn inspect_channel_link(
        &self,
        request: Request<v1::ChannelLinkRequest>,
    ) -> Result<Response<v1::ChannelLinkReply>, Status> {
        auth::gateway(&self.credentials, request.metadata()).or_status()?;
        channel_reply(
            &self.engine,
            self.engine.inspect_channel_link(&request.get_ref().token).await.or_status()?,
        )
        .await
    }

    async fn use_channel_link(
        &self,
        request: Request<v1::ChannelLinkRequest>,
    ) -> Result<Response<v1::ChannelLinkReply>, Status> {
        auth::gateway(&self.credentials, request.metadata()).or_status()?;
        channel_reply(
            &self.engine,
            self.engine.use_channel_link(&request.get_ref().token).await.or_status()?,
        )
        .await
    }

    async fn inspect_action_link(
        &self,
        request: Request<v1::ActionLinkRequest>,
    ) -> Result<Response<v1::ActionLinkReply>, Status> {
        auth::gateway(&self.credentials, request.metadata()).or_status()?;
        reply(
            &self.engine,
            self.engine.inspect_action_link(&request.get_ref().token).await.or_status()?,
        )
        .await
    }

    async fn calendar_feed(
        &self,
        request: Request<v1::CalendarFeedRequest>,
    ) -> Result<Response<v1::CalendarFeedReply>, Status> {
        auth::gateway(&self.credentials, request.metadata()).or_status()?;
        let body = request.get_ref();
        let (user, events, next) = self
            .engine
            .calendar_feed(&body.token, body.limit, body.after.as_deref())
            .await
            .or_status()?;
        Ok(Response::new(v1::CalendarFeedReply {
            profile: Some(super::profile(&self.engine, &user).await.or_status()?),
            events: wire::events(events).events,
            next,
        }))
    }

    async fn telegram_update(
        &self,
        request: Request<v1::TelegramUpdateRequest>,
    ) -> Result<Response<v1::TelegramUpdateReply>, Status> {
        auth::gateway(&self.credentials, request.metadata()).or_status()?;
        let bot = self
            .telegram
            .as_ref()
            .ok_or_else(|| {
                CoreError::FailedPrecondition("Telegram is not set up on this Hado".into())
            })
            .or_status()?;
        let update: crate::telegram::Update = serde_json::from_str(&request.get_ref().update_json)
            .map_err(|error| {
                CoreError::invalid(
                    "update_json",
                    format!("update_json is not a Telegram update: {error}"),
                )
            })
            .or_status()?;
        crate::telegram::handle_update(&self.engine, bot, &update).await.or_status()?;
        Ok(Response::new(v1::TelegramUpdateReply {}))
    }

    async fn use_action_link(
        &self,
        request: Request<v1::ActionLinkRequest>,
    ) -> Result<Response<v1::ActionLinkReply>, Status> {
        auth::gateway(&self.credentials, request.metadata()).or_status()?;
        reply(
            &self.engine,
            self.engine.use_action_link(&request.get_ref().token).await.or_status()?,
        )
        .await
    }
}
