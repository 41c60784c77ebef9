//! Owns what every background loop of core does between its passes: wait
//! until its next due moment, or until a write wakes it, or until core
//! stops; and how often a loop that keeps failing says so.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, watch};

/// Waits `pause`, or until `woken` is notified; false when `stop` says the
/// loop must end instead.
pub async fn rest(pause: Duration, woken: &Notify, stop: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(pause) => {}
        _ = woken.notified() => {}
        _ = stop.changed() => return false,
    }
    !*stop.borrow()
}

/// The scheduler's wake-up, with the earliest check it knows of, so that a
/// write wakes it only when the write brings a check sooner: a burst of
/// creates whose checks lie after the next one costs it no read at all.
#[derive(Debug)]
pub struct Alarm {
    bell: Notify,
    /// A check before this moment (ms since the epoch) wakes the loop;
    /// `i64::MAX` while the loop is reading, so that no write slips between
    /// its read and the moment it sets.
    set_for: AtomicI64,
}

impl Default for Alarm {
    fn default() -> Self {
        Self { bell: Notify::new(), set_for: AtomicI64::new(i64::MAX) }
    }
}

impl Alarm {
    pub fn bell(&self) -> &Notify {
        &self.bell
    }

    /// The loop is about to read the earliest check: every write wakes it.
    pub fn reading(&self) {
        self.set_for.store(i64::MAX, Ordering::SeqCst);
    }

    /// The loop read `earliest` and will look again by then.
    pub fn set(&self, earliest: Option<DateTime<Utc>>) {
        let at = earliest.map_or(i64::MAX, |earliest| earliest.timestamp_millis());
        self.set_for.store(at, Ordering::SeqCst);
    }

    /// Wakes the loop whatever was written.
    pub fn ring(&self) {
        self.bell.notify_one();
    }

    /// Wakes the loop when a write's earliest check is due by `now` or
    /// comes before the one the loop is set for.
    pub fn checks_written(&self, earliest: Option<DateTime<Utc>>, now: DateTime<Utc>) {
        if earliest.is_some_and(|earliest| {
            earliest <= now || earliest.timestamp_millis() < self.set_for.load(Ordering::SeqCst)
        }) {
            self.ring();
        }
    }
}

/// When a loop that keeps meeting the same trouble says so again: at
/// once, then once every `every`, so that a log read an hour later shows
/// it is still going on without a line every few seconds.
#[derive(Debug)]
pub struct Reminder {
    every: Duration,
    first: Option<std::time::Instant>,
    last: Option<std::time::Instant>,
}

impl Reminder {
    pub fn new(every: Duration) -> Self {
        Self { every, first: None, last: None }
    }

    /// How long the trouble has lasted, when it is time to say so again.
    pub fn due(&mut self, now: std::time::Instant) -> Option<Duration> {
        let first = *self.first.get_or_insert(now);
        if self.last.is_some_and(|last| now.duration_since(last) < self.every) {
            return None;
        }
        self.last = Some(now);
        Some(now.duration_since(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Option<DateTime<Utc>> {
        Some(text.parse().unwrap())
    }

    /// Whether the alarm rang since the last look, taking its ring.
    async fn rang(alarm: &Alarm) -> bool {
        tokio::time::timeout(Duration::from_millis(5), alarm.bell().notified()).await.is_ok()
    }

    #[tokio::test]
    async fn a_write_wakes_the_scheduler_only_for_a_sooner_or_due_check() {
        let alarm = Alarm::default();
        let now = at("2026-12-01T10:00:00Z").unwrap();

        // While the scheduler reads, and when it knows of no check, any check wakes it.
        alarm.checks_written(at("2027-06-01T00:00:00Z"), now);
        assert!(rang(&alarm).await);
        alarm.set(None);
        alarm.checks_written(at("2027-06-01T00:00:00Z"), now);
        assert!(rang(&alarm).await);

        alarm.set(at("2026-12-05T09:00:00Z"));
        alarm.checks_written(at("2026-12-07T09:00:00Z"), now);
        alarm.checks_written(at("2026-12-05T09:00:00Z"), now);
        alarm.checks_written(None, now);
        assert!(!rang(&alarm).await, "a check at or after the one set for needs no wake");
        alarm.checks_written(at("2026-12-04T09:00:00Z"), now);
        assert!(rang(&alarm).await, "a sooner check wakes it");

        // A check already due wakes it even past the moment set for, as after a
        // jump of the clock.
        alarm.set(at("2026-11-01T00:00:00Z"));
        alarm.checks_written(now.into(), now);
        assert!(rang(&alarm).await);

        alarm.reading();
        alarm.checks_written(at("2027-06-01T00:00:00Z"), now);
        assert!(rang(&alarm).await, "a write during the read wakes it for one more");
        alarm.ring();
        assert!(rang(&alarm).await);
    }

    #[test]
    fn trouble_is_said_at_once_then_once_a_minute() {
        let start = std::time::Instant::now();
        let at = |seconds: u64| start + Duration::from_secs(seconds);
        let mut reminder = Reminder::new(Duration::from_secs(60));
        let said: Vec<(u64, Option<Duration>)> = [0, 2, 30, 59, 60, 61, 119, 121]
            .into_iter()
            .map(|second| (second, reminder.due(at(second))))
            .collect();
        assert_eq!(
            said,
            vec![
                (0, Some(Duration::ZERO)),
                (2, None),
                (30, None),
                (59, None),
                (60, Some(Duration::from_secs(60))),
                (61, None),
                (119, None),
                (121, Some(Duration::from_secs(121))),
            ]
        );
    }
}
