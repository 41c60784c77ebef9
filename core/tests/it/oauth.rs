//! Core's side of signing agents in, over gRPC as the gateways call it:
//! clients known by their metadata documents (fetched from a server on
//! loopback), registrations that expire unused and are capped, answers
//! that name the issuer, requests refused to the person and never sent
//! back, refresh tokens that rotate (a second use revokes the grant),
//! access tokens that expire, and a person's Disconnect. Each on both
//! backends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::Duration;
use tokio::net::TcpListener;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use hado_proto::v1::o_auth_client::OAuthClient;
use hado_proto::v1::{self, register_client_reply, token_reply};
use hado_testing::{Backend, Bearer, GATEWAY_TOKEN, TestCore};

type OAuth = OAuthClient<InterceptedService<Channel, Bearer>>;

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
pub(crate) const REDIRECT: &str = "http://127.0.0.1:9/callback";
const SERVED: &str = "http://127.0.0.1:8081/mcp";
/// The issuer gateway-mcp's metadata names when its MCP endpoint is `SERVED`.
const ISSUER: &str = "http://127.0.0.1:8081";

fn gateway(core: &TestCore) -> OAuth {
    OAuthClient::with_interceptor(core.channel(), Bearer::new(GATEWAY_TOKEN, None))
}

fn person(core: &TestCore, login: &str) -> OAuth {
    OAuthClient::with_interceptor(core.channel(), Bearer::new(GATEWAY_TOKEN, Some(login)))
}

pub(crate) async fn register(core: &TestCore, metadata: &str) -> Result<String, v1::OAuthError> {
    let reply = gateway(core)
        .register_client(v1::RegisterClientRequest { metadata_json: metadata.into() })
        .await
        .unwrap()
        .into_inner();
    match reply.outcome.unwrap() {
        register_client_reply::Outcome::ClientJson(json) => {
            Ok(serde_json::from_str::<serde_json::Value>(&json).unwrap()["client_id"]
                .as_str()
                .unwrap()
                .to_owned())
        }
        register_client_reply::Outcome::Error(error) => Err(error),
    }
}

fn request(client_id: &str) -> v1::AuthorizationRequest {
    v1::AuthorizationRequest {
        response_type: "code".into(),
        client_id: client_id.into(),
        redirect_uri: REDIRECT.into(),
        code_challenge: CHALLENGE.into(),
        code_challenge_method: "S256".into(),
        state: "s".into(),
        served_resource: SERVED.into(),
        ..Default::default()
    }
}

/// The query of the address an answer sends the browser to.
fn landed(check: &v1::AuthorizationCheck) -> std::collections::HashMap<String, String> {
    assert!(check.redirect_to.starts_with(REDIRECT), "{check:?}");
    reqwest::Url::parse(&check.redirect_to).unwrap().query_pairs().into_owned().collect()
}

/// Anna allows `client_id`; the code.
pub(crate) async fn code(core: &TestCore, client_id: &str) -> String {
    let check = person(core, "anna").approve(request(client_id)).await.unwrap().into_inner();
    assert!(check.error.is_none(), "{:?}", check.error);
    let url = reqwest::Url::parse(&check.redirect_to).unwrap();
    url.query_pairs().find(|(name, _)| name == "code").unwrap().1.into_owned()
}

async fn token(
    core: &TestCore,
    request: v1::TokenRequest,
) -> Result<v1::TokenGrant, v1::OAuthError> {
    let request = v1::TokenRequest { served_resource: SERVED.into(), ..request };
    match gateway(core).token(request).await.unwrap().into_inner().outcome.unwrap() {
        token_reply::Outcome::Tokens(tokens) => Ok(tokens),
        token_reply::Outcome::Error(error) => Err(error),
    }
}

pub(crate) async fn exchange(
    core: &TestCore,
    client_id: &str,
    code: &str,
) -> Result<v1::TokenGrant, v1::OAuthError> {
    let request = v1::TokenRequest {
        grant_type: "authorization_code".into(),
        client_id: client_id.into(),
        code: code.into(),
        redirect_uri: REDIRECT.into(),
        code_verifier: VERIFIER.into(),
        ..Default::default()
    };
    token(core, request).await
}

pub(crate) async fn refresh(
    core: &TestCore,
    client_id: &str,
    refresh_token: &str,
) -> Result<v1::TokenGrant, v1::OAuthError> {
    token(
        core,
        v1::TokenRequest {
            grant_type: "refresh_token".into(),
            client_id: client_id.into(),
            refresh_token: refresh_token.into(),
            ..Default::default()
        },
    )
    .await
}

