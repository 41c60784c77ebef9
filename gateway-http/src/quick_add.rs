//! Owns reading one typed line into an event's fields, in English and
//! Russian: "Passport renewal by 14 Mar, start 1 Mar", "Налоговая до 15
//! апреля", "Call mum tomorrow at 18:00", "Отчёт через 3 дня". It reads
//! absolute dates (`14 Mar`, `March 14`, `15 апреля 2027`, `2027-03-14`,
//! `14.03`), weekdays, today / tomorrow / сегодня / завтра / послезавтра,
//! and "in 3 days" / "через 2 недели", each with an optional time of day;
//! a date after "start" / "from" / "с" / "начать" is when preparation
//! starts, any other the due day. Whatever it cannot read stays in the
//! title as typed. The fields it fills are suggestions for the form, which
//! core validates as it does any other.
//!
//! A small grammar rather than a crate: the date-parsing crates read
//! English only, and this one has to read the same line in both languages.

use chrono::{Datelike, Days, Months, NaiveDate, NaiveTime, Weekday};

/// What a line says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct QuickAdd {
    /// The line without the dates it read (and their little words).
    pub(crate) title: String,
    pub(crate) due_date: Option<NaiveDate>,
    pub(crate) due_time: Option<NaiveTime>,
    pub(crate) fire_date: Option<NaiveDate>,
}

const MONTHS: [&[&str]; 12] = [
    &["jan", "january", "янв", "января", "январь"],
    &["feb", "february", "фев", "февраля", "февраль"],
    &["mar", "march", "мар", "марта", "март"],
    &["apr", "april", "апр", "апреля", "апрель"],
    &["may", "мая", "май"],
    &["jun", "june", "июн", "июня", "июнь"],
    &["jul", "july", "июл", "июля", "июль"],
    &["aug", "august", "авг", "августа", "август"],
    &["sep", "sept", "september", "сен", "сент", "сентября", "сентябрь"],
    &["oct", "october", "окт", "октября", "октябрь"],
    &["nov", "november", "ноя", "нояб", "ноября", "ноябрь"],
    &["dec", "december", "дек", "декабря", "декабрь"],
];

const WEEKDAYS: [(Weekday, &[&str]); 7] = [
    (Weekday::Mon, &["monday", "понедельник"]),
    (Weekday::Tue, &["tuesday", "вторник"]),
    (Weekday::Wed, &["wednesday", "среда", "среду"]),
    (Weekday::Thu, &["thursday", "четверг"]),
    (Weekday::Fri, &["friday", "пятница", "пятницу"]),
    (Weekday::Sat, &["saturday", "суббота", "субботу"]),
    (Weekday::Sun, &["sunday", "воскресенье"]),
];

/// Words before a date that make it the due day.
const DUE_WORDS: [&str; 11] =
    ["by", "due", "on", "until", "till", "before", "deadline", "до", "к", "ко", "срок"];
/// Words before a date that make it the day preparation starts.
const FIRE_WORDS: [&str; 9] =
    ["start", "starting", "from", "begin", "prepare", "с", "со", "начать", "начиная"];
/// Words that may stand between such a word and its date ("start on 1
/// Mar", "готовиться с 1 марта", "в пятницу").
const JOINING_WORDS: [&str; 6] = ["on", "at", "from", "в", "во", "с"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Due,
    Fire,
}

/// One date the line names: which words it spans, and what it says.
#[derive(Clone, Copy, Debug)]
struct Found {
    start: usize,
    end: usize,
    role: Option<Role>,
    date: NaiveDate,
    time: Option<NaiveTime>,
}

/// A word as the grammar compares it: lower case, without the punctuation
/// that may follow it in a sentence.
fn bare(word: &str) -> String {
    word.trim_end_matches([',', ';', '.', '!', '?', ')']).to_lowercase()
}

fn month_named(word: &str) -> Option<u32> {
    let word = word.trim_end_matches('.');
    MONTHS.iter().position(|names| names.contains(&word)).map(|index| index as u32 + 1)
}

fn day_number(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_alphabetic() || c == '-');
    let suffix = &word[digits.len()..];
    let suffix_ok =
        ["", "st", "nd", "rd", "th", "-го", "-е", "го"].contains(&suffix.trim_start_matches('-'));
    let day: u32 = digits.parse().ok()?;
    ((1..=31).contains(&day) && suffix_ok && !digits.is_empty()).then_some(day)
}

