//! Owns the token of a session that has no HTTP request to carry one: stdio's,
//! fixed, and a legacy event stream's, replaced when its client refreshes.

use crate::AgentToken;
use crate::Arc;

/// The token a session without HTTP requests acts with: stdio's, fixed; an
/// event stream's, replaced when its client refreshes and posts with the
/// new one.
#[derive(Clone, Debug)]
pub(crate) struct SessionToken(Arc<std::sync::RwLock<AgentToken>>);

impl SessionToken {
    pub(crate) fn new(token: AgentToken) -> Self {
        Self(Arc::new(std::sync::RwLock::new(token)))
    }

    pub(crate) fn current(&self) -> AgentToken {
        self.0.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn replace(&self, token: AgentToken) {
        *self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner) = token;
    }
}
