//! Owns the values of a person's profile: their language, their time zone
//! (an IANA name, or a city's), and the wall-clock times of quiet hours.
//! Each is parsed once at the edge, like the event's values in `fields`.

use chrono::NaiveTime;
use chrono_tz::Tz;

use hado_words::wording::{ZONE_AREAS, canonical_zone};

use super::violations::{Reason, Violations};
use crate::text::quoted;

/// The language of a user's interface and default labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locale {
    En,
    Ru,
}

impl Locale {
    pub fn parse(field: &str, raw: &str, violations: &mut Violations) -> Option<Self> {
        let parsed = Self::from_name(raw);
        if parsed.is_none() {
            violations.refuse(
                field,
                Reason::NotALanguage,
                format!("{field} {} must be en or ru", quoted(raw.trim())),
            );
        }
        parsed
    }

    /// `en` or `ru`, around spaces.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim() {
            "en" => Some(Self::En),
            "ru" => Some(Self::Ru),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Ru => "ru",
        }
    }

    pub fn from_stored(raw: &str) -> Self {
        if raw == "ru" { Self::Ru } else { Self::En }
    }

    /// The label of the Done button when the source gave none.
    pub fn default_done_label(self) -> &'static str {
        match self {
            Self::En => "Done",
            Self::Ru => "Сделано",
        }
    }

    /// How an expired event's closing reads in the archive.
    pub fn expired_label(self) -> &'static str {
        match self {
            Self::En => "Expired",
            Self::Ru => "Истекло",
        }
    }

    /// How a withdrawn event's end reads in the archive: deleted by its
    /// person (a manual event), or withdrawn by its source.
    pub fn withdrawn_label(self, by_its_person: bool) -> &'static str {
        match (self, by_its_person) {
            (Self::En, true) => "Deleted",
            (Self::En, false) => "Withdrawn",
            (Self::Ru, true) => "Удалено",
            (Self::Ru, false) => "Отозвано",
        }
    }
}

/// Parses a time zone: an IANA name in any letter case (`Europe/Berlin`,
/// `europe/berlin`), or a city's name as the zone names it (`Tokyo`,
/// `new york`, `Buenos Aires`).
pub fn parse_time_zone(field: &str, raw: &str, violations: &mut Violations) -> Option<Tz> {
    let zone = zone_named(raw.trim());
    if zone.is_none() {
        violations.refuse(
            field,
            Reason::NotATimeZone,
            format!("{field} {} is not a time zone: give an IANA name such as Europe/Berlin, or a city such as Tokyo", quoted(raw)),
        );
    }
    zone
}

/// A zone by its name (an old name reads as its current one: Europe/Kiev
/// is saved as Europe/Kyiv) or by its city.
fn zone_named(text: &str) -> Option<Tz> {
    let zone = named_as_written(text)?;
    canonical_zone(zone.name()).parse().ok().or(Some(zone))
}

fn named_as_written(text: &str) -> Option<Tz> {
    if let Ok(zone) = text.parse::<Tz>() {
        return Some(zone);
    }
    if let Some(zone) =
        chrono_tz::TZ_VARIANTS.iter().find(|zone| zone.name().eq_ignore_ascii_case(text))
    {
        return Some(*zone);
    }
    // A city: the last part of a name in one of the areas. Where an old
    // alias shares it (America/Buenos_Aires beside
    // America/Argentina/Buenos_Aires), the longer, current name wins.
    let city = text.replace(' ', "_");
    chrono_tz::TZ_VARIANTS
        .iter()
        .filter(|zone| {
            let name = zone.name();
            let area = name.split('/').next().unwrap_or("");
            ZONE_AREAS.contains(&area)
                && name.rsplit('/').next().is_some_and(|place| place.eq_ignore_ascii_case(&city))
        })
        .max_by_key(|zone| zone.name().matches('/').count())
        .copied()
}

/// Parses a wall-clock time written as `HH:MM` (or `H:MM`, as a person
/// types 7:00 into a text field).
pub fn parse_clock_time(field: &str, raw: &str, violations: &mut Violations) -> Option<NaiveTime> {
    let text = raw.trim();
    let bytes = text.as_bytes();
    let colon = bytes.len().wrapping_sub(3);
    let shaped = matches!(bytes.len(), 4 | 5)
        && bytes[colon] == b':'
        && bytes.iter().enumerate().all(|(index, byte)| index == colon || byte.is_ascii_digit());
    let time = shaped.then(|| NaiveTime::parse_from_str(text, "%H:%M").ok()).flatten();
    if time.is_none() {
        violations.refuse(
            field,
            Reason::NotATimeOfDay,
            format!("{field} {} must be a time of day as HH:MM, such as 22:00", quoted(raw)),
        );
    }
    time
}

/// Formats a wall-clock time as `HH:MM`.
pub fn format_clock_time(time: NaiveTime) -> String {
    time.format("%H:%M").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::violations::check;

    #[test]
    fn quiet_times_must_be_hh_mm() {
        assert_eq!(
            check(|v| parse_clock_time("quiet_start", "22:00", v)).unwrap(),
            NaiveTime::from_hms_opt(22, 0, 0).unwrap()
        );
        assert_eq!(
            check(|v| parse_clock_time("quiet_end", " 7:00 ", v)).unwrap(),
            NaiveTime::from_hms_opt(7, 0, 0).unwrap()
        );
        for bad in ["22", "7:0", ":700", "24:00", "22:60", "22:00:00", "ab:cd", "+7:00"] {
            let error = check(|v| parse_clock_time("quiet_start", bad, v)).unwrap_err();
            assert!(error.contains("must be a time of day as HH:MM"), "{bad}: {error}");
        }
    }

    #[test]
    fn time_zones_are_iana_names_or_their_cities() {
        assert_eq!(
            check(|v| parse_time_zone("tz", "Europe/Berlin", v)).unwrap(),
            chrono_tz::Europe::Berlin
        );
        assert_eq!(
            check(|v| parse_time_zone("tz", " europe/berlin ", v)).unwrap(),
            chrono_tz::Europe::Berlin
        );
        assert_eq!(check(|v| parse_time_zone("tz", "Tokyo", v)).unwrap(), chrono_tz::Asia::Tokyo);
        assert_eq!(
            check(|v| parse_time_zone("tz", "new york", v)).unwrap(),
            chrono_tz::America::New_York
        );
        assert_eq!(
            check(|v| parse_time_zone("tz", "Buenos Aires", v)).unwrap(),
            chrono_tz::America::Argentina::Buenos_Aires
        );
        assert_eq!(
            check(|v| parse_time_zone("tz", "Europe/Kiev", v)).unwrap(),
            chrono_tz::Europe::Kyiv,
            "an old name is saved as the current one"
        );
        assert_eq!(check(|v| parse_time_zone("tz", "Kiev", v)).unwrap(), chrono_tz::Europe::Kyiv);
        assert_eq!(
            check(|v| parse_time_zone("tz", "Calcutta", v)).unwrap(),
            chrono_tz::Asia::Kolkata
        );
        assert_eq!(
            check(|v| parse_time_zone("tz", "US/Eastern", v)).unwrap(),
            chrono_tz::America::New_York
        );
        assert_eq!(check(|v| parse_time_zone("tz", "Oslo", v)).unwrap(), chrono_tz::Europe::Oslo);
        assert!(
            check(|v| parse_time_zone("tz", "Mars/Olympus", v))
                .unwrap_err()
                .contains("is not a time zone")
        );
        assert!(check(|v| parse_time_zone("tz", "Berlin Mitte", v)).is_err());
    }
}
