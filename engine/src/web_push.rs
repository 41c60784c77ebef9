//! Owns what Web Push needs of cryptography: this Hado's VAPID key pair
//! (RFC 8292) and the token each post is signed with, a subscription's
//! keys read once, and a message sealed for one subscription (RFC 8291,
//! `aes128gcm`, by `web-push-native`).

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use web_push_native::p256;
use web_push_native::p256::elliptic_curve::sec1::ToEncodedPoint;

/// How long a VAPID token is good for: RFC 8292 allows a day, and push
/// services (and the issue that asked for push) want at most twelve hours;
/// a minute is kept back for clocks that differ.
const TOKEN_LIFETIME_SECONDS: i64 = 12 * 3600 - 60;

/// The name the generated key pair is kept under in `server_keys`.
pub const KEY_NAME: &str = "vapid_private_key";

/// This Hado's VAPID identity: the subject push services may write to, and
/// the key pair they know it by.
pub struct Vapid {
    subject: String,
    /// The uncompressed P-256 point (65 bytes), as browsers subscribe with.
    public_key: Vec<u8>,
    signer: EcdsaKeyPair,
    /// Names each event's `Topic` (derived from the private key).
    topics: ring::hmac::Key,
}

impl std::fmt::Debug for Vapid {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Vapid").field("subject", &self.subject).finish_non_exhaustive()
    }
}

impl Vapid {
    /// The identity of `subject` with the private key written as base64url
    /// of its 32-byte scalar (as `web-push generate-vapid-keys` prints it).
    pub fn new(subject: &str, private_key: &str) -> Result<Self, String> {
        let scalar = decode(private_key.trim())
            .filter(|bytes| bytes.len() == 32)
            .ok_or("is not the base64url of a 32-byte P-256 private key")?;
        let secret = p256::SecretKey::from_slice(&scalar)
            .map_err(|_| "is not a P-256 private key (out of the curve's range)")?;
        let public_key = secret.public_key().to_encoded_point(false).as_bytes().to_vec();
        let signer = EcdsaKeyPair::from_private_key_and_public_key(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            &scalar,
            &public_key,
            &SystemRandom::new(),
        )
        .map_err(|_| "is not a P-256 private key ring accepts".to_owned())?;
        // A key of its own for topics, not the signing key itself.
        let derived = ring::hmac::sign(
            &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &scalar),
            b"hado push topics",
        );
        let topics = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, derived.as_ref());
        Ok(Self { subject: subject.to_owned(), public_key, signer, topics })
    }

    /// An event's `Topic` on one device: the same for each of its messages
    /// there, so that a newer one replaces one not yet handed over, and 22
    /// base64url characters from which the push service (which reads it in
    /// the clear) can neither learn the event's id, count a person's
    /// events, nor tie a person's devices together.
    pub fn topic(&self, event_id: i64, device_id: i64) -> String {
        let tag = ring::hmac::sign(&self.topics, format!("{event_id}.{device_id}").as_bytes());
        let mut topic = URL_SAFE_NO_PAD.encode(tag.as_ref());
        topic.truncate(22);
        topic
    }

    /// A new private key, written as [`Vapid::new`] reads it.
    fn generate() -> String {
        loop {
            let scalar: [u8; 32] = rand::random();
            // Almost every 32 bytes are a scalar below the curve's order.
            if p256::SecretKey::from_slice(&scalar).is_ok() {
                return URL_SAFE_NO_PAD.encode(scalar);
            }
        }
    }

    /// The public key as `applicationServerKey` takes it: base64url of the
    /// uncompressed point.
    pub fn public_key(&self) -> String {
        URL_SAFE_NO_PAD.encode(&self.public_key)
    }

    /// The `Authorization` header of a post to `endpoint`: a JWT whose
    /// `aud` is the push service's origin, `exp` under twelve hours after
    /// `now_unix` and `sub` this Hado's subject, with the public key.
    ///
    /// `now_unix` is the wall clock, never a test's clock: the push service
    /// checks `exp` against its own.
    pub fn authorization(&self, endpoint: &url::Url, now_unix: i64) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({
            "aud": endpoint.origin().ascii_serialization(),
            "exp": now_unix + TOKEN_LIFETIME_SECONDS,
            "sub": self.subject,
        });
        let signed = format!("{header}.{}", URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature = self
            .signer
            .sign(&SystemRandom::new(), signed.as_bytes())
            .expect("the system's random numbers are there");
        format!(
            "vapid t={signed}.{}, k={}",
            URL_SAFE_NO_PAD.encode(signature.as_ref()),
            self.public_key()
        )
    }
}

/// A kept VAPID key that does not read as one: damage, since only a key
/// made here is kept.
#[derive(Debug, thiserror::Error)]
#[error("the stored VAPID key {0}")]
pub struct DamagedKey(String);

/// The identity of `subject` (`HADO_VAPID_SUBJECT`) with the key the
/// operator gave, or a key pair made on first start and handed to `keep`
/// (with [`KEY_NAME`]), which gives back the key kept, the first core's; none
/// (and a line in the log saying why Settings offers no push) without a
/// subject. This file knows the keys; where they are kept is the caller's.
pub async fn set_up<E: From<DamagedKey>>(
    subject: Option<&str>,
    given_key: Option<&str>,
    keep: impl AsyncFnOnce(&str, &str) -> Result<String, E>,
) -> Result<Option<Arc<Vapid>>, E> {
    let Some(subject) = subject else {
        tracing::info!(
            "push reminders are off: HADO_VAPID_SUBJECT is not set, so Settings offers no notifications on a device"
        );
        return Ok(None);
    };
    let private_key = match given_key {
        Some(given) => given.to_owned(),
        None => keep(KEY_NAME, &Vapid::generate()).await?,
    };
    let vapid = Vapid::new(subject, &private_key).map_err(DamagedKey)?;
    Ok(Some(Arc::new(vapid)))
}

