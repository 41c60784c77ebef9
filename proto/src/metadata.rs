//! The metadata keys of Hado's gRPC calls, named once so that core and every
//! client spell them the same way, and the interceptor that attaches them.

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;

/// `authorization: Bearer <token>` carries every credential: a source token,
/// an agent token, the gateway credential or the admin token.
pub const AUTHORIZATION: &str = "authorization";

/// The user a gateway authenticated, sent with the gateway credential only.
pub const USER: &str = "x-hado-user";

/// A caller's name for one call (1 to 64 ASCII letters, digits, `-` and
/// `_`): core does a `CreateEvent` that carries one once per key and
/// caller, so a call that may have been cut off can be sent again. The
/// gateways give every `CreateEvent` a fresh one.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// Set by core on a refusal it gave before doing any of the call (its
/// storage is known to be down): a gateway may send the call to another
/// core, whatever the call is.
pub const NOT_STARTED: &str = "hado-not-started";

/// Set by core on every answer UNAVAILABLE because its storage could not be
/// reached or written (`STORAGE_UNAVAILABLE`), started or not: a gateway may
/// send a call that changes nothing when repeated to another core, whose
/// connections to the database may work where this one's did not.
pub const STORAGE_FAILED: &str = "hado-storage-failed";

/// The prefix of an agent token, issued by the person or the operator.
pub const AGENT_TOKEN_PREFIX: &str = "hado_agent_";

/// The prefix of an OAuth access token, issued to an app the person signed
/// in with; it acts for the person as an agent token does.
pub const OAUTH_ACCESS_PREFIX: &str = "hado_at_";

/// Formats a bearer credential for the `authorization` key.
pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// Compares a presented secret with the expected one in time that depends
/// neither on where they differ nor on their lengths (their hashes are
/// compared), for every process that checks a configured secret.
pub fn same_secret(given: &str, expected: &str) -> bool {
    use sha2::{Digest, Sha256};
    use subtle::ConstantTimeEq;
    Sha256::digest(given.as_bytes()).ct_eq(&Sha256::digest(expected.as_bytes())).into()
}

/// What a client attaches to every call: `authorization: Bearer <token>`,
/// and with the gateway credential the user the gateway vouches for. Its
/// `Debug` never shows the token.
#[derive(Clone)]
pub struct Credential {
    authorization: MetadataValue<Ascii>,
    user: Option<MetadataValue<Ascii>>,
}

impl Credential {
    /// A bearer token alone: a source, an agent or the admin. `None` when the
    /// token cannot travel as metadata.
    pub fn bearer(token: &str) -> Option<Self> {
        Some(Self { authorization: bearer(token).parse().ok()?, user: None })
    }

    /// The gateway credential speaking for `login`.
    pub fn gateway(token: &str, login: &str) -> Option<Self> {
        Some(Self { authorization: bearer(token).parse().ok()?, user: Some(login.parse().ok()?) })
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Credential").field("user", &self.user).finish_non_exhaustive()
    }
}

impl Interceptor for Credential {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request.metadata_mut().insert(AUTHORIZATION, self.authorization.clone());
        if let Some(user) = &self.user {
            request.metadata_mut().insert(USER, user.clone());
        }
        Ok(request)
    }
}
