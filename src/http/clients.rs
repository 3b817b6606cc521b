//! The connections a server holds, by client address: at most [`Limits::max_connections`] in
//! all and [`Limits::max_connections_per_client`] from one address. When a bound is reached, a
//! new connection takes the place of the longest-idle one (a connection waiting for a request),
//! of its own address first: idle sockets, however many, can never keep a client that sends a
//! request out, and one address can never fill the server.
//!
//! [`Limits::max_connections`]: super::Limits::max_connections
//! [`Limits::max_connections_per_client`]: super::Limits::max_connections_per_client

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, oneshot};

/// How long a connection that answered a request must have been idle before it is closed for
/// room: the end of its last response may still be on its way out of the server's buffers.
const AFTER_A_RESPONSE: Duration = Duration::from_secs(2);

/// The registry, shared by the accept loop and every connection.
pub(crate) struct Clients {
    max_connections: usize,
    max_per_client: usize,
    state: Mutex<State>,
    /// Woken when a connection ends or turns idle: the accept loop may have room again.
    room: Notify,
}

#[derive(Default)]
struct State {
    next_id: u64,
    next_tick: u64,
    connections: HashMap<u64, Connection>,
    per_address: HashMap<IpAddr, usize>,
    /// Tick at which a connection turned idle → its id: the first is the longest idle.
    idle: BTreeMap<u64, u64>,
}

struct Connection {
    address: IpAddr,
    /// The tick at which it turned idle, while it waits for a request.
    idle_since: Option<u64>,
    /// When its last response ended, if it answered one.
    answered_at: Option<Instant>,
    /// Dropping it tells the connection's task to close.
    _close: oneshot::Sender<()>,
}

/// A connection's place in the registry: given back when dropped.
pub(crate) struct Admitted {
    clients: Arc<Clients>,
    id: u64,
}

/// Marks a connection busy with a request for as long as it lives (the response being written).
pub(crate) struct Busy {
    clients: Arc<Clients>,
    id: u64,
}

