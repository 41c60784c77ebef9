//! Owns `/openapi.json`: the OpenAPI 3.1 document of the sources' REST API,
//! built from the same Rust types the handlers read and write (their JSON
//! schemas come from `schemars`), so the document cannot drift from the code.

use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde_json::{Map, Value, json};

use crate::api::{ClientEventList, UpsertBody, UpsertReply, WithdrawBody, WithdrawReply};
use crate::error::ErrorBody;

/// The error statuses every route can answer, with when.
const COMMON_ERRORS: [(&str, &str); 2] = [
    ("401", "No source token, or one core does not know."),
    ("503", "Core cannot be reached; try again shortly."),
];

const BODY_ERRORS: [(&str, &str); 4] = [
    ("400", "The body is not valid JSON."),
    ("413", "The body is larger than 8 MiB."),
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

    let mut components = schemas.requests.take_definitions(true);
    components.extend(schemas.responses.take_definitions(true));

    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Hado source API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "How a service pushes dated events into people's Hado inboxes, withdraws them, and reads them back. Every call carries the source's token: `Authorization: Bearer hado_src_…` (`hado source create NAME` prints one).",
        },
        "security": [{ "sourceToken": [] }],
        "paths": {
            "/api/events": {
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
                        { "name": "user", "in": "query", "required": true, "description": "The user's login (not case sensitive).", "schema": { "type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$" } },
                        {
                            "name": "ref", "in": "query", "required": false, "style": "form", "explode": true,
                            "description": "Only these refs; repeat the parameter for several.",
                            "schema": { "type": "array", "items": { "type": "string" } },
                        },
                    ],
                    "responses": list_responses,
                },
            },
            "/api/events/withdraw": {
                "post": {
                    "operationId": "withdrawEvents",
                    "summary": "Withdraw up to 1000 events by key",
                    "description": "A withdrawn event leaves the inbox; an unknown key is reported with found=false, not as an error.",
                    "requestBody": withdraw_body,
                    "responses": withdraw_responses,
                },
            },
        },
        "components": {
            "schemas": components,
            "securitySchemes": { "sourceToken": { "type": "http", "scheme": "bearer", "description": "A source token, hado_src_…" } },
        },
    })
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
    }
}
