//! Owns a gateway's short memory of bearer tokens core has recently
//! accepted, keyed by the token's sha256 (the token itself is never kept).
//! It decides only whether a request's body is worth reading before core is
//! asked: core checks the token again on the call itself, so a revoked or
//! rotated token is refused there at once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// Tokens remembered at most; the memory is swept, then cleared, when full.
const KEPT: usize = 1024;

pub struct KnownTokens {
    lifetime: Duration,
    known: Mutex<HashMap<[u8; 32], Instant>>,
}

/// A token's digest, the key the memory uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TokenDigest([u8; 32]);

impl TokenDigest {
    pub fn of(token: &[u8]) -> Self {
        Self(Sha256::digest(token).into())
    }
}

impl KnownTokens {
    /// A memory whose entries last `lifetime`.
    pub fn new(lifetime: Duration) -> Self {
        Self { lifetime, known: Mutex::default() }
    }

    /// Whether core accepted the token within the lifetime.
    pub fn recently_accepted(&self, digest: TokenDigest, now: Instant) -> bool {
        let known = self.known.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        known.get(&digest.0).is_some_and(|accepted| now.duration_since(*accepted) < self.lifetime)
    }

    pub fn accepted(&self, digest: TokenDigest, now: Instant) {
        let mut known = self.known.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if known.len() >= KEPT {
            known.retain(|_, accepted| now.duration_since(*accepted) < self.lifetime);
            if known.len() >= KEPT {
                known.clear();
            }
        }
        known.insert(digest.0, now);
    }

    /// Core refused the token: the next request checks it first again.
    pub fn refused(&self, digest: TokenDigest) {
        self.known.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&digest.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_known_for_its_lifetime_and_until_refused() {
        let tokens = KnownTokens::new(Duration::from_secs(5));
        let (digest, now) = (TokenDigest::of(b"Bearer hado_agent_x"), Instant::now());
        assert!(!tokens.recently_accepted(digest, now));
        tokens.accepted(digest, now);
        assert!(tokens.recently_accepted(digest, now + Duration::from_secs(4)));
        assert!(!tokens.recently_accepted(digest, now + Duration::from_secs(5)));
        assert!(!tokens.recently_accepted(TokenDigest::of(b"Bearer hado_agent_y"), now));
        tokens.refused(digest);
        assert!(!tokens.recently_accepted(digest, now));
    }

    #[test]
    fn a_full_memory_forgets_rather_than_grows() {
        let tokens = KnownTokens::new(Duration::from_secs(60));
        let now = Instant::now();
        for number in 0..KEPT + 10 {
            tokens.accepted(TokenDigest::of(number.to_string().as_bytes()), now);
        }
        assert!(tokens.known.lock().unwrap().len() <= KEPT);
    }
}
