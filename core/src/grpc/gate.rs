//! Owns what every gRPC call meets around its service, as a tower layer:
//! while a Postgres that cannot be reached is known to be down (the health
//! probe says so), a call is answered UNAVAILABLE at once instead of
//! waiting for a connection that will not come; a call that storage failed
//! (UNAVAILABLE) asks the probe to look now, so that health says so from
//! the first refusal rather than a probe later; and a request body that is
//! not the protobuf message its method takes is answered INVALID_ARGUMENT
//! (tonic's codec calls it INTERNAL, which would blame core for the
//! caller's bytes). It also names the methods that exist, so that the
//! metrics of unknown paths share one label.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use prost::Message;
use tokio::sync::watch;
use tonic::codegen::http;
use tower_layer::Layer;
use tower_service::Service;

use crate::storage_watch::StorageWatch;
use hado_engine::error::CoreError;

/// Every `/package.Service/Method` path core serves: Hado's services,
/// health and both reflections, read from their descriptor sets.
static KNOWN_METHODS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    let sets = [hado_proto::FILE_DESCRIPTOR_SET, tonic_health::pb::FILE_DESCRIPTOR_SET];
    let mut known: HashSet<String> = sets
        .iter()
        .filter_map(|bytes| prost_types::FileDescriptorSet::decode(*bytes).ok())
        .flat_map(|set| set.file)
        .flat_map(|file| {
            let package = file.package.clone().unwrap_or_default();
            file.service.into_iter().flat_map(move |service| {
                let prefix = format!("/{package}.{}/", service.name());
                service.method.into_iter().map(move |method| format!("{prefix}{}", method.name()))
            })
        })
        .collect();
    known.insert("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo".to_owned());
    known.insert("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo".to_owned());
    known
});

/// The label a path is counted under: itself when core serves it, else
/// `unknown`, so that a client inventing paths cannot grow the metrics.
pub(crate) fn method_label(path: &str) -> String {
    if KNOWN_METHODS.contains(path) { path.to_owned() } else { "unknown".to_owned() }
}

#[derive(Clone, Debug)]
pub(crate) struct GateLayer {
    /// Whether storage can be written; `None` where a failed probe does not
    /// stop calls (SQLite: reads go on while the disk is full, and writes
    /// fail fast by themselves).
    storage: Option<watch::Receiver<bool>>,
    /// The probe, asked to look now when storage fails a call.
    probe: StorageWatch,
}

impl GateLayer {
    pub(crate) fn new(storage: Option<watch::Receiver<bool>>, probe: StorageWatch) -> Self {
        Self { storage, probe }
    }
}

impl<S> Layer<S> for GateLayer {
    type Service = Gate<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Gate { inner, storage: self.storage.clone(), probe: self.probe.clone() }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Gate<S> {
    inner: S,
    storage: Option<watch::Receiver<bool>>,
    probe: StorageWatch,
}

impl<S, B, R> Service<http::Request<B>> for Gate<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    R: Default + Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, context: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let path = request.uri().path().to_owned();
        let storage_down = self.storage.as_ref().is_some_and(|storage| !*storage.borrow());
        if storage_down && path.starts_with("/hado.v1.") {
            let mut status = crate::status::status(CoreError::storage_down());
            status.metadata_mut().insert(
                hado_proto::metadata::NOT_STARTED,
                tonic::metadata::MetadataValue::from_static("storage"),
            );
            return Box::pin(async move { Ok(status.into_http()) });
        }
        let reply = self.inner.call(request);
        let probe = self.probe.clone();
        Box::pin(async move {
            let response = reply.await?;
            if tonic::Status::from_header_map(response.headers())
                .is_some_and(|status| status.code() == tonic::Code::Unavailable)
            {
                probe.look_now();
            }
            Ok(undecodable_as_invalid(&path, response))
        })
    }
}

/// tonic answers a body it cannot decode with INTERNAL and the decoder's
/// words; that is the caller's mistake, INVALID_ARGUMENT.
fn undecodable_as_invalid<R: Default>(
    path: &str,
    response: http::Response<R>,
) -> http::Response<R> {
    let Some(status) = tonic::Status::from_header_map(response.headers()) else { return response };
    let undecodable = status.message().starts_with("failed to decode Protobuf message")
        || status.message().contains("invalid compression flag");
    if status.code() != tonic::Code::Internal || !undecodable {
        return response;
    }
    let method = path.rsplit('/').next().unwrap_or(path);
    tonic::Status::invalid_argument(format!(
        "the request body is not a {method} request message: {}",
        status.message()
    ))
    .into_http()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_served_methods_have_labels_of_their_own() {
        assert_eq!(method_label("/hado.v1.Inbox/ListEvents"), "/hado.v1.Inbox/ListEvents");
        assert_eq!(method_label("/grpc.health.v1.Health/Check"), "/grpc.health.v1.Health/Check");
        assert_eq!(
            method_label("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"),
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
        );
        assert_eq!(method_label("/hado.v1.Inbox/Nothing123"), "unknown");
        assert_eq!(method_label("/x.y/z"), "unknown");
        assert!(KNOWN_METHODS.len() > 40, "{}", KNOWN_METHODS.len());
    }
}
