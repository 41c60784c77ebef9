//! Owns an authorization request's checks, in RFC 6749's order, the
//! resource indicator (RFC 8707) and the PKCE check (S256 only).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use url::Url;

use crate::domain::oauth::clients::same_loopback_but_port;
use crate::domain::oauth::{MAX_STATE_CHARS, MAX_URI_CHARS, Refusal};

/// An authorization request's parameters, checked in RFC 6749's order: the
/// client and redirect URI first (a problem with those is shown to the
/// person, never sent to the URI), then the rest (sent back to the client).
#[derive(Clone, Debug, Default)]
pub(crate) struct AuthorizationParams {
    pub(crate) response_type: String,
    pub(crate) client_id: String,
    pub(crate) redirect_uri: String,
    pub(crate) code_challenge: String,
    pub(crate) code_challenge_method: String,
    pub(crate) state: String,
    pub(crate) resource: String,
    pub(crate) scope: String,
}

impl AuthorizationParams {
    /// The redirect URI this request uses among the client's: the one it
    /// names, exactly (a loopback one on any port, as RFC 8252 section 7.3
    /// asks: a native app listens on whichever port it got), or the only
    /// one registered when it names none.
    pub(crate) fn redirect_uri<'a>(&'a self, registered: &'a [String]) -> Result<&'a str, Refusal> {
        if self.redirect_uri.is_empty() {
            return match registered {
                [only] => Ok(only),
                _ => Err(Refusal::invalid_request(
                    "redirect_uri is required: this client registered more than one",
                )),
            };
        }
        let matches = |uri: &String| {
            *uri == self.redirect_uri || same_loopback_but_port(uri, &self.redirect_uri)
        };
        registered.iter().find(|uri| matches(uri)).map(|_| self.redirect_uri.as_str()).ok_or_else(|| {
            Refusal::invalid_request(format!(
                "redirect_uri {:?} is not one this client registered (they must match exactly, but for the port of a loopback one)",
                self.redirect_uri
            ))
        })
    }

    /// Whether the request named its redirect URI: only then may a refusal
    /// of the rest of it be sent there, rather than shown to the person.
    pub(crate) fn names_its_redirect_uri(&self) -> bool {
        !self.redirect_uri.is_empty()
    }

    /// The checks whose failure goes back to the client.
    pub(crate) fn check_rest(&self) -> Result<(), Refusal> {
        if self.response_type != "code" {
            let given = if self.response_type.is_empty() {
                "missing".to_owned()
            } else {
                format!("{:?}", self.response_type)
            };
            return Err(Refusal::new(
                "unsupported_response_type",
                format!("response_type is {given}; only code is offered"),
            ));
        }
        if self.state.chars().count() > MAX_STATE_CHARS {
            return Err(Refusal::invalid_request(format!(
                "state is over {MAX_STATE_CHARS} characters"
            )));
        }
        // Every grant is the one scope; a client may name others (its own
        // conventions), which are not granted, as RFC 6749 section 3.3 allows.
        if self.scope.chars().count() > MAX_STATE_CHARS {
            return Err(Refusal::new(
                "invalid_scope",
                format!("scope is over {MAX_STATE_CHARS} characters"),
            ));
        }
        if self.code_challenge.is_empty() {
            return Err(Refusal::invalid_request("code_challenge is required: PKCE with S256"));
        }
        if self.code_challenge_method != "S256" {
            return Err(Refusal::invalid_request(
                "code_challenge_method must be S256 (plain is not accepted)",
            ));
        }
        if !is_challenge(&self.code_challenge) {
            return Err(Refusal::invalid_request(
                "code_challenge must be the 43-character base64url SHA-256 of the code verifier",
            ));
        }
        if !self.resource.is_empty() {
            resource(&self.resource)?;
        }
        Ok(())
    }
}

