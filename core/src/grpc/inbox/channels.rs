//! Owns the Inbox calls on the person's reminder channels: list, add a
//! webhook, an email address or a device (push), link a Telegram chat,
//! rename, test, turn on or off, remove.

use hado_proto::v1;

use super::InboxService;
use crate::grpc::auth::UserCaller;
use crate::wire;
use hado_engine::NewPush;
use hado_engine::error::CoreError;

pub(super) async fn list(
    inbox: &InboxService,
    caller: UserCaller,
    _: v1::ListChannelsRequest,
) -> Result<v1::ChannelList, CoreError> {
    let channels = inbox.engine.list_channels(&caller.user).await?;
    let gone = inbox.engine.gone_device(&caller.user).await?;
    Ok(v1::ChannelList {
        channels: channels.iter().map(wire::channel).collect(),
        telegram_available: inbox.telegram.is_some(),
        email_available: inbox.email,
        push_public_key: inbox.engine.push_public_key().unwrap_or_default(),
        push_gone_at: gone.as_ref().map(|(_, at)| wire::timestamp(*at)),
        push_gone: gone.map(|(device, _)| device).unwrap_or_default(),
    })
}

pub(super) async fn add_webhook(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::AddWebhookRequest,
) -> Result<v1::AddedWebhook, CoreError> {
    let added = inbox.engine.add_webhook(&caller.user, &body.url).await?;
    Ok(v1::AddedWebhook { channel: Some(wire::channel(&added.channel)), secret: added.secret })
}

pub(super) async fn add_email(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::AddEmailRequest,
) -> Result<v1::AddedEmail, CoreError> {
    if !inbox.email {
        return Err(CoreError::FailedPrecondition(
            "email is not set up on this Hado: the operator sets HADO_SMTP_URL and HADO_SMTP_FROM"
                .into(),
        ));
    }
    let added = inbox.engine.add_email(&caller.user, &body.address).await?;
    Ok(v1::AddedEmail { channel: Some(wire::channel(&added.channel)), resent: added.resent })
}

pub(super) async fn add_push(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::AddPushRequest,
) -> Result<v1::Channel, CoreError> {
    let new = NewPush {
        endpoint: body.endpoint,
        p256dh: body.p256dh,
        auth: body.auth,
        expiration_time: body.expiration_time,
        user_agent: body.user_agent,
    };
    Ok(wire::channel(&inbox.engine.add_push(&caller.user, new).await?))
}

pub(super) async fn rename(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::RenameChannelRequest,
) -> Result<v1::Channel, CoreError> {
    Ok(wire::channel(&inbox.engine.rename_channel(&caller.user, body.id, &body.name).await?))
}

pub(super) async fn telegram_link(
    inbox: &InboxService,
    caller: UserCaller,
    _: v1::CreateTelegramLinkRequest,
) -> Result<v1::TelegramLink, CoreError> {
    let bot = inbox.telegram.as_ref().ok_or_else(|| {
        CoreError::FailedPrecondition(
            "Telegram is not set up on this Hado: the operator sets HADO_TELEGRAM_BOT_TOKEN".into(),
        )
    })?;
    let (url, expires_at) = crate::telegram::link_url(&inbox.engine, bot, &caller.user).await?;
    Ok(v1::TelegramLink { url, expires_at: Some(wire::timestamp(expires_at)) })
}

pub(super) async fn test(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::ChannelId,
) -> Result<v1::TestChannelReply, CoreError> {
    inbox.engine.test_channel(&caller.user, body.id).await?;
    Ok(v1::TestChannelReply {})
}

pub(super) async fn set_enabled(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::SetChannelEnabledRequest,
) -> Result<v1::Channel, CoreError> {
    let channel = inbox.engine.set_channel_enabled(&caller.user, body.id, body.enabled).await?;
    Ok(wire::channel(&channel))
}

pub(super) async fn remove(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::ChannelId,
) -> Result<v1::RemoveChannelReply, CoreError> {
    inbox.engine.remove_channel(&caller.user, body.id).await?;
    Ok(v1::RemoveChannelReply {})
}
