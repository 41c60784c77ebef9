//! Owns the routes the settings page's "Notifications on this device" uses,
//! which tests may use too: `GET /me/push/key` (the VAPID public key a
//! browser subscribes with) and `POST /me/push` (the browser's
//! `PushSubscription.toJSON()`, answered 201 with the new channel). Core
//! checks every field; this edge only reads the JSON and the User-Agent.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header::USER_AGENT};
use serde::{Deserialize, Serialize};

use hado_proto::v1;

use crate::auth::InboxUser;
use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

/// The largest `POST /me/push` body read: a subscription is a few hundred
/// bytes, and nothing bigger is worth reading.
pub(crate) const MAX_SUBSCRIPTION_BYTES: usize = 4 * 1024;

#[derive(Debug, Serialize)]
pub(crate) struct PushKey {
    /// Base64url of the uncompressed P-256 point.
    public_key: String,
}

/// `PushSubscription.toJSON()`, as every browser writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Subscription {
    #[serde(default)]
    endpoint: String,
    /// Unix milliseconds, or null when the subscription does not end.
    expiration_time: Option<i64>,
    #[serde(default)]
    keys: SubscriptionKeys,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SubscriptionKeys {
    #[serde(default)]
    p256dh: String,
    #[serde(default)]
    auth: String,
}

/// A device's channel, as `POST /me/push` answers it.
#[derive(Debug, Serialize)]
pub(crate) struct PushChannel {
    id: i64,
    kind: &'static str,
    /// The device, from its browser and system, or as its person named it.
    name: String,
    endpoint: String,
    enabled: bool,
    created_at: String,
}

pub(crate) async fn key(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
) -> Result<axum::Json<PushKey>, ApiError> {
    let listed = state.call(state.inbox(&login)?.list_channels(v1::ListChannelsRequest {})).await?;
    if listed.push_public_key.is_empty() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "push is not set up on this Hado: the operator sets HADO_VAPID_SUBJECT",
        ));
    }
    Ok(axum::Json(PushKey { public_key: listed.push_public_key }))
}

pub(crate) async fn subscribe(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    headers: HeaderMap,
    ApiJson(subscription): ApiJson<Subscription>,
) -> Result<(StatusCode, axum::Json<PushChannel>), ApiError> {
    let user_agent = headers
        .get(USER_AGENT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let request = v1::AddPushRequest {
        endpoint: subscription.endpoint,
        p256dh: subscription.keys.p256dh,
        auth: subscription.keys.auth,
        expiration_time: subscription.expiration_time,
        user_agent,
    };
    let channel = state.call(state.inbox(&login)?.add_push(request)).await?;
    let view = PushChannel {
        id: channel.id,
        // Core's word for the kind, as every other channel list says it.
        kind: channel.kind().word(),
        name: channel.name,
        endpoint: channel.target,
        enabled: channel.enabled,
        created_at: channel
            .created_at
            .as_ref()
            .map(hado_proto::convert::rfc3339_at)
            .unwrap_or_default(),
    };
    Ok((StatusCode::CREATED, axum::Json(view)))
}
