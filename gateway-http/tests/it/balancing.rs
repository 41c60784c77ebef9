//! Both gateways reach core through `hado_gateway::client::Core`: when
//! `HADO_CORE_URL` names a host, calls spread over every address it resolves
//! to, and the name is resolved again so that cores join and leave. Here
//! three cores each keep their own database, so where a call landed shows
//! in which database its person was created; the resolver is a list the
//! test changes, standing in for DNS.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hado_gateway::client::{Core, Resolve};
use hado_proto::metadata::Credential;
use hado_proto::v1::inbox_client::InboxClient;
use hado_proto::v1::{GetInboxRequest, GetProfileRequest, ListUsersRequest};
use hado_testing::{Backend, GATEWAY_TOKEN, TestCore};

const NOW: &str = "2026-12-01T10:00:00Z";
/// How often the test's resolver is asked again.
const RESOLVE_EVERY: Duration = Duration::from_millis(50);

/// Makes `calls` calls as `login` through the balanced channel.
async fn calls_as(core: &Core, login: &str, calls: usize) {
    let mut inbox = InboxClient::with_interceptor(
        core.channel(),
        Credential::gateway(GATEWAY_TOKEN, login).unwrap(),
    );
    for _ in 0..calls {
        inbox.get_profile(GetProfileRequest::default()).await.expect("a core answers");
    }
}

/// Whether `login` has been seen by this core (it is created on first sight).
async fn has_seen(core: &TestCore, login: &str) -> bool {
    let users = core.admin().list_users(ListUsersRequest {}).await.unwrap().into_inner().users;
    users.iter().any(|user| user.login == login)
}

#[tokio::test]
async fn calls_spread_over_every_core_a_name_resolves_to_as_cores_join_and_leave() {
    let cores = [
        TestCore::start(&Backend::Sqlite, NOW).await,
        TestCore::start(&Backend::Sqlite, NOW).await,
        TestCore::start(&Backend::Sqlite, NOW).await,
        TestCore::start(&Backend::Sqlite, NOW).await,
    ];
    let answer: Arc<Mutex<Vec<SocketAddr>>> =
        Arc::new(Mutex::new(cores[..3].iter().map(|core| core.addr).collect()));
    let resolver_answer = answer.clone();
    let resolve: Resolve = Arc::new(move |host, port| {
        assert_eq!(
            (host.as_str(), port),
            ("cores.test", 50051),
            "the URL's host and port are resolved"
        );
        let found = resolver_answer.lock().unwrap().clone();
        Box::pin(async move { Ok(found) })
    });
    let core = Core::connect_balanced("http://cores.test:50051", resolve, RESOLVE_EVERY).unwrap();

    // 60 calls over three cores: each core answers some (a core missing all
    // of them by chance is about one in 200,000).
    calls_as(&core, "anna", 60).await;
    for (index, test_core) in cores[..3].iter().enumerate() {
        assert!(has_seen(test_core, "anna").await, "core {index} answered none of the calls");
    }
    assert!(!has_seen(&cores[3], "anna").await, "the fourth core is not in the answer yet");

    // The name now resolves to cores 0, 1 and 3: core 2 leaves, core 3 joins.
    *answer.lock().unwrap() = vec![cores[0].addr, cores[1].addr, cores[3].addr];
    tokio::time::sleep(RESOLVE_EVERY * 6).await;
    calls_as(&core, "bob", 60).await;
    for index in [0, 1, 3] {
        assert!(has_seen(&cores[index], "bob").await, "core {index} answered none of the calls");
    }
    assert!(!has_seen(&cores[2], "bob").await, "a core that left gets no calls");

    // An answer with no address keeps the cores known.
    answer.lock().unwrap().clear();
    tokio::time::sleep(RESOLVE_EVERY * 4).await;
    calls_as(&core, "carol", 5).await;

    // When nothing answers at the addresses, a call fails at once with
    // "unavailable", which the gateways explain, instead of waiting.
    let closed: SocketAddr =
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    *answer.lock().unwrap() = vec![closed];
    tokio::time::sleep(RESOLVE_EVERY * 6).await;
    let mut inbox = InboxClient::with_interceptor(
        core.channel(),
        Credential::gateway(GATEWAY_TOKEN, "dan").unwrap(),
    );
    let failed = tokio::time::timeout(
        Duration::from_secs(10),
        inbox.get_profile(GetProfileRequest::default()),
    )
    .await
    .expect("the call does not hang");
    assert_eq!(failed.unwrap_err().code(), tonic::Code::Unavailable);

    drop(core);
    for test_core in cores {
        test_core.stop().await;
    }
}

