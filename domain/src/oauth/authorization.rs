//! Owns an authorization request's checks, in RFC 6749's order, the
//! resource indicator (RFC 8707) held to this server's own, the issuer every
//! answer names (RFC 9207), and the PKCE check (S256 only).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use url::Url;

use crate::oauth::clients::same_loopback_but_port;
use crate::oauth::{MAX_STATE_CHARS, MAX_URI_CHARS, Refusal};

/// An authorization request's parameters, checked in RFC 6749's order: the
/// client and redirect URI first, then the rest. A request that fails any
/// check is shown to the person and never sent to the redirect URI: anyone
/// can register a redirect URI, so a registered one is not a trusted one
/// (RFC 9700 section 4.11.2), and only the person's own Deny goes back.
#[derive(Clone, Debug, Default)]
pub struct AuthorizationParams {
    pub response_type: String,
    pub client_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub code_challenge_method: String,
    pub state: String,
    pub resource: String,
    pub scope: String,
    /// The MCP endpoint's URL as the calling gateway knows it: never the
    /// client's word (see [`Server`]).
    pub served_resource: String,
}

/// What is wrong with an authorization request, as the person is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    Client,
    RedirectUri,
    ResponseType,
    CodeChallenge,
    CodeChallengeMethod,
    Resource,
    Scope,
    State,
}

/// An authorization request refused before the person is asked: what the
/// person is told, and the RFC's refusal, which names the parameter for
/// the app's developer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfit {
    pub problem: Problem,
    pub refusal: Refusal,
}

impl Problem {
    /// `refusal`, which the person hears as this problem.
    pub fn of(self, refusal: Refusal) -> Unfit {
        Unfit { problem: self, refusal }
    }
}

/// This server as an authorization request meets it: the issuer identifier
/// every answer names, and the resources a code may be for.
///
/// Both come from the MCP endpoint's URL the calling gateway is configured
/// with, not from the request: a client talks to many authorization
/// servers, and `iss` (RFC 9207) lets it tell which one answered, which only
/// works if no request can choose it (a mix-up attacker would name its own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// As gateway-mcp's metadata writes it (RFC 8414 `issuer`): the MCP
    /// endpoint's URL without its `/mcp`, character for character, since a
    /// client compares the two as strings.
    pub issuer: String,
    /// The MCP endpoint, and the legacy transport's `/sse` beside it (a
    /// token for either works at both), in the form resources compare in.
    resources: [String; 2],
}

impl Server {
    /// The server whose MCP endpoint is at `mcp_url`
    /// (`https://hado.example.com/mcp`); none when that is not an http(s)
    /// URL ending in `/mcp` without a query or fragment.
    pub fn of_mcp_url(mcp_url: &str) -> Option<Self> {
        let mcp_url = mcp_url.trim_end_matches('/');
        let issuer = mcp_url.strip_suffix("/mcp")?;
        let parsed = Url::parse(issuer).ok()?;
        let plain = matches!(parsed.scheme(), "http" | "https")
            && parsed.host().is_some()
            && !issuer.contains(['?', '#']);
        if !plain {
            return None;
        }
        let resources = [resource(mcp_url).ok()?, resource(&format!("{issuer}/sse")).ok()?];
        Some(Self { issuer: issuer.to_owned(), resources })
    }

    /// The MCP endpoint's resource, for the developer's message.
    fn endpoint(&self) -> &str {
        &self.resources[0]
    }
}

impl AuthorizationParams {
    /// The redirect URI this request uses among the client's: the one it
    /// names, exactly (a loopback one on any port, as RFC 8252 section 7.3
    /// asks: a native app listens on whichever port it got), or the only
    /// one registered when it names none.
    pub fn redirect_uri<'a>(&'a self, registered: &'a [String]) -> Result<&'a str, Unfit> {
        if self.redirect_uri.is_empty() {
            return match registered {
                [only] => Ok(only),
                _ => Err(Problem::RedirectUri.of(Refusal::invalid_request(
                    "redirect_uri is required: this client registered more than one",
                ))),
            };
        }
        let matches = |uri: &String| {
            *uri == self.redirect_uri || same_loopback_but_port(uri, &self.redirect_uri)
        };
        registered.iter().find(|uri| matches(uri)).map(|_| self.redirect_uri.as_str()).ok_or_else(|| {
            Problem::RedirectUri.of(Refusal::invalid_request(format!(
                "redirect_uri {:?} is not one this client registered (they must match exactly, but for the port of a loopback one)",
                self.redirect_uri
            )))
        })
    }

