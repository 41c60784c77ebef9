//! Owns what core keeps in memory of who a credential names, so that a
//! call does not read it from the database every time: which person an
//! agent token or an OAuth access token names (the latter never past its
//! expiry), which person a login is (a gateway's, or the person a source
//! writes for, `upsert_group`), and which source a source token names. On Postgres that read cost three round trips (the
//! pool pings a connection as it hands it out and as it takes it back),
//! and on SQLite two hand-offs to a reader's thread.
//!
//! What is kept is forgotten, all of it at once, whenever a token, a
//! source or a person changes (an OAuth grant's access tokens that end, by
//! a refresh or a disconnection, forget only that grant's; an agent token
//! issued, which replaces the one before, or revoked, only its person's):
//! - on the core that made the change, at once;
//! - on Postgres, on every core: the database's triggers `NOTIFY` the
//!   change in the writing transaction (`migrations/postgres/…_kept.sql`),
//!   and each core `LISTEN`s on a connection of its own, named
//!   `hado_storage::changes::LISTENER_NAME` among the database's sessions. A core keeps nothing
//!   while that connection is down, and forgets everything when it is back,
//!   since changes made meanwhile were not heard;
//! - on SQLite one core owns the file (it holds `hado_storage::CoreLock`),
//!   so the first way is all there is.
//!
//! A read that began before a change is not kept, and nothing is kept
//! longer than [`KEPT`], a bound for a change made past the triggers (by
//! hand in the database). While a change is being written on this core,
//! nothing kept is used: a call then reads what it needs, so that a write
//! that follows the change (a source's new event for a person whose zone
//! just changed) never uses what the change ends. A change given up before
//! its write returned (its caller went away) counts as under way until the
//! core's writer is free, since its commit may still land. A credential that names
//! no one is never kept, so a caller trying tokens cannot fill this memory,
//! and a new token works at once. The people sources write for are kept
//! apart from the logins gateways call with, so that a source writing for
//! thousands of people cannot push the callers out.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::inputs::SourceCaller;
use hado_domain::user::UserRecord;

mod forgetting;
mod listen;

pub(crate) use forgetting::Settled;
pub(crate) use listen::listen;

/// The longest anything is kept without reading it again.
const KEPT: Duration = Duration::from_secs(60);

/// Entries kept at most in each map; past it, the expired ones go, and if
/// none had, all.
const MOST: usize = 4096;

/// When a read from the database began, as the `keep_*` methods need it.
#[derive(Clone, Copy)]
pub(super) struct Reading {
    forgotten: u64,
    at: Instant,
}

/// What an OAuth access token names: its person, its expiry, and the grant
/// (one app signed in as the person) it was issued under.
#[derive(Clone, Debug)]
pub(super) struct AccessToken {
    pub(super) user: UserRecord,
    pub(super) expires_at: DateTime<Utc>,
    pub(super) grant: i64,
}

/// A person an agent token names, and when the token's use was last written.
#[derive(Clone, Debug)]
pub(super) struct AgentTokenUser {
    pub(super) user: UserRecord,
    pub(super) last_used_at: Option<DateTime<Utc>>,
}

#[derive(Default)]
pub(crate) struct Kept {
    known: Mutex<Known>,
    /// On the one core that owns its database (SQLite): what resolves once
    /// its writer has nothing left to land of the writes sent so far
    /// (`hado_storage::Store::writes_settled`). On Postgres none: the
    /// database tells every core of what it commits.
    settled: Option<Box<dyn Fn() -> Settled + Send + Sync>>,
}

#[derive(Default)]
struct Known {
    /// Whether anything may be kept: always on SQLite; on Postgres only
    /// while this core is listening for changes.
    keeping: bool,
    /// By the token's hash.
    agent_tokens: HashMap<String, (AgentTokenUser, Instant)>,
    /// By the token's hash: the person, when the token expires, and the
    /// grant it was issued under.
    access_tokens: HashMap<String, (AccessToken, Instant)>,
    /// By the login: the people gateways call for.
    logins: HashMap<String, (UserRecord, Instant)>,
    /// By the login: the people sources write for.
    people: HashMap<String, (UserRecord, Instant)>,
    /// By the token's hash.
    sources: HashMap<String, (SourceCaller, Instant)>,
    /// Counts the times anything was forgotten (everything, a grant's
    /// access tokens, a person's agent tokens), so that a read that began
    /// before the last time is not kept.
    forgotten: u64,
    /// Changes being written on this core ([`Kept::forgetting`]): while
    /// there are any, nothing is used or kept.
    changing: usize,
    /// Changes given up before their write returned, whose commit may
    /// still land: counted as `changing` is, until the writer is settled.
    given_up: usize,
    /// Whether a task waits for the writer to settle the `given_up`.
    settling: bool,
}

