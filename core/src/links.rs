//! Owns action links: a token naming one event, its user, one action
//! (Done or Remember) and the event's revision (a counter that every change
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
pub(crate) const LIFETIME: Duration = Duration::days(30);

/// The token format. Links of earlier formats are refused as out of date:
/// `a1` named no revision, and `a2` named a hash of the due moment, which
/// a reschedule away and back restored.
const VERSION: &str = "a3";
const OUTDATED_VERSIONS: [&str; 2] = ["a1", "a2"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkAction {
    Done,
    Remember,
}

impl LinkAction {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Remember => "remember",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "done" => Some(Self::Done),
            "remember" | "ack" => Some(Self::Remember),
            _ => None,
        }
    }
}

/// How long an email address's confirmation link works.
pub(crate) const CONFIRMATION_LIFETIME: Duration = Duration::hours(24);

/// The format of channel links.
const CHANNEL_VERSION: &str = "c1";

/// What a channel link does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelLinkAction {
    /// The address receives its person's reminders from now on.
    Confirm,
    /// The channel is paused (an email's one-click unsubscribe).
    Pause,
}

impl ChannelLinkAction {
    fn as_str(self) -> &'static str {
        match self {
            Self::Confirm => "confirm",
            Self::Pause => "pause",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "confirm" => Some(Self::Confirm),
            "pause" => Some(Self::Pause),
            _ => None,
        }
    }
}

/// What a valid channel link names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelLink {
    pub channel_id: i64,
    pub user_id: i64,
    pub action: ChannelLinkAction,
    /// None for a link that does not expire.
    pub expires_at: Option<DateTime<Utc>>,
}

/// What a valid link names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionLink {
    pub event_id: i64,
    pub user_id: i64,
    pub action: LinkAction,
    pub(crate) expires_at: DateTime<Utc>,
    /// The event's revision the link was made for.
    pub revision: Revision,
}

/// How many times an event has changed (its `revision` column).
pub type Revision = i64;

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

    /// A link for `action` on the event at `revision`, valid for
    /// [`LIFETIME`] from `now`.
    pub fn issue(
        &self,
        event_id: i64,
        user_id: i64,
        action: LinkAction,
        revision: Revision,
        now: DateTime<Utc>,
    ) -> String {
        let expires = (now + LIFETIME).timestamp();
        self.seal(&format!(
            "{VERSION}.{event_id}.{user_id}.{}.{expires}.{revision}",
            action.as_str()
        ))
    }

    /// A link that confirms or pauses one channel: a confirmation expires
    /// [`CONFIRMATION_LIFETIME`] after `now`; a pause (the unsubscribe
    /// address of every email) does not.
    pub fn issue_for_channel(
        &self,
        channel_id: i64,
        user_id: i64,
        action: ChannelLinkAction,
        now: DateTime<Utc>,
    ) -> String {
        let expires = match action {
            ChannelLinkAction::Confirm => (now + CONFIRMATION_LIFETIME).timestamp(),
            ChannelLinkAction::Pause => 0,
        };
        self.seal(&format!(
            "{CHANNEL_VERSION}.{channel_id}.{user_id}.{}.{expires}",
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
        let [CHANNEL_VERSION, channel_id, user_id, action, expires] = parts.as_slice() else {
            return Err(LinkProblem::Forged);
        };
        let user_id = user_id.parse().map_err(|_| LinkProblem::Forged)?;
        let expires_at = match expires.parse::<i64>().map_err(|_| LinkProblem::Forged)? {
            0 => None,
            seconds => Some(DateTime::from_timestamp(seconds, 0).ok_or(LinkProblem::Forged)?),
        };
        if let Some(at) = expires_at.filter(|at| now >= *at) {
            return Err(LinkProblem::Expired { at, user_id });
        }
        Ok(ChannelLink {
            channel_id: channel_id.parse().map_err(|_| LinkProblem::Forged)?,
            user_id,
            action: ChannelLinkAction::parse(action).ok_or(LinkProblem::Forged)?,
            expires_at,
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
        let [VERSION, event_id, user_id, action, expires, revision] = parts.as_slice() else {
            return Err(LinkProblem::Forged);
        };
        let link = ActionLink {
            event_id: event_id.parse().map_err(|_| LinkProblem::Forged)?,
            user_id: user_id.parse().map_err(|_| LinkProblem::Forged)?,
            action: LinkAction::parse(action).ok_or(LinkProblem::Forged)?,
            expires_at: expires
                .parse()
                .ok()
                .and_then(|seconds| DateTime::from_timestamp(seconds, 0))
                .ok_or(LinkProblem::Forged)?,
            revision: revision.parse().map_err(|_| LinkProblem::Forged)?,
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

    #[test]
    fn a_link_works_for_thirty_days_then_expires() {
        let signer = LinkSigner::new("link-secret-0123456789abcdef0123456789");
        let now = at("2026-12-01T10:00:00Z");
        let token = signer.issue(42, 7, LinkAction::Done, 3, now);
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
    fn a_changed_or_foreign_link_is_refused() {
        let signer = LinkSigner::new("link-secret-0123456789abcdef0123456789");
        let now = at("2026-12-01T10:00:00Z");
        let token = signer.issue(42, 7, LinkAction::Remember, 0, now);
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
        let signer = LinkSigner::new("link-secret-0123456789abcdef0123456789");
        let now = at("2026-12-01T10:00:00Z");
        let confirm = signer.issue_for_channel(5, 7, ChannelLinkAction::Confirm, now);
        let link = signer.check_channel(&confirm, now + Duration::hours(23)).unwrap();
        assert_eq!(
            (link.channel_id, link.user_id, link.action),
            (5, 7, ChannelLinkAction::Confirm)
        );
        assert_eq!(
            signer.check_channel(&confirm, now + CONFIRMATION_LIFETIME),
            Err(LinkProblem::Expired { at: at("2026-12-02T10:00:00Z"), user_id: 7 })
        );
        let pause = signer.issue_for_channel(5, 7, ChannelLinkAction::Pause, now);
        let link = signer.check_channel(&pause, now + Duration::days(3650)).unwrap();
        assert_eq!((link.action, link.expires_at), (ChannelLinkAction::Pause, None));
        // Neither kind of link passes for the other.
        let action = signer.issue(5, 7, LinkAction::Done, 0, now);
        assert_eq!(signer.check_channel(&action, now), Err(LinkProblem::Forged));
        assert_eq!(signer.check(&pause, now), Err(LinkProblem::Forged));
        let stranger = LinkSigner::new("another-secret-0123456789abcdef01234567");
        assert_eq!(stranger.check_channel(&pause, now), Err(LinkProblem::Forged));
    }

    #[test]
    fn links_of_earlier_formats_are_out_of_date() {
        let signer = LinkSigner::new("link-secret-0123456789abcdef0123456789");
        let expires = at("2026-12-31T10:00:00Z").timestamp();
        for payload in
            [format!("a1.42.7.done.{expires}"), format!("a2.42.7.done.{expires}.0123456789abcdef")]
        {
            let mut mac = signer.mac();
            mac.update(payload.as_bytes());
            let token = format!(
                "{}.{}",
                URL_SAFE_NO_PAD.encode(&payload),
                URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
            );
            assert_eq!(
                signer.check(&token, at("2026-12-01T10:00:00Z")),
                Err(LinkProblem::Outdated),
                "{payload}"
            );
        }
    }
}
