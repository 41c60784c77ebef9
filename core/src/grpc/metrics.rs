//! Owns the gRPC metrics: every call counted by method and status code, and
//! timed, as a tower layer around all of core's services. A path core does
//! not serve is counted as `unknown`, so that the labels stay as few as the
//! methods.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use tonic::codegen::http;
use tower_layer::Layer;
use tower_service::Service;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GrpcMetricsLayer;

impl<S> Layer<S> for GrpcMetricsLayer {
    type Service = GrpcMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcMetrics { inner }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct GrpcMetrics<S> {
    inner: S,
}

impl<S, B, R> Service<http::Request<B>> for GrpcMetrics<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, context: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = super::gate::method_label(request.uri().path());
        let started = Instant::now();
        let reply = self.inner.call(request);
        Box::pin(async move {
            let result = reply.await;
            // A failed unary call carries its status in the headers; a
            // successful one only in the trailers, which come later: code 0.
            let code = match &result {
                Ok(response) => response
                    .headers()
                    .get("grpc-status")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("0")
                    .to_owned(),
                Err(_) => "transport".to_owned(),
            };
            metrics::counter!("hado_grpc_requests_total", "method" => method.clone(), "code" => code).increment(1);
            metrics::histogram!("hado_grpc_request_duration_seconds", "method" => method)
                .record(started.elapsed().as_secs_f64());
            result
        })
    }
}
