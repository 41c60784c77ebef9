//! How a Hado process runs, apart from the contract it speaks and the HTTP
//! edge of the gateways (`hado-gateway`): reading `HADO_*` settings
//! (`settings`), logging, starting and signals (`process`), and `/metrics`
//! for Prometheus (`metrics_endpoint`) behind the same `Host` check as the
//! gateways (`hosts`). Core and both gateways build on it alike. See
//! ARCHITECTURE.md.

pub mod hosts;
pub mod metrics_endpoint;
pub mod process;
pub mod settings;

pub use hosts::{AllowedHosts, HostRefusal};
