//! Owns the caps on what one person can make Hado send to someone else: a
//! confirmation to an address (which nobody there asked for yet) and a
//! test to a channel. Each is capped per target, however often the target
//! is removed and added again and whoever asks, and per person. A refusal
//! is RESOURCE_EXHAUSTED with when to ask again, in the person's words.

use chrono::{DateTime, Duration, Utc};
use hado_storage::Connection;

use crate::Engine;
use crate::error::{CoreError, Said};
use hado_domain::user::UserRecord;
use hado_storage::send_requests::{self, Purpose, Tally, Whose};

/// At most `count` requests in any `window`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cap {
    pub count: i64,
    pub window: Duration,
}

/// A cap per target and one per person.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    pub purpose: Purpose,
    pub per_target: Cap,
    pub per_person: Cap,
}

/// Confirmations: three a day to one address, ten a day from one person.
pub(crate) const CONFIRMATIONS: Caps = Caps {
    purpose: Purpose::Confirmation,
    per_target: Cap { count: 3, window: Duration::days(1) },
    per_person: Cap { count: 10, window: Duration::days(1) },
};

/// Tests: five in ten minutes to one channel, twenty from one person.
pub(crate) const TESTS: Caps = Caps {
    purpose: Purpose::Test,
    per_target: Cap { count: 5, window: Duration::minutes(10) },
    per_person: Cap { count: 20, window: Duration::minutes(10) },
};

/// Which cap a request ran into, with how many there were and when the
/// next one may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spent {
    Target { count: i64, again: DateTime<Utc> },
    Person { count: i64, again: DateTime<Utc> },
}

/// When the window of `cap` has room again, if it has none now: as soon as
/// the oldest request it counts leaves it.
fn full_until(tally: Tally, cap: Cap, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    (tally.count >= cap.count).then(|| tally.oldest.unwrap_or(now) + cap.window)
}

impl Engine {
    /// Counts one request of `caps.purpose` to `target` (its hash
    /// `target_hash`) by `user` in
    /// the write transaction, or refuses it when either cap is spent. On
    /// Postgres the person and the target are locked for the transaction,
    /// so that requests made at once are counted one after another (on
    /// SQLite the one writer does that).
    pub async fn take_send(
        &self,
        connection: &mut impl Connection,
        user: &UserRecord,
        target: &str,
        target_hash: &str,
        caps: Caps,
    ) -> Result<(), CoreError> {
        let now = self.now();
        send_requests::lock(connection, user.id, target_hash).await?;
        let purpose = caps.purpose;
        let window = |cap: Cap| now - cap.window;
        let to_target = send_requests::tally_of(
            connection,
            Whose::Target(target_hash),
            purpose,
            window(caps.per_target),
        )
        .await?;
        let from_person = send_requests::tally_of(
            connection,
            Whose::Person(user.id),
            purpose,
            window(caps.per_person),
        )
        .await?;
        let spent = match (
            full_until(to_target, caps.per_target, now),
            full_until(from_person, caps.per_person, now),
        ) {
            (Some(again), _) => Some(Spent::Target { count: to_target.count, again }),
            (None, Some(again)) => Some(Spent::Person { count: from_person.count, again }),
            (None, None) => None,
        };
        match spent {
            Some(spent) => Err(refusal(user, target, purpose, spent, now)),
            None => {
                send_requests::record(connection, user.id, target_hash, purpose, now).await?;
                Ok(())
            }
        }
    }
}

/// The refusal of a spent cap: English for programs, the person's words
/// beside it, and when to ask again. A target's cap says no count: it may
/// count other people's requests, which are none of the caller's business.
fn refusal(
    user: &UserRecord,
    target: &str,
    purpose: Purpose,
    spent: Spent,
    now: DateTime<Utc>,
) -> CoreError {
    let words = hado_words::for_locale(user.locale.as_str());
    let (count, again) = match spent {
        Spent::Target { count, again } | Spent::Person { count, again } => (count, again),
    };
    let retry_after = (again - now).to_std().unwrap_or_default();
    let (message, said) = match (purpose, spent) {
        (Purpose::Confirmation, Spent::Target { .. }) => (
            format!(
                "{target} was sent the most confirmations Hado sends to one address in a day; try again after {}",
                again.format("%Y-%m-%d %H:%M UTC")
            ),
            words.email_resend_later,
        ),
        (Purpose::Confirmation, Spent::Person { .. }) => (
            format!(
                "you asked for {count} confirmation emails in the last day, the most Hado sends for one person; try again after {}",
                again.format("%Y-%m-%d %H:%M UTC")
            ),
            words.email_confirmations_later,
        ),
        (Purpose::Test, Spent::Target { .. }) => (
            format!(
                "{target} was sent the most tests Hado sends to one channel in 10 minutes; try again after {}",
                again.format("%H:%M:%S UTC")
            ),
            words.test_later,
        ),
        (Purpose::Test, Spent::Person { .. }) => (
            format!(
                "you sent {count} tests in the last 10 minutes, the most Hado sends for one person; try again after {}",
                again.format("%H:%M:%S UTC")
            ),
            words.test_later,
        ),
    };
    let said = said
        .replace("{address}", target)
        .replace("{count}", &count.to_string())
        .replace("{wait}", &wait_words(words, retry_after));
    CoreError::Exhausted { message, retry_after, said: Some(Said::new(user.locale, said)) }
}

/// A wait as a person reads it: minutes, rounded up, or hours past two.
fn wait_words(words: &hado_words::Words, wait: std::time::Duration) -> String {
    let minutes = wait.as_secs().div_ceil(60).max(1);
    if minutes <= 120 {
        words.wait_minutes.replace("{n}", &minutes.to_string())
    } else {
        words.wait_hours.replace("{n}", &minutes.div_ceil(60).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_wait_reads_in_minutes_then_in_hours() {
        let words = &hado_words::EN;
        let minutes = |n: u64| wait_words(words, std::time::Duration::from_secs(n * 60));
        assert_eq!(minutes(0), "1 min");
        assert_eq!(minutes(10), "10 min");
        assert_eq!(minutes(120), "120 min");
        assert_eq!(minutes(121), "3 h");
        assert_eq!(minutes(24 * 60), "24 h");
    }

    #[test]
    fn a_cap_has_room_until_its_count_is_reached() {
        let now = at("2026-12-01T10:00:00Z");
        let cap = Cap { count: 3, window: Duration::days(1) };
        let two = Tally { count: 2, oldest: Some(at("2026-12-01T09:00:00Z")) };
        assert_eq!(full_until(two, cap, now), None);
        assert_eq!(full_until(Tally::default(), cap, now), None);
    }

    #[test]
    fn a_full_cap_has_room_again_when_its_oldest_request_leaves_the_window() {
        let now = at("2026-12-01T10:00:00Z");
        let cap = Cap { count: 3, window: Duration::days(1) };
        let three = Tally { count: 3, oldest: Some(at("2026-11-30T20:00:00Z")) };
        assert_eq!(full_until(three, cap, now), Some(at("2026-12-01T20:00:00Z")));
    }
}
