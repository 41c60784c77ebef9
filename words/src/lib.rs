//! Owns every word a person reads from Hado, in its two languages: the web
//! inbox's, and core's Telegram replies and test messages. One struct per
//! language, so a missing translation is a compile error. How a due moment
//! reads is `wording`'s; old zone names are `zone_links`'. Nothing here
//! speaks a protocol, so core and the web inbox share it cheaply.

use chrono::{NaiveDate, NaiveTime};

use crate::wording::Lang;

mod en;
mod ru;
pub mod wording;
mod zone_links;

pub use en::EN;
pub use ru::RU;

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
    pub show_scheduled: &'static str,
    pub show_all_scheduled: &'static str,
    pub show_all_preparing: &'static str,
    /// The link under a page of a whole group to the page that follows.
    pub show_next_page: &'static str,
    pub remember: &'static str,
    /// An action on an event its source withdrew ({source}).
    pub event_withdrawn: &'static str,
    /// An action on an event its person deleted.
    pub event_deleted: &'static str,
    pub event_not_found: &'static str,
    pub refusal_required: &'static str,
    pub refusal_too_long: &'static str,
    pub refusal_control: &'static str,
    /// A bidirectional formatting character, which reorders what is shown.
    pub refusal_bidi: &'static str,
    /// A character that shows nothing (a zero width space, a soft hyphen),
    /// or a value made only of such.
    pub refusal_invisible: &'static str,
    pub refusal_url: &'static str,
    pub refusal_login: &'static str,
    pub refusal_spaces: &'static str,
    pub refusal_private_address: &'static str,
    pub refusal_due: &'static str,
    pub refusal_date: &'static str,
    pub refusal_year: &'static str,
    pub refusal_fire_after_due: &'static str,
    pub refusal_zone: &'static str,
    pub refusal_time: &'static str,
    pub refusal_language: &'static str,
    pub refusal_after_due: &'static str,
    pub refusal_remember: &'static str,
    pub refusal_remember_day: &'static str,
    /// A source's event the person tried to change; `{source}` is its name.
    pub refusal_source_owned: &'static str,
    pub link_not_valid: &'static str,
    pub link_expired: &'static str,
    pub link_outdated: &'static str,
    pub search: &'static str,
    pub search_button: &'static str,
    pub all_sources: &'static str,
    pub all_states: &'static str,
    pub mine: &'static str,
    pub clear_filters: &'static str,
    pub no_matches: &'static str,
    pub density_compact: &'static str,
    pub density_comfortable: &'static str,
    pub shortcuts: &'static str,
    pub shortcut_move: &'static str,
    pub shortcut_done: &'static str,
    pub shortcut_remember: &'static str,
    pub shortcut_new: &'static str,
    pub shortcut_search: &'static str,
    pub shortcut_help: &'static str,
    pub shortcut_undo: &'static str,
    pub shortcut_delete: &'static str,
    pub shortcut_edit: &'static str,
    pub shortcut_open: &'static str,
    pub shortcut_close: &'static str,
    pub remember_more: &'static str,
    pub remember_tomorrow: &'static str,
    pub remember_next_week: &'static str,
    pub remember_until_day: &'static str,
    pub remember_day_label: &'static str,
    pub edit: &'static str,
    pub delete: &'static str,
    pub open_link: &'static str,
    pub from_source: &'static str,
    pub quiet_until: &'static str,
    /// Before a closed event's due day: "due Mon 14 Dec".
    pub due: &'static str,
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
    pub quick_add: &'static str,
    pub quick_add_hint: &'static str,
    pub quick_add_fill: &'static str,
    pub quick_add_read: &'static str,
    pub date_placeholder: &'static str,
    pub time_placeholder: &'static str,
    pub edit_event: &'static str,
    pub archive_empty: &'static str,
    pub time_zone: &'static str,
    pub time_zone_hint: &'static str,
    pub time_zone_unsaved: &'static str,
    pub quiet_hours: &'static str,
    pub quiet_from: &'static str,
    pub quiet_to: &'static str,
    pub language: &'static str,
    pub agent: &'static str,
    /// Over the other clients' configurations of a token just issued.
    pub agent_other_clients: &'static str,
    pub agent_intro: &'static str,
    pub agent_none: &'static str,
    pub agent_issued_on: &'static str,
    pub agent_last_used: &'static str,
    pub agent_issue: &'static str,
    pub agent_reissue: &'static str,
    pub agent_revoke: &'static str,
    pub agent_shown_once: &'static str,
    pub agent_address_unknown: &'static str,
    pub apps: &'static str,
    pub apps_intro: &'static str,
    pub apps_none: &'static str,
    pub app_connected_on: &'static str,
    pub app_disconnect: &'static str,
    pub app_disconnect_question: &'static str,
    pub app_disconnect_detail: &'static str,
    pub authorize_question: &'static str,
    pub authorize_returns_to: &'static str,
    pub authorize_can: &'static str,
    pub authorize_cannot: &'static str,
    pub allow: &'static str,
    pub deny: &'static str,
    pub authorize_refused: &'static str,
    /// Before the technical reason a sign-in request is refused.
    pub authorize_developer: &'static str,
    /// The consent page when the web inbox does not know gateway-mcp's address.
    pub authorize_unconfigured: &'static str,
    /// What is wrong with a refused sign-in request, each naming its parameter.
    pub authorize_problem_client: &'static str,
    pub authorize_problem_redirect_uri: &'static str,
    pub authorize_problem_response_type: &'static str,
    pub authorize_problem_code_challenge: &'static str,
    pub authorize_problem_code_challenge_method: &'static str,
    pub authorize_problem_resource: &'static str,
    pub authorize_problem_scope: &'static str,
    pub authorize_problem_state: &'static str,
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
    pub delete_confirm: &'static str,
    pub delete_detail: &'static str,
    pub reopen: &'static str,
    pub undo: &'static str,
    pub feedback_done: &'static str,
    pub feedback_deleted: &'static str,
    pub feedback_remembered: &'static str,
    pub feedback_added: &'static str,
    pub feedback_saved: &'static str,
    pub feedback_reopened: &'static str,
    pub feedback_unremembered: &'static str,
    pub more_actions: &'static str,
    pub your_time: &'static str,
    pub overdue_summary: &'static str,
    pub no_page: &'static str,
    /// `{source}` stands for the source's name.
    pub not_editable: &'static str,
    pub channel_off_question: &'static str,
    pub channel_off_detail: &'static str,
    pub channel_remove_question: &'static str,
    pub channel_remove_detail: &'static str,
    pub agent_revoke_question: &'static str,
    pub agent_revoke_detail: &'static str,
    pub calendar_revoke_question: &'static str,
    pub calendar_revoke_detail: &'static str,
    pub back_to_inbox: &'static str,
    pub telegram_connect: &'static str,
    pub telegram_unavailable: &'static str,
    pub telegram_open: &'static str,
    pub telegram_chat: &'static str,
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
    /// Before a channel's last error: when that attempt failed ({when}).
    pub channel_failed_at: &'static str,
    pub channel_off: &'static str,
    pub send_test: &'static str,
    pub turn_off: &'static str,
    pub turn_on: &'static str,
    pub remove: &'static str,
    pub test_queued: &'static str,
    pub details: &'static str,
    pub delivery_log: &'static str,
    pub no_deliveries: &'static str,
    pub prepare_from: &'static str,
    pub next_reminder: &'static str,
    pub no_next_reminder: &'static str,
    pub reminder_checkpoint: &'static str,
    pub reminder_repeat: &'static str,
    pub delivery_pending: &'static str,
    pub delivery_sent: &'static str,
    pub delivery_failed: &'static str,
    pub delivery_suppressed: &'static str,
    pub channel_quieted: &'static str,
    /// Telegram: the reply when a chat is linked; `{login}` is the person.
    pub bot_linked: &'static str,
    pub bot_link_invalid: &'static str,
    pub bot_send_list: &'static str,
    pub bot_chat_not_linked: &'static str,
    pub bot_button_gone: &'static str,
    pub bot_nothing_needs_you: &'static str,
    pub bot_needs_attention: &'static str,
    /// A channel's test message.
    pub test_message: &'static str,
    pub refusal_email: &'static str,
    pub email_label: &'static str,
    pub email_address: &'static str,
    pub add_email: &'static str,
    pub email_confirmation_sent: &'static str,
    pub email_already_confirmed: &'static str,
    pub channel_unconfirmed: &'static str,
    pub email_resend: &'static str,
    pub email_resend_later: &'static str,
    pub email_confirm_question: &'static str,
    pub email_confirm_button: &'static str,
    pub email_confirmed: &'static str,
    pub email_pause_question: &'static str,
    pub email_pause_button: &'static str,
    pub email_paused: &'static str,
    pub email_due: &'static str,
    pub email_source: &'static str,
    pub email_actions: &'static str,
    pub email_footer: &'static str,
    pub email_stop: &'static str,
    pub email_confirm_subject: &'static str,
    pub email_confirm_body: &'static str,
    pub email_confirm_ignore: &'static str,
    pub email_test_subject: &'static str,
    pub email_test: &'static str,
    pub email_refuse_link: &'static str,
    pub email_refuse_question: &'static str,
    pub email_refuse_button: &'static str,
    pub email_refused: &'static str,
    pub refusal_address_refused: &'static str,
    pub email_confirmations_later: &'static str,
    pub test_later: &'static str,
    pub test_paused: &'static str,
    pub test_unconfirmed: &'static str,
    pub refusal_key_reused: &'static str,
    /// A wait of `{n}` minutes, and of `{n}` hours (past two hours).
    pub wait_minutes: &'static str,
    pub wait_hours: &'static str,
    /// The Settings section that turns Web Push on for the device the page is open on.
    pub push_heading: &'static str,
    pub push_intro: &'static str,
    pub push_turn_on: &'static str,
    pub push_unavailable: &'static str,
    pub push_unsupported: &'static str,
    pub push_blocked: &'static str,
    pub push_failed: &'static str,
    pub push_gone: &'static str,
    pub push_device: &'static str,
    pub device_name: &'static str,
    pub rename: &'static str,
    pub offline: &'static str,
    /// The offer to set the time zone while it is still the deployment's
    /// default: `{zone}` is the zone in use, `{device}` the device's.
    pub zone_offer: &'static str,
    pub zone_offer_device: &'static str,
    pub zone_use: &'static str,
    pub zone_keep: &'static str,
    /// Without JavaScript the page cannot know the device's zone: a link to Settings.
    pub zone_choose: &'static str,
    /// The agent's in-chat view: before the inbox arrives, a call that
    /// failed for a reason with no words of its own, and a group with more
    /// events than the view holds.
    pub view_loading: &'static str,
    pub view_failed: &'static str,
    pub view_more: &'static str,
}