/// What a change ends of what a core keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Anything: everything is forgotten.
    Everything,
    /// The access tokens issued under these OAuth grants (an app's refresh,
    /// its disconnection).
    Grants(Vec<i64>),
    /// The agent tokens of these people (one issued, which replaces the
    /// one before, or revoked).
    AgentTokensOf(Vec<i64>),
}

impl Ended {
    /// What a change heard ends: the grants or people its notice names
    /// (`oauth_grants:1,2,3`, `agent_tokens_of:7`, sent by the triggers),
    /// and everything for any other notice.
    fn heard(change: &str) -> Self {
        let ids =
            |list: &str| list.split(',').map(|id| id.parse().ok()).collect::<Option<Vec<i64>>>();
        let named = if let Some(grants) = change.strip_prefix("oauth_grants:") {
            ids(grants).map(Self::Grants)
        } else if let Some(people) = change.strip_prefix("agent_tokens_of:") {
            ids(people).map(Self::AgentTokensOf)
        } else {
            None
        };
        named.unwrap_or(Self::Everything)
    }
}

impl Known {
    /// Forgets what `ended` names, and counts it as a forgetting, so that a
    /// read under way is not kept.
    fn forget(&mut self, ended: &Ended) {
        match ended {
            Ended::Everything => self.forget_all(),
            Ended::Grants(grants) => {
                let grants: HashSet<&i64> = grants.iter().collect();
                self.access_tokens.retain(|_, (token, _)| !grants.contains(&token.grant));
                self.forgotten += 1;
            }
            Ended::AgentTokensOf(people) => {
                let people: HashSet<&i64> = people.iter().collect();
                self.agent_tokens.retain(|_, (token, _)| !people.contains(&token.user.id));
                self.forgotten += 1;
            }
        }
    }

    fn forget_all(&mut self) {
        self.agent_tokens.clear();
        self.access_tokens.clear();
        self.logins.clear();
        self.people.clear();
        self.sources.clear();
        self.forgotten += 1;
    }
}

impl Known {
    /// What is kept in `map` under `key`, if it may be used: read less
    /// than [`KEPT`] ago, and no change is being written.
    fn fresh<T: Clone>(&self, map: &HashMap<String, (T, Instant)>, key: &str) -> Option<T> {
        let (value, read) = map.get(key)?;
        (self.still() && read.elapsed() < KEPT).then(|| value.clone())
    }

    /// No change is being written, nor may still land.
    fn still(&self) -> bool {
        self.changing == 0 && self.given_up == 0
    }
}

fn insert<T>(map: &mut HashMap<String, (T, Instant)>, key: String, value: T, at: Instant) {
    if map.len() >= MOST {
        map.retain(|_, (_, read)| read.elapsed() < KEPT);
        if map.len() >= MOST {
            map.clear();
        }
    }
    map.insert(key, (value, at));
}

impl Kept {
    /// Memory that keeps from the start: one core owns the database.
    pub(super) fn keeping() -> Self {
        let kept = Self::default();
        kept.lock().keeping = true;
        kept
    }

