//! Owns the one JSON error shape of the API (`{"error", "violations"?}`),
//! core's gRPC statuses put into it (the HTTP status from
//! `hado_proto::errors`, core's words kept), and the JSON
//! body extractor whose rejections take the same shape.

use axum::body::Bytes;
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
/// content type, 400 for malformed JSON, 422 naming the field whose value
/// has the wrong shape or the key an object names twice. An empty body is `{}`, as for a call whose fields
/// are all optional. Every request body is an object, and no body holds
/// arrays of arrays; serde would otherwise read an array as a struct, so
/// both are refused before it does.
pub(crate) struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(request.headers()) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send the body as JSON with Content-Type: application/json",
            ));
        }
        let bytes = Bytes::from_request(request, state).await.map_err(|rejection| {
            ApiError::new(
                rejection.status(),
                format!("the body could not be read: {}", rejection.body_text()),
            )
        })?;
        let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { &bytes };
        let value = match hado_gateway::json::parse(text) {
            Ok(value) => value,
            Err(problem @ BodyProblem::Syntax(_)) => {
                return Err(ApiError::new(StatusCode::BAD_REQUEST, problem.to_string()));
            }
            Err(problem @ BodyProblem::DuplicateKey { .. }) => {
                let mut failure =
                    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, problem.to_string());
                if let BodyProblem::DuplicateKey { field, key } = problem {
                    failure.body.violations.push(Violation::at(
                        &field,
                        format!("the key {key:?} appears twice in one object; send it once"),
                    ));
                }
                return Err(failure);
            }
        };
        if let Some(path) = misplaced_array(&value) {
            let message = "expected an object, found an array".to_owned();
            let mut failure =
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("{path}: {message}"));
            failure.body.violations.push(Violation::at(&path, message));
            return Err(failure);
        }
        let parsed: Result<T, _> = serde_path_to_error::deserialize(value);
        match parsed {
            Ok(value) => Ok(Self(value)),
            Err(error) => {
                let path = error.path().to_string();
                let inner = error.into_inner();
                if inner.is_data() {
                    let mut failure =
                        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("{path}: {inner}"));
                    failure.body.violations.push(Violation::at(&path, inner.to_string()));
                    Err(failure)
                } else {
                    Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        format!("the body is not valid JSON: {inner}"),
                    ))
                }
            }
        }
    }
}

/// Where an array stands in place of an object: at the root, or as an
/// element of an array.
fn misplaced_array(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    fn walk(value: &Value, path: &str) -> Option<String> {
        match value {
            Value::Object(map) => map.iter().find_map(|(key, inner)| {
                walk(inner, &if path == "." { key.clone() } else { format!("{path}.{key}") })
            }),
            Value::Array(items) => items.iter().enumerate().find_map(|(index, item)| match item {
                Value::Array(_) => Some(format!("{path}[{index}]")),
                other => walk(other, &format!("{path}[{index}]")),
            }),
            _ => None,
        }
    }
    match value {
        Value::Array(_) => Some(".".to_owned()),
        other => walk(other, "."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_standing_for_objects_are_found() {
        assert_eq!(misplaced_array(&serde_json::json!([[]])).as_deref(), Some("."));
        assert_eq!(
            misplaced_array(&serde_json::json!({"events": [{}, ["anna", "visa"]]})).as_deref(),
            Some("events[1]")
        );
        assert_eq!(misplaced_array(&serde_json::json!({"events": [{"user": "anna"}]})), None);
    }

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
