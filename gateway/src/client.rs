//! Owns how a gateway reaches core: lazily connected channels that
//! reconnect by themselves and, when `HADO_CORE_URL` names a host, one for
//! every address the name resolves to, asked again every few seconds so
//! that new core replicas join and stopped ones leave (`cores` spreads the
//! calls and repeats the ones a stopped core dropped); and what a failed
//! call means to the gateway's own caller (core's words, or that core
//! cannot be reached).

use std::time::Duration;

use hado_proto::errors::ErrorCode;
use tonic::Status;
use tonic::transport::Endpoint;
use tonic_types::StatusExt;

pub use crate::cores::{CoreChannel, Resolve, dns};
use hado_runtime::settings::{ConfigError, Lookup, host_of_url, read};

/// How long one call to core may take before the caller hears it failed.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// On a network of containers a connection takes well under a millisecond;
/// a core that does not answer within a second is set aside (`cores`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// A connection to core that has heard nothing for this long while a call
/// waits on it is asked (an HTTP/2 ping) whether core is still there.
const KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(2);
/// A ping core does not answer within this closes the connection: the call
/// on it fails at the transport, its core is set aside, and a call that is
/// safe to repeat goes to another core, in seconds rather than at
/// [`CALL_TIMEOUT`]. A core that is frozen, cut off, or took the connection
/// before it could serve answers no ping.
const KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(2);
const MAX_HEADER_LIST_BYTES: u32 = 8 * 1024 * 1024;
/// The largest reply a gateway takes from core: a list of tens of thousands
/// of events is well past tonic's default of 4 MiB.
pub const MAX_REPLY_BYTES: usize = 64 * 1024 * 1024;
/// How often a host name is resolved again.
pub const RESOLVE_EVERY: Duration = Duration::from_secs(2);

/// Where core listens when `HADO_CORE_URL` is not set.
pub const DEFAULT_CORE_URL: &str = "http://127.0.0.1:50051";

/// Reads `HADO_CORE_URL`, where a gateway finds core, accepting a bare
/// `host:port` as plain HTTP. Anything else without `://` is refused, not
/// guessed at: `https//core:50051` would otherwise name the host `https`,
/// which the gateway would try to resolve for ever.
pub fn core_url(lookup: Lookup<'_>) -> Result<String, ConfigError> {
    let value = read(lookup, "HADO_CORE_URL").unwrap_or_else(|| DEFAULT_CORE_URL.to_owned());
    let bare_host_and_port = value.rsplit_once(':').is_some_and(|(host, port)| {
        !host.is_empty() && !host.contains(['/', '@']) && port.parse::<u16>().is_ok()
    });
    let url = if value.contains("://") {
        value.clone()
    } else if bare_host_and_port {
        format!("http://{value}")
    } else {
        String::new()
    };
    if host_of_url(&url).is_none() || !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ConfigError {
            variable: "HADO_CORE_URL",
            problem: format!("{value:?} is not a URL such as {DEFAULT_CORE_URL}"),
        });
    }
    Ok(url)
}

/// Core, as a gateway reaches it.
#[derive(Clone, Debug)]
pub struct Core {
    channel: CoreChannel,
    url: String,
}

/// Every connection to core is made alike, to one address or many.
fn configured(endpoint: Endpoint) -> Endpoint {
    endpoint
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(CALL_TIMEOUT)
        .http2_keep_alive_interval(KEEP_ALIVE_INTERVAL)
        .keep_alive_timeout(KEEP_ALIVE_TIMEOUT)
        .tcp_nodelay(true)
        // A refused batch of 1000 events carries every violation in the
        // status details, a header far beyond HTTP/2's usual 16 KiB.
        .http2_max_header_list_size(MAX_HEADER_LIST_BYTES)
}

impl Core {
    /// Prepares the channel without connecting: the gateway starts even when
    /// core is down, and each call reconnects if it must. An address is
    /// used as it is; a host name is resolved now and every
    /// [`RESOLVE_EVERY`], and calls are balanced over what it resolves to.
    /// Must run inside a tokio runtime.
    pub fn connect_lazy(url: &str) -> Result<Self, ConfigError> {
        Self::connect_balanced(url, dns(), RESOLVE_EVERY)
    }