pub fn for_locale(locale: &str) -> &'static Words {
    for_lang(Lang::from_locale(locale))
}

pub fn for_lang(lang: Lang) -> &'static Words {
    match lang {
        Lang::En => &EN,
        Lang::Ru => &RU,
    }
}

/// A line in both languages, for a reader whose language is not known yet
/// (a Telegram chat that is not linked).
pub fn both(line: impl Fn(&Words) -> &'static str) -> String {
    format!("{} / {}", line(&EN), line(&RU))
}

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
        wording::due_in_words(self.language(), today, due_date, due_time, overdue)
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
        format!("{}{at}", wording::short_date(self.language(), date, today))
    }

    /// The inbox's one line about what is overdue: "8 overdue — oldest 12
    /// days", "Просрочено: 8, самое давнее — 12 дней".
    /// The count comes as the inbox shows it ("8", "1000+").
    pub fn overdue_line(&self, count: &str, oldest_days: i64) -> String {
        self.overdue_summary
            .replace("{count}", count)
            .replace("{age}", &wording::day_count(self.language(), oldest_days.max(1)))
    }

    /// A day as a date field shows it: "14 Mar 2027", "14.03.2027".
    pub fn field_date(&self, date: NaiveDate) -> String {
        wording::field_date(self.language(), date)
    }

    /// A moment that has been or will be, in words: "yesterday, 14:05",
    /// "3 Dec, 14:05", "вчера в 14:05".
    pub fn moment(&self, today: NaiveDate, date: NaiveDate, time: NaiveTime) -> String {
        wording::moment(self.language(), today, date, time)
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
