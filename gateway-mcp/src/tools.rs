//! Owns the nine MCP tools and the words the model reads. Each tool is one
//! call to core's `Inbox` service as the agent's user; the gateway decides
//! nothing about events itself.

use std::future::Future;
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{IntoCallToolResult, ToolCallContext};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Json, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::de::DeserializeOwned;

use hado_proto::state::EventState;
use hado_proto::v1;
use hado_runtime::views::{Profile, UserEvent};

use crate::args::{
    CreateEventArgs, DEFAULT_PAGE, Deleted, EventIdArgs, EventList, ListEventsArgs, MarkAckArgs,
    NoArgs, UpdateEventArgs, UpdateProfileArgs,
};
use crate::core_link::{self, AgentToken, Core, Failure, Inbox};
use crate::guard::TokenVerdict;
use crate::schema::{self, Side};

/// What the model reads once, when it connects.
pub(crate) const INSTRUCTIONS: &str = "\
Hado is the user's deadline inbox; you act as the user, on their events only.
Active states, by urgency: scheduled (not yet preparing), preparing (from fire_at), today (due today), overdue (past due, after_due=keep). needs_attention means a reminder reached the user and is unanswered.
The archive holds done, expired and deleted (withdrawn) events (after_due=expire closes as expired after the due day).
mark_done means the thing is finished: the event closes. mark_ack is Remember: \"I know\", the event stays open and reminders go quiet until the next checkpoint, or until tomorrow, next week or a day the user names (until). Never use one for the other.
Events from other sources (docs, a bank, …) can be read and closed with mark_done or mark_ack, but not changed or deleted: editable=false. Their source would overwrite an edit.
Events you create belong to the source manual, like ones the user adds by hand; those you may update and delete (editable=true). A deleted event stays readable (state withdrawn) and update_event brings it back.
Undo: reopen_event undoes mark_done and delete_event; restore_reminders undoes mark_ack. An event its source withdrew cannot be acted on (EVENT_WITHDRAWN).
due_at takes three forms: YYYY-MM-DD (a whole day), YYYY-MM-DDTHH:MM (a local time in the user's zone), or with an offset such as 2026-12-14T09:00+01:00 (a fixed instant). Use an offset only when the event is tied to a place.
Call get_profile for the user's zone and current local time before resolving words like \"tomorrow\".
A recurring thing is separate events: create one per occurrence that matters now, not a rule.";

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
                    serde_json::json!({ "retry_after": hado_runtime::client::RETRY_AFTER_SECONDS });
                Err(ErrorData::new(RETRY_LATER, message, Some(data)))
            }
        }
    }
}

/// The token a session without HTTP requests acts with: stdio's, fixed; an
/// event stream's, replaced when its client refreshes and posts with the
/// new one.
#[derive(Clone, Debug)]
pub(crate) struct SessionToken(Arc<std::sync::RwLock<AgentToken>>);

impl SessionToken {
    pub(crate) fn new(token: AgentToken) -> Self {
        Self(Arc::new(std::sync::RwLock::new(token)))
    }

    pub(crate) fn current(&self) -> AgentToken {
        self.0.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn replace(&self, token: AgentToken) {
        *self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner) = token;
    }
}

/// The MCP server: one per request over HTTP (cloned from a prototype, so
/// the tool list is built once), one per process over stdio.
#[derive(Clone)]
pub(crate) struct HadoMcp {
    core: Core,
    /// The token of a stdio session, which has no HTTP request to carry one.
    fixed_token: Option<SessionToken>,
    tool_router: ToolRouter<Self>,
}

impl HadoMcp {
    pub(crate) fn new(core: Core, fixed_token: Option<SessionToken>) -> Self {
        Self { core, fixed_token, tool_router: Self::portable_tool_router() }
    }

    /// The tools, their schemas written for the widest range of clients.
    fn portable_tool_router() -> ToolRouter<Self> {
        let mut router = ToolRouter::new();
        for mut route in Self::tool_router() {
            route.attr.input_schema =
                Arc::new(schema::portable(&route.attr.input_schema, Side::Input));
            route.attr.output_schema = route
                .attr
                .output_schema
                .map(|output| Arc::new(schema::portable(&output, Side::Output)));
            router.add_route(route);
        }
        router
    }

