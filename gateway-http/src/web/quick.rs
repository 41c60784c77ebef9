//! Owns the Add page and its quick add: one typed line ("Passport renewal
//! by 14 Mar, start 1 Mar") read into the form's title, due day and time
//! and preparation day, which stay editable before saving. Without
//! JavaScript the line's Fill in button opens `/new?line=…` with the fields
//! filled; with it, the page asks `/new/read?line=…` as the person types.
//! The reading is `quick_add`'s; core validates what is saved.

use axum::extract::Query;
use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::quick_add::{self, QuickAdd};
use crate::web::render::render;
use crate::web::session::Session;

use super::events::{EventForm, FormPage};

/// The longest line read, as long as a title may be.
const MAX_LINE: usize = 200;

#[derive(serde::Deserialize)]
pub(crate) struct LineQuery {
    line: Option<String>,
}

impl LineQuery {
    fn line(&self) -> Option<&str> {
        self.line.as_deref().map(str::trim).filter(|line| !line.is_empty())
    }
}

/// A line, read on the person's today; `None` when it is too long to be a
/// title.
fn read(session: &Session, line: &str) -> Option<QuickAdd> {
    (line.chars().count() <= MAX_LINE).then(|| quick_add::read(line, session.viewer.today))
}

fn date(date: Option<chrono::NaiveDate>) -> String {
    date.map(|date| date.format("%Y-%m-%d").to_string()).unwrap_or_default()
}

fn time(time: Option<chrono::NaiveTime>) -> String {
    time.map(|time| time.format("%H:%M").to_string()).unwrap_or_default()
}

/// `GET /new`, and `GET /new?line=…` with the fields filled from the line.
pub(crate) async fn new_page(session: Session, Query(query): Query<LineQuery>) -> Response {
    let nav = session.nav("new");
    let mut form = EventForm { after_due: "keep".into(), ..EventForm::default() };
    let line = query.line().map(str::to_owned);
    if let Some(line) = &line {
        match read(&session, line) {
            Some(read) => {
                form.title = read.title;
                form.due_date = date(read.due_date);
                form.due_time = time(read.due_time);
                form.fire_date = date(read.fire_date);
            }
            None => {
                form.general =
                    session.words.refusal_too_long.replace("{max}", &MAX_LINE.to_string())
            }
        }
    }
    render(StatusCode::OK, FormPage { words: session.words, nav, form, line })
}

/// What the page's script fills the form with as the person types.
#[derive(serde::Serialize)]
struct Read {
    title: String,
    due_date: String,
    due_time: String,
    fire_date: String,
}

/// `GET /new/read?line=…`: the line read into the form's fields, as JSON.
pub(crate) async fn read_line(session: Session, Query(query): Query<LineQuery>) -> Response {
    let line = query.line().unwrap_or_default();
    let Some(read) = read(&session, line) else {
        let error = format!("line is longer than {MAX_LINE} characters");
        return ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, &error).into_response();
    };
    // The dates as the page's fields show them: "14 Mar 2027", "14.03.2027".
    let shown = |day: Option<chrono::NaiveDate>| day.map(|day| session.words.field_date(day));
    let mut response = axum::Json(Read {
        title: read.title,
        due_date: shown(read.due_date).unwrap_or_default(),
        due_time: time(read.due_time),
        fire_date: shown(read.fire_date).unwrap_or_default(),
    })
    .into_response();
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
