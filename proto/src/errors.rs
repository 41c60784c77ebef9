//! Owns what a failed call means, once for every edge: each code core
//! refuses with, and each a gateway's channel makes when core does not
//! answer, with its gRPC status, the HTTP status the gateways answer, how
//! gateway-mcp answers it, whether asking again can help, and its words.
//! Core picks a code; the gateways read the rest here.

use tonic::Code;

/// The `ErrorInfo` reason core gives when its storage, not core itself,
/// cannot be reached: the gateway passes core's words on.
pub const STORAGE_UNAVAILABLE: &str = "STORAGE_UNAVAILABLE";

/// Why a call failed, in Hado's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// Bad input, every field at fault named.
    Invalid,
    NotFound,
    AlreadyExists,
    /// What the call acted on changed since the caller saw it (an action
    /// link from before a later change).
    Outdated,
    /// Not possible now, for a reason the caller can act on.
    NotNow,
    /// The caller is known but may not do this.
    NotAllowed,
    /// No credential, or one core does not accept.
    Unauthenticated,
    /// Asked too often; core says when to ask again.
    TooOften,
    /// Core is up but its storage cannot be reached or written.
    StorageAway,
    /// Core failed in a way its log explains.
    Internal,
    /// Core does not serve the call: it is older than the gateway.
    NotServed,
    /// Core did not answer: made by the gateway's channel, never by core.
    CoreAway,
}

/// How gateway-mcp answers a failed tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpError {
    /// A tool result with `isError: true`, core's words and codes: the
    /// model can act on it.
    ToolResult,
    /// A JSON-RPC error with `retry_after` in its data: the client's own
    /// retry logic sees it.
    RetryLater,
}

/// One code's row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub grpc: Code,
    pub http: u16,
    pub mcp: McpError,
    pub retry_helps: bool,
    /// What it means; where core did not answer, these are the words the
    /// gateway says in its place, `{core}` standing for core's address.
    pub words: &'static str,
}

impl ErrorCode {
    pub const ALL: [Self; 12] = [
        Self::Invalid,
        Self::NotFound,
        Self::AlreadyExists,
        Self::Outdated,
        Self::NotNow,
        Self::NotAllowed,
        Self::Unauthenticated,
        Self::TooOften,
        Self::StorageAway,
        Self::Internal,
        Self::NotServed,
        Self::CoreAway,
    ];

    /// The table.
    pub const fn row(self) -> Row {
        use McpError::{RetryLater, ToolResult};
        let (grpc, http, mcp, retry_helps, words) = match self {
            Self::Invalid => (Code::InvalidArgument, 422, ToolResult, false, "bad input"),
            Self::NotFound => (Code::NotFound, 404, ToolResult, false, "not found"),
            Self::AlreadyExists => (Code::AlreadyExists, 409, ToolResult, false, "already exists"),
            Self::Outdated => {
                (Code::Aborted, 409, ToolResult, false, "changed since the caller saw it")
            }
            Self::NotNow => (Code::FailedPrecondition, 403, ToolResult, false, "not possible now"),
            Self::NotAllowed => (Code::PermissionDenied, 403, ToolResult, false, "not allowed"),
            Self::Unauthenticated => {
                (Code::Unauthenticated, 401, ToolResult, false, "credential not accepted")
            }
            Self::TooOften => (Code::ResourceExhausted, 429, ToolResult, true, "asked too often"),
            Self::StorageAway => {
                (Code::Unavailable, 503, RetryLater, true, "core's storage cannot be reached")
            }
            Self::Internal => (Code::Internal, 500, ToolResult, false, "core failed"),
            Self::NotServed => (Code::Unimplemented, 501, ToolResult, false, "core is older"),
            Self::CoreAway => (
                Code::Unavailable,
                503,
                RetryLater,
                true,
                "hado core at {core} cannot be reached right now; the gateway reconnects by itself, so try again in a moment",
            ),
        };
        Row { grpc, http, mcp, retry_helps, words }
    }

    pub const fn grpc(self) -> Code {
        self.row().grpc
    }

    pub const fn http(self) -> u16 {
        self.row().http
    }

    pub const fn mcp(self) -> McpError {
        self.row().mcp
    }

    pub const fn retry_helps(self) -> bool {
        self.row().retry_helps
    }

    pub const fn words(self) -> &'static str {
        self.row().words
    }

    /// The code of a status a gateway got back, given the `ErrorInfo`
    /// reason core put in it, if any. Codes core never sends are read as
    /// the nearest it does; the ones a channel makes, as core away.
    pub fn of(code: Code, reason: Option<&str>) -> Self {
        match code {
            Code::InvalidArgument | Code::OutOfRange => Self::Invalid,
            Code::NotFound => Self::NotFound,
            Code::AlreadyExists => Self::AlreadyExists,
            Code::Aborted => Self::Outdated,
            Code::FailedPrecondition => Self::NotNow,
            Code::PermissionDenied => Self::NotAllowed,
            Code::Unauthenticated => Self::Unauthenticated,
            Code::ResourceExhausted => Self::TooOften,
            Code::Unavailable if reason == Some(STORAGE_UNAVAILABLE) => Self::StorageAway,
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::Unknown => {
                Self::CoreAway
            }
            Code::Unimplemented => Self::NotServed,
            Code::Ok | Code::Internal | Code::DataLoss => Self::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_as_itself_from_its_grpc_status() {
        for code in ErrorCode::ALL {
            let reason = (code == ErrorCode::StorageAway).then_some(STORAGE_UNAVAILABLE);
            assert_eq!(ErrorCode::of(code.grpc(), reason), code, "{code:?}");
        }
    }

    #[test]
    fn the_documented_statuses_hold() {
        assert_eq!(ErrorCode::of(Code::InvalidArgument, None).http(), 422);
        assert_eq!(ErrorCode::of(Code::NotFound, None).http(), 404);
        assert_eq!(ErrorCode::of(Code::PermissionDenied, None).http(), 403);
        assert_eq!(ErrorCode::of(Code::FailedPrecondition, None).http(), 403);
        assert_eq!(ErrorCode::of(Code::Unauthenticated, None).http(), 401);
        assert_eq!(ErrorCode::of(Code::ResourceExhausted, None).http(), 429);
        assert_eq!(ErrorCode::of(Code::Unavailable, None).http(), 503);
        assert_eq!(ErrorCode::of(Code::DeadlineExceeded, None), ErrorCode::CoreAway);
        let retried: Vec<_> =
            ErrorCode::ALL.into_iter().filter(|code| code.retry_helps()).collect();
        assert_eq!(retried, [ErrorCode::TooOften, ErrorCode::StorageAway, ErrorCode::CoreAway]);
    }
}
