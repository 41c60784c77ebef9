//! Owns who may hold a connection: every open connection by client
//! address, the caps on them in all and per address, and the requests open
//! at once per client behind a trusted proxy. Past a cap, the oldest
//! connection that has not yet sent a whole request makes room; only when
//! there is none is the newcomer refused. What each connection is doing
//! (`Activity`) lives here too, since the caps read it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::Limits;
use crate::proxies::TrustedProxies;

/// What a connection is doing: requests open now, and when one last
/// started or finished (milliseconds since the connection began). A
/// connection is idle when no request is open and none has moved for the
/// idle timeout; bytes alone do not count, since HTTP/2 keep-alive pings
/// flow on a connection that carries no requests.
pub(super) struct Activity {
    pub(super) started: Instant,
    open_requests: AtomicUsize,
    last_change: AtomicU64,
    /// Whether a whole request (its headers) has arrived yet.
    requested: AtomicBool,
}

impl Activity {
    pub(super) fn new() -> Self {
        Self {
            started: Instant::now(),
            open_requests: AtomicUsize::new(0),
            last_change: AtomicU64::new(0),
            requested: AtomicBool::new(false),
        }
    }

    pub(super) fn has_requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    pub(super) fn begin_request(&self) {
        self.requested.store(true, Ordering::Relaxed);
        self.open_requests.fetch_add(1, Ordering::Relaxed);
        self.touch();
    }

    pub(super) fn end_request(&self) {
        self.touch();
        self.open_requests.fetch_sub(1, Ordering::Relaxed);
    }

    fn touch(&self) {
        self.last_change.store(self.started.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// How long the connection has had no request open, or zero while one is.
    pub(super) fn idle_for(&self) -> Duration {
        if self.open_requests.load(Ordering::Relaxed) > 0 {
            return Duration::ZERO;
        }
        self.started
            .elapsed()
            .saturating_sub(Duration::from_millis(self.last_change.load(Ordering::Relaxed)))
    }
}

/// Every open connection, by client address, and the requests open now
/// per client behind a trusted proxy.
pub(super) struct Registry {
    limits: Limits,
    pub(super) proxies: TrustedProxies,
    state: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    next_id: u64,
    connections: HashMap<u64, Held>,
    per_address: HashMap<IpAddr, usize>,
    proxied_requests: HashMap<IpAddr, usize>,
}

/// One open connection as the registry sees it.
struct Held {
    address: Option<IpAddr>,
    activity: Arc<Activity>,
    /// Cancelled to close the connection and make room.
    evict: CancellationToken,
}

/// A connection's place in the registry, given up when it ends.
pub(super) struct Entry {
    pub(super) registry: Arc<Registry>,
    id: u64,
    pub(super) activity: Arc<Activity>,
    pub(super) evict: CancellationToken,
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.registry.close(self.id);
    }
}

impl Registry {
    pub(super) fn new(limits: Limits, proxies: TrustedProxies) -> Self {
        Self { limits, proxies, state: Mutex::new(Open::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Admits a connection from `peer`, making room past a cap by evicting
    /// the oldest connection (of that address, or of anyone) that has not
    /// yet sent a whole request; `None` when there is no room to make.
    pub(super) fn open(self: &Arc<Self>, peer: IpAddr) -> Option<Entry> {
        // A trusted proxy carries many clients' requests over a few
        // connections; its requests are counted per client instead.
        let address = (!self.proxies.trusts(peer)).then_some(peer);
        let mut open = self.lock();
        if let Some(address) = address
            && open.per_address.get(&address).copied().unwrap_or(0) >= self.limits.max_per_address
        {
            open.evict_oldest_unused(Some(address))?;
        }
        if open.connections.len() >= self.limits.max_connections {
            open.evict_oldest_unused(None)?;
        }
        open.next_id += 1;
        let id = open.next_id;
        let activity = Arc::new(Activity::new());
        let evict = CancellationToken::new();
        open.connections
            .insert(id, Held { address, activity: activity.clone(), evict: evict.clone() });
        if let Some(address) = address {
            *open.per_address.entry(address).or_default() += 1;
        }
        Some(Entry { registry: self.clone(), id, activity, evict })
    }

    fn close(&self, id: u64) {
        let mut open = self.lock();
        open.forget(id);
    }

    /// Counts a request from `client` behind a trusted proxy; `None` when
    /// that client already has as many open as a connection cap allows.
    pub(super) fn proxied_request(self: &Arc<Self>, client: IpAddr) -> Option<ProxiedRequest> {
        let mut open = self.lock();
        let count = open.proxied_requests.entry(client).or_default();
        if *count >= self.limits.max_per_address {
            return None;
        }
        *count += 1;
        Some(ProxiedRequest { registry: self.clone(), client })
    }
}

impl Open {
    /// Closes the oldest connection of `address` (or of anyone) that has
    /// not yet sent a whole request. Such a connection is either a client
    /// that has just connected, or one holding a socket without using it;
    /// the oldest is the most likely to be the second.
    fn evict_oldest_unused(&mut self, address: Option<IpAddr>) -> Option<()> {
        let (&id, _) = self
            .connections
            .iter()
            .filter(|(_, held)| {
                address.is_none_or(|address| held.address == Some(address))
                    && !held.activity.has_requested()
            })
            .min_by_key(|(id, _)| **id)?;
        if let Some(held) = self.connections.get(&id) {
            held.evict.cancel();
        }
        metrics::counter!("hado_http_connections_evicted_total").increment(1);
        self.forget(id);
        Some(())
    }

    fn forget(&mut self, id: u64) {
        let Some(held) = self.connections.remove(&id) else { return };
        if let Some(address) = held.address
            && let Some(count) = self.per_address.get_mut(&address)
        {
            *count -= 1;
            if *count == 0 {
                self.per_address.remove(&address);
            }
        }
    }
}

/// A request counted against its client behind a trusted proxy.
pub(super) struct ProxiedRequest {
    registry: Arc<Registry>,
    client: IpAddr,
}

impl Drop for ProxiedRequest {
    fn drop(&mut self) {
        let mut open = self.registry.lock();
        if let Some(count) = open.proxied_requests.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                open.proxied_requests.remove(&self.client);
            }
        }
    }
}
