//! What both gateways are made of, beside the process plumbing of
//! `hado-runtime`: the budget of request bodies held at once and how a
//! body is read (`bodies`), their channel to core (`client`, with `cores` choosing
//! the core and sending again what is safe to), the security headers on
//! every reply (`headers`), request bodies read as JSON with each key once
//! (`json`), who a request's client is behind a trusted proxy (`proxies`),
//! a short memory of tokens core accepted (`known_tokens`), per-minute
//! limits (`per_minute`), an HTTP server that bounds how long a client may
//! take and how many may be connected (`serve`), and `/up` (`up`). Core
//! serves gRPC only and never depends on it. See ARCHITECTURE.md.

pub mod bodies;
pub mod client;
pub mod cores;
pub mod headers;
pub mod json;
pub mod known_tokens;
pub mod per_minute;
pub mod proxies;
pub mod serve;
pub mod up;

pub use bodies::BodyBudget;
pub use proxies::TrustedProxies;
pub use serve::{ClientAddress, Limits, serve};
