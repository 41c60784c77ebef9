//! On Postgres, a group of one-event calls for people core keeps whose
//! `INSERT` is its own transaction, and the bet that sends a group that
//! way: that its keys are new.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use futures::FutureExt;

use super::plan::Plan;
use super::{Answer, Applier, Item};
use hado_domain::reminders;
use hado_storage::events::{self, DecidedFor, Through};
use hado_storage::{EventWrite, RowKey, StoreError};

impl Applier {
    /// Whether a group of one-event calls is bet to be new keys alone: no
    /// source of it was found pushing stored keys in its last such group.
    pub(super) fn bets_on_new_keys(&self, items: &[&Item]) -> bool {
        let repushing = self.repushing.lock().expect("the bet's lock is never poisoned");
        !items.iter().any(|item| repushing.contains(&item.source_id))
    }

    /// Remembers, of a group of one-event calls, the sources that pushed a
    /// key already taken or named twice, and forgets those that did not.
    pub(super) fn settle_bet(&self, items: &[&Item], plan: &Plan<'_>, throughs: &[Through]) {
        // A key's repeat is not in `plan.new`: it counts as named twice. A
        // moved row was not tried against its key, so it counts too.
        let mut stored = vec![true; items.len()];
        for ((at, _), through) in plan.new.iter().zip(throughs) {
            stored[*at] = !matches!(through, Through::New(_));
        }
        let found: HashSet<i64> = items
            .iter()
            .zip(&stored)
            .filter(|(_, stored)| **stored)
            .map(|(item, _)| item.source_id)
            .collect();
        let mut repushing = self.repushing.lock().expect("the bet's lock is never poisoned");
        for item in items {
            if !found.contains(&item.source_id) {
                repushing.remove(&item.source_id);
            }
        }
        repushing.extend(found);
    }

    /// [`Self::apply_as_kept`] for a group whose calls each carry one item,
    /// bet to be new keys ([`Self::bets_on_new_keys`]): the gated insert is
    /// its own transaction, with no `BEGIN` or `COMMIT` around it (one
    /// round trip where there were three), as a person's creates are
    /// written. Each such call stands alone, so one whose event went in is
    /// done, and answered so, whatever becomes of the others.
    ///
    /// The rest (a key taken, a key's repeats, a person whose settings
    /// moved) are then applied as any group is, in one transaction, their
    /// people read through their gates again, as the insert's gates were
    /// released with its commit: a repeat meets its first write, which is
    /// then committed. That costs more than the group in one transaction,
    /// so a source that pushed a key taken or named twice (or for a person
    /// whose settings moved) has its next groups go that way, until one of
    /// them is all new keys again. Should the rest's transaction fail (or
    /// panic), each of its calls fails on its own
    /// ([`hado_storage::group_commit::Apply::failed_alone`]), and group
    /// commit applies it again alone.
    pub(super) async fn insert_alone(
        &self,
        items: &[&Item],
        plan: Plan<'_>,
        rows: &[(RowKey<'_>, EventWrite<'_>, DateTime<Utc>, &DecidedFor)],
        now: DateTime<Utc>,
    ) -> Result<Vec<Answer>, StoreError> {
        self.alone.fetch_add(1, Ordering::Relaxed);
        let mut connection = self.store.grouped_writer().await?;
        let began = self.kept.reading();
        let (throughs, as_now) = events::insert_new_through_gates(&mut connection, rows).await?;
        drop(connection);
        for user in as_now {
            self.kept.keep_person(began, user);
        }
        self.settle_bet(items, &plan, &throughs);
        let mut answers: Vec<Option<Answer>> = items.iter().map(|_| None).collect();
        let mut earliest_check = None;
        for ((at, decision), through) in plan.new.iter().zip(throughs) {
            if let Through::New(id) = through {
                earliest_check = reminders::earliest(earliest_check, decision.next_check_at);
                answers[*at] = Some(Ok(decision.report(id)));
            }
        }
        self.alarm.checks_written(earliest_check, now);
        let rest: Vec<usize> = (0..items.len()).filter(|&at| answers[at].is_none()).collect();
        if !rest.is_empty() {
            let those: Vec<&Item> = rest.iter().map(|&at| items[at]).collect();
            // A panic here fails only the calls not yet committed.
            let applied = AssertUnwindSafe(self.apply_in_one_transaction(&those, now))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| Err(StoreError::Failed(PANICKED.into())));
            let written: Vec<Answer> = match applied {
                Ok(reports) => reports.into_iter().map(Ok).collect(),
                // Nothing of the group went in: it fails as any group does.
                Err(error) if rest.len() == items.len() => return Err(error),
                // Each call left fails on its own, and group commit applies
                // it again alone (but one whose caller has gone), or answers
                // it with a database away.
                Err(error) => those.iter().map(|_| Err(own_failure(&error))).collect(),
            };
            for (at, answer) in rest.into_iter().zip(written) {
                answers[at] = Some(answer);
            }
        }
        Ok(answers.into_iter().map(|answer| answer.expect("every item was answered")).collect())
    }
}

/// What a call of the rest is answered with when the rest's transaction
/// failed: the same failure when the database was away, else its own
/// failure, which group commit applies again alone.
fn own_failure(error: &StoreError) -> StoreError {
    error.for_another_caller().unwrap_or_else(|| StoreError::Failed(error.to_string()))
}

/// The failure of a rest whose transaction panicked.
const PANICKED: &str = "applying the rest of a group of sources' upserts failed inside core";
