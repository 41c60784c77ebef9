//! Owns who a credential names and the credentials a person holds: source and
//! agent tokens resolved, agent tokens and calendar feeds issued and revoked,
//! and action links made, inspected and used.

use chrono::{DateTime, Utc};

use crate::Engine;
use crate::error::CoreError;
use crate::inputs::{EventFilter, SourceCaller, parse_one};
use crate::kept::AgentTokenUser;
use crate::links::{ActionLink, LinkAction, LinkProblem, LinkedEvent};
use crate::tokens;
use hado_domain::event::RememberFor;
use hado_domain::event_record::EventRecord;
use hado_domain::fields::Login;
use hado_domain::user::UserRecord;
use hado_storage::users;

impl Engine {
    /// The source a token names: from what this core keeps (`engine::kept`),
    /// or else from the database.
    pub async fn source_for_token(&self, token: &str) -> Result<Option<SourceCaller>, CoreError> {
        let hash = tokens::hash(token);
        if let Some(source) = self.kept.source(&hash) {
            return Ok(Some(source));
        }
        let began = self.kept.reading();
        let found = self.store.source_by_token(&hash).await?;
        let source = found.map(|(id, name)| SourceCaller { id, name });
        if let Some(source) = &source {
            self.kept.keep_source(began, hash, source.clone());
        }
        Ok(source)
    }

    pub async fn user_for_agent_token(&self, token: &str) -> Result<Option<UserRecord>, CoreError> {
        self.agent_token_user(token).await
    }

    /// Who an agent token names: from what this core keeps
    /// (`engine::kept`), or else in one read (as
    /// [`Engine::access_token_user`] answers for an access token).
    /// The token's last use is kept to the minute: when the stored time is a
    /// minute old, it is written after the call, off its path, once however
    /// many calls arrive meanwhile.
    pub async fn agent_token_user(&self, token: &str) -> Result<Option<UserRecord>, CoreError> {
        let hash = tokens::hash(token);
        let found = match self.kept.agent_token(&hash) {
            Some(found) => found,
            None => {
                let began = self.kept.reading();
                let mut connection = self.store.reader().acquire().await?;
                let Some(found) = users::user_by_agent_token(&mut connection, &hash).await? else {
                    return Ok(None);
                };
                drop(connection);
                let found = AgentTokenUser { user: found.user, last_used_at: found.last_used_at };
                self.kept.keep_agent_token(began, hash.clone(), found.clone());
                found
            }
        };
        let now = self.now();
        if found.last_used_at.is_none_or(|used| now - used >= chrono::Duration::minutes(1)) {
            self.mark_token_used(found.user.id, now);
            self.kept.agent_token_used(&hash, now);
        }
        Ok(Some(found.user))
    }

    fn mark_token_used(&self, user_id: i64, now: DateTime<Utc>) {
        if !self.token_marks.lock().expect("the marks' lock is never poisoned").insert(user_id) {
            return;
        }
        let (store, marks) = (self.store.clone(), self.token_marks.clone());
        tokio::spawn(async move {
            let marked: Result<(), hado_storage::StoreError> = async {
                users::mark_agent_token_used(&mut *store.writer().acquire().await?, user_id, now)
                    .await
            }
            .await;
            if let Err(error) = marked {
                tracing::warn!(%error, "could not record an agent token's use");
            }
            marks.lock().expect("the marks' lock is never poisoned").remove(&user_id);
        });
    }

    /// The user a gateway names, created on first sight.
    pub async fn user_for_login(&self, raw_login: &str) -> Result<UserRecord, CoreError> {
        let login = parse_one(|violations| Login::parse("user", raw_login, violations))?;
        if let Some(user) = self.kept.login(login.as_str()) {
            return Ok(user);
        }
        let began = self.kept.reading();
        let mut connection = self.store.reader().acquire().await?;
        if let Some(user) = users::find_user(&mut connection, &login).await? {
            self.kept.keep_login(began, user.clone());
            return Ok(user);
        }
        drop(connection);
        let mut transaction = self.store.begin_write().await?;
        let user = users::ensure_user(
            &mut transaction,
            &login,
            (self.default_zone, self.default_locale),
            self.now(),
        )
        .await?;
        transaction.commit().await?;
        Ok(user)
    }

