//! Owns the Inbox calls on the person's profile: their zone, quiet hours
//! and language, read and changed.

use hado_proto::v1;

use super::InboxService;
use crate::grpc::auth::UserCaller;
use crate::wire;
use hado_engine::ProfilePatch;
use hado_engine::error::CoreError;

pub(super) async fn get(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::GetProfileRequest,
) -> Result<v1::Profile, CoreError> {
    if body.without_attention {
        return Ok(wire::profile(
            &caller.user,
            inbox.engine.now(),
            hado_engine::Attention::default(),
            inbox.engine.default_zone(),
        ));
    }
    crate::grpc::profile(&inbox.engine, &caller.user).await
}

pub(super) async fn update(
    inbox: &InboxService,
    caller: UserCaller,
    body: v1::UpdateProfileRequest,
) -> Result<v1::Profile, CoreError> {
    let patch = ProfilePatch {
        tz: body.tz,
        quiet_start: body.quiet_start,
        quiet_end: body.quiet_end,
        locale: body.locale,
    };
    let user = inbox.engine.update_profile(&caller.user, &patch).await?;
    crate::grpc::profile(&inbox.engine, &user).await
}