fn is_challenge(text: &str) -> bool {
    text.len() == 43
        && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

/// A resource indicator (RFC 8707): an absolute URI without a fragment, in
/// the form compared (lowercase scheme and host, no default port, no
/// trailing slash).
pub(crate) fn resource(text: &str) -> Result<String, Refusal> {
    if text.chars().count() > MAX_URI_CHARS {
        return Err(Refusal::invalid_target(format!(
            "resource is over {MAX_URI_CHARS} characters"
        )));
    }
    let url = Url::parse(text).map_err(|_| {
        Refusal::invalid_target(format!("resource {text:?} is not an absolute URI"))
    })?;
    if url.fragment().is_some() {
        return Err(Refusal::invalid_target(format!(
            "resource {text:?} has a fragment, which a resource indicator may not have"
        )));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// Whether `verifier` is the code verifier whose S256 challenge is
/// `challenge` (RFC 7636 section 4.6).
pub(crate) fn verifies(verifier: &str, challenge: &str) -> bool {
    let shaped = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~'));
    shaped
        && hado_proto::metadata::same_secret(
            &URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())),
            challenge,
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_is_s256_of_a_well_formed_verifier() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(verifies(verifier, challenge));
        assert!(!verifies("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXX", challenge));
        assert!(!verifies("short", challenge));
        assert!(
            !verifies(challenge, challenge),
            "the challenge itself is not its verifier (no plain method)"
        );
    }

    #[test]
    fn authorization_requests_need_code_pkce_s256_and_a_resource_uri() {
        let good = AuthorizationParams {
            response_type: "code".into(),
            client_id: "c".into(),
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
            code_challenge_method: "S256".into(),
            resource: "http://127.0.0.1:8081/mcp".into(),
            ..AuthorizationParams::default()
        };
        assert_eq!(good.check_rest(), Ok(()));
        let code = |change: fn(&mut AuthorizationParams)| {
            let mut params = good.clone();
            change(&mut params);
            params.check_rest().unwrap_err().code
        };
        assert_eq!(code(|p| p.response_type = "token".into()), "unsupported_response_type");
        assert_eq!(code(|p| p.code_challenge.clear()), "invalid_request");
        assert_eq!(code(|p| p.code_challenge_method = "plain".into()), "invalid_request");
        assert_eq!(code(|p| p.resource = "not a uri".into()), "invalid_target");
        let registered =
            vec!["https://a.example/cb".to_owned(), "https://a.example/other".to_owned()];
        let mut params = good.clone();
        assert!(params.redirect_uri(&registered).is_err(), "two registered, none named");
        assert_eq!(params.redirect_uri(&registered[..1]).unwrap(), "https://a.example/cb");
        params.redirect_uri = "https://a.example/cb/".into();
        assert!(params.redirect_uri(&registered).is_err(), "matching is exact");
        params.redirect_uri = "https://a.example:8443/cb".into();
        assert!(params.redirect_uri(&registered).is_err(), "only a loopback URI's port may differ");
    }

    #[test]
    fn a_loopback_redirect_uri_matches_on_any_port() {
        let registered = vec![
            "http://127.0.0.1/callback".to_owned(),
            "http://[::1]:3000/cb".to_owned(),
            "http://localhost:5000/cb?app=1".to_owned(),
        ];
        let named = |uri: &str| AuthorizationParams {
            redirect_uri: uri.into(),
            ..AuthorizationParams::default()
        };
        for (requested, why) in [
            ("http://127.0.0.1:49152/callback", "a port where none was registered"),
            ("http://[::1]:61000/cb", "another port"),
            ("http://localhost:1234/cb?app=1", "localhost too"),
        ] {
            assert_eq!(named(requested).redirect_uri(&registered), Ok(requested), "{why}");
        }
        for (requested, why) in [
            ("http://127.0.0.1:49152/other", "another path"),
            ("http://127.0.0.2:49152/callback", "another host"),
            ("https://127.0.0.1:49152/callback", "another scheme"),
            ("http://localhost:1234/cb?app=2", "another query"),
            ("http://user@127.0.0.1:9/callback", "a user name"),
            ("http://[::1]:61000/cb#frag", "a fragment"),
        ] {
            assert!(named(requested).redirect_uri(&registered).is_err(), "{why}: {requested}");
        }
    }

    #[test]
    fn resources_compare_in_one_form() {
        assert_eq!(
            resource("HTTPS://Hado.Example.com:443/mcp/").unwrap(),
            "https://hado.example.com/mcp"
        );
        assert_eq!(resource("http://127.0.0.1:8081/mcp").unwrap(), "http://127.0.0.1:8081/mcp");
        assert_eq!(resource("https://a.example/mcp#x").unwrap_err().code, "invalid_target");
    }
}
