//! Owns what the inbox says after an answer ("Done: Visa.", with Undo): the
//! form's redirect carries it in a short-lived cookie, not in the address,
//! and the inbox forgets it as it shows it, so a reload or a bookmark never
//! says it again.

use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};

const NAME: &str = "hado_said";

/// What the person just did to an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Said {
    Done,
    Deleted,
    Remembered,
    Added,
    Saved,
    Reopened,
    Unremembered,
}

impl Said {
    const ALL: [Self; 7] = [
        Self::Done,
        Self::Deleted,
        Self::Remembered,
        Self::Added,
        Self::Saved,
        Self::Reopened,
        Self::Unremembered,
    ];

    fn word(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Deleted => "deleted",
            Self::Remembered => "remembered",
            Self::Added => "added",
            Self::Saved => "saved",
            Self::Reopened => "reopened",
            Self::Unremembered => "unremembered",
        }
    }
}

/// A redirect to `to` that tells the next page what was done to event `id`.
/// The cookie is the site's alone (`SameSite=Strict`), unreadable by
/// scripts, and lasts a minute: long enough for the redirect.
pub(crate) fn redirect_saying(to: &str, said: Said, id: i64) -> Response {
    let cookie =
        format!("{NAME}={}-{id}; Path=/; Max-Age=60; HttpOnly; SameSite=Strict", said.word());
    let mut response = Redirect::to(to).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
    response
}

/// What the request's cookie says was just done, if anything.
pub(crate) fn heard(headers: &HeaderMap) -> Option<(Said, i64)> {
    let value = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|header| header.to_str().ok())
        .flat_map(|header| header.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(NAME)?.strip_prefix('='))?;
    let (word, id) = value.split_once('-')?;
    let said = Said::ALL.into_iter().find(|said| said.word() == word)?;
    Some((said, id.parse().ok()?))
}

/// Forgets what was said, on the page that said it.
pub(crate) fn forget(response: &mut Response) {
    let cookie = format!("{NAME}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_said_comes_back_once() {
        let response = redirect_saying("/#event-7", Said::Remembered, 7);
        let cookie = response.headers().get(SET_COOKIE).unwrap().to_str().unwrap();
        assert!(cookie.starts_with("hado_said=remembered-7;"), "{cookie}");
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_static("other=1; hado_said=done-42"));
        assert_eq!(heard(&headers), Some((Said::Done, 42)));
        headers.insert(COOKIE, HeaderValue::from_static("hado_said=hacked-42"));
        assert_eq!(heard(&headers), None);
        headers.insert(COOKIE, HeaderValue::from_static("hado_said=done-x"));
        assert_eq!(heard(&headers), None);
    }
}
