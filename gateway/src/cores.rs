//! Owns which core a gateway's call goes to: every address core's name
//! resolves to is a member with its own lazily connected channel; calls
//! take turns over the members that answer; a member whose call fails at
//! the transport is set aside until its health check answers again; and a
//! call that failed at the transport is sent to another member when that
//! is safe: always when it never reached a core, and after it may have
//! reached one only when repeating it changes nothing (a read, an upsert by
//! its key, a state set to a value, or a `CreateEvent` that carries an
//! `idempotency-key`, which core honours). A refusal core gave before
//! starting the call (`hado-not-started`: its storage looked down) is sent
//! to another member too, and so, once and within a budget, is a repeatable
//! call core answered UNAVAILABLE after starting it, marked
//! `hado-storage-failed`: its storage failed under it (its connections to a
//! database that just restarted still hang, where another core's do not).
//!
//! Written here rather than taken from tower's balancer, which tonic's
//! `balance_channel` wraps: that one neither says which address failed nor
//! lets a call be repeated on another, and both are the point.

use std::error::Error as _;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hado_proto::metadata::NOT_STARTED;
use http_body_util::{BodyExt, Full};
use tonic::body::Body;
use tonic::transport::Channel;
use tower::ServiceExt;
use tower::retry::budget::{Budget as _, TpsBudget};

mod again;

pub use again::once;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Finds the addresses of a host and port: DNS in a gateway, a fixed list
/// in tests.
pub type Resolve = Arc<
    dyn Fn(String, u16) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<SocketAddr>>> + Send>>
        + Send
        + Sync,
>;

/// The system's resolver.
pub fn dns() -> Resolve {
    Arc::new(|host, port| {
        Box::pin(async move { Ok(tokio::net::lookup_host((host.as_str(), port)).await?.collect()) })
    })
}

/// How often members that failed are asked whether they answer again.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a call waits for core's name to resolve the first time.
const FIRST_ADDRESSES: Duration = Duration::from_secs(3);

/// One core address and its channel.
#[derive(Debug)]
struct Member {
    address: String,
    channel: Channel,
    /// Set when a call to it failed at the transport; cleared when its
    /// health check answers.
    set_aside: AtomicBool,
}

impl Member {
    fn set_aside(&self, error: &BoxError) {
        if !self.set_aside.swap(true, Ordering::Relaxed) {
            // The whole chain: tonic's own words are only "transport error".
            let mut why = error.to_string();
            let mut source = error.source();
            while let Some(cause) = source {
                why = format!("{why}: {cause}");
                source = cause.source();
            }
            tracing::warn!(core = %self.address, error = %why, "a core stopped answering; calls go to the others until it answers again");
        }
    }
}

#[derive(Debug, Default)]
struct Members {
    list: RwLock<Vec<Arc<Member>>>,
    turn: AtomicUsize,
    /// Told when the list changes, for the calls that wait for core's name
    /// to resolve the first time.
    changed: tokio::sync::Notify,
}

/// The cores a gateway calls, as one tonic transport: generated clients
/// are built over it as over a `Channel`.
#[derive(Clone, Debug)]
pub struct CoreChannel {
    members: Arc<Members>,
    /// How many calls that core started and could not store may be sent
    /// again: a fifth of Hado's calls over the last 10 s, plus a reserve of
    /// 100 in any 10 s (tower's `TpsBudget`), so that a database that fails
    /// every core's calls, or a pool swamped by a flood, is not asked twice
    /// for each of them.
    again: Arc<TpsBudget>,
}

impl CoreChannel {
    /// One core at one address (an IP address, or a name over TLS).
    pub(crate) fn single(address: &str, channel: Channel) -> Self {
        let this = Self::empty();
        this.members.list.write().expect("members lock").push(Arc::new(Member {
            address: address.to_owned(),
            channel,
            set_aside: AtomicBool::new(false),
        }));
        this.watch();
        this
    }

    fn empty() -> Self {
        Self {
            members: Arc::new(Members::default()),
            again: Arc::new(TpsBudget::new(Duration::from_secs(10), 10, 0.2)),
        }
    }

    /// The cores `host` resolves to: asked again every `every`, so that new
    /// replicas join and stopped ones leave. A failed or empty answer keeps
    /// what was there. `connect` makes one address's channel.
    pub(crate) fn resolving(
        host: String,
        port: u16,
        resolve: Resolve,
        every: Duration,
        connect: fn(SocketAddr) -> Option<Channel>,
    ) -> Self {
        let this = Self::empty();
        let members = Arc::downgrade(&this.members);
        tokio::spawn(async move {
            loop {
                let found = resolve(host.clone(), port).await;
                let Some(members) = members.upgrade() else { return };
                match found {
                    Ok(found) if !found.is_empty() => {
                        if set_addresses(&members, &found, connect) {
                            members.changed.notify_waiters();
                            tracing::info!(%host, addresses = found.len(), "core's addresses changed");
                        }
                    }
                    Ok(_) => {
                        tracing::warn!(%host, "core's name resolved to no address; keeping the ones known")
                    }
                    Err(error) => {
                        tracing::warn!(%host, %error, "could not resolve core's name; keeping the addresses known")
                    }
                }
                drop(members);
                tokio::time::sleep(every).await;
            }
        });
        this.watch();
        this
    }

