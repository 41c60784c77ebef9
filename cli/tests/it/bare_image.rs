//! Core in an image without CA certificates (a bare Debian, or a
//! `FROM scratch`): it starts and serves, says once in its log what is
//! missing, and only what needs outbound TLS fails, with that reason.
//! Here the system's certificates are hidden with `SSL_CERT_FILE` and
//! `SSL_CERT_DIR`, which the certificate loader reads instead.

use std::time::{Duration, Instant};

use hado_proto::metadata::Credential;
use hado_proto::v1::inbox_client::InboxClient;
use hado_proto::v1::{AddWebhookRequest, ChannelId, ListChannelsRequest};
use hado_testing::{ADMIN_TOKEN, GATEWAY_TOKEN, LINK_SECRET};

use crate::common::{STARTING, core_on, free_port, spawn};
use hado_testing::wait_until_serving;

// Two threads: `stop` blocks one while the client's connection closes on the other.
/// How long one call may take: a hang fails the test instead of holding it.
const CALL: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_without_ca_certificates_serves_and_says_why_https_fails() {
    let folder = tempfile::tempdir().unwrap();
    let no_certificates = folder.path().join("no-certificates");
    std::fs::create_dir(&no_certificates).unwrap();
    let port = free_port();
    let core = spawn(
        "core",
        folder.path(),
        &[
            ("HADO_DATABASE_URL", format!("sqlite://{}/hado.db", folder.path().display())),
            ("HADO_GRPC_ADDR", format!("127.0.0.1:{port}")),
            ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_SECRET", LINK_SECRET.into()),
            ("HADO_WEBHOOK_ALLOW_PRIVATE", "true".into()),
            ("SSL_CERT_FILE", "/dev/null".into()),
            ("SSL_CERT_DIR", no_certificates.display().to_string()),
        ],
    );
    // It serves, and its health says SERVING: storage is fine.
    wait_until_serving(core_on(port), STARTING).await;
    let log = || std::fs::read_to_string(folder.path().join("core.log")).unwrap();
    assert!(log().contains("no CA certificates"), "the log says what is missing:\n{}", log());
    assert!(!log().contains("panicked"), "{}", log());

    // A webhook to an https address fails with the reason and the fix.
    let mut inbox = InboxClient::with_interceptor(
        core_on(port),
        Credential::gateway(GATEWAY_TOKEN, "anna").unwrap(),
    );
    let added = tokio::time::timeout(
        CALL,
        inbox.add_webhook(AddWebhookRequest { url: "https://127.0.0.1:9/hook".into() }),
    )
    .await
    .expect("added in time")
    .unwrap()
    .into_inner();
    let id = added.channel.unwrap().id;
    tokio::time::timeout(CALL, inbox.test_channel(ChannelId { id }))
        .await
        .expect("queued in time")
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let error = loop {
        let channels = tokio::time::timeout(CALL, inbox.list_channels(ListChannelsRequest {}))
            .await
            .expect("listed in time")
            .unwrap()
            .into_inner()
            .channels;
        if let Some(error) = channels
            .iter()
            .find(|channel| channel.id == id)
            .and_then(|channel| channel.last_error.clone())
        {
            break error;
        }
        assert!(Instant::now() < deadline, "the delivery was never tried");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(error.contains("no CA certificates") && error.contains("ca-certificates"), "{error}");
    core.stop();
}
