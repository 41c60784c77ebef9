//! Owns `/openapi.json`: the OpenAPI 3.1 document of the sources' REST API
//! and the person's own events (`/me/events`: the list, a new one), built from the same
//! Rust types the handlers read and write (their JSON schemas come from
//! `schemars`), so the document cannot drift from the code.

use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde_json::{Map, Value, json};

use crate::api::{
    ClientEventList, LOGIN_PATTERN, UpsertBody, UpsertReply, WithdrawBody, WithdrawReply,
};
use crate::error::ErrorBody;
use crate::me::{EventPage, EventsQuery, NewEventBody};
use hado_views::UserEvent;

/// The error statuses every route can answer, with when.
const COMMON_ERRORS: [(&str, &str); 2] = [
    ("401", "No source token, or one core does not know."),
    ("503", "Core cannot be reached; try again shortly."),
];

const BODY_ERRORS: [(&str, &str); 4] = [
    ("400", "The body is not valid JSON."),
    ("413", "The body is larger than 8 MiB, or holds more JSON values than any request needs."),
    ("415", "The body is not sent as application/json."),
    (
        "422",
        "Invalid input: every bad field of every item is listed in `violations`, and nothing was written.",
    ),
];

struct Schemas {
    requests: schemars::SchemaGenerator,
    responses: schemars::SchemaGenerator,
}

impl Schemas {
    fn new() -> Self {
        let settings = |contract: Contract| {
            SchemaSettings::draft2020_12().with(|settings| {
                settings.definitions_path = "#/components/schemas/".into();
                settings.meta_schema = None;
                settings.contract = contract;
            })
        };
        Self {
            requests: settings(Contract::Deserialize).into_generator(),
            responses: settings(Contract::Serialize).into_generator(),
        }
    }

    fn request<T: JsonSchema>(&mut self) -> Value {
        json!({ "required": true, "content": { "application/json": { "schema": self.requests.subschema_for::<T>() } } })
    }

    fn reply<T: JsonSchema>(&mut self, description: &str) -> Value {
        json!({ "description": description, "content": { "application/json": { "schema": self.responses.subschema_for::<T>() } } })
    }

    /// A query's parameters, one a field of `T`, each optional, with the
    /// field's own schema and words.
    fn query_parameters<T: JsonSchema>(&mut self) -> Value {
        let schema = self.requests.root_schema_for::<T>();
        let properties = schema.get("properties").and_then(Value::as_object).cloned();
        let parameters: Vec<Value> = properties
            .unwrap_or_default()
            .into_iter()
            .map(|(name, mut field)| {
                let description = field
                    .as_object_mut()
                    .and_then(|field| field.remove("description"))
                    .unwrap_or(Value::Null);
                // A parameter left out is how a query says "none": its
                // schema is the value's, without JSON's null.
                if let Some(types) = field.get("type").and_then(Value::as_array) {
                    let types: Vec<Value> =
                        types.iter().filter(|kind| *kind != "null").cloned().collect();
                    field["type"] = match types.as_slice() {
                        [one] => one.clone(),
                        _ => Value::Array(types),
                    };
                }
                json!({ "name": name, "in": "query", "required": false, "description": description, "schema": field })
            })
            .collect();
        Value::Array(parameters)
    }

    fn errors(&mut self, with_body: bool, responses: &mut Map<String, Value>) {
        let listed: Vec<(&str, &str)> = if with_body {
            BODY_ERRORS.iter().chain(COMMON_ERRORS.iter()).copied().collect()
        } else {
            COMMON_ERRORS.to_vec()
        };
        for (status, when) in listed {
            responses.insert(status.to_owned(), self.reply::<ErrorBody>(when));
        }
        if !with_body {
            responses.insert(
                "422".into(),
                self.reply::<ErrorBody>(
                    "The user is missing or not a valid login, or a query parameter is unknown.",
                ),
            );
        }
    }
}

/// The whole document.
pub(crate) fn document() -> Value {
    let mut schemas = Schemas::new();
    let mut paths = source_paths(&mut schemas);
    paths.extend(person_paths(&mut schemas));
    let mut components = schemas.requests.take_definitions(true);
    components.extend(schemas.responses.take_definitions(true));
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Hado source API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "How a service pushes dated events into people's Hado inboxes, withdraws them, and reads them back. Every call under /api carries the source's token: `Authorization: Bearer hado_src_…` (`hado source create NAME` prints one). `/me/events` is the signed-in person's own: their list, a page at a time, and a new event of theirs.",
        },
        "security": [{ "sourceToken": [] }],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "sourceToken": { "type": "http", "scheme": "bearer", "description": "A source token, hado_src_…" },
                "signedInPerson": { "type": "apiKey", "in": "header", "name": "X-Remote-User", "description": "The person, named by the sign-in proxy in front of Hado (forward_auth) and believed only from an address in HADO_TRUSTED_PROXIES; `hado up`'s local user needs none." },
            },
        },
    })
}

