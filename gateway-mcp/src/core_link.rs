//! Owns what is particular about the agent's calls to core: the agent's
//! token, attached to each call. The channel itself and what a failure means
//! are shared with the other gateway (`hado_gateway::client`).

use hado_gateway::client::CoreChannel;
use tonic::service::interceptor::InterceptedService;

pub(crate) use hado_gateway::client::{Core, Failure, MAX_REPLY_BYTES};
use hado_proto::metadata::Credential;
use hado_proto::v1::inbox_client::InboxClient;

use hado_proto::metadata::{AGENT_TOKEN_PREFIX, OAUTH_ACCESS_PREFIX};

/// An agent's bearer token, as presented: an agent token, or an access
/// token of an app the person signed in with. Anything else is refused
/// without asking core. Never logged.
#[derive(Clone, Debug)]
pub(crate) struct AgentToken {
    credential: Credential,
    signed_in: bool,
}

impl AgentToken {
    /// Accepts text that can travel as gRPC metadata and looks like an
    /// agent token or an access token.
    pub(crate) fn parse(token: &str) -> Option<Self> {
        let signed_in = token.starts_with(OAUTH_ACCESS_PREFIX);
        if !signed_in && !token.starts_with(AGENT_TOKEN_PREFIX) {
            return None;
        }
        Credential::bearer(token).map(|credential| Self { credential, signed_in })
    }

    /// What a 401 says when core does not know the token.
    pub(crate) fn unknown(&self) -> &'static str {
        if self.signed_in {
            "unknown or expired access token: refresh it, or sign in again"
        } else {
            "unknown agent token"
        }
    }
}

pub(crate) type Inbox = InboxClient<InterceptedService<CoreChannel, Credential>>;

/// The Inbox service, called as the token's user.
pub(crate) fn inbox(core: &Core, token: &AgentToken) -> Inbox {
    InboxClient::with_interceptor(core.channel(), token.credential.clone())
        .max_decoding_message_size(MAX_REPLY_BYTES)
}
