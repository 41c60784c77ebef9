//! Owns how a gateway reaches core: one lazily connected tonic channel that
//! reconnects by itself, and what a failed call means to the gateway's own
//! caller (core's words, or that core cannot be reached).

use std::time::Duration;

use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

use crate::process::ConfigError;

/// How long one call to core may take before the caller hears it failed.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const MAX_HEADER_LIST_BYTES: u32 = 8 * 1024 * 1024;

/// Core, as a gateway reaches it.
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
            .timeout(CALL_TIMEOUT)
            .tcp_nodelay(true)
            // A refused batch of 1000 events carries every violation in the
            // status details, a header far beyond HTTP/2's usual 16 KiB.
            .http2_max_header_list_size(MAX_HEADER_LIST_BYTES);
        Ok(Self { channel: endpoint.connect_lazy(), url: url.to_owned() })
    }

    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// What a failed call means.
    pub fn explain(&self, status: &Status) -> Failure {
        match status.code() {
            Code::Unauthenticated => Failure::Unauthenticated(status.message().to_owned()),
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::Unknown => Failure::Unreachable(format!(
                "hado core at {} cannot be reached right now; the gateway reconnects by itself, so try again in a moment",
                self.url
            )),
            code => Failure::Refused { code, message: status.message().to_owned() },
        }
    }
}

/// A call core did not answer with a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Core did not accept the credential; its message says why.
    Unauthenticated(String),
    /// Core is down or did not answer in time.
    Unreachable(String),
    /// Core refused: a validation error, not found, not the owner.
    Refused { code: Code, message: String },
}

impl Failure {
    pub fn message(&self) -> &str {
        match self {
            Self::Unauthenticated(message) | Self::Unreachable(message) | Self::Refused { message, .. } => message,
        }
    }
}
