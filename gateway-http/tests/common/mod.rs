//! What gateway-http's test files share: the gateway on an ephemeral port in
//! front of a test core, stopped when the test is done.

#![allow(dead_code)]

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use hado_gateway_http::config::HttpConfig;
use hado_testing::{GATEWAY_TOKEN, TestCore};

/// A configuration for `core` that trusts no proxy and has no local user;
/// tests change what they are about.
pub(crate) fn config(core: &TestCore) -> HttpConfig {
    HttpConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        ..HttpConfig::local(&core.url(), GATEWAY_TOKEN)
    }
}

/// gateway-http on an ephemeral port.
pub(crate) struct Gateway {
    pub addr: SocketAddr,
    pub base: String,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Gateway {
    pub(crate) async fn start(mut config: HttpConfig) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        config.addr = addr;
        let (shutdown, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            hado_gateway_http::run(config, listener, async {
                let _ = stopped.await;
            })
            .await
            .expect("gateway-http serves");
        });
        Self { addr, base: format!("http://{addr}"), shutdown: Some(shutdown), task }
    }

    pub(crate) async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        let _ = (&mut self.task).await;
    }
}

/// Runs `python3` with `arguments` (a script and what it takes): whether it
/// succeeded, and all it printed, its output then its errors.
pub(crate) async fn python3<I, S>(arguments: I) -> (bool, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let output = tokio::process::Command::new("python3")
        .args(arguments)
        .output()
        .await
        .expect("python3 runs");
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), report)
}
