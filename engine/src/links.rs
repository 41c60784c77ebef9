//! Owns action links: a token naming one event, its user, one action
//! (Done or Remember), the moment the event was created (so that a row
//! that took a deleted event's id is never acted on) and the event's
//! revision (a counter that every change
//! by a person or a source moves on: an edit, a reschedule, Reopen, a
//! delete, a withdrawal, a revival),
//! signed with `HADO_SECRET` (HMAC-SHA256) and valid for 30 days, so that a
//! reminder can carry buttons that work without signing in, and a link made
//! before any such change no longer acts, even when the change is undone
//! (rescheduled away and back, done and reopened). Done, Remember and the
//! clock moving an event on (preparing, today, overdue) keep the revision: a
//! reminder's Done still works after its Remember and the next day, and a
//! Done link used again finds the event closed and does nothing. Pure: the
//! instant comes in as an argument.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// How long a link works after it is made.
pub const LIFETIME: Duration = Duration::days(30);

/// The token format. Links of earlier formats are refused as out of date:
/// `a1` named no revision, and `a2` named a hash of the due moment, which
/// a reschedule away and back restored. `a3` named no creation: it still
/// works for an event created no later than the link was made (30 days
/// before it expires), which no row that took a deleted event's id can be.
const VERSION: &str = "a4";
const UNBOUND_VERSION: &str = "a3";
const OUTDATED_VERSIONS: [&str; 2] = ["a1", "a2"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkAction {
    Done,
    Remember,
}

impl LinkAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Remember => "remember",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "done" => Some(Self::Done),
            "remember" | "ack" => Some(Self::Remember),
            _ => None,
        }
    }
}

/// How long an email address's confirmation link works.
pub const CONFIRMATION_LIFETIME: Duration = Duration::hours(24);

/// The format of channel links: `c2` binds the address (a hash of the
/// channel's kind and target) besides the channel's id. `c1` bound the id
/// alone: its confirmations still work for a channel created before the
/// link was made, and its pauses (the unsubscribe address of every email
/// sent before `c2`, which never expires) still pause the person's own
/// channel of that id, which only stops mail.
const CHANNEL_VERSION: &str = "c2";
const UNBOUND_CHANNEL_VERSION: &str = "c1";
/// Hex digits of the target's hash a channel link carries: all of sha256,
/// since a refusal stores it as the address's only trace.
const TARGET_HASH_DIGITS: usize = 64;

/// What a channel link does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelLinkAction {
    /// The address receives its person's reminders from now on.
    Confirm,
    /// The channel is paused (an email's one-click unsubscribe).
    Pause,
    /// The address never gets another confirmation (a confirmation's
    /// one-click unsubscribe), unless its owner signs up with it.
    Refuse,
}

impl ChannelLinkAction {
    fn as_str(self) -> &'static str {
        match self {
            Self::Confirm => "confirm",
            Self::Pause => "pause",
            Self::Refuse => "refuse",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "confirm" => Some(Self::Confirm),
            "pause" => Some(Self::Pause),
            "refuse" => Some(Self::Refuse),
            _ => None,
        }
    }
}

/// What a valid channel link names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelLink {
    pub channel_id: i64,
    pub user_id: i64,
    pub action: ChannelLinkAction,
    /// None for a link that does not expire.
    pub expires_at: Option<DateTime<Utc>>,
    /// What the link was made for besides the id.
    pub bound: ChannelBinding,
}

/// What a channel link binds besides the channel's id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChannelBinding {
    /// The hash of the channel's kind and target, in hex.
    Target(String),
    /// A `c1` link, which bound nothing more: made at this moment, if known.
    MadeAt(Option<DateTime<Utc>>),
}

impl ChannelBinding {
    /// Whether a channel of this target hash, created at `created_at`, is
    /// the one the link was made for.
    pub fn admits(&self, target_hash: &str, created_at: DateTime<Utc>) -> bool {
        match self {
            Self::Target(bound) => target_hash == bound,
            Self::MadeAt(Some(made)) => created_at <= *made,
            Self::MadeAt(None) => true,
        }
    }

