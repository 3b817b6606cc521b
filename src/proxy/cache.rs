//! A byte-bounded, least-recently-used in-memory cache of immutable files (packs), shared by
//! every connection. Only whole files whose bytes match their name's hash go in, so nothing an
//! upstream changes or truncates is ever served from it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

/// The cache: at most `capacity` bytes of file contents (keys and bookkeeping are not counted:
/// a few hundred bytes a file, and files are ~1 MB packs).
pub struct ByteLru {
    capacity: u64,
    state: Mutex<State>,
    /// Bytes being collected from the upstream on their way in (see [`ByteLru::reserve`]).
    collecting: Arc<AtomicU64>,
}

/// Room held for a file being collected; given back when dropped (the file complete, failed, or
/// its client gone).
pub struct Reservation {
    collecting: Arc<AtomicU64>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.collecting.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct State {
    used: u64,
    /// Key → contents and the tick of its last use.
    entries: HashMap<String, (Bytes, u64)>,
    /// Tick of last use → key: the first is the least recently used.
    by_use: BTreeMap<u64, String>,
    next_tick: u64,
}

impl ByteLru {
    pub fn new(capacity: u64) -> ByteLru {
        ByteLru { capacity, state: Mutex::new(State::default()), collecting: Arc::new(AtomicU64::new(0)) }
    }

    /// Room to collect a file of `size` bytes for the cache, if it [`admits`](Self::admits) it and
    /// the files being collected at once stay within the cache's capacity: many clients missing
    /// many packs at once never buffer more than that.
    pub fn reserve(&self, size: u64) -> Option<Reservation> {
        if !self.admits(size) {
            return None;
        }
        let previous = self.collecting.fetch_add(size, Ordering::SeqCst);
        let reservation = Reservation { collecting: Arc::clone(&self.collecting), bytes: size };
        (previous + size <= self.capacity).then_some(reservation)
    }

    /// Whether a file of `size` bytes may go in: at most a quarter of the cache, so one file
    /// never evicts everything else.
    pub fn admits(&self, size: u64) -> bool {
        size <= self.capacity / 4
    }

    /// The contents under `key`, marked as just used.
    pub fn get(&self, key: &str) -> Option<Bytes> {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let tick = state.tick();
        let (bytes, last_use) = state.entries.get_mut(key)?;
        let (bytes, previous) = (bytes.clone(), std::mem::replace(last_use, tick));
        state.by_use.remove(&previous);
        state.by_use.insert(tick, key.to_owned());
        Some(bytes)
    }

    /// Stores `bytes` under `key` (if [`admits`](Self::admits) allows), evicting the least
    /// recently used files until it fits.
    pub fn insert(&self, key: &str, bytes: Bytes) {
        let size = bytes.len() as u64;
        if !self.admits(size) {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        state.remove(key);
        while state.used + size > self.capacity {
            let Some((_, oldest)) = state.by_use.pop_first() else { break };
            state.remove(&oldest);
        }
        let tick = state.tick();
        state.used += size;
        state.entries.insert(key.to_owned(), (bytes, tick));
        state.by_use.insert(tick, key.to_owned());
    }

    /// Bytes held now.
    pub fn used(&self) -> u64 {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).used
    }
}

impl State {
    fn tick(&mut self) -> u64 {
        self.next_tick += 1;
        self.next_tick
    }

    fn remove(&mut self, key: &str) {
        if let Some((bytes, tick)) = self.entries.remove(key) {
            self.used -= bytes.len() as u64;
            self.by_use.remove(&tick);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize) -> Bytes {
        Bytes::from(vec![7u8; n])
    }

    #[test]
    fn evicts_the_least_recently_used_to_stay_within_its_bytes() {
        let cache = ByteLru::new(100);
        cache.insert("a", bytes(25));
        cache.insert("b", bytes(25));
        cache.insert("c", bytes(25));
        cache.insert("d", bytes(25));
        assert_eq!(cache.used(), 100);
        assert!(cache.get("a").is_some(), "a is now the most recently used");
        cache.insert("e", bytes(20));
        assert!(cache.get("b").is_none(), "b was the least recently used");
        assert_eq!(cache.used(), 95);
        for key in ["a", "c", "d", "e"] {
            assert!(cache.get(key).is_some(), "{key}");
        }
        cache.insert("f", bytes(25));
        cache.insert("g", bytes(25));
        assert_eq!(cache.used(), 95, "a, c evicted in order of use: {}", cache.used());
        assert!(cache.get("a").is_none() && cache.get("c").is_none());
        assert_eq!(cache.get("g").unwrap().len(), 25);
    }

    #[test]
    fn collects_at_most_its_capacity_at_once() {
        let cache = ByteLru::new(100);
        let first = cache.reserve(25).unwrap();
        let held: Vec<_> = (0..3).map(|_| cache.reserve(25).unwrap()).collect();
        assert!(cache.reserve(1).is_none(), "100 bytes are being collected");
        assert!(cache.reserve(26).is_none(), "over a quarter");
        drop(first);
        assert!(cache.reserve(25).is_some(), "room given back");
        drop(held);
        assert_eq!(cache.collecting.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn refuses_files_over_a_quarter_and_replaces_a_key() {
        let cache = ByteLru::new(100);
        cache.insert("big", bytes(26));
        assert!(cache.get("big").is_none());
        assert_eq!(cache.used(), 0);
        cache.insert("k", bytes(10));
        cache.insert("k", bytes(20));
        assert_eq!(cache.used(), 20);
        assert_eq!(cache.get("k").unwrap().len(), 20);
    }
}