    /// An action link for one of the user's events as it is now, valid for
    /// 30 days or until the event next changes (`crate::links`).
    pub async fn issue_action_link(
        &self,
        user: &UserRecord,
        event_id: i64,
        action: LinkAction,
    ) -> Result<String, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        let event = self.own_event(&mut connection, user, event_id).await?;
        Ok(self.link_token(&event, action))
    }

    pub(super) fn link_token(&self, event: &EventRecord, action: LinkAction) -> String {
        let linked = LinkedEvent {
            id: event.id,
            user_id: event.user_id,
            revision: event.revision,
            created_at: event.created_at,
        };
        self.links.issue(linked, action, self.now())
    }

    /// A signed link as checked, or the refusal that says why not; a
    /// genuine but expired link's person reads why in their own language.
    pub async fn link_or_refusal<T>(
        &self,
        checked: Result<T, LinkProblem>,
    ) -> Result<T, CoreError> {
        match checked {
            Ok(link) => Ok(link),
            Err(
                problem @ (LinkProblem::Expired { user_id, .. } | LinkProblem::Gone { user_id }),
            ) => {
                let mut connection = self.store.reader().acquire().await?;
                let locale =
                    users::user_by_id(&mut connection, user_id).await.ok().map(|user| user.locale);
                Err(CoreError::Link { problem, locale })
            }
            Err(problem) => Err(CoreError::Link { problem, locale: None }),
        }
    }

    /// What a link names, checked, with its user and event as they are now.
    pub async fn inspect_action_link(
        &self,
        token: &str,
    ) -> Result<(ActionLink, UserRecord, EventRecord), CoreError> {
        // The signature is checked before the database is asked anything.
        let link = self.link_or_refusal(self.links.check(token, self.now())).await?;
        let gone = LinkProblem::Gone { user_id: link.user_id };
        let mut connection = self.store.reader().acquire().await?;
        let Ok(user) = users::user_by_id(&mut connection, link.user_id).await else {
            return self.link_or_refusal(Err(gone)).await;
        };
        // An event that is no longer there, or a row that is not the one
        // the link was made for, is an expired link: never another event.
        let event = match self.own_event(&mut connection, &user, link.event_id).await {
            Ok(event) if link.created.admits(event.created_at) => event,
            Ok(_) | Err(CoreError::EventNotFound(_)) => {
                return Err(CoreError::Link { problem: gone, locale: Some(user.locale) });
            }
            Err(error) => return Err(error),
        };
        if link.revision != event.revision {
            return Err(CoreError::Link {
                problem: LinkProblem::Outdated,
                locale: Some(user.locale),
            });
        }
        Ok((link, user, event))
    }

    /// Performs a link's action as the event's user.
    pub async fn use_action_link(
        &self,
        token: &str,
    ) -> Result<(ActionLink, UserRecord, EventRecord), CoreError> {
        let (link, user, _) = self.inspect_action_link(token).await?;
        let event = match link.action {
            LinkAction::Done => self.mark_done(&user, link.event_id).await?,
            LinkAction::Remember => {
                self.remember(&user, link.event_id, RememberFor::NextCheckpoint).await?
            }
        };
        Ok((link, user, event))
    }

    pub async fn agent_token_status(
        &self,
        user: &UserRecord,
    ) -> Result<Option<AgentTokenStatus>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        let status = users::agent_token_status(&mut connection, user.id).await?;
        Ok(status.map(|(created_at, last_used_at)| AgentTokenStatus { created_at, last_used_at }))
    }

    /// Issues the user's agent token, replacing any earlier one at once.
    pub async fn issue_agent_token(&self, user: &UserRecord) -> Result<String, CoreError> {
        let (token, hash) = tokens::generate(tokens::AGENT_PREFIX);
        let forget = self.kept.forgetting_agent_token(user.id);
        let mut transaction = self.store.begin_write().await?;
        users::replace_agent_token(&mut transaction, user.id, &hash, self.now()).await?;
        transaction.commit().await?;
        forget.landed();
        Ok(token)
    }

    pub async fn revoke_agent_token(&self, user: &UserRecord) -> Result<bool, CoreError> {
        let mut transaction = self.store.begin_write().await?;
        let revoked = users::delete_agent_token(&mut transaction, user.id).await?;
        // Forgotten only once something was revoked, from before the change
        // is seen until after: a revoke that finds no token empties nothing.
        let forget = revoked.then(|| self.kept.forgetting_agent_token(user.id));
        transaction.commit().await?;
        if let Some(forget) = forget {
            forget.landed();
        }
        Ok(revoked)
    }

    /// Gives the user a new secret calendar feed; any earlier URL stops working.
    pub async fn issue_calendar_feed(&self, user: &UserRecord) -> Result<String, CoreError> {
        let (token, hash) = tokens::generate(tokens::CALENDAR_PREFIX);
        let mut transaction = self.store.begin_write().await?;
        users::replace_calendar_feed(&mut transaction, user.id, &hash, self.now()).await?;
        transaction.commit().await?;
        Ok(token)
    }

    pub async fn revoke_calendar_feed(&self, user: &UserRecord) -> Result<bool, CoreError> {
        let mut transaction = self.store.begin_write().await?;
        let revoked = users::delete_calendar_feed(&mut transaction, user.id).await?;
        transaction.commit().await?;
        Ok(revoked)
    }

    pub async fn calendar_feed_created(
        &self,
        user: &UserRecord,
    ) -> Result<Option<DateTime<Utc>>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(users::calendar_feed_created(&mut connection, user.id).await?)
    }

    /// The person and active events a calendar feed token opens, a page
    /// of `limit` from just after `after` (all when unset), with the cursor
    /// of the page that follows when `limit` cut this one short.
    pub async fn calendar_feed(
        &self,
        token: &str,
        limit: Option<u32>,
        after: Option<&str>,
    ) -> Result<(UserRecord, Vec<EventRecord>, Option<String>), CoreError> {
        let unknown = || CoreError::Unauthenticated("unknown calendar feed".into());
        if !token.starts_with(tokens::CALENDAR_PREFIX) {
            return Err(unknown());
        }
        let mut connection = self.store.reader().acquire().await?;
        let user = users::user_by_calendar_feed(&mut connection, &tokens::hash(token))
            .await?
            .ok_or_else(unknown)?;
        drop(connection);
        let (events, next) = self
            .list_events_after(&user, None, false, limit, after, &EventFilter::default())
            .await?;
        Ok((user, events, next))
    }
}

/// Whether a user has an agent token, and its history.
#[derive(Clone, Copy, Debug)]
pub struct AgentTokenStatus {
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}