    /// The Inbox client for this call's user: the token the HTTP guard
    /// admitted, or the stdio session's.
    fn inbox(&self, context: &RequestContext<RoleServer>) -> Result<Inbox, ToolFailure> {
        let from_request = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<AgentToken>());
        let token = match (from_request, &self.fixed_token) {
            (Some(token), _) => token.clone(),
            (None, Some(session)) => session.current(),
            (None, None) => {
                return Err(ToolFailure::Refused("an agent bearer token is required".into()));
            }
        };
        Ok(core_link::inbox(&self.core, &token))
    }

    /// Makes a tool's call to core. A refused token is also told to the HTTP
    /// guard, which answers the request 401 instead of a tool result: a
    /// client signs in again on a 401, never on a tool's error.
    async fn call<T>(
        &self,
        context: &RequestContext<RoleServer>,
        reply: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, ToolFailure> {
        match reply.await {
            Ok(response) => Ok(response.into_inner()),
            Err(status) => {
                let failure = self.core.explain(&status);
                if matches!(failure, Failure::Unauthenticated(_))
                    && let Some(verdict) = context
                        .extensions
                        .get::<http::request::Parts>()
                        .and_then(|parts| parts.extensions.get::<TokenVerdict>())
                {
                    verdict.refuse();
                }
                tracing::debug!(code = ?status.code(), "core refused a tool call");
                Err(match failure {
                    Failure::Unreachable(message) => ToolFailure::Unavailable(message),
                    failure => ToolFailure::Refused(with_codes(failure.message(), &status)),
                })
            }
        }
    }
}

