//! Core as a hostile client or an operator meets it, as its own process:
//! gRPC paths it does not serve cannot grow its metrics, a body that is not
//! protobuf is the caller's mistake (INVALID_ARGUMENT), a list too long is
//! refused before it is decoded, the metrics
//! listener answers only the hosts it serves, and the files core keeps are
//! its owner's alone.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::common::{RawCodec, Running, free_port, spawn};

const ADMIN_TOKEN: &str = "admin-secret-for-the-exposure-tests-0123456789";
const GATEWAY_TOKEN: &str = "gateway-secret-for-the-exposure-tests-01234567";
const LINK_SECRET: &str = "link-secret-for-the-exposure-tests-0123456789ab";

/// `hado core` alone on a SQLite file in `folder/data`, with its metrics.
struct Core {
    process: Running,
    grpc: u16,
    metrics: u16,
}

impl Core {
    async fn start(folder: &std::path::Path) -> Self {
        hado_core::install_tls_provider();
        let (grpc, metrics) = (free_port(), free_port());
        let process = spawn(
            "core",
            folder,
            &[
                ("HADO_DATABASE_URL", format!("sqlite://{}/data/hado.db", folder.display())),
                ("HADO_GRPC_ADDR", format!("127.0.0.1:{grpc}")),
                ("HADO_METRICS_ADDR", format!("127.0.0.1:{metrics}")),
                ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
                ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
                ("HADO_SECRET", LINK_SECRET.into()),
            ],
        );
        let core = Self { process, grpc, metrics };
        // Serving once its database is open (it listens, and serves
        // metrics, a moment before).
        for _ in 0..600 {
            if core
                .metrics_page("127.0.0.1")
                .await
                .is_some_and(|(status, _)| status == reqwest::StatusCode::OK)
                && core.serving().await
            {
                return core;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("core did not start; see {}/core.log", folder.display());
    }

    async fn serving(&self) -> bool {
        use tonic_health::pb::{
            HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
        };
        let Ok(channel) =
            tonic::transport::Endpoint::from_shared(self.url()).unwrap().connect().await
        else {
            return false;
        };
        let answer =
            HealthClient::new(channel).check(HealthCheckRequest { service: String::new() }).await;
        answer.is_ok_and(|reply| reply.get_ref().status == ServingStatus::Serving as i32)
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc)
    }

    /// `GET /metrics` with `host` as the `Host`; its status and body.
    async fn metrics_page(&self, host: &str) -> Option<(reqwest::StatusCode, String)> {
        let response = reqwest::Client::new()
            .get(format!("http://127.0.0.1:{}/metrics", self.metrics))
            .header("host", host)
            .send()
            .await
            .ok()?;
        Some((response.status(), response.text().await.ok()?))
    }

    /// One unary call of `path` carrying `body` as its message.
    async fn call(&self, path: &str, body: Vec<u8>) -> tonic::Code {
        self.answer(path, body).await.map_or_else(|status| status.code(), |()| tonic::Code::Ok)
    }

    /// One unary call of `path` carrying `body` as its message: its refusal, if refused.
    async fn answer(&self, path: &str, body: Vec<u8>) -> Result<(), tonic::Status> {
        let channel =
            tonic::transport::Endpoint::from_shared(self.url()).unwrap().connect().await.unwrap();
        let mut grpc = tonic::client::Grpc::new(channel).max_encoding_message_size(usize::MAX);
        grpc.ready().await.unwrap();
        let path: tonic::codegen::http::uri::PathAndQuery = path.parse().unwrap();
        grpc.unary(tonic::Request::new(body), path, RawCodec).await.map(drop)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_grpc_paths_share_one_metrics_label_and_the_listener_checks_host() {
    let folder = tempfile::tempdir().unwrap();
    let core = Core::start(folder.path()).await;
    let (_, before) = core.metrics_page("127.0.0.1").await.unwrap();
    for index in 0..2000 {
        assert_eq!(
            core.call(&format!("/hado.v1.Inbox/Invented{index}"), Vec::new()).await,
            tonic::Code::Unimplemented
        );
    }
    let (status, after) = core.metrics_page("localhost").await.unwrap();
    assert_eq!(status, reqwest::StatusCode::OK);
    assert!(after.contains(r#"method="unknown""#), "{after}");
    assert!(!after.contains("Invented"), "an invented path got a label of its own");
    assert!(
        after.len() < before.len() + 16 * 1024,
        "2,000 unknown paths grew the metrics from {} to {} bytes",
        before.len(),
        after.len()
    );

    // A page that rebinds its name to this port cannot read the metrics.
    let (status, body) = core.metrics_page("attacker.example").await.unwrap();
    assert_eq!(status, reqwest::StatusCode::MISDIRECTED_REQUEST, "{body}");
    assert!(!body.contains("hado_"), "{body}");
    core.process.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_is_not_protobuf_is_invalid_argument() {
    let folder = tempfile::tempdir().unwrap();
    let core = Core::start(folder.path()).await;
    // A field whose declared length runs past the end of the message.
    let garbage = vec![0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02];
    for path in
        ["/hado.v1.Ingest/UpsertEvents", "/hado.v1.Admin/ListUsers", "/grpc.health.v1.Health/Check"]
    {
        assert_eq!(core.call(path, garbage.clone()).await, tonic::Code::InvalidArgument, "{path}");
    }
    // A well-formed message still goes to its service (and its credential check).
    assert_eq!(
        core.call("/hado.v1.Admin/ListUsers", Vec::new()).await,
        tonic::Code::Unauthenticated
    );
    core.process.stop();
}

/// A list item can be two bytes on the wire and hundreds once decoded, so
/// core counts a request's lists before it decodes the request: millions of
/// empty events cost their bytes, whoever sends them (BENCHMARKS.md, "Memory
/// bounded by bytes", the gRPC rows).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_too_long_is_refused_before_it_is_decoded() {
    let folder = tempfile::tempdir().unwrap();
    let core = Core::start(folder.path()).await;
    let upsert = "/hado.v1.Ingest/UpsertEvents";
    // 1,001 empty events, then a field whose length runs past the end:
    // decoded first, this would be refused as not protobuf.
    let mut counted_first = [0x0a, 0x00].repeat(1001);
    counted_first.extend([0x12, 0x05, 0x01]);
    let refused = core.answer(upsert, counted_first).await.unwrap_err();
    assert_eq!(
        (refused.code(), refused.message()),
        (tonic::Code::InvalidArgument, "events holds 1001 items; a batch holds at most 1000")
    );
    // Three million of them (6 MB on the wire, under the 16 MiB a message
    // may be), sent with no credential at all.
    let refused = core.answer(upsert, [0x0a, 0x00].repeat(3_000_000)).await.unwrap_err();
    assert_eq!(refused.message(), "events holds 3000000 items; a batch holds at most 1000");
    // A full batch of empty events is decoded, and goes on to the credential check.
    assert_eq!(core.call(upsert, [0x0a, 0x00].repeat(1000)).await, tonic::Code::Unauthenticated);
    core.process.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_alone_keeps_its_database_files_private() {
    let folder = tempfile::tempdir().unwrap();
    let core = Core::start(folder.path()).await;
    let data = folder.path().join("data");
    assert_eq!(
        std::fs::metadata(&data).unwrap().permissions().mode() & 0o777,
        0o700,
        "the data folder"
    );
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&data).unwrap() {
        let path = entry.unwrap().path();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} is readable by others: {mode:o}", path.display());
        seen.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    seen.sort();
    assert_eq!(
        seen,
        ["hado.db", "hado.db-shm", "hado.db-wal", "hado.db.core.lock"],
        "every file of the database, and core's lock on it, was checked"
    );
    core.process.stop();
}
