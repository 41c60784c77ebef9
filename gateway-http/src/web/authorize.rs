//! Owns the page where the person lets an app sign in to their inbox (the
//! authorization endpoint of MCP authorization): behind the same sign-in as
//! every page, it shows who is asking and what the app will be able to do,
//! with Allow and Deny. Core checks the request and, on Allow, issues the
//! one-time code; this page only carries the request's parameters through
//! a plain form (no JavaScript), adds the MCP address this inbox is
//! configured with (core holds the request's resource to it and names the
//! issuer by it), and sends the browser where core says. A request core
//! refuses is a page in the person's language, never a redirect. The form
//! is guarded against other sites like every form here; a request over its
//! size or the person's rate is refused before core is asked.

use std::net::SocketAddr;

use askama::Template;
use axum::Form;
use axum::extract::{ConnectInfo, Query, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

use hado_proto::v1;
use hado_words::Words;

use crate::auth::{InboxUser, inbox_user};
use crate::state::AppState;
use crate::web::nav::Nav;
use crate::web::render::{message, render};
use crate::web::session::{Session, call};

/// The longest query or form an authorization request may have.
pub(crate) const MAX_REQUEST_BYTES: usize = 16 * 1024;

/// Refuses an authorization request that is too long, or an answer (Allow
/// or Deny, a POST) past the person's allowance, before core is asked
/// anything. Only answers count: another site can make a browser fetch the
/// page, but not answer it, so page views cannot use the allowance up. A
/// request naming no person goes on, to be refused as signed out.
pub(crate) async fn limits(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let query = request.uri().query().map_or(0, str::len);
    let declared = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<usize>().ok());
    if query > MAX_REQUEST_BYTES || declared.is_some_and(|length| length > MAX_REQUEST_BYTES) {
        return message(
            StatusCode::PAYLOAD_TOO_LARGE,
            "This sign-in request is too long.",
            "Этот запрос на вход слишком длинный.",
        );
    }
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0)
        .filter(|_| request.method() == Method::POST);
    if let Some(InboxUser(login)) =
        peer.and_then(|peer| inbox_user(&state, peer, request.headers()).ok())
        && state.authorize_limit.take(&login).is_err()
    {
        return message(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many sign-in requests in a minute; wait a minute and try again.",
            "Слишком много запросов на вход за минуту; подождите минуту и попробуйте снова.",
        );
    }
    next.run(request).await
}

/// The request's parameters, as the client sent them in the query and as
/// the form carries them back.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct AuthorizationQuery {
    response_type: String,
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
    code_challenge_method: String,
    state: String,
    resource: String,
    scope: String,
}

impl AuthorizationQuery {
    /// The request for core, with the MCP endpoint this inbox knows:
    /// configuration, never a parameter the client could choose.
    fn request(&self, served_resource: &str) -> v1::AuthorizationRequest {
        v1::AuthorizationRequest {
            response_type: self.response_type.clone(),
            client_id: self.client_id.clone(),
            redirect_uri: self.redirect_uri.clone(),
            code_challenge: self.code_challenge.clone(),
            code_challenge_method: self.code_challenge_method.clone(),
            state: self.state.clone(),
            resource: self.resource.clone(),
            scope: self.scope.clone(),
            served_resource: served_resource.to_owned(),
        }
    }

    /// The parameters as hidden form fields, in order.
    fn fields(&self) -> Vec<(&'static str, String)> {
        [
            ("response_type", &self.response_type),
            ("client_id", &self.client_id),
            ("redirect_uri", &self.redirect_uri),
            ("code_challenge", &self.code_challenge),
            ("code_challenge_method", &self.code_challenge_method),
            ("state", &self.state),
            ("resource", &self.resource),
            ("scope", &self.scope),
        ]
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(name, value)| (name, value.clone()))
        .collect()
    }
}

