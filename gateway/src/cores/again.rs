//! Owns which calls a gateway may send to core again: those that change
//! nothing more when repeated, and those core does once per
//! [`IDEMPOTENCY_KEY`] when they carry one; and what a failed attempt says
//! of whether it may.

use hado_proto::metadata::{IDEMPOTENCY_KEY, STORAGE_FAILED};
use tonic::body::Body;

/// The calls that change nothing more when repeated. Any other call is
/// repeated only when it never reached a core, or is one of [`KEYED`] and
/// carries an [`IDEMPOTENCY_KEY`].
const REPEATABLE: &[&str] = &[
    "/grpc.health.v1.Health/Check",
    "/hado.v1.Ingest/UpsertEvents",
    "/hado.v1.Ingest/WithdrawEvents",
    "/hado.v1.Ingest/ListEvents",
    "/hado.v1.Ingest/WhoAmI",
    "/hado.v1.Inbox/GetInbox",
    "/hado.v1.Inbox/ListEvents",
    "/hado.v1.Inbox/GetEvent",
    "/hado.v1.Inbox/UpdateEvent",
    "/hado.v1.Inbox/MarkDone",
    "/hado.v1.Inbox/MarkAck",
    "/hado.v1.Inbox/ReopenEvent",
    "/hado.v1.Inbox/TakeBackAck",
    "/hado.v1.Inbox/GetProfile",
    "/hado.v1.Inbox/UpdateProfile",
    "/hado.v1.Inbox/GetAgentToken",
    "/hado.v1.Inbox/ListChannels",
    "/hado.v1.Inbox/SetChannelEnabled",
    "/hado.v1.Inbox/GetCalendarFeed",
    "/hado.v1.Inbox/ListConnectedApps",
    "/hado.v1.Links/InspectActionLink",
    "/hado.v1.Links/InspectChannelLink",
    "/hado.v1.Links/UseActionLink",
    "/hado.v1.Links/CalendarFeed",
    "/hado.v1.OAuth/CheckAuthorization",
];

/// The calls core does once per [`IDEMPOTENCY_KEY`]. Core reads the key of
/// no other call, so a key on any other call makes it no safer to repeat.
const KEYED: &[&str] = &["/hado.v1.Inbox/CreateEvent"];

/// Whether doing the call twice changes nothing more than doing it once.
pub(super) fn repeatable(parts: &http::request::Parts) -> bool {
    let path = parts.uri.path();
    REPEATABLE.contains(&path)
        || (KEYED.contains(&path) && parts.headers.contains_key(IDEMPOTENCY_KEY))
}

/// Whether the call failed before any of it was sent: its connection could
/// not be made.
pub(super) fn never_sent(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.is::<tonic::ConnectError>() {
            return true;
        }
        current = error.source();
    }
    false
}

/// Whether core answered the call UNAVAILABLE because its storage could
/// not be reached or written ([`STORAGE_FAILED`]), in the headers of an
/// answer that carries no message. Read from the headers alone, as sent.
pub(super) fn storage_failed(response: &http::Response<Body>) -> bool {
    let headers = response.headers();
    headers.get("grpc-status").is_some_and(|code| code.as_bytes() == b"14")
        && headers.contains_key(STORAGE_FAILED)
}

/// `message` as a call that core does once however often it is sent: with
/// a fresh [`IDEMPOTENCY_KEY`].
pub fn once<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let key = ulid::Ulid::new().to_string();
    request.metadata_mut().insert(IDEMPOTENCY_KEY, key.parse().expect("a ULID is valid metadata"));
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_repeatable_call_is_a_method_core_serves() {
        use prost::Message as _;
        let mut served = Vec::new();
        for set in [hado_proto::FILE_DESCRIPTOR_SET, tonic_health::pb::FILE_DESCRIPTOR_SET] {
            let set = prost_types::FileDescriptorSet::decode(set).expect("a descriptor set");
            for file in set.file {
                for service in &file.service {
                    for method in &service.method {
                        served.push(format!(
                            "/{}.{}/{}",
                            file.package(),
                            service.name(),
                            method.name()
                        ));
                    }
                }
            }
        }
        let unknown: Vec<&&str> = REPEATABLE
            .iter()
            .chain(KEYED)
            .filter(|path| !served.iter().any(|method| method == **path))
            .collect();
        assert!(unknown.is_empty(), "repeatable, but not a method core serves: {unknown:?}");
    }

    fn call(path: &str, key: bool) -> http::request::Parts {
        let mut request = http::Request::post(path);
        if key {
            request = request.header(IDEMPOTENCY_KEY, "01JF0000000000000000000000");
        }
        request.body(()).expect("a request").into_parts().0
    }

    #[test]
    fn a_key_makes_repeatable_only_the_calls_core_does_once_per_key() {
        assert!(repeatable(&call("/hado.v1.Inbox/CreateEvent", true)));
        assert!(!repeatable(&call("/hado.v1.Inbox/CreateEvent", false)));
        // Core reads no key on these: sent twice, they are done twice.
        for path in [
            "/hado.v1.Inbox/DeleteEvent",
            "/hado.v1.Inbox/AddWebhook",
            "/hado.v1.Admin/CreateSource",
        ] {
            assert!(!repeatable(&call(path, true)), "{path} with a key");
        }
        assert!(repeatable(&call("/hado.v1.Inbox/GetInbox", false)));
    }
}
