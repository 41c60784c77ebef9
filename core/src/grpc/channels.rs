//! Owns the reminder channels' calls of the `hado.v1.Inbox` service: list,
//! add a webhook, an email address or a device (push), rename, test, turn
//! on or off, remove. The
//! service's trait implementation hands each one here.

use tonic::{Request, Response, Status};

use hado_proto::v1;

use super::inbox::InboxService;
use crate::engine::NewPush;
use crate::error::CoreError;
use crate::wire;

impl InboxService {
    pub(super) async fn channels_list(
        &self,
        request: Request<v1::ListChannelsRequest>,
    ) -> Result<Response<v1::ChannelList>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let channels = self.engine.list_channels(&caller.user).await.map_err(caller.refusal())?;
        let gone = self.engine.gone_device(&caller.user).await.map_err(caller.refusal())?;
        Ok(Response::new(v1::ChannelList {
            channels: channels.iter().map(wire::channel).collect(),
            telegram_available: self.telegram.is_some(),
            email_available: self.email,
            push_public_key: self.engine.push_public_key().unwrap_or_default(),
            push_gone_at: gone.as_ref().map(|(_, at)| wire::timestamp(*at)),
            push_gone: gone.map(|(device, _)| device).unwrap_or_default(),
        }))
    }

    pub(super) async fn channels_add_webhook(
        &self,
        request: Request<v1::AddWebhookRequest>,
    ) -> Result<Response<v1::AddedWebhook>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let added = self
            .engine
            .add_webhook(&caller.user, &request.get_ref().url)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(v1::AddedWebhook {
            channel: Some(wire::channel(&added.channel)),
            secret: added.secret,
        }))
    }

    pub(super) async fn channels_add_email(
        &self,
        request: Request<v1::AddEmailRequest>,
    ) -> Result<Response<v1::AddedEmail>, Status> {
        let caller = self.inbox_caller(&request).await?;
        if !self.email {
            return Err(caller.refusal()(CoreError::FailedPrecondition(
                "email is not set up on this Hado: the operator sets HADO_SMTP_URL and HADO_SMTP_FROM"
                    .into(),
            )));
        }
        let added = self
            .engine
            .add_email(&caller.user, &request.get_ref().address)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(v1::AddedEmail {
            channel: Some(wire::channel(&added.channel)),
            resent: added.resent,
        }))
    }

    pub(super) async fn channels_add_push(
        &self,
        request: Request<v1::AddPushRequest>,
    ) -> Result<Response<v1::Channel>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let body = request.into_inner();
        let new = NewPush {
            endpoint: body.endpoint,
            p256dh: body.p256dh,
            auth: body.auth,
            expiration_time: body.expiration_time,
            user_agent: body.user_agent,
        };
        let channel = self.engine.add_push(&caller.user, new).await.map_err(caller.refusal())?;
        Ok(Response::new(wire::channel(&channel)))
    }

    pub(super) async fn channels_rename(
        &self,
        request: Request<v1::RenameChannelRequest>,
    ) -> Result<Response<v1::Channel>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let channel = self
            .engine
            .rename_channel(&caller.user, request.get_ref().id, &request.get_ref().name)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(wire::channel(&channel)))
    }

    pub(super) async fn channels_test(
        &self,
        request: Request<v1::ChannelId>,
    ) -> Result<Response<v1::TestChannelReply>, Status> {
        let caller = self.inbox_caller(&request).await?;
        self.engine
            .test_channel(&caller.user, request.get_ref().id)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(v1::TestChannelReply {}))
    }

    pub(super) async fn channels_set_enabled(
        &self,
        request: Request<v1::SetChannelEnabledRequest>,
    ) -> Result<Response<v1::Channel>, Status> {
        let caller = self.inbox_caller(&request).await?;
        let channel = self
            .engine
            .set_channel_enabled(&caller.user, request.get_ref().id, request.get_ref().enabled)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(wire::channel(&channel)))
    }

    pub(super) async fn channels_remove(
        &self,
        request: Request<v1::ChannelId>,
    ) -> Result<Response<v1::RemoveChannelReply>, Status> {
        let caller = self.inbox_caller(&request).await?;
        self.engine
            .remove_channel(&caller.user, request.get_ref().id)
            .await
            .map_err(caller.refusal())?;
        Ok(Response::new(v1::RemoveChannelReply {}))
    }
}
