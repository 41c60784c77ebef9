//! Owns the one JSON error shape of the API (`{"error", "violations"?}`),
//! core's gRPC statuses put into it (the HTTP status from
//! `hado_proto::errors`, core's words kept), and the JSON
//! body extractor whose rejections take the same shape.

use axum::extract::{FromRequest, Request};
use axum::http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hado_gateway::json::BodyProblem;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tonic::Status;
use tonic_types::StatusExt;

use crate::bodies::{BodyCap, MAX_BODY_BYTES, MAX_BODY_VALUES};
use hado_gateway::bodies::{self, Unread};
use hado_gateway::client::{Core, Failure};

/// Every error the API answers, as JSON.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ErrorBody {
    /// What went wrong, in words.
    pub error: String,
    /// Core's stable reason for the whole refusal, such as `EVENT_NOT_FOUND`
    /// or `EVENT_OWNED_BY_SOURCE`, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// For invalid input: every bad field, each with the index of its batch item when there is one.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub violations: Vec<Violation>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Violation {
    /// The position of the item in the batch, from 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The field, such as `due_at`.
    pub field: String,
    pub message: String,
    /// Core's stable reason, such as `REQUIRED` or `FIRE_AFTER_DUE`, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The reason in the person's words, for the web inbox; JSON keeps the
    /// precise English message and the code.
    #[serde(skip)]
    pub localized: Option<String>,
}

impl Violation {
    /// Splits `events[3].due_at` into index 3 and field `due_at`.
    pub(crate) fn at(path: &str, message: String) -> Self {
        let indexed = path.split_once('[').and_then(|(_, rest)| {
            let (number, after) = rest.split_once(']')?;
            Some((number.parse::<usize>().ok()?, after.trim_start_matches('.')))
        });
        match indexed {
            Some((index, field)) => Self {
                index: Some(index),
                field: field.to_owned(),
                message,
                code: None,
                localized: None,
            },
            None => {
                Self { index: None, field: path.to_owned(), message, code: None, localized: None }
            }
        }
    }
}

#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            body: ErrorBody { error: message.into(), code: None, violations: Vec::new() },
        }
    }

    /// Core's answer, with its status from `hado_proto::errors` and its
    /// words kept.
    pub(crate) fn from_core(core: &Core, status: &Status) -> Self {
        let failure = core.explain(status);
        let http = StatusCode::from_u16(failure.code().http())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        match failure {
            Failure::Unreachable(message) | Failure::Unauthenticated(message) => {
                Self::new(http, message)
            }
            Failure::Refused { message, .. } => {
                let violations = status
                    .get_details_bad_request()
                    .map(|details| {
                        details
                            .field_violations
                            .into_iter()
                            .map(|violation| Violation {
                                code: Some(violation.reason).filter(|reason| !reason.is_empty()),
                                localized: violation
                                    .localized_message
                                    .map(|localized| localized.message),
                                ..Violation::at(&violation.field, violation.description)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let code = status
                    .get_details_error_info()
                    .map(|info| info.reason)
                    .filter(|reason| !reason.is_empty());
                Self { status: http, body: ErrorBody { error: message, code, violations } }
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        // Core or its storage is down for now: say when to try again.
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(hado_gateway::client::RETRY_AFTER_SECONDS));
        }
        response
    }
}

/// Whether the request says its body is JSON (`Content-Type:
/// application/json`, with or without parameters).
pub(crate) fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("application/json"))
}

/// A JSON body whose every rejection is an [`ApiError`]: 415 without a JSON
/// content type, 400 for malformed JSON, 413 for more values than a full
/// batch holds, 422 naming the field whose value has the wrong shape or the
/// key an object names twice. An empty body is `{}`, as for a call whose
/// fields are all optional. Every request body is an object, and no body
/// holds arrays of arrays; serde would otherwise read an array as a struct,
/// so both are refused before it does. The body is checked in one pass
/// that builds nothing (`hado_gateway::json`), then read straight into `T`,
/// so it costs its bytes and what `T` keeps of them.
pub(crate) struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, Self::Rejection> {
        if !is_json(request.headers()) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send the body as JSON with Content-Type: application/json",
            ));
        }
        let cap = request.extensions().get::<BodyCap>().map_or(MAX_BODY_BYTES, |cap| cap.0);
        let declared = bodies::declared_length(request.headers());
        let bytes = bodies::read(request.into_body(), declared, cap).await.map_err(|unread| {
            let status = match unread {
                Unread::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
                Unread::Failed => StatusCode::BAD_REQUEST,
            };
            ApiError::new(status, unread.to_string())
        })?;
        let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { &bytes };
        let outline = hado_gateway::json::check(text, MAX_BODY_VALUES).map_err(refusal)?;
        if let Some(path) = outline.array_in_array {
            let message = "expected an object, found an array".to_owned();
            let mut failure =
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("{path}: {message}"));
            failure.body.violations.push(Violation::at(&path, message));
            return Err(failure);
        }
        let parsed: Result<T, _> =
            serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(text));
        match parsed {
            Ok(value) => Ok(Self(value)),
            Err(error) => {
                let path = error.path().to_string();
                let inner = error.into_inner();
                let reason = hado_gateway::json::without_position(&inner);
                if inner.is_data() {
                    let mut failure = ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        format!("{path}: {reason}"),
                    );
                    failure.body.violations.push(Violation::at(&path, reason));
                    Err(failure)
                } else {
                    Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        format!("the body is not valid JSON: {reason}"),
                    ))
                }
            }
        }
    }
}

/// A body [`hado_gateway::json::check`] refused, as the API answers it.
fn refusal(problem: BodyProblem) -> ApiError {
    match problem {
        BodyProblem::Syntax(_) => ApiError::new(StatusCode::BAD_REQUEST, problem.to_string()),
        BodyProblem::TooManyValues { .. } => {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, problem.to_string())
        }
        BodyProblem::DuplicateKey { ref field, ref key } => {
            let mut failure = ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, problem.to_string());
            failure.body.violations.push(Violation::at(
                field,
                format!("the key {key:?} appears twice in one object; send it once"),
            ));
            failure
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_paths_split_into_index_and_field() {
        assert_eq!(
            Violation::at("events[3].due_at", "x".into()),
            Violation {
                index: Some(3),
                field: "due_at".into(),
                message: "x".into(),
                code: None,
                localized: None
            }
        );
        assert_eq!(
            Violation::at("tz", "y".into()),
            Violation {
                index: None,
                field: "tz".into(),
                message: "y".into(),
                code: None,
                localized: None
            }
        );
        assert_eq!(Violation::at("events[12]", "z".into()).index, Some(12));
    }
}