/// Core's precise English, followed by its stable codes where it gave them:
/// the refusal's (`event 7 not found (EVENT_NOT_FOUND)`), or each field's
/// (`… (fire_at: FIRE_AFTER_DUE)`).
fn with_codes(message: &str, status: &tonic::Status) -> String {
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

#[tool_router]
impl HadoMcp {
    /// The user's inbox: active events by due moment, earliest first (so overdue ones lead, then today's), a page of limit (default 100) at a time with next for the rest; or with archive=true the 100 most recently closed ones, latest first. text and source narrow either to what matches.
    /// Each event says its state, its source and whether it is editable.
    #[tool(annotations(title = "List events", read_only_hint = true, open_world_hint = false))]
    async fn list_events(
        &self,
        Parameters(args): Parameters<ListEventsArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<EventList>, ToolFailure> {
        let request = v1::ListEventsRequest {
            state: args.state.map(|state| EventState::from(state).as_str().to_owned()),
            archive: args.archive,
            text: args.text,
            source: args.source,
            // The archive is its latest 100 at most.
            limit: Some(args.limit.unwrap_or(DEFAULT_PAGE)),
            after: args.after,
        };
        let list = self.call(&context, self.inbox(&context)?.list_events(request)).await?;
        Ok(Json(EventList {
            events: list.events.iter().map(UserEvent::from).collect(),
            next: list.next,
        }))
    }

    /// One event of the user's by id, from any source, with the log of the reminders it sent (sent, failed, or quieted by Remember). A deleted event is found too, with state withdrawn.
    #[tool(annotations(title = "Get event", read_only_hint = true, open_world_hint = false))]
    async fn get_event(
        &self,
        Parameters(args): Parameters<EventIdArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UserEvent>, ToolFailure> {
        let event = self
            .call(&context, self.inbox(&context)?.get_event(v1::EventId { id: args.id }))
            .await?;
        Ok(Json(UserEvent::from(&event)))
    }

    /// Adds an event of the user's own (source manual), exactly like the inbox's Add button.
    /// due_at is YYYY-MM-DD (a whole day), YYYY-MM-DDTHH:MM (a local time) or with an offset (a fixed instant); an offset only when the event is tied to a place.
    /// Defaults: fire_at 30 days before the due day, after_due keep, done_label Done. A recurring thing is separate events.
    #[tool(annotations(
        title = "Create event",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn create_event(
        &self,
        Parameters(args): Parameters<CreateEventArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UserEvent>, ToolFailure> {
        let fields = v1::EventFields {
            title: args.title,
            due_at: args.due_at,
            subtitle: args.subtitle,
            fire_at: args.fire_at,
            after_due: args.after_due.map(|after_due| after_due.as_str().to_owned()),
            done_label: args.done_label,
            deep_link: args.deep_link,
        };
        let event = self
            .call(&context, self.inbox(&context)?.create_event(hado_runtime::cores::once(fields)))
            .await?;
        Ok(Json(UserEvent::from(&event)))
    }

    /// Changes any of the fields of an editable (manual) event; other sources' events cannot be changed. Editing a deleted (withdrawn) event brings it back.
    /// A new due_at is a reschedule: it reopens a done or expired event, clears Remember and restarts the reminders.
    /// The same due_at (or none) only updates the other fields and leaves a closed event closed.
    #[tool(annotations(
        title = "Update event",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn update_event(
        &self,
        Parameters(args): Parameters<UpdateEventArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UserEvent>, ToolFailure> {
        let request = v1::UpdateEventRequest {
            id: args.id,
            title: args.title,
            due_at: args.due_at,
            subtitle: args.subtitle,
            fire_at: args.fire_at,
            after_due: args.after_due.map(|after_due| after_due.as_str().to_owned()),
            done_label: args.done_label,
            deep_link: args.deep_link,
        };
        let event = self.call(&context, self.inbox(&context)?.update_event(request)).await?;
        Ok(Json(UserEvent::from(&event)))
    }

    /// Removes an editable (manual) event: it becomes withdrawn and leaves the inbox; get_event still finds it and update_event brings it back. Other sources' events cannot be deleted; close them with mark_done instead.
    #[tool(annotations(
        title = "Delete event",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn delete_event(
        &self,
        Parameters(args): Parameters<EventIdArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<Deleted>, ToolFailure> {
        let reply = self
            .call(&context, self.inbox(&context)?.delete_event(v1::EventId { id: args.id }))
            .await?;
        Ok(Json(Deleted { id: reply.id, state: reply.state }))
    }

    /// Done: the thing is finished and the event closes into the archive. Works on events from any source. A closed event is returned as it is.
    #[tool(annotations(
        title = "Mark done",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn mark_done(
        &self,
        Parameters(args): Parameters<EventIdArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UserEvent>, ToolFailure> {
        let event = self
            .call(&context, self.inbox(&context)?.mark_done(v1::EventId { id: args.id }))
            .await?;
        Ok(Json(UserEvent::from(&event)))
    }

    /// Remember: "I know". The event stays open and its reminders go quiet until the next checkpoint, or until the morning given in until (quiet_until says when; next_reminder_at in get_event when the user hears again). Not the same as done. Works on events from any source; a closed event is returned as it is.
    #[tool(annotations(
        title = "Remember",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn mark_ack(
        &self,
        Parameters(args): Parameters<MarkAckArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UserEvent>, ToolFailure> {
        let event = self
            .call(
                &context,
                self.inbox(&context)?
                    .mark_ack(v1::MarkAckRequest { id: args.id, until: args.until }),
            )
            .await?;
        Ok(Json(UserEvent::from(&event)))
    }

    /// Undoes Done, and undoes delete_event on the user's own event: the event is open again where its due moment puts it, with its reminders from now. An open event is returned as it is; an expired one stays expired; an event its source withdrew cannot be reopened.
    #[tool(annotations(
        title = "Reopen event",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn reopen_event(
        &self,
        Parameters(args): Parameters<EventIdArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UserEvent>, ToolFailure> {
        let event = self
            .call(&context, self.inbox(&context)?.reopen_event(v1::EventId { id: args.id }))
            .await?;
        Ok(Json(UserEvent::from(&event)))
    }

    /// Undoes Remember (mark_ack): the event's reminders are no longer quieted and it needs attention again at its checkpoints. An event without Remember is returned as it is.
    #[tool(annotations(
        title = "Restore reminders",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn restore_reminders(
        &self,
        Parameters(args): Parameters<EventIdArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UserEvent>, ToolFailure> {
        let event = self
            .call(&context, self.inbox(&context)?.take_back_ack(v1::EventId { id: args.id }))
            .await?;
        Ok(Json(UserEvent::from(&event)))
    }

    /// The user's login, time zone, quiet hours, language and current local date and time (with the weekday), for resolving words like "tomorrow".
    #[tool(annotations(title = "Get profile", read_only_hint = true, open_world_hint = false))]
    async fn get_profile(
        &self,
        Parameters(NoArgs {}): Parameters<NoArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<Profile>, ToolFailure> {
        let profile = self
            .call(&context, self.inbox(&context)?.get_profile(v1::GetProfileRequest {}))
            .await?;
        Ok(Json(Profile::from(&profile)))
    }

    /// Changes the user's time zone, quiet hours and language; give any of them. A new zone moves local due times with it.
    #[tool(annotations(
        title = "Update profile",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn update_profile(
        &self,
        Parameters(args): Parameters<UpdateProfileArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<Profile>, ToolFailure> {
        let request = v1::UpdateProfileRequest {
            tz: args.tz,
            quiet_start: args.quiet_start,
            quiet_end: args.quiet_end,
            locale: args.locale.map(|locale| locale.as_str().to_owned()),
        };
        let profile = self.call(&context, self.inbox(&context)?.update_profile(request)).await?;
        Ok(Json(Profile::from(&profile)))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for HadoMcp {
    /// Dispatches to the tool, counted and timed. Arguments of the wrong
    /// shape are a tool result with `isError` that names the argument and
    /// what it takes (MCP 2025-11-25), so the model can correct itself; an
    /// unknown tool stays a JSON-RPC error.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Only known tool names become metric labels.
        let tool = if self.tool_router.has_route(request.name.as_ref()) {
            request.name.to_string()
        } else {
            "unknown".to_owned()
        };
        let started = std::time::Instant::now();
        let answer = self.dispatch(request, context).await;
        let outcome = match &answer {
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => "tool_error",
            Ok(_) => "ok",
            Err(_) => "protocol_error",
        };
        metrics::counter!("hado_mcp_tool_calls_total", "tool" => tool.clone(), "outcome" => outcome).increment(1);
        metrics::histogram!("hado_mcp_tool_call_duration_seconds", "tool" => tool)
            .record(started.elapsed().as_secs_f64());
        answer
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("hado", env!("CARGO_PKG_VERSION")).with_title("Hado"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}

impl HadoMcp {
    /// Runs the tool, once its arguments fit it.
    async fn dispatch(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(problem) = misfit(&request.name, request.arguments.as_ref()) {
            return ToolFailure::Refused(problem).into_call_tool_result();
        }
        self.tool_router.call(ToolCallContext::new(self, request, context)).await
    }
}

/// What is wrong with `arguments` for `tool`, read as the tool will read
/// them, with the path of the argument at fault: "argument `state`: unknown
/// variant `done`, expected one of `scheduled`, …".
fn misfit(tool: &str, arguments: Option<&JsonObject>) -> Option<String> {
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
        "get_profile" => check::<NoArgs>(arguments),
        "mark_ack" => check::<MarkAckArgs>(arguments),
        "create_event" => check::<CreateEventArgs>(arguments),
        "update_event" => check::<UpdateEventArgs>(arguments),
        "update_profile" => check::<UpdateProfileArgs>(arguments),
        // An unknown tool is the router's to refuse.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<rmcp::model::Tool> {
        HadoMcp::portable_tool_router().list_all()
    }

    /// Every schema object anywhere in `value`, with its path.
    fn schema_objects<'a>(
        value: &'a serde_json::Value,
        path: String,
        found: &mut Vec<(String, &'a serde_json::Map<String, serde_json::Value>)>,
    ) {
        match value {
            serde_json::Value::Object(object) => {
                found.push((path.clone(), object));
                for (key, child) in object {
                    schema_objects(child, format!("{path}/{key}"), found);
                }
            }
            serde_json::Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    schema_objects(item, format!("{path}/{index}"), found);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn the_schemas_are_portable() {
        for tool in tools() {
            let mut found = Vec::new();
            let input = serde_json::Value::Object((*tool.input_schema).clone());
            let output = tool
                .output_schema
                .as_ref()
                .map(|output| serde_json::Value::Object((**output).clone()))
                .unwrap_or_default();
            schema_objects(&input, format!("{}:input", tool.name), &mut found);
            schema_objects(&output, format!("{}:output", tool.name), &mut found);
            for (path, object) in found {
                assert!(
                    !matches!(object.get("type"), Some(serde_json::Value::Array(_))),
                    "{path} has a type array: {object:?}"
                );
                let format = object.get("format").and_then(|format| format.as_str()).unwrap_or("");
                assert!(
                    !format.starts_with("uint") && !format.starts_with("int") && format != "double",
                    "{path} has format {format}"
                );
            }
        }
        let create = tools().into_iter().find(|tool| tool.name == "create_event").unwrap();
        assert_eq!(create.input_schema["properties"]["title"]["maxLength"], 200);
    }

    #[test]
    fn every_tool_refuses_an_argument_it_does_not_take() {
        let stray = serde_json::json!({"stray": 1}).as_object().cloned();
        for tool in tools() {
            let refused = misfit(&tool.name, stray.as_ref());
            assert!(
                refused.as_deref().is_some_and(|reason| reason.contains("unknown field `stray`")),
                "{}: {refused:?}",
                tool.name
            );
        }
    }

    #[test]
    fn annotations_follow_the_specs_definitions() {
        // MCP: destructiveHint is false only where an update is purely
        // additive; idempotentHint is true where a repeat changes nothing.
        for tool in tools() {
            let hints = tool.annotations.clone().unwrap_or_default();
            let expected = match tool.name.as_ref() {
                "list_events" | "get_event" | "get_profile" => (Some(true), None, None),
                "create_event" => (Some(false), Some(false), Some(false)),
                "update_event" | "delete_event" | "mark_done" | "mark_ack" | "update_profile"
                | "reopen_event" | "restore_reminders" => (Some(false), Some(true), Some(true)),
                other => panic!("{other} has no expected hints"),
            };
            assert_eq!(
                (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint),
                expected,
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn a_misfit_names_the_argument_and_what_it_takes() {
        let arguments = |value: serde_json::Value| value.as_object().cloned();
        let state = misfit("list_events", arguments(serde_json::json!({"state": "done"})).as_ref())
            .unwrap();
        assert_eq!(
            state,
            "argument `state`: unknown variant `done`, expected one of `scheduled`, `preparing`, `today`, `overdue`"
        );
        let id =
            misfit("get_event", arguments(serde_json::json!({"id": "seven"})).as_ref()).unwrap();
        assert_eq!(id, "argument `id`: invalid type: string \"seven\", expected i64");
        let missing =
            misfit("create_event", arguments(serde_json::json!({"title": "Visa"})).as_ref())
                .unwrap();
        assert_eq!(missing, "arguments: missing field `due_at`");
        assert_eq!(misfit("get_event", None).unwrap(), "arguments: missing field `id`");
        assert_eq!(
            misfit(
                "create_event",
                arguments(serde_json::json!({"title": "Visa", "due_at": "2026-12-14"})).as_ref()
            ),
            None
        );
    }

    #[test]
    fn the_instructions_fit_in_fifteen_lines() {
        assert!(INSTRUCTIONS.lines().count() <= 15, "{} lines", INSTRUCTIONS.lines().count());
    }

    #[test]
    fn every_argument_of_every_tool_is_described() {
        let tools = tools();
        assert_eq!(tools.len(), 11);
        for tool in &tools {
            let schema = serde_json::Value::Object((*tool.input_schema).clone());
            let properties = schema["properties"].as_object().cloned().unwrap_or_default();
            for (name, property) in properties {
                let described = property
                    .get("description")
                    .and_then(|text| text.as_str())
                    .is_some_and(|text| !text.is_empty());
                assert!(described, "{}.{name} has no description: {property}", tool.name);
            }
            assert!(tool.output_schema.is_some(), "{} has no output schema", tool.name);
            assert!(
                tool.description.as_deref().is_some_and(|text| !text.is_empty()),
                "{} has no description",
                tool.name
            );
        }
    }
}
