//! Owns what makes the inbox an installable web app: its manifest, its
//! icons (drawn by `scripts/icons.py`), the service worker (served from
//! `/`, so that its scope is the whole inbox) and the offline page that
//! worker shows when the network is gone. The manifest, the icons and the
//! offline page are under `/static/`, which needs no sign-in, since a
//! browser fetches a manifest without its cookies.

use axum::extract::Path;
use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};

use hado_words as words;

use crate::web::assets::assets;
use crate::web::render::message;

const SERVICE_WORKER: &str = include_str!("../../static/sw.js");
const ICON_192: &[u8] = include_bytes!("../../static/icons/icon-192.png");
const ICON_512: &[u8] = include_bytes!("../../static/icons/icon-512.png");
const MASKABLE_512: &[u8] = include_bytes!("../../static/icons/maskable-512.png");

/// The theme's colours, as the stylesheet's `--bg` in light and dark.
pub(crate) const THEME_LIGHT: &str = "#fafafa";
pub(crate) const THEME_DARK: &str = "#16161a";

/// `GET /static/manifest.webmanifest`.
pub(crate) async fn manifest() -> impl IntoResponse {
    let icon = |src: &str, size: &str, purpose: &str| serde_json::json!({ "src": src, "sizes": size, "type": "image/png", "purpose": purpose });
    let manifest = serde_json::json!({
        "id": "/",
        "name": "Hado",
        "short_name": "Hado",
        "description": "Your deadlines, and reminders of them at the right moments.",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "theme_color": THEME_LIGHT,
        "background_color": THEME_LIGHT,
        // Chromium's dark variant of the colours above; the pages' theme-color
        // meta tags say the same to every browser.
        "user_preferences": {
            "color_scheme_dark": { "theme_color": THEME_DARK, "background_color": THEME_DARK }
        },
        "icons": [
            icon("/static/icons/icon-192.png", "192x192", "any"),
            icon("/static/icons/icon-512.png", "512x512", "any"),
            icon("/static/icons/maskable-512.png", "512x512", "maskable"),
        ],
    });
    (
        [(CONTENT_TYPE, "application/manifest+json"), (CACHE_CONTROL, "public, max-age=3600")],
        manifest.to_string(),
    )
}

/// `GET /sw.js`: the worker, its cache named by this build's fingerprint so
/// that a new build's worker replaces the old cache.
pub(crate) async fn service_worker() -> impl IntoResponse {
    let script = SERVICE_WORKER.replace("__ASSETS__", assets());
    ([(CONTENT_TYPE, "text/javascript; charset=utf-8"), (CACHE_CONTROL, "no-cache")], script)
}

/// `GET /static/offline.html`: what the worker shows with no network, in
/// both languages, since it is kept before anyone knows which is needed.
pub(crate) async fn offline() -> Response {
    message(StatusCode::OK, words::EN.offline, words::RU.offline)
}

/// `GET /static/icons/{name}`.
pub(crate) async fn icon(Path(name): Path<String>) -> Response {
    let png = match name.as_str() {
        "icon-192.png" => ICON_192,
        "icon-512.png" => ICON_512,
        "maskable-512.png" => MASKABLE_512,
        _ => return message(StatusCode::NOT_FOUND, "no such page", "нет такой страницы"),
    };
    ([(CONTENT_TYPE, "image/png"), (CACHE_CONTROL, "public, max-age=86400")], png).into_response()
}
