//! Owns a person as core reads them back: their settings, and the line the
//! operator's list gives them.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::checkpoints::QuietHours;
use super::fields::Login;
use super::profile::Locale;

/// A user with their settings.
#[derive(Clone, Debug)]
pub struct UserRecord {
    pub id: i64,
    pub login: Login,
    pub zone: Tz,
    /// Whether the person chose their zone; until they do, it is the one
    /// the deployment gave them when it first saw them.
    pub zone_chosen: bool,
    pub quiet: QuietHours,
    pub locale: Locale,
}

impl UserRecord {
    /// Whether the person's zone is still the deployment's default
    /// (`HADO_DEFAULT_TZ`), which the person never chose: then the web inbox
    /// and the agent's in-chat view offer the zone of the device they use.
    /// Choosing any zone, the default included, ends the offer; a person
    /// seen before they could choose, whose zone is no longer the default,
    /// is not asked.
    pub fn zone_is_default(&self, deployment_default: Tz) -> bool {
        !self.zone_chosen && self.zone == deployment_default
    }
}

/// A user as the operator lists them.
#[derive(Clone, Debug)]
pub struct UserSummary {
    pub user: UserRecord,
    pub has_agent_token: bool,
    pub active_events: i64,
    pub created_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(zone: Tz, zone_chosen: bool) -> UserRecord {
        UserRecord {
            id: 1,
            login: Login::from_stored("anna".into()),
            zone,
            zone_chosen,
            quiet: QuietHours { start: chrono::NaiveTime::MIN, end: chrono::NaiveTime::MIN },
            locale: Locale::En,
        }
    }

    #[test]
    fn a_zone_is_the_default_until_the_person_chooses_one() {
        let (utc, tokyo) = (chrono_tz::UTC, chrono_tz::Asia::Tokyo);
        let cases = [
            // (the person's zone, chosen, the deployment's default, still the default)
            (utc, false, utc, true),
            (utc, true, utc, false),
            (tokyo, true, utc, false),
            (tokyo, false, utc, false),
            (tokyo, false, tokyo, true),
        ];
        for (zone, chosen, default, expected) in cases {
            assert_eq!(
                person(zone, chosen).zone_is_default(default),
                expected,
                "{zone}, chosen {chosen}, default {default}"
            );
        }
    }
}
