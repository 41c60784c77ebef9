//! Owns the web inbox: server-rendered pages (templates compiled into the
//! binary) that work without JavaScript, with plain forms and
//! POST-redirect-GET, in English and Russian; and the action-link pages at
//! `/a/<token>`. Every page is gRPC calls to core as the signed-in person.
//!
//! One file per page family: `inbox` (the groups and the archive, with
//! `finder`, their search form), `events` (an event's page, Add and Edit),
//! `answers` (the card buttons), `quick` (the Add page and its one-line
//! quick add), `said` (what the inbox says after an answer), `settings_page`
//! and `settings` (its forms),
//! `channels` and `channel_links`, `confirm` (the confirmation pages),
//! `authorize` (letting an app sign in), `links` (action links) and `nav`
//! (what tops every page). What they share has a file per job: `session`
//! (who a page is for, and its calls to core as them), `render` (a page
//! made a response, and the failure pages), `not_found`
//! (what an unknown address answers), `guard` (the cross-site guard
//! of the forms), `assets` and `app` (the static files and what makes the
//! inbox an installable app), `view` (core's events as a page shows them).
//! This file only names what the router serves.

mod answers;
mod app;
mod assets;
mod authorize;
mod channel_links;
mod channels;
mod confirm;
mod events;
mod finder;
mod guard;
mod inbox;
mod links;
mod nav;
mod not_found;
mod quick;
mod render;
pub(crate) mod said;
mod session;
mod settings;
mod settings_page;
pub(crate) mod view;

pub(crate) use answers::{delete, done, remember, reopen, take_back_remember};
pub(crate) use app::{THEME_DARK, THEME_LIGHT, icon, manifest, offline, service_worker};
pub(crate) use assets::{assets, script, stylesheet};
pub(crate) use authorize::{
    MAX_REQUEST_BYTES as MAX_AUTHORIZE_BYTES, authorize, authorize_page, limits as authorize_limits,
};
pub(crate) use channel_links::{channel_link_page, use_channel_link};
pub(crate) use channels::{
    add_email, add_webhook, channel_action, issue_calendar_feed, link_telegram, rename_channel,
    revoke_calendar_feed,
};
pub(crate) use confirm::{
    confirm_app_disconnect, confirm_channel, confirm_delete, confirm_revoke_agent_token,
    confirm_revoke_calendar_feed,
};
pub(crate) use events::{create, edit_page, event_page, update};
pub(crate) use guard::same_origin_forms;
pub(crate) use inbox::{archive_page, inbox_page};
pub(crate) use links::{link_page, use_link};
pub(crate) use not_found::not_found;
pub(crate) use quick::{new_page, read_line};
pub(crate) use settings::{
    disconnect_app, issue_agent_token, revoke_agent_token, save_settings, save_zone,
};
pub(crate) use settings_page::settings_page;
