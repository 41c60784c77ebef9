//! Owns the engine, or the whole core on an ephemeral port, started over a
//! test's fresh database with a manual clock, and its typed clients.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tonic::transport::Channel;

use crate::database::{Backend, TestDatabase};
use crate::{ADMIN_TOKEN, Bearer, GATEWAY_TOKEN, config, utc, wait_until_serving};
use hado_core::config::CoreConfig;
use hado_engine::Engine;
use hado_engine::clock::ManualClock;

/// How long a test core may take to answer its health check.
const STARTING: std::time::Duration = std::time::Duration::from_secs(5);
use hado_proto::v1::admin_client::AdminClient;
use hado_proto::v1::inbox_client::InboxClient;
use hado_proto::v1::ingest_client::IngestClient;
use hado_proto::v1::links_client::LinksClient;

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
        let engine = hado_core::open(&config(&database.url), clock.clone())
            .await
            .expect("core opens its database");
        Self { engine, clock, database }
    }

    /// An engine whose way to the network is `network`, with webhooks held
    /// to the public-address policy (which the harness's core relaxes).
    pub async fn start_with_network(
        backend: &Backend,
        now: &str,
        network: Arc<dyn hado_engine::network::Network>,
    ) -> Self {
        let database = TestDatabase::create(backend).await;
        let clock = Arc::new(ManualClock::new(utc(now)));
        let config = CoreConfig { webhook_allow_private: false, ..config(&database.url) };
        let engine = hado_core::open_with_network(&config, clock.clone(), network)
            .await
            .expect("core opens its database");
        Self { engine, clock, database }
    }

    /// Makes the database itself refuse to insert an event with this
    /// title (a trigger), as it would refuse a row that breaks one of its
    /// rules: what validation lets through but storage does not.
    pub async fn refuse_events_titled(&self, title: &str) {
        hado_storage::testing::refuse_events_titled(self.engine.store(), title).await;
    }

    /// Holds every write to events until the returned transaction ends:
    /// SQLite's one writer connection is taken, and on Postgres the
    /// events table is locked.
    pub async fn hold_writes(&self) -> hado_storage::Tx {
        hado_storage::testing::hold_writes(self.engine.store()).await
    }

    /// Group commit's connections on Postgres: each one's plan mode, and
    /// the statements they keep prepared.
    pub async fn grouped_connections(&self) -> (Vec<String>, Vec<String>) {
        hado_storage::testing::grouped_connections(self.engine.store()).await
    }

    /// The value of a SQL expression in this engine's Postgres database.
    pub async fn postgres_text(&self, expression: &str) -> String {
        self.database.postgres_text(expression).await
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
    /// The test's database; none for a replica, which shares another's.
    database: Option<TestDatabase>,
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
        let engine =
            hado_core::open(&config, clock.clone()).await.expect("core opens its database");
        Self::serve_new(engine, clock, config, Some(database)).await
    }

    /// Another core over this one's database and clock, on a port of its
    /// own: a second replica, as behind a load balancer. Only on Postgres,
    /// where several cores share one database (a SQLite file is one core's,
    /// and a second is refused). Stop it before the core it replicates.
    pub async fn replica(&self) -> Self {
        assert!(
            matches!(
                hado_storage::Backend::from_url(&self.config.database_url),
                Ok(hado_storage::Backend::Postgres)
            ),
            "a replica needs Postgres: a SQLite file is served by one core"
        );
        let engine = hado_core::open(&self.config, self.clock.clone())
            .await
            .expect("a replica opens the shared database");
        Self::serve_new(engine, self.clock.clone(), self.config.clone(), None).await
    }

    async fn serve_new(
        engine: Arc<Engine>,
        clock: Arc<ManualClock>,
        config: CoreConfig,
        database: Option<TestDatabase>,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let channel = Channel::from_shared(format!("http://{addr}")).unwrap().connect_lazy();
        let mut core =
            Self { addr, engine, clock, config, channel, shutdown: None, task: None, database };
        core.serve_on(listener);
        wait_until_serving(core.channel.clone(), STARTING).await;
        core
    }

    fn serve_on(&mut self, listener: TcpListener) {
        let (shutdown, stopped) = oneshot::channel::<()>();
        let (served, config) = (self.engine.clone(), self.config.clone());
        self.task = Some(tokio::spawn(async move {
            hado_core::serve(served, &config, listener, async {
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
        self.engine = hado_core::open(&self.config, self.clock.clone())
            .await
            .expect("core reopens its database");
        let listener = TcpListener::bind(self.addr).await.expect("core's address is free again");
        self.serve_on(listener);
        wait_until_serving(self.channel.clone(), STARTING).await;
    }

    /// The URL of the database this core keeps its data in.
    pub fn database_url(&self) -> &str {
        &self.config.database_url
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

    /// The signed links' service, as the web gateway calls it.
    pub fn links(
        &self,
    ) -> LinksClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>> {
        LinksClient::with_interceptor(self.channel.clone(), Bearer::new(GATEWAY_TOKEN, None))
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

    /// A delivery loop's sender for this core, with its Telegram bot and
    /// its mail server when the configuration has them.
    pub fn deliverer(&self) -> hado_core::delivery::Deliverer {
        hado_core::delivery::Deliverer::new(
            self.engine.clone(),
            hado_core::telegram::Bot::of(&self.config),
            self.config.delivery_concurrency,
        )
        .with_mailer(hado_core::delivery::Mailer::of(&self.config))
    }

    /// How many authorization codes storage holds, exchanged or not.
    pub async fn authorization_codes(&self) -> i64 {
        hado_storage::testing::authorization_codes(self.engine.store()).await
    }

    /// How many deliveries wait to be sent or tried again.
    pub async fn pending_deliveries(&self) -> i64 {
        self.engine.pending_deliveries().await.expect("the delivery queue")
    }

    /// Waits until no delivery is pending: every one sent or given up, and
    /// its outcome recorded, by the test's drains or core's own loop.
    pub async fn deliveries_settled(&self) {
        crate::eventually("every delivery's outcome recorded", || async {
            (self.pending_deliveries().await == 0).then_some(())
        })
        .await
    }

    /// Stores a webhook for `login` without the checks of `AddWebhook`, as
    /// if its name had resolved to a public address when it was added and
    /// to another since (DNS rebinding). Returns the channel's id.
    pub async fn plant_webhook(&self, login: &str, url: &str) -> i64 {
        let login = hado_domain::fields::Login::from_stored(login.to_owned());
        let now = hado_engine::clock::Clock::now(&*self.clock);
        let mut transaction = self.engine.store().begin_write().await.expect("a write transaction");
        let user = hado_storage::users::ensure_user(
            &mut transaction,
            &login,
            (chrono_tz::Europe::Berlin, hado_domain::profile::Locale::En),
            now,
        )
        .await
        .expect("the user");
        let channel = hado_storage::channels::add(
            &mut transaction,
            user.id,
            hado_domain::channel::ChannelKind::Webhook,
            url,
            Some(&hado_engine::tokens::webhook_secret()),
            now,
        )
        .await
        .expect("the channel");
        transaction.commit().await.expect("committed");
        channel.id
    }

    pub async fn stop(mut self) {
        self.pause().await;
        if let Some(database) = self.database.take() {
            database.drop_now().await;
        }
    }
}
