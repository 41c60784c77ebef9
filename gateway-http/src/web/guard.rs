//! Owns the cross-site guard of the web inbox's forms.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use crate::state::AppState;
use crate::web::render::message;

/// Refuses form posts that another site's page sends in the person's name:
/// the browser's `Sec-Fetch-Site` or `Origin` must say the form is ours.
pub(crate) async fn same_origin_forms(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0);
    if request.method() != Method::GET
        && request.method() != Method::HEAD
        && crate::edge::cross_site(&state, peer, request.headers()).is_some()
    {
        return message(
            StatusCode::FORBIDDEN,
            "This form was sent from another site, so it was not accepted.",
            "Эта форма отправлена с другого сайта, поэтому не принята.",
        );
    }
    next.run(request).await
}
