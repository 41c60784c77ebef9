//! Owns what the engine asks of the network, behind one small trait at
//! core's edge: a new webhook's host resolved and checked, and an agent's
//! Client ID Metadata Document fetched. The engine holds a `dyn Network`
//! and does no other I/O than storage, so its rules can be tested with a
//! stand-in that opens no socket; `Internet` is the real one, through
//! `targets`' policy (no private addresses, no redirects, no proxy).

use std::time::Duration;

use futures::future::BoxFuture;
use url::Url;

use crate::outbound_tls::OutboundClient;
use crate::targets::TargetPolicy;

/// A metadata document larger than this is refused.
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024;
/// How long fetching a metadata document may take.
const DOCUMENT_TIMEOUT: Duration = Duration::from_secs(5);

/// The network as the engine sees it. Each failure is a reason in words,
/// which the engine puts into its refusal.
pub trait Network: Send + Sync {
    /// Checks a webhook URL's name as it is added (the engine has checked
    /// an address written in it already): a name that resolves only to
    /// addresses a webhook may not reach is refused; one that cannot be
    /// resolved now passes (the check at send time decides then).
    fn check_webhook<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<(), String>>;

    /// The body of the metadata document at `url`, at most
    /// [`MAX_DOCUMENT_BYTES`] of it.
    fn fetch_document<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<String, String>>;
}

/// The real network, within the webhook target policy.
pub struct Internet {
    policy: TargetPolicy,
    documents: OutboundClient,
}

impl Internet {
    pub fn new(policy: TargetPolicy) -> Self {
        Self { policy, documents: policy.client(DOCUMENT_TIMEOUT) }
    }
}

impl Network for Internet {
    fn check_webhook<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self.policy.check_name(url))
    }

    fn fetch_document<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let mut response = self
                .documents
                .get(url.clone())?
                .header("accept", "application/json")
                .send()
                .await
                .map_err(|error| error.to_string())?;
            if !response.status().is_success() {
                return Err(format!("it answered {}", response.status()));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|error| error.to_string())? {
                if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                    return Err(format!("it is over {} KiB", MAX_DOCUMENT_BYTES / 1024));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(String::from_utf8_lossy(&body).into_owned())
        })
    }
}
