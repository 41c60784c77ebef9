//! Owns the test harness every crate's tests share (behind the `testing`
//! feature): a core on an ephemeral port over a fresh database (SQLite
//! always, Postgres when `HADO_TEST_POSTGRES_URL` is set), a manual clock,
//! and typed tonic clients for each kind of caller.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use sqlx::Connection;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::transport::Channel;

use crate::clock::ManualClock;
use crate::config::CoreConfig;
use crate::engine::Engine;
use hado_proto::v1::admin_client::AdminClient;
use hado_proto::v1::inbox_client::InboxClient;
use hado_proto::v1::ingest_client::IngestClient;

pub const ADMIN_TOKEN: &str = "admin-secret-for-tests-0123456789abcdef";
pub const GATEWAY_TOKEN: &str = "gateway-secret-for-tests-0123456789abcdef";
pub const LINK_SECRET: &str = "link-secret-for-tests-0123456789abcdef";

/// The variable that points the tests at a Postgres server.
pub(crate) const POSTGRES_VARIABLE: &str = "HADO_TEST_POSTGRES_URL";

/// Which database a test runs on.
#[derive(Clone, Debug)]
pub enum Backend {
    Sqlite,
    Postgres(String),
}

impl Backend {
    /// Postgres when its URL is set. Without it the test is skipped with a
    /// line that bypasses the test runner's capture, so the skip is seen;
    /// under CI a missing URL is a failure, never a silent skip.
    pub fn postgres(test: &str) -> Option<Self> {
        match std::env::var(POSTGRES_VARIABLE) {
            Ok(url) if !url.is_empty() => Some(Self::Postgres(url)),
            _ => {
                assert!(
                    std::env::var("CI").is_err(),
                    "{POSTGRES_VARIABLE} must be set under CI so that {test} runs on Postgres"
                );
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED {test} on Postgres: {POSTGRES_VARIABLE} is not set"
                );
                None
            }
        }
    }
}

/// Whether an outside tool a test drives (a browser, a checker, an SDK) is
/// here. Without it the test is skipped with a line that bypasses the test
/// runner's capture; under CI it must be here, so a skip never passes there.
pub fn tool_available(test: &str, found: bool, install: &str) -> bool {
    if !found {
        assert!(std::env::var("CI").is_err(), "{test} needs {install} under CI");
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: needs {install}");
    }
    found
}

/// Whether `program` runs with `arguments` and succeeds.
pub fn runs(program: &str, arguments: &[&str]) -> bool {
    std::process::Command::new(program)
        .args(arguments)
        .output()
        .is_ok_and(|output| output.status.success())
}

/// Generates one `#[tokio::test]` per backend for each story function.
#[macro_export]
macro_rules! on_both_backends {
    ($($story:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $story() {
                    super::$story($crate::testing::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $story() {
                    let test = concat!(module_path!(), "::", stringify!($story));
                    if let Some(backend) = $crate::testing::Backend::postgres(test) {
                        super::$story(backend).await;
                    }
                }
            )*
        }
    };
}

/// A fresh database for one test, removed by [`TestDatabase::drop_now`], or
/// when it is dropped (a test that panicked leaves no database behind).
pub struct TestDatabase {
    pub url: String,
    admin_url: Option<String>,
    name: String,
    _folder: Option<tempfile::TempDir>,
}

impl TestDatabase {
    /// A fresh database. Every test starts here, so this also installs the
    /// TLS provider that the test's own HTTP clients need.
    pub async fn create(backend: &Backend) -> Self {
        crate::install_tls_provider();
        match backend {
            Backend::Sqlite => {
                let folder = tempfile::tempdir().expect("a temporary folder");
                let url = format!("sqlite://{}/hado.db", folder.path().display());
                Self { url, admin_url: None, name: String::new(), _folder: Some(folder) }
            }
            Backend::Postgres(admin_url) => {
                let name = format!("hado_test_{}", ulid::Ulid::new().to_string().to_lowercase());
                let mut connection =
                    sqlx::PgConnection::connect(admin_url).await.expect("Postgres is reachable");
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut connection)
                    .await
                    .expect("a test database can be created");
                let base = admin_url.rsplit_once('/').map(|(base, _)| base).unwrap_or(admin_url);
                Self {
                    url: format!("{base}/{name}"),
                    admin_url: Some(admin_url.clone()),
                    name,
                    _folder: None,
                }
            }
        }
    }

    pub async fn drop_now(mut self) {
        if let Some(admin_url) = self.admin_url.take() {
            drop_database(&admin_url, &self.name).await;
        }
    }
}

