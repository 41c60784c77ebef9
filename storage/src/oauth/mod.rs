//! Owns the SQL for signing agents in: OAuth clients, the person's grants
//! to them, one-time codes, and access and refresh tokens (codes and tokens
//! by their hash only).

mod clients;
mod codes;
mod grants;

pub use clients::{
    ClientRecord, client, forget_least_used_unconnected, save_client, sweep, touch_client,
    unconnected_clients,
};
pub use codes::{NewCode, code, insert_code, use_code};
pub use grants::{
    RefreshRecord, TokenKind, connected_apps, delete_grant, delete_user_grant, forget_answers,
    insert_grant, insert_token, refresh_token, revoke_access_tokens, touch_grant,
    use_refresh_token, user_by_access_token,
};
