//! Owns a source as the operator lists it.

use chrono::{DateTime, Utc};

/// A source as the operator lists it.
#[derive(Clone, Debug)]
pub struct SourceRecord {
    pub name: String,
    pub has_token: bool,
    pub events: i64,
    pub created_at: DateTime<Utc>,
}