impl Drop for TestDatabase {
    /// A Postgres database not yet dropped (its test panicked, or returned
    /// early) is dropped here, on a thread of its own: the test's runtime
    /// cannot be blocked on from inside it.
    fn drop(&mut self) {
        let Some(admin_url) = self.admin_url.take() else { return };
        let name = std::mem::take(&mut self.name);
        let dropping = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime to drop the test database");
            runtime.block_on(drop_database(&admin_url, &name));
        });
        let _ = dropping.join();
    }
}

async fn drop_database(admin_url: &str, name: &str) {
    match sqlx::PgConnection::connect(admin_url).await {
        Ok(mut connection) => {
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut connection)
            .await;
        }
        Err(error) => eprintln!("the test database {name} was left behind: {error}"),
    }
}

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
        default_locale: crate::domain::profile::Locale::En,
        public_url: "http://127.0.0.1:8080".into(),
        webhook_allow_private: true,
        telegram: None,
        delivery_concurrency: crate::config::DEFAULT_DELIVERY_CONCURRENCY,
    }
}

/// An engine over a fresh database, without the gRPC server.
pub struct TestEngine {
    pub engine: Arc<Engine>,
    pub clock: Arc<ManualClock>,
    database: TestDatabase,
}

impl TestEngine {
    pub async fn start(backend: &Backend, now: &str) -> Self {
        let database = TestDatabase::create(backend).await;
        let clock = Arc::new(ManualClock::new(utc(now)));
        let engine = crate::open(&config(&database.url), clock.clone())
            .await
            .expect("core opens its database");
        Self { engine, clock, database }
    }

    /// An engine whose way to the network is `network`, with webhooks held
    /// to the public-address policy (which the harness's core relaxes).
    pub async fn start_with_network(
        backend: &Backend,
        now: &str,
        network: Arc<dyn crate::network::Network>,
    ) -> Self {
        let database = TestDatabase::create(backend).await;
        let clock = Arc::new(ManualClock::new(utc(now)));
        let config = CoreConfig { webhook_allow_private: false, ..config(&database.url) };
        let engine = crate::open_with_network(&config, clock.clone(), network)
            .await
            .expect("core opens its database");
        Self { engine, clock, database }
    }

    pub async fn stop(self) {
        self.engine.store().close().await;
        self.database.drop_now().await;
    }
}

/// A running core on an ephemeral port.
pub struct TestCore {
    pub addr: SocketAddr,
    pub engine: Arc<Engine>,
    pub clock: Arc<ManualClock>,
    config: CoreConfig,
    channel: Channel,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    database: TestDatabase,
}

impl TestCore {
    pub async fn start(backend: &Backend, now: &str) -> Self {
        Self::start_configured(backend, now, |_| {}).await
    }

    /// A core whose configuration `configure` changes first (a Telegram bot, say).
    pub async fn start_configured(
        backend: &Backend,
        now: &str,
        configure: impl FnOnce(&mut CoreConfig),
    ) -> Self {
        let database = TestDatabase::create(backend).await;
        let clock = Arc::new(ManualClock::new(utc(now)));
        let mut config = config(&database.url);
        configure(&mut config);
        let engine = crate::open(&config, clock.clone()).await.expect("core opens its database");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let channel = Channel::from_shared(format!("http://{addr}")).unwrap().connect_lazy();
        let mut core =
            Self { addr, engine, clock, config, channel, shutdown: None, task: None, database };
        core.serve_on(listener);
        wait_until_serving(core.channel.clone()).await;
        core
    }

    fn serve_on(&mut self, listener: TcpListener) {
        let (shutdown, stopped) = oneshot::channel::<()>();
        let (served, config) = (self.engine.clone(), self.config.clone());
        self.task = Some(tokio::spawn(async move {
            crate::serve(served, &config, listener, async {
                let _ = stopped.await;
            })
            .await
            .expect("core serves");
        }));
        self.shutdown = Some(shutdown);
    }

