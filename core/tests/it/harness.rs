//! The shared test harness cleans up after a failure too: a test that
//! panics leaves no Postgres database behind.

use sqlx::Connection;

use hado_testing::{Backend, TestDatabase};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_panics_leaves_no_database_behind() {
    let Some(backend) = Backend::postgres("harness::a_test_that_panics_leaves_no_database_behind")
    else {
        return;
    };
    let Backend::Postgres(admin_url) = backend.clone() else {
        unreachable!("Backend::postgres gives Postgres")
    };
    let (named, name) = tokio::sync::oneshot::channel();
    let failing = tokio::spawn(async move {
        let database = TestDatabase::create(&backend).await;
        named.send(database.url.rsplit('/').next().unwrap().to_owned()).unwrap();
        panic!("this panic is the test's own: a test failing with its database open");
    });
    assert!(failing.await.unwrap_err().is_panic());
    let name = name.await.unwrap();
    let mut connection = sqlx::PgConnection::connect(&admin_url).await.unwrap();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_database WHERE datname = $1")
        .bind(&name)
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(left, 0, "{name} is dropped with the test that made it");
}