    /// How many cores it knows.
    pub fn len(&self) -> usize {
        self.members.list.read().expect("members lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Asks every set-aside member's health check each [`PROBE_EVERY`];
    /// one that answers (serving or not: it is reachable) takes calls again.
    /// Ends when the last clone of this channel is dropped.
    fn watch(&self) {
        let members: Weak<Members> = Arc::downgrade(&self.members);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(PROBE_EVERY).await;
                let Some(members) = members.upgrade() else { return };
                let aside: Vec<Arc<Member>> = members
                    .list
                    .read()
                    .expect("members lock")
                    .iter()
                    .filter(|member| member.set_aside.load(Ordering::Relaxed))
                    .cloned()
                    .collect();
                for member in aside {
                    if answers(&member.channel).await {
                        member.set_aside.store(false, Ordering::Relaxed);
                        tracing::info!(core = %member.address, "a core answers again and takes calls");
                    }
                }
            }
        });
    }

    /// The member a call goes to first, taking its turn.
    fn first(&self) -> Option<Arc<Member>> {
        self.choose(&[], true)
    }

    /// The member a call goes on to after those it `tried`, without taking
    /// a turn: a call sent on after a failure leaves the next call its
    /// turn, so a failing member gets its share of first tries and no more.
    fn after(&self, tried: &[Arc<Member>]) -> Option<Arc<Member>> {
        self.choose(tried, false)
    }

    /// A member that answers and was not tried yet (by address, as one
    /// that left and came back is a new member), by the turn, which it
    /// moves on only with `take_turn`; when every untried member is set
    /// aside, one of those (a lone core that restarted answers before its
    /// probe says so).
    fn choose(&self, tried: &[Arc<Member>], take_turn: bool) -> Option<Arc<Member>> {
        let list = self.members.list.read().expect("members lock");
        let untried: Vec<&Arc<Member>> = list
            .iter()
            .filter(|member| !tried.iter().any(|done| done.address == member.address))
            .collect();
        let answering: Vec<&Arc<Member>> = untried
            .iter()
            .copied()
            .filter(|member| !member.set_aside.load(Ordering::Relaxed))
            .collect();
        let choices = if answering.is_empty() { untried } else { answering };
        if choices.is_empty() {
            return None;
        }
        let turn = if take_turn {
            self.members.turn.fetch_add(1, Ordering::Relaxed)
        } else {
            self.members.turn.load(Ordering::Relaxed)
        };
        Some(Arc::clone(choices[turn % choices.len()]))
    }

    /// Right after start, core's name may not have been resolved yet: waits
    /// until it is, for [`FIRST_ADDRESSES`] at most.
    async fn first_addresses(&self) {
        let deadline = tokio::time::Instant::now() + FIRST_ADDRESSES;
        loop {
            // Listening before looking, so that a change in between is not missed.
            let changed = self.members.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if !self.is_empty() || tokio::time::timeout_at(deadline, changed).await.is_err() {
                return;
            }
        }
    }

    async fn send(self, request: http::Request<Body>) -> Result<http::Response<Body>, BoxError> {
        let (parts, body) = request.into_parts();
        let repeatable = again::repeatable(&parts);
        // Unary and server-streaming calls send one message: kept, so that
        // it can be sent again.
        let body: Bytes = body.collect().await?.to_bytes();
        self.first_addresses().await;
        let mut tried: Vec<Arc<Member>> = Vec::new();
        let mut repeated_unavailable = false;
        let Some(mut member) = self.first() else {
            return Err(Box::new(tonic::Status::unavailable(
                "no address of core is known: its name has not resolved to any",
            )));
        };
        // Hado's calls count toward what may be sent again; `/up`'s health
        // checks, which anyone may ask for, do not.
        if parts.uri.path().starts_with("/hado.v1.") {
            self.again.deposit();
        }
        // Each failure that may go on names the member it goes on to, chosen
        // once: the list may change meanwhile.
        loop {
            let mut request = http::Request::new(Body::new(Full::new(body.clone())));
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.version_mut() = parts.version;
            *request.headers_mut() = parts.headers.clone();
            *request.extensions_mut() = parts.extensions.clone();
            match member.channel.clone().oneshot(request).await {
                // A core that refused before doing anything (its view of
                // storage is down): another may see it up.
                Ok(response) if response.headers().contains_key(NOT_STARTED) => {
                    tried.push(member);
                    match self.after(&tried) {
                        Some(next) => member = next,
                        None => return Ok(response),
                    }
                }
                // Its storage failed under the call: another core's may not.
                // Once only, so that a database down for every core costs a
                // caller at most two of core's waits for a connection; and
                // within the budget.
                Ok(response)
                    if repeatable && !repeated_unavailable && again::storage_failed(&response) =>
                {
                    tried.push(member);
                    let Some(next) = self.after(&tried) else { return Ok(response) };
                    if !self.again.withdraw() {
                        return Ok(response);
                    }
                    member = next;
                    repeated_unavailable = true;
                    tracing::debug!(
                        path = parts.uri.path(),
                        "repeating on another core a call core could not store"
                    );
                }
                Ok(response) => return Ok(response),
                Err(error) => {
                    let error: BoxError = error.into();
                    member.set_aside(&error);
                    tried.push(member);
                    let sent = !again::never_sent(&*error);
                    if sent && !repeatable {
                        return Err(error);
                    }
                    let Some(next) = self.after(&tried) else { return Err(error) };
                    member = next;
                    tracing::debug!(path = parts.uri.path(), %error, "repeating a call on another core");
                }
            }
        }
    }
}

