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
    pub(crate) quiet: QuietHours,
    pub(crate) locale: Locale,
}

/// A user as the operator lists them.
#[derive(Clone, Debug)]
pub struct UserSummary {
    pub user: UserRecord,
    pub has_agent_token: bool,
    pub(crate) active_events: i64,
    pub(crate) created_at: DateTime<Utc>,
}