    /// As [`Kept::keeping`], for a core whose writer is settled when
    /// `settled` resolves: a change given up before its write returned
    /// keeps this memory from using or keeping anything until then.
    pub(super) fn keeping_until(settled: impl Fn() -> Settled + Send + Sync + 'static) -> Self {
        Self { settled: Some(Box::new(settled)), ..Self::keeping() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().expect("the kept credentials' lock is never poisoned")
    }

    pub(super) fn agent_token(&self, hash: &str) -> Option<AgentTokenUser> {
        let known = self.lock();
        known.fresh(&known.agent_tokens, hash)
    }

    /// The person an OAuth access token names, while it has not expired at `now`.
    pub(super) fn access_token(&self, hash: &str, now: DateTime<Utc>) -> Option<UserRecord> {
        let known = self.lock();
        let token = known.fresh(&known.access_tokens, hash)?;
        (now < token.expires_at).then_some(token.user)
    }

    pub(super) fn login(&self, login: &str) -> Option<UserRecord> {
        let known = self.lock();
        known.fresh(&known.logins, login)
    }

    /// A person a source writes for: as a gateway's login or as a source's.
    pub(super) fn person(&self, login: &str) -> Option<UserRecord> {
        let known = self.lock();
        known.fresh(&known.logins, login).or_else(|| known.fresh(&known.people, login))
    }

    pub(super) fn source(&self, hash: &str) -> Option<SourceCaller> {
        let known = self.lock();
        known.fresh(&known.sources, hash)
    }

    /// Marks the start of a read from the database, for the `keep_*` methods.
    pub(super) fn reading(&self) -> Reading {
        Reading { forgotten: self.lock().forgotten, at: Instant::now() }
    }

    /// The memory, if what a read that began at `began` found may be kept:
    /// nothing was forgotten since (a change may have ended it meanwhile).
    /// It counts as read when the read began, so a slow read does not
    /// lengthen [`KEPT`].
    fn may_keep(&self, began: Reading) -> Option<std::sync::MutexGuard<'_, Known>> {
        let known = self.lock();
        (known.keeping && known.still() && known.forgotten == began.forgotten).then_some(known)
    }

    pub(super) fn keep_agent_token(&self, began: Reading, hash: String, found: AgentTokenUser) {
        if let Some(mut known) = self.may_keep(began) {
            insert(&mut known.agent_tokens, hash, found, began.at);
        }
    }

    pub(super) fn keep_access_token(&self, began: Reading, hash: String, token: AccessToken) {
        if let Some(mut known) = self.may_keep(began) {
            insert(&mut known.access_tokens, hash, token, began.at);
        }
    }

    pub(super) fn keep_login(&self, began: Reading, user: UserRecord) {
        if let Some(mut known) = self.may_keep(began) {
            insert(&mut known.logins, user.login.as_str().to_owned(), user, began.at);
        }
    }

    pub(super) fn keep_person(&self, began: Reading, user: UserRecord) {
        if let Some(mut known) = self.may_keep(began) {
            insert(&mut known.people, user.login.as_str().to_owned(), user, began.at);
        }
    }

    pub(super) fn keep_source(&self, began: Reading, hash: String, source: SourceCaller) {
        if let Some(mut known) = self.may_keep(began) {
            insert(&mut known.sources, hash, source, began.at);
        }
    }

    /// Notes that a kept token's use was just written at `now`.
    pub(super) fn agent_token_used(&self, hash: &str, now: DateTime<Utc>) {
        if let Some((found, _)) = self.lock().agent_tokens.get_mut(hash) {
            found.last_used_at = Some(now);
        }
    }

    /// Forgets what a change heard from another core ended.
    pub(crate) fn forget(&self, ended: &Ended) {
        self.lock().forget(ended);
    }

    /// Whether this memory keeps what is read now.
    #[cfg(feature = "testing")]
    pub(super) fn is_keeping(&self) -> bool {
        self.lock().keeping
    }

    /// Forgets everything, and keeps from now on only if `keeping`.
    fn set_keeping(&self, keeping: bool) {
        let mut known = self.lock();
        known.forget_all();
        known.keeping = keeping;
    }
}

#[cfg(test)]
mod tests {
    use super::listen::WAKE;
    use super::*;
    use hado_domain::fields::SourceName;
    use hado_storage::changes::ChangeFeed;
    use std::sync::Arc;

    fn docs() -> SourceCaller {
        SourceCaller { id: 2, name: SourceName::from_stored("docs".to_owned()) }
    }

