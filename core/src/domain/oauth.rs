//! OAuth 2.1's rules for signing an agent in, with no IO: what a client may
//! register (RFC 7591) or publish as its metadata document, which redirect
//! URIs and resources are acceptable (RFC 8707), and the PKCE check (S256
//! only). Every refusal carries the RFC's error code.
//!
//! Written here rather than taken from an OAuth server crate: the ones there
//! are (oxide-auth) own the request handling and the storage, while in Hado
//! the HTTP side is a gateway's and the storage is core's, behind gRPC. What
//! is left is these checks; the parsing is serde's and `url`'s, the hashing
//! `sha2`'s.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Duration;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::{Host, Url};

/// How long an authorization code may be exchanged.
pub(crate) const CODE_LIFETIME: Duration = Duration::minutes(5);
/// How long an access token works.
pub(crate) const ACCESS_LIFETIME: Duration = Duration::hours(1);
/// How long a refresh token works; each refresh gives a new one.
pub(crate) const REFRESH_LIFETIME: Duration = Duration::days(30);
/// How long a client no one has connected is remembered after its last
/// use: far longer than anyone takes to sign an app in, short enough that
/// registrations nobody finishes do not pile up.
pub(crate) const UNUSED_CLIENT_LIFETIME: Duration = Duration::hours(1);
/// How many clients no one has connected may be remembered at once; a
/// registration past it makes room by forgetting the least recently used.
pub(crate) const MAX_UNCONNECTED_CLIENTS: i64 = 1000;
/// The one scope: the agent acts as the person in their inbox.
pub(crate) const SCOPE: &str = "inbox";

const MAX_REDIRECT_URIS: usize = 10;
const MAX_URI_CHARS: usize = 2000;
const MAX_NAME_CHARS: usize = 100;
const MAX_STATE_CHARS: usize = 1000;
const MAX_CLIENT_ID_CHARS: usize = 500;

/// A refusal, with the RFC's error code and a description for the developer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {description}")]
pub(crate) struct Refusal {
    pub(crate) code: &'static str,
    pub(crate) description: String,
}

impl Refusal {
    pub(crate) fn new(code: &'static str, description: impl Into<String>) -> Self {
        Self { code, description: description.into() }
    }

    pub(crate) fn invalid_request(description: impl Into<String>) -> Self {
        Self::new("invalid_request", description)
    }

    pub(crate) fn invalid_grant(description: impl Into<String>) -> Self {
        Self::new("invalid_grant", description)
    }

    pub(crate) fn invalid_target(description: impl Into<String>) -> Self {
        Self::new("invalid_target", description)
    }

    fn metadata(description: impl Into<String>) -> Self {
        Self::new("invalid_client_metadata", description)
    }
}

/// How a client became known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientKind {
    /// By Dynamic Client Registration: Hado made up its ID.
    Registered,
    /// By its Client ID Metadata Document: its ID is the document's URL.
    Document,
}

impl ClientKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Registered => "registered",
            Self::Document => "document",
        }
    }

    pub(crate) fn from_stored(text: &str) -> Self {
        if text == "document" { Self::Document } else { Self::Registered }
    }
}

/// What a client said about itself, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClientMetadata {
    pub(crate) name: String,
    pub(crate) redirect_uris: Vec<String>,
}

/// The fields of RFC 7591's client metadata Hado reads; others are ignored,
/// as the RFC asks.
#[derive(Deserialize)]
struct RawMetadata {
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    redirect_uris: Option<Vec<String>>,
    #[serde(default)]
    grant_types: Option<Vec<String>>,
    #[serde(default)]
    response_types: Option<Vec<String>>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

impl ClientMetadata {
    /// A registration request's metadata (RFC 7591 section 2). Hado's
    /// clients are public (no secret, PKCE instead), so any requested
    /// `token_endpoint_auth_method` is answered with `none`.
    pub(crate) fn parse_registration(json: &str) -> Result<Self, Refusal> {
        let raw: RawMetadata = serde_json::from_str(json).map_err(|error| {
            Refusal::metadata(format!("the body is not client metadata JSON: {error}"))
        })?;
        Self::check(raw)
    }

