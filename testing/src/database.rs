//! Owns a test's fresh database: a SQLite file in its own folder always, a
//! Postgres database of its own when `HADO_TEST_POSTGRES_URL` is set, and
//! `on_both_backends!`, which runs a story on each.

use std::io::Write;

/// The variable that points the tests at a Postgres server.
pub(crate) const POSTGRES_VARIABLE: &str = "HADO_TEST_POSTGRES_URL";

/// Which database a test runs on.
#[derive(Clone, Debug)]
pub enum Backend {
    Sqlite,
    Postgres(String),
}

impl Backend {
    /// Postgres when its URL is set. Without it the test is skipped with a
    /// line that bypasses the test runner's capture, so the skip is seen;
    /// under CI a missing URL is a failure, never a silent skip.
    pub fn postgres(test: &str) -> Option<Self> {
        match std::env::var(POSTGRES_VARIABLE) {
            Ok(url) if !url.is_empty() => Some(Self::Postgres(url)),
            _ => {
                assert!(
                    std::env::var("CI").is_err(),
                    "{POSTGRES_VARIABLE} must be set under CI so that {test} runs on Postgres"
                );
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED {test} on Postgres: {POSTGRES_VARIABLE} is not set"
                );
                None
            }
        }
    }
}

/// A fresh database for one test, removed by [`TestDatabase::drop_now`], or
/// when it is dropped (a test that panicked leaves no database behind).
pub struct TestDatabase {
    pub url: String,
    admin_url: Option<String>,
    name: String,
    _folder: Option<tempfile::TempDir>,
}

impl TestDatabase {
    /// A fresh database. Every test starts here, so this also installs the
    /// TLS provider that the test's own HTTP clients need.
    pub async fn create(backend: &Backend) -> Self {
        hado_core::install_tls_provider();
        match backend {
            Backend::Sqlite => {
                let folder = tempfile::tempdir().expect("a temporary folder");
                let url = format!("sqlite://{}/hado.db", folder.path().display());
                Self { url, admin_url: None, name: String::new(), _folder: Some(folder) }
            }
            Backend::Postgres(admin_url) => {
                let name = format!("hado_test_{}", ulid::Ulid::new().to_string().to_lowercase());
                hado_storage::testing::create_database(admin_url, &name).await;
                let base = admin_url.rsplit_once('/').map(|(base, _)| base).unwrap_or(admin_url);
                Self {
                    url: format!("{base}/{name}"),
                    admin_url: Some(admin_url.clone()),
                    name,
                    _folder: None,
                }
            }
        }
    }

    /// The value of a SQL expression in this Postgres database, as text
    /// (empty for none): for a test that works the database behind core's
    /// back, as an operator would with `psql`.
    pub async fn postgres_text(&self, expression: &str) -> String {
        assert!(self.admin_url.is_some(), "postgres_text needs a Postgres database");
        hado_storage::testing::postgres_text(&self.url, expression).await
    }

    pub async fn drop_now(mut self) {
        if let Some(admin_url) = self.admin_url.take() {
            drop_database(&admin_url, &self.name).await;
        }
    }
}

impl Drop for TestDatabase {
    /// A Postgres database not yet dropped (its test panicked, or returned
    /// early) is dropped here, on a thread of its own: the test's runtime
    /// cannot be blocked on from inside it.
    fn drop(&mut self) {
        let Some(admin_url) = self.admin_url.take() else { return };
        let name = std::mem::take(&mut self.name);
        let dropping = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime to drop the test database");
            runtime.block_on(drop_database(&admin_url, &name));
        });
        let _ = dropping.join();
    }
}

async fn drop_database(admin_url: &str, name: &str) {
    hado_storage::testing::drop_database(admin_url, name).await;
}