fn year_number(word: &str) -> Option<i32> {
    let word = word.trim_end_matches(['г', '.']);
    (word.len() == 4)
        .then(|| word.parse().ok())
        .flatten()
        .filter(|year| (2000..2200).contains(year))
}

/// The day `month`/`day` next comes on or after `today` (this year's or
/// next), or in `year` when given.
fn next_date(today: NaiveDate, year: Option<i32>, month: u32, day: u32) -> Option<NaiveDate> {
    if let Some(year) = year {
        return NaiveDate::from_ymd_opt(year, month, day);
    }
    let this_year = NaiveDate::from_ymd_opt(today.year(), month, day);
    match this_year {
        Some(date) if date >= today => Some(date),
        _ => NaiveDate::from_ymd_opt(today.year() + 1, month, day),
    }
}

/// A time of day: `15:00`, `9:30`, `3pm`, `11am`.
fn clock(word: &str) -> Option<NaiveTime> {
    if let Some((hours, minutes)) = word.split_once(':') {
        return NaiveTime::from_hms_opt(hours.parse().ok()?, minutes.parse().ok()?, 0)
            .filter(|_| minutes.len() == 2);
    }
    let (hours, afternoon) = if let Some(hours) = word.strip_suffix("pm") {
        (hours, true)
    } else {
        (word.strip_suffix("am")?, false)
    };
    let hours: u32 = hours.parse().ok().filter(|hours| (1..=12).contains(hours))?;
    NaiveTime::from_hms_opt(hours % 12 + if afternoon { 12 } else { 0 }, 0, 0)
}

/// How many days, weeks or months a unit word counts.
fn unit(word: &str) -> Option<(u32, char)> {
    match word {
        "day" | "days" | "день" | "дня" | "дней" => Some((1, 'd')),
        "week" | "weeks" | "неделю" | "недели" | "недель" => Some((7, 'd')),
        "month" | "months" | "месяц" | "месяца" | "месяцев" => Some((1, 'm')),
        _ => None,
    }
}

fn ahead(today: NaiveDate, count: u32, (size, kind): (u32, char)) -> Option<NaiveDate> {
    if kind == 'm' {
        today.checked_add_months(Months::new(count * size))
    } else {
        today.checked_add_days(Days::new(u64::from(count * size)))
    }
}

/// A date that starts at word `at`: the date and how many words it takes.
fn date_at(words: &[String], at: usize, today: NaiveDate) -> Option<(NaiveDate, usize)> {
    let word = |offset: usize| words.get(at + offset).map(String::as_str);
    let first = word(0)?;
    // 2027-03-14, in the years Hado takes: chrono reads years 0 and -1
    // too, which no event is due in.
    if let Ok(date) = NaiveDate::parse_from_str(first, "%Y-%m-%d") {
        return year_number(&date.year().to_string()).map(|_| (date, 1));
    }
    // 14.03 and 14.03.2027; but a number with a unit after it is a count
    // ("in 3.5 days"), which is not a date however it is written.
    let parts: Vec<&str> = first.split('.').filter(|part| !part.is_empty()).collect();
    let counted = word(1).is_some_and(|next| unit(next).is_some());
    if (2..=3).contains(&parts.len())
        && !counted
        && parts.iter().all(|part| part.parse::<u32>().is_ok())
    {
        let (day, month) = (parts[0].parse().ok()?, parts[1].parse().ok()?);
        let year = parts.get(2).and_then(|year| year_number(year));
        if parts.len() == 3 && year.is_none() {
            return None;
        }
        return next_date(today, year, month, day).map(|date| (date, 1));
    }
    // 14 Mar [2027], 15 апреля [2027 г.]
    if let (Some(day), Some(month)) = (day_number(first), word(1).and_then(month_named)) {
        let year = word(2).and_then(year_number);
        let date = next_date(today, year, month, day)?;
        return Some((date, 2 + usize::from(year.is_some())));
    }
    // Mar 14 [2027], March 14th
    if let (Some(month), Some(day)) = (month_named(first), word(1).and_then(day_number)) {
        let year = word(2).and_then(year_number);
        let date = next_date(today, year, month, day)?;
        return Some((date, 2 + usize::from(year.is_some())));
    }
    let relative = match first {
        "today" | "сегодня" => Some(0),
        "tomorrow" | "завтра" => Some(1),
        "послезавтра" => Some(2),
        _ => None,
    };
    if let Some(days) = relative {
        return Some((today + Days::new(days), 1));
    }
    if first == "day" && word(1) == Some("after") && word(2) == Some("tomorrow") {
        return Some((today + Days::new(2), 3));
    }
    // in 3 days, in a week; через 3 дня, через неделю
    if first == "in" || first == "через" {
        let count = word(1).and_then(|count| match count {
            "a" | "an" | "one" => Some(1),
            count => count.parse::<u32>().ok().filter(|count| (1..=999).contains(count)),
        });
        if let Some(count) = count
            && let Some(size) = word(2).and_then(unit)
        {
            return ahead(today, count, size).map(|date| (date, 3));
        }
        if first == "через"
            && let Some(size) = word(1).and_then(unit)
        {
            return ahead(today, 1, size).map(|date| (date, 2));
        }
    }
    // Friday, next friday, пятницу: the next such day after today.
    let (skip, name) = if first == "next" { (1, word(1)?) } else { (0, first) };
    let (weekday, _) = WEEKDAYS.iter().find(|(_, names)| names.contains(&name))?;
    let days = (7 + weekday.num_days_from_monday() - today.weekday().num_days_from_monday()) % 7;
    let days = if days == 0 { 7 } else { days };
    Some((today + Days::new(u64::from(days)), 1 + skip))
}

