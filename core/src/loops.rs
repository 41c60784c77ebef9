//! Owns what every background loop of core does between its passes: wait
//! until its next due moment, or until a write wakes it, or until core stops.

use std::time::Duration;

use tokio::sync::{Notify, watch};

/// Waits `pause`, or until `woken` is notified; false when `stop` says the
/// loop must end instead.
pub(crate) async fn rest(
    pause: Duration,
    woken: &Notify,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(pause) => {}
        _ = woken.notified() => {}
        _ = stop.changed() => return false,
    }
    !*stop.borrow()
}
