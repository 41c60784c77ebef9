//! OAuth 2.1's rules for signing an agent in, with no IO: what a client may
//! register (RFC 7591) or publish as its metadata document, which redirect
//! URIs and resources are acceptable (RFC 8707), and the PKCE check (S256
//! only). Every refusal carries the RFC's error code.
//!
//! Written here rather than taken from an OAuth server crate: the ones there
//! are (oxide-auth) own the request handling and the storage, while in Hado
//! the HTTP side is a gateway's and the storage is core's, behind gRPC. What
//! is left is these checks; the parsing is serde's and `url`'s, the hashing
//! `sha2`'s.
//!
//! `clients` is what a client may register or publish and where it may
//! send the person back; `authorization` an authorization request's
//! checks, this server's resources and issuer, and PKCE.

mod authorization;
mod clients;
mod connected_app;

pub use authorization::{AuthorizationParams, Problem, Server, Unfit, resource, verifies};
pub use clients::{ClientKind, ClientMetadata, RegisteredClient, document_url, host_of};
pub use connected_app::ConnectedApp;

use chrono::Duration;

/// How long an authorization code may be exchanged.
pub const CODE_LIFETIME: Duration = Duration::minutes(5);
/// How long an access token works.
pub const ACCESS_LIFETIME: Duration = Duration::hours(1);
/// How long a refresh token works; each refresh gives a new one.
pub const REFRESH_LIFETIME: Duration = Duration::days(30);
/// How long after a refresh token's exchange the same token, sent again,
/// gets the same answer rather than revoking its grant: long enough for
/// the requests a client sends at once (two tabs, a retry after a dropped
/// reply, two tools racing to refresh) to arrive, short enough that a
/// stolen token replayed later is still caught.
pub const REFRESH_GRACE: Duration = Duration::seconds(5);
/// How long a client no one has connected is remembered after its last
/// use: far longer than anyone takes to sign an app in, short enough that
/// registrations nobody finishes do not pile up.
pub const UNUSED_CLIENT_LIFETIME: Duration = Duration::hours(1);
/// How many clients no one has connected may be remembered at once; a
/// registration past it makes room by forgetting the least recently used.
pub const MAX_UNCONNECTED_CLIENTS: i64 = 1000;
/// The one scope: the agent acts as the person in their inbox.
pub const SCOPE: &str = "inbox";

pub(super) const MAX_REDIRECT_URIS: usize = 10;
pub(super) const MAX_URI_CHARS: usize = 2000;
pub(super) const MAX_NAME_CHARS: usize = 100;
pub(super) const MAX_STATE_CHARS: usize = 1000;
pub(super) const MAX_CLIENT_ID_CHARS: usize = 500;

/// A refusal, with the RFC's error code and a description for the developer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {description}")]
pub struct Refusal {
    pub code: &'static str,
    pub description: String,
}

impl Refusal {
    pub fn new(code: &'static str, description: impl Into<String>) -> Self {
        Self { code, description: description.into() }
    }

    pub fn invalid_request(description: impl Into<String>) -> Self {
        Self::new("invalid_request", description)
    }

    pub fn invalid_grant(description: impl Into<String>) -> Self {
        Self::new("invalid_grant", description)
    }

    pub fn invalid_target(description: impl Into<String>) -> Self {
        Self::new("invalid_target", description)
    }

    fn metadata(description: impl Into<String>) -> Self {
        Self::new("invalid_client_metadata", description)
    }
}