/// A core that took the connection but never answers (frozen, cut off, or
/// one that listened before it could serve): a call that went to it is
/// repeated on another core within seconds, once its connection answers no
/// ping, not after the whole call timeout of 15 s.
#[tokio::test]
async fn a_core_that_takes_connections_but_never_answers_costs_seconds_not_the_call_timeout() {
    let core = TestCore::start(&Backend::Sqlite, NOW).await;
    // The kernel completes connections to a listener nobody accepts from.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addresses = vec![silent.local_addr().unwrap(), core.addr];
    let resolve: Resolve = Arc::new(move |_, _| {
        let found = addresses.clone();
        Box::pin(async move { Ok(found) })
    });
    let balanced =
        Core::connect_balanced("http://cores.test:50051", resolve, RESOLVE_EVERY).unwrap();
    let started = std::time::Instant::now();
    calls_as(&balanced, "anna", 4).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(8), "four calls took {took:?}");
    assert!(has_seen(&core, "anna").await);
    drop(silent);
}

/// A stand-in for a core that answers every call UNAVAILABLE and counts it
/// by its path: with `storage`, as core answers when its storage fails the
/// call it started (its connections to the database hang while another
/// core's do not, as after a restart of the database); without, as a
/// proxy in front of a core might.
async fn core_answering_unavailable(storage: bool) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let counted = seen.clone();
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        counted.lock().unwrap().push(uri.path().to_owned());
        let mark = storage.then_some(hado_proto::metadata::STORAGE_FAILED);
        async move { (unavailable(mark), "") }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (address, seen)
}

/// The headers of a gRPC answer UNAVAILABLE, with core's `mark` if any.
fn unavailable(mark: Option<&'static str>) -> axum::http::HeaderMap {
    let mut headers = axum::http::HeaderMap::new();
    headers.insert("content-type", "application/grpc".parse().unwrap());
    headers.insert("grpc-status", "14".parse().unwrap());
    headers.insert("grpc-message", "unavailable".parse().unwrap());
    if let Some(mark) = mark {
        headers.insert(mark, "unavailable".parse().unwrap());
    }
    headers
}

/// A gateway balanced over these addresses.
fn balanced_over(addresses: Vec<SocketAddr>) -> Core {
    balanced_over_what(&Arc::new(Mutex::new(addresses))).0
}

/// A gateway balanced over the addresses `answer` holds, as they change;
/// and how many times it has asked for them.
fn balanced_over_what(answer: &Arc<Mutex<Vec<SocketAddr>>>) -> (Core, Arc<AtomicUsize>) {
    let (answer, asked) = (answer.clone(), Arc::new(AtomicUsize::new(0)));
    let counted = asked.clone();
    let resolve: Resolve = Arc::new(move |_, _| {
        // Counted as the answer is read, so that a count taken after a
        // change names an answer read after it.
        let addresses = answer.lock().unwrap();
        counted.fetch_add(1, Ordering::SeqCst);
        let found = addresses.clone();
        Box::pin(async move { Ok(found) })
    });
    let core = Core::connect_balanced("http://cores.test:50051", resolve, RESOLVE_EVERY).unwrap();
    (core, asked)
}

