//! Owns how a due moment reads, in English and Russian: "in 3 days, Mon 14
//! Dec", "через 3 дня, пн 14 дек", "2 days overdue". The web inbox and
//! core's Telegram messages say it the same way.

use chrono::{Datelike, NaiveDate, NaiveTime};

use crate::zone_links::ZONE_LINKS;

/// The languages Hado speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    Ru,
}

impl Lang {
    /// `ru` is Russian; anything else English.
    pub(crate) fn from_locale(locale: &str) -> Self {
        if locale == "ru" { Self::Ru } else { Self::En }
    }
}

const WEEKDAYS: [[&str; 7]; 2] =
    [["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], ["пн", "вт", "ср", "чт", "пт", "сб", "вс"]];
const MONTHS: [[&str; 12]; 2] = [
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
    ["янв", "фев", "мар", "апр", "мая", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"],
];

/// Russian picks one of three forms by the number: 1 день, 2 дня, 5 дней.
fn russian_plural(
    count: i64,
    one: &'static str,
    few: &'static str,
    many: &'static str,
) -> &'static str {
    let (last, last_two) = (count % 10, count % 100);
    if last == 1 && last_two != 11 {
        one
    } else if (2..=4).contains(&last) && !(12..=14).contains(&last_two) {
        few
    } else {
        many
    }
}

/// From this many days ahead, a distance reads in months.
const MONTHS_FROM_DAYS: i64 = 60;

/// How far ahead a day is: "3 days", or "13 months" from two months on,
/// where the count of days says less than the months do.
fn distance(lang: Lang, days: i64) -> String {
    if days < MONTHS_FROM_DAYS {
        return day_count(lang, days);
    }
    let months = (days as f64 / 30.44).round() as i64;
    match lang {
        Lang::Ru => format!("{months} {}", russian_plural(months, "месяц", "месяца", "месяцев")),
        Lang::En => format!("{months} months"),
    }
}

pub(crate) fn day_count(lang: Lang, days: i64) -> String {
    match lang {
        Lang::Ru => format!("{days} {}", russian_plural(days, "день", "дня", "дней")),
        Lang::En if days == 1 => "1 day".to_owned(),
        Lang::En => format!("{days} days"),
    }
}

/// The continents and oceans of the IANA time zone names people live in;
/// the other names (`US/Eastern`, `Etc/GMT+5`, `Japan`) are old aliases. Core
/// finds a zone by its city among these; Settings lists these (and UTC).
pub const ZONE_AREAS: [&str; 10] = [
    "Africa",
    "America",
    "Antarctica",
    "Arctic",
    "Asia",
    "Atlantic",
    "Australia",
    "Europe",
    "Indian",
    "Pacific",
];

/// The current name of a zone written under an old one (`Europe/Kiev` is
/// `Europe/Kyiv`), or the name itself.
pub fn canonical_zone(name: &str) -> &str {
    match ZONE_LINKS.binary_search_by(|(link, _)| (*link).cmp(name)) {
        Ok(found) => ZONE_LINKS[found].1,
        Err(_) => name,
    }
}

/// Whether a zone name is one to offer a person: UTC, or a current name in
/// one of the areas people live in, never an old alias.
pub fn is_current_zone(name: &str) -> bool {
    name == "UTC"
        || (ZONE_AREAS.contains(&name.split('/').next().unwrap_or(""))
            && ZONE_LINKS.binary_search_by(|(link, _)| (*link).cmp(name)).is_err())
}

/// A day as `Mon 14 Dec`, with its year when that is not today's year
/// (`Tue 4 Jan 2028`), so that two days a year apart never read the same.
pub(crate) fn short_date(lang: Lang, date: NaiveDate, today: NaiveDate) -> String {
    let index = lang as usize;
    let weekday = WEEKDAYS[index][date.weekday().num_days_from_monday() as usize];
    let day = format!("{weekday} {} {}", date.day(), MONTHS[index][date.month0() as usize]);
    if date.year() == today.year() { day } else { format!("{day} {}", date.year()) }
}

/// The due moment relative to the person's today, in words: how far, then
/// the day, then the time, always in that order.
pub fn due_in_words(
    lang: Lang,
    today: NaiveDate,
    due_date: NaiveDate,
    due_time: Option<NaiveTime>,
    overdue: bool,
) -> String {
    let days = (due_date - today).num_days();
    let at = due_time.map(|time| time.format(" %H:%M").to_string()).unwrap_or_default();
    let ru = lang == Lang::Ru;
    match days {
        0 if overdue => {
            if ru {
                format!("просрочено, срок был сегодня{at}")
            } else {
                format!("overdue since today{at}")
            }
        }
        0 => {
            if ru {
                format!("сегодня{at}")
            } else {
                format!("today{at}")
            }
        }
        1 => {
            if ru {
                format!("завтра, {}{at}", short_date(lang, due_date, today))
            } else {
                format!("tomorrow, {}{at}", short_date(lang, due_date, today))
            }
        }
        days if days > 1 => {
            if ru {
                format!("через {}, {}{at}", distance(lang, days), short_date(lang, due_date, today))
            } else {
                format!("in {}, {}{at}", distance(lang, days), short_date(lang, due_date, today))
            }
        }
        days => {
            if ru {
                format!("просрочено на {}", day_count(lang, -days))
            } else {
                format!("{} overdue", day_count(lang, -days))
            }
        }
    }
}

/// A day as a date field shows it: "14 Mar 2027" in English, "14.03.2027"
/// in Russian. The field reads either back, and ISO dates too.
pub fn field_date(lang: Lang, date: NaiveDate) -> String {
    match lang {
        Lang::En => format!("{} {} {}", date.day(), MONTHS[0][date.month0() as usize], date.year()),
        Lang::Ru => date.format("%d.%m.%Y").to_string(),
    }
}

/// A moment that has been or will be, as a person says it: "today, 14:05",
/// "yesterday, 14:05", "tomorrow, 09:00", "3 Dec, 14:05" (with the year when
/// not this year's); in Russian "сегодня в 14:05", "вчера в 14:05",
/// "3 дек в 14:05".
pub fn moment(lang: Lang, today: NaiveDate, date: NaiveDate, time: NaiveTime) -> String {
    let clock = time.format("%H:%M");
    let ru = lang == Lang::Ru;
    let day = match (date - today).num_days() {
        0 => (if ru { "сегодня" } else { "today" }).to_owned(),
        -1 => (if ru { "вчера" } else { "yesterday" }).to_owned(),
        1 => (if ru { "завтра" } else { "tomorrow" }).to_owned(),
        _ => {
            let month = MONTHS[lang as usize][date.month0() as usize];
            let day = format!("{} {month}", date.day());
            if date.year() == today.year() { day } else { format!("{day} {}", date.year()) }
        }
    };
    if ru { format!("{day} в {clock}") } else { format!("{day}, {clock}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_read_as_people_say_them() {
        let today = NaiveDate::from_ymd_opt(2026, 12, 3).unwrap();
        let at = NaiveTime::from_hms_opt(14, 5, 0).unwrap();
        let day = |offset: i64| today + chrono::Duration::days(offset);
        assert_eq!(moment(Lang::En, today, today, at), "today, 14:05");
        assert_eq!(moment(Lang::En, today, day(-1), at), "yesterday, 14:05");
        assert_eq!(moment(Lang::En, today, day(1), at), "tomorrow, 14:05");
        assert_eq!(moment(Lang::En, today, day(-2), at), "1 Dec, 14:05");
        assert_eq!(moment(Lang::En, today, day(-400), at), "29 Oct 2025, 14:05");
        assert_eq!(moment(Lang::Ru, today, day(-1), at), "вчера в 14:05");
        assert_eq!(moment(Lang::Ru, today, day(5), at), "8 дек в 14:05");
    }

    fn date(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    #[test]
    fn due_moments_read_naturally_in_both_languages() {
        let today = date("2026-12-11");
        let at = |hour| NaiveTime::from_hms_opt(hour, 0, 0);
        assert_eq!(
            due_in_words(Lang::En, today, date("2026-12-14"), None, false),
            "in 3 days, Mon 14 Dec"
        );
        assert_eq!(
            due_in_words(Lang::Ru, today, date("2026-12-14"), None, false),
            "через 3 дня, пн 14 дек"
        );
        assert_eq!(
            due_in_words(Lang::En, today, date("2026-12-12"), at(9), false),
            "tomorrow, Sat 12 Dec 09:00"
        );
        assert_eq!(
            due_in_words(Lang::Ru, today, date("2026-12-12"), at(9), false),
            "завтра, сб 12 дек 09:00"
        );
        assert_eq!(
            due_in_words(Lang::En, today, date("2026-12-14"), at(9), false),
            "in 3 days, Mon 14 Dec 09:00"
        );
        assert_eq!(due_in_words(Lang::En, today, date("2026-12-11"), at(15), false), "today 15:00");
        assert_eq!(
            due_in_words(Lang::En, today, date("2026-12-11"), at(9), true),
            "overdue since today 09:00"
        );
        assert_eq!(due_in_words(Lang::En, today, date("2026-12-09"), None, true), "2 days overdue");
        assert_eq!(
            due_in_words(Lang::Ru, today, date("2026-12-10"), None, true),
            "просрочено на 1 день"
        );
        assert_eq!(
            due_in_words(Lang::Ru, today, date("2026-12-16"), None, false),
            "через 5 дней, ср 16 дек"
        );
        assert_eq!(
            due_in_words(Lang::Ru, today, date("2026-12-01"), None, true),
            "просрочено на 10 дней"
        );
        assert_eq!(
            due_in_words(Lang::Ru, today, date("2026-11-20"), None, true),
            "просрочено на 21 день"
        );
    }

    #[test]
    fn a_day_in_another_year_says_its_year() {
        let today = date("2026-12-11");
        assert_eq!(
            due_in_words(Lang::En, today, date("2027-01-04"), None, false),
            "in 24 days, Mon 4 Jan 2027"
        );
        assert_eq!(
            due_in_words(Lang::En, today, date("2028-01-04"), None, false),
            "in 13 months, Tue 4 Jan 2028"
        );
        assert_eq!(
            due_in_words(Lang::Ru, today, date("2028-01-04"), None, false),
            "через 13 месяцев, вт 4 янв 2028"
        );
        assert_eq!(
            due_in_words(Lang::En, today, date("2027-02-08"), None, false),
            "in 59 days, Mon 8 Feb 2027",
            "under two months: days"
        );
        assert_eq!(
            due_in_words(Lang::En, today, date("2027-02-09"), None, false),
            "in 2 months, Tue 9 Feb 2027"
        );
        assert_eq!(
            due_in_words(Lang::Ru, today, date("2027-02-09"), None, false),
            "через 2 месяца, вт 9 фев 2027"
        );
        assert_eq!(
            due_in_words(Lang::Ru, today, date("2027-12-11"), None, false),
            "через 12 месяцев, сб 11 дек 2027"
        );
        assert_eq!(
            due_in_words(Lang::En, today, date("2026-12-31"), None, false),
            "in 20 days, Thu 31 Dec"
        );
    }
}
