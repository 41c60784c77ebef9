//! A group's people, read as the group is written.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::{Applier, Item};
use hado_domain::fields::Login;
use hado_domain::user::UserRecord;
use hado_storage::{StoreError, users};

impl Applier {
    /// The group's people, by login: on SQLite those this core keeps taken
    /// from its memory; the other known ones read together, and a newcomer
    /// (a source may write for someone who has never opened the inbox)
    /// made with the default settings.
    ///
    /// On Postgres (a group with someone core does not keep, or whose
    /// settings moved, [`Self::apply_as_kept`]) every one is read through
    /// their gate, held until the group commits
    /// ([`users::people_for_writing`]), a newcomer another transaction made
    /// first too: another core may be writing a person's new zone, which
    /// this core hears of only after it commits, and even this core would
    /// read the old one until then. Written in a zone a person has just
    /// left, an event would keep the old zone's day and checks, as the zone
    /// change would not see it to move it.
    pub(super) async fn people(
        &self,
        connection: &mut impl hado_storage::Connection,
        items: &[&Item],
        now: DateTime<Utc>,
    ) -> Result<HashMap<String, UserRecord>, StoreError> {
        let mut logins: Vec<&str> = items.iter().map(|item| item.login.as_str()).collect();
        logins.sort_unstable();
        logins.dedup();
        let mut people = HashMap::with_capacity(logins.len());
        if self.store.backend().has_one_writer() {
            logins.retain(|login| match self.kept.person(login) {
                Some(user) => {
                    people.insert((*login).to_owned(), user);
                    false
                }
                None => true,
            });
        }
        if logins.is_empty() {
            return Ok(people);
        }
        let began = self.kept.reading();
        for user in users::people_for_writing(connection, &logins, &[]).await? {
            self.kept.keep_person(began, user.clone());
            people.insert(user.login.as_str().to_owned(), user);
        }
        // Newcomers are made in the logins' order, so two groups making
        // the same ones never each hold one the other waits for.
        let mut newcomers: Vec<&Login> = items
            .iter()
            .map(|item| &item.login)
            .filter(|login| !people.contains_key(login.as_str()))
            .collect();
        newcomers.sort_unstable_by_key(|login| login.as_str());
        newcomers.dedup_by_key(|login| login.as_str());
        for login in newcomers {
            let mut user = users::ensure_user(connection, login, self.defaults, now).await?;
            if !self.store.backend().has_one_writer() {
                // Made by another transaction since the read above, maybe.
                let through = users::people_for_writing(connection, &[], &[user.id]).await?;
                user = through.into_iter().next().unwrap_or(user);
            }
            people.insert(login.as_str().to_owned(), user);
        }
        Ok(people)
    }
}