    /// The target's hash, when the link names it (a `c2` link).
    pub fn target(&self) -> Option<&str> {
        match self {
            Self::Target(bound) => Some(bound),
            Self::MadeAt(_) => None,
        }
    }
}

/// What a valid link names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionLink {
    pub event_id: i64,
    pub user_id: i64,
    pub action: LinkAction,
    pub expires_at: DateTime<Utc>,
    /// The event's revision the link was made for.
    pub revision: Revision,
    /// The creation of the event the link was made for.
    pub created: Creation,
}

/// What an action link knows of its event's creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Creation {
    /// The event's creation, to the millisecond.
    At(DateTime<Utc>),
    /// An `a3` link names none: the event was created no later than the
    /// link was made.
    NotAfter(DateTime<Utc>),
}

impl Creation {
    /// Whether an event created at `created_at` is the one the link names.
    pub fn admits(self, created_at: DateTime<Utc>) -> bool {
        match self {
            Self::At(at) => created_at.timestamp_millis() == at.timestamp_millis(),
            Self::NotAfter(made) => created_at <= made,
        }
    }
}

/// How many times an event has changed (its `revision` column).
pub type Revision = i64;

/// The event an action link is made for: its id and person, and what binds
/// the link to that row (its revision and creation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkedEvent {
    pub id: i64,
    pub user_id: i64,
    pub revision: Revision,
    pub created_at: DateTime<Utc>,
}

/// Why a link does not work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkProblem {
    #[error("this link is not valid")]
    Forged,
    /// Genuine, but past its time; `user_id` is the person it was for.
    #[error("this link expired on {at}")]
    Expired { at: DateTime<Utc>, user_id: i64 },
    #[error(
        "this reminder is out of date: the event has changed since it was sent, so nothing was done; open Hado to see it now"
    )]
    Outdated,
    /// Genuine, but what it named is gone (removed, or it was made for
    /// another row); `user_id` is the person it was for.
    #[error("this link has expired: what it was sent for is gone")]
    Gone { user_id: i64 },
}

/// Signs and checks links with one key.
#[derive(Clone)]
pub struct LinkSigner {
    key: Vec<u8>,
}

impl std::fmt::Debug for LinkSigner {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("LinkSigner { .. }")
    }
}

impl LinkSigner {
    pub fn new(secret: &str) -> Self {
        Self { key: secret.as_bytes().to_vec() }
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes a key of any length")
    }

    /// `payload` and its signature, as a token.
    fn seal(&self, payload: &str) -> String {
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        let signature = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        format!("{}.{signature}", URL_SAFE_NO_PAD.encode(payload))
    }