    /// Stops serving (as if core went down) but keeps the database.
    pub async fn pause(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Serves again on the same address over the same database.
    pub async fn resume(&mut self) {
        self.engine =
            crate::open(&self.config, self.clock.clone()).await.expect("core reopens its database");
        let listener = TcpListener::bind(self.addr).await.expect("core's address is free again");
        self.serve_on(listener);
        wait_until_serving(self.channel.clone()).await;
    }

    /// The URL gateways use to reach this core.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn admin(
        &self,
    ) -> AdminClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>> {
        AdminClient::with_interceptor(self.channel.clone(), Bearer::new(ADMIN_TOKEN, None))
    }

    pub fn ingest(
        &self,
        token: &str,
    ) -> IngestClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>> {
        IngestClient::with_interceptor(self.channel.clone(), Bearer::new(token, None))
    }

    /// The inbox as the web gateway sees it: the gateway credential plus a login.
    pub fn inbox_as(
        &self,
        login: &str,
    ) -> InboxClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>> {
        InboxClient::with_interceptor(self.channel.clone(), Bearer::new(GATEWAY_TOKEN, Some(login)))
    }

    /// The inbox as an agent sees it.
    pub fn agent(
        &self,
        token: &str,
    ) -> InboxClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>> {
        InboxClient::with_interceptor(self.channel.clone(), Bearer::new(token, None))
    }

    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }

    /// Creates a source and returns its token.
    pub async fn source_token(&self, name: &str) -> String {
        let reply = self
            .admin()
            .create_source(hado_proto::v1::SourceName { name: name.into() })
            .await
            .expect("source created");
        reply.into_inner().token
    }

    /// Pushes one event for `user` as the source of `token` (no topic) and
    /// returns its id.
    pub async fn push(
        &self,
        token: &str,
        user: &str,
        source_ref: &str,
        fields: hado_proto::v1::EventFields,
    ) -> i64 {
        let event = hado_proto::v1::SourceEvent {
            user: user.into(),
            r#ref: source_ref.into(),
            topic: String::new(),
            fields: Some(fields),
        };
        let reply = self
            .ingest(token)
            .upsert_events(hado_proto::v1::UpsertEventsRequest { events: vec![event] })
            .await
            .expect("the event is pushed");
        reply.into_inner().results[0].id
    }

    /// A delivery loop's sender for this core, with its Telegram bot when
    /// the configuration has one.
    pub fn deliverer(&self) -> crate::delivery::Deliverer {
        crate::delivery::Deliverer::new(
            self.engine.clone(),
            crate::telegram::Bot::of(&self.config),
            self.config.delivery_concurrency,
        )
    }

    /// Stores a webhook for `login` without the checks of `AddWebhook`, as
    /// if its name had resolved to a public address when it was added and
    /// to another since (DNS rebinding). Returns the channel's id.
    pub async fn plant_webhook(&self, login: &str, url: &str) -> i64 {
        let login = crate::domain::fields::Login::from_stored(login.to_owned());
        let now = crate::clock::Clock::now(&*self.clock);
        let mut transaction = self.engine.store().begin_write().await.expect("a write transaction");
        let user = crate::storage::users::ensure_user(
            &mut transaction,
            &login,
            (chrono_tz::Europe::Berlin, crate::domain::profile::Locale::En),
            now,
        )
        .await
        .expect("the user");
        let channel = crate::storage::channels::add(
            &mut transaction,
            user.id,
            crate::storage::channels::ChannelKind::Webhook,
            url,
            Some(&crate::tokens::webhook_secret()),
            now,
        )
        .await
        .expect("the channel");
        transaction.commit().await.expect("committed");
        channel.id
    }

    pub async fn stop(mut self) {
        self.pause().await;
        self.database.drop_now().await;
    }
}

/// Polls gRPC health until core answers SERVING (never a fixed sleep).
pub async fn wait_until_serving(channel: Channel) {
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus};
    let mut client = HealthClient::new(channel);
    for _ in 0..200 {
        if let Ok(reply) = client.check(HealthCheckRequest { service: String::new() }).await
            && reply.get_ref().status == ServingStatus::Serving as i32
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("core did not become healthy");
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
