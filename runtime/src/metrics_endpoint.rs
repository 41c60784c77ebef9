//! Owns `/metrics`: one Prometheus recorder per process, served on
//! `HADO_METRICS_ADDR` by a small HTTP/1 server that answers only the host
//! names the gateways answer (`hosts`), so that a web page cannot read a
//! process's metrics on loopback by rebinding its own name. The exporter's
//! own listener takes any `Host`, so the server is hyper's, as tonic and the
//! exporter already build it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use http::{Method, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;

use crate::hosts::AllowedHosts;
use crate::settings::{ConfigError, Lookup, read};

/// How long a scraper may take to send its request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How often histograms are folded (the exporter's upkeep).
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Serves Prometheus metrics at `http://HADO_METRICS_ADDR/metrics` when the
/// variable is set; every `metrics::` counter, gauge and histogram of the
/// process shows there. Without it nothing listens and recording is free.
/// Must run inside a tokio runtime.
pub async fn start(lookup: Lookup<'_>) -> Result<Option<SocketAddr>, ConfigError> {
    let Some(text) = read(lookup, "HADO_METRICS_ADDR") else { return Ok(None) };
    let addr: SocketAddr = text.parse().map_err(|_| ConfigError {
        variable: "HADO_METRICS_ADDR",
        problem: format!("{text:?} is not an address such as 127.0.0.1:9464"),
    })?;
    let hosts = AllowedHosts::from_lookup(lookup)?;
    let cannot = |problem: String| ConfigError {
        variable: "HADO_METRICS_ADDR",
        problem: format!("cannot serve metrics on {addr}: {problem}"),
    };
    let listener = TcpListener::bind(addr).await.map_err(|error| cannot(error.to_string()))?;
    let buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &buckets)
        .and_then(|builder| builder.install_recorder())
        .map_err(|error| cannot(error.to_string()))?;
    let upkept = handle.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(UPKEEP_EVERY).await;
            upkept.run_upkeep();
        }
    });
    tokio::spawn(serve(listener, handle, hosts));
    Ok(Some(addr))
}

async fn serve(listener: TcpListener, handle: PrometheusHandle, hosts: AllowedHosts) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let (handle, hosts) = (handle.clone(), hosts.clone());
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let reply = answer(&request, &handle, &hosts);
                    async move { Ok::<_, Infallible>(reply) }
                });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            // A scraper that connects and says nothing is let go too.
            let _ = tokio::time::timeout(HEADER_TIMEOUT * 3, connection).await;
        });
    }
}

fn answer<B>(
    request: &http::Request<B>,
    handle: &PrometheusHandle,
    hosts: &AllowedHosts,
) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, kind: &'static str, body: String| {
        let mut response = Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(kind));
        response
    };
    if let Err(refusal) = hosts.admit(request.headers(), request.uri()) {
        return reply(
            StatusCode::MISDIRECTED_REQUEST,
            "text/plain; charset=utf-8",
            format!("{refusal}\n"),
        );
    }
    match (request.method(), request.uri().path()) {
        (&Method::GET | &Method::HEAD, "/metrics") => {
            reply(StatusCode::OK, "text/plain; version=0.0.4", handle.render())
        }
        _ => reply(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "metrics are at GET /metrics\n".to_owned(),
        ),
    }
}
