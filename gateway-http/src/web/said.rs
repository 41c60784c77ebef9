//! Owns what the inbox says after an answer ("Done: Visa.", with Undo): the
//! form's redirect carries it in a short-lived cookie, not in the address,
//! and the inbox forgets it as it shows it, so a reload or a bookmark never
//! says it again.
//!
//! The cookie carries the words of the event the answer returned (its title,
//! and for Remember until when), so that the page it leads to shows them
//! without asking core for the event again: a click and its page are two
//! calls. A cookie can be set by a neighbouring site of the same domain
//! (cookie tossing), so it is signed: an HMAC-SHA256 keyed with the gateway
//! credential, which every gateway of a deployment holds, over the person's
//! login and everything the page shows. A cookie that is not this
//! gateway's, or not this person's, says nothing.

use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use hado_proto::v1;

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

/// What a redirect said was done, as the next page reads it back.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Heard {
    pub said: Said,
    pub id: i64,
    pub title: String,
    /// Until when Remember keeps the event quiet, as core gave it.
    pub quiet_until: Option<prost_types::Timestamp>,
}

/// The key the cookies are signed with: made from the gateway credential,
/// under a name of its own, so that it signs nothing else.
#[derive(Clone)]
pub(crate) struct SaidKey(Hmac<Sha256>);

impl SaidKey {
    pub(crate) fn new(gateway_token: &str) -> Self {
        let mut key =
            Hmac::<Sha256>::new_from_slice(gateway_token.as_bytes()).expect("any key length");
        key.update(b"hado_said cookie key");
        let key = key.finalize().into_bytes();
        Self(Hmac::<Sha256>::new_from_slice(&key).expect("any key length"))
    }

    /// The signature of `fields` for `login`.
    fn sign(&self, login: &str, fields: &[&str]) -> Hmac<Sha256> {
        let mut mac = self.0.clone();
        for field in std::iter::once(login).chain(fields.iter().copied()) {
            mac.update(&(field.len() as u64).to_be_bytes());
            mac.update(field.as_bytes());
        }
        mac
    }
}

impl std::fmt::Debug for SaidKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("SaidKey { .. }")
    }
}

/// A redirect to `to` that tells `login`'s next page what was done to
/// `event` (as the answer returned it). The cookie is the site's alone
/// (`SameSite=Strict`), unreadable by scripts, and lasts a minute: long
/// enough for the redirect.
pub(crate) fn redirect_saying(
    key: &SaidKey,
    login: &str,
    to: &str,
    said: Said,
    event: &v1::Event,
) -> Response {
    let id = event.id.to_string();
    let quiet = event
        .quiet_until
        .as_ref()
        .filter(|_| said == Said::Remembered)
        .map(|at| format!("{}_{}", at.seconds, at.nanos))
        .unwrap_or_default();
    let title = URL_SAFE_NO_PAD.encode(&event.title);
    let fields = [said.word(), id.as_str(), quiet.as_str(), title.as_str()];
    let signature = URL_SAFE_NO_PAD.encode(key.sign(login, &fields).finalize().into_bytes());
    let cookie = format!(
        "{NAME}={}.{signature}; Path=/; Max-Age=60; HttpOnly; SameSite=Strict",
        fields.join(".")
    );
    let mut response = Redirect::to(to).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
    response
}

/// What the request's cookie says was just done to `login`'s event, if
/// anything, and if this gateway signed it for them.
pub(crate) fn heard(key: &SaidKey, login: &str, headers: &HeaderMap) -> Option<Heard> {
    let value = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|header| header.to_str().ok())
        .flat_map(|header| header.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(NAME)?.strip_prefix('='))?;
    let fields: Vec<&str> = value.split('.').collect();
    let [word, id, quiet, title, signature] = fields.as_slice() else { return None };
    let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
    key.sign(login, &[word, id, quiet, title]).verify_slice(&signature).ok()?;
    let said = Said::ALL.into_iter().find(|said| said.word() == *word)?;
    let quiet_until = match quiet.split_once('_') {
        Some((seconds, nanos)) => Some(prost_types::Timestamp {
            seconds: seconds.parse().ok()?,
            nanos: nanos.parse().ok()?,
        }),
        None => None,
    };
    Some(Heard {
        said,
        id: id.parse().ok()?,
        title: String::from_utf8(URL_SAFE_NO_PAD.decode(title).ok()?).ok()?,
        quiet_until,
    })
}

