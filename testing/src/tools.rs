//! Owns whether an outside program a test needs is here: a test that cannot
//! run says so on a line of its own, and fails under CI instead.

use std::io::Write;

/// Whether an outside tool a test drives (a browser, a checker, an SDK) is
/// here. Without it the test is skipped with a line that bypasses the test
/// runner's capture; under CI it must be here, so a skip never passes there.
pub fn tool_available(test: &str, found: bool, install: &str) -> bool {
    if !found {
        assert!(std::env::var("CI").is_err(), "{test} needs {install} under CI");
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: needs {install}");
    }
    found
}

/// Whether `program` runs with `arguments` and succeeds.
pub fn runs(program: &str, arguments: &[&str]) -> bool {
    std::process::Command::new(program)
        .args(arguments)
        .output()
        .is_ok_and(|output| output.status.success())
}

/// Generates one `#[tokio::test]` per backend for each story function.
#[macro_export]
macro_rules! on_both_backends {
    ($($story:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $story() {
                    super::$story($crate::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $story() {
                    let test = concat!(module_path!(), "::", stringify!($story));
                    if let Some(backend) = $crate::Backend::postgres(test) {
                        super::$story(backend).await;
                    }
                }
            )*
        }
    };
}
