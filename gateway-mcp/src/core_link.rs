//! Owns the gateway's one connection to core: a lazily connected tonic
//! channel that reconnects by itself, the agent's token attached to each
//! call, and what a failed call means to the agent.

use std::time::Duration;

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

use hado_proto::metadata::{AUTHORIZATION, bearer};
use hado_proto::process::ConfigError;
use hado_proto::v1::inbox_client::InboxClient;

/// How long one call to core may take before the agent hears it failed.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The prefix every agent token carries; anything else is refused without
/// asking core.
pub const AGENT_TOKEN_PREFIX: &str = "hado_agent_";

/// An agent's bearer token, as presented. Never logged.
#[derive(Clone)]
pub struct AgentToken(MetadataValue<Ascii>);

impl AgentToken {
    /// Accepts text that can travel as gRPC metadata and looks like an agent token.
    pub fn parse(token: &str) -> Option<Self> {
        if !token.starts_with(AGENT_TOKEN_PREFIX) {
            return None;
        }
        bearer(token).parse().ok().map(Self)
    }
}

impl std::fmt::Debug for AgentToken {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("AgentToken(..)")
    }
}

impl Interceptor for AgentToken {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, Status> {
        request.metadata_mut().insert(AUTHORIZATION, self.0.clone());
        Ok(request)
    }
}

pub type Inbox = InboxClient<InterceptedService<Channel, AgentToken>>;

/// Core, as the gateway reaches it.
#[derive(Clone, Debug)]
pub struct Core {
    channel: Channel,
    url: String,
}

impl Core {
    /// Prepares the channel without connecting: the gateway starts even when
    /// core is down, and each call reconnects if it must.
    pub fn connect_lazy(url: &str) -> Result<Self, ConfigError> {
        let endpoint = Endpoint::from_shared(url.to_owned())
            .map_err(|error| ConfigError { variable: "HADO_CORE_URL", problem: format!("{url:?}: {error}") })?
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(CALL_TIMEOUT);
        Ok(Self { channel: endpoint.connect_lazy(), url: url.to_owned() })
    }

    /// The Inbox service, called as the token's user.
    pub fn inbox(&self, token: &AgentToken) -> Inbox {
        InboxClient::with_interceptor(self.channel.clone(), token.clone())
    }

    /// What a failed call means, in words the agent can act on: core's own
    /// message, or that core cannot be reached.
    pub fn explain(&self, status: &Status) -> Failure {
        match status.code() {
            Code::Unauthenticated => Failure::UnknownToken,
            code if is_unreachable(code) => Failure::Unreachable(format!(
                "hado core at {} cannot be reached right now; the gateway reconnects by itself, so try again in a moment",
                self.url
            )),
            _ => Failure::Refused(status.message().to_owned()),
        }
    }
}

fn is_unreachable(code: Code) -> bool {
    matches!(code, Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::Unknown)
}

/// A call core did not answer with a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Core does not know the token (or it was revoked or re-issued).
    UnknownToken,
    /// Core is down or did not answer in time.
    Unreachable(String),
    /// Core refused: a validation error, not found, not the owner. Its exact message.
    Refused(String),
}

impl Failure {
    pub fn message(&self) -> &str {
        match self {
            Self::UnknownToken => "unknown agent token",
            Self::Unreachable(message) | Self::Refused(message) => message,
        }
    }
}