/// Whether the request carries a cookie of what was said, signed or not.
pub(crate) fn heard_any(headers: &HeaderMap) -> bool {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|header| header.to_str().ok())
        .flat_map(|header| header.split(';'))
        .any(|pair| pair.trim().strip_prefix(NAME).is_some_and(|rest| rest.starts_with('=')))
}

/// Forgets what was said, on the page that said it (or that would not).
pub(crate) fn forget(response: &mut Response) {
    let cookie = format!("{NAME}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookie_of(response: &Response) -> String {
        let cookie = response.headers().get(SET_COOKIE).unwrap().to_str().unwrap();
        cookie.split(';').next().unwrap().to_owned()
    }

    fn request_with(cookie: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_str(&format!("other=1; {cookie}")).unwrap());
        headers
    }

    #[test]
    fn what_was_said_comes_back_once_to_its_person_only() {
        let key = SaidKey::new("the gateway credential");
        let quiet = prost_types::Timestamp { seconds: 1_796_000_000, nanos: 0 };
        let event = v1::Event {
            id: 7,
            title: "Visa <b>renewal</b> · виза".into(),
            quiet_until: Some(quiet),
            ..Default::default()
        };
        let response = redirect_saying(&key, "anna", "/#event-7", Said::Remembered, &event);
        let cookie = cookie_of(&response);
        assert!(cookie.starts_with("hado_said=remembered.7."), "{cookie}");
        let attributes = response.headers().get(SET_COOKIE).unwrap().to_str().unwrap();
        assert!(attributes.ends_with("Path=/; Max-Age=60; HttpOnly; SameSite=Strict"));
        let heard = heard(&key, "anna", &request_with(&cookie)).expect("anna's own cookie");
        assert_eq!(
            heard,
            Heard {
                said: Said::Remembered,
                id: 7,
                title: event.title.clone(),
                quiet_until: Some(quiet),
            }
        );
        // Done says no quiet moment, even of an event that had one.
        let done = cookie_of(&redirect_saying(&key, "anna", "/", Said::Done, &event));
        assert_eq!(super::heard(&key, "anna", &request_with(&done)).unwrap().quiet_until, None);

        // Another person's cookie, another gateway's, and every change to a
        // signed one say nothing.
        assert_eq!(super::heard(&key, "bob", &request_with(&cookie)), None);
        let other = SaidKey::new("another deployment's credential");
        assert_eq!(super::heard(&other, "anna", &request_with(&cookie)), None);
        let value = cookie.strip_prefix("hado_said=").unwrap();
        let fields: Vec<&str> = value.split('.').collect();
        let forged_title = URL_SAFE_NO_PAD.encode("Your account is locked: call +1 555 0100");
        for forged in [
            [fields[0], fields[1], fields[2], forged_title.as_str(), fields[4]].join("."),
            ["done", fields[1], fields[2], fields[3], fields[4]].join("."),
            [fields[0], "8", fields[2], fields[3], fields[4]].join("."),
            [fields[0], fields[1], "", fields[3], fields[4]].join("."),
            [fields[0], fields[1], fields[2], fields[3]].join("."),
            "done-42".to_owned(),
            String::new(),
        ] {
            let headers = request_with(&format!("hado_said={forged}"));
            assert_eq!(super::heard(&key, "anna", &headers), None, "{forged}");
        }
    }
}