/// The source API's paths: the batch upsert, the read back and the
/// batch withdraw, each with the source's token.
fn source_paths(schemas: &mut Schemas) -> Map<String, Value> {
    let mut upsert_responses = Map::new();
    upsert_responses.insert(
        "200".into(),
        schemas.reply::<UpsertReply>("One result per event, in the order sent."),
    );
    schemas.errors(true, &mut upsert_responses);
    let upsert_body = schemas.request::<UpsertBody>();

    let mut withdraw_responses = Map::new();
    withdraw_responses.insert(
        "200".into(),
        schemas.reply::<WithdrawReply>("One result per key, in the order sent."),
    );
    schemas.errors(true, &mut withdraw_responses);
    let withdraw_body = schemas.request::<WithdrawBody>();

    let mut list_responses = Map::new();
    list_responses.insert(
        "200".into(),
        schemas.reply::<ClientEventList>(
            "The source's events for the user, in any state but withdrawn.",
        ),
    );
    schemas.errors(false, &mut list_responses);

    Map::from_iter([
        (
            "/api/events".to_owned(),
            json!({
                "post": {
                    "operationId": "upsertEvents",
                    "summary": "Create or update up to 1000 events",
                    "description": "Each event is keyed by (source, user, ref, topic). A new key is created; a known key with a different due_at is rescheduled (reopened even when done or expired); the same due_at updates the other fields. The batch is validated whole and written in one transaction.",
                    "requestBody": upsert_body,
                    "responses": upsert_responses,
                },
                "get": {
                    "operationId": "listEvents",
                    "summary": "Read back the source's events for one user",
                    "parameters": [
                        { "name": "user", "in": "query", "required": true, "description": "The user's login (not case sensitive).", "schema": { "type": "string", "pattern": LOGIN_PATTERN.as_str() } },
                        {
                            "name": "ref", "in": "query", "required": false, "style": "form", "explode": true,
                            "description": "Only these refs; repeat the parameter for several.",
                            "schema": { "type": "array", "items": { "type": "string" } },
                        },
                    ],
                    "responses": list_responses,
                },
            }),
        ),
        (
            "/api/events/withdraw".to_owned(),
            json!({
                "post": {
                    "operationId": "withdrawEvents",
                    "summary": "Withdraw up to 1000 events by key",
                    "description": "A withdrawn event leaves the inbox; an unknown key is reported with found=false, not as an error.",
                    "requestBody": withdraw_body,
                    "responses": withdraw_responses,
                },
            }),
        ),
    ])
}

/// The signed-in person's paths: their events, a page at a time, and a new
/// one of theirs.
fn person_paths(schemas: &mut Schemas) -> Map<String, Value> {
    let mut person_responses = Map::new();
    person_responses.insert(
        "200".into(),
        schemas.reply::<EventPage>(
            "A page of the person's active events, the most urgent first, and where the next begins.",
        ),
    );
    for (status, when) in [
        ("401", "No signed-in person: the sign-in proxy named nobody."),
        (
            "422",
            "A query parameter is unknown or out of range, or `after` is not a previous reply's `next`.",
        ),
        ("503", "Core cannot be reached; try again shortly."),
    ] {
        person_responses.insert(status.to_owned(), schemas.reply::<ErrorBody>(when));
    }
    let person_parameters = schemas.query_parameters::<EventsQuery>();

    let mut create_responses = Map::new();
    create_responses
        .insert("201".into(), schemas.reply::<UserEvent>("The new event, as the person reads it."));
    for (status, when) in BODY_ERRORS.iter().chain(&[
        ("401", "No signed-in person: the sign-in proxy named nobody."),
        ("403", "The request came from another site (its Origin or Sec-Fetch-Site says so)."),
        ("503", "Core cannot be reached; try again shortly."),
    ]) {
        create_responses.insert((*status).to_owned(), schemas.reply::<ErrorBody>(when));
    }
    let create_body = schemas.request::<NewEventBody>();

    Map::from_iter([(
        "/me/events".to_owned(),
        json!({
            "get": {
                "operationId": "listMyEvents",
                "summary": "Read the signed-in person's active events, a page at a time",
                "description": "Active events (overdue, today, preparing, scheduled) in the order of their due moments, at most `limit` of them (100 unless said); `next` says where the following page begins, as `after`. Each page costs what it returns, however many events the person has.",
                "security": [{ "signedInPerson": [] }],
                "parameters": person_parameters,
                "responses": person_responses,
            },
            "post": {
                "operationId": "createMyEvent",
                "summary": "Add an event of the signed-in person's own",
                "description": "An event of the person's own (source `manual`), which they may later edit and delete.",
                "security": [{ "signedInPerson": [] }],
                "requestBody": create_body,
                "responses": create_responses,
            },
        }),
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_resolves() {
        let document = document();
        let text = document.to_string();
        let schemas = document["components"]["schemas"].as_object().unwrap();
        for reference in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = reference.split('"').next().unwrap();
            assert!(schemas.contains_key(name), "{name} is referenced but not defined");
        }
        let event = &schemas["PushedEvent"];
        assert_eq!(event["required"], json!(["user", "ref", "title", "due_at"]));
        // The person's list: its parameters from the handler's own query
        // type, its limit from the same constant the handler checks.
        let parameters = document["paths"]["/me/events"]["get"]["parameters"].as_array().unwrap();
        let names: Vec<&str> = parameters.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["after", "limit", "state"]);
        let limit = &parameters[1];
        assert_eq!(
            (&limit["schema"]["minimum"], &limit["schema"]["maximum"]),
            (&json!(1), &json!(crate::me::LARGEST_PAGE))
        );
        assert!(limit["description"].as_str().unwrap().starts_with("At most this many"));
    }
}
