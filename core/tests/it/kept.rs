//! Each core keeps who a token, a source and a person are in memory
//! (`engine::kept`). On Postgres, where several cores share one database,
//! a change made through any core reaches every other within a second, and
//! a core whose listening connection dropped forgets everything it kept.

use std::time::{Duration, Instant};

use sqlx::{Connection, PgConnection};
use tonic::Code;

use hado_proto::v1::{
    EventState, GetProfileRequest, UpdateProfileRequest, UpsertEventsRequest, UserLogin,
};
use hado_testing::{Backend, TestCore};

const NOW: &str = "2026-12-01T10:00:00Z";

/// How long a change may take to reach another core.
const WITHIN: Duration = Duration::from_secs(1);

/// Whether `core` takes the agent token, or the code it refuses it with.
async fn answer(core: &TestCore, token: &str) -> Result<(), Code> {
    core.agent(token)
        .get_profile(GetProfileRequest::default())
        .await
        .map(|_| ())
        .map_err(|status| status.code())
}

/// Waits until `check` holds, for at most [`WITHIN`]; fails naming `what`.
async fn within_a_second<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < WITHIN, "{what}: not after {:?}", started.elapsed());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A connection of the test's own to the cores' database.
async fn database(core: &TestCore) -> PgConnection {
    PgConnection::connect(core.database_url()).await.expect("the test reaches the database")
}

/// Runs `statement` behind the cores' backs: with the triggers off, as a
/// change made by hand past them would be, so no core hears of it. A core
/// that answers as before kept what it had read.
async fn unheard(connection: &mut PgConnection, statement: &str) {
    let sql = format!(
        "SET session_replication_role = replica; {statement}; SET session_replication_role = DEFAULT;"
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut *connection).await.unwrap();
}

/// Deletes every agent token behind the cores' backs ([`unheard`]).
async fn delete_tokens_unheard(connection: &mut PgConnection) {
    unheard(connection, "DELETE FROM agent_tokens").await;
}

/// The server process of the core's listening connection, once there is one.
async fn listener_pid(connection: &mut PgConnection) -> Option<i32> {
    sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'hado-core-kept'",
    )
    .fetch_optional(&mut *connection)
    .await
    .unwrap()
}

/// How many cores listen for changes on the database.
async fn listeners(connection: &mut PgConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'hado-core-kept'",
    )
    .fetch_one(&mut *connection)
    .await
    .unwrap()
}

/// Waits until `cores` cores listen for changes, for at most ten seconds.
async fn listening(connection: &mut PgConnection, cores: i64) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while listeners(connection).await < cores {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("every core listens for changes");
}