    /// The checks after the client's and its redirect URI's. The resource
    /// the code will be for, in the form resources compare in (empty when
    /// the request names none: the token endpoint then issues for itself).
    pub fn check_rest(&self, server: &Server) -> Result<String, Unfit> {
        if self.response_type != "code" {
            let given = if self.response_type.is_empty() {
                "missing".to_owned()
            } else {
                format!("{:?}", self.response_type)
            };
            return Err(Problem::ResponseType.of(Refusal::new(
                "unsupported_response_type",
                format!("response_type is {given}; only code is offered"),
            )));
        }
        if self.state.chars().count() > MAX_STATE_CHARS {
            return Err(Problem::State.of(Refusal::invalid_request(format!(
                "state is over {MAX_STATE_CHARS} characters"
            ))));
        }
        check_scope(&self.scope).map_err(|refusal| Problem::Scope.of(refusal))?;
        if self.code_challenge.is_empty() {
            return Err(Problem::CodeChallenge
                .of(Refusal::invalid_request("code_challenge is required: PKCE with S256")));
        }
        if self.code_challenge_method != "S256" {
            return Err(Problem::CodeChallengeMethod.of(Refusal::invalid_request(
                "code_challenge_method must be S256 (plain is not accepted)",
            )));
        }
        if !is_challenge(&self.code_challenge) {
            return Err(Problem::CodeChallenge.of(Refusal::invalid_request(
                "code_challenge must be the 43-character base64url SHA-256 of the code verifier",
            )));
        }
        if self.resource.is_empty() {
            return Ok(String::new());
        }
        let named = resource(&self.resource).map_err(|refusal| Problem::Resource.of(refusal))?;
        if !server.resources.contains(&named) {
            return Err(Problem::Resource.of(Refusal::invalid_target(format!(
                "resource {:?} is not this server; sign-in here is for {}",
                self.resource,
                server.endpoint()
            ))));
        }
        Ok(named)
    }
}

/// Every grant is the one scope; a client may name others (its own
/// conventions), which are not granted, as RFC 6749 section 3.3 allows. But
/// what it names must be scope tokens (printable ASCII but `"` and `\`,
/// separated by spaces) of a bounded length.
fn check_scope(scope: &str) -> Result<(), Refusal> {
    if scope.chars().count() > MAX_STATE_CHARS {
        return Err(Refusal::new(
            "invalid_scope",
            format!("scope is over {MAX_STATE_CHARS} characters"),
        ));
    }
    let scope_character = |character: char| {
        character == ' ' || (character.is_ascii_graphic() && !matches!(character, '"' | '\\'))
    };
    if let Some(other) = scope.chars().find(|character| !scope_character(*character)) {
        return Err(Refusal::new(
            "invalid_scope",
            format!(
                "scope holds {other:?}; scope tokens are printable ASCII but \" and \\, separated by spaces"
            ),
        ));
    }
    Ok(())
}

