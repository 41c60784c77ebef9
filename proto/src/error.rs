//! The one mapping from gRPC status codes to HTTP statuses, so that both
//! gateways answer the same failure with the same status.

use tonic::Code;

/// The HTTP status a gateway answers for a gRPC status code from core.
pub fn http_status(code: Code) -> u16 {
    match code {
        Code::Ok => 200,
        Code::InvalidArgument | Code::OutOfRange => 422,
        Code::NotFound => 404,
        Code::AlreadyExists | Code::Aborted => 409,
        Code::FailedPrecondition | Code::PermissionDenied => 403,
        Code::Unauthenticated => 401,
        Code::ResourceExhausted => 429,
        Code::Unimplemented => 501,
        Code::Unavailable | Code::DeadlineExceeded => 503,
        Code::Cancelled | Code::Unknown | Code::Internal | Code::DataLoss => 500,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codes_core_uses_map_to_the_documented_statuses() {
        assert_eq!(http_status(Code::InvalidArgument), 422);
        assert_eq!(http_status(Code::NotFound), 404);
        assert_eq!(http_status(Code::PermissionDenied), 403);
        assert_eq!(http_status(Code::FailedPrecondition), 403);
        assert_eq!(http_status(Code::Unauthenticated), 401);
        assert_eq!(http_status(Code::ResourceExhausted), 429);
        assert_eq!(http_status(Code::Unavailable), 503);
    }
}
