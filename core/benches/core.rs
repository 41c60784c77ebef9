//! Core's benchmarks: single `Inbox.CreateEvent` calls at 1 and 16
//! concurrent clients next to `GetProfile` (authentication and one read),
//! batch upsert throughput over gRPC against plain sqlx
//! inserts, `ListEvents` latency for a user with 10,000 events, and the
//! scheduler's pass with 1,000 or 10,000 due checkpoints among 10,000 and
//! 1,000,000 stored events, and signed webhook deliveries per second; and,
//! when asked for by name (`-- burst`), the morning burst: 100,000
//! checkpoints due at once, one core against three on one Postgres; and
//! `-- growth`: each call an agent or a source makes, alone, on an empty
//! inbox and after 20,000 and 100,000 stored events of the same person.
//!
//! `cargo bench -p hado-core --bench core` runs them on SQLite; with
//! `HADO_BENCH_POSTGRES_URL` set (a server whose user may create databases)
//! on Postgres too. Each prints its numbers; BENCHMARKS.md records them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use sqlx::Connection;
use tokio::net::TcpListener;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;

use hado_core::config::CoreConfig;
use hado_engine::Engine;
use hado_engine::clock::ManualClock;
use hado_proto::v1::inbox_client::InboxClient;
use hado_proto::v1::ingest_client::IngestClient;
use hado_proto::v1::{
    EventFields, GetProfileRequest, ListEventsRequest, SourceEvent, UpsertEventsRequest,
};

const SECRET: &str = "bench-secret-0123456789abcdef0123456789";
const NOW: &str = "2026-12-01T10:00:00Z";

struct Database {
    label: &'static str,
    url: String,
    drop: Option<(String, String)>,
    _folder: Option<tempfile::TempDir>,
}

async fn database(label: &'static str, postgres: Option<&str>) -> Database {
    match postgres {
        None => {
            let folder = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}/bench.db", folder.path().display());
            Database { label, url, drop: None, _folder: Some(folder) }
        }
        Some(admin_url) => {
            let name = format!("hado_bench_{}", ulid::Ulid::new().to_string().to_lowercase());
            let mut connection = sqlx::PgConnection::connect(admin_url).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut connection)
                .await
                .unwrap();
            let base = admin_url.rsplit_once('/').map(|(base, _)| base).unwrap();
            Database {
                label,
                url: format!("{base}/{name}"),
                drop: Some((admin_url.to_owned(), name)),
                _folder: None,
            }
        }
    }
}

impl Database {
    /// A connection pool of the benchmark's own, for the plain-SQL limits
    /// and for seeding.
    async fn pool(&self) -> sqlx::AnyPool {
        sqlx::any::install_default_drivers();
        sqlx::AnyPool::connect(&self.url).await.unwrap()
    }

    async fn remove(self) {
        if let Some((admin_url, name)) = &self.drop {
            let mut connection = sqlx::PgConnection::connect(admin_url).await.unwrap();
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut connection)
            .await;
        }
    }
}

fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
}

