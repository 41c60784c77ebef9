//! Owns the stylesheet and the script, compiled into the binary and served
//! under an address that changes with their content.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::extract::Query;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;

const STYLESHEET: &str = include_str!("../../static/hado.css");
const SCRIPT: &str = include_str!("../../static/hado.js");

/// A fingerprint of the static files, which pages add to their addresses
/// (`/static/hado.css?v=…`): a new build's files have a new address, so a
/// browser may keep each one for a year without asking again.
pub(crate) static ASSETS: LazyLock<String> = LazyLock::new(|| {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new().chain_update(STYLESHEET).chain_update(SCRIPT).finalize();
    hex::encode(&digest[..6])
});

/// How long a browser keeps a static file: a year when asked for by this
/// build's fingerprint, an hour otherwise.
fn cache_for(query: &HashMap<String, String>) -> &'static str {
    if query.get("v").is_some_and(|version| *version == *ASSETS) {
        "public, max-age=31536000, immutable"
    } else {
        "public, max-age=3600"
    }
}

pub(crate) async fn stylesheet(Query(query): Query<HashMap<String, String>>) -> impl IntoResponse {
    ([(CONTENT_TYPE, "text/css; charset=utf-8"), (CACHE_CONTROL, cache_for(&query))], STYLESHEET)
}

pub(crate) async fn script(Query(query): Query<HashMap<String, String>>) -> impl IntoResponse {
    ([(CONTENT_TYPE, "text/javascript; charset=utf-8"), (CACHE_CONTROL, cache_for(&query))], SCRIPT)
}

/// The static files' fingerprint, for the pages' addresses of them.
pub(crate) fn assets() -> &'static str {
    &ASSETS
}