/// A time of day right after a date: `15:00`, `at 15:00`, `в 15:00`.
fn time_at(words: &[String], at: usize) -> Option<(NaiveTime, usize)> {
    let first = words.get(at)?;
    if let Some(time) = clock(first) {
        return Some((time, 1));
    }
    if ["at", "в", "во"].contains(&first.as_str()) {
        return words.get(at + 1).and_then(|word| clock(word)).map(|time| (time, 2));
    }
    None
}

/// Reads `line`, with `today` the person's day.
pub(crate) fn read(line: &str, today: NaiveDate) -> QuickAdd {
    let typed: Vec<&str> = line.split_whitespace().collect();
    let words: Vec<String> = typed.iter().map(|word| bare(word)).collect();
    let mut found: Vec<Found> = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let Some((date, length)) = date_at(&words, at, today) else {
            at += 1;
            continue;
        };
        let mut end = at + length;
        let time = time_at(&words, end).map(|(time, length)| {
            end += length;
            time
        });
        // The words before it that say what it is: "by", "start on", "в".
        let mut start = at;
        while start > 0 && JOINING_WORDS.contains(&words[start - 1].as_str()) {
            start -= 1;
        }
        let role = match start.checked_sub(1).map(|before| words[before].as_str()) {
            Some(word) if DUE_WORDS.contains(&word) => Some(Role::Due),
            Some(word) if FIRE_WORDS.contains(&word) => Some(Role::Fire),
            _ => None,
        };
        if role.is_some() {
            start -= 1;
        } else if start < at && ["с", "со", "from"].contains(&words[at - 1].as_str()) {
            // "с 1 марта" is itself a start.
            found.push(Found { start, end, role: Some(Role::Fire), date, time });
            at = end;
            continue;
        }
        found.push(Found { start, end, role, date, time });
        at = end;
    }
    let due = found
        .iter()
        .find(|found| found.role == Some(Role::Due))
        .or_else(|| found.iter().rev().find(|found| found.role.is_none()))
        .copied();
    let fire = found.iter().find(|found| found.role == Some(Role::Fire)).copied();
    let used = |index: usize| {
        [due, fire].iter().flatten().any(|found| (found.start..found.end).contains(&index))
    };
    let kept: Vec<&str> = typed
        .iter()
        .enumerate()
        .filter(|(index, _)| !used(*index))
        .map(|(_, word)| *word)
        .collect();
    QuickAdd {
        title: tidy(&kept.join(" ")),
        due_date: due.map(|found| found.date),
        due_time: due.and_then(|found| found.time),
        fire_date: fire.map(|found| found.date),
    }
}

