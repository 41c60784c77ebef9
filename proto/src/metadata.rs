//! The metadata keys of Hado's gRPC calls, named once so that core and every
//! client spell them the same way.

/// `authorization: Bearer <token>` carries every credential: a source token,
/// an agent token, the gateway credential or the admin token.
pub const AUTHORIZATION: &str = "authorization";

/// The user a gateway authenticated, sent with the gateway credential only.
pub const USER: &str = "x-hado-user";

/// Formats a bearer credential for the `authorization` key.
pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}