/// Makes the name resolve to `addresses`, and returns once the gateway
/// holds them: the answer read after the change has been applied when
/// the gateway asks once more.
async fn resolve_to(
    answer: &Mutex<Vec<SocketAddr>>,
    asked: &AtomicUsize,
    addresses: Vec<SocketAddr>,
) {
    *answer.lock().unwrap() = addresses;
    let after = asked.load(Ordering::SeqCst) + 2;
    while asked.load(Ordering::SeqCst) < after {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Hits on the stand-ins whose paths end with `method`.
fn hits(seen: &[&Arc<Mutex<Vec<String>>>], method: &str) -> usize {
    seen.iter()
        .map(|one| one.lock().unwrap().iter().filter(|path| path.ends_with(method)).count())
        .sum()
}

/// A call core answered UNAVAILABLE after starting it, as its storage
/// failed under it, is repeated on another core when repeating it changes
/// nothing: a read, an upsert by its key. Any other call is answered as it
/// was, as it may have been done; and so is an UNAVAILABLE that does not
/// say it is core's storage.
#[tokio::test]
async fn a_repeatable_call_a_core_could_not_store_is_repeated_on_another_core() {
    let core = TestCore::start(&Backend::Sqlite, NOW).await;
    let (failing, seen) = core_answering_unavailable(true).await;
    let balanced = balanced_over(vec![failing, core.addr]);

    // Every read is answered, half of them after the failing core's refusal.
    calls_as(&balanced, "anna", 10).await;
    assert!(hits(&[&seen], "/GetProfile") > 0, "no read went to the failing core first");
    let mut inbox = InboxClient::with_interceptor(
        balanced.channel(),
        Credential::gateway(GATEWAY_TOKEN, "anna").unwrap(),
    );
    for _ in 0..10 {
        inbox.get_inbox(GetInboxRequest::default()).await.expect("the page is read elsewhere");
    }
    assert!(hits(&[&seen], "/GetInbox") > 0, "no page went to the failing core first");

    // A create with an idempotency key, which core does once per key, is
    // repeated; the key is what the gateways send with every create.
    for index in 0..10 {
        let fields = hado_proto::v1::EventFields {
            title: format!("Keyed {index}"),
            due_at: "2027-03-14".into(),
            ..Default::default()
        };
        inbox.create_event(hado_gateway::cores::once(fields)).await.expect("created elsewhere");
    }
    let keyed = hits(&[&seen], "/CreateEvent");
    assert!(keyed > 0, "no keyed create went to the failing core first");

    // A create without an idempotency key is not repeated: those the
    // failing core took are answered UNAVAILABLE.
    let mut refused = 0;
    for index in 0..10 {
        let fields = hado_proto::v1::EventFields {
            title: format!("Created {index}"),
            due_at: "2027-03-14".into(),
            ..Default::default()
        };
        match inbox.create_event(fields).await {
            Ok(_) => {}
            Err(status) => {
                assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
                refused += 1;
            }
        }
    }
    let taken = hits(&[&seen], "/CreateEvent") - keyed;
    assert!(taken > 0, "no create went to the failing core");
    assert_eq!(refused, taken, "a create the failing core took was repeated elsewhere");

    // An UNAVAILABLE that is not core's storage is not repeated.
    let (proxy, proxied) = core_answering_unavailable(false).await;
    let balanced = balanced_over(vec![proxy, core.addr]);
    let mut inbox = InboxClient::with_interceptor(
        balanced.channel(),
        Credential::gateway(GATEWAY_TOKEN, "anna").unwrap(),
    );
    let mut refused = 0;
    for _ in 0..10 {
        if inbox.get_profile(GetProfileRequest::default()).await.is_err() {
            refused += 1;
        }
    }
    assert!(refused > 0 && refused == hits(&[&proxied], "/GetProfile"), "{refused} refused");
}

/// A core that fails its calls gets no more than its turn of them: looking
/// for another core to send a failed call to takes no turn, so the next
/// call still goes to the core after it, not back to the failing one.
#[tokio::test]
async fn a_core_that_fails_its_calls_gets_only_its_turn_of_the_next() {
    let cores = [
        TestCore::start(&Backend::Sqlite, NOW).await,
        TestCore::start(&Backend::Sqlite, NOW).await,
    ];
    let (failing, seen) = core_answering_unavailable(true).await;
    let balanced = balanced_over(vec![failing, cores[0].addr, cores[1].addr]);
    const CALLS: usize = 30;
    calls_as(&balanced, "anna", CALLS).await;
    let first_tries = hits(&[&seen], "/GetProfile");
    assert!(
        (1..=CALLS / 3 + 1).contains(&first_tries),
        "{first_tries} of {CALLS} calls went to the failing core first"
    );
}

/// A call is not sent twice to one address, even when that address left
/// and came back while the call was under way: the gateway then holds a new
/// member for it, the same core. Here the core refuses each call before
/// starting it (`hado-not-started`), and drops out of the name's answer and
/// back in first, as a core that restarts does.
#[tokio::test]
async fn a_call_is_not_sent_again_to_an_address_that_left_and_came_back() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let flapping = listener.local_addr().unwrap();
    let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let answer: Arc<Mutex<Vec<SocketAddr>>> = Arc::new(Mutex::new(vec![flapping]));
    let (balanced, asked) = balanced_over_what(&answer);
    let seen = Arc::new(Mutex::new(0usize));
    let (changes, counted) = (answer.clone(), seen.clone());
    let other = elsewhere.local_addr().unwrap();
    let app = axum::Router::new().fallback(move || {
        let (changes, counted, asked) = (changes.clone(), counted.clone(), asked.clone());
        async move {
            *counted.lock().unwrap() += 1;
            resolve_to(&changes, &asked, vec![other]).await;
            resolve_to(&changes, &asked, vec![flapping]).await;
            (unavailable(Some(hado_proto::metadata::NOT_STARTED)), "")
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let mut inbox = InboxClient::with_interceptor(
        balanced.channel(),
        Credential::gateway(GATEWAY_TOKEN, "anna").unwrap(),
    );
    let call = inbox.get_profile(GetProfileRequest::default());
    let status = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call ends")
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    assert_eq!(*seen.lock().unwrap(), 1, "the call went to the same core again");
}

/// A call goes to a second core at most once, however many cores fail it.
#[tokio::test]
async fn a_call_core_could_not_store_is_sent_again_once() {
    let mut seen = Vec::new();
    let mut addresses = Vec::new();
    for _ in 0..3 {
        let (address, one) = core_answering_unavailable(true).await;
        addresses.push(address);
        seen.push(one);
    }
    let balanced = balanced_over(addresses);
    let mut inbox = InboxClient::with_interceptor(
        balanced.channel(),
        Credential::gateway(GATEWAY_TOKEN, "anna").unwrap(),
    );
    const CALLS: usize = 50;
    for _ in 0..CALLS {
        let status = inbox.get_profile(GetProfileRequest::default()).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    }
    assert_eq!(hits(&seen.iter().collect::<Vec<_>>(), "/GetProfile"), 2 * CALLS);
}

/// When every core fails the calls it starts (a database down for all, a
/// pool swamped by a flood), the gateway does not ask twice for each call:
/// what it sends again stays within its budget, a fifth of the calls and
/// a reserve of a hundred in any 10 s.
#[tokio::test]
async fn calls_sent_again_stay_within_a_budget_when_every_core_fails_them() {
    let (first, first_seen) = core_answering_unavailable(true).await;
    let (second, second_seen) = core_answering_unavailable(true).await;
    let balanced = balanced_over(vec![first, second]);
    let mut inbox = InboxClient::with_interceptor(
        balanced.channel(),
        Credential::gateway(GATEWAY_TOKEN, "anna").unwrap(),
    );
    const CALLS: usize = 500;
    let started = std::time::Instant::now();
    for _ in 0..CALLS {
        let status = inbox.get_profile(GetProfileRequest::default()).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    }
    // The reserve is for each 10 s: a slow machine's run spans more.
    let windows = 1 + started.elapsed().as_secs() as usize / 10;
    let again = hits(&[&first_seen, &second_seen], "/GetProfile") - CALLS;
    assert!(again <= 100 * windows + CALLS / 5, "{again} of {CALLS} calls were sent again");
    // Within one window, the reserve and a fifth of the calls are all spent.
    if windows == 1 {
        assert!(again + 1 >= 100 + CALLS / 5, "only {again} of {CALLS} calls were sent again");
    }
}

/// A failed call with no other core to try spends nothing of the budget:
/// a lone core failing for a while leaves the gateway its full budget for
/// when a second core joins.
#[tokio::test]
async fn a_call_with_no_other_core_left_spends_nothing_of_the_budget() {
    let (first, first_seen) = core_answering_unavailable(true).await;
    let (second, second_seen) = core_answering_unavailable(true).await;
    let answer: Arc<Mutex<Vec<SocketAddr>>> = Arc::new(Mutex::new(vec![first]));
    let (balanced, asked) = balanced_over_what(&answer);
    let mut inbox = InboxClient::with_interceptor(
        balanced.channel(),
        Credential::gateway(GATEWAY_TOKEN, "anna").unwrap(),
    );
    for _ in 0..600 {
        inbox.get_profile(GetProfileRequest::default()).await.unwrap_err();
    }
    assert_eq!(hits(&[&first_seen], "/GetProfile"), 600, "one core, one try a call");

    resolve_to(&answer, &asked, vec![first, second]).await;
    const CALLS: usize = 50;
    for _ in 0..CALLS {
        inbox.get_profile(GetProfileRequest::default()).await.unwrap_err();
    }
    let tried = hits(&[&first_seen, &second_seen], "/GetProfile") - 600;
    assert_eq!(tried, 2 * CALLS, "once a second core joined, every call was tried on both");
}
