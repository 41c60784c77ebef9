//! Owns how large a request body may be, worked out from what the largest
//! request needs: a source's full batch. The cap is the bytes of 1,000
//! events with every field at its most characters, written as compact
//! JSON; the count of values is the same batch's. A body past either is
//! refused before anything is built of it, so what a request costs the
//! gateway is bounded by these two numbers (BENCHMARKS.md, "Memory bounded
//! by bytes").
//!
//! How wide a character is counted: four bytes (the widest UTF-8
//! character) in the free text a source writes (`ref`, `topic`, `title`,
//! `subtitle`, `done_label`), one byte where only ASCII is valid (`user`,
//! the dates, `after_due`), and one byte in `deep_link`: a URL travels
//! ASCII, anything else percent-encoded (RFC 3986). A batch that spends
//! more (2,048-character links written in another script, or every
//! character escaped as `\uXXXX`) is sent in two.

use hado_words::fields::{
    AFTER_DUE, DEEP_LINK, DONE_LABEL, DUE_AT, FIRE_AT, REF, SUBTITLE, TITLE, TOPIC, USER,
};

/// Events in a batch at most (core's limit, which the schema states).
pub(crate) const MAX_BATCH: usize = 1000;

/// One field of a pushed event: its key, its most characters, and the
/// bytes each character is counted at.
pub(crate) struct BatchField {
    pub(crate) key: &'static str,
    pub(crate) characters: usize,
    pub(crate) bytes_each: usize,
}

const fn field(key: &'static str, characters: usize, bytes_each: usize) -> BatchField {
    BatchField { key, characters, bytes_each }
}

/// Every field of `api::PushedEvent`, at its longest.
pub(crate) const BATCH_FIELDS: [BatchField; 10] = [
    field(USER.name, USER.max, 1),
    field(REF.name, REF.max, 4),
    field(TOPIC.name, TOPIC.max, 4),
    field(TITLE.name, TITLE.max, 4),
    field(SUBTITLE.name, SUBTITLE.max, 4),
    field(DUE_AT.name, DUE_AT.max, 1),
    field(FIRE_AT.name, FIRE_AT.max, 1),
    field(AFTER_DUE.name, AFTER_DUE.max, 1),
    field(DONE_LABEL.name, DONE_LABEL.max, 4),
    field(DEEP_LINK.name, DEEP_LINK.max, 1),
];

/// The bytes of `{"events":[…]}` holding [`MAX_BATCH`] events with every
/// field at its longest, in compact JSON.
pub(crate) const fn full_batch_bytes() -> usize {
    let mut event = 2 + (BATCH_FIELDS.len() - 1); // {} and the commas between members
    let mut index = 0;
    while index < BATCH_FIELDS.len() {
        let field = &BATCH_FIELDS[index];
        // "key":"value"
        event += field.key.len() + 5 + field.characters * field.bytes_each;
        index += 1;
    }
    r#"{"events":[]}"#.len() + MAX_BATCH * event + (MAX_BATCH - 1)
}

/// The largest request body read: a full batch, rounded up to a KiB.
pub const MAX_BODY_BYTES: usize = full_batch_bytes().div_ceil(1024) * 1024;

/// The most values a JSON body may hold: a full batch's (the object, its
/// `events` array, and each event's object with its fields).
pub(crate) const MAX_BODY_VALUES: usize = 2 + MAX_BATCH * (1 + BATCH_FIELDS.len());

/// The largest body of a signed-in person's request: a form of the web
/// inbox or a `/me` write. The largest of those, an event with every field
/// at its longest, is under 40 KiB even with each character of its deep
/// link percent-encoded from four bytes.
pub(crate) const MAX_PERSON_BODY_BYTES: usize = 64 * 1024;

/// The cap on the bodies of a group of routes, as the JSON extractor reads
/// it to word its 413; set with [`capped`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyCap(pub(crate) usize);

/// `router` with its bodies capped at `bytes`: axum's limit for the form
/// extractors, and the [`BodyCap`] the JSON extractor reads.
pub(crate) fn capped<S: Clone + Send + Sync + 'static>(
    router: axum::Router<S>,
    bytes: usize,
) -> axum::Router<S> {
    router
        .route_layer(axum::extract::DefaultBodyLimit::max(bytes))
        .route_layer(axum::Extension(BodyCap(bytes)))
}

/// One route's bodies capped at `bytes`, within a group capped otherwise.
pub(crate) fn capped_route<S: Clone + Send + Sync + 'static>(
    route: axum::routing::MethodRouter<S>,
    bytes: usize,
) -> axum::routing::MethodRouter<S> {
    route
        .layer::<_, std::convert::Infallible>(axum::extract::DefaultBodyLimit::max(bytes))
        .layer::<_, std::convert::Infallible>(axum::Extension(BodyCap(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_a_full_batch_and_no_more() {
        assert_eq!(full_batch_bytes(), 5_410_012);
        assert_eq!(MAX_BODY_BYTES, 5284 * 1024);
        assert_eq!(MAX_BODY_VALUES, 11_002);
    }
}
