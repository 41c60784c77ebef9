//! Owns how gateway-mcp counts its answered requests, for every door that
//! answers (the guard of `/mcp`, the legacy transport, the OAuth routes).

use axum::response::Response;

/// Counts one answered request of `route` in `hado_http_requests_total`.
pub(crate) fn count(route: &'static str, method: String, response: &Response) {
    metrics::counter!("hado_http_requests_total", "route" => route, "method" => method, "status" => response.status().as_u16().to_string()).increment(1);
}
