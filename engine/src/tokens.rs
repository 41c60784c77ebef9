//! Owns Hado's secrets: random tokens shown once and stored only as their
//! sha256, webhook signing secrets, text sealed under a key only a token
//! gives, and constant-time comparison of configured secrets.

use hmac::{Hmac, KeyInit, Mac};
use rand::RngCore;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use sha2::{Digest, Sha256};

pub const SOURCE_PREFIX: &str = "hado_src_";
pub const AGENT_PREFIX: &str = hado_proto::metadata::AGENT_TOKEN_PREFIX;
pub const CALENDAR_PREFIX: &str = "hado_ics_";
/// OAuth: an access token, a refresh token, an authorization code, and the
/// ID of a registered client (not a secret, so stored as it is).
pub const ACCESS_PREFIX: &str = hado_proto::metadata::OAUTH_ACCESS_PREFIX;
pub const REFRESH_PREFIX: &str = "hado_rt_";
pub const CODE_PREFIX: &str = "hado_code_";
pub const CLIENT_PREFIX: &str = "hado_client_";

/// A fresh token (`prefix` + 64 hex digits of 32 random bytes) and the hash
/// that is stored in its place.
pub fn generate(prefix: &str) -> (String, String) {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = format!("{prefix}{}", hex::encode(bytes));
    let hash = hash(&token);
    (token, hash)
}

/// A webhook signing secret: `whsec_` and 32 random bytes in base64, as the
/// Standard Webhooks libraries expect. Kept as is, since it signs.
pub fn webhook_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("whsec_{}", base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes))
}

/// A short random code of `length` characters from an alphabet without
/// look-alikes (no l, o, 0, 1), for ids a person may read or type: Telegram
/// button ids and linking codes.
pub fn short_code(length: usize) -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut rng = rand::rng();
    (0..length).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect()
}

/// The sha256 of a token, in hex: what storage holds and looks up.
pub fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

pub use hado_proto::metadata::same_secret;

/// What the key of text sealed under a token is derived with, so that it
/// is no other use of the token's bytes (its stored hash in particular).
const SEALING_LABEL: &[u8] = b"hado: sealed under this token";

/// The key `token` gives: HMAC-SHA256 of the token under a fixed label.
/// Storage holds the token's SHA-256, from which this cannot be worked
/// out. (The token as the HMAC's key would not do: a key longer than
/// SHA-256's block, as a token is, is replaced by its SHA-256, which is
/// exactly what storage holds.)
fn sealing_key(token: &str) -> LessSafeKey {
    let mut mac = Hmac::<Sha256>::new_from_slice(SEALING_LABEL).expect("HMAC takes any key");
    mac.update(token.as_bytes());
    sealing_key_from(&mac.finalize().into_bytes())
}

fn sealing_key_from(key: &[u8]) -> LessSafeKey {
    LessSafeKey::new(
        UnboundKey::new(&CHACHA20_POLY1305, key).expect("ChaCha20-Poly1305 takes a 32-byte key"),
    )
}

/// `text` sealed (ChaCha20-Poly1305, a random nonce) under the key only
/// `token` gives: hex of the nonce, the ciphertext and its tag.
pub fn seal_under(token: &str, text: &str) -> String {
    let mut nonce = [0u8; NONCE_LEN];
    rand::rng().fill_bytes(&mut nonce);
    let mut sealed = text.as_bytes().to_vec();
    sealing_key(token)
        .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut sealed)
        .expect("a short text seals");
    hex::encode([nonce.as_slice(), &sealed].concat())
}

/// What [`seal_under`] sealed under `token`; none when `sealed` was sealed
/// under another token, or altered.
pub fn open_with(token: &str, sealed: &str) -> Option<String> {
    let bytes = hex::decode(sealed).ok()?;
    let (nonce, sealed) = bytes.split_at_checked(NONCE_LEN)?;
    let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
    let mut sealed = sealed.to_vec();
    let text = sealing_key(token).open_in_place(nonce, Aad::empty(), &mut sealed).ok()?;
    String::from_utf8(text.to_vec()).ok()
}

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
    fn sealed_text_opens_only_with_its_token() {
        let (token, stored) = generate(REFRESH_PREFIX);
        let sealed = seal_under(&token, "hado_at_1 hado_rt_2");
        assert_eq!(open_with(&token, &sealed).as_deref(), Some("hado_at_1 hado_rt_2"));
        assert!(!sealed.contains("hado_at_1"), "sealed, not encoded");
        assert_ne!(seal_under(&token, "hado_at_1 hado_rt_2"), sealed, "a fresh nonce each time");
        assert_eq!(open_with(&generate(REFRESH_PREFIX).0, &sealed), None, "another token");
        assert_eq!(open_with(&stored, &sealed), None, "the stored hash is no key");
        // Nor is the stored hash's bytes as the HMAC key, which is what the
        // token itself would have become as a key longer than a block.
        let mut mac = Hmac::<Sha256>::new_from_slice(&hex::decode(&stored).unwrap()).unwrap();
        mac.update(SEALING_LABEL);
        let guessed = sealing_key_from(&mac.finalize().into_bytes());
        let bytes = hex::decode(&sealed).unwrap();
        let (nonce, body) = bytes.split_at(NONCE_LEN);
        let mut body = body.to_vec();
        let nonce = Nonce::try_assume_unique_for_key(nonce).unwrap();
        assert!(
            guessed.open_in_place(nonce, Aad::empty(), &mut body).is_err(),
            "a reader of the database opens nothing"
        );
        let mut altered = sealed.clone().into_bytes();
        let last = altered.len() - 1;
        altered[last] = if altered[last] == b'0' { b'1' } else { b'0' };
        assert_eq!(open_with(&token, &String::from_utf8(altered).unwrap()), None, "altered");
        assert_eq!(open_with(&token, "00"), None, "too short");
    }

    #[test]
    fn secrets_compare_equal_only_when_equal() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
    }
}
