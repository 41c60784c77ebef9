//! What Hado's two HTTP gateways share at their edge: the host names they
//! answer to (`hosts`) and an HTTP server that bounds how long a client may
//! take and how many may be connected (`serve`). See ARCHITECTURE.md.

pub mod hosts;
pub mod serve;

pub use hosts::{AllowedHosts, HostRefusal};
pub use serve::{Limits, serve};