/// Makes the members these addresses, keeping the channel of every address
/// that stays; whether anything changed.
fn set_addresses(
    members: &Members,
    addresses: &[SocketAddr],
    connect: fn(SocketAddr) -> Option<Channel>,
) -> bool {
    let mut list = members.list.write().expect("members lock");
    let named: Vec<String> = addresses.iter().map(ToString::to_string).collect();
    let before = list.len();
    list.retain(|member| named.contains(&member.address));
    let mut changed = list.len() != before;
    for (address, name) in addresses.iter().zip(&named) {
        if list.iter().any(|member| &member.address == name) {
            continue;
        }
        if let Some(channel) = connect(*address) {
            list.push(Arc::new(Member {
                address: name.clone(),
                channel,
                set_aside: AtomicBool::new(false),
            }));
            changed = true;
        }
    }
    changed
}

/// Whether a core answers its health check at all.
async fn answers(channel: &Channel) -> bool {
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let mut client = HealthClient::new(channel.clone());
    let check = client.check(HealthCheckRequest { service: String::new() });
    // Any answer from core counts, NOT_SERVING and refusals too: only a
    // failed transport means it cannot be reached.
    match tokio::time::timeout(PROBE_TIMEOUT, check).await {
        Ok(Ok(_)) => true,
        Ok(Err(status)) => {
            !status.source().is_some_and(|source| source.is::<tonic::transport::Error>())
        }
        Err(_) => false,
    }
}

impl tower::Service<http::Request<Body>> for CoreChannel {
    type Response = http::Response<Body>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        Box::pin(self.clone().send(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lazy(address: SocketAddr) -> Option<Channel> {
        Some(Channel::from_shared(format!("http://{address}")).ok()?.connect_lazy())
    }

    #[tokio::test]
    async fn a_core_tried_is_not_tried_again_after_it_left_and_came_back() {
        let (a, b) = (SocketAddr::from(([127, 0, 0, 1], 1)), SocketAddr::from(([127, 0, 0, 1], 2)));
        let cores = CoreChannel::empty();
        set_addresses(&cores.members, &[a], lazy);
        let tried = vec![cores.first().expect("a member")];
        set_addresses(&cores.members, &[b], lazy);
        set_addresses(&cores.members, &[a], lazy);
        assert!(cores.after(&tried).is_none(), "the same core, as a new member, was left to try");
    }

    #[tokio::test]
    async fn only_a_calls_first_try_takes_a_turn() {
        let addresses: Vec<SocketAddr> =
            (1..=3).map(|port| SocketAddr::from(([127, 0, 0, 1], port))).collect();
        let cores = CoreChannel::empty();
        set_addresses(&cores.members, &addresses, lazy);
        let first = cores.first().expect("a member");
        let next = cores.after(std::slice::from_ref(&first)).expect("another member");
        assert_ne!(first.address, next.address);
        // The call sent on took no turn: the next call goes to the member
        // after the first one, and the three take turns.
        let seen: Vec<String> =
            (0..3).map(|_| cores.first().expect("a member").address.clone()).collect();
        assert_eq!(seen, ["127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:1"]);
    }

    #[tokio::test]
    async fn a_first_call_waits_for_the_name_to_resolve_and_no_longer() {
        let resolve: Resolve = Arc::new(|_, port| {
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
            })
        });
        let cores =
            CoreChannel::resolving("cores.test".into(), 1, resolve, Duration::from_secs(60), lazy);
        let started = tokio::time::Instant::now();
        cores.first_addresses().await;
        assert_eq!(cores.len(), 1, "the address it resolved to");
        assert!(
            started.elapsed() < FIRST_ADDRESSES / 2,
            "told when the name resolved, not at the deadline: {:?}",
            started.elapsed()
        );
    }
}
