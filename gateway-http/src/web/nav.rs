//! Owns what tops every page of a signed-in person: the navigation bar
//! (where they are, how many events need them) and, while their time zone
//! is still the deployment's default, the offer to set it, which
//! `settings::save_zone` answers.

use super::Session;

/// The navigation bar: where the person is, and how many events need them.
pub(crate) struct Nav {
    pub current: &'static str,
    pub attention: usize,
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

impl Session {
    /// The navigation bar, with core's count of the events that need
    /// attention, and the offer while the zone is core's default.
    pub(super) fn nav(&self, current: &'static str) -> Option<Nav> {
        let profile = &self.viewer.profile;
        let zone_offer = profile.tz_is_default.then(|| ZoneOffer {
            zone: profile.tz.clone(),
            back: self.here.clone().unwrap_or_else(|| "/".to_owned()),
        });
        Some(Nav { current, attention: profile.attention as usize, zone_offer })
    }
}
