//! Owns how a tool call fails: core's refusal as a tool result the model
//! can act on (with core's stable codes), core being away as a JSON-RPC
//! error to retry, and arguments that do not fit their tool, named.

use crate::args::{
    CreateEventArgs, EventIdArgs, ListEventsArgs, MarkAckArgs, NoArgs, UpdateEventArgs,
    UpdateProfileArgs,
};
use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorCode, JsonObject};
use serde::de::DeserializeOwned;

/// A tool call that failed in a way the model can act on: sent back as a
/// tool result with `isError: true` and the exact reason. Core (or its
/// storage) being down for now is not the tool's answer but the server's:
/// a JSON-RPC error that says to retry, with `retry_after` in its data, so
/// that a client's own retry logic sees it.
#[derive(Debug)]
pub(crate) enum ToolFailure {
    Refused(String),
    Unavailable(String),
}

/// The JSON-RPC error code of a call to retry later: the first of the codes
/// JSON-RPC leaves to servers, as the guard's refusals use it.
const RETRY_LATER: ErrorCode = ErrorCode(-32000);

impl IntoCallToolResult for ToolFailure {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        match self {
            Self::Refused(message) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into())
            }
            Self::Unavailable(message) => {
                let data =
                    serde_json::json!({ "retry_after": hado_gateway::client::RETRY_AFTER_SECONDS });
                Err(ErrorData::new(RETRY_LATER, message, Some(data)))
            }
        }
    }
}

/// Core's precise English, followed by its stable codes where it gave them:
/// the refusal's (`event 7 not found (EVENT_NOT_FOUND)`), or each field's
/// (`… (fire_at: FIRE_AFTER_DUE)`).
pub(crate) fn with_codes(message: &str, status: &tonic::Status) -> String {
    use tonic_types::StatusExt;
    let mut codes: Vec<String> = status
        .get_details_error_info()
        .map(|info| info.reason)
        .filter(|reason| !reason.is_empty())
        .into_iter()
        .collect();
    if let Some(bad_request) = status.get_details_bad_request() {
        let fields = bad_request
            .field_violations
            .into_iter()
            .filter(|violation| !violation.reason.is_empty());
        codes.extend(fields.map(|violation| format!("{}: {}", violation.field, violation.reason)));
    }
    if codes.is_empty() { message.to_owned() } else { format!("{message} ({})", codes.join("; ")) }
}

/// What is wrong with `arguments` for `tool`, read as the tool will read
/// them, with the path of the argument at fault: "argument `state`: unknown
/// variant `done`, expected one of `scheduled`, …".
pub(crate) fn misfit(tool: &str, arguments: Option<&JsonObject>) -> Option<String> {
    fn check<T: DeserializeOwned>(arguments: Option<&JsonObject>) -> Option<String> {
        let empty = JsonObject::new();
        let error = serde_path_to_error::deserialize::<_, T>(arguments.unwrap_or(&empty)).err()?;
        let path = error.path().to_string();
        let reason = error.into_inner();
        Some(if path == "." {
            format!("arguments: {reason}")
        } else {
            format!("argument `{path}`: {reason}")
        })
    }
    match tool {
        "list_events" => check::<ListEventsArgs>(arguments),
        "get_event" | "delete_event" | "mark_done" | "reopen_event" | "restore_reminders" => {
            check::<EventIdArgs>(arguments)
        }
        "get_profile" | "show_inbox" => check::<NoArgs>(arguments),
        "mark_ack" => check::<MarkAckArgs>(arguments),
        "create_event" => check::<CreateEventArgs>(arguments),
        "update_event" => check::<UpdateEventArgs>(arguments),
        "update_profile" => check::<UpdateProfileArgs>(arguments),
        // An unknown tool is the router's to refuse.
        _ => None,
    }
}
