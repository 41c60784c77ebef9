//! Owns every word of the web inbox in its two languages, and how a due
//! moment reads in each ("in 3 days, Mon 14 Dec", "через 3 дня, пн 14 дек").

use chrono::{Datelike, NaiveDate, NaiveTime};

/// The interface's words in one language.
pub struct Words {
    pub lang: &'static str,
    pub inbox: &'static str,
    pub add: &'static str,
    pub archive: &'static str,
    pub settings: &'static str,
    pub today: &'static str,
    pub overdue: &'static str,
    pub preparing: &'static str,
    pub scheduled: &'static str,
    pub nothing_due: &'static str,
    pub show_all_scheduled: &'static str,
    pub remember: &'static str,
    pub edit: &'static str,
    pub delete: &'static str,
    pub open_link: &'static str,
    pub from_source: &'static str,
    pub quiet_until: &'static str,
    pub title: &'static str,
    pub subtitle: &'static str,
    pub due_date: &'static str,
    pub due_time: &'static str,
    pub due_time_hint: &'static str,
    pub fire_date: &'static str,
    pub fire_date_hint: &'static str,
    pub after_due: &'static str,
    pub keep: &'static str,
    pub expire: &'static str,
    pub done_label: &'static str,
    pub deep_link: &'static str,
    pub save: &'static str,
    pub cancel: &'static str,
    pub new_event: &'static str,
    pub edit_event: &'static str,
    pub archive_empty: &'static str,
    pub time_zone: &'static str,
    pub time_zone_hint: &'static str,
    pub quiet_hours: &'static str,
    pub quiet_from: &'static str,
    pub quiet_to: &'static str,
    pub language: &'static str,
    pub agent: &'static str,
    pub agent_intro: &'static str,
    pub agent_none: &'static str,
    pub agent_issued_on: &'static str,
    pub agent_last_used: &'static str,
    pub agent_issue: &'static str,
    pub agent_reissue: &'static str,
    pub agent_revoke: &'static str,
    pub agent_shown_once: &'static str,
    pub copy: &'static str,
    pub copied: &'static str,
    pub saved: &'static str,
    pub confirm_done: &'static str,
    pub confirm_remember: &'static str,
    pub link_done: &'static str,
    pub link_remembered: &'static str,
    pub link_already_closed: &'static str,
    pub link_expires: &'static str,
    pub signed_out: &'static str,
    pub core_down: &'static str,
    pub back_to_inbox: &'static str,
    pub delete_confirm: &'static str,
    pub calendar: &'static str,
    pub calendar_intro: &'static str,
    pub calendar_none: &'static str,
    pub calendar_issued_on: &'static str,
    pub calendar_issue: &'static str,
    pub calendar_reissue: &'static str,
    pub calendar_revoke: &'static str,
    pub calendar_shown_once: &'static str,
    pub reminders: &'static str,
    pub reminders_intro: &'static str,
    pub no_channels: &'static str,
    pub webhook_url: &'static str,
    pub add_webhook: &'static str,
    pub webhook_secret_once: &'static str,
    pub channel_on: &'static str,
    pub channel_off: &'static str,
    pub send_test: &'static str,
    pub turn_off: &'static str,
    pub turn_on: &'static str,
    pub remove: &'static str,
    pub test_queued: &'static str,
    pub details: &'static str,
    pub delivery_log: &'static str,
    pub no_deliveries: &'static str,
    weekdays: [&'static str; 7],
    months: [&'static str; 12],
}

pub const EN: Words = Words {
    lang: "en",
    inbox: "Inbox",
    add: "Add",
    archive: "Archive",
    settings: "Settings",
    today: "Today",
    overdue: "Overdue",
    preparing: "Preparing",
    scheduled: "Scheduled",
    nothing_due: "Nothing needs you right now.",
    show_all_scheduled: "Show every scheduled event",
    remember: "Remember",
    edit: "Edit",
    delete: "Delete",
    open_link: "Open",
    from_source: "from",
    quiet_until: "quiet until",
    title: "Title",
    subtitle: "Details",
    due_date: "Due date",
    due_time: "Time",
    due_time_hint: "optional; leave empty for the whole day",
    fire_date: "Start preparing on",
    fire_date_hint: "optional; 30 days before by default",
    after_due: "After the due date",
    keep: "keep it as overdue",
    expire: "let it expire",
    done_label: "Done button label",
    deep_link: "Link",
    save: "Save",
    cancel: "Cancel",
    new_event: "New event",
    edit_event: "Edit event",
    archive_empty: "Nothing closed yet.",
    time_zone: "Time zone",
    time_zone_hint: "type to search",
    quiet_hours: "Quiet hours",
    quiet_from: "from",
    quiet_to: "to",
    language: "Language",
    agent: "AI agent",
    agent_intro: "An agent (Claude Code, claude.ai, any MCP client) can work with this inbox as you. It connects with this token.",
    agent_none: "No agent token yet.",
    agent_issued_on: "Issued",
    agent_last_used: "last used",
    agent_issue: "Create a token",
    agent_reissue: "Create a new token (the old one stops)",
    agent_revoke: "Revoke",
    agent_shown_once: "Shown this once. Connect Claude Code with:",
    copy: "Copy",
    copied: "Copied",
    saved: "Saved.",
    confirm_done: "Mark as done?",
    confirm_remember: "Remember it? Reminders stay quiet until the next checkpoint.",
    link_done: "Marked as done.",
    link_remembered: "Got it: quiet until the next checkpoint.",
    link_already_closed: "This event is already closed.",
    link_expires: "This link works until",
    signed_out: "You are not signed in. Open Hado through its sign-in page.",
    core_down: "Hado's core cannot be reached right now. Try again in a moment.",
    back_to_inbox: "Back to the inbox",
    delete_confirm: "Delete this event?",
    calendar: "Calendar",
    calendar_intro: "A secret address your calendar app can subscribe to: your open events, with an alarm on each fire day.",
    calendar_none: "No calendar address yet.",
    calendar_issued_on: "Made",
    calendar_issue: "Make a calendar address",
    calendar_reissue: "Make a new address (the old one stops)",
    calendar_revoke: "Turn off",
    calendar_shown_once: "Shown this once. Subscribe to:",
    reminders: "Reminders",
    reminders_intro: "Reminders go to these webhooks at each checkpoint, outside your quiet hours. Each delivery is signed (Standard Webhooks).",
    no_channels: "No webhooks yet.",
    webhook_url: "Webhook URL",
    add_webhook: "Add webhook",
    webhook_secret_once: "Signing secret, shown this once:",
    channel_on: "on",
    channel_off: "off",
    send_test: "Send a test",
    turn_off: "Turn off",
    turn_on: "Turn on",
    remove: "Remove",
    test_queued: "A test message is on its way.",
    details: "Details",
    delivery_log: "Reminders sent",
    no_deliveries: "No reminder has gone out for this event yet.",
    weekdays: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
    months: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
};

pub const RU: Words = Words {
    lang: "ru",
    inbox: "Входящие",
    add: "Добавить",
    archive: "Архив",
    settings: "Настройки",
    today: "Сегодня",
    overdue: "Просрочено",
    preparing: "Подготовка",
    scheduled: "Запланировано",
    nothing_due: "Сейчас ничего не требует внимания.",
    show_all_scheduled: "Показать все запланированные",
    remember: "Помню",
    edit: "Изменить",
    delete: "Удалить",
    open_link: "Открыть",
    from_source: "от",
    quiet_until: "тихо до",
    title: "Название",
    subtitle: "Подробности",
    due_date: "Срок",
    due_time: "Время",
    due_time_hint: "необязательно; пусто — весь день",
    fire_date: "Начать готовиться",
    fire_date_hint: "необязательно; по умолчанию за 30 дней",
    after_due: "После срока",
    keep: "оставить просроченным",
    expire: "пусть истечёт",
    done_label: "Надпись на кнопке",
    deep_link: "Ссылка",
    save: "Сохранить",
    cancel: "Отмена",
    new_event: "Новое событие",
    edit_event: "Изменить событие",
    archive_empty: "Пока ничего не закрыто.",
    time_zone: "Часовой пояс",
    time_zone_hint: "начните вводить для поиска",
    quiet_hours: "Тихие часы",
    quiet_from: "с",
    quiet_to: "до",
    language: "Язык",
    agent: "ИИ-агент",
    agent_intro: "Агент (Claude Code, claude.ai, любой MCP-клиент) может работать с этим инбоксом от вашего имени. Он подключается с этим токеном.",
    agent_none: "Токена агента пока нет.",
    agent_issued_on: "Выдан",
    agent_last_used: "последнее использование",
    agent_issue: "Создать токен",
    agent_reissue: "Создать новый токен (старый перестанет работать)",
    agent_revoke: "Отозвать",
    agent_shown_once: "Показывается один раз. Подключите Claude Code:",
    copy: "Копировать",
    copied: "Скопировано",
    saved: "Сохранено.",
    confirm_done: "Отметить как сделанное?",
    confirm_remember: "Помните? Напоминания стихнут до следующей контрольной точки.",
    link_done: "Отмечено как сделанное.",
    link_remembered: "Понятно: тихо до следующей контрольной точки.",
    link_already_closed: "Это событие уже закрыто.",
    link_expires: "Ссылка действует до",
    signed_out: "Вы не вошли. Откройте Hado через страницу входа.",
    core_down: "Ядро Hado сейчас недоступно. Попробуйте чуть позже.",
    back_to_inbox: "Ко входящим",
    delete_confirm: "Удалить это событие?",
    calendar: "Календарь",
    calendar_intro: "Секретный адрес, на который может подписаться ваш календарь: открытые события с напоминанием в день начала подготовки.",
    calendar_none: "Адреса календаря пока нет.",
    calendar_issued_on: "Создан",
    calendar_issue: "Создать адрес календаря",
    calendar_reissue: "Создать новый адрес (старый перестанет работать)",
    calendar_revoke: "Отключить",
    calendar_shown_once: "Показывается один раз. Подпишитесь на:",
    reminders: "Напоминания",
    reminders_intro: "Напоминания уходят на эти вебхуки в каждой контрольной точке, вне тихих часов. Каждая доставка подписана (Standard Webhooks).",
    no_channels: "Вебхуков пока нет.",
    webhook_url: "Адрес вебхука",
    add_webhook: "Добавить вебхук",
    webhook_secret_once: "Секрет подписи, показывается один раз:",
    channel_on: "включён",
    channel_off: "выключен",
    send_test: "Отправить тест",
    turn_off: "Выключить",
    turn_on: "Включить",
    remove: "Удалить",
    test_queued: "Тестовое сообщение отправлено.",
    details: "Подробнее",
    delivery_log: "Отправленные напоминания",
    no_deliveries: "Для этого события напоминаний ещё не было.",
    weekdays: ["пн", "вт", "ср", "чт", "пт", "сб", "вс"],
    months: ["янв", "фев", "мар", "апр", "мая", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"],
};

pub fn for_locale(locale: &str) -> &'static Words {
    if locale == "ru" { &RU } else { &EN }
}

/// Russian picks one of three forms by the number: 1 день, 2 дня, 5 дней.
fn russian_plural(count: i64, one: &'static str, few: &'static str, many: &'static str) -> &'static str {
    let (last, last_two) = (count % 10, count % 100);
    if last == 1 && last_two != 11 {
        one
    } else if (2..=4).contains(&last) && !(12..=14).contains(&last_two) {
        few
    } else {
        many
    }
}

impl Words {
    fn day_count(&self, days: i64) -> String {
        if self.lang == "ru" {
            format!("{days} {}", russian_plural(days, "день", "дня", "дней"))
        } else if days == 1 {
            "1 day".to_owned()
        } else {
            format!("{days} days")
        }
    }

    /// "Mon 14 Dec" / "пн 14 дек".
    pub fn short_date(&self, date: NaiveDate) -> String {
        let weekday = self.weekdays[date.weekday().num_days_from_monday() as usize];
        format!("{weekday} {} {}", date.day(), self.months[date.month0() as usize])
    }

    /// The due moment relative to the user's today, in words.
    pub fn due_in_words(&self, today: NaiveDate, due_date: NaiveDate, due_time: Option<NaiveTime>, overdue: bool) -> String {
        let days = (due_date - today).num_days();
        let at = due_time.map(|time| time.format(" %H:%M").to_string()).unwrap_or_default();
        let ru = self.lang == "ru";
        match days {
            0 if overdue => {
                if ru {
                    format!("просрочено, срок был сегодня{at}")
                } else {
                    format!("overdue since today{at}")
                }
            }
            0 => if ru { format!("сегодня{at}") } else { format!("today{at}") },
            1 => if ru { format!("завтра{at}, {}", self.short_date(due_date)) } else { format!("tomorrow{at}, {}", self.short_date(due_date)) },
            days if days > 1 => {
                if ru {
                    format!("через {}, {}{at}", self.day_count(days), self.short_date(due_date))
                } else {
                    format!("in {}, {}{at}", self.day_count(days), self.short_date(due_date))
                }
            }
            days => {
                if ru {
                    format!("просрочено на {}", self.day_count(-days))
                } else {
                    format!("{} overdue", self.day_count(-days))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    #[test]
    fn due_moments_read_naturally_in_both_languages() {
        let today = date("2026-12-11");
        let at = |hour| NaiveTime::from_hms_opt(hour, 0, 0);
        assert_eq!(EN.due_in_words(today, date("2026-12-14"), None, false), "in 3 days, Mon 14 Dec");
        assert_eq!(RU.due_in_words(today, date("2026-12-14"), None, false), "через 3 дня, пн 14 дек");
        assert_eq!(EN.due_in_words(today, date("2026-12-12"), at(9), false), "tomorrow 09:00, Sat 12 Dec");
        assert_eq!(EN.due_in_words(today, date("2026-12-11"), at(15), false), "today 15:00");
        assert_eq!(EN.due_in_words(today, date("2026-12-11"), at(9), true), "overdue since today 09:00");
        assert_eq!(EN.due_in_words(today, date("2026-12-09"), None, true), "2 days overdue");
        assert_eq!(RU.due_in_words(today, date("2026-12-10"), None, true), "просрочено на 1 день");
        assert_eq!(RU.due_in_words(today, date("2026-12-16"), None, false), "через 5 дней, ср 16 дек");
        assert_eq!(RU.due_in_words(today, date("2026-12-01"), None, true), "просрочено на 10 дней");
        assert_eq!(RU.due_in_words(today, date("2026-11-20"), None, true), "просрочено на 21 день");
    }
}
