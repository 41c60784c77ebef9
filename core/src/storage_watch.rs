//! Owns whether core says its storage can be written: a probe writes the
//! liveness row every second ([`PROBE_EVERY`]), every quarter second while
//! storage is down ([`PROBE_WHILE_DOWN`]), and at once when a call has just
//! failed because storage was unavailable ([`StorageWatch::look_now`], rung
//! by `grpc::gate`). A probe whose write is slow also opens a connection of
//! its own, which a stopped or restarting server refuses at once. So `/up`
//! and core's health follow storage within a moment either way: NOT_SERVING
//! from the first write refused, SERVING again within a quarter second of
//! the database taking writes.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, watch};

use hado_engine::{Engine, StorageLook};

/// How often storage is probed while it can be written.
pub(crate) const PROBE_EVERY: Duration = Duration::from_secs(1);

/// How often storage that is down is probed.
pub(crate) const PROBE_WHILE_DOWN: Duration = Duration::from_millis(250);
/// A probe's write that takes longer than this also asks the server
/// directly whether it answers.
const SLOW_WRITE: Duration = Duration::from_millis(250);

/// What the gRPC edge knows of the probe: whether storage can be written,
/// and how to ask for a probe now.
#[derive(Clone, Debug)]
pub(crate) struct StorageWatch {
    pub(crate) available: watch::Receiver<bool>,
    look_now: Arc<Notify>,
}

impl StorageWatch {
    /// Asks for a probe now: a call has just failed as unavailable. Many
    /// calls failing together ask for one probe.
    pub(crate) fn look_now(&self) {
        self.look_now.notify_one();
    }
}

/// Starts the probe on `engine`'s storage until `stopped` turns true.
pub(crate) fn start(
    engine: Arc<Engine>,
    stopped: watch::Receiver<bool>,
) -> (StorageWatch, tokio::task::JoinHandle<()>) {
    let (available, receiver) = watch::channel(true);
    let look_now = Arc::new(Notify::new());
    let probing = tokio::spawn(probe(engine, available, look_now.clone(), stopped));
    (StorageWatch { available: receiver, look_now }, probing)
}

/// Probes and says whether storage can be written: false at once on an
/// error, or after two probes in a row that took too long (one slow probe
/// is a busy writer, not a lost one); true again at the first probe that
/// succeeds. Each change is logged once.
async fn probe(
    engine: Arc<Engine>,
    available: watch::Sender<bool>,
    look_now: Arc<Notify>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut slow_in_a_row = 0;
    let mut told = false;
    loop {
        let look = probe_once(&engine, told).await;
        let healthy = match &look {
            StorageLook::Fine => {
                slow_in_a_row = 0;
                true
            }
            StorageLook::Slow => {
                slow_in_a_row += 1;
                slow_in_a_row < 2 && *available.borrow()
            }
            StorageLook::Failed(_) => false,
        };
        if healthy != *available.borrow() {
            match &look {
                StorageLook::Failed(error) => {
                    tracing::error!(%error, "storage cannot be written; core reports NOT_SERVING until it can")
                }
                StorageLook::Slow => tracing::error!(
                    "storage did not answer twice in a row; core reports NOT_SERVING until it does"
                ),
                StorageLook::Fine => {
                    tracing::info!("storage can be written again; core reports SERVING")
                }
            }
            available.send_replace(healthy);
        }
        let pause = if healthy { PROBE_EVERY } else { PROBE_WHILE_DOWN };
        told = tokio::select! {
            _ = stopped.changed() => return,
            () = tokio::time::sleep(pause) => false,
            () = look_now.notified() => true,
        };
    }
}

/// One probe: the liveness row written through the pool; and, when that
/// is slow or a call has just failed (`told`), a connection of the probe's
/// own, whose refusal decides at once.
async fn probe_once(engine: &Engine, told: bool) -> StorageLook {
    let write = engine.probe_storage();
    tokio::pin!(write);
    if !told {
        tokio::select! {
            verdict = &mut write => return verdict,
            () = tokio::time::sleep(SLOW_WRITE) => {}
        }
    }
    let direct = engine.storage_answers();
    tokio::pin!(direct);
    tokio::select! {
        look = &mut write => look,
        refused @ StorageLook::Failed(_) = &mut direct => refused,
    }
}