fn is_challenge(text: &str) -> bool {
    text.len() == 43
        && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

/// A resource indicator (RFC 8707): an absolute URI without a fragment, in
/// the form compared (lowercase scheme and host, no default port, no
/// trailing slash).
pub fn resource(text: &str) -> Result<String, Refusal> {
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
pub fn verifies(verifier: &str, challenge: &str) -> bool {
    let shaped = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~'));
    // Compared as digests in constant time, so the comparison takes as long
    // whatever the challenge holds.
    let derived = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    shaped
        && bool::from(
            Sha256::digest(derived.as_bytes()).ct_eq(&Sha256::digest(challenge.as_bytes())),
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

    fn server() -> Server {
        Server::of_mcp_url("http://127.0.0.1:8081/mcp").unwrap()
    }

    #[test]
    fn authorization_requests_need_code_pkce_s256_and_this_servers_resource() {
        let good = AuthorizationParams {
            response_type: "code".into(),
            client_id: "c".into(),
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
            code_challenge_method: "S256".into(),
            resource: "http://127.0.0.1:8081/mcp".into(),
            scope: "inbox offline_access".into(),
            ..AuthorizationParams::default()
        };
        assert_eq!(good.check_rest(&server()), Ok("http://127.0.0.1:8081/mcp".to_owned()));
        let refused = |change: fn(&mut AuthorizationParams)| {
            let mut params = good.clone();
            change(&mut params);
            let unfit = params.check_rest(&server()).unwrap_err();
            (unfit.problem, unfit.refusal.code)
        };
        use Problem::*;
        assert_eq!(
            refused(|p| p.response_type = "token".into()),
            (ResponseType, "unsupported_response_type")
        );
        assert_eq!(refused(|p| p.code_challenge.clear()), (CodeChallenge, "invalid_request"));
        assert_eq!(
            refused(|p| p.code_challenge = "short".into()),
            (CodeChallenge, "invalid_request")
        );
        assert_eq!(
            refused(|p| p.code_challenge_method = "plain".into()),
            (CodeChallengeMethod, "invalid_request")
        );
        assert_eq!(refused(|p| p.resource = "not a uri".into()), (Resource, "invalid_target"));
        assert_eq!(
            refused(|p| p.resource = "https://elsewhere.example/mcp".into()),
            (Resource, "invalid_target")
        );
        assert_eq!(
            refused(|p| p.resource = "http://127.0.0.1:8082/mcp".into()),
            (Resource, "invalid_target"),
            "another port is another server"
        );
        assert_eq!(refused(|p| p.scope = "inbox \"all\"".into()), (Scope, "invalid_scope"));
        assert_eq!(refused(|p| p.scope = "inbox\n".into()), (Scope, "invalid_scope"));
        assert_eq!(refused(|p| p.state = "s".repeat(1001)), (State, "invalid_request"));
        let registered =
            vec!["https://a.example/cb".to_owned(), "https://a.example/other".to_owned()];
        let mut params = good.clone();
        assert!(params.redirect_uri(&registered).is_err(), "two registered, none named");
        assert_eq!(params.redirect_uri(&registered[..1]).unwrap(), "https://a.example/cb");
        params.redirect_uri = "https://a.example/cb/".into();
        assert!(params.redirect_uri(&registered).is_err(), "matching is exact");
        params.redirect_uri = "https://a.example:8443/cb".into();
        let unfit = params.redirect_uri(&registered).unwrap_err();
        assert_eq!(unfit.problem, RedirectUri, "only a loopback URI's port may differ");
    }

    #[test]
    fn a_code_may_be_for_the_mcp_endpoint_or_the_legacy_one_beside_it() {
        let with = |resource: &str| AuthorizationParams {
            response_type: "code".into(),
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
            code_challenge_method: "S256".into(),
            resource: resource.into(),
            ..AuthorizationParams::default()
        };
        let server = Server::of_mcp_url("https://Hado.Example.com/mcp").unwrap();
        assert_eq!(server.issuer, "https://Hado.Example.com", "written as the metadata writes it");
        for (named, compared) in [
            ("https://hado.example.com/mcp", "https://hado.example.com/mcp"),
            ("HTTPS://hado.example.com:443/mcp/", "https://hado.example.com/mcp"),
            ("https://hado.example.com/sse", "https://hado.example.com/sse"),
            ("", ""),
        ] {
            assert_eq!(with(named).check_rest(&server), Ok(compared.to_owned()), "{named}");
        }
        for foreign in ["https://hado.example.com/", "https://hado.example.com/messages"] {
            assert!(with(foreign).check_rest(&server).is_err(), "{foreign}");
        }
    }

    #[test]
    fn the_issuer_is_the_mcp_endpoints_url_without_its_path() {
        let issuer = |url: &str| Server::of_mcp_url(url).map(|server| server.issuer);
        assert_eq!(issuer("http://127.0.0.1:8081/mcp").as_deref(), Some("http://127.0.0.1:8081"));
        assert_eq!(
            issuer("https://hado.example.com/mcp/").as_deref(),
            Some("https://hado.example.com")
        );
        assert_eq!(
            issuer("https://example.com/hado/mcp").as_deref(),
            Some("https://example.com/hado"),
            "under a path"
        );
        for refused in [
            "",
            "https://hado.example.com",
            "https://hado.example.com/sse",
            "ftp://h/mcp",
            "https://h/x?a=1/mcp",
            "/mcp",
        ] {
            assert_eq!(issuer(refused), None, "{refused}");
        }
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
