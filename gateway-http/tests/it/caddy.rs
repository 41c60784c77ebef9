//! The repository's Caddyfile with a real Caddy (Debian's `caddy`): it
//! validates as shipped, and with its basic-auth variant switched on it sits
//! in front of gateway-http, strips a client's own `X-Remote-User`, and keeps
//! the public routes open (an email's `/c/` links among them, which a mail
//! provider's one-click unsubscribe posts to with no session) and the rest
//! behind the sign-in.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use common::Gateway;
use hado_gateway::TrustedProxies;
use hado_testing::{self as testing, Backend, TestCore};

const CADDYFILE: &str = include_str!("../../../Caddyfile");
const PASSWORD: &str = "correct horse battery staple";

fn caddy_available(test: &str) -> bool {
    testing::tool_available(test, testing::runs("caddy", &["version"]), "apt-get install caddy")
}

/// The shipped Caddyfile with the forward_auth block taken out and the
/// commented basic-auth block switched on, as its comments tell a person to.
fn with_basic_auth(caddyfile: &str) -> String {
    #[derive(PartialEq)]
    enum Block {
        Outside,
        ForwardAuth,
        BasicAuth,
    }
    let mut block = Block::Outside;
    let mut lines = Vec::new();
    for line in caddyfile.lines() {
        let marker = line.trim();
        if marker == "# --- sign-in: forward_auth ---" {
            block = Block::ForwardAuth;
        } else if marker == "# --- sign-in: basic auth ---" {
            block = Block::BasicAuth;
        } else if marker == "# --- end of sign-in ---" {
            block = Block::Outside;
        } else if block == Block::ForwardAuth {
            continue;
        } else if block == Block::BasicAuth {
            lines.push(line.replacen("# ", "", 1));
        } else {
            lines.push(line.to_owned());
        }
    }
    lines.join("\n")
}

fn caddy(arguments: &[&str], folder: &std::path::Path, environment: &[(&str, String)]) -> Command {
    let mut command = Command::new("caddy");
    command
        .args(arguments)
        .current_dir(folder)
        .env("HOME", folder)
        .env("XDG_DATA_HOME", folder)
        .env("XDG_CONFIG_HOME", folder);
    for (name, value) in environment {
        command.env(name, value);
    }
    command
}

#[test]
fn the_shipped_caddyfile_validates() {
    if !caddy_available("caddy validate") {
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("Caddyfile"), CADDYFILE).unwrap();
    let environment = [
        ("HADO_PUBLIC_HOST", "hado.example.com".to_owned()),
        ("HADO_CADDY_ADMIN", "off".to_owned()),
    ];
    for file in [
        CADDYFILE.to_owned(),
        with_basic_auth(CADDYFILE).replace(
            "{$HADO_BASIC_AUTH_HASH}",
            "$2a$14$abcdefghijklmnopqrstuuvwxyz0123456789abcdefghijklmnopq",
        ),
    ] {
        std::fs::write(folder.path().join("Caddyfile"), &file).unwrap();
        let output = caddy(
            &["validate", "--config", "Caddyfile", "--adapter", "caddyfile"],
            folder.path(),
            &environment,
        )
        .output()
        .unwrap();
        assert!(output.status.success(), "{}\n{file}", String::from_utf8_lossy(&output.stderr));
    }
}