    /// [`Core::connect_lazy`] with the resolver and its interval given.
    pub fn connect_balanced(
        url: &str,
        resolve: Resolve,
        every: Duration,
    ) -> Result<Self, ConfigError> {
        let bad = |problem: String| ConfigError {
            variable: "HADO_CORE_URL",
            problem: format!("{url:?}: {problem}"),
        };
        let endpoint = configured(
            Endpoint::from_shared(url.to_owned()).map_err(|error| bad(error.to_string()))?,
        );
        let parsed = url::Url::parse(url).map_err(|error| bad(error.to_string()))?;
        let channel = match (parsed.scheme(), parsed.host()) {
            // A name over plain HTTP/2: balanced over its addresses. (Over
            // TLS the name is also the certificate's, so it stays one channel.)
            ("http", Some(url::Host::Domain(host))) => {
                let port = parsed.port_or_known_default().unwrap_or(80);
                CoreChannel::resolving(host.to_owned(), port, resolve, every, |address| {
                    Endpoint::from_shared(format!("http://{address}"))
                        .ok()
                        .map(|endpoint| configured(endpoint).connect_lazy())
                })
            }
            _ => CoreChannel::single(url, endpoint.connect_lazy()),
        };
        Ok(Self { channel, url: url.to_owned() })
    }

    pub fn channel(&self) -> CoreChannel {
        self.channel.clone()
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether core answers its gRPC health check with SERVING: it is up
    /// and its storage can be written. What each gateway's `/up` says.
    pub async fn health(&self) -> Health {
        use tonic_health::pb::{
            HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
        };
        match HealthClient::new(self.channel())
            .check(HealthCheckRequest { service: String::new() })
            .await
        {
            Ok(reply) if reply.get_ref().status == ServingStatus::Serving as i32 => Health::Serving,
            Ok(_) => Health::NotServing,
            Err(_) => Health::Unreachable,
        }
    }

    /// What a failed call means, by the code's row in `hado_proto::errors`.
    pub fn explain(&self, status: &Status) -> Failure {
        let reason = status.get_details_error_info().map(|info| info.reason);
        let message = status.message().to_owned();
        match ErrorCode::of(status.code(), reason.as_deref()) {
            ErrorCode::Unauthenticated => Failure::Unauthenticated(message),
            // Core is up but its storage is not: core's own words say so.
            ErrorCode::StorageAway => Failure::Unreachable(message),
            ErrorCode::CoreAway => {
                Failure::Unreachable(ErrorCode::CoreAway.words().replace("{core}", &self.url))
            }
            code => Failure::Refused { code, message },
        }
    }
}

/// What core's health check said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    Serving,
    /// Up, but its storage cannot be reached or written.
    NotServing,
    Unreachable,
}

/// How long a gateway tells a client to wait (`Retry-After`) when core or
/// its storage cannot be reached.
pub const RETRY_AFTER_SECONDS: u64 = 2;

/// A call core did not answer with a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Core did not accept the credential; its message says why.
    Unauthenticated(String),
    /// Core, or its storage, is down or did not answer in time: worth a
    /// retry in a moment (`RETRY_AFTER_SECONDS`).
    Unreachable(String),
    /// Core refused: a validation error, not found, not the owner.
    Refused { code: ErrorCode, message: String },
}

impl Failure {
    /// The failure's row in `hado_proto::errors`: its HTTP status, how MCP
    /// answers it, whether a retry can help.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Unauthenticated(_) => ErrorCode::Unauthenticated,
            Self::Unreachable(_) => ErrorCode::CoreAway,
            Self::Refused { code, .. } => *code,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Self::Unauthenticated(message)
            | Self::Unreachable(message)
            | Self::Refused { message, .. } => message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_core_url(value: &str) -> Result<String, ConfigError> {
        let given = value.to_owned();
        core_url(&move |variable: &str| (variable == "HADO_CORE_URL").then(|| given.clone()))
    }

    #[test]
    fn a_core_url_is_a_url_or_a_bare_host_and_port() {
        for (given, read) in [
            ("http://core:50051", "http://core:50051"),
            ("https://core.example.com", "https://core.example.com"),
            ("core:50051", "http://core:50051"),
            ("127.0.0.1:50051", "http://127.0.0.1:50051"),
        ] {
            assert_eq!(read_core_url(given).unwrap(), read, "{given}");
        }
        for bad in [
            "https//127.0.0.1:50051",
            "http:/core:50051",
            "core",
            "core:port",
            "ftp://core",
            "user@core:50051",
            ":50051",
        ] {
            let error = read_core_url(bad).unwrap_err();
            assert_eq!(error.variable, "HADO_CORE_URL", "{bad}");
            assert!(error.problem.contains("is not a URL such as"), "{bad}: {}", error.problem);
        }
    }
}
