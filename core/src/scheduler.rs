//! Owns the scheduler loop: it wakes at the earliest `next_check_at` (or
//! after any write), advances every due event, and sleeps again. Each pass
//! costs O(due rows), through the partial index on `next_check_at`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::engine::Engine;

/// Events advanced per transaction; a larger backlog takes several.
pub const CLAIM_BATCH: i64 = 500;

/// The longest the loop sleeps without looking, so that writes made by other
/// core replicas are never missed for long.
const MAX_IDLE: Duration = Duration::from_secs(30);

/// How long to back off after a storage failure.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(2);

/// Advances everything that is due now; returns how many events moved.
pub async fn drain(engine: &Engine) -> Result<usize, crate::error::CoreError> {
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
pub async fn run(engine: Arc<Engine>, mut stop: watch::Receiver<bool>) {
    let wake = engine.wake_handle();
    loop {
        // How late the most overdue check is when the pass starts.
        if let Ok(Some(earliest)) = engine.earliest_check().await {
            let lag = (engine.now() - earliest).num_milliseconds().max(0) as f64 / 1000.0;
            metrics::gauge!("hado_scheduler_lag_seconds").set(lag);
        }
        let started = std::time::Instant::now();
        let pass = drain(&engine).await;
        metrics::histogram!("hado_scheduler_pass_seconds").record(started.elapsed().as_secs_f64());
        let pause = match pass {
            Ok(advanced) => {
                metrics::counter!("hado_scheduler_advanced_total").increment(advanced as u64);
                if advanced > 0 {
                    tracing::debug!(advanced, "scheduler pass");
                }
                match engine.earliest_check().await {
                    Ok(Some(next)) => (next - engine.now()).to_std().unwrap_or(Duration::ZERO).min(MAX_IDLE),
                    Ok(None) => MAX_IDLE,
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
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = wake.notified() => {}
            _ = stop.changed() => return,
        }
        if *stop.borrow() {
            return;
        }
    }
}