async fn caddy_with_basic_auth_strips_a_spoofed_user(backend: Backend) {
    if !caddy_available("the Caddy run") {
        return;
    }
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut config = common::config(&core);
    config.trusted_proxies = TrustedProxies::parse("127.0.0.1").unwrap();
    // Where agents reach gateway-mcp: without it the consent page lets no
    // app sign in before core is asked.
    config.mcp_url = Some("https://localhost/mcp".into());
    let gateway = Gateway::start(config).await;
    let gateway_addr = gateway.addr;

    let folder = tempfile::tempdir().unwrap();
    let hash =
        caddy(&["hash-password", "--plaintext", PASSWORD], folder.path(), &[]).output().unwrap();
    let hash = String::from_utf8(hash.stdout).unwrap().trim().to_owned();
    std::fs::write(folder.path().join("Caddyfile"), with_basic_auth(CADDYFILE)).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let environment = [
        ("HADO_CADDY_ADMIN", "off".to_owned()),
        ("HADO_PUBLIC_HOST", format!("http://127.0.0.1:{port}")),
        ("HADO_HTTP_UPSTREAM", gateway_addr.to_string()),
        ("HADO_MCP_UPSTREAM", "127.0.0.1:9".to_owned()),
        ("HADO_BASIC_AUTH_USER", "anna".to_owned()),
        ("HADO_BASIC_AUTH_HASH", hash),
    ];
    let mut running = caddy(
        &["run", "--config", "Caddyfile", "--adapter", "caddyfile"],
        folder.path(),
        &environment,
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("caddy starts");
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let mut listening = false;
    for _ in 0..200 {
        if client.get(format!("{base}/up")).send().await.is_ok() {
            listening = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(listening, "caddy listens");

    // Signed in as anna, a spoofed header naming bob is dropped: the inbox is anna's.
    let me = client
        .get(format!("{base}/me"))
        .basic_auth("anna", Some(PASSWORD))
        .header("x-remote-user", "bob")
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), StatusCode::OK);
    assert_eq!(me.json::<Value>().await.unwrap()["login"], "anna");
    let page =
        client.get(format!("{base}/")).basic_auth("anna", Some(PASSWORD)).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("<title>Inbox · Hado</title>"));

    // Not signed in, the header alone gets nobody in.
    for headers in [vec![("x-remote-user", "anna")], vec![]] {
        let mut request = client.get(format!("{base}/me"));
        for (name, value) in &headers {
            request = request.header(*name, *value);
        }
        assert_eq!(request.send().await.unwrap().status(), StatusCode::UNAUTHORIZED, "{headers:?}");
    }
    let wrong =
        client.get(format!("{base}/me")).basic_auth("anna", Some("guess")).send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);

    // Public routes stay open and still never take the header for a user.
    let up = client.get(format!("{base}/up")).header("x-remote-user", "anna").send().await.unwrap();
    assert_eq!(up.status(), StatusCode::OK);
    let policy = up
        .headers()
        .get("content-security-policy")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert_eq!(up.headers().get("x-content-type-options").unwrap(), "nosniff");
    let api = client
        .get(format!("{base}/api/events?user=anna"))
        .header("x-remote-user", "anna")
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        api.json::<Value>().await.unwrap()["error"],
        "a source bearer token is required (Authorization: Bearer hado_src_…)"
    );
    let document = client.get(format!("{base}/openapi.json")).send().await.unwrap();
    assert_eq!(document.status(), StatusCode::OK);
    let feed = client.get(format!("{base}/ics/hado_ics_unknown.ics")).send().await.unwrap();
    assert_eq!(
        feed.status(),
        StatusCode::NOT_FOUND,
        "calendar feeds pass Caddy without a sign-in; the gateway answers"
    );
    let link = client.get(format!("{base}/a/forged")).send().await.unwrap();
    assert_eq!(link.status(), StatusCode::BAD_REQUEST, "action links pass too");
    // An email's links too: its confirmation, and the one-click
    // unsubscribe a mail provider posts with no session (RFC 8058).
    let page = client.get(format!("{base}/c/forged")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::BAD_REQUEST, "channel links pass without a sign-in");
    let one_click = client
        .post(format!("{base}/c/forged"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(one_click.status(), StatusCode::BAD_REQUEST, "a one-click unsubscribe passes too");
    assert!(
        one_click.text().await.unwrap().contains("<html"),
        "gateway-http answered the unsubscribe, not the sign-in"
    );

    // An agent's sign-in goes to gateway-mcp without the person's sign-in
    // (no gateway-mcp runs here, so Caddy answers 502); the page where the
    // person allows it is the inbox's, behind the sign-in.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/register",
        "/token",
        "/mcp",
    ] {
        let agent = client.post(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(agent.status(), StatusCode::BAD_GATEWAY, "{path} goes to gateway-mcp");
    }
    let consent = client.get(format!("{base}/oauth/authorize?client_id=x")).send().await.unwrap();
    assert_eq!(
        consent.status(),
        StatusCode::UNAUTHORIZED,
        "the consent page is behind the sign-in"
    );
    let consent = client
        .get(format!("{base}/oauth/authorize?client_id=x"))
        .basic_auth("anna", Some(PASSWORD))
        .send()
        .await
        .unwrap();
    assert_eq!(consent.status(), StatusCode::BAD_REQUEST);
    assert!(
        consent.text().await.unwrap().contains("invalid_client"),
        "gateway-http asked core about the client"
    );

    let _ = running.kill();
    let _ = running.wait();
    gateway.stop().await;
    core.stop().await;
}

hado_testing::on_both_backends!(caddy_with_basic_auth_strips_a_spoofed_user);