#[derive(Template)]
#[template(path = "authorize.html")]
struct AuthorizePage {
    words: &'static Words,
    nav: Option<Nav>,
    client_name: String,
    redirect_host: String,
    fields: Vec<(&'static str, String)>,
}

#[derive(Template)]
#[template(path = "authorize_refused.html")]
struct RefusedPage {
    words: &'static Words,
    nav: Option<Nav>,
    /// What is wrong, in the person's words; empty when core named nothing.
    problem: &'static str,
    /// The RFC's code and core's description, for the app's developer.
    detail: String,
}

/// What is wrong with a refused request, in the person's words.
fn problem_words(words: &'static Words, problem: v1::AuthorizationProblem) -> &'static str {
    use v1::AuthorizationProblem as Problem;
    match problem {
        Problem::Client => words.authorize_problem_client,
        Problem::RedirectUri => words.authorize_problem_redirect_uri,
        Problem::ResponseType => words.authorize_problem_response_type,
        Problem::CodeChallenge => words.authorize_problem_code_challenge,
        Problem::CodeChallengeMethod => words.authorize_problem_code_challenge_method,
        Problem::Resource => words.authorize_problem_resource,
        Problem::Scope => words.authorize_problem_scope,
        Problem::State => words.authorize_problem_state,
        Problem::Unspecified => "",
    }
}

/// The page when this inbox does not know the MCP endpoint's address
/// (`HttpConfig::mcp_url`): without it core can neither hold a request to
/// this server's resource nor name the issuer, so no app can sign in, and
/// the page says who can change that.
fn unconfigured(session: &Session) -> Response {
    let page = RefusedPage {
        words: session.words,
        nav: session.nav(""),
        problem: session.words.authorize_unconfigured,
        detail: String::new(),
    };
    render(StatusCode::SERVICE_UNAVAILABLE, page)
}

/// What core's answer means for the browser: a page, or a redirect (only
/// after the person answered: core sets `redirect_to` for nothing else).
fn answer(
    session: &Session,
    query: &AuthorizationQuery,
    check: v1::AuthorizationCheck,
) -> Response {
    if !check.redirect_to.is_empty() {
        return Redirect::to(&check.redirect_to).into_response();
    }
    if let Some(error) = &check.error {
        let page = RefusedPage {
            words: session.words,
            nav: session.nav(""),
            problem: problem_words(session.words, check.problem()),
            detail: format!("{} ({})", error.description, error.error),
        };
        return render(StatusCode::BAD_REQUEST, page);
    }
    let page = AuthorizePage {
        words: session.words,
        nav: session.nav(""),
        client_name: check.client_name,
        redirect_host: check.redirect_host,
        fields: query.fields(),
    };
    render(StatusCode::OK, page)
}

/// `GET /oauth/authorize`: who is asking, and Allow or Deny.
pub(crate) async fn authorize_page(
    State(state): State<AppState>,
    session: Session,
    Query(query): Query<AuthorizationQuery>,
) -> Result<Response, Response> {
    let Some(served) = state.config.mcp_url.as_deref() else {
        return Ok(unconfigured(&session));
    };
    let check =
        call(&state, session.words, state.oauth().check_authorization(query.request(served)))
            .await?;
    Ok(answer(&session, &query, check))
}

#[derive(serde::Deserialize)]
pub(crate) struct Decision {
    #[serde(flatten)]
    query: AuthorizationQuery,
    #[serde(default)]
    decision: String,
}

/// `POST /oauth/authorize`: the person's answer. Allow gets a code from
/// core; Deny sends the client `access_denied`. Either way core checks the
/// request again and says where the browser goes.
pub(crate) async fn authorize(
    State(state): State<AppState>,
    session: Session,
    Form(form): Form<Decision>,
) -> Result<Response, Response> {
    let Some(served) = state.config.mcp_url.as_deref() else {
        return Ok(unconfigured(&session));
    };
    let mut oauth = state
        .oauth_as(&session.login)
        .map_err(|error| message(error.status, &error.body.error, ""))?;
    let request = form.query.request(served);
    let check = if form.decision == "allow" {
        call(&state, session.words, oauth.approve(request)).await?
    } else {
        call(&state, session.words, oauth.deny(request)).await?
    };
    Ok(answer(&session, &form.query, check))
}
