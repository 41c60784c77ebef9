//! Owns the twelve MCP tools: each is one call to core's `Inbox` service as
//! the agent's user (`show_inbox` reads the inbox's groups together), and
//! the gateway decides nothing about events itself. `instructions` is what
//! the model reads when it connects, `failure` how a call fails (and
//! arguments that do not fit), `session` the token of a session without
//! HTTP requests, `server` the server's other answers.

mod failure;
mod instructions;
mod server;
mod session;

pub(crate) use failure::ToolFailure;
pub(crate) use instructions::INSTRUCTIONS;
pub(crate) use session::SessionToken;

use std::future::Future;
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{Json, RoleServer, tool, tool_router};

use hado_proto::errors::McpError;
use hado_proto::v1;
use hado_views::{Deleted, Profile, UserEvent};

use crate::args::{
    CreateEventArgs, EventIdArgs, ListEventsArgs, MarkAckArgs, NoArgs, UpdateEventArgs,
    UpdateProfileArgs, UserEventList,
};
use crate::core_link::{self, AgentToken, Core, Failure, Inbox};
use crate::guard::TokenVerdict;
use crate::schema::{self, Side};
use crate::tools::failure::with_codes;
use crate::view;

/// The MCP server: one per request over HTTP (cloned from a prototype, so
/// the tool list is built once, and shared rather than copied: copying its
/// map of tools and their schemas was a few dozen allocations a call), one
/// per process over stdio.
#[derive(Clone)]
pub(crate) struct HadoMcp {
    core: Core,
    /// The token of a stdio session, which has no HTTP request to carry one.
    fixed_token: Option<SessionToken>,
    tool_router: Arc<ToolRouter<Self>>,
}

impl HadoMcp {
    pub(crate) fn new(core: Core, fixed_token: Option<SessionToken>) -> Self {
        Self { core, fixed_token, tool_router: Arc::new(Self::portable_tool_router()) }
    }

    /// This server for a session without HTTP requests (a legacy event
    /// stream), sharing the tool list: each stream building its own cost
    /// 400 KiB, so 256 open streams took 100 MiB.
    pub(crate) fn for_session(&self, token: SessionToken) -> Self {
        Self { fixed_token: Some(token), ..self.clone() }
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
                Err(match failure.code().mcp() {
                    McpError::RetryLater => ToolFailure::Unavailable(failure.message().to_owned()),
                    McpError::ToolResult => {
                        ToolFailure::Refused(with_codes(failure.message(), &status))
                    }
                })
            }
        }
    }
}

#[tool_router]
impl HadoMcp {
    /// Shows the user their inbox in the chat: the open events grouped overdue, today, preparing and scheduled (most urgent first), each with its Done and Remember, and Undo after an answer; where the chat cannot show it, the text lists every event with its id, title, due moment and state. Use it when the user wants to see what is due.
    #[tool(
        annotations(title = "Show inbox", read_only_hint = true, open_world_hint = false),
        meta = view::shows_the_inbox(),
        output_schema = rmcp::handler::server::tool::schema_for_output::<view::InboxView>()
    )]
    async fn show_inbox(
        &self,
        Parameters(NoArgs {}): Parameters<NoArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ToolFailure> {
        let inbox = self.call(&context, view::read_inbox(self.inbox(&context)?)).await?;
        Ok(view::answer(&inbox))
    }

    /// The user's inbox: active events by due moment, earliest first (so overdue ones lead, then today's), a page of limit (default 100) at a time with next for the rest; or with archive=true the 100 most recently closed ones, latest first. text and source narrow either to what matches.
    /// Each event says its state, its source and whether it is editable.
    #[tool(annotations(title = "List events", read_only_hint = true, open_world_hint = false))]
    async fn list_events(
        &self,
        Parameters(args): Parameters<ListEventsArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UserEventList>, ToolFailure> {
        let request = v1::ListEventsRequest::from(args);
        let list = self.call(&context, self.inbox(&context)?.list_events(request)).await?;
        Ok(Json(UserEventList {
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
        let fields = v1::EventFields::from(args);
        let event = self
            .call(&context, self.inbox(&context)?.create_event(hado_gateway::cores::once(fields)))
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
        let request = v1::UpdateEventRequest::from(args);
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
        Ok(Json(Deleted::from(&reply)))
    }

    /// Done: the thing is finished and the event closes into the archive. Works on events from any source. A closed event is returned as it is.
    #[tool(
        annotations(
            title = "Mark done",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        meta = view::for_the_model_and_the_view()
    )]
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
    #[tool(
        annotations(
            title = "Remember",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        meta = view::for_the_model_and_the_view()
    )]
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
    #[tool(
        annotations(
            title = "Reopen event",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        meta = view::for_the_model_and_the_view()
    )]
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
    #[tool(
        annotations(
            title = "Restore reminders",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        meta = view::for_the_model_and_the_view()
    )]
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
            .call(&context, self.inbox(&context)?.get_profile(v1::GetProfileRequest::default()))
            .await?;
        Ok(Json(Profile::from(&profile)))
    }

    /// Changes the user's time zone, quiet hours and language; give any of them. A new zone moves local due times with it.
    #[tool(
        annotations(
            title = "Update profile",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        ),
        meta = view::for_the_model_and_the_view()
    )]
    async fn update_profile(
        &self,
        Parameters(args): Parameters<UpdateProfileArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<Profile>, ToolFailure> {
        let request = v1::UpdateProfileRequest::from(args);
        let profile = self.call(&context, self.inbox(&context)?.update_profile(request)).await?;
        Ok(Json(Profile::from(&profile)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::failure::misfit;

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
        assert_eq!(
            create.input_schema["properties"]["title"]["maxLength"],
            hado_words::fields::TITLE.max
        );
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
                "list_events" | "get_event" | "get_profile" | "show_inbox" => {
                    (Some(true), None, None)
                }
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
        assert_eq!(tools.len(), 12);
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
