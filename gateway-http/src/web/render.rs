//! Owns how a page becomes a response: rendering a template (never kept by
//! a browser's cache), the one-message pages (a failure of a call to
//! core, a refusal), and putting core's refusal beside a form's fields.

use std::collections::HashMap;

use askama::Template;
use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use tonic_types::StatusExt;

use hado_gateway::client::Failure;
use hado_words::{self as words, Words};

use crate::error::ApiError;
use crate::state::AppState;
use crate::web::nav::Nav;

#[derive(Template)]
#[template(path = "message.html")]
pub(crate) struct MessagePage {
    pub(crate) words: &'static Words,
    pub(crate) nav: Option<Nav>,
    pub(crate) message: String,
    /// The message again in Russian, for someone whose language is unknown,
    /// and the words of that second language.
    pub(crate) second: String,
    pub(crate) second_words: Option<&'static Words>,
}

pub(crate) fn render(status: StatusCode, page: impl Template) -> Response {
    match page.render() {
        Ok(html) => {
            let mut response = (status, Html(html)).into_response();
            response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(error) => {
            tracing::error!(%error, "a page failed to render");
            (StatusCode::INTERNAL_SERVER_ERROR, "the page failed to render").into_response()
        }
    }
}

/// A page with one message, in both languages when the person is unknown.
pub(crate) fn message(status: StatusCode, english: &str, russian: &str) -> Response {
    render(
        status,
        MessagePage {
            words: &words::EN,
            nav: None,
            message: english.to_owned(),
            second: russian.to_owned(),
            second_words: Some(&words::RU),
        },
    )
}

/// What a failed call to core shows on a page.
pub(crate) fn failure_page(
    state: &AppState,
    words: &'static Words,
    status: &tonic::Status,
) -> Response {
    match state.core.explain(status) {
        Failure::Unreachable(_) => {
            let mut page = render(
                StatusCode::SERVICE_UNAVAILABLE,
                MessagePage {
                    words,
                    nav: None,
                    message: words.core_down.into(),
                    second: String::new(),
                    second_words: None,
                },
            );
            page.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(hado_gateway::client::RETRY_AFTER_SECONDS),
            );
            page
        }
        failure => {
            let error = ApiError::from_core(&state.core, status);
            // Core's words for the person when it gave them, else its message.
            let message = status
                .get_details_localized_message()
                .map_or_else(|| failure.message().to_owned(), |localized| localized.message);
            let mut page = render(
                error.status,
                MessagePage {
                    words,
                    nav: None,
                    message,
                    second: String::new(),
                    second_words: None,
                },
            );
            // A refusal for asking too often says when to ask again.
            if failure.code().retry_helps()
                && let Some(wait) =
                    status.get_details_retry_info().and_then(|info| info.retry_delay)
            {
                page.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from(wait.as_secs().max(1)),
                );
            }
            page
        }
    }
}

/// Puts core's refusal next to the fields it names, or above the form.
pub(crate) fn refusal(
    state: &AppState,
    status: &tonic::Status,
) -> (HashMap<String, String>, String) {
    let error = ApiError::from_core(&state.core, status);
    if error.body.violations.is_empty() {
        return (HashMap::new(), error.body.error);
    }
    let words =
        |violation: crate::error::Violation| violation.localized.unwrap_or(violation.message);
    (
        error
            .body
            .violations
            .into_iter()
            .map(|violation| (violation.field.clone(), words(violation)))
            .collect(),
        String::new(),
    )
}
