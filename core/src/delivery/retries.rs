//! Owns when a failed delivery is tried again: the Standard Webhooks
//! schedule with ±10% jitter, a receiver's `Retry-After` (seconds or a
//! date) winning over it, and no attempt once the schedule is spent.

use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::Rng;

/// The Standard Webhooks retry schedule: the wait after each failed attempt.
pub(crate) const RETRY_SCHEDULE: [chrono::Duration; 9] = [
    chrono::Duration::seconds(5),
    chrono::Duration::minutes(5),
    chrono::Duration::minutes(30),
    chrono::Duration::hours(2),
    chrono::Duration::hours(5),
    chrono::Duration::hours(10),
    chrono::Duration::hours(14),
    chrono::Duration::hours(20),
    chrono::Duration::hours(24),
];

/// The soonest an HTTP receiver's `Retry-After` brings the next attempt:
/// one whose clock is wrong (a date already past) or that says 0 must not
/// spend every attempt at once.
const SOONEST: Duration = Duration::from_secs(5);

/// The wait before the next attempt after `attempts` failed ones, with ±10%
/// jitter, or none when the schedule is spent. A receiver's `Retry-After`
/// (up to a day) wins over the schedule.
pub(crate) fn next_attempt(
    now: DateTime<Utc>,
    attempts: i64,
    retry_after: Option<Duration>,
) -> Option<DateTime<Utc>> {
    let index = usize::try_from(attempts - 1).ok()?;
    let scheduled = *RETRY_SCHEDULE.get(index)?;
    let wait = match retry_after {
        Some(wait) => {
            chrono::Duration::from_std(wait.min(Duration::from_secs(86_400))).unwrap_or(scheduled)
        }
        None => {
            let jitter = rand::rng().random_range(0.9..1.1);
            chrono::Duration::milliseconds((scheduled.num_milliseconds() as f64 * jitter) as i64)
        }
    };
    Some(now + wait)
}

/// An HTTP receiver's `Retry-After` (RFC 9110): a number of seconds, or
/// the HTTP date to wait until, at least [`SOONEST`]; none for anything
/// else.
pub(crate) fn retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => {
            let until = DateTime::<Utc>::from(httpdate::parse_http_date(value).ok()?);
            (until - now).to_std().unwrap_or(Duration::ZERO)
        }
    };
    Some(wait.max(SOONEST))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now = "2026-12-04T07:00:00Z".parse::<DateTime<Utc>>().unwrap();
        assert_eq!(retry_after(" 120 ", now), Some(Duration::from_secs(120)));
        assert_eq!(
            retry_after("Fri, 04 Dec 2026 07:02:30 GMT", now),
            Some(Duration::from_secs(150))
        );
        // A date already past, or 0, waits the soonest Hado allows.
        assert_eq!(retry_after("Fri, 04 Dec 2026 06:00:00 GMT", now), Some(SOONEST));
        assert_eq!(retry_after("0", now), Some(SOONEST));
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(retry_after("-5", now), None);
    }

    #[test]
    fn retries_follow_the_schedule_then_stop_and_retry_after_wins() {
        let now = DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z").unwrap().with_timezone(&Utc);
        let first = next_attempt(now, 1, None).unwrap() - now;
        assert!(
            first >= chrono::Duration::milliseconds(4500)
                && first <= chrono::Duration::milliseconds(5500),
            "{first}"
        );
        let last = next_attempt(now, 9, None).unwrap() - now;
        assert!(last >= chrono::Duration::hours(21) && last <= chrono::Duration::hours(27));
        assert_eq!(next_attempt(now, 10, None), None, "after ten attempts the delivery fails");
        assert_eq!(
            next_attempt(now, 1, Some(Duration::from_secs(120))),
            Some(now + chrono::Duration::seconds(120))
        );
    }
}
