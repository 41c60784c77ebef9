//! Owns what is particular about the agent's calls to core: the agent's
//! token, attached to each call. The channel itself and what a failure means
//! are shared with the other gateway (`hado_runtime::client`).

use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use hado_proto::metadata::Credential;
use hado_proto::v1::inbox_client::InboxClient;
pub(crate) use hado_runtime::client::{Core, Failure, MAX_REPLY_BYTES};

/// The prefix every agent token carries; anything else is refused without
/// asking core.
pub(crate) const AGENT_TOKEN_PREFIX: &str = "hado_agent_";

/// An agent's bearer token, as presented. Never logged.
#[derive(Clone, Debug)]
pub(crate) struct AgentToken(Credential);

impl AgentToken {
    /// Accepts text that can travel as gRPC metadata and looks like an agent token.
    pub(crate) fn parse(token: &str) -> Option<Self> {
        if !token.starts_with(AGENT_TOKEN_PREFIX) {
            return None;
        }
        Credential::bearer(token).map(Self)
    }
}

pub(crate) type Inbox = InboxClient<InterceptedService<Channel, Credential>>;

/// The Inbox service, called as the token's user.
pub(crate) fn inbox(core: &Core, token: &AgentToken) -> Inbox {
    InboxClient::with_interceptor(core.channel(), token.0.clone()).max_decoding_message_size(MAX_REPLY_BYTES)
}
