//! The engine over storage alone: its way to the network is a stand-in
//! that opens no socket, records what it was asked, and answers as told.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use url::Url;

use hado_domain::oauth::AuthorizationParams;
use hado_engine::Verdict;
use hado_engine::error::CoreError;
use hado_engine::network::Network;
use hado_testing::{Backend, TestEngine};

/// Answers every webhook check with `webhook`, and every document with
/// `document`; remembers each URL it was asked about.
struct StandIn {
    webhook: Result<(), String>,
    document: Result<String, String>,
    asked: Mutex<Vec<String>>,
}

impl StandIn {
    fn new(webhook: Result<(), String>, document: Result<String, String>) -> Arc<Self> {
        Arc::new(Self { webhook, document, asked: Mutex::default() })
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl Network for StandIn {
    fn check_webhook<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<(), String>> {
        self.asked.lock().unwrap().push(url.to_string());
        Box::pin(std::future::ready(self.webhook.clone()))
    }

    fn fetch_document<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<String, String>> {
        self.asked.lock().unwrap().push(url.to_string());
        Box::pin(std::future::ready(self.document.clone()))
    }
}

const NOW: &str = "2026-12-01T10:00:00Z";

fn authorization(client_id: &str) -> AuthorizationParams {
    AuthorizationParams {
        response_type: "code".into(),
        client_id: client_id.into(),
        redirect_uri: "https://app.example/callback".into(),
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
        code_challenge_method: "S256".into(),
        state: "s".into(),
        resource: String::new(),
        scope: String::new(),
        served_resource: "https://hado.example.com/mcp".into(),
    }
}

#[tokio::test]
async fn a_webhook_is_checked_by_the_network_only_after_its_written_address_passes() {
    let refusing =
        StandIn::new(Err("hooks.example resolves only to 10.0.0.7".into()), Ok("".into()));
    let test = TestEngine::start_with_network(&Backend::Sqlite, NOW, refusing.clone()).await;
    let anna = test.engine.user_for_login("anna").await.unwrap();

    let refused = test.engine.add_webhook(&anna, "https://hooks.example/in").await.unwrap_err();
    assert!(
        matches!(&refused, CoreError::Invalid(violations) if format!("{violations:?}").contains("10.0.0.7")),
        "{refused:?}"
    );
    assert_eq!(refusing.asked(), ["https://hooks.example/in"]);

    // An address written in the URL is the engine's own check: the network
    // is not asked.
    let literal = test.engine.add_webhook(&anna, "https://10.1.2.3/in").await.unwrap_err();
    assert!(matches!(literal, CoreError::Invalid(_)), "{literal:?}");
    assert_eq!(refusing.asked().len(), 1);
    test.stop().await;

    let passing = StandIn::new(Ok(()), Ok("".into()));
    let test = TestEngine::start_with_network(&Backend::Sqlite, NOW, passing.clone()).await;
    let anna = test.engine.user_for_login("anna").await.unwrap();
    let added = test.engine.add_webhook(&anna, "https://hooks.example/in").await.unwrap();
    assert_eq!(added.channel.target, "https://hooks.example/in");
    assert_eq!(passing.asked(), ["https://hooks.example/in"]);
    test.stop().await;
}

#[tokio::test]
async fn an_agents_metadata_document_comes_through_the_network() {
    let client_id = "https://app.example/client.json";
    let document = format!(
        r#"{{"client_id":"{client_id}","client_name":"Doc App","redirect_uris":["https://app.example/callback"]}}"#
    );
    let network = StandIn::new(Ok(()), Ok(document));
    let test = TestEngine::start_with_network(&Backend::Sqlite, NOW, network.clone()).await;
    match test.engine.check_authorization(&authorization(client_id)).await.unwrap() {
        Verdict::Ask(asking) => {
            assert_eq!(asking.client.metadata.name, "Doc App")
        }
        other => panic!("expected to ask the person, got {other:?}"),
    }
    assert_eq!(network.asked(), [client_id]);
    test.stop().await;

    let unreachable = StandIn::new(Ok(()), Err("it answered 404 Not Found".into()));
    let test = TestEngine::start_with_network(&Backend::Sqlite, NOW, unreachable).await;
    match test.engine.check_authorization(&authorization(client_id)).await.unwrap() {
        Verdict::Show(unfit) => {
            let refusal = unfit.refusal;
            assert_eq!(refusal.code, "invalid_client");
            assert!(refusal.description.contains("404"), "{}", refusal.description);
        }
        other => panic!("expected a refusal shown to the person, got {other:?}"),
    }
    test.stop().await;
}
