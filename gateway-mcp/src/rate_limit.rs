//! Owns the per-token rate limit: a token bucket per agent token that holds
//! a minute's worth of calls and refills evenly, kept in memory by a hash of
//! the token (never the token itself).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// Past this many remembered tokens, full buckets are forgotten: a full
/// bucket is the same as no bucket, so forgetting it changes nothing.
const PRUNE_ABOVE: usize = 10_000;

#[derive(Debug)]
pub(crate) struct RateLimiter {
    capacity: f64,
    refill_per_second: f64,
    buckets: Mutex<HashMap<[u8; 32], Bucket>>,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    calls_left: f64,
    updated: Instant,
}

impl RateLimiter {
    pub(crate) fn per_minute(calls: u32) -> Self {
        let capacity = f64::from(calls.max(1));
        Self { capacity, refill_per_second: capacity / 60.0, buckets: Mutex::new(HashMap::new()) }
    }

    /// Takes one call from the token's bucket, or says how long until one is free.
    pub(crate) fn take(&self, token: &str, now: Instant) -> Result<(), Duration> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut buckets = self.buckets.lock().expect("the rate limiter lock is never poisoned");
        if buckets.len() > PRUNE_ABOVE {
            buckets.retain(|_, bucket| self.refilled(*bucket, now) < self.capacity);
        }
        let bucket = buckets.entry(key).or_insert(Bucket { calls_left: self.capacity, updated: now });
        let calls_left = self.refilled(*bucket, now);
        if calls_left >= 1.0 {
            *bucket = Bucket { calls_left: calls_left - 1.0, updated: now };
            Ok(())
        } else {
            *bucket = Bucket { calls_left, updated: now };
            Err(Duration::from_secs_f64((1.0 - calls_left) / self.refill_per_second))
        }
    }

    fn refilled(&self, bucket: Bucket, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
        (bucket.calls_left + elapsed * self.refill_per_second).min(self.capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minute_of_calls_then_one_more_every_second_at_sixty() {
        let limiter = RateLimiter::per_minute(60);
        let start = Instant::now();
        for _ in 0..60 {
            assert!(limiter.take("hado_agent_a", start).is_ok());
        }
        let wait = limiter.take("hado_agent_a", start).unwrap_err();
        assert!(wait > Duration::from_millis(900) && wait <= Duration::from_secs(1), "{wait:?}");
        assert!(limiter.take("hado_agent_b", start).is_ok(), "each token has its own bucket");
        assert!(limiter.take("hado_agent_a", start + Duration::from_secs(1)).is_ok());
        assert!(limiter.take("hado_agent_a", start + Duration::from_secs(1)).is_err());
    }

    #[test]
    fn full_buckets_are_forgotten_when_many_tokens_were_seen() {
        let limiter = RateLimiter::per_minute(60);
        let start = Instant::now();
        for index in 0..=PRUNE_ABOVE {
            limiter.take(&format!("hado_agent_{index}"), start).unwrap();
        }
        limiter.take("hado_agent_last", start + Duration::from_secs(2)).unwrap();
        assert_eq!(limiter.buckets.lock().unwrap().len(), 1);
    }
}
