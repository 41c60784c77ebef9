//! Owns gateway-http's request metrics: every request counted by route
//! (the route's pattern, such as `/me/events/{id}`, so that ids do not
//! multiply the series), method and status, and timed.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;

pub(crate) async fn record(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let status = response.status();
    metrics::counter!("hado_http_requests_total", "route" => route.clone(), "method" => method.clone(), "status" => status.as_u16().to_string()).increment(1);
    if status.is_server_error() {
        metrics::counter!("hado_http_errors_total", "route" => route.clone(), "method" => method.clone()).increment(1);
    }
    metrics::histogram!("hado_http_request_duration_seconds", "route" => route, "method" => method)
        .record(started.elapsed().as_secs_f64());
    response
}
