//! Owns Hado's secrets: random tokens shown once and stored only as their
//! sha256, webhook signing secrets, and constant-time comparison of
//! configured secrets.

use rand::RngCore;
use sha2::{Digest, Sha256};

pub(crate) const SOURCE_PREFIX: &str = "hado_src_";
pub(crate) const AGENT_PREFIX: &str = hado_proto::metadata::AGENT_TOKEN_PREFIX;
pub(crate) const CALENDAR_PREFIX: &str = "hado_ics_";
/// OAuth: an access token, a refresh token, an authorization code, and the
/// ID of a registered client (not a secret, so stored as it is).
pub(crate) const ACCESS_PREFIX: &str = hado_proto::metadata::OAUTH_ACCESS_PREFIX;
pub(crate) const REFRESH_PREFIX: &str = "hado_rt_";
pub(crate) const CODE_PREFIX: &str = "hado_code_";
pub(crate) const CLIENT_PREFIX: &str = "hado_client_";

/// A fresh token (`prefix` + 64 hex digits of 32 random bytes) and the hash
/// that is stored in its place.
pub(crate) fn generate(prefix: &str) -> (String, String) {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = format!("{prefix}{}", hex::encode(bytes));
    let hash = hash(&token);
    (token, hash)
}

/// A webhook signing secret: `whsec_` and 32 random bytes in base64, as the
/// Standard Webhooks libraries expect. Kept as is, since it signs.
pub(crate) fn webhook_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("whsec_{}", base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes))
}

/// A short random code of `length` characters from an alphabet without
/// look-alikes (no l, o, 0, 1), for ids a person may read or type: Telegram
/// button ids and linking codes.
pub(crate) fn short_code(length: usize) -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut rng = rand::rng();
    (0..length).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect()
}

/// The sha256 of a token, in hex: what storage holds and looks up.
pub(crate) fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

pub(crate) use hado_proto::metadata::same_secret;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_prefixed_random_hex_and_stored_as_their_hash() {
        let (token, stored) = generate(SOURCE_PREFIX);
        assert!(token.starts_with("hado_src_"));
        assert_eq!(token.len(), "hado_src_".len() + 64);
        assert_eq!(stored, hash(&token));
        assert_eq!(stored.len(), 64);
        assert_ne!(generate(SOURCE_PREFIX).0, token);
    }

    #[test]
    fn secrets_compare_equal_only_when_equal() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
    }
}