impl Clients {
    pub(crate) fn new(max_connections: usize, max_per_client: usize) -> Arc<Clients> {
        let max_connections = max_connections.max(1);
        Arc::new(Clients {
            max_connections,
            max_per_client: max_per_client.clamp(1, max_connections),
            state: Mutex::new(State::default()),
            room: Notify::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Returns once a new connection could be admitted: below the bound, or with an idle
    /// connection to close for it. Until then new connections wait in the kernel's backlog.
    pub(crate) async fn room(&self) {
        loop {
            let woken = self.room.notified();
            {
                let state = self.state();
                if state.connections.len() < self.max_connections || state.longest_idle(None).is_some() {
                    return;
                }
            }
            // A connection that just answered becomes closable with time alone, unannounced.
            let _ = tokio::time::timeout(AFTER_A_RESPONSE, woken).await;
        }
    }

    /// Admits a connection from `address`, closing the longest-idle one of that address when it
    /// holds its share, or the longest-idle one of all when the server is full. `None` when
    /// nothing idle can make room: the new connection is to be closed. The receiver resolves
    /// when the connection is to close.
    pub(crate) fn admit(self: &Arc<Self>, address: IpAddr) -> Option<(Admitted, oneshot::Receiver<()>)> {
        let mut state = self.state();
        if state.per_address.get(&address).copied().unwrap_or(0) >= self.max_per_client {
            state.close_longest_idle(Some(address))?;
        }
        if state.connections.len() >= self.max_connections {
            state.close_longest_idle(None)?;
        }
        let (close, closed) = oneshot::channel();
        let id = state.next_id;
        state.next_id += 1;
        let tick = state.tick();
        state.connections.insert(id, Connection { address, idle_since: Some(tick), answered_at: None, _close: close });
        state.idle.insert(tick, id);
        *state.per_address.entry(address).or_default() += 1;
        Some((Admitted { clients: Arc::clone(self), id }, closed))
    }

    /// Connections held now, and those from `address`.
    #[cfg(test)]
    fn held(&self, address: IpAddr) -> (usize, usize) {
        let state = self.state();
        (state.connections.len(), state.per_address.get(&address).copied().unwrap_or(0))
    }
}

impl Admitted {
    /// Marks the connection busy until the returned guard is dropped: it is not closed for
    /// room meanwhile.
    pub(crate) fn busy(&self) -> Busy {
        let mut state = self.clients.state();
        if let Some(since) = state.connections.get_mut(&self.id).and_then(|c| c.idle_since.take()) {
            state.idle.remove(&since);
        }
        Busy { clients: Arc::clone(&self.clients), id: self.id }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.clients.state().remove(self.id);
        self.clients.room.notify_one();
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.clients.state();
        let tick = state.tick();
        let Some(connection) = state.connections.get_mut(&self.id) else { return };
        if connection.idle_since.is_none() {
            connection.idle_since = Some(tick);
            connection.answered_at = Some(Instant::now());
            state.idle.insert(tick, self.id);
        }
        drop(state);
        self.clients.room.notify_one();
    }
}

impl State {
    fn tick(&mut self) -> u64 {
        self.next_tick += 1;
        self.next_tick
    }

    /// Closes the connection idle longest (of `address` only, if given) that may be closed:
    /// one that never answered a request, or answered its last long enough ago. `None` when
    /// there is none.
    fn close_longest_idle(&mut self, address: Option<IpAddr>) -> Option<()> {
        let id = self.longest_idle(address)?;
        // Dropping the sender wakes the connection's task, which closes the socket.
        self.remove(id);
        Some(())
    }

    /// The connection idle longest (of `address` only, if given) that may be closed.
    fn longest_idle(&self, address: Option<IpAddr>) -> Option<u64> {
        let connections = &self.connections;
        let closable = |connection: &Connection| {
            address.is_none_or(|a| connection.address == a)
                && connection.answered_at.is_none_or(|at| at.elapsed() >= AFTER_A_RESPONSE)
        };
        self.idle.values().copied().find(|id| closable(&connections[id]))
    }

    fn remove(&mut self, id: u64) {
        let Some(connection) = self.connections.remove(&id) else { return };
        if let Some(since) = connection.idle_since {
            self.idle.remove(&since);
        }
        if let Some(count) = self.per_address.get_mut(&connection.address) {
            *count -= 1;
            if *count == 0 {
                self.per_address.remove(&connection.address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_client_or_server_makes_room_by_closing_the_longest_idle() {
        let (one, two): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let clients = Clients::new(4, 2);
        let (first, mut first_closed) = clients.admit(one).unwrap();
        let (second, _second_closed) = clients.admit(one).unwrap();
        let busy = second.busy();
        // `one` holds its share: its longest-idle connection (the first) makes room.
        let (_third, _) = clients.admit(one).unwrap();
        assert_eq!(first_closed.try_recv(), Err(oneshot::error::TryRecvError::Closed), "told to close");
        assert_eq!(clients.held(one), (2, 2));
        drop(first);
        assert_eq!(clients.held(one), (2, 2), "a closed connection is counted once");
        let (_fourth, _) = clients.admit(two).unwrap();
        let (_fifth, _) = clients.admit(two).unwrap();
        // Full: the longest idle of all (`one`'s third) goes; `two`'s own share is full too.
        let (_sixth, mut sixth_closed) = clients.admit("127.0.0.3".parse().unwrap()).unwrap();
        assert_eq!(clients.held(one), (4, 1), "the second, busy, stays");
        assert!(sixth_closed.try_recv().is_err_and(|e| e == oneshot::error::TryRecvError::Empty));
        drop(busy);
    }

    #[test]
    fn a_busy_connection_is_never_closed_for_room() {
        let one: IpAddr = "127.0.0.1".parse().unwrap();
        let clients = Clients::new(2, 2);
        let (a, _) = clients.admit(one).unwrap();
        let (b, _) = clients.admit(one).unwrap();
        let (_busy_a, _busy_b) = (a.busy(), b.busy());
        assert!(clients.admit(one).is_none(), "both busy: no room");
        drop(_busy_a);
        assert!(clients.admit(one).is_none(), "a just answered: its response may be still going out");
        let mut state = clients.state();
        let a_id = *state.idle.values().next().unwrap();
        state.connections.get_mut(&a_id).unwrap().answered_at = Instant::now().checked_sub(AFTER_A_RESPONSE);
        drop(state);
        assert!(clients.admit(one).is_some(), "a, idle long enough, made room");
    }
}
