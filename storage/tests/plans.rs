//! Storage over a real Postgres: what each pooled connection is set up to do.

use hado_storage::Store;
use hado_testing::{Backend as TestBackend, TestDatabase};

#[tokio::test]
async fn postgres_plans_every_statement_for_its_values() {
    let Some(backend) = TestBackend::postgres("postgres_plans_every_statement_for_its_values")
    else {
        return;
    };
    let database = TestDatabase::create(&backend).await;
    let store = Store::connect(&database.url).await.unwrap();
    // Every connection of the pool, not only the first one made.
    let held: Vec<_> =
        futures::future::try_join_all((0..3).map(|_| store.reader().acquire())).await.unwrap();
    for mut connection in held {
        let mode: String =
            sqlx::query_scalar("SHOW plan_cache_mode").fetch_one(&mut *connection).await.unwrap();
        assert_eq!(mode, "force_custom_plan");
    }
    store.close().await;
    database.drop_now().await;
}
