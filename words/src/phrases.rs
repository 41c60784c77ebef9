//! Owns how a due moment, a day and a moment read in a person's words:
//! each method of `Words` here is one of `wording`'s functions in the
//! words' language.

use chrono::{NaiveDate, NaiveTime};

use crate::Words;
use crate::wording::{Lang, day_count, due_in_words, field_date, moment, short_date};

impl Words {
    fn language(&self) -> Lang {
        Lang::from_locale(self.lang)
    }

    /// The due moment relative to the person's today, in words.
    pub fn due_in_words(
        &self,
        today: NaiveDate,
        due_date: NaiveDate,
        due_time: Option<NaiveTime>,
        overdue: bool,
    ) -> String {
        due_in_words(self.language(), today, due_date, due_time, overdue)
    }

    /// A day (with its year when not this year's) and a time, as the person
    /// reads them: "Mon 14 Dec 09:00".
    pub fn day_and_time(
        &self,
        today: NaiveDate,
        date: NaiveDate,
        time: Option<NaiveTime>,
    ) -> String {
        let at = time.map(|time| time.format(" %H:%M").to_string()).unwrap_or_default();
        format!("{}{at}", short_date(self.language(), date, today))
    }

    /// The inbox's one line about what is overdue: "8 overdue — oldest 12
    /// days", "Просрочено: 8, самое давнее — 12 дней".
    /// The count comes as the inbox shows it ("8", "1000+").
    pub fn overdue_line(&self, count: &str, oldest_days: i64) -> String {
        self.overdue_summary
            .replace("{count}", count)
            .replace("{age}", &day_count(self.language(), oldest_days.max(1)))
    }

    /// A day as a date field shows it: "14 Mar 2027", "14.03.2027".
    pub fn field_date(&self, date: NaiveDate) -> String {
        field_date(self.language(), date)
    }

    /// A moment that has been or will be, in words: "yesterday, 14:05",
    /// "3 Dec, 14:05", "вчера в 14:05".
    pub fn moment(&self, today: NaiveDate, date: NaiveDate, time: NaiveTime) -> String {
        moment(self.language(), today, date, time)
    }

    /// The due moment of a closed event: the day (with its year when not
    /// this year's) and the time, after the word for "due".
    pub fn due_on(
        &self,
        today: NaiveDate,
        due_date: NaiveDate,
        due_time: Option<NaiveTime>,
    ) -> String {
        format!("{} {}", self.due, self.day_and_time(today, due_date, due_time))
    }
}