    #[test]
    fn a_token_is_kept_until_everything_is_forgotten() {
        let kept = Kept::keeping();
        assert!(kept.source("hash").is_none());
        let began = kept.reading();
        kept.keep_source(began, "hash".into(), docs());
        assert_eq!(kept.source("hash").map(|source| source.id), Some(2));
        kept.forget(&Ended::Everything);
        assert!(kept.source("hash").is_none());
    }

    #[test]
    fn an_access_token_is_kept_only_until_it_expires() {
        let kept = Kept::keeping();
        let expires = DateTime::<Utc>::from_timestamp(3_600, 0).unwrap();
        let token = AccessToken { user: person(1, "anna"), expires_at: expires, grant: 7 };
        kept.keep_access_token(kept.reading(), "hash".into(), token);
        let before = expires - chrono::Duration::seconds(1);
        assert_eq!(kept.access_token("hash", before).map(|user| user.id), Some(1));
        assert!(kept.access_token("hash", expires).is_none(), "not at its expiry");
        kept.forget(&Ended::Everything);
        assert!(kept.access_token("hash", before).is_none());
    }

    /// Memory whose writer is settled once `free` is sent `true`.
    fn until_free() -> (Arc<Kept>, tokio::sync::watch::Sender<bool>) {
        let (free, writer) = tokio::sync::watch::channel(false);
        let kept = Kept::keeping_until(move || {
            let mut writer = writer.clone();
            Box::pin(async move {
                let _ = writer.wait_for(|free| *free).await;
            })
        });
        (Arc::new(kept), free)
    }

    /// A write of a change under way, given up (its future dropped) before
    /// it returned.
    fn give_up(kept: &Arc<Kept>) {
        let write = async {
            let _forget = kept.forgetting();
            std::future::pending::<()>().await;
        };
        let mut write = Box::pin(write);
        let waker = std::task::Waker::noop();
        let polled = write.as_mut().poll(&mut std::task::Context::from_waker(waker));
        assert!(polled.is_pending());
        assert!(kept.source("hash").is_none(), "not used while the write is under way");
        drop(write);
    }

