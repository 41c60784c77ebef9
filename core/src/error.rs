//! Owns core's error type and its one translation into gRPC statuses, made
//! only at the gRPC edge.

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::domain::violations::Violations;
use crate::storage::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// Bad input: every violation, by field.
    #[error("{0}")]
    Invalid(Violations),
    #[error("{0}")]
    NotFound(String),
    /// The caller may see the thing but not change it this way.
    #[error("{0}")]
    FailedPrecondition(String),
    #[error("{0}")]
    PermissionDenied(String),
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    AlreadyExists(String),
    /// What the request was made for has changed since (an action link
    /// from before a reschedule): nothing was done.
    #[error("{0}")]
    Outdated(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl CoreError {
    pub(crate) fn invalid(field: &str, message: impl Into<String>) -> Self {
        let mut violations = Violations::default();
        violations.add(field, message);
        Self::Invalid(violations)
    }

    pub(crate) fn event_not_found(id: i64) -> Self {
        Self::NotFound(format!("event {id} not found"))
    }
}

impl From<CoreError> for Status {
    fn from(error: CoreError) -> Self {
        match error {
            CoreError::Invalid(violations) => {
                let mut details = ErrorDetails::new();
                for violation in violations.iter() {
                    details.add_bad_request_violation(violation.field.clone(), violation.message.clone());
                }
                Status::with_error_details(Code::InvalidArgument, violations.to_string(), details)
            }
            CoreError::NotFound(message) => Status::not_found(message),
            CoreError::FailedPrecondition(message) => Status::failed_precondition(message),
            CoreError::PermissionDenied(message) => Status::permission_denied(message),
            CoreError::Unauthenticated(message) => Status::unauthenticated(message),
            CoreError::AlreadyExists(message) => Status::already_exists(message),
            CoreError::Outdated(message) => Status::aborted(message),
            CoreError::Store(error) => {
                tracing::error!(%error, "storage failed");
                Status::internal("core could not reach its storage; see core's log")
            }
        }
    }
}

impl From<sqlx::Error> for CoreError {
    fn from(error: sqlx::Error) -> Self {
        Self::Store(StoreError::Query(error))
    }
}
