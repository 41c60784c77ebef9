//! How a Hado process runs, apart from the contract it speaks: reading
//! `HADO_*` settings (`settings`), logging, starting and signals
//! (`process`), `/metrics` for
//! Prometheus behind the same `Host` check as the gateways
//! (`metrics_endpoint`, `hosts`), every word a
//! person reads in both languages (`words`) and how a due moment reads
//! (`wording`), the JSON views of core's messages that the gateways and
//! core's webhooks serve (`views`, feature `views`), and, for the gateways (feature
//! `gateway`), their channel to core (`client`), the security headers on every reply
//! (`headers`), request bodies read as JSON with each key once
//! (`json`), who a request's client is behind a trusted proxy
//! (`proxies`), a short memory of tokens core accepted (`known_tokens`)
//! and an HTTP server that bounds how long a client may take and
//! how many may be connected (`serve`), and `/up` (`up`). See
//! ARCHITECTURE.md.

pub mod hosts;
pub mod metrics_endpoint;
pub mod process;
pub mod settings;
pub mod wording;
pub mod words;
mod zone_links;

#[cfg(feature = "views")]
pub mod views;

#[cfg(feature = "gateway")]
pub mod client;
#[cfg(feature = "gateway")]
pub mod cores;
#[cfg(feature = "gateway")]
pub mod headers;
#[cfg(feature = "gateway")]
pub mod json;
#[cfg(feature = "gateway")]
pub mod known_tokens;
#[cfg(feature = "gateway")]
pub mod per_minute;
#[cfg(feature = "gateway")]
pub mod proxies;
#[cfg(feature = "gateway")]
pub mod serve;
#[cfg(feature = "gateway")]
pub mod up;

pub use hosts::{AllowedHosts, HostRefusal};
#[cfg(feature = "gateway")]
pub use proxies::TrustedProxies;
#[cfg(feature = "gateway")]
pub use serve::{ClientAddress, Limits, serve};