/// Whether `access_token` is accepted as its person.
pub(crate) async fn works(core: &TestCore, access_token: &str) -> bool {
    core.agent(access_token).get_profile(v1::GetProfileRequest::default()).await.is_ok()
}

async fn tokens_rotate_expire_and_stop_at_disconnect(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let client_id =
        register(&core, &format!(r#"{{"client_name":"Probe","redirect_uris":["{REDIRECT}"]}}"#))
            .await
            .unwrap();
    let first = exchange(&core, &client_id, &code(&core, &client_id).await).await.unwrap();
    assert!(works(&core, &first.access_token).await);
    let profile = core
        .agent(&first.access_token)
        .get_profile(v1::GetProfileRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(profile.login, "anna");
    // An app signed in this way is an agent: it cannot manage credentials.
    let denied = core
        .agent(&first.access_token)
        .list_connected_apps(v1::ListConnectedAppsRequest {})
        .await
        .unwrap_err();
    assert_eq!(denied.code(), tonic::Code::PermissionDenied);

    // Refreshing rotates both tokens; the old refresh token used again,
    // past the few seconds a repeat gets the same answer, revokes the
    // grant, so every token of it stops.
    let second = refresh(&core, &client_id, &first.refresh_token).await.unwrap();
    assert_ne!(second.refresh_token, first.refresh_token);
    assert!(works(&core, &second.access_token).await);
    assert!(
        !works(&core, &first.access_token).await,
        "a refresh revokes the access token it replaces"
    );
    assert_eq!(
        refresh(&core, "hado_client_other", &second.refresh_token).await.unwrap_err().error,
        "invalid_grant",
        "another client's"
    );
    core.clock.advance(Duration::seconds(6));
    assert_eq!(
        refresh(&core, &client_id, &first.refresh_token).await.unwrap_err().error,
        "invalid_grant"
    );
    assert!(
        !works(&core, &second.access_token).await,
        "reuse of a rotated refresh token revokes the grant"
    );
    assert_eq!(
        refresh(&core, &client_id, &second.refresh_token).await.unwrap_err().error,
        "invalid_grant"
    );

    // An access token lasts an hour; the refresh token outlives it.
    let third = exchange(&core, &client_id, &code(&core, &client_id).await).await.unwrap();
    core.clock.advance(Duration::minutes(61));
    assert!(!works(&core, &third.access_token).await, "an access token expires after an hour");
    let fourth = refresh(&core, &client_id, &third.refresh_token).await.unwrap();
    assert!(works(&core, &fourth.access_token).await);

    // Disconnect stops it at once; the list is the person's own.
    let inbox = core.inbox_as("anna");
    let apps = inbox
        .clone()
        .list_connected_apps(v1::ListConnectedAppsRequest {})
        .await
        .unwrap()
        .into_inner()
        .apps;
    assert_eq!(
        apps.iter().map(|app| (app.name.as_str(), app.redirect_host.as_str())).collect::<Vec<_>>(),
        [("Probe", "127.0.0.1")]
    );
    let not_bobs = core
        .inbox_as("bob")
        .disconnect_app(v1::ConnectedAppId { id: apps[0].id })
        .await
        .unwrap()
        .into_inner();
    assert!(
        !not_bobs.disconnected && works(&core, &fourth.access_token).await,
        "bob cannot disconnect anna's app"
    );
    assert!(
        inbox
            .clone()
            .disconnect_app(v1::ConnectedAppId { id: apps[0].id })
            .await
            .unwrap()
            .into_inner()
            .disconnected
    );
    assert!(!works(&core, &fourth.access_token).await);
    assert_eq!(
        refresh(&core, &client_id, &fourth.refresh_token).await.unwrap_err().error,
        "invalid_grant"
    );

    // Checking a request (which may fetch a document) takes the gateway credential.
    let anonymous = OAuthClient::new(core.channel()).check_authorization(request(&client_id)).await;
    assert_eq!(anonymous.unwrap_err().code(), tonic::Code::Unauthenticated);
    // An agent cannot approve a sign-in for itself: Approve takes the gateway credential.
    let as_agent =
        OAuthClient::with_interceptor(core.channel(), Bearer::new(&fourth.access_token, None))
            .approve(request(&client_id))
            .await;
    assert_eq!(as_agent.unwrap_err().code(), tonic::Code::Unauthenticated);
    core.stop().await;
}

async fn every_answer_names_the_issuer_and_only_an_answer_goes_back(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let client_id =
        register(&core, &format!(r#"{{"redirect_uris":["{REDIRECT}"]}}"#)).await.unwrap();

    // Allow and Deny each send the browser back with the state and the
    // issuer (RFC 9207), so that a client signed in to several servers can
    // tell which one answered (a mix-up attack fails on it).
    let allowed =
        landed(&person(&core, "anna").approve(request(&client_id)).await.unwrap().into_inner());
    assert_eq!((allowed["state"].as_str(), allowed["iss"].as_str()), ("s", ISSUER));
    assert!(allowed["code"].starts_with("hado_code_"));
    let denied = person(&core, "anna").deny(request(&client_id)).await.unwrap().into_inner();
    assert_eq!(denied.error.as_ref().map(|error| error.error.as_str()), Some("access_denied"));
    let denied = landed(&denied);
    assert_eq!(
        (denied["error"].as_str(), denied["state"].as_str(), denied["iss"].as_str()),
        ("access_denied", "s", ISSUER)
    );
    assert!(!denied.contains_key("code"));
    // The issuer follows the gateway's configured address, never the request.
    let elsewhere = v1::AuthorizationRequest {
        served_resource: "https://hado.example.com/hado/mcp".into(),
        resource: "https://hado.example.com/hado/sse".into(),
        ..request(&client_id)
    };
    let allowed = landed(&person(&core, "anna").approve(elsewhere).await.unwrap().into_inner());
    assert_eq!(allowed["iss"], "https://hado.example.com/hado");
    let codes = core.authorization_codes().await;
    assert_eq!(codes, 2);

    // A resource that is not this server's MCP endpoint is refused before
    // the person is asked, and Allow issues no code for it.
    for foreign in ["https://elsewhere.example/mcp", "http://127.0.0.1:8082/mcp", "not a uri"] {
        let asking = v1::AuthorizationRequest { resource: foreign.into(), ..request(&client_id) };
        for check in [
            gateway(&core).check_authorization(asking.clone()).await.unwrap().into_inner(),
            person(&core, "anna").approve(asking.clone()).await.unwrap().into_inner(),
            person(&core, "anna").deny(asking.clone()).await.unwrap().into_inner(),
        ] {
            assert_eq!(check.problem(), v1::AuthorizationProblem::Resource, "{foreign}");
            assert_eq!(check.error.map(|error| error.error), Some("invalid_target".into()));
            assert!(check.redirect_to.is_empty(), "{foreign}: never sent back");
        }
    }
    assert_eq!(core.authorization_codes().await, codes, "no code for another server");

    // A malformed request is shown to the person, never sent to its
    // redirect URI: anyone can register one (RFC 9700 section 4.11.2).
    let challenge_missing =
        v1::AuthorizationRequest { code_challenge: String::new(), ..request(&client_id) };
    let method_plain =
        v1::AuthorizationRequest { code_challenge_method: "plain".into(), ..request(&client_id) };
    let response_token =
        v1::AuthorizationRequest { response_type: "token".into(), ..request(&client_id) };
    let scope_quoted =
        v1::AuthorizationRequest { scope: "inbox \"all\"".into(), ..request(&client_id) };
    let foreign_redirect = v1::AuthorizationRequest {
        redirect_uri: "https://evil.example/cb".into(),
        ..request(&client_id)
    };
    let unknown_client = request("hado_client_unknown");
    use v1::AuthorizationProblem as Problem;
    for (malformed, problem, code) in [
        (challenge_missing, Problem::CodeChallenge, "invalid_request"),
        (method_plain, Problem::CodeChallengeMethod, "invalid_request"),
        (response_token, Problem::ResponseType, "unsupported_response_type"),
        (scope_quoted, Problem::Scope, "invalid_scope"),
        (foreign_redirect, Problem::RedirectUri, "invalid_request"),
        (unknown_client, Problem::Client, "invalid_client"),
    ] {
        for check in [
            gateway(&core).check_authorization(malformed.clone()).await.unwrap().into_inner(),
            person(&core, "anna").approve(malformed.clone()).await.unwrap().into_inner(),
            person(&core, "anna").deny(malformed.clone()).await.unwrap().into_inner(),
        ] {
            assert_eq!(
                (check.problem(), check.error.map(|error| error.error)),
                (problem, Some(code.to_owned()))
            );
            assert!(check.redirect_to.is_empty(), "{problem:?}: never sent back");
        }
    }
    assert_eq!(core.authorization_codes().await, codes);

    // The issuer is the gateway's to say: without it, core refuses to guess.
    let unconfigured =
        v1::AuthorizationRequest { served_resource: String::new(), ..request(&client_id) };
    let refused = person(&core, "anna").approve(unconfigured).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(refused.message().contains("served_resource"), "{}", refused.message());
    core.stop().await;
}

/// Two refreshes of one refresh token at the same moment, as a client
/// sends them when two requests find the access token ran out: both get
/// the one new pair, which works, whichever replica each reaches. A repeat
/// past the grace window is a reuse and revokes the grant.
/// Waits `within` for `core` to refuse `token`: nothing on the core that
/// revoked it, up to a second on another, which hears of it from Postgres.
async fn stops(core: &TestCore, token: &str, within: std::time::Duration, what: &str) {
    let deadline = std::time::Instant::now() + within;
    while works(core, token).await {
        assert!(std::time::Instant::now() < deadline, "{what}: still works after {within:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn a_refresh_sent_twice_at_once_gets_one_answer(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    // On Postgres the two go to two cores sharing the database; a SQLite
    // file is one process's, so there both go to the one core.
    let replica = match backend {
        Backend::Postgres(_) => Some(core.replica().await),
        Backend::Sqlite => None,
    };
    let other = replica.as_ref().unwrap_or(&core);
    // How long the first core may take to hear of a revocation on `other`.
    let heard = match replica {
        Some(_) => std::time::Duration::from_secs(1),
        None => std::time::Duration::ZERO,
    };
    let client_id =
        register(&core, &format!(r#"{{"redirect_uris":["{REDIRECT}"]}}"#)).await.unwrap();
    let mut current = exchange(&core, &client_id, &code(&core, &client_id).await).await.unwrap();
    for round in 0..5 {
        let (one, two) = tokio::join!(
            refresh(&core, &client_id, &current.refresh_token),
            refresh(other, &client_id, &current.refresh_token)
        );
        let (one, two) = (one.unwrap(), two.unwrap());
        assert_eq!(
            (&one.access_token, &one.refresh_token),
            (&two.access_token, &two.refresh_token),
            "round {round}: one answer for both"
        );
        assert_ne!(one.refresh_token, current.refresh_token);
        assert!(works(&core, &one.access_token).await && works(other, &one.access_token).await);
        // Revoked where the refresh won at once, on the other core once it
        // hears of it (within a second).
        stops(&core, &current.access_token, heard, "the pair replaced is revoked").await;
        current = one;
    }

    // Within the window a repeat is answered alike, with the access
    // token's time left; a repeat from another client is refused and
    // changes nothing.
    let fresh = refresh(&core, &client_id, &current.refresh_token).await.unwrap();
    core.clock.advance(Duration::seconds(4));
    let again = refresh(other, &client_id, &current.refresh_token).await.unwrap();
    assert_eq!(
        (&again.access_token, &again.refresh_token),
        (&fresh.access_token, &fresh.refresh_token)
    );
    assert_eq!((fresh.expires_in, again.expires_in), (3600, 3596));
    assert_eq!(
        refresh(&core, "hado_client_other", &current.refresh_token).await.unwrap_err().error,
        "invalid_grant"
    );
    assert!(works(&core, &fresh.access_token).await);

    // Past the window the same token is a reuse: the grant is revoked.
    core.clock.advance(Duration::seconds(2));
    assert_eq!(
        refresh(other, &client_id, &current.refresh_token).await.unwrap_err().error,
        "invalid_grant"
    );
    assert!(!works(other, &fresh.access_token).await, "reuse revoked the grant");
    stops(&core, &fresh.access_token, heard, "reuse revoked the grant on the other core").await;
    assert_eq!(
        refresh(&core, &client_id, &fresh.refresh_token).await.unwrap_err().error,
        "invalid_grant"
    );
    if let Some(replica) = replica {
        replica.stop().await;
    }
    core.stop().await;
}

async fn registrations_expire_unused_and_are_capped(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let metadata = format!(r#"{{"redirect_uris":["{REDIRECT}"]}}"#);
    let unused = register(&core, &metadata).await.unwrap();
    let connected = register(&core, &metadata).await.unwrap();
    exchange(&core, &connected, &code(&core, &connected).await).await.unwrap();
    core.clock.advance(Duration::minutes(59));
    register(&core, &metadata).await.unwrap();
    assert!(
        gateway(&core)
            .check_authorization(request(&unused))
            .await
            .unwrap()
            .into_inner()
            .error
            .is_none(),
        "within the hour it is kept"
    );
    core.clock.advance(Duration::minutes(62));
    // The next registration forgets what no one connected within an hour of its last use.
    register(&core, &metadata).await.unwrap();
    let forgotten =
        gateway(&core).check_authorization(request(&unused)).await.unwrap().into_inner();
    assert_eq!(forgotten.error.map(|error| error.error), Some("invalid_client".into()));
    assert!(forgotten.redirect_to.is_empty(), "an unknown client is never redirected to");
    let kept = gateway(&core).check_authorization(request(&connected)).await.unwrap().into_inner();
    assert!(kept.error.is_none(), "a connected client stays");

    // A flood of registrations never locks a newcomer out: past 1000
    // waiting for someone to connect them, the least recently used go.
    core.clock.advance(Duration::seconds(1));
    let oldest = register(&core, &metadata).await.unwrap();
    core.clock.advance(Duration::seconds(1));
    let mut flood = Vec::new();
    for _ in 0..1100 {
        flood.push(register(&core, &metadata).await.expect("a newcomer can always register"));
    }
    let newest = flood.last().unwrap();
    let newcomer = gateway(&core).check_authorization(request(newest)).await.unwrap().into_inner();
    assert!(newcomer.error.is_none(), "the newest registration works: {newcomer:?}");
    let pushed_out =
        gateway(&core).check_authorization(request(&oldest)).await.unwrap().into_inner();
    assert_eq!(
        pushed_out.error.map(|error| error.error),
        Some("invalid_client".into()),
        "the least recently used made room"
    );
    let kept = gateway(&core).check_authorization(request(&connected)).await.unwrap().into_inner();
    assert!(kept.error.is_none(), "a connected client is never pushed out");
    core.stop().await;
}

/// Serves a client's metadata document on loopback, counting fetches.
async fn document_server(
    body: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let fetched = Arc::new(AtomicUsize::new(0));
    let (count, own) = (fetched.clone(), format!("{base}/client.json"));
    let body = Arc::new(body);
    let app = axum::Router::new().route(
        "/client.json",
        axum::routing::get(move || {
            count.fetch_add(1, Ordering::SeqCst);
            let text = body(&own);
            async move { ([("content-type", "application/json")], text) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, fetched)
}

async fn a_client_is_known_by_its_metadata_document(backend: Backend) {
    // Test cores allow private targets, so a document on loopback over
    // http stands in for one on an https site.
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let (base, fetched) = document_server(|own| {
        format!(r#"{{"client_id":"{own}","client_name":"Doc App","redirect_uris":["{REDIRECT}"]}}"#)
    })
    .await;
    let client_id = format!("{base}/client.json");
    let check = gateway(&core).check_authorization(request(&client_id)).await.unwrap().into_inner();
    assert_eq!(
        (check.error, check.client_name.as_str(), check.redirect_host.as_str()),
        (None, "Doc App", "127.0.0.1")
    );
    let tokens = exchange(&core, &client_id, &code(&core, &client_id).await).await.unwrap();
    assert!(works(&core, &tokens.access_token).await);
    assert_eq!(fetched.load(Ordering::SeqCst), 2, "fetched afresh for the page and for Allow");

    // A document that names another client, or a redirect URI it does not list.
    let (other, _) = document_server(|_| {
        format!(r#"{{"client_id":"https://evil.example/c.json","redirect_uris":["{REDIRECT}"]}}"#)
    })
    .await;
    let check = gateway(&core)
        .check_authorization(request(&format!("{other}/client.json")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(check.error.map(|error| error.error), Some("invalid_client".into()));
    let wrong_redirect = v1::AuthorizationRequest {
        redirect_uri: "http://127.0.0.1:9/elsewhere".into(),
        ..request(&client_id)
    };
    let check = gateway(&core).check_authorization(wrong_redirect).await.unwrap().into_inner();
    assert_eq!(check.error.map(|error| error.error), Some("invalid_request".into()));
    assert!(check.redirect_to.is_empty());
    let unreachable = gateway(&core)
        .check_authorization(request("http://127.0.0.1:9/client.json"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(unreachable.error.map(|error| error.error), Some("invalid_client".into()));
    core.stop().await;
}

async fn a_document_on_a_private_address_is_refused_when_private_targets_are(backend: Backend) {
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.webhook_allow_private = false
    })
    .await;
    for client_id in [
        "http://127.0.0.1:9/client.json",
        "https://127.0.0.1:9/client.json",
        "https://10.0.0.1/client.json",
    ] {
        let check =
            gateway(&core).check_authorization(request(client_id)).await.unwrap().into_inner();
        let error = check.error.unwrap();
        assert_eq!(error.error, "invalid_client", "{client_id}: {}", error.description);
    }
    core.stop().await;
}

hado_testing::on_both_backends!(
    tokens_rotate_expire_and_stop_at_disconnect,
    every_answer_names_the_issuer_and_only_an_answer_goes_back,
    a_refresh_sent_twice_at_once_gets_one_answer,
    registrations_expire_unused_and_are_capped,
    a_client_is_known_by_its_metadata_document,
    a_document_on_a_private_address_is_refused_when_private_targets_are,
);
