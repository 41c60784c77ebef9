//! Owns who a page or a form is for: the signed-in person (`Person`, who
//! the request names, before any call to core) and their session
//! (`Session`, with the profile that gives a page its words, zone and
//! navigation: one call), and how a page calls core: a reply, or the
//! failure page that says why there is none.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use tonic::Code;

use hado_gateway::client::Failure;
use hado_proto::v1;
use hado_words::{self as words, Words};

use crate::auth::{InboxUser, NoUser, inbox_user};
use crate::state::{AppState, Inbox};
use crate::web::nav::{self, Nav};
use crate::web::render::{failure_page, message};
use crate::web::view::Viewer;

/// The signed-in person of a request and an Inbox client as them, before
/// any call to core: what the pages that make one call (the inbox, the
/// archive) and the answers' forms start from.
pub(crate) struct Person {
    pub login: String,
    /// The page asked for, when it was asked for with GET.
    pub here: Option<String>,
    pub inbox: Inbox,
}

/// A request without a person gets the signed-out page.
impl FromRequestParts<AppState> for Person {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|info| info.0);
        let peer = peer.ok_or_else(|| {
            message(StatusCode::INTERNAL_SERVER_ERROR, "the peer address is unknown", "")
        })?;
        // A page comes back to where it was asked for; a page a form's post
        // shows comes back to the inbox.
        let here = (parts.method == Method::GET)
            .then(|| parts.uri.path_and_query().map(|path| path.as_str().to_owned()))
            .flatten();
        Person::start(state, peer, &parts.headers, here).await
    }
}

impl Person {
    async fn start(
        state: &AppState,
        peer: SocketAddr,
        headers: &HeaderMap,
        here: Option<String>,
    ) -> Result<Self, Response> {
        let InboxUser(login) =
            inbox_user(state, peer, headers).map_err(|refusal| match refusal {
                NoUser::SignedOut(_) => {
                    message(StatusCode::UNAUTHORIZED, words::EN.signed_out, words::RU.signed_out)
                }
                NoUser::Ambiguous => message(
                    StatusCode::BAD_REQUEST,
                    "The sign-in in front of Hado named more than one person for this request, so \
                 Hado cannot tell who you are. Ask whoever runs this site to make the proxy \
                 replace X-Remote-User rather than add to it.",
                    "Вход перед Hado назвал для этого запроса больше одного человека, поэтому Hado \
                 не может понять, кто вы. Попросите администратора сайта настроить прокси так, \
                 чтобы он заменял X-Remote-User, а не добавлял его.",
                ),
            })?;
        let inbox =
            state.inbox(&login).map_err(|error| message(error.status, &error.body.error, ""))?;
        Ok(Self { login, here, inbox })
    }

    /// Core's reply to one of the person's calls, or the page that says
    /// why it failed in their words: these are asked of core then, as
    /// nothing has told the page them yet (a failure costs a call more, a
    /// success none). When core cannot be reached, asking would fail the
    /// same way, so the page speaks English.
    pub(crate) async fn reply<T>(
        &mut self,
        state: &AppState,
        reply: Result<tonic::Response<T>, tonic::Status>,
    ) -> Result<T, Response> {
        let status = match reply {
            Ok(reply) => return Ok(reply.into_inner()),
            Err(status) => status,
        };
        let words = match state.core.explain(&status) {
            Failure::Unreachable(_) => &words::EN,
            _ => match self
                .inbox
                .get_profile(v1::GetProfileRequest { without_attention: true })
                .await
            {
                Ok(profile) => words::for_locale(&profile.get_ref().locale),
                Err(_) => &words::EN,
            },
        };
        Err(failure_page(state, words, &status))
    }
}

/// The signed-in person of a page, with their profile and an Inbox client.
pub(crate) struct Session {
    pub login: String,
    /// The page asked for, when it was asked for with GET.
    pub here: Option<String>,
    pub viewer: Viewer,
    pub words: &'static Words,
    pub inbox: Inbox,
}

/// Every page's person: a request without one gets the signed-out page.
impl FromRequestParts<AppState> for Session {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let person = Person::from_request_parts(parts, state).await?;
        Self::of(state, person).await
    }
}

impl Session {
    /// The person's session: their profile asked of core.
    async fn of(state: &AppState, person: Person) -> Result<Self, Response> {
        let Person { login, here, mut inbox } = person;
        let profile =
            call(state, &words::EN, inbox.get_profile(v1::GetProfileRequest::default())).await?;
        let words = words::for_locale(&profile.locale);
        Ok(Self { login, here, viewer: Viewer::new(profile), words, inbox })
    }

    pub(super) async fn start(
        state: &AppState,
        peer: SocketAddr,
        headers: &HeaderMap,
        here: Option<String>,
    ) -> Result<Self, Response> {
        Self::of(state, Person::start(state, peer, headers, here).await?).await
    }

    /// An instant from core in the person's words and zone ("yesterday,
    /// 14:05"), or nothing when there is none.
    pub(super) fn when(&self, instant: Option<&prost_types::Timestamp>) -> String {
        self.viewer.when(self.words, instant).unwrap_or_default()
    }

    /// The navigation bar of the session's page.
    pub(super) fn nav(&self, current: &'static str) -> Option<Nav> {
        nav::bar(current, &self.viewer.profile, self.here.as_deref())
    }

    /// The person's event `id`, or the page that says why it cannot be shown.
    pub(super) async fn event(&mut self, state: &AppState, id: i64) -> Result<v1::Event, Response> {
        call(state, self.words, self.inbox.get_event(v1::EventId { id })).await
    }
}
/// Core's reply to one of a page's calls, or the page that says why it
/// failed, in `words`'s words: the step every page takes with a call, as
/// `AppState::call` is for the JSON routes.
pub(crate) async fn call<T>(
    state: &AppState,
    words: &'static Words,
    reply: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, Response> {
    reply
        .await
        .map(tonic::Response::into_inner)
        .map_err(|status| failure_page(state, words, &status))
}

/// As [`call`], but a refusal with one of the `kept` codes comes back for
/// the page to show beside its form; any other failure is its own page.
pub(crate) async fn call_keeping<T>(
    state: &AppState,
    words: &'static Words,
    kept: &[Code],
    reply: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<Result<T, tonic::Status>, Response> {
    match reply.await {
        Ok(reply) => Ok(Ok(reply.into_inner())),
        Err(status) if kept.contains(&status.code()) => Ok(Err(status)),
        Err(status) => Err(failure_page(state, words, &status)),
    }
}
