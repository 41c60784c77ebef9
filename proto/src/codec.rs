//! Owns how every `hado.v1` message is read off the wire: prost's codec,
//! with the lists of a request counted before the request is decoded.
//!
//! Why count first: a protobuf list item can be two bytes on the wire (a
//! tag and an empty length) and hundreds in memory once decoded (a struct
//! of strings), so a 16 MiB request of empty items would cost core about a
//! hundred times its size before any check of the list's length could run.
//! Counting walks the request's own bytes once and builds nothing; a list
//! past [`MAX_LIST_ITEMS`] is refused with the words core uses for a batch
//! too long, before a single item exists.
//!
//! Only requests are counted: replies come from core, and some (the users
//! an operator lists) rightly hold more.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::OnceLock;

use prost::Message;
use prost::bytes::Buf;
use prost::encoding::{WireType, decode_key, decode_varint};
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic_prost::{ProstDecoder, ProstEncoder};
use tonic_types::{ErrorDetails, FieldViolation, StatusExt};

/// The most items one list of a request holds: a batch's (core's
/// `MAX_BATCH`, which `UpsertEventsRequest.events` states).
pub const MAX_LIST_ITEMS: usize = 1000;

/// prost's codec, whose decoder refuses a request with a list of more than
/// [`MAX_LIST_ITEMS`] items before decoding it. Named by the generated
/// clients and servers (`codec_path` in `tests/generated.rs`).
#[derive(Debug, Clone)]
pub struct Bounded<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for Bounded<T, U> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T, U> Codec for Bounded<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = BoundedEncoder<T>;
    type Decoder = BoundedDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        BoundedEncoder(ProstEncoder::new(BufferSettings::default()))
    }

    fn decoder(&mut self) -> Self::Decoder {
        let lists = lists_of(short_name::<U>());
        BoundedDecoder { inner: ProstDecoder::new(BufferSettings::default()), lists }
    }
}

/// prost's encoder, unchanged.
#[derive(Debug)]
pub struct BoundedEncoder<T>(ProstEncoder<T>);

impl<T: Message> Encoder for BoundedEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        self.0.encode(item, buf)
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}

/// prost's decoder, after the request's lists are counted.
#[derive(Debug)]
pub struct BoundedDecoder<U> {
    inner: ProstDecoder<U>,
    /// The list fields of the message, by number, if it is a request.
    lists: Option<&'static HashMap<u32, String>>,
}

impl<U: Message + Default> Decoder for BoundedDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        // The message's bytes are one contiguous piece: tonic gathers a
        // whole message before decoding it.
        check(self.lists, buf.chunk())?;
        self.inner.decode(buf)
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.inner.buffer_settings()
    }
}

/// Refuses `message` if one of its `lists` holds too many items.
fn check(lists: Option<&HashMap<u32, String>>, message: &[u8]) -> Result<(), Status> {
    let Some(lists) = lists.filter(|lists| !lists.is_empty()) else { return Ok(()) };
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for number in field_numbers(message) {
        // A packed list of numbers is one field on the wire, and costs its
        // bytes decoded; only repeated fields, each item its own, count.
        if lists.contains_key(&number) {
            *counts.entry(number).or_default() += 1;
        }
    }
    match counts.into_iter().find(|(_, items)| *items > MAX_LIST_ITEMS) {
        Some((number, items)) => Err(too_many(&lists[&number], items)),
        None => Ok(()),
    }
}

/// The number of each top-level field of `message`, in order, each item's
/// bytes skipped, up to the end or to the first malformed field (which
/// prost then reports as it decodes).
fn field_numbers(mut message: &[u8]) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if !message.has_remaining() {
            return None;
        }
        let (number, wire_type) = decode_key(&mut message).ok()?;
        let length = match wire_type {
            WireType::Varint => decode_varint(&mut message).map(|_| 0).ok()?,
            WireType::SixtyFourBit => 8,
            WireType::ThirtyTwoBit => 4,
            WireType::LengthDelimited => usize::try_from(decode_varint(&mut message).ok()?).ok()?,
            // Groups are not in proto3; prost refuses them as it decodes.
            WireType::StartGroup | WireType::EndGroup => return None,
        };
        if length > message.remaining() {
            return None;
        }
        message.advance(length);
        Some(number)
    })
}

/// The refusal of a list too long, in core's words for a batch, with the
/// field named in the status's details as every invalid argument is.
fn too_many(field: &str, items: usize) -> Status {
    let message = format!("{field} holds {items} items; a batch holds at most {MAX_LIST_ITEMS}");
    let details = ErrorDetails::with_bad_request(vec![FieldViolation {
        field: field.to_owned(),
        description: message.clone(),
        reason: String::new(),
        localized_message: None,
    }]);
    Status::with_error_details(tonic::Code::InvalidArgument, message, details)
}

