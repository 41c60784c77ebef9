//! Owns the agent's in-chat inbox, an MCP App (the `io.modelcontextprotocol/ui`
//! extension, specification 2026-01-26): the capability and the one `ui://`
//! resource this server declares, the `_meta.ui` its tools carry, what
//! `show_inbox` answers (`inbox`), and the view's document (`document`: one
//! HTML page, its script and style inline, its words from `hado-words`).
//!
//! A host that renders MCP Apps reads the resource named by `show_inbox`'s
//! `_meta.ui.resourceUri` and shows it in a sandboxed frame beside the
//! tool's result; the view then calls `mark_done`, `mark_ack`,
//! `reopen_event`, `restore_reminders`, `update_profile` and `show_inbox`
//! through the host. A host without apps shows the result's text, which
//! names every event. The resource asks for no outside origin (`_meta.ui.csp`
//! absent), so it runs under the specification's default policy, and it is
//! the same document for every person: it holds no data until the host
//! hands it a result.

mod document;
mod inbox;

pub(crate) use inbox::{InboxView, answer, read_inbox};

use rmcp::ErrorData;
use rmcp::model::{
    ExtensionCapabilities, JsonObject, ListResourcesResult, MetaObject, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
};
use serde_json::{Value, json};

/// The extension's identifier, as servers declare it in `capabilities.extensions`.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The view's resource.
pub(crate) const INBOX_URI: &str = "ui://hado/inbox";
/// The one MIME type an MCP App's HTML resource may have.
pub(crate) const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// What this server declares: its tools, the resources the view is read
/// from, and the extension. rmcp refuses `resources/read` to a server that
/// did not declare resources.
pub(crate) fn capabilities() -> ServerCapabilities {
    let mut extensions = ExtensionCapabilities::new();
    extensions.insert(EXTENSION.to_owned(), JsonObject::new());
    ServerCapabilities::builder()
        .enable_extensions_with(extensions)
        .enable_resources()
        .enable_tools()
        .build()
}

/// The resource's own `_meta.ui`: a border from the host, and no `csp`,
/// so no outside origin is asked for (hosts differ in how they honour the
/// domains a server declares).
fn resource_meta() -> MetaObject {
    meta(json!({ "ui": { "prefersBorder": true } }))
}

fn meta(value: Value) -> MetaObject {
    match value {
        Value::Object(object) => MetaObject(object),
        _ => MetaObject::new(),
    }
}

/// `_meta` of `show_inbox`: the view that shows its result. The model and
/// the view may both call it (the view calls it again after an answer).
pub(crate) fn shows_the_inbox() -> MetaObject {
    meta(json!({ "ui": { "resourceUri": INBOX_URI, "visibility": ["model", "app"] } }))
}

/// `_meta` of a tool the view calls through the host (Done, Remember, Undo,
/// the time-zone offer): visible to the model and to the app. The default
/// says the same; saying it keeps a host's reading plain.
pub(crate) fn for_the_model_and_the_view() -> MetaObject {
    meta(json!({ "ui": { "visibility": ["model", "app"] } }))
}

/// `resources/list`: the view, which hosts also find through `show_inbox`.
pub(crate) fn list() -> ListResourcesResult {
    let resource = Resource::new(INBOX_URI, "inbox")
        .with_title("Hado inbox")
        .with_description("The user's open events grouped Overdue, Today, Preparing and Scheduled, each with Done and Remember: the view of show_inbox's result.")
        .with_mime_type(MIME_TYPE)
        .with_meta(resource_meta());
    ListResourcesResult::with_all_items(vec![resource])
}

/// `resources/read`: the view's document, or "not found" for any other URI.
pub(crate) fn read(request: &ReadResourceRequestParams) -> Result<ReadResourceResult, ErrorData> {
    if request.uri != INBOX_URI {
        return Err(ErrorData::resource_not_found(
            format!("no resource {:?}: this server has one, {INBOX_URI}", request.uri),
            None,
        ));
    }
    let contents = ResourceContents::text(document::html(), INBOX_URI)
        .with_mime_type(MIME_TYPE)
        .with_meta(resource_meta());
    Ok(ReadResourceResult::new(vec![contents]))
}
