//! Owns what a client may register (RFC 7591) or publish as its metadata
//! document, which redirect URIs it may name, and where a document's URL
//! may point.

use serde::{Deserialize, Serialize};
use url::{Host, Url};

use crate::oauth::{
    MAX_CLIENT_ID_CHARS, MAX_NAME_CHARS, MAX_REDIRECT_URIS, MAX_URI_CHARS, Refusal, SCOPE,
};
use crate::text::{first_bidi_control, trim_text};

/// How a client became known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientKind {
    /// By Dynamic Client Registration: Hado made up its ID.
    Registered,
    /// By its Client ID Metadata Document: its ID is the document's URL.
    Document,
}

impl ClientKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Registered => "registered",
            Self::Document => "document",
        }
    }

    pub fn from_stored(text: &str) -> Self {
        if text == "document" { Self::Document } else { Self::Registered }
    }
}

/// What a client said about itself, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientMetadata {
    pub name: String,
    pub redirect_uris: Vec<String>,
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
    pub fn parse_registration(json: &str) -> Result<Self, Refusal> {
        let raw: RawMetadata = serde_json::from_str(json).map_err(|error| {
            Refusal::metadata(format!("the body is not client metadata JSON: {error}"))
        })?;
        Self::check(raw)
    }

    /// A Client ID Metadata Document fetched from `url`: it must name itself.
    pub fn parse_document(url: &str, json: &str) -> Result<Self, Refusal> {
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
        let name =
            raw.client_name.map(|name| trim_text(&name).to_owned()).filter(|name| !name.is_empty());
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
            // for another app's ("moc.elgoog" shown as "google.com"): the
            // rule every text field of Hado's meets.
            Some(name) => match first_bidi_control(&name) {
                Some((position, found)) => {
                    return Err(Refusal::metadata(format!(
                        "client_name holds the bidirectional formatting character U+{:04X} at position {position}, which reorders the text shown around it",
                        u32::from(found)
                    )));
                }
                None => name,
            },
            None => host_of(&redirect_uris[0]),
        };
        Ok(Self { name, redirect_uris })
    }
}

/// Whether two URIs are the same `http` loopback redirect (127.0.0.1,
/// [::1] or localhost) but for their ports: scheme, host, path and query
/// all equal.
pub(super) fn same_loopback_but_port(registered: &str, requested: &str) -> bool {
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
pub fn host_of(uri: &str) -> String {
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
pub fn document_url(client_id: &str, allow_private: bool) -> Result<Option<Url>, Refusal> {
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

/// The registration response (RFC 7591 section 3.2.1).
#[derive(Serialize)]
pub struct RegisteredClient<'a> {
    pub client_id: &'a str,
    pub client_id_issued_at: i64,
    pub client_name: &'a str,
    pub redirect_uris: &'a [String],
    pub grant_types: [&'static str; 2],
    pub response_types: [&'static str; 1],
    pub token_endpoint_auth_method: &'static str,
    pub scope: &'static str,
}

impl<'a> RegisteredClient<'a> {
    pub fn new(client_id: &'a str, issued_at: i64, metadata: &'a ClientMetadata) -> Self {
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
}