fn config(database: &Database) -> CoreConfig {
    CoreConfig {
        database_url: database.url.clone(),
        grpc_addr: "127.0.0.1:0".parse().unwrap(),
        admin_token: SECRET.into(),
        gateway_token: SECRET.into(),
        secret: SECRET.into(),
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

struct Running {
    engine: Arc<Engine>,
    address: std::net::SocketAddr,
    channel: Channel,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

async fn start(database: &Database) -> Running {
    let config = config(database);
    let clock = Arc::new(ManualClock::new(utc(NOW)));
    let engine = hado_core::open(&config, clock.clone()).await.unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = engine.clone();
    let task = tokio::spawn(async move {
        hado_core::serve(served, &config, listener, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    let channel = Channel::from_shared(format!("http://{addr}")).unwrap().connect().await.unwrap();
    Running { engine, address: addr, channel, stop, task }
}

fn with_bearer<T>(message: T, token: &str, user: Option<&str>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let value: MetadataValue<_> = format!("Bearer {token}").parse().unwrap();
    request.metadata_mut().insert("authorization", value);
    if let Some(user) = user {
        request.metadata_mut().insert("x-hado-user", user.parse().unwrap());
    }
    request
}

fn batch(user: &str, prefix: &str, start: usize, count: usize) -> UpsertEventsRequest {
    let events = (start..start + count)
        .map(|index| SourceEvent {
            user: user.into(),
            r#ref: format!("{prefix}-{index}"),
            topic: String::new(),
            fields: Some(EventFields {
                title: format!("Event number {index}"),
                due_at: format!("2027-{:02}-{:02}", 1 + index % 12, 1 + index % 28),
                subtitle: Some("benchmark".into()),
                ..EventFields::default()
            }),
        })
        .collect();
    UpsertEventsRequest { events }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * fraction).round() as usize]
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// How long each single-call measurement runs.
const CALLS_FOR: Duration = Duration::from_secs(4);

/// Runs `operation` on `clients` concurrent clients (each with its own
/// connection) for [`CALLS_FOR`], and prints calls/s, p50 and p99.
async fn concurrent_calls<F, Fut>(
    database: &Database,
    running: &Running,
    label: &str,
    clients: usize,
    operation: F,
) where
    F: Fn(InboxClient<Channel>, usize) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let address = running.address;
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let operation = operation.clone();
            tokio::spawn(async move {
                let channel = Channel::from_shared(format!("http://{address}"))
                    .unwrap()
                    .connect()
                    .await
                    .unwrap();
                let inbox = InboxClient::new(channel);
                let mut latencies = Vec::new();
                let began = Instant::now();
                while began.elapsed() < CALLS_FOR {
                    let call_started = Instant::now();
                    operation(inbox.clone(), client * 1_000_000 + latencies.len()).await;
                    latencies.push(call_started.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    let wall = started.elapsed();
    latencies.sort();
    println!(
        "[{}] {label:<24} {clients:>2} client(s): {:>7.0} calls/s, p50 {:.2} ms, p99 {:.2} ms ({} calls)",
        database.label,
        latencies.len() as f64 / wall.as_secs_f64(),
        millis(percentile(&latencies, 0.5)),
        millis(percentile(&latencies, 0.99)),
        latencies.len()
    );
}

/// Single calls as an agent makes them: `CreateEvent` (one new manual event
/// each) next to `GetProfile` (the token check and one read).
async fn create_calls(database: &Database) {
    let running = start(database).await;
    let user = running.engine.user_for_login("agent").await.unwrap();
    let token = Arc::new(running.engine.issue_agent_token(&user).await.unwrap());
    for clients in [1, 16] {
        let token_for_profile = token.clone();
        concurrent_calls(database, &running, "Inbox.GetProfile", clients, move |mut inbox, _| {
            let token = token_for_profile.clone();
            async move {
                inbox
                    .get_profile(with_bearer(GetProfileRequest::default(), &token, None))
                    .await
                    .unwrap();
            }
        })
        .await;
        let token_for_create = token.clone();
        concurrent_calls(
            database,
            &running,
            "Inbox.CreateEvent",
            clients,
            move |mut inbox, index| {
                let token = token_for_create.clone();
                async move {
                    let fields = EventFields {
                        title: format!("Call {index}"),
                        due_at: "2027-03-01T09:00".into(),
                        ..EventFields::default()
                    };
                    inbox.create_event(with_bearer(fields, &token, None)).await.unwrap();
                }
            },
        )
        .await;
    }
    let _ = running.stop.send(());
    let _ = running.task.await;
}

/// How long each call of the growth benchmark is repeated, alone.
const GROWTH_CALLS_FOR: Duration = Duration::from_secs(3);

/// The p50 of `operation` called again and again, one call at a time.
async fn p50_alone<F, Fut>(operation: F) -> Duration
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut latencies = Vec::new();
    let began = Instant::now();
    while began.elapsed() < GROWTH_CALLS_FOR {
        let call_started = Instant::now();
        operation(latencies.len()).await;
        latencies.push(call_started.elapsed());
    }
    latencies.sort();
    percentile(&latencies, 0.5)
}

/// Every call a person's agent or a source makes, alone (one client), on an
/// empty inbox and then after 20,000 and 100,000 stored events of the same
/// person: half of them waiting for 2027, a quarter done and a quarter
/// expired, as a source's years of pushes leave them. The rows are written
/// straight into the table and the table is not analysed afterwards, as a
/// database that just grew would be. DESIGN asks that a call cost what is
/// due, not what is stored: each p50 is printed beside the empty inbox's.
async fn growth(database: &Database) {
    let running = start(database).await;
    let user = running.engine.user_for_login("agent").await.unwrap();
    let agent = running.engine.issue_agent_token(&user).await.unwrap();
    let (_, source) = running.engine.create_source("feed").await.unwrap();
    let inbox = InboxClient::new(running.channel.clone());
    let ingest = IngestClient::new(running.channel.clone());
    let pool = database.pool().await;
    let source_id: i64 = sqlx::query_scalar("SELECT id FROM sources WHERE name = 'feed'")
        .fetch_one(&pool)
        .await
        .unwrap();
    let calls = [
        "token check (GetProfile, no count)",
        "GetProfile",
        "CreateEvent",
        "UpsertEvents, one event",
    ];
    let mut rows: Vec<(i64, Vec<Duration>)> = Vec::new();
    let mut stored = 0;
    for target in [0_i64, 20_000, 100_000] {
        if target > stored {
            sqlx::query(
                "WITH RECURSIVE n(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM n WHERE i < $2 - 1) \
                 INSERT INTO events (user_id, source_id, source_ref, topic, title, due_at, due_date, due_ms, fire_date, after_due, \
                 state, closed_at, next_check_at, created_at, updated_at) \
                 SELECT $3, $4, 'history-' || i, '', 'Seeded', '2027-06-01', '2027-06-01', 0, '2027-05-02', 'keep', \
                 CASE i % 4 WHEN 0 THEN 'done' WHEN 1 THEN 'expired' ELSE 'scheduled' END, \
                 CASE WHEN i % 4 < 2 THEN i END, \
                 CASE WHEN i % 4 < 2 THEN NULL ELSE $5 END, 0, 0 FROM n",
            )
            .bind(stored)
            .bind(target)
            .bind(user.id)
            .bind(source_id)
            .bind(utc("2027-05-01T22:00:00Z").timestamp_millis())
            .execute(&pool)
            .await
            .unwrap();
            stored = target;
        }
        let mut p50s = Vec::new();
        p50s.push(
            p50_alone(|_| {
                let (mut inbox, agent) = (inbox.clone(), agent.clone());
                async move {
                    let request = GetProfileRequest { without_attention: true };
                    inbox.get_profile(with_bearer(request, &agent, None)).await.unwrap();
                }
            })
            .await,
        );
        p50s.push(
            p50_alone(|_| {
                let (mut inbox, agent) = (inbox.clone(), agent.clone());
                async move {
                    let request = GetProfileRequest::default();
                    inbox.get_profile(with_bearer(request, &agent, None)).await.unwrap();
                }
            })
            .await,
        );
        p50s.push(
            p50_alone(|index| {
                let (mut inbox, agent) = (inbox.clone(), agent.clone());
                async move {
                    let fields = EventFields {
                        title: format!("Call {stored}-{index}"),
                        due_at: "2027-03-01T09:00".into(),
                        ..EventFields::default()
                    };
                    inbox.create_event(with_bearer(fields, &agent, None)).await.unwrap();
                }
            })
            .await,
        );
        p50s.push(
            p50_alone(|index| {
                let (mut ingest, source) = (ingest.clone(), source.clone());
                async move {
                    let one = batch("agent", &format!("push-{stored}"), index, 1);
                    ingest.upsert_events(with_bearer(one, &source, None)).await.unwrap();
                }
            })
            .await,
        );
        rows.push((stored, p50s));
    }
    let empty = rows[0].1.clone();
    for (stored, p50s) in &rows {
        for ((call, p50), alone) in calls.iter().zip(p50s).zip(&empty) {
            println!(
                "[{}] growth: {call:<36} {stored:>7} stored: p50 {:.3} ms, {:.2}× the empty inbox's",
                database.label,
                millis(*p50),
                p50.as_secs_f64() / alone.as_secs_f64()
            );
        }
    }
    pool.close().await;
    let _ = running.stop.send(());
    let _ = running.task.await;
}

/// Batches of 500 through gRPC, and the same rows by plain sqlx. The
/// service and the best bulk insert take turns, three rounds each, so that
/// both meet the same machine and the same table size.
async fn upsert_throughput(database: &Database) {
    let running = start(database).await;
    let (_, token) = running.engine.create_source("bench").await.unwrap();
    let mut client = IngestClient::new(running.channel.clone()).max_encoding_message_size(64 << 20);
    const BATCHES: usize = 20;
    const SIZE: usize = 500;
    const ROUNDS: usize = 3;
    let rate = |elapsed: Duration| (BATCHES * SIZE) as f64 / elapsed.as_secs_f64();
    for round in 0..ROUNDS {
        let numbers = round * BATCHES..(round + 1) * BATCHES;
        let started = Instant::now();
        for number in numbers.clone() {
            client
                .upsert_events(with_bearer(
                    batch("writer", "grpc", number * SIZE, SIZE),
                    &token,
                    None,
                ))
                .await
                .unwrap();
        }
        let service = started.elapsed();
        // The best bulk insert of the same rows (every column the service
        // writes), through each backend's own driver: one multi-row INSERT per
        // batch on SQLite, one INSERT … SELECT FROM unnest(arrays) on Postgres.
        let started = Instant::now();
        bulk_insert(database, numbers, SIZE).await;
        let bulk = started.elapsed();
        println!(
            "[{}] round {}: upsert over gRPC, {BATCHES} batches of {SIZE} new events: {:.0} events/s; best bulk insert, no service: {:.0} events/s; \
             the service does {:.0} % of the bulk insert",
            database.label,
            round + 1,
            rate(service),
            rate(bulk),
            100.0 * bulk.as_secs_f64() / service.as_secs_f64()
        );
    }
    // The first round's batches again: every event is unchanged.
    let started = Instant::now();
    for number in 0..BATCHES {
        client
            .upsert_events(with_bearer(batch("writer", "grpc", number * SIZE, SIZE), &token, None))
            .await
            .unwrap();
    }
    println!(
        "[{}] upsert over gRPC, the same batches again (all unchanged): {:.0} events/s",
        database.label,
        rate(started.elapsed())
    );

    // One plain INSERT per row, one transaction a batch.
    let pool = database.pool().await;
    let started = Instant::now();
    for number in 0..BATCHES {
        let mut transaction = pool.begin().await.unwrap();
        for index in number * SIZE..(number + 1) * SIZE {
            sqlx::query(
                "INSERT INTO events (user_id, source_id, source_ref, topic, title, subtitle, due_at, due_date, due_ms, \
                 fire_date, after_due, state, next_check_at, created_at, updated_at) \
                 VALUES (1, 1, $1, '', $2, 'benchmark', '2027-01-01', '2027-01-01', 0, '2026-12-02', 'keep', 'scheduled', $3, 0, 0)",
            )
            .bind(format!("plain-{index}"))
            .bind(format!("Event number {index}"))
            .bind(i64::MAX)
            .execute(&mut *transaction)
            .await
            .unwrap();
        }
        transaction.commit().await.unwrap();
    }
    println!(
        "[{}] plain sqlx INSERTs, one per row, no service: {:.0} events/s",
        database.label,
        rate(started.elapsed())
    );
    let _ = running.stop.send(());
    let _ = running.task.await;
}

/// One batch's rows as the service would write them, column by column.
struct BulkRows {
    refs: Vec<String>,
    titles: Vec<String>,
    due_days: Vec<String>,
    due_ms: Vec<i64>,
    fire_days: Vec<String>,
}

fn bulk_rows(number: usize, size: usize) -> BulkRows {
    let indexes = number * size..(number + 1) * size;
    let due_days: Vec<String> = indexes
        .clone()
        .map(|index| format!("2027-{:02}-{:02}", 1 + index % 12, 1 + index % 28))
        .collect();
    BulkRows {
        refs: indexes.clone().map(|index| format!("bulk-{index}")).collect(),
        titles: indexes.map(|index| format!("Event number {index}")).collect(),
        due_ms: due_days
            .iter()
            .map(|day| utc(&format!("{day}T00:00:00Z")).timestamp_millis())
            .collect(),
        fire_days: due_days.iter().map(|day| format!("{}-01", &day[..7])).collect(),
        due_days,
    }
}

/// Columns of a bulk row, in the order the service's insert names them.
const BULK_COLUMNS: &str = "user_id, source_id, source_ref, topic, title, subtitle, due_at, due_date, due_time, due_offset_min, due_ms, fire_at, \
     fire_date, after_due, done_label, deep_link, state, quiet_until, closed_at, checkpoint_at, attention_since, repeat_at, next_check_at, \
     created_at, updated_at";

async fn bulk_insert(database: &Database, batches: std::ops::Range<usize>, size: usize) {
    if database.drop.is_some() {
        let pool = sqlx::PgPool::connect(&database.url).await.unwrap();
        for number in batches.clone() {
            let rows = bulk_rows(number, size);
            let mut transaction = pool.begin().await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO events ({BULK_COLUMNS}) \
                 SELECT 1, 1, r, '', t, 'benchmark', d, d, NULL, NULL, m, NULL, f, 'keep', NULL, NULL, 'scheduled', NULL, NULL, m, NULL, NULL, m, $6, $6 \
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[]) AS u(r, t, d, m, f)"
            )))
            .bind(&rows.refs)
            .bind(&rows.titles)
            .bind(&rows.due_days)
            .bind(&rows.due_ms)
            .bind(&rows.fire_days)
            .bind(0_i64)
            .execute(&mut *transaction)
            .await
            .unwrap();
            transaction.commit().await.unwrap();
        }
        pool.close().await;
    } else {
        let pool = sqlx::SqlitePool::connect(&database.url).await.unwrap();
        for number in batches.clone() {
            let rows = bulk_rows(number, size);
            let values: Vec<&str> = (0..size)
                .map(|_| "(1, 1, ?, '', ?, 'benchmark', ?, ?, NULL, NULL, ?, NULL, ?, 'keep', NULL, NULL, 'scheduled', NULL, NULL, ?, NULL, NULL, ?, 0, 0)")
                .collect();
            let sql = format!("INSERT INTO events ({BULK_COLUMNS}) VALUES {}", values.join(", "));
            let mut transaction = pool.begin().await.unwrap();
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for row in 0..size {
                let due_ms = rows.due_ms[row];
                query = query
                    .bind(rows.refs[row].clone())
                    .bind(rows.titles[row].clone())
                    .bind(rows.due_days[row].clone())
                    .bind(rows.due_days[row].clone())
                    .bind(due_ms)
                    .bind(rows.fire_days[row].clone())
                    .bind(due_ms)
                    .bind(due_ms);
            }
            query.execute(&mut *transaction).await.unwrap();
            transaction.commit().await.unwrap();
        }
        pool.close().await;
    }
}

/// `ListEvents` for a user with 10,000 active events.
async fn list_latency(database: &Database) {
    let running = start(database).await;
    let (_, token) = running.engine.create_source("bench").await.unwrap();
    let mut ingest = IngestClient::new(running.channel.clone()).max_encoding_message_size(64 << 20);
    for number in 0..10 {
        ingest
            .upsert_events(with_bearer(batch("heavy", "list", number * 1000, 1000), &token, None))
            .await
            .unwrap();
    }
    let mut inbox = InboxClient::new(running.channel.clone()).max_decoding_message_size(64 << 20);
    for (label, state) in
        [("all 10,000 active", None), ("state=preparing", Some("preparing".to_owned()))]
    {
        let mut samples = Vec::new();
        let mut returned = 0;
        for _ in 0..30 {
            let started = Instant::now();
            let reply = inbox
                .list_events(with_bearer(
                    ListEventsRequest {
                        state: state.clone(),
                        archive: false,
                        limit: None,
                        after: None,
                        ..Default::default()
                    },
                    SECRET,
                    Some("heavy"),
                ))
                .await
                .unwrap();
            samples.push(started.elapsed());
            returned = reply.get_ref().events.len();
        }
        samples.sort();
        println!(
            "[{}] ListEvents, {label} ({returned} returned): p50 {:.1} ms, p99 {:.1} ms",
            database.label,
            millis(percentile(&samples, 0.5)),
            millis(percentile(&samples, 0.99))
        );
    }
    let _ = running.stop.send(());
    let _ = running.task.await;
}

/// Seeds `count` events of one user straight into the table: one statement
/// that both backends run, fast enough for a million rows. Due events are
/// preparing with a checkpoint that has passed; the others wait for 2027.
/// Seeds events straight into the database, past the engine (as a data
/// import would), over the benchmark's own connection.
async fn seed(database: &Database, engine: &Engine, prefix: &str, count: i64, due: bool) {
    let (due_day, fire_day, state, next_check) = if due {
        ("2026-12-20", "2026-11-20", "preparing", utc("2026-12-01T07:00:00Z").timestamp_millis())
    } else {
        ("2027-06-01", "2027-05-02", "scheduled", utc("2027-05-01T22:00:00Z").timestamp_millis())
    };
    let user = engine.user_for_login("load").await.unwrap();
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $1 - 1) \
         INSERT INTO events (user_id, source_id, source_ref, topic, title, due_at, due_date, due_ms, fire_date, after_due, \
         state, checkpoint_at, next_check_at, created_at, updated_at) \
         SELECT $2, 1, $3 || i, '', 'Seeded', $4, $4, 0, $5, 'keep', $6, $7, $7, 0, 0 FROM n",
    )
    .bind(count)
    .bind(user.id)
    .bind(format!("{prefix}-"))
    .bind(due_day)
    .bind(fire_day)
    .bind(state)
    .bind(next_check)
    .execute(&database.pool().await)
    .await
    .unwrap();
}

/// A webhook for the seeded user, so that every fired checkpoint writes a delivery.
async fn webhook(engine: &Engine, url: &str) {
    let user = engine.user_for_login("load").await.unwrap();
    let quiet_none = hado_engine::ProfilePatch {
        quiet_start: Some("00:00".into()),
        quiet_end: Some("00:00".into()),
        ..Default::default()
    };
    engine.update_profile(&user, &quiet_none).await.unwrap();
    engine.add_webhook(&user, url).await.unwrap();
}

/// A scheduler pass with `due` checkpoints due among `stored` events, each
/// writing a delivery to the user's webhook. The engine runs without its
/// background loops, so that only the timed pass moves events.
async fn scheduler_pass(database: &Database, stored: i64, due: i64) {
    let config = config(database);
    let clock = Arc::new(ManualClock::new(utc("2026-11-01T10:00:00Z")));
    let engine = hado_core::open(&config, clock.clone()).await.unwrap();
    webhook(&engine, "http://127.0.0.1:9/never-called").await;
    let started = Instant::now();
    seed(database, &engine, "idle", stored - due, false).await;
    seed(database, &engine, "due", due, true).await;
    let seeding = started.elapsed();
    let empty_started = Instant::now();
    let nothing = hado_core::scheduler::drain(&engine).await.unwrap();
    let empty_pass = empty_started.elapsed();
    clock.set(utc(NOW));
    let pass_started = Instant::now();
    let advanced = hado_core::scheduler::drain(&engine).await.unwrap();
    let pass = pass_started.elapsed();
    println!(
        "[{}] scheduler, {stored} stored (seeded in {:.1} s): pass with {due} due checkpoints: {:.1} ms ({advanced} advanced, a delivery each); \
         pass with nothing due: {:.2} ms ({nothing} advanced)",
        database.label,
        seeding.as_secs_f64(),
        millis(pass),
        millis(empty_pass),
    );
    engine.close().await;
}

/// Deliveries per second to a webhook receiver on loopback: `count` fired
/// checkpoints, then the delivery loop's drain is timed.
async fn delivery_throughput(database: &Database, count: i64) {
    let app = axum::Router::new().route("/hook", axum::routing::post(|| async { "ok" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let config = config(database);
    let clock = Arc::new(ManualClock::new(utc("2026-11-01T10:00:00Z")));
    let engine = hado_core::open(&config, clock.clone()).await.unwrap();
    webhook(&engine, &url).await;
    seed(database, &engine, "due", count, true).await;
    clock.set(utc(NOW));
    hado_core::scheduler::drain(&engine).await.unwrap();
    let deliverer = hado_core::delivery::Deliverer::new(
        engine.clone(),
        None,
        hado_core::config::DEFAULT_DELIVERY_CONCURRENCY,
    );
    let started = Instant::now();
    // On a runtime worker, as core's delivery loop runs.
    let sent = tokio::spawn(async move { hado_core::delivery::drain(&deliverer).await.unwrap() })
        .await
        .unwrap();
    let elapsed = started.elapsed();
    println!(
        "[{}] deliveries: {sent} signed webhook posts in {:.0} ms = {:.0} deliveries/s",
        database.label,
        millis(elapsed),
        sent as f64 / elapsed.as_secs_f64()
    );
    engine.close().await;
}

/// The wall clock, for cores that run on their own as in production.
struct Wall;

impl hado_engine::clock::Clock for Wall {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A webhook receiver with a small server's capacity: `workers` requests
/// handled at once, each taking `work`, and, as a proxy in front of such a
/// server would, 503 at once to a request beyond `most` open at a time. It
/// counts what it handled by `webhook-id`.
#[derive(Clone)]
struct BusyReceiver {
    seen: Arc<std::sync::Mutex<std::collections::HashMap<String, u32>>>,
    workers: Arc<tokio::sync::Semaphore>,
    open: Arc<std::sync::atomic::AtomicUsize>,
    most: usize,
    refused: Arc<std::sync::atomic::AtomicUsize>,
    work: Duration,
}

impl BusyReceiver {
    async fn start(workers: usize, most: usize, work: Duration) -> (Self, String) {
        let receiver = Self {
            seen: Arc::default(),
            workers: Arc::new(tokio::sync::Semaphore::new(workers)),
            open: Arc::default(),
            most,
            refused: Arc::default(),
            work,
        };
        let handler = receiver.clone();
        let app = axum::Router::new().route(
            "/hook/{user}",
            axum::routing::post(move |headers: axum::http::HeaderMap| {
                let receiver = handler.clone();
                async move {
                    use std::sync::atomic::Ordering::SeqCst;
                    if receiver.open.fetch_add(1, SeqCst) >= receiver.most {
                        receiver.open.fetch_sub(1, SeqCst);
                        receiver.refused.fetch_add(1, SeqCst);
                        return axum::http::StatusCode::SERVICE_UNAVAILABLE;
                    }
                    let worker = receiver.workers.acquire().await.unwrap();
                    tokio::time::sleep(receiver.work).await;
                    let id = headers
                        .get("webhook-id")
                        .and_then(|value| value.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    *receiver.seen.lock().unwrap().entry(id).or_default() += 1;
                    drop(worker);
                    receiver.open.fetch_sub(1, SeqCst);
                    axum::http::StatusCode::OK
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (receiver, base)
    }

    /// Distinct reminders received, and how many of them came more than once.
    fn counts(&self) -> (usize, usize) {
        let seen = self.seen.lock().unwrap();
        (seen.len(), seen.values().filter(|count| **count > 1).count())
    }
}

/// The morning burst: `people` people with one webhook each, all at one
/// receiver (16 workers, 1 ms a request, 503 past 64 open requests), and
/// `per_person` checkpoints each due in the same second;
/// `cores` cores (each with its scheduler and delivery loop, on the wall
/// clock) share the database. Prints the time to fire every checkpoint
/// (its delivery written), the time to deliver them all, the retries and
/// the duplicates the receiver saw.
async fn burst(
    database: &Database,
    cores: usize,
    per_receiver: u32,
    people: usize,
    per_person: i64,
) {
    let (receiver, base) = BusyReceiver::start(16, 64, Duration::from_millis(1)).await;
    let mut config = config(database);
    config.delivery_concurrency = per_receiver;
    let setup = hado_core::open(&config, Arc::new(Wall)).await.unwrap();
    let quiet_none = hado_engine::ProfilePatch {
        quiet_start: Some("00:00".into()),
        quiet_end: Some("00:00".into()),
        ..Default::default()
    };
    let mut user_ids = Vec::with_capacity(people);
    for person in 0..people {
        let user = setup.user_for_login(&format!("person{person}")).await.unwrap();
        setup.update_profile(&user, &quiet_none).await.unwrap();
        setup.add_webhook(&user, &format!("{base}/{person}")).await.unwrap();
        user_ids.push(user.id);
    }
    setup.close().await;
    // Every checkpoint is due a few seconds from now, once the cores run.
    let due = Utc::now() + chrono::Duration::seconds(3);
    let pool = database.pool().await;
    for user_id in &user_ids {
        sqlx::query(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $1 - 1) \
             INSERT INTO events (user_id, source_id, source_ref, topic, title, due_at, due_date, due_ms, fire_date, after_due, \
             state, checkpoint_at, next_check_at, created_at, updated_at) \
             SELECT $2, 1, 'burst-' || i, '', 'Burst', '2027-01-10', '2027-01-10', 0, '2026-11-01', 'keep', 'preparing', $3, $3, 0, 0 FROM n",
        )
        .bind(per_person)
        .bind(*user_id)
        .bind(due.timestamp_millis())
        .execute(&pool)
        .await
        .unwrap();
    }
    // A database that has run for a while has its planner statistics; a
    // freshly seeded one would wait for autovacuum to gather them.
    sqlx::query("ANALYZE").execute(&pool).await.unwrap();
    let total = people * per_person as usize;
    let mut running = Vec::new();
    for _ in 0..cores {
        let engine = hado_core::open(&config, Arc::new(Wall)).await.unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = config.clone();
        running.push((
            stop,
            tokio::spawn(async move {
                hado_core::serve(engine, &served, listener, async {
                    let _ = stopped.await;
                })
                .await
                .unwrap()
            }),
        ));
    }
    tokio::time::sleep((due - Utc::now()).to_std().unwrap_or_default()).await;
    let started = Instant::now();
    let (mut fired, mut delivered) = (None, None);
    while delivered.is_none() && started.elapsed() < Duration::from_secs(600) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if fired.is_none() {
            let written: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM deliveries")
                .fetch_one(&pool)
                .await
                .unwrap();
            if written as usize >= total {
                fired = Some(started.elapsed());
            }
        }
        if receiver.counts().0 >= total {
            delivered = Some(started.elapsed());
        }
    }
    // Give a would-be duplicate a moment to arrive.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for (stop, task) in running {
        let _ = stop.send(());
        let _ = task.await;
    }
    let retried: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM deliveries WHERE attempts > 1")
        .fetch_one(&pool)
        .await
        .unwrap();
    let (received, duplicates) = receiver.counts();
    let refused = receiver.refused.load(std::sync::atomic::Ordering::SeqCst);
    let seconds = |span: Option<Duration>| {
        span.map_or("not within 10 min".to_owned(), |span| format!("{:.1} s", span.as_secs_f64()))
    };
    println!(
        "[{}] burst, {cores} core(s), {per_receiver} in flight per receiver at most: {total} checkpoints due at once ({people} people, one webhook each, \
         one receiver): all fired in {}, all delivered in {} ({:.0} deliveries/s); {received} received, {refused} refused with 503, {retried} retried, \
         {duplicates} received twice",
        database.label,
        seconds(fired),
        seconds(delivered),
        delivered.map_or(0.0, |span| total as f64 / span.as_secs_f64()),
    );
    pool.close().await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let postgres = std::env::var("HADO_BENCH_POSTGRES_URL").ok().filter(|url| !url.is_empty());
        let mut backends: Vec<(&'static str, Option<&str>)> = vec![("sqlite", None)];
        match &postgres {
            Some(url) => backends.push(("postgres", Some(url.as_str()))),
            None => println!("(Postgres skipped: set HADO_BENCH_POSTGRES_URL to include it)"),
        }
        let only = std::env::args().skip(1).find(|argument| !argument.starts_with('-'));
        let wanted = |name: &str| only.as_deref().is_none_or(|only| name.contains(only));
        for (label, url) in backends {
            if wanted("create") {
                let database = database(label, url).await;
                create_calls(&database).await;
                database.remove().await;
            }
            if wanted("upsert") {
                let database = database(label, url).await;
                upsert_throughput(&database).await;
                database.remove().await;
            }
            if wanted("list") {
                let database = database(label, url).await;
                list_latency(&database).await;
                database.remove().await;
            }
            if wanted("scheduler") {
                for (stored, due) in [(10_000, 1_000), (1_000_000, 1_000), (1_000_000, 10_000)] {
                    let database = database(label, url).await;
                    scheduler_pass(&database, stored, due).await;
                    database.remove().await;
                }
            }
            if wanted("deliveries") {
                // A short drain (the connections opened on the way count),
                // and a long one that shows the steady rate.
                for count in [2_000, 20_000] {
                    let database = database(label, url).await;
                    delivery_throughput(&database, count).await;
                    database.remove().await;
                }
            }
            // Only named, as it stores 100,000 events: `cargo bench … -- growth`.
            if only.as_deref() == Some("growth") {
                let database = database(label, url).await;
                growth(&database).await;
                database.remove().await;
            }
            // Only named, as it takes minutes: `cargo bench … -- burst`.
            if only.as_deref() == Some("burst") {
                let runs: &[(usize, u32)] = match url {
                    // One core, three, and three with pacing lifted.
                    Some(_) => &[
                        (1, hado_core::config::DEFAULT_DELIVERY_CONCURRENCY),
                        (3, hado_core::config::DEFAULT_DELIVERY_CONCURRENCY),
                        (3, 1000),
                    ],
                    None => &[(1, hado_core::config::DEFAULT_DELIVERY_CONCURRENCY)],
                };
                for &(cores, per_receiver) in runs {
                    let database = database(label, url).await;
                    burst(&database, cores, per_receiver, 500, 200).await;
                    database.remove().await;
                }
            }
        }
    });
}