    /// The payload of a token whose signature holds.
    fn open(&self, token: &str) -> Result<String, LinkProblem> {
        if token.len() > 512 {
            return Err(LinkProblem::Forged);
        }
        let (payload, signature) = token.split_once('.').ok_or(LinkProblem::Forged)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| LinkProblem::Forged)?;
        let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| LinkProblem::Forged)?;
        let mut mac = self.mac();
        mac.update(&payload);
        mac.verify_slice(&signature).map_err(|_| LinkProblem::Forged)?;
        String::from_utf8(payload).map_err(|_| LinkProblem::Forged)
    }

    /// A link for `action` on the event created at `created_at`, at
    /// `revision`, valid for [`LIFETIME`] from `now`.
    pub fn issue(&self, event: LinkedEvent, action: LinkAction, now: DateTime<Utc>) -> String {
        let expires = (now + LIFETIME).timestamp();
        let LinkedEvent { id, user_id, revision, created_at } = event;
        self.seal(&format!(
            "{VERSION}.{id}.{user_id}.{}.{expires}.{revision}.{}",
            action.as_str(),
            created_at.timestamp_millis()
        ))
    }

    /// A link that confirms, pauses or refuses one channel, bound to its
    /// target's hash: a confirmation expires [`CONFIRMATION_LIFETIME`]
    /// after `now`; a pause (the unsubscribe address of every reminder) and
    /// a refusal (that of a confirmation) do not.
    pub fn issue_for_channel(
        &self,
        channel_id: i64,
        user_id: i64,
        target_hash: &str,
        action: ChannelLinkAction,
        now: DateTime<Utc>,
    ) -> String {
        let expires = match action {
            ChannelLinkAction::Confirm => (now + CONFIRMATION_LIFETIME).timestamp(),
            ChannelLinkAction::Pause | ChannelLinkAction::Refuse => 0,
        };
        self.seal(&format!(
            "{CHANNEL_VERSION}.{channel_id}.{user_id}.{}.{expires}.{target_hash}",
            action.as_str()
        ))
    }

    /// A channel link's content when its signature holds and it has not
    /// expired. Whether the channel is still there is for the caller.
    pub fn check_channel(
        &self,
        token: &str,
        now: DateTime<Utc>,
    ) -> Result<ChannelLink, LinkProblem> {
        let payload = self.open(token)?;
        let parts: Vec<&str> = payload.split('.').collect();
        let (channel_id, user_id, action, expires, bound) = match parts.as_slice() {
            [CHANNEL_VERSION, channel_id, user_id, action, expires, bound]
                if bound.len() == TARGET_HASH_DIGITS
                    && bound.bytes().all(|byte| byte.is_ascii_hexdigit()) =>
            {
                (channel_id, user_id, action, expires, Some(bound))
            }
            [UNBOUND_CHANNEL_VERSION, channel_id, user_id, action, expires] => {
                (channel_id, user_id, action, expires, None)
            }
            _ => return Err(LinkProblem::Forged),
        };
        let user_id = user_id.parse().map_err(|_| LinkProblem::Forged)?;
        let expires_at = match expires.parse::<i64>().map_err(|_| LinkProblem::Forged)? {
            0 => None,
            seconds => Some(DateTime::from_timestamp(seconds, 0).ok_or(LinkProblem::Forged)?),
        };
        if let Some(at) = expires_at.filter(|at| now >= *at) {
            return Err(LinkProblem::Expired { at, user_id });
        }
        let action = ChannelLinkAction::parse(action).ok_or(LinkProblem::Forged)?;
        let bound = match bound {
            Some(bound) => ChannelBinding::Target((*bound).to_owned()),
            // A `c1` confirmation was made a day before it expires; a `c1`
            // link of any other kind (a pause) carries no moment.
            // To the second, rounded down, as for `a3`.
            None => ChannelBinding::MadeAt(
                expires_at.map(|at| at - CONFIRMATION_LIFETIME + Duration::milliseconds(999)),
            ),
        };
        Ok(ChannelLink {
            channel_id: channel_id.parse().map_err(|_| LinkProblem::Forged)?,
            user_id,
            action,
            expires_at,
            bound,
        })
    }

    /// The link's content when its signature holds, it has not expired and
    /// it names a revision. Whether the revision is still the event's is
    /// for the caller, who has the event.
    pub fn check(&self, token: &str, now: DateTime<Utc>) -> Result<ActionLink, LinkProblem> {
        let payload = self.open(token)?;
        let parts: Vec<&str> = payload.split('.').collect();
        if parts.first().is_some_and(|version| OUTDATED_VERSIONS.contains(version)) {
            return Err(LinkProblem::Outdated);
        }
        let (event_id, user_id, action, expires, revision, created) = match parts.as_slice() {
            [VERSION, event_id, user_id, action, expires, revision, created] => {
                (event_id, user_id, action, expires, revision, Some(created))
            }
            [UNBOUND_VERSION, event_id, user_id, action, expires, revision] => {
                (event_id, user_id, action, expires, revision, None)
            }
            _ => return Err(LinkProblem::Forged),
        };
        let expires_at = expires
            .parse()
            .ok()
            .and_then(|seconds| DateTime::from_timestamp(seconds, 0))
            .ok_or(LinkProblem::Forged)?;
        let created = match created {
            Some(millis) => Creation::At(
                millis
                    .parse()
                    .ok()
                    .and_then(DateTime::from_timestamp_millis)
                    .ok_or(LinkProblem::Forged)?,
            ),
            // Made LIFETIME before it expires, to the second, rounded down:
            // an event created within that second is admitted.
            None => Creation::NotAfter(expires_at - LIFETIME + Duration::milliseconds(999)),
        };
        let link = ActionLink {
            event_id: event_id.parse().map_err(|_| LinkProblem::Forged)?,
            user_id: user_id.parse().map_err(|_| LinkProblem::Forged)?,
            action: LinkAction::parse(action).ok_or(LinkProblem::Forged)?,
            expires_at,
            revision: revision.parse().map_err(|_| LinkProblem::Forged)?,
            created,
        };
        if now >= link.expires_at {
            return Err(LinkProblem::Expired { at: link.expires_at, user_id: link.user_id });
        }
        Ok(link)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn signer() -> LinkSigner {
        LinkSigner::new("link-secret-0123456789abcdef0123456789")
    }

    fn event(id: i64, revision: Revision) -> LinkedEvent {
        LinkedEvent { id, user_id: 7, revision, created_at: at("2026-11-20T08:00:00.123Z") }
    }

    /// A token of any payload, signed as the signer would.
    fn sealed(signer: &LinkSigner, payload: &str) -> String {
        let mut mac = signer.mac();
        mac.update(payload.as_bytes());
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
        )
    }

    const HASH: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_link_works_for_thirty_days_then_expires() {
        let signer = signer();
        let now = at("2026-12-01T10:00:00Z");
        let token = signer.issue(event(42, 3), LinkAction::Done, now);
        let link = signer.check(&token, now + Duration::days(29)).unwrap();
        assert_eq!(
            (link.event_id, link.user_id, link.action, link.revision),
            (42, 7, LinkAction::Done, 3)
        );
        assert_eq!(
            signer.check(&token, now + LIFETIME),
            Err(LinkProblem::Expired { at: at("2026-12-31T10:00:00Z"), user_id: 7 })
        );
    }

    #[test]
    fn a_link_admits_only_the_event_created_when_it_was_made_for() {
        let signer = signer();
        let now = at("2026-12-01T10:00:00Z");
        let link = signer.check(&signer.issue(event(42, 0), LinkAction::Done, now), now).unwrap();
        assert!(link.created.admits(at("2026-11-20T08:00:00.123Z")));
        // A row that took the id later, even a millisecond later, is another event.
        assert!(!link.created.admits(at("2026-11-20T08:00:00.124Z")));
        assert!(!link.created.admits(at("2026-12-01T10:00:05Z")));
    }

    #[test]
    fn a_link_of_the_format_before_admits_events_created_no_later_than_it() {
        let signer = signer();
        let made = at("2026-12-01T10:00:00.500Z");
        let expires = (made + LIFETIME).timestamp();
        let token = sealed(&signer, &format!("a3.42.7.done.{expires}.0"));
        let link = signer.check(&token, made).unwrap();
        assert!(link.created.admits(at("2026-11-20T08:00:00Z")));
        assert!(link.created.admits(at("2026-12-01T10:00:00.400Z")));
        assert!(!link.created.admits(at("2026-12-01T10:00:01Z")), "created after the link");
    }

    #[test]
    fn a_changed_or_foreign_link_is_refused() {
        let signer = signer();
        let now = at("2026-12-01T10:00:00Z");
        let token = signer.issue(event(42, 0), LinkAction::Remember, now);
        let (payload, signature) = token.split_once('.').unwrap();
        let other_event = URL_SAFE_NO_PAD.encode(
            String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap())
                .unwrap()
                .replace(".42.", ".43."),
        );
        for forged in [
            format!("{other_event}.{signature}"),
            format!("{payload}.{}", &signature[1..]),
            "garbage".into(),
            String::new(),
        ] {
            assert_eq!(signer.check(&forged, now), Err(LinkProblem::Forged), "{forged}");
        }
        let stranger = LinkSigner::new("another-secret-0123456789abcdef01234567");
        assert_eq!(stranger.check(&token, now), Err(LinkProblem::Forged));
    }

    #[test]
    fn a_confirmation_works_for_a_day_and_a_pause_for_good() {
        let signer = signer();
        let now = at("2026-12-01T10:00:00Z");
        let confirm = signer.issue_for_channel(5, 7, HASH, ChannelLinkAction::Confirm, now);
        let link = signer.check_channel(&confirm, now + Duration::hours(23)).unwrap();
        assert_eq!(
            (link.channel_id, link.user_id, link.action),
            (5, 7, ChannelLinkAction::Confirm)
        );
        assert_eq!(
            signer.check_channel(&confirm, now + CONFIRMATION_LIFETIME),
            Err(LinkProblem::Expired { at: at("2026-12-02T10:00:00Z"), user_id: 7 })
        );
        for action in [ChannelLinkAction::Pause, ChannelLinkAction::Refuse] {
            let token = signer.issue_for_channel(5, 7, HASH, action, now);
            let link = signer.check_channel(&token, now + Duration::days(3650)).unwrap();
            assert_eq!((link.action, link.expires_at), (action, None));
        }
        // Neither kind of link passes for the other.
        let pause = signer.issue_for_channel(5, 7, HASH, ChannelLinkAction::Pause, now);
        let action = signer.issue(event(5, 0), LinkAction::Done, now);
        assert_eq!(signer.check_channel(&action, now), Err(LinkProblem::Forged));
        assert_eq!(signer.check(&pause, now), Err(LinkProblem::Forged));
        let stranger = LinkSigner::new("another-secret-0123456789abcdef01234567");
        assert_eq!(stranger.check_channel(&pause, now), Err(LinkProblem::Forged));
    }

    #[test]
    fn a_channel_link_admits_only_the_address_it_was_sent_to() {
        let signer = signer();
        let now = at("2026-12-01T10:00:00Z");
        let token = signer.issue_for_channel(5, 7, HASH, ChannelLinkAction::Confirm, now);
        let link = signer.check_channel(&token, now).unwrap();
        assert!(link.bound.admits(HASH, now));
        let other = "f123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        assert!(!link.bound.admits(other, now - Duration::days(1)));
    }

    #[test]
    fn a_channel_link_of_the_format_before_binds_what_it_can() {
        let signer = signer();
        let made = at("2026-12-01T10:00:00Z");
        let expires = (made + CONFIRMATION_LIFETIME).timestamp();
        let confirm = sealed(&signer, &format!("c1.5.7.confirm.{expires}"));
        let link = signer.check_channel(&confirm, made).unwrap();
        assert!(link.bound.admits(HASH, made - Duration::hours(1)));
        assert!(!link.bound.admits(HASH, made + Duration::seconds(1)), "created after the link");
        let pause = sealed(&signer, "c1.5.7.pause.0");
        let link = signer.check_channel(&pause, made).unwrap();
        assert_eq!(link.bound, ChannelBinding::MadeAt(None));
        // A `c2` link with its binding cut off is no link.
        let cut = sealed(&signer, &format!("c2.5.7.confirm.{expires}"));
        assert_eq!(signer.check_channel(&cut, made), Err(LinkProblem::Forged));
    }

    #[test]
    fn links_of_earlier_formats_are_out_of_date() {
        let signer = signer();
        let expires = at("2026-12-31T10:00:00Z").timestamp();
        for payload in
            [format!("a1.42.7.done.{expires}"), format!("a2.42.7.done.{expires}.0123456789abcdef")]
        {
            assert_eq!(
                signer.check(&sealed(&signer, &payload), at("2026-12-01T10:00:00Z")),
                Err(LinkProblem::Outdated),
                "{payload}"
            );
        }
    }
}
