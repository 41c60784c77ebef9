//! Owns who gets a legacy event stream: a person at most
//! [`MAX_STREAMS_PER_PERSON`], everyone together [`MAX_STREAMS`]; when all
//! are open, a newcomer takes the place of the least recently used stream
//! of whoever holds the most, as long as they hold at least two more than
//! the newcomer would. So streams opened and left unread cannot keep anyone
//! out, and a person's one stream is never taken for another's ninth.
//! "Used" is when the stream was opened or last posted to: an unread
//! stream cannot be told from an idle one, since a client may read a
//! stream's keep-alives and never post.

use std::time::Instant;

/// Open streams at most, over all tokens; each holds a tool server.
pub(crate) const MAX_STREAMS: usize = 256;
/// Open streams at most per person, over all their tokens.
pub(crate) const MAX_STREAMS_PER_PERSON: usize = 8;

/// Whether a person may open one more stream, as [`make_room`] decides.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Room<'a> {
    Free,
    /// In place of this stream, closed for it.
    InPlaceOf(&'a str),
    Refused(String),
}

/// Where `person`'s next stream goes among the `open` ones (id, person,
/// last use): within their own cap; then in a free place; then in place of
/// the least recently used stream of whoever holds the most, as long as
/// they hold at least two more than `person` would.
pub(crate) fn make_room<'a>(
    open: impl Iterator<Item = (&'a str, &'a str, Instant)> + Clone,
    person: &str,
) -> Room<'a> {
    let held = |who: &str| open.clone().filter(|(_, owner, _)| *owner == who).count();
    if held(person) >= MAX_STREAMS_PER_PERSON {
        return Room::Refused(format!(
            "too many open event streams: at most {MAX_STREAMS_PER_PERSON} per person; close one or use /mcp"
        ));
    }
    if open.clone().count() < MAX_STREAMS {
        return Room::Free;
    }
    let most = open.clone().map(|(_, owner, _)| held(owner)).max().unwrap_or(0);
    if most < held(person) + 2 {
        return Room::Refused(format!(
            "every event stream is taken ({MAX_STREAMS}, and no one holds more than you would); try again later or use /mcp"
        ));
    }
    open.clone()
        .filter(|(_, owner, _)| held(owner) == most)
        .min_by_key(|(_, _, used)| *used)
        .map_or(Room::Free, |(id, _, _)| Room::InPlaceOf(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn session_id() -> String {
        hex::encode(rand::random::<[u8; 16]>())
    }

    /// Streams as `make_room` reads them, opened one after another.
    #[derive(Default)]
    struct Open(Vec<(String, String, Instant)>);

    impl Open {
        /// Opens a stream for `person` if there is room; whether it opened.
        fn open(&mut self, person: &str, at: Instant) -> bool {
            let listed =
                self.0.iter().map(|(id, owner, used)| (id.as_str(), owner.as_str(), *used));
            let taken = match make_room(listed, person) {
                Room::Free => None,
                Room::InPlaceOf(id) => Some(id.to_owned()),
                Room::Refused(_) => return false,
            };
            if let Some(taken) = taken {
                self.0.retain(|(id, _, _)| *id != taken);
            }
            self.0.push((session_id(), person.to_owned(), at));
            true
        }

        fn held(&self, person: &str) -> usize {
            self.0.iter().filter(|(_, owner, _)| owner == person).count()
        }
    }

    #[test]
    fn unread_streams_do_not_keep_a_newcomer_out() {
        let start = Instant::now();
        let mut open = Open::default();
        let mut tick = 0;
        let mut next = || {
            tick += 1;
            start + Duration::from_millis(tick)
        };
        let mut refused = Vec::new();
        for person in 0..33 {
            for stream in 0..MAX_STREAMS_PER_PERSON {
                if !open.open(&format!("person{person}"), next()) {
                    refused.push((person, stream));
                }
            }
        }
        // 32 people fill the 256 places; the 33rd takes seven of them, one
        // from each of seven people, and an eighth would only swap places.
        assert_eq!(refused, [(32, 7)]);
        assert!(open.open("newcomer", next()), "the 34th person gets a stream");
        assert_eq!(open.0.len(), MAX_STREAMS);
        for person in 0..33 {
            let held = open.held(&format!("person{person}"));
            assert!((7..=8).contains(&held), "person{person} holds {held}");
        }
    }

    #[test]
    fn a_full_house_gives_up_the_least_recently_used_stream_of_whoever_holds_most() {
        let start = Instant::now();
        let mut open = Open::default();
        for index in 0..MAX_STREAMS - 3 {
            assert!(open.open(&format!("single{index}"), start));
        }
        let at = |millis| start + Duration::from_millis(millis);
        assert!(open.open("many", at(30)));
        assert!(open.open("many", at(10)));
        assert!(open.open("many", at(20)));
        let oldest = open.0.iter().find(|(_, _, used)| *used == at(10)).unwrap().0.clone();
        assert!(open.open("newcomer", at(40)));
        assert!(!open.0.iter().any(|(id, _, _)| *id == oldest), "the least recently used went");
        assert_eq!((open.held("many"), open.held("newcomer")), (2, 1));
        // Now the most anyone holds is two: a second newcomer would leave
        // "many" with one, as many as it; nobody's one stream is taken.
        assert!(open.open("second", at(50)));
        assert_eq!(open.held("many"), 1);
        assert!(!open.open("third", at(60)), "with one stream each, a newcomer waits");
        assert!(!open.open("newcomer", at(70)), "and so does one who holds one already");
    }

    #[test]
    fn a_person_holds_at_most_eight_streams() {
        let mut open = Open::default();
        for _ in 0..MAX_STREAMS_PER_PERSON {
            assert!(open.open("anna", Instant::now()));
        }
        assert!(!open.open("anna", Instant::now()));
    }
}
