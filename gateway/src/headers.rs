//! Owns the security headers both gateways stamp on every reply, whatever
//! route or refusal produced it: no sniffing, no framing, a referrer
//! policy, a content security policy, and `Cache-Control: no-store` on any
//! reply that does not choose its own caching (tokens, secrets shown once
//! and a person's events are never to be kept by a cache; RFC 6749 section
//! 5.1 asks it of token responses).

use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue};

/// What a gateway's replies allow.
#[derive(Clone, Copy, Debug)]
pub struct SecurityHeaders {
    pub content_security_policy: &'static str,
    pub referrer_policy: &'static str,
}

impl SecurityHeaders {
    /// Stamps `headers` with the policy; a reply's own `Cache-Control`
    /// (static files, the calendar feed) is kept.
    pub fn stamp(&self, headers: &mut HeaderMap) {
        headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(self.content_security_policy),
        );
        headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        headers.insert(REFERRER_POLICY, HeaderValue::from_static(self.referrer_policy));
        headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        if !headers.contains_key(CACHE_CONTROL) {
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_header_is_stamped_and_a_chosen_cache_policy_is_kept() {
        let policy = SecurityHeaders {
            content_security_policy: "default-src 'none'",
            referrer_policy: "no-referrer",
        };
        let mut headers = HeaderMap::new();
        policy.stamp(&mut headers);
        assert_eq!(headers[CACHE_CONTROL], "no-store");
        assert_eq!(headers[X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(headers[X_FRAME_OPTIONS], "DENY");
        assert_eq!(headers[REFERRER_POLICY], "no-referrer");
        let mut cached = HeaderMap::new();
        cached
            .insert(CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
        policy.stamp(&mut cached);
        assert_eq!(cached[CACHE_CONTROL], "public, max-age=31536000, immutable");
    }
}
