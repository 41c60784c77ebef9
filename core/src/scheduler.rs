//! Owns the scheduler loop: it wakes at the earliest `next_check_at` (or
//! after any write), advances every due event, and sleeps again. Each pass
//! costs O(due rows), through the partial index on `next_check_at`; a wake
//! with nothing due costs one read of that index.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use hado_engine::Engine;

/// Events advanced per transaction; a larger backlog takes several.
pub(crate) const CLAIM_BATCH: i64 = 500;

/// The longest the loop sleeps without looking, so that writes made by other
/// core replicas are never missed for long.
const MAX_IDLE: Duration = Duration::from_secs(30);

/// How long to back off after a storage failure.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(2);

/// How long to sleep before the next check, at most [`MAX_IDLE`].
fn until(engine: &Engine, next: Option<chrono::DateTime<chrono::Utc>>) -> Duration {
    next.map_or(MAX_IDLE, |next| {
        (next - engine.now()).to_std().unwrap_or(Duration::ZERO).min(MAX_IDLE)
    })
}

/// One timed pass over everything due; returns how long to sleep after it.
async fn pass(engine: &Engine) -> Duration {
    let started = std::time::Instant::now();
    let pass = drain(engine).await;
    metrics::histogram!("hado_scheduler_pass_seconds").record(started.elapsed().as_secs_f64());
    match pass {
        Ok(advanced) => {
            metrics::counter!("hado_scheduler_advanced_total").increment(advanced as u64);
            if advanced > 0 {
                tracing::debug!(advanced, "scheduler pass");
            }
            let alarm = engine.alarm();
            alarm.reading();
            let earliest = engine.earliest_check().await;
            alarm.set(earliest.as_ref().ok().copied().flatten());
            match earliest {
                // Another core holds the due rows (Postgres): look again soon, not at once.
                Ok(Some(next)) if advanced == 0 && next <= engine.now() => BUSY_ELSEWHERE,
                Ok(next) => until(engine, next),
                Err(error) => {
                    tracing::warn!(%error, "scheduler could not read its next check");
                    RETRY_AFTER_FAILURE
                }
            }
        }
        Err(error) => {
            tracing::warn!(%error, "scheduler pass failed; retrying");
            RETRY_AFTER_FAILURE
        }
    }
}

/// How long to wait when the due rows are claimed by another core.
const BUSY_ELSEWHERE: Duration = Duration::from_millis(100);

/// Advances everything that is due now; returns how many events moved.
pub async fn drain(engine: &Engine) -> Result<usize, hado_engine::error::CoreError> {
    let mut total = 0;
    loop {
        let advanced = engine.advance_due(CLAIM_BATCH).await?;
        total += advanced;
        if advanced < CLAIM_BATCH as usize {
            return Ok(total);
        }
    }
}

/// Runs until `stop` turns true.
pub(crate) async fn run(engine: Arc<Engine>, mut stop: watch::Receiver<bool>) {
    let alarm = engine.alarm();
    // The first pass runs whatever came due while core was down.
    let mut starting = true;
    loop {
        alarm.reading();
        let earliest = engine.earliest_check().await;
        alarm.set(earliest.as_ref().ok().copied().flatten());
        let pause = match earliest {
            // Something is due: a pass, then sleep until the next check.
            Ok(earliest)
                if starting || earliest.is_some_and(|earliest| earliest <= engine.now()) =>
            {
                starting = false;
                let earliest = earliest.unwrap_or_else(|| engine.now());
                // How late the most overdue check is when the pass starts.
                let lag = (engine.now() - earliest).num_milliseconds().max(0) as f64 / 1000.0;
                metrics::gauge!("hado_scheduler_lag_seconds").set(lag);
                pass(&engine).await
            }
            // Woken by a write that made nothing due: one read, no pass, and
            // above all no write transaction beside the writes that woke it.
            Ok(next) => {
                metrics::gauge!("hado_scheduler_lag_seconds").set(0.0);
                until(&engine, next)
            }
            Err(error) => {
                tracing::warn!(%error, "scheduler could not read its next check");
                RETRY_AFTER_FAILURE
            }
        };
        if !hado_engine::loops::rest(pause, alarm.bell(), &mut stop).await {
            return;
        }
    }
}