/// Issues `login`'s agent token on `core`, and waits for the change's
/// notice to reach every core listening (the issuing one forgot at once;
/// each forgets again when the notice arrives), so that what a core reads
/// next stays kept.
async fn issue(core: &TestCore, login: &str) -> String {
    let token = core
        .admin()
        .issue_agent_token(UserLogin { login: login.into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    tokio::time::sleep(Duration::from_millis(200)).await;
    token
}

/// Three cores on one Postgres database, the last two replicas of the
/// first, and a connection of the test's own; none without Postgres.
async fn three_cores(test: &str) -> Option<(TestCore, TestCore, TestCore, PgConnection)> {
    let backend = Backend::postgres(test)?;
    let first = TestCore::start(&backend, NOW).await;
    let (second, third) = (first.replica().await, first.replica().await);
    let connection = database(&first).await;
    Some((first, second, third, connection))
}

async fn stop(cores: [TestCore; 3]) {
    for core in cores.into_iter().rev() {
        core.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_one_core_reaches_every_other_within_a_second() {
    let Some((first, second, third, mut connection)) =
        three_cores("a_change_on_one_core_reaches_every_other_within_a_second").await
    else {
        return;
    };
    let cores = [&first, &second, &third];

    // Every core keeps the token once it has read it: deleted behind their
    // backs, it still works on each.
    let token = issue(&first, "anna").await;
    for core in cores {
        assert_eq!(answer(core, &token).await, Ok(()));
    }
    delete_tokens_unheard(&mut connection).await;
    for core in cores {
        assert_eq!(answer(core, &token).await, Ok(()), "each core kept the token");
    }

    // Revoked on the first core while an agent calls the others.
    let token = issue(&first, "anna").await;
    for core in cores {
        assert_eq!(answer(core, &token).await, Ok(()));
    }
    first.admin().revoke_agent_token(UserLogin { login: "anna".into() }).await.unwrap();
    assert_eq!(answer(&first, &token).await, Err(Code::Unauthenticated), "at once where revoked");
    for core in [&second, &third] {
        within_a_second("a revoked token stops on another core", || async {
            answer(core, &token).await == Err(Code::Unauthenticated)
        })
        .await;
    }

    // A new zone chosen through the first core: the agent's profile shows it
    // on every core, and so does the web's (the person kept by login).
    let token = issue(&first, "anna").await;
    for core in cores {
        assert_eq!(answer(core, &token).await, Ok(()));
        core.inbox_as("anna").get_profile(GetProfileRequest::default()).await.unwrap();
    }
    let zone = UpdateProfileRequest { tz: Some("Asia/Tokyo".into()), ..Default::default() };
    first.inbox_as("anna").update_profile(zone).await.unwrap();
    for core in [&second, &third] {
        within_a_second("a new zone reaches another core", || async {
            let agent = core.agent(&token).get_profile(GetProfileRequest::default()).await;
            let web = core.inbox_as("anna").get_profile(GetProfileRequest::default()).await;
            agent.unwrap().into_inner().tz == "Asia/Tokyo"
                && web.unwrap().into_inner().tz == "Asia/Tokyo"
        })
        .await;
    }

    stop([first, second, third]).await;
}

/// An app's OAuth access token, kept by every core as an agent token is,
/// stops on every core within a second when it ends on one: replaced by a
/// refresh, or its app disconnected. A refresh forgets only that app's
/// tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_access_token_ended_on_one_core_stops_on_every_other_within_a_second() {
    use crate::oauth::{REDIRECT, code, exchange, refresh, register, works};
    let Some((first, second, third, mut connection)) =
        three_cores("an_access_token_ended_on_one_core_stops_on_every_other_within_a_second").await
    else {
        return;
    };
    let cores = [&first, &second, &third];
    let metadata = format!(r#"{{"client_name":"Probe","redirect_uris":["{REDIRECT}"]}}"#);
    let client_id = register(&first, &metadata).await.unwrap();
    let sign_in =
        || async { exchange(&first, &client_id, &code(&first, &client_id).await).await.unwrap() };

    // Every core keeps the token once it has read it: deleted behind their
    // backs, it still works on each.
    let kept = sign_in().await;
    for core in cores {
        assert!(works(core, &kept.access_token).await);
    }
    unheard(&mut connection, "DELETE FROM oauth_tokens WHERE kind = 'access'").await;
    for core in cores {
        assert!(works(core, &kept.access_token).await, "each core kept the access token");
    }
    // Made-up codes and refresh tokens change nothing, so no core forgets:
    // whoever sends them cannot empty the cores' memory.
    assert!(refresh(&first, &client_id, "hado_rt_made_up").await.is_err());
    assert!(exchange(&first, &client_id, "hado_code_made_up").await.is_err());
    assert!(works(&first, &kept.access_token).await, "a made-up token emptied the memory");

    // Replaced by a refresh on the first core while the app calls the others.
    let signed_in = sign_in().await;
    for core in cores {
        assert!(works(core, &signed_in.access_token).await);
    }
    let refreshed = refresh(&first, &client_id, &signed_in.refresh_token).await.unwrap();
    assert!(!works(&first, &signed_in.access_token).await, "at once where refreshed");
    for core in [&second, &third] {
        within_a_second("a replaced access token stops on another core", || async {
            !works(core, &signed_in.access_token).await
        })
        .await;
    }
    // Only that app's grant was forgotten: the first sign-in's token,
    // deleted unheard above, is still kept on every core.
    for core in cores {
        assert!(works(core, &kept.access_token).await, "a refresh emptied a core's memory");
    }

    // The app disconnected on the first core.
    for core in cores {
        assert!(works(core, &refreshed.access_token).await);
    }
    let inbox = first.inbox_as("anna");
    let apps = inbox
        .clone()
        .list_connected_apps(hado_proto::v1::ListConnectedAppsRequest {})
        .await
        .unwrap()
        .into_inner()
        .apps;
    for app in apps {
        let id = hado_proto::v1::ConnectedAppId { id: app.id };
        assert!(inbox.clone().disconnect_app(id).await.unwrap().into_inner().disconnected);
    }
    assert!(!works(&first, &refreshed.access_token).await, "at once where disconnected");
    for core in [&second, &third] {
        within_a_second("a disconnected app's token stops on another core", || async {
            !works(core, &refreshed.access_token).await
        })
        .await;
    }

    stop([first, second, third]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_core_whose_listener_dropped_forgets_everything_it_kept() {
    let Some(backend) =
        Backend::postgres("a_core_whose_listener_dropped_forgets_everything_it_kept")
    else {
        return;
    };
    let core = TestCore::start(&backend, NOW).await;
    let mut connection = database(&core).await;
    let started = Instant::now();
    let old_listener = loop {
        if let Some(pid) = listener_pid(&mut connection).await {
            break pid;
        }
        assert!(started.elapsed() < WITHIN, "the core listens for changes");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    let token = issue(&core, "anna").await;
    assert_eq!(answer(&core, &token).await, Ok(()));
    delete_tokens_unheard(&mut connection).await;
    assert_eq!(answer(&core, &token).await, Ok(()), "the core kept the token");

    // The listening connection is cut: the core cannot know what changed
    // while it was down, so it forgets the token and reads it again.
    let ended: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(old_listener)
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert!(ended);
    within_a_second("a core whose listener dropped forgets what it kept", || async {
        answer(&core, &token).await == Err(Code::Unauthenticated)
    })
    .await;

    // It listens again on a connection of its own, and hears changes.
    let started = Instant::now();
    loop {
        match listener_pid(&mut connection).await {
            Some(pid) if pid != old_listener => break,
            _ => {
                assert!(started.elapsed() < Duration::from_secs(5), "the core listens again");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    let token = issue(&core, "anna").await;
    assert_eq!(answer(&core, &token).await, Ok(()));
    sqlx::query("DELETE FROM agent_tokens").execute(&mut connection).await.unwrap();
    within_a_second("a token deleted in the database stops", || async {
        answer(&core, &token).await == Err(Code::Unauthenticated)
    })
    .await;

    drop(connection);
    core.stop().await;
}

/// A save that changes nothing a core keeps, or a revoke that finds no
/// token, tells no core to forget: a person saving the same profile or
/// revoking again and again cannot empty every core's memory. The notices are read in order, so the first heard after
/// an unchanged save must be the real change that follows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_real_change_tells_the_cores_to_forget() {
    use hado_proto::v1::SourceName;
    use hado_storage::changes::{ChangeFeed, Heard};
    let Some(backend) = Backend::postgres("only_a_real_change_tells_the_cores_to_forget") else {
        return;
    };
    let core = TestCore::start(&backend, NOW).await;
    core.admin().create_source(SourceName { name: "docs".into() }).await.unwrap();
    let profile = || UpdateProfileRequest { tz: Some("Asia/Tokyo".into()), ..Default::default() };
    core.inbox_as("anna").update_profile(profile()).await.unwrap();
    let feed = ChangeFeed::at(core.database_url()).unwrap();
    let mut listening = feed.listen().await.unwrap();

    core.inbox_as("anna").update_profile(profile()).await.unwrap();
    // anna has no agent token: revoking it changes nothing.
    core.admin().revoke_agent_token(UserLogin { login: "anna".into() }).await.unwrap();
    core.admin().rotate_source_token(SourceName { name: "docs".into() }).await.unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(5), listening.next()).await.unwrap();
    assert!(matches!(&heard, Heard::Change(table) if table == "sources"), "{heard:?}");

    // A real change of the person still tells every core.
    let zone = UpdateProfileRequest { tz: Some("Europe/Paris".into()), ..Default::default() };
    core.inbox_as("anna").update_profile(zone).await.unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(5), listening.next()).await.unwrap();
    assert!(matches!(&heard, Heard::Change(table) if table == "users"), "{heard:?}");

    drop(listening);
    core.stop().await;
}

/// The state a push on `core` gives anna's new event due on the 1st (a
/// date): today where her day is the 1st, not yet where it is the 30th.
async fn pushed_state(core: &TestCore, source: &str, source_ref: &str) -> EventState {
    let event = hado_testing::source_event("anna", source_ref, "Visa", "2026-12-01");
    let mut ingest = core.ingest(source);
    let reply = ingest.upsert_events(UpsertEventsRequest { events: vec![event] }).await;
    let result = reply.expect("the push goes through").into_inner().results[0];
    EventState::try_from(result.state).expect("a known state")
}

/// A source's push on Postgres reads its person as it writes, holding her
/// until it commits, rather than taking her from what its core keeps: a
/// core hears of a new zone only after it is committed, and a push written
/// meanwhile in the old zone would keep the old zone's day. So a zone
/// moved even behind every core's back reaches the next push on each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_reads_its_person_as_it_writes_on_every_core() {
    let Some((first, second, third, mut connection)) =
        three_cores("a_push_reads_its_person_as_it_writes_on_every_core").await
    else {
        return;
    };
    let cores = [&first, &second, &third];
    listening(&mut connection, 3).await;
    let source = first.source_token("docs").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    // At 10:00 UTC on the 1st, an event due on the 1st is today's. The
    // first push makes anna; each core keeps her from its next.
    for (n, core) in cores.iter().enumerate() {
        for push in ["first", "again"] {
            let state = pushed_state(core, &source, &format!("{push}-{n}")).await;
            assert_eq!(state, EventState::Today);
        }
    }

    // Moved behind the cores' backs to Kiritimati (UTC+14, already the
    // 2nd, so the event is overdue): no core hears it, and each core's
    // next push is in the new zone.
    unheard(
        &mut connection,
        "UPDATE users SET tz = 'Pacific/Kiritimati', tz_chosen = 1 WHERE login = 'anna'",
    )
    .await;
    for (n, core) in cores.iter().enumerate() {
        let state = pushed_state(core, &source, &format!("moved-{n}")).await;
        assert_eq!(state, EventState::Overdue, "core {n} pushed in the zone it kept");
    }
    stop([first, second, third]).await;
}

/// Disconnecting an app that is not one's own changes nothing and empties
/// nothing: bob naming anna's grant cannot make a core forget her app's
/// token (deleted here behind the core's back, so only memory answers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_persons_disconnect_forgets_nothing() {
    use crate::oauth::{REDIRECT, code, exchange, register, works};
    let Some(backend) = Backend::postgres("another_persons_disconnect_forgets_nothing") else {
        return;
    };
    let core = TestCore::start(&backend, NOW).await;
    let mut connection = database(&core).await;
    listening(&mut connection, 1).await;
    let metadata = format!(r#"{{"client_name":"Probe","redirect_uris":["{REDIRECT}"]}}"#);
    let client_id = register(&core, &metadata).await.unwrap();
    let signed_in = exchange(&core, &client_id, &code(&core, &client_id).await).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(works(&core, &signed_in.access_token).await);
    let grant: i64 =
        sqlx::query_scalar("SELECT id FROM oauth_grants").fetch_one(&mut connection).await.unwrap();
    unheard(&mut connection, "DELETE FROM oauth_tokens WHERE kind = 'access'").await;
    assert!(works(&core, &signed_in.access_token).await, "the core kept the token");

    let mut bob = core.inbox_as("bob");
    let reply = bob.disconnect_app(hado_proto::v1::ConnectedAppId { id: grant }).await;
    assert!(!reply.unwrap().into_inner().disconnected, "anna's app is not bob's");
    assert!(works(&core, &signed_in.access_token).await, "bob's disconnect emptied the memory");
    core.stop().await;
}

/// On SQLite nothing tells a core of a change but the core that wrote it.
/// A change given up while its commit was still on the writer's way (its
/// caller went away) must keep the core from keeping anything until the
/// writer is free: a read meanwhile can still find what the commit ends.
/// The test holds the one writer to stand for that commit, and lands it
/// by hand: the change is given up while it waits for the writer, as a
/// commit given up on its way to the writer's thread waits behind it.
#[tokio::test]
async fn a_change_given_up_on_sqlite_keeps_nothing_until_its_writer_is_free() {
    let test = hado_testing::TestEngine::start(&Backend::Sqlite, NOW).await;
    let engine = &test.engine;
    let anna = engine.user_for_login("anna").await.unwrap();
    let token = engine.issue_agent_token(&anna).await.unwrap();
    let held = engine.store().writer().acquire().await.unwrap();

    // A new token asked for, and given up while it waits on the writer.
    let mut issue = Box::pin(engine.issue_agent_token(&anna));
    let waker = std::task::Waker::noop();
    let polled = issue.as_mut().poll(&mut std::task::Context::from_waker(waker));
    assert!(polled.is_pending(), "the writer is held");
    drop(issue);

    // Read before the commit lands: the old token still names anna.
    let found = engine.agent_token_user(&token).await.unwrap();
    assert_eq!(found.map(|user| user.id), Some(anna.id));

    // The commit lands, and the writer is free again.
    let mut held = held;
    sqlx::query("DELETE FROM agent_tokens").execute(&mut *held).await.unwrap();
    drop(held);
    within_a_second("the ended token is refused", || async {
        engine.agent_token_user(&token).await.unwrap().is_none()
    })
    .await;

    // Once the writer is settled (its task may end a moment after the
    // token is first refused), the memory is used again: a token read
    // after its change landed is kept, deleted behind the core's back.
    within_a_second("a token is answered from memory again", || async {
        let token = engine.issue_agent_token(&anna).await.unwrap();
        assert!(engine.agent_token_user(&token).await.unwrap().is_some());
        sqlx::query("DELETE FROM agent_tokens").execute(engine.store().writer()).await.unwrap();
        let kept = engine.agent_token_user(&token).await.unwrap();
        kept.is_some_and(|user| user.id == anna.id)
    })
    .await;
    test.stop().await;
}

/// Issuing or revoking a person's agent token forgets only that person's
/// agent tokens, on every core: another person's token, deleted behind the
/// cores' backs, is still answered from memory afterwards, while the
/// person's old token stops everywhere within a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_token_issued_or_revoked_forgets_only_its_persons_on_every_core() {
    let Some((first, second, third, mut connection)) =
        three_cores("an_agent_token_issued_or_revoked_forgets_only_its_persons_on_every_core")
            .await
    else {
        return;
    };
    let cores = [&first, &second, &third];
    let bobs = issue(&first, "bob").await;
    let annas = issue(&first, "anna").await;
    for core in cores {
        assert_eq!(answer(core, &bobs).await, Ok(()));
        assert_eq!(answer(core, &annas).await, Ok(()));
    }
    unheard(
        &mut connection,
        "DELETE FROM agent_tokens WHERE user_id = (SELECT id FROM users WHERE login = 'bob')",
    )
    .await;

    // Anna's new token replaces hers on the first core; then she revokes it.
    let new = issue(&first, "anna").await;
    stops_everywhere(cores, &annas, &bobs, "a replaced token").await;
    for core in cores {
        assert_eq!(answer(core, &new).await, Ok(()));
    }
    first.admin().revoke_agent_token(UserLogin { login: "anna".into() }).await.unwrap();
    stops_everywhere(cores, &new, &bobs, "a revoked token").await;
    stop([first, second, third]).await;
}

/// `token`, ended on the first of `cores`, is refused there at once and on
/// the others within a second, and bob's token, deleted behind the cores'
/// backs, is still answered from every core's memory after it.
async fn stops_everywhere(cores: [&TestCore; 3], token: &str, bobs: &str, why: &str) {
    assert_eq!(answer(cores[0], token).await, Err(Code::Unauthenticated), "{why}, at once");
    for core in &cores[1..] {
        within_a_second(&format!("{why} stops on another core"), || async {
            answer(core, token).await == Err(Code::Unauthenticated)
        })
        .await;
    }
    for core in cores {
        assert_eq!(answer(core, bobs).await, Ok(()), "{why}: a core forgot bob's token");
    }
}
