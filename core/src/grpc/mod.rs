//! Owns core's gRPC edge: the five `hado.v1` services, server reflection
//! (v1 and v1alpha, so that old and new grpcurl both work) and
//! `grpc.health.v1`.

mod admin;
pub(crate) mod auth;
mod gate;
mod inbox;
mod ingest;
mod links;
mod metrics;
mod oauth;

use crate::wire;
use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::transport::server::TcpIncoming;

use hado_proto::v1::admin_server::AdminServer;
use hado_proto::v1::inbox_server::InboxServer;
use hado_proto::v1::ingest_server::IngestServer;
use hado_proto::v1::links_server::LinksServer;
use hado_proto::v1::o_auth_server::OAuthServer;

pub(crate) use auth::Credentials;
use hado_engine::Engine;

/// A user's profile as every reply carries it: settings, local time, and
/// how many events need attention.
async fn profile(
    engine: &Engine,
    user: &hado_domain::user::UserRecord,
) -> Result<hado_proto::v1::Profile, hado_engine::error::CoreError> {
    let attention = engine.attention_count(user).await?;
    Ok(wire::profile(user, engine.now(), attention, engine.default_zone()))
}

/// The health check's name for "the process answers", apart from its storage.
pub(crate) const LIVENESS: &str = "liveness";

/// How long the calls in flight may take to finish once core is told to stop.
pub(crate) const CALLS_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// The whole server and each service: what follows the storage, and what
/// says NOT_SERVING once core is told to stop.
const SERVED: &[&str] = &[
    "",
    <InboxServer<inbox::InboxService> as tonic::server::NamedService>::NAME,
    <IngestServer<ingest::IngestService> as tonic::server::NamedService>::NAME,
    <AdminServer<admin::AdminService> as tonic::server::NamedService>::NAME,
    <LinksServer<links::LinksService> as tonic::server::NamedService>::NAME,
    <OAuthServer<oauth::OAuthService> as tonic::server::NamedService>::NAME,
];

/// Keeps gRPC health (the whole server's, `""`, which `/up` asks, and each
/// service's) SERVING while storage can be written and NOT_SERVING while
/// it cannot, until the server goes.
async fn follow_storage(
    reporter: tonic_health::server::HealthReporter,
    mut storage: watch::Receiver<bool>,
) {
    use tonic_health::ServingStatus;
    let services = SERVED;
    loop {
        let status = if *storage.borrow_and_update() {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        };
        for service in services {
            reporter.set_service_status(*service, status).await;
        }
        if storage.changed().await.is_err() {
            return;
        }
    }
}

/// Large enough for a full batch of 1000 events at their size limits, and
/// for a too-long field to reach validation and get a precise error.
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// What reflection describes: Hado's services, gRPC health, and
/// google.rpc.BadRequest and friends, so that grpcurl can show the details.
fn reflection() -> tonic_reflection::server::Builder<'static> {
    tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(hado_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
}

/// Waits for `shutdown`, then says NOT_SERVING for the server and every
/// service, stops following the storage, and tells `stop_began`.
async fn stop_serving(
    shutdown: impl Future<Output = ()>,
    following: tokio::task::JoinHandle<()>,
    reporter: tonic_health::server::HealthReporter,
    stop_began: tokio::sync::oneshot::Sender<()>,
) {
    shutdown.await;
    following.abort();
    for service in SERVED {
        reporter.set_service_status(*service, tonic_health::ServingStatus::NotServing).await;
    }
    tracing::info!("core stops taking calls; finishing the calls in flight");
    let _ = stop_began.send(());
}

/// Resolves [`CALLS_GRACE`] after stopping began; never, if it never does.
async fn out_of_time(began: tokio::sync::oneshot::Receiver<()>) {
    match began.await {
        Ok(()) => tokio::time::sleep(CALLS_GRACE).await,
        Err(_) => std::future::pending().await,
    }
}

/// Serves every service on `listener` until `shutdown` resolves; in-flight
/// calls finish first.
pub(crate) async fn serve(
    engine: Arc<Engine>,
    credentials: Credentials,
    telegram: Option<crate::telegram::Bot>,
    email: bool,
    storage: crate::storage_watch::StorageWatch,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    // On Postgres, storage that is down answers every call at once; on
    // SQLite a failed probe is a full disk, and reads go on.
    let gate = gate::GateLayer::new(
        engine.storage_down_refuses_every_call().then(|| storage.available.clone()),
        storage.clone(),
    );
    // "liveness" answers while the process does, whatever its storage
    // says: what an orchestrator's liveness probe asks, so that a database
    // outage does not restart every core.
    health_reporter.set_service_status(LIVENESS, tonic_health::ServingStatus::Serving).await;
    let following = tokio::spawn(follow_storage(health_reporter.clone(), storage.available));
    // Told to stop, core says NOT_SERVING at once and tonic closes the
    // port, so that callers go elsewhere; the calls in flight then have
    // CALLS_GRACE to finish (their connections are sent GOAWAY), and
    // whatever is still running after it is dropped.
    let (stop_began, began) = tokio::sync::oneshot::channel::<()>();
    let shutdown = stop_serving(shutdown, following, health_reporter, stop_began);
    let reflection_v1 = reflection().build_v1().expect("the compiled-in descriptor sets are valid");
    let reflection_v1alpha =
        reflection().build_v1alpha().expect("the compiled-in descriptor sets are valid");
    let inbox = inbox::InboxService {
        engine: engine.clone(),
        credentials: credentials.clone(),
        telegram: telegram.clone(),
        email,
    };
    let ingest = ingest::IngestService { engine: engine.clone() };
    let links =
        links::LinksService { engine: engine.clone(), credentials: credentials.clone(), telegram };
    let oauth = oauth::OAuthService { engine: engine.clone(), credentials: credentials.clone() };
    let admin = admin::AdminService { engine, credentials };
    let server = tonic::transport::Server::builder()
        .layer(metrics::GrpcMetricsLayer)
        .layer(gate)
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(InboxServer::new(inbox).max_decoding_message_size(MAX_MESSAGE_BYTES))
        .add_service(IngestServer::new(ingest).max_decoding_message_size(MAX_MESSAGE_BYTES))
        .add_service(AdminServer::new(admin).max_decoding_message_size(MAX_MESSAGE_BYTES))
        .add_service(LinksServer::new(links))
        .add_service(OAuthServer::new(oauth))
        // Without TCP_NODELAY, the last segment of a reply larger than one
        // packet waits for the client's delayed ACK: ~40 ms on every list.
        .serve_with_incoming_shutdown(
            TcpIncoming::from(listener).with_nodelay(Some(true)),
            shutdown,
        );
    tokio::pin!(server);
    tokio::select! {
        served = &mut server => served,
        () = out_of_time(began) => {
            tracing::warn!(grace = ?CALLS_GRACE, "calls still in flight after the grace; stopping anyway");
            Ok(())
        }
    }
}