    #[tokio::test]
    async fn a_write_that_landed_forgets_and_keeps_again_at_once() {
        let (kept, _writer_never_free) = until_free();
        kept.keep_source(kept.reading(), "hash".into(), docs());
        let change = kept.forgetting();
        assert!(kept.source("hash").is_none(), "not used while the write is under way");
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_none(), "nor kept");
        change.landed();
        assert!(kept.source("hash").is_none(), "forgotten once it landed");
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_some(), "kept again at once after it");
    }

    #[tokio::test]
    async fn a_write_given_up_keeps_nothing_until_its_commit_has_surely_landed() {
        let (kept, free) = until_free();
        kept.keep_source(kept.reading(), "hash".into(), docs());
        give_up(&kept);
        assert!(kept.source("hash").is_none(), "forgotten once the write is given up");

        // Its commit may still land: what a read finds now may be what it
        // ends. Another given up meanwhile waits on the same task.
        let began = kept.reading();
        kept.keep_source(began, "hash".into(), docs());
        assert!(kept.source("hash").is_none(), "nothing kept until the writer is free");
        give_up(&kept);
        tokio::task::yield_now().await;
        assert_eq!(kept.lock().given_up, 2);
        assert!(kept.lock().settling, "one task waits for both");

        free.send(true).unwrap();
        for _ in 0..1_000 {
            if kept.lock().still() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let known = kept.lock();
        assert!(known.still() && !known.settling, "both end once the writer is free");
        drop(known);
        kept.keep_source(began, "hash".into(), docs());
        assert!(kept.source("hash").is_none(), "a read from before it is not kept");
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_some(), "kept again after it");
    }

    #[test]
    fn a_write_given_up_outside_a_runtime_ends_at_once() {
        let (kept, _writer_never_free) = until_free();
        give_up(&kept);
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_some(), "nothing can wait, so nothing is left waiting");
    }

    fn person(id: i64, login: &str) -> UserRecord {
        UserRecord {
            id,
            login: hado_domain::fields::Login::from_stored(login.into()),
            zone: chrono_tz::UTC,
            zone_chosen: false,
            quiet: hado_domain::checkpoints::QuietHours {
                start: chrono::NaiveTime::MIN,
                end: chrono::NaiveTime::MIN,
            },
            locale: hado_domain::profile::Locale::En,
        }
    }

    #[test]
    fn an_ended_grant_forgets_its_access_tokens_alone() {
        let kept = Arc::new(Kept::keeping());
        let expires = DateTime::<Utc>::from_timestamp(3_600, 0).unwrap();
        let before = expires - chrono::Duration::seconds(1);
        for (hash, grant) in [("first", 1), ("second", 2)] {
            let token = AccessToken { user: person(1, "anna"), expires_at: expires, grant };
            kept.keep_access_token(kept.reading(), hash.into(), token);
        }
        kept.keep_source(kept.reading(), "source".into(), docs());

        // A refresh under grant 1, written on this core.
        let began = kept.reading();
        let refresh = kept.forgetting_grant(1);
        assert!(kept.access_token("second", before).is_none(), "nothing used while it is written");
        refresh.landed();
        assert!(kept.access_token("first", before).is_none(), "grant 1's token is forgotten");
        assert!(kept.access_token("second", before).is_some(), "grant 2's is kept");
        assert!(kept.source("source").is_some(), "and so is everything else");
        let token = AccessToken { user: person(1, "anna"), expires_at: expires, grant: 1 };
        kept.keep_access_token(began, "first".into(), token);
        assert!(kept.access_token("first", before).is_none(), "a read from before is not kept");

        // Heard from another core: only the grants named.
        assert_eq!(Ended::heard("oauth_grants:2,9"), Ended::Grants(vec![2, 9]));
        assert_eq!(Ended::heard("oauth_grants:2,x"), Ended::Everything, "else everything");
        assert_eq!(Ended::heard("sources"), Ended::Everything);
        kept.forget(&Ended::heard("oauth_grants:2,9"));
        assert!(kept.access_token("second", before).is_none());
        assert!(kept.source("source").is_some());
    }

    #[test]
    fn an_agent_token_issued_or_revoked_forgets_its_persons_alone() {
        let kept = Arc::new(Kept::keeping());
        let agent = |id, login| AgentTokenUser { user: person(id, login), last_used_at: None };
        kept.keep_agent_token(kept.reading(), "anna's".into(), agent(1, "anna"));
        kept.keep_agent_token(kept.reading(), "bob's".into(), agent(2, "bob"));
        kept.keep_source(kept.reading(), "source".into(), docs());
        kept.keep_login(kept.reading(), person(1, "anna"));
        kept.keep_person(kept.reading(), person(2, "bob"));
        let expires = DateTime::<Utc>::from_timestamp(3_600, 0).unwrap();
        let app = AccessToken { user: person(1, "anna"), expires_at: expires, grant: 1 };
        kept.keep_access_token(kept.reading(), "app".into(), app);
        let before = expires - chrono::Duration::seconds(1);

        // Anna's new token, written on this core.
        let began = kept.reading();
        let issue = kept.forgetting_agent_token(1);
        assert!(kept.agent_token("bob's").is_none(), "nothing used while it is written");
        issue.landed();
        assert!(kept.agent_token("anna's").is_none(), "anna's old token is forgotten");
        assert!(kept.agent_token("bob's").is_some(), "bob's is kept");
        assert!(kept.source("source").is_some(), "and so is everything else");
        assert!(kept.login("anna").is_some() && kept.person("bob").is_some());
        assert!(kept.access_token("app", before).is_some(), "anna's app's token included");
        kept.keep_agent_token(began, "anna's".into(), agent(1, "anna"));
        assert!(kept.agent_token("anna's").is_none(), "a read from before is not kept");

        // Heard from another core: only the people named.
        assert_eq!(Ended::heard("agent_tokens_of:2,7"), Ended::AgentTokensOf(vec![2, 7]));
        for garbled in ["agent_tokens_of:", "agent_tokens_of:1,,2", "agent_tokens_of: 1", "x:1"] {
            assert_eq!(Ended::heard(garbled), Ended::Everything, "{garbled} forgets everything");
        }
        assert_eq!(Ended::heard("agent_tokens"), Ended::Everything);
        kept.forget(&Ended::heard("agent_tokens_of:2,7"));
        assert!(kept.agent_token("bob's").is_none());
        assert!(kept.source("source").is_some());
    }

    #[test]
    fn a_source_writing_for_thousands_does_not_push_out_the_callers() {
        let kept = Kept::keeping();
        kept.keep_login(kept.reading(), person(1, "anna"));
        for id in 2..=(2 * MOST as i64) {
            kept.keep_person(kept.reading(), person(id, &format!("person{id}")));
        }
        assert_eq!(kept.login("anna").map(|user| user.id), Some(1), "the caller is still kept");
        assert_eq!(kept.person("anna").map(|user| user.id), Some(1), "and found for a source");
        let last = format!("person{}", 2 * MOST);
        assert!(kept.person(&last).is_some(), "a source's last person is kept");
        assert!(kept.login(&last).is_none(), "as a source's, not as a caller");
    }

    #[test]
    fn a_read_that_began_before_a_change_is_not_kept() {
        let kept = Kept::keeping();
        let began = kept.reading();
        kept.forget(&Ended::Everything);
        kept.keep_source(began, "old".into(), docs());
        assert!(kept.source("old").is_none());
    }

    #[test]
    fn nothing_is_kept_while_not_listening() {
        let kept = Kept::default();
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_none());
        kept.set_keeping(true);
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_some());
        kept.set_keeping(false);
        assert!(kept.source("hash").is_none(), "a lost listener forgets what was kept");
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_none());
    }

    #[test]
    fn a_token_read_longer_ago_than_kept_is_read_again() {
        let kept = Kept::keeping();
        kept.keep_source(kept.reading(), "hash".into(), docs());
        let read = Instant::now().checked_sub(KEPT).expect("the clock has run longer than KEPT");
        kept.lock().sources.get_mut("hash").unwrap().1 = read;
        assert!(kept.source("hash").is_none());
    }

    /// A way to Postgres that a test can slow: each connection it takes
    /// waits `delay` before it is passed on. Frozen, it passes nothing on
    /// and closes nothing, as a connection that died without a word.
    struct SlowWay {
        port: u16,
        delay: Arc<std::sync::atomic::AtomicU64>,
        frozen: Arc<std::sync::atomic::AtomicBool>,
    }

    /// Copies `from` into `to` until either ends, throwing the bytes away
    /// while `frozen`.
    async fn pass_on(
        mut from: tokio::net::tcp::OwnedReadHalf,
        mut to: tokio::net::tcp::OwnedWriteHalf,
        frozen: Arc<std::sync::atomic::AtomicBool>,
    ) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut buffer = vec![0; 16 * 1024];
        while let Ok(read @ 1..) = from.read(&mut buffer).await {
            if frozen.load(std::sync::atomic::Ordering::SeqCst) {
                continue;
            }
            if to.write_all(&buffer[..read]).await.is_err() {
                return;
            }
        }
    }

    impl SlowWay {
        async fn to(host: String, port: u16) -> Self {
            let way = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let delay = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let frozen = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let slow = Self {
                port: way.local_addr().unwrap().port(),
                delay: delay.clone(),
                frozen: frozen.clone(),
            };
            tokio::spawn(async move {
                while let Ok((client, _)) = way.accept().await {
                    let (host, delay, frozen) = (host.clone(), delay.clone(), frozen.clone());
                    tokio::spawn(async move {
                        let wait = delay.load(std::sync::atomic::Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(wait)).await;
                        let server = tokio::net::TcpStream::connect((host, port)).await?;
                        let (client_in, client_out) = client.into_split();
                        let (server_in, server_out) = server.into_split();
                        tokio::join!(
                            pass_on(client_in, server_out, frozen.clone()),
                            pass_on(server_in, client_out, frozen),
                        );
                        std::io::Result::Ok(())
                    });
                }
            });
            slow
        }

        fn slow_down(&self, by: Duration) {
            let millis = u64::try_from(by.as_millis()).unwrap();
            self.delay.store(millis, std::sync::atomic::Ordering::SeqCst);
        }

        fn freeze(&self, frozen: bool) {
            self.frozen.store(frozen, std::sync::atomic::Ordering::SeqCst);
        }
    }

    async fn until(what: &str, within: Duration, check: impl Fn() -> bool) {
        let started = Instant::now();
        while !check() {
            assert!(started.elapsed() < within, "{what}: not after {:?}", started.elapsed());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A fresh database, a way to it that the test can slow or freeze, and
    /// a memory listening through that way.
    async fn listening_through_a_way(
        backend: &hado_testing::Backend,
    ) -> (hado_testing::TestDatabase, SlowWay, Arc<Kept>) {
        let database = hado_testing::TestDatabase::create(backend).await;
        let direct = url::Url::parse(&database.url).unwrap();
        let way =
            SlowWay::to(direct.host_str().unwrap().to_owned(), direct.port().unwrap_or(5432)).await;
        let mut slow = direct.clone();
        slow.set_host(Some("127.0.0.1")).unwrap();
        slow.set_port(Some(way.port)).unwrap();
        let kept = Arc::new(Kept::default());
        listen(ChangeFeed::at(slow.as_str()).unwrap(), &kept);
        until("the memory listens", Duration::from_secs(5), || kept.lock().keeping).await;
        (database, way, kept)
    }

    /// The connection drops just before `follow` stops waiting on it, and
    /// listening again takes longer than what is left of the wait: the
    /// core must still forget what it kept, since what changed while it
    /// was down went unheard.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_connection_lost_as_the_wait_ends_still_forgets_what_was_kept() {
        use hado_storage::changes::{CHANNEL, LISTENER_NAME};
        use hado_testing::Backend;
        let Some(backend) =
            Backend::postgres("a_connection_lost_as_the_wait_ends_still_forgets_what_was_kept")
        else {
            return;
        };
        let (database, way, kept) = listening_through_a_way(&backend).await;

        // A change heard starts `follow`'s wait afresh.
        let forgotten = kept.lock().forgotten;
        database.postgres_text(&format!("pg_notify('{CHANNEL}', 'test')")).await;
        until("the change is heard", Duration::from_secs(1), || kept.lock().forgotten > forgotten)
            .await;
        let heard = Instant::now();
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_some());

        // Half a second before the wait ends, the listening connection is
        // cut, and a new connection takes a second to open.
        tokio::time::sleep_until((heard + WAKE - Duration::from_millis(500)).into()).await;
        way.slow_down(Duration::from_secs(1));
        let ended = database
            .postgres_text(&format!(
                "SELECT bool_or(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = current_database() AND application_name = '{LISTENER_NAME}'"
            ))
            .await;
        assert_eq!(ended, "true", "the listening connection was there to end");
        until("a core that lost its listener forgets", Duration::from_secs(3), || {
            kept.source("hash").is_none()
        })
        .await;
        until("it listens again", Duration::from_secs(5), || kept.lock().keeping).await;

        drop(kept);
        database.drop_now().await;
    }

    /// The listening connection stops carrying anything and is never
    /// closed (a half-open connection, a NAT that forgot it, a pooler that
    /// delivers no notice): the unanswered heartbeat gives it away, and the
    /// core keeps nothing until it listens again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_connection_that_dies_without_a_word_is_noticed_by_its_heartbeat() {
        use hado_testing::Backend;
        let Some(backend) =
            Backend::postgres("a_connection_that_dies_without_a_word_is_noticed_by_its_heartbeat")
        else {
            return;
        };
        let (database, way, kept) = listening_through_a_way(&backend).await;
        kept.keep_source(kept.reading(), "hash".into(), docs());

        // A heartbeat goes out after a quiet wake and must come back within
        // the next, so a silent death is noticed within three wakes.
        way.freeze(true);
        until("a core whose listener went silent keeps nothing", WAKE * 3, || {
            !kept.lock().keeping && kept.source("hash").is_none()
        })
        .await;
        way.freeze(false);
        until("it listens again", WAKE * 2, || kept.lock().keeping).await;

        drop(kept);
        database.drop_now().await;
    }

    #[test]
    fn the_memory_stays_bounded() {
        let kept = Kept::keeping();
        for index in 0..MOST * 3 {
            kept.keep_source(kept.reading(), format!("hash-{index}"), docs());
        }
        assert!(kept.lock().sources.len() <= MOST);
    }
}
