//! Owns an app the person connected (an OAuth grant with its client), as
//! Settings lists it.

use chrono::{DateTime, Utc};

/// An app the person connected, as Settings lists it.
#[derive(Clone, Debug)]
pub(crate) struct ConnectedApp {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) redirect_uris: String,
    pub(crate) connected_at: DateTime<Utc>,
    pub(crate) last_used_at: DateTime<Utc>,
}
