//! Owns the guard a write that changes a credential holds
//! ([`Forgetting`]): what it forgets once the write has landed, and the
//! wait, when its call was given up before that, until the writer has
//! nothing of it left to land.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::{Ended, Kept};

impl Kept {
    /// Forgets everything when the returned guard is dropped, and uses and
    /// keeps nothing until then. A write that changes a token, a source or
    /// a person holds it from before it begins until after it commits, so
    /// that no call on this core uses what it is ending meanwhile, and then
    /// says it [`landed`](Forgetting::landed). A call given up before that
    /// (its future dropped, as when the caller goes away) may have left its
    /// commit on the way: on a core that owns its database, nothing is then
    /// used or kept until the writer is settled, when everything is
    /// forgotten again, since nothing else would tell this core.
    pub(crate) fn forgetting(self: &Arc<Self>) -> Forgetting {
        self.forgetting_only(Ended::Everything)
    }

    /// As [`Kept::forgetting`], for a write that ends only what one OAuth
    /// grant issued (an app's refresh, its disconnection): once dropped,
    /// only that grant's access tokens are forgotten, and every other
    /// credential stays kept.
    pub(crate) fn forgetting_grant(self: &Arc<Self>, grant: i64) -> Forgetting {
        self.forgetting_only(Ended::Grants(vec![grant]))
    }

    /// As [`Kept::forgetting`], for a write that ends only one person's
    /// agent token (a new one issued, or theirs revoked).
    pub(crate) fn forgetting_agent_token(self: &Arc<Self>, user_id: i64) -> Forgetting {
        self.forgetting_only(Ended::AgentTokensOf(vec![user_id]))
    }

    fn forgetting_only(self: &Arc<Self>, ended: Ended) -> Forgetting {
        self.lock().changing += 1;
        Forgetting { kept: self.clone(), ended, landed: false }
    }
}

/// Resolves once a core's writer has nothing left to land of the writes
/// sent so far (`hado_storage::Store::writes_settled`).
pub(crate) type Settled = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Forgets what its change ends when dropped (`Kept::forgetting`,
/// `Kept::forgetting_grant`, `Kept::forgetting_agent_token`).
pub(crate) struct Forgetting {
    kept: Arc<Kept>,
    ended: Ended,
    /// Whether its write returned, committed or failed.
    landed: bool,
}

impl Forgetting {
    /// Ends the change once its write has returned: nothing of it is still
    /// on the way.
    pub(crate) fn landed(mut self) {
        self.landed = true;
    }
}

impl Drop for Forgetting {
    fn drop(&mut self) {
        let settle = {
            let mut known = self.kept.lock();
            known.forget(&self.ended);
            known.changing -= 1;
            if self.landed || self.kept.settled.is_none() {
                return;
            }
            // Given up with its commit perhaps on the way: a read now could
            // still find what the commit ends.
            known.given_up += 1;
            !std::mem::replace(&mut known.settling, true)
        };
        if settle {
            settle_given_up(self.kept.clone());
        }
    }
}

/// Waits, in a task of its own, until the writer has settled the changes
/// given up, then forgets everything once more and lets the memory be used
/// again. One task serves every change given up meanwhile: a writer settled
/// after a change was given up has landed it, so each wait settles the
/// changes counted before it began.
fn settle_given_up(kept: Arc<Kept>) {
    let mut settling = Settling { kept, ended: false };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        // Outside a runtime nothing can wait: dropped, `settling` ends them.
        return;
    };
    runtime.spawn(async move {
        let Some(settled) = settling.kept.settled.as_ref() else { return };
        loop {
            let counted = settling.kept.lock().given_up;
            settled().await;
            let mut known = settling.kept.lock();
            known.forget_all();
            known.given_up -= counted;
            if known.given_up == 0 {
                known.settling = false;
                drop(known);
                settling.end();
                return;
            }
        }
    });
}

/// Ends the changes given up if their settling task ends without seeing
/// the writer settled (its runtime shut down), so that the memory is not
/// left unused for ever.
struct Settling {
    kept: Arc<Kept>,
    ended: bool,
}

impl Settling {
    fn end(&mut self) {
        self.ended = true;
    }
}

impl Drop for Settling {
    fn drop(&mut self) {
        if !self.ended {
            let mut known = self.kept.lock();
            known.forget_all();
            known.given_up = 0;
            known.settling = false;
        }
    }
}
