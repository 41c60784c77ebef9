//! Owns the Inbox calls on what lets others in on the person's behalf: the
//! agent token, the calendar feed's address and the apps connected over
//! OAuth. Only the person at the inbox makes them, never their agent.

use hado_proto::v1;

use super::InboxService;
use crate::grpc::auth::UserCaller;
use crate::wire;
use hado_engine::error::CoreError;

pub(super) async fn agent_token(
    inbox: &InboxService,
    caller: UserCaller,
    _: v1::GetAgentTokenRequest,
) -> Result<v1::AgentTokenStatus, CoreError> {
    let status = inbox.engine.agent_token_status(&caller.user).await?;
    Ok(v1::AgentTokenStatus {
        issued: status.is_some(),
        created_at: status.map(|status| wire::timestamp(status.created_at)),
        last_used_at: status.and_then(|status| status.last_used_at).map(wire::timestamp),
    })
}

pub(super) async fn issue_agent_token(
    inbox: &InboxService,
    caller: UserCaller,
    _: v1::IssueMyAgentTokenRequest,
) -> Result<v1::IssuedToken, CoreError> {
    Ok(v1::IssuedToken { token: inbox.engine.issue_agent_token(&caller.user).await? })
}

pub(super) async fn revoke_agent_token(
    inbox: &InboxService,
    caller: UserCaller,
    _: v1::RevokeMyAgentTokenRequest,
) -> Result<v1::RevokeAgentTokenReply, CoreError> {
    Ok(v1::RevokeAgentTokenReply { revoked: inbox.engine.revoke_agent_token(&caller.user).await? })
}

pub(super) async fn calendar_feed(
    inbox: &InboxService,
    caller: UserCaller,
    _: v1::GetCalendarFeedRequest,
) -> Result<v1::CalendarFeedStatus, CoreError> {
    let created = inbox.engine.calendar_feed_created(&caller.user).await?;
    Ok(v1::CalendarFeedStatus {
        issued: created.is_some(),
        created_at: created.map(wire::timestamp),
    })
}

pub(super) async fn issue_calendar_feed(
    inbox: &InboxService,
    caller: UserCaller,
    _: v1::IssueCalendarFeedRequest,
) -> Result<v1::IssuedToken, CoreError> {
    Ok(v1::IssuedToken { token: inbox.engine.issue_calendar_feed(&caller.user).await? })
}

pub(super) async fn revoke_calendar_feed(
    inbox: &InboxService,
    caller: UserCaller,
    _: v1::RevokeCalendarFeedRequest,
) -> Result<v1::RevokeAgentTokenReply, CoreError> {
    Ok(v1::RevokeAgentTokenReply {
        revoked: inbox.engine.revoke_calendar_feed(&caller.user).await?,
    })
}

pub(super) async fn connected_apps(
    inbox: &InboxService,
    caller: UserCaller,
    _: v1::ListConnectedAppsRequest,
) -> Result<v1::ConnectedAppList, CoreError> {
    let apps = inbox.engine.connected_apps(&caller.user).await?;
    Ok(v1::ConnectedAppList { apps: apps.iter().map(wire::connected_app).collect() })
}

pub(super) async fn disconnect_app(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::ConnectedAppId,
) -> Result<v1::DisconnectAppReply, CoreError> {
    Ok(v1::DisconnectAppReply {
        disconnected: inbox.engine.disconnect_app(&caller.user, body.id).await?,
    })
}
