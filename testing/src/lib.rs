//! Owns the test harness every crate's tests share (behind the `testing`
//! feature): a core on an ephemeral port over a fresh database (SQLite
//! always, Postgres when `HADO_TEST_POSTGRES_URL` is set), a manual clock,
//! and typed tonic clients for each kind of caller.

//!
//! `database` is the fresh database of each test, on either backend;
//! `cores` the engine or the whole core started over it; `tools` whether
//! an outside program a test needs is here; `mail` a real mail server.

mod cores;
mod database;
mod mail;
mod tools;

pub use cores::{TestCore, TestEngine};
pub use database::{Backend, TestDatabase};
pub use mail::{Mail, MailSink};
pub use tools::{runs, tool_available};

use chrono::{DateTime, Utc};
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::transport::Channel;

use hado_core::config::CoreConfig;

pub const ADMIN_TOKEN: &str = "admin-secret-for-tests-0123456789abcdef";
pub const GATEWAY_TOKEN: &str = "gateway-secret-for-tests-0123456789abcdef";
pub const LINK_SECRET: &str = "link-secret-for-tests-0123456789abcdef";

/// A source's event for `user` (no topic): its ref, title and due moment.
pub fn source_event(
    user: &str,
    source_ref: &str,
    title: &str,
    due_at: &str,
) -> hado_proto::v1::SourceEvent {
    let fields = hado_proto::v1::EventFields {
        title: title.into(),
        due_at: due_at.into(),
        ..Default::default()
    };
    hado_proto::v1::SourceEvent {
        user: user.into(),
        r#ref: source_ref.into(),
        topic: String::new(),
        fields: Some(fields),
    }
}

pub fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).expect("an RFC 3339 instant").with_timezone(&Utc)
}

pub fn config(database_url: &str) -> CoreConfig {
    CoreConfig {
        database_url: database_url.to_owned(),
        grpc_addr: "127.0.0.1:0".parse().unwrap(),
        admin_token: ADMIN_TOKEN.to_owned(),
        gateway_token: GATEWAY_TOKEN.to_owned(),
        secret: LINK_SECRET.to_owned(),
        default_zone: chrono_tz::Europe::Berlin,
        default_locale: hado_domain::profile::Locale::En,
        public_url: "http://127.0.0.1:8080".into(),
        webhook_allow_private: true,
        telegram: None,
        delivery_concurrency: hado_core::config::DEFAULT_DELIVERY_CONCURRENCY,
        smtp: None,
        push: None,
    }
}

/// What an action link binds of an event besides its id: the event as
/// a reminder would name it, read from the database (a test that signs
/// links itself, as a load test does, has no reminder to take one from).
pub async fn linked_event(database_url: &str, event_id: i64) -> hado_engine::links::LinkedEvent {
    let (user_id, revision, created_at) =
        hado_storage::testing::event_binding(database_url, event_id).await;
    hado_engine::links::LinkedEvent {
        id: event_id,
        user_id,
        revision,
        created_at: chrono::DateTime::from_timestamp_millis(created_at).expect("a stored instant"),
    }
}

/// Polls gRPC health until core answers SERVING (never a fixed sleep),
/// failing the test if it does not `within` that long.
pub async fn wait_until_serving(channel: Channel, within: std::time::Duration) {
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus};
    let deadline = std::time::Instant::now() + within;
    let mut client = HealthClient::new(channel);
    loop {
        if let Ok(reply) = client.check(HealthCheckRequest { service: String::new() }).await
            && reply.get_ref().status == ServingStatus::Serving as i32
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "core did not become healthy within {within:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

/// Polls `probe` until it finds what it looks for, for up to five seconds.
///
/// A test core runs its own delivery loop beside the test's explicit drains,
/// so a receiver can see a request before the attempt is recorded: tests
/// that read the record after a request wait for it here.
pub async fn eventually<T, Probe>(what: &str, mut probe: impl FnMut() -> Probe) -> T
where
    Probe: std::future::Future<Output = Option<T>>,
{
    for _ in 0..200 {
        if let Some(found) = probe().await {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("{what} did not happen within five seconds");
}

/// Adds `authorization: Bearer …` (and for the gateway, `x-hado-user`).
#[derive(Clone)]
pub struct Bearer {
    authorization: MetadataValue<tonic::metadata::Ascii>,
    user: Option<MetadataValue<tonic::metadata::Ascii>>,
}

impl Bearer {
    pub fn new(token: &str, user: Option<&str>) -> Self {
        Self {
            authorization: format!("Bearer {token}").parse().unwrap(),
            user: user.map(|login| login.parse().unwrap()),
        }
    }
}

impl Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request.metadata_mut().insert("authorization", self.authorization.clone());
        if let Some(user) = &self.user {
            request.metadata_mut().insert("x-hado-user", user.clone());
        }
        Ok(request)
    }
}
