//! Owns what tops every page of a signed-in person: the navigation bar
//! (where they are, how many events need them) and, while their time zone
//! is still the deployment's default, the offer to set it, which
//! `settings::save_zone` answers.

use hado_proto::v1;

/// The navigation bar: where the person is, and how many events need them.
pub(crate) struct Nav {
    pub current: &'static str,
    pub attention: usize,
    /// More than `attention` (core's cap) need them: the badge says `99+`.
    pub attention_more: bool,
    /// While the person's zone is still the deployment's default: the offer
    /// on every page to set it.
    pub zone_offer: Option<ZoneOffer>,
}

/// The offer to set the time zone: the zone in use, and the page to come
/// back to once it is answered.
pub(crate) struct ZoneOffer {
    pub zone: String,
    pub back: String,
}

/// The navigation bar of `profile`'s page `here`, with core's count of
/// the events that need attention, and the offer while the zone is core's
/// default: for the pages whose profile came with their one call (the
/// inbox, the archive).
pub(crate) fn bar(current: &'static str, profile: &v1::Profile, here: Option<&str>) -> Option<Nav> {
    let zone_offer = profile
        .tz_is_default
        .then(|| ZoneOffer { zone: profile.tz.clone(), back: here.unwrap_or("/").to_owned() });
    Some(Nav {
        current,
        attention: profile.attention as usize,
        attention_more: profile.attention_more,
        zone_offer,
    })
}
