//! Owns the TLS of core's outbound HTTP clients (webhooks, Telegram's Bot
//! API, OAuth clients' metadata documents): the crypto provider, the
//! system's CA certificates, and what happens without them. A system with
//! no CA certificates (a bare container image) still starts and serves:
//! only a call to an `https` address fails, with an error that says what to
//! install, and the log says so once at start.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set when the system's CA certificates could not be loaded.
static WITHOUT_ROOTS: AtomicBool = AtomicBool::new(false);

const NO_ROOTS: &str = "this system has no CA certificates, so no https address can be verified: \
     install the ca-certificates package in core's image (or point SSL_CERT_FILE at a bundle) and restart core";

/// Makes rustls's `ring` provider the process's TLS crypto, once; every
/// HTTP client core builds calls this first.
///
/// `ring` instead of reqwest's default `aws-lc-rs`: the same TLS, but
/// aws-lc's C build was a seventh of a cold build. With no provider
/// compiled in, reqwest needs one installed before any client is built, so
/// a program that links core and builds clients of its own (the tests, the
/// benchmarks) calls this first too.
pub fn install_tls_provider() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // Another provider installed first (by a program embedding core) is kept.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// An outbound HTTP client that verifies servers against the system's CA
/// certificates. Without any, it is built with none: plain http works, and
/// every request to an `https` address is refused before it is made, with
/// the reason and the fix, so that no caller can forget to ask.
#[derive(Clone, Debug)]
pub struct OutboundClient {
    client: reqwest::Client,
}

impl OutboundClient {
    /// The client as `configure` sets it up.
    pub fn new(configure: impl Fn(reqwest::ClientBuilder) -> reqwest::ClientBuilder) -> Self {
        install_tls_provider();
        let client = match configure(reqwest::Client::builder()).build() {
            Ok(client) => client,
            Err(error) => {
                if !WITHOUT_ROOTS.swap(true, Ordering::Relaxed) {
                    tracing::warn!(%error, "{NO_ROOTS}; Telegram, https webhooks and agents' metadata documents fail until then");
                }
                configure(reqwest::Client::builder())
                    .tls_certs_only(Vec::new())
                    .build()
                    .expect("an HTTP client without CA certificates builds")
            }
        };
        Self { client }
    }

    pub fn get<U: reqwest::IntoUrl + AsRef<str>>(
        &self,
        url: U,
    ) -> Result<reqwest::RequestBuilder, String> {
        self.request(reqwest::Method::GET, url)
    }

    pub fn post<U: reqwest::IntoUrl + AsRef<str>>(
        &self,
        url: U,
    ) -> Result<reqwest::RequestBuilder, String> {
        self.request(reqwest::Method::POST, url)
    }

    fn request<U: reqwest::IntoUrl + AsRef<str>>(
        &self,
        method: reqwest::Method,
        url: U,
    ) -> Result<reqwest::RequestBuilder, String> {
        refuse_unverifiable(url.as_ref())?;
        Ok(self.client.request(method, url))
    }
}

/// Refuses an `https` address while the system has no CA certificates,
/// with the reason and the fix; anything else passes.
fn refuse_unverifiable(url: &str) -> Result<(), String> {
    let https = url.get(..6).is_some_and(|scheme| scheme.eq_ignore_ascii_case("https:"));
    if https && WITHOUT_ROOTS.load(Ordering::Relaxed) { Err(NO_ROOTS.to_owned()) } else { Ok(()) }
}