/// A generated type's message name: `UpsertEventsRequest` for
/// `hado_proto::v1::UpsertEventsRequest`.
fn short_name<U>() -> &'static str {
    let path = std::any::type_name::<U>();
    path.rsplit("::").next().unwrap_or(path)
}

/// For each message that some method takes as its request, its repeated
/// fields of messages by number, read once from the descriptor set.
fn requests() -> &'static HashMap<String, HashMap<u32, String>> {
    static REQUESTS: OnceLock<HashMap<String, HashMap<u32, String>>> = OnceLock::new();
    REQUESTS.get_or_init(|| {
        let set = prost_types::FileDescriptorSet::decode(crate::FILE_DESCRIPTOR_SET)
            .expect("the compiled-in descriptor set decodes");
        let package = |file: &prost_types::FileDescriptorProto| format!(".{}.", file.package());
        let inputs: Vec<String> = set
            .file
            .iter()
            .flat_map(|file| file.service.iter())
            .flat_map(|service| service.method.iter())
            .map(|method| method.input_type().to_owned())
            .collect();
        set.file
            .iter()
            .flat_map(|file| file.message_type.iter().map(move |message| (package(file), message)))
            .filter(|(package, message)| inputs.contains(&format!("{package}{}", message.name())))
            .map(|(_, message)| {
                let lists = message
                    .field
                    .iter()
                    .filter(|field| {
                        field.label() == prost_types::field_descriptor_proto::Label::Repeated
                            && field.r#type() == prost_types::field_descriptor_proto::Type::Message
                    })
                    .map(|field| {
                        (u32::try_from(field.number()).unwrap_or(0), field.name().to_owned())
                    })
                    .collect();
                (message.name().to_owned(), lists)
            })
            .collect()
    })
}

/// The list fields of the request message named `name`, or `None` for a
/// message no method takes (a reply).
fn lists_of(name: &str) -> Option<&'static HashMap<u32, String>> {
    requests().get(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1::{
        EventFields, SourceEvent, UpsertEventsReply, UpsertEventsRequest, UpsertResult,
    };

    /// What the decoder of `U` makes of `bytes`: its refusal, or the message.
    fn decode<U: Message + Default>(bytes: &[u8]) -> Result<U, Status> {
        check(lists_of(short_name::<U>()), bytes)?;
        U::decode(bytes).map_err(|error| Status::internal(error.to_string()))
    }

    fn events(count: usize) -> UpsertEventsRequest {
        let event = SourceEvent {
            user: "anna".into(),
            r#ref: "visa".into(),
            topic: String::new(),
            fields: Some(EventFields { title: "Visa".into(), ..Default::default() }),
        };
        UpsertEventsRequest { events: vec![event; count] }
    }

    #[test]
    fn the_requests_lists_are_read_from_the_descriptors() {
        let upsert = lists_of("UpsertEventsRequest").expect("a request");
        assert_eq!(upsert.get(&1).map(String::as_str), Some("events"));
        assert!(lists_of("UpsertEventsReply").is_none(), "a reply is not counted");
        assert!(lists_of("EventFields").is_some_and(HashMap::is_empty));
    }

    #[test]
    fn a_full_batch_decodes_and_one_more_item_is_refused_by_name() {
        let full = events(MAX_LIST_ITEMS).encode_to_vec();
        let decoded: UpsertEventsRequest = decode(&full).unwrap();
        assert_eq!(decoded.events.len(), MAX_LIST_ITEMS);

        let over = events(MAX_LIST_ITEMS + 1).encode_to_vec();
        let refused = decode::<UpsertEventsRequest>(&over).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert_eq!(refused.message(), "events holds 1001 items; a batch holds at most 1000");
        let violations = refused.get_details_bad_request().unwrap().field_violations;
        assert_eq!(violations[0].field, "events");
    }

    #[test]
    fn millions_of_empty_items_are_counted_without_being_decoded() {
        // Two bytes each on the wire: field 1, length 0.
        let bytes = [0x0a, 0x00].repeat(2_000_000);
        let refused = decode::<UpsertEventsRequest>(&bytes).unwrap_err();
        assert_eq!(refused.message(), "events holds 2000000 items; a batch holds at most 1000");
    }

    #[test]
    fn replies_and_malformed_requests_are_left_to_prost() {
        let reply = UpsertEventsReply { results: vec![UpsertResult::default(); 5000] };
        let decoded: UpsertEventsReply = decode(&reply.encode_to_vec()).unwrap();
        assert_eq!(decoded.results.len(), 5000);
        let truncated = [0x0a, 0x05, 0x01];
        assert_eq!(
            decode::<UpsertEventsRequest>(&truncated).unwrap_err().code(),
            tonic::Code::Internal
        );
    }
}