/// A date field as a person may type it, in either language: `2027-03-14`,
/// `14 Mar 2027`, `14.03.2027`, `March 14`, `tomorrow`, `через 3 дня`. The
/// whole text must be the date.
pub(crate) fn read_date(text: &str, today: NaiveDate) -> Option<NaiveDate> {
    let words: Vec<String> = text.split_whitespace().map(bare).collect();
    date_at(&words, 0, today).filter(|(_, length)| *length == words.len()).map(|(date, _)| date)
}

/// A time field as a person may type it: `15:00`, `9:30`, `3pm`.
pub(crate) fn read_time(text: &str) -> Option<NaiveTime> {
    clock(&text.trim().to_lowercase().replace(' ', ""))
}

/// The title once its dates are out: no comma or dash left dangling at its
/// end or before another comma.
fn tidy(title: &str) -> String {
    let mut title = title.replace(" ,", ",");
    while title.contains(",,") {
        title = title.replace(",,", ",");
    }
    title.trim().trim_end_matches([',', ';', '-', '—', ':']).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wednesday, 2 December 2026.
    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 12, 2).unwrap()
    }

    fn day(text: &str) -> Option<NaiveDate> {
        Some(NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap())
    }

    fn read_line(line: &str) -> (String, Option<NaiveDate>, Option<NaiveTime>, Option<NaiveDate>) {
        let read = read(line, today());
        (read.title, read.due_date, read.due_time, read.fire_date)
    }

    fn at(text: &str) -> Option<NaiveTime> {
        Some(NaiveTime::parse_from_str(text, "%H:%M").unwrap())
    }

    #[test]
    fn the_issues_examples() {
        assert_eq!(
            read_line("Passport renewal by 14 Mar, start 1 Mar"),
            ("Passport renewal".into(), day("2027-03-14"), None, day("2027-03-01"))
        );
        assert_eq!(
            read_line("Налоговая до 15 апреля"),
            ("Налоговая".into(), day("2027-04-15"), None, None)
        );
    }

    #[test]
    fn absolute_dates_in_both_languages() {
        let due = |line: &str| read(line, today()).due_date;
        assert_eq!(due("Visa March 14"), day("2027-03-14"));
        assert_eq!(due("Visa 14th March 2028"), day("2028-03-14"));
        assert_eq!(due("Visa Dec 5"), day("2026-12-05"), "later this year");
        assert_eq!(due("Visa 1 Dec"), day("2027-12-01"), "already past: next year");
        assert_eq!(due("Visa 2027-01-09"), day("2027-01-09"));
        assert_eq!(due("Визa 14.03"), day("2027-03-14"));
        assert_eq!(due("Виза 14.03.2027"), day("2027-03-14"));
        assert_eq!(due("Виза 3 янв."), day("2027-01-03"));
        assert_eq!(due("Отчёт к 20 декабря 2026 г."), day("2026-12-20"));
        assert_eq!(due("Dinner on 31 Feb"), None, "not a real date");
        assert_eq!(read("Dinner on 31 Feb", today()).title, "Dinner on 31 Feb", "left as typed");
    }

    #[test]
    fn relative_days_and_weekdays() {
        let due = |line: &str| read(line, today()).due_date;
        assert_eq!(due("Call mum today"), day("2026-12-02"));
        assert_eq!(due("Call mum tomorrow"), day("2026-12-03"));
        assert_eq!(due("Позвонить маме завтра"), day("2026-12-03"));
        assert_eq!(due("Позвонить маме послезавтра"), day("2026-12-04"));
        assert_eq!(due("Call mum the day after tomorrow"), day("2026-12-04"));
        assert_eq!(due("Report in 3 days"), day("2026-12-05"));
        assert_eq!(due("Report in a week"), day("2026-12-09"));
        assert_eq!(due("Report in 2 months"), day("2027-02-02"));
        assert_eq!(due("Отчёт через 3 дня"), day("2026-12-05"));
        assert_eq!(due("Отчёт через 5 дней"), day("2026-12-07"));
        assert_eq!(due("Отчёт через неделю"), day("2026-12-09"));
        assert_eq!(due("Отчёт через 2 недели"), day("2026-12-16"));
        assert_eq!(due("Gym friday"), day("2026-12-04"));
        assert_eq!(due("Gym next Monday"), day("2026-12-07"));
        assert_eq!(due("Gym Wednesday"), day("2026-12-09"), "today's weekday is next week's");
        assert_eq!(due("Спортзал в пятницу"), day("2026-12-04"));
        assert_eq!(read("Спортзал в пятницу", today()).title, "Спортзал");
    }

    #[test]
    fn times_of_day() {
        assert_eq!(
            read_line("Call mum tomorrow at 18:00"),
            ("Call mum".into(), day("2026-12-03"), at("18:00"), None)
        );
        assert_eq!(read("Dentist Friday 3pm", today()).due_time, at("15:00"));
        assert_eq!(read("Врач завтра в 9:30", today()).due_time, at("09:30"));
        assert_eq!(read("Врач завтра в 9:30", today()).title, "Врач");
        assert_eq!(read("Flight 14 Mar 25:00", today()).due_time, None);
    }

    #[test]
    fn preparation_starts() {
        assert_eq!(
            read_line("Taxes due 15 Apr, prepare from 1 Mar"),
            ("Taxes".into(), day("2027-04-15"), None, day("2027-03-01"))
        );
        assert_eq!(
            read_line("Налоговая до 15 апреля, начать с 1 марта"),
            ("Налоговая".into(), day("2027-04-15"), None, day("2027-03-01"))
        );
        assert_eq!(
            read_line("Налоговая с 1 марта до 15 апреля"),
            ("Налоговая".into(), day("2027-04-15"), None, day("2027-03-01"))
        );
    }

    #[test]
    fn date_and_time_fields_as_people_type_them() {
        for typed in ["2027-03-14", "14 Mar 2027", "14.03.2027", "March 14", "14 марта", " 14 Mar "]
        {
            assert_eq!(read_date(typed, today()), day("2027-03-14"), "{typed}");
        }
        assert_eq!(read_date("tomorrow", today()), day("2026-12-03"));
        assert_eq!(read_date("2026-12-32", today()), None);
        assert_eq!(read_date("14 Mar and more", today()), None, "the whole field is the date");
        assert_eq!(read_date("", today()), None);
        assert_eq!(read_time("15:00"), at("15:00"));
        assert_eq!(read_time("9:30"), at("09:30"));
        assert_eq!(read_time("3 PM"), at("15:00"));
        assert_eq!(read_time("24:00"), None);
        assert_eq!(read_time("noon"), None);
    }

    #[test]
    fn a_fraction_of_days_is_not_read_as_a_date() {
        for line in [
            "Report in 3.5 days",
            "Report in 1.5 weeks",
            "Отчёт через 3.5 дня",
            "Отчёт через 1,5 недели",
            "Отчёт через 2.5 месяца",
        ] {
            assert_eq!(read_line(line), (line.to_owned(), None, None, None), "left as typed");
        }
        assert_eq!(read_date("3.5 days", today()), None);
        assert_eq!(read_date("in 3.5 days", today()), None);
        // A whole count still reads, and so does a date with dots.
        assert_eq!(read("Report in 3 days", today()).due_date, day("2026-12-05"));
        assert_eq!(read("Report 3.5", today()).due_date, day("2027-05-03"));
    }

    #[test]
    fn years_outside_hados_are_not_dates() {
        for typed in ["0000-01-01", "-0001-01-01", "1999-12-31", "2200-01-01", "1.1.0000"] {
            assert_eq!(read_date(typed, today()), None, "{typed}");
            let line = format!("Visa {typed}");
            assert_eq!(read_line(&line), (line.clone(), None, None, None), "{typed}");
        }
        assert_eq!(read_date("2199-12-31", today()), day("2199-12-31"));
    }

    #[test]
    fn what_it_cannot_read_stays_in_the_title_untouched() {
        assert_eq!(read_line("Buy milk"), ("Buy milk".into(), None, None, None));
        assert_eq!(
            read_line("Read chapter 3 of Dune"),
            ("Read chapter 3 of Dune".into(), None, None, None)
        );
        assert_eq!(read("Plan the May Day party", today()).due_date, None);
        assert_eq!(read_line(""), (String::new(), None, None, None));
        // With two unmarked dates the last is the due day; the other stays.
        assert_eq!(
            read_line("Move the 12 Jan meeting to 14 Jan"),
            ("Move the 12 Jan meeting to".into(), day("2027-01-14"), None, None)
        );
    }
}
