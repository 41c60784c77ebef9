//! Owns what the operator does: sources created, rotated, listed and deleted,
//! agent tokens issued and revoked for any login, users listed.

use crate::Engine;
use crate::error::CoreError;
use crate::inputs::parse_one;
use crate::tokens;
use hado_domain::fields::{Login, SourceName};
use hado_domain::source::SourceRecord;
use hado_domain::user::{UserRecord, UserSummary};
use hado_storage::users;

impl Engine {
    pub(super) fn parse_source_name(raw: &str) -> Result<SourceName, CoreError> {
        parse_one(|violations| SourceName::parse("name", raw, violations))
    }

    pub(super) fn refuse_manual(name: &SourceName, what: &str) -> Result<(), CoreError> {
        if name.is_manual() {
            return Err(CoreError::FailedPrecondition(format!(
                "the manual source holds the people's own events; it has no token and cannot be {what}"
            )));
        }
        Ok(())
    }

    /// Creates a source; its token is returned this once.
    pub async fn create_source(&self, raw_name: &str) -> Result<(SourceName, String), CoreError> {
        let name = Self::parse_source_name(raw_name)?;
        Self::refuse_manual(&name, "created")?;
        let (token, hash) = tokens::generate(tokens::SOURCE_PREFIX);
        match self.store.create_source(&name, &hash, self.now()).await? {
            Some(_) => Ok((name, token)),
            None => Err(CoreError::AlreadyExists(format!(
                "source {name} already exists; rotate its token with RotateSourceToken"
            ))),
        }
    }

    pub async fn rotate_source_token(
        &self,
        raw_name: &str,
    ) -> Result<(SourceName, String), CoreError> {
        let name = Self::parse_source_name(raw_name)?;
        Self::refuse_manual(&name, "given one")?;
        let (token, hash) = tokens::generate(tokens::SOURCE_PREFIX);
        let forget = self.kept.forgetting();
        let rotated = self.store.set_source_token(&name, &hash, self.now()).await?;
        forget.landed();
        if rotated {
            Ok((name, token))
        } else {
            Err(CoreError::NotFound(format!("source {name} not found")))
        }
    }

    pub async fn list_sources(&self) -> Result<Vec<SourceRecord>, CoreError> {
        Ok(self.store.list_sources().await?)
    }

    /// Deletes a source and its events; returns how many events went.
    pub async fn delete_source(&self, raw_name: &str) -> Result<(SourceName, u64), CoreError> {
        let name = Self::parse_source_name(raw_name)?;
        Self::refuse_manual(&name, "deleted")?;
        let forget = self.kept.forgetting();
        let deleted = self.store.delete_source(&name).await?;
        forget.landed();
        match deleted {
            Some(deleted) => {
                self.written();
                Ok((name, deleted))
            }
            None => Err(CoreError::NotFound(format!("source {name} not found"))),
        }
    }

    pub async fn admin_issue_agent_token(
        &self,
        raw_login: &str,
    ) -> Result<(UserRecord, String), CoreError> {
        let user = self.user_for_login(raw_login).await?;
        let token = self.issue_agent_token(&user).await?;
        Ok((user, token))
    }

    pub async fn admin_revoke_agent_token(&self, raw_login: &str) -> Result<bool, CoreError> {
        let login = parse_one(|violations| Login::parse("login", raw_login, violations))?;
        let mut connection = self.store.reader().acquire().await?;
        let Some(user) = users::find_user(&mut connection, &login).await? else { return Ok(false) };
        drop(connection);
        self.revoke_agent_token(&user).await
    }

    pub async fn list_users(&self) -> Result<Vec<UserSummary>, CoreError> {
        Ok(self.store.list_users().await?)
    }
}