    /// A Client ID Metadata Document fetched from `url`: it must name itself.
    pub(crate) fn parse_document(url: &str, json: &str) -> Result<Self, Refusal> {
        let raw: RawMetadata = serde_json::from_str(json).map_err(|error| {
            Refusal::new(
                "invalid_client",
                format!("the client's metadata document at {url} is not JSON: {error}"),
            )
        })?;
        if raw.client_id.as_deref() != Some(url) {
            return Err(Refusal::new(
                "invalid_client",
                format!("the metadata document at {url} must give {url} as its client_id"),
            ));
        }
        if raw.token_endpoint_auth_method.as_deref().is_some_and(|method| method != "none") {
            return Err(Refusal::new(
                "invalid_client",
                "a metadata document's client must use token_endpoint_auth_method none (with PKCE)",
            ));
        }
        Self::check(raw).map_err(|refusal| {
            Refusal::new(
                "invalid_client",
                format!("the metadata document at {url}: {}", refusal.description),
            )
        })
    }

    fn check(raw: RawMetadata) -> Result<Self, Refusal> {
        let redirect_uris = raw.redirect_uris.unwrap_or_default();
        if redirect_uris.is_empty() {
            return Err(Refusal::new(
                "invalid_redirect_uri",
                "redirect_uris is required: at least one URI to send the person back to",
            ));
        }
        if redirect_uris.len() > MAX_REDIRECT_URIS {
            return Err(Refusal::new(
                "invalid_redirect_uri",
                format!(
                    "redirect_uris holds {} URIs; at most {MAX_REDIRECT_URIS}",
                    redirect_uris.len()
                ),
            ));
        }
        for uri in &redirect_uris {
            check_redirect_uri(uri)?;
        }
        if let Some(types) = &raw.grant_types
            && let Some(other) = types
                .iter()
                .find(|grant| !matches!(grant.as_str(), "authorization_code" | "refresh_token"))
        {
            return Err(Refusal::metadata(format!(
                "grant_types: {other:?} is not offered; use authorization_code and refresh_token"
            )));
        }
        if let Some(types) = &raw.response_types
            && let Some(other) = types.iter().find(|kind| kind.as_str() != "code")
        {
            return Err(Refusal::metadata(format!(
                "response_types: {other:?} is not offered; use code"
            )));
        }
        let name = raw
            .client_name
            .map(|name| super::fields::trim_text(&name).to_owned())
            .filter(|name| !name.is_empty());
        let name = match name {
            Some(name) if name.chars().count() > MAX_NAME_CHARS => {
                return Err(Refusal::metadata(format!(
                    "client_name is over {MAX_NAME_CHARS} characters"
                )));
            }
            Some(name) if name.chars().any(char::is_control) => {
                return Err(Refusal::metadata("client_name holds control characters"));
            }
            // A name that reorders itself on the consent page could pass
            // for another app's ("moc.elgoog" shown as "google.com").
            Some(name) if name.chars().any(is_bidi_control) => {
                return Err(Refusal::metadata(
                    "client_name holds bidirectional formatting characters (U+202A to U+202E, U+2066 to U+2069)",
                ));
            }
            Some(name) => name,
            None => host_of(&redirect_uris[0]),
        };
        Ok(Self { name, redirect_uris })
    }
}

/// Unicode's explicit bidirectional embeddings, overrides and isolates,
/// and the marks, which reorder what follows them when shown.
pub fn is_bidi_control(character: char) -> bool {
    matches!(character, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Whether two URIs are the same `http` loopback redirect (127.0.0.1,
/// [::1] or localhost) but for their ports: scheme, host, path and query
/// all equal.
fn same_loopback_but_port(registered: &str, requested: &str) -> bool {
    let (Ok(registered), Ok(requested)) = (url::Url::parse(registered), url::Url::parse(requested))
    else {
        return false;
    };
    let loopback = |url: &url::Url| {
        url.scheme() == "http"
            && match url.host() {
                Some(url::Host::Ipv4(address)) => address.is_loopback(),
                Some(url::Host::Ipv6(address)) => address.is_loopback(),
                Some(url::Host::Domain(name)) => name == "localhost",
                None => false,
            }
    };
    loopback(&registered)
        && loopback(&requested)
        && registered.host() == requested.host()
        && registered.path() == requested.path()
        && registered.query() == requested.query()
        && registered.username().is_empty()
        && requested.username().is_empty()
        && requested.password().is_none()
        && requested.fragment().is_none()
}

/// A redirect URI a client may register: absolute, without a fragment, and
/// https; or http to this machine (RFC 8252's loopback redirect); or an
/// app's private-use scheme, named like a reversed domain (`com.example.app:`).
fn check_redirect_uri(uri: &str) -> Result<(), Refusal> {
    let refuse = |why: &str| {
        Err(Refusal::new("invalid_redirect_uri", format!("redirect URI {uri:?} {why}")))
    };
    if uri.chars().count() > MAX_URI_CHARS {
        return refuse(&format!("is over {MAX_URI_CHARS} characters"));
    }
    let Ok(url) = Url::parse(uri) else { return refuse("is not an absolute URI") };
    if url.fragment().is_some() {
        return refuse("has a fragment (#…), which a redirect URI may not have");
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&url) => Ok(()),
        "http" => refuse(
            "uses http to another machine; use https (http is for 127.0.0.1, [::1] and localhost only)",
        ),
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" => {
            refuse("uses a scheme that is never a redirect")
        }
        scheme if scheme.contains('.') => Ok(()),
        _ => refuse(
            "uses a scheme that is not https and not an app's own (named like a reversed domain, such as com.example.app)",
        ),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(address)) => address.is_loopback(),
        Some(Host::Ipv6(address)) => address.is_loopback(),
        Some(Host::Domain(name)) => name == "localhost",
        None => false,
    }
}

/// The host a redirect URI sends the person to, for the consent page (its
/// scheme for an app's own scheme).
pub(crate) fn host_of(uri: &str) -> String {
    match Url::parse(uri) {
        Ok(url) => {
            url.host_str().map(str::to_owned).unwrap_or_else(|| format!("{}:", url.scheme()))
        }
        Err(_) => uri.to_owned(),
    }
}

/// Whether a client ID is a Client ID Metadata Document's URL: https with a
/// path (plain http to this machine too when `allow_private`, for testing).
/// `Ok(None)` for an ID that is not a URL, which names a registered client.
pub(crate) fn document_url(client_id: &str, allow_private: bool) -> Result<Option<Url>, Refusal> {
    if client_id.len() > MAX_CLIENT_ID_CHARS {
        return Err(Refusal::new(
            "invalid_client",
            format!("client_id is over {MAX_CLIENT_ID_CHARS} characters"),
        ));
    }
    if !client_id.contains("://") {
        return Ok(None);
    }
    let invalid =
        |why: &str| Err(Refusal::new("invalid_client", format!("client_id {client_id:?} {why}")));
    let Ok(url) = Url::parse(client_id) else { return invalid("is not a valid URL") };
    let secure =
        url.scheme() == "https" || (allow_private && url.scheme() == "http" && is_loopback(&url));
    if !secure {
        return invalid("must be an https URL of the client's metadata document");
    }
    if url.path() == "/"
        || url.path().is_empty()
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return invalid("must be an https URL with a path, and no fragment or credentials");
    }
    Ok(Some(url))
}

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