/// A subscription's keys, read once: the browser's P-256 public key and its
/// 16-byte authentication secret.
#[derive(Clone, Debug)]
pub struct SubscriptionKeys {
    public_key: p256::PublicKey,
    auth: [u8; 16],
}

impl SubscriptionKeys {
    /// Reads `p256dh` and `auth` as a browser's `toJSON()` writes them
    /// (base64url; padding tolerated). A refusal names the field.
    pub fn parse(p256dh: &str, auth: &str) -> Result<Self, (&'static str, String)> {
        // Longer than any honest key: refused before it is decoded.
        let point = decode_at_most(p256dh, 100)
            .filter(|bytes| bytes.len() == 65 && bytes[0] == 4)
            .and_then(|bytes| p256::PublicKey::from_sec1_bytes(&bytes).ok())
            .ok_or_else(|| {
                (
                    "keys.p256dh",
                    "keys.p256dh is not the base64url of an uncompressed P-256 point (65 bytes)"
                        .to_owned(),
                )
            })?;
        let auth: [u8; 16] =
            decode_at_most(auth, 30).and_then(|bytes| bytes.try_into().ok()).ok_or_else(|| {
                ("keys.auth", "keys.auth is not the base64url of 16 bytes".to_owned())
            })?;
        Ok(Self { public_key: point, auth })
    }

    /// As kept in a channel's `secret`: `<p256dh>.<auth>`, base64url.
    pub fn stored(&self) -> String {
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(self.public_key.to_encoded_point(false).as_bytes()),
            URL_SAFE_NO_PAD.encode(self.auth)
        )
    }

    /// Reads what [`Self::stored`] wrote.
    pub fn from_stored(stored: &str) -> Option<Self> {
        let (p256dh, auth) = stored.split_once('.')?;
        Self::parse(p256dh, auth).ok()
    }

    /// `message` sealed for this subscription alone (RFC 8291, one record).
    pub fn seal(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        let auth = web_push_native::Auth::from(self.auth);
        web_push_native::encrypt(message.to_vec(), &self.public_key, &auth)
            .map_err(|error| format!("the message could not be encrypted: {error}"))
    }
}

fn decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).or_else(|_| URL_SAFE.decode(text)).ok()
}

fn decode_at_most(text: &str, max: usize) -> Option<Vec<u8>> {
    (text.len() <= max).then(|| decode(text.trim())).flatten()
}

/// A damaged key in the database is damage like any other stored value.
impl From<DamagedKey> for hado_storage::StoreError {
    fn from(damaged: DamagedKey) -> Self {
        Self::Corrupt(damaged.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_events_topic_is_stable_opaque_and_this_hados_own() {
        let key = Vapid::generate();
        let vapid = Vapid::new("mailto:ops@example.com", &key).unwrap();
        let topic = vapid.topic(42, 7);
        assert_eq!(topic.len(), 22);
        assert!(topic.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_ne!(topic, "event-42");
        assert_eq!(Vapid::new("mailto:other@example.com", &key).unwrap().topic(42, 7), topic);
        assert_ne!(vapid.topic(43, 7), topic);
        assert_ne!(vapid.topic(42, 8), topic, "another device of the person's names it otherwise");
        let other = Vapid::new("mailto:ops@example.com", &Vapid::generate()).unwrap();
        assert_ne!(other.topic(42, 7), topic, "another Hado names it otherwise");
    }

    #[test]
    fn a_vapid_token_names_the_push_services_origin_and_verifies_with_the_public_key() {
        let vapid = Vapid::new("mailto:ops@example.com", &Vapid::generate()).unwrap();
        let endpoint = url::Url::parse("https://push.example.com:8443/send/abc").unwrap();
        let header = vapid.authorization(&endpoint, 1_800_000_000);
        let (token, key) = header.strip_prefix("vapid t=").unwrap().split_once(", k=").unwrap();
        assert_eq!(key, vapid.public_key());
        let (signed, signature) = token.rsplit_once('.').unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&decode(signed.split_once('.').unwrap().1).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://push.example.com:8443");
        assert_eq!(claims["sub"], "mailto:ops@example.com");
        assert_eq!(claims["exp"], 1_800_000_000 + TOKEN_LIFETIME_SECONDS);
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            decode(key).unwrap(),
        );
        public.verify(signed.as_bytes(), &decode(signature).unwrap()).unwrap();
    }

    #[test]
    fn keys_that_are_not_a_subscriptions_are_refused_naming_the_field() {
        let vapid = Vapid::new("mailto:ops@example.com", &Vapid::generate()).unwrap();
        let auth = URL_SAFE_NO_PAD.encode([7u8; 16]);
        let good = SubscriptionKeys::parse(&vapid.public_key(), &auth).unwrap();
        assert!(SubscriptionKeys::from_stored(&good.stored()).is_some());
        for (p256dh, auth, field) in [
            ("BAAA", auth.as_str(), "keys.p256dh"),
            (&"B".repeat(200), auth.as_str(), "keys.p256dh"),
            (&vapid.public_key(), "AAAA", "keys.auth"),
            (&vapid.public_key(), "not base64!", "keys.auth"),
        ] {
            assert_eq!(SubscriptionKeys::parse(p256dh, auth).unwrap_err().0, field);
        }
        assert!(Vapid::new("mailto:ops@example.com", "c2hvcnQ").is_err());
    }
}
