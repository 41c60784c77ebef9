//! Owns how a core on Postgres hears the changes other cores write: a
//! connection of its own that `LISTEN`s, a heartbeat through it, and
//! keeping nothing while it is down.

use std::sync::{Arc, Weak};
use std::time::Duration;

use hado_storage::changes::{ChangeFeed, Heard, Listening};

use super::{Ended, Kept};

/// How long `follow` waits on its listener before it looks whether the
/// memory is still there.
pub(super) const WAKE: Duration = Duration::from_secs(5);

/// How long a core waits before it tries to listen again.
const RETRY: Duration = Duration::from_millis(250);

/// Listens for changes on Postgres for as long as `kept` lives: keeps
/// nothing until it listens, forgets what each change ends, and keeps
/// nothing again from the moment its connection is lost until it listens
/// anew.
pub(crate) fn listen(feed: ChangeFeed, kept: &Arc<Kept>) {
    let kept = Arc::downgrade(kept);
    tokio::spawn(async move {
        while let Some(listening) = connected(&feed, &kept).await {
            follow(listening, &kept).await;
        }
    });
}

/// A connection listening for changes, tried until one listens; none once
/// the memory is gone (its engine was dropped). Memory starts keeping once
/// it listens.
async fn connected(feed: &ChangeFeed, kept: &Weak<Kept>) -> Option<Listening> {
    loop {
        let result = feed.listen().await;
        let kept = kept.upgrade()?;
        match result {
            Ok(listening) => {
                kept.set_keeping(true);
                return Some(listening);
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for changes to credentials; keeping none");
                drop(kept);
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}

/// Forgets what each change heard ends (everything, or the access tokens
/// of the grants it names), until the connection is lost
/// (then keeps nothing, and returns) or the memory is gone. After [`WAKE`]
/// of quiet it sends a heartbeat through the connection, and a heartbeat
/// not heard back within another [`WAKE`] counts as a lost connection: one
/// that dies without a word would otherwise be trusted for ever.
async fn follow(mut listening: Listening, kept: &Weak<Kept>) {
    let mut awaited: Option<String> = None;
    loop {
        // Wakes now and then to see whether the engine is gone.
        let heard = tokio::time::timeout(WAKE, listening.next()).await;
        let Some(kept) = kept.upgrade() else { return };
        let lost = match heard {
            Ok(Heard::Change(change)) => {
                kept.forget(&Ended::heard(&change));
                continue;
            }
            Ok(Heard::Beat(name)) => {
                if awaited.as_ref() == Some(&name) {
                    awaited = None;
                }
                continue;
            }
            Ok(Heard::Lost(error)) => error.map(|error| error.to_string()).unwrap_or_default(),
            Err(_) if awaited.is_some() => "its heartbeat did not come back".to_owned(),
            Err(_) => {
                let name = ulid::Ulid::new().to_string();
                match tokio::time::timeout(WAKE, listening.beat(&name)).await {
                    Ok(Ok(())) => {
                        awaited = Some(name);
                        continue;
                    }
                    Ok(Err(error)) => error.to_string(),
                    Err(_) => "its heartbeat could not be sent".to_owned(),
                }
            }
        };
        // What changes meanwhile is not heard, so keep nothing until
        // `connected` listens anew (and forgets everything then).
        tracing::warn!(error = %lost, "lost the connection listening for changes; keeping none until it is back");
        kept.set_keeping(false);
        return;
    }
}