/// The registration response (RFC 7591 section 3.2.1).
#[derive(Serialize)]
pub(crate) struct RegisteredClient<'a> {
    pub(crate) client_id: &'a str,
    pub(crate) client_id_issued_at: i64,
    pub(crate) client_name: &'a str,
    pub(crate) redirect_uris: &'a [String],
    pub(crate) grant_types: [&'static str; 2],
    pub(crate) response_types: [&'static str; 1],
    pub(crate) token_endpoint_auth_method: &'static str,
    pub(crate) scope: &'static str,
}

impl<'a> RegisteredClient<'a> {
    pub(crate) fn new(client_id: &'a str, issued_at: i64, metadata: &'a ClientMetadata) -> Self {
        Self {
            client_id,
            client_id_issued_at: issued_at,
            client_name: &metadata.name,
            redirect_uris: &metadata.redirect_uris,
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "none",
            scope: SCOPE,
        }
    }
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
    fn redirect_uris_are_https_loopback_http_or_an_apps_own_scheme() {
        for good in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost/cb",
            "http://[::1]:9/",
            "com.example.app:/oauth",
        ] {
            assert_eq!(check_redirect_uri(good), Ok(()), "{good}");
        }
        for bad in [
            "http://evil.example/cb",
            "javascript:alert(1)",
            "https://a.example/cb#x",
            "cb",
            "myapp:/cb",
            "data:text/html,x",
        ] {
            assert_eq!(check_redirect_uri(bad).unwrap_err().code, "invalid_redirect_uri", "{bad}");
        }
    }

    #[test]
    fn registration_reads_what_it_needs_and_names_each_problem() {
        let client = ClientMetadata::parse_registration(
            r#"{"client_name":" Claude ","redirect_uris":["https://claude.ai/cb"],"token_endpoint_auth_method":"client_secret_basic","logo_uri":"x"}"#,
        )
        .unwrap();
        assert_eq!(
            client,
            ClientMetadata {
                name: "Claude".into(),
                redirect_uris: vec!["https://claude.ai/cb".into()]
            }
        );
        let unnamed =
            ClientMetadata::parse_registration(r#"{"redirect_uris":["https://app.example/cb"]}"#)
                .unwrap();
        assert_eq!(unnamed.name, "app.example");
        let refused = |json: &str| ClientMetadata::parse_registration(json).unwrap_err();
        assert_eq!(refused("[").code, "invalid_client_metadata");
        assert_eq!(refused(r#"{"client_name":"x"}"#).code, "invalid_redirect_uri");
        assert_eq!(
            refused(r#"{"redirect_uris":["https://a/cb"],"grant_types":["client_credentials"]}"#)
                .code,
            "invalid_client_metadata"
        );
        assert!(
            refused(r#"{"redirect_uris":["https://a/cb"],"grant_types":["implicit"]}"#)
                .description
                .contains("implicit")
        );
        let long_name =
            format!(r#"{{"redirect_uris":["https://a/cb"],"client_name":"{}"}}"#, "n".repeat(101));
        assert!(refused(&long_name).description.contains("client_name"));
        for disguised in ["\\u202emoc.elgoog", "Claude\\u2066x\\u2069", "a\\u200fb", "c1\\u0085"] {
            let registration =
                format!(r#"{{"redirect_uris":["https://a/cb"],"client_name":"{disguised}"}}"#);
            let refusal = refused(&registration);
            assert_eq!(refusal.code, "invalid_client_metadata", "{disguised}");
            assert!(
                refusal.description.contains("client_name"),
                "{disguised}: {}",
                refusal.description
            );
        }
    }

    #[test]
    fn a_metadata_document_must_name_itself() {
        let url = "https://app.example/client.json";
        let own = r#"{"client_id":"https://app.example/client.json","client_name":"App","redirect_uris":["https://app.example/cb"]}"#;
        assert_eq!(ClientMetadata::parse_document(url, own).unwrap().name, "App");
        let other = r#"{"client_id":"https://evil.example/client.json","redirect_uris":["https://app.example/cb"]}"#;
        assert_eq!(ClientMetadata::parse_document(url, other).unwrap_err().code, "invalid_client");
    }

    #[test]
    fn document_urls_are_https_with_a_path() {
        assert_eq!(document_url("hado_client_abc", false), Ok(None));
        assert_eq!(document_url(&"x".repeat(501), false).unwrap_err().code, "invalid_client");
        assert!(document_url("https://app.example/client.json", false).unwrap().is_some());
        for bad in [
            "https://app.example/",
            "http://app.example/client.json",
            "https://u:p@app.example/c",
            "http://127.0.0.1:9/c",
        ] {
            assert_eq!(document_url(bad, false).unwrap_err().code, "invalid_client", "{bad}");
        }
        assert!(document_url("http://127.0.0.1:9/c", true).unwrap().is_some());
        assert!(document_url("http://app.example/c", true).is_err());
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
