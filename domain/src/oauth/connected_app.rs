//! Owns an app the person connected (an OAuth grant with its client), as
//! Settings lists it.

use chrono::{DateTime, Utc};

/// An app the person connected, as Settings lists it.
#[derive(Clone, Debug)]
pub struct ConnectedApp {
    pub id: i64,
    pub name: String,
    pub redirect_uris: String,
    pub connected_at: DateTime<Utc>,
    pub last_used_at: DateTime<Utc>,
}
