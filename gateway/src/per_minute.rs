//! Owns the gateways' rate limits: an allowance a minute per key (an agent
//! token's digest, a client's address, a person), with governor's keyed
//! token buckets: the whole minute's worth at once, then one more every
//! `60 / per_minute` seconds.

use std::hash::Hash;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

/// Past this many remembered keys, buckets that are full again are
/// forgotten (a full bucket is the same as none).
const PRUNE_ABOVE: usize = 10_000;

/// An allowance of `per_minute` a minute for each key.
pub struct PerMinute<K: Hash + Eq + Clone> {
    per_minute: u32,
    buckets: DefaultKeyedRateLimiter<K>,
}

impl<K: Hash + Eq + Clone> PerMinute<K> {
    pub fn new(per_minute: u32) -> Self {
        let quota = Quota::per_minute(NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN));
        Self { per_minute, buckets: DefaultKeyedRateLimiter::keyed(quota) }
    }

    /// How many a minute each key may have.
    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// Takes one from `key`'s allowance, or says how long until one is free.
    pub fn take(&self, key: &K) -> Result<(), Duration> {
        if self.buckets.len() > PRUNE_ABOVE {
            self.buckets.retain_recent();
        }
        self.buckets
            .check_key(key)
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_has_a_minute_of_calls_then_one_a_second_at_sixty() {
        let limit = PerMinute::new(60);
        for _ in 0..60 {
            assert!(limit.take(&"anna").is_ok());
        }
        let wait = limit.take(&"anna").unwrap_err();
        assert!(wait > Duration::from_millis(900) && wait <= Duration::from_secs(1), "{wait:?}");
        assert!(limit.take(&"bob").is_ok(), "each key has its own allowance");
    }
}
