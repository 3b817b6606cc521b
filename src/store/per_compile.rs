//! What a table keeps of each compile record (its collectives, its recompile reasons), the values
//! used last in memory and the others serialized to its store's spool: a log's entries name the
//! compile being made, so a value long past is rarely needed again before the table finishes, and
//! a long log's compiles cost no memory.

use indexmap::IndexMap;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::compile_list::CompileList;
use super::packed_rows::{Store, Written};

/// Values kept in memory unless a map says otherwise: the latest used.
pub const LIVE: usize = 16;

/// A value per compile record (an index in `Compiles::records`), made by `V::default()` the first
/// time it is asked for. Values round-trip through postcard, so `V` must not skip fields when it
/// serializes. At most `KEPT` stay in memory (2 in unit tests, so that values spill and come
/// back), all when the store has no spool.
pub struct PerCompile<V, const KEPT: usize = LIVE> {
    /// Values in memory, least recently used first.
    live: IndexMap<u32, V>,
    /// By record: where its value was written last (a live value may have an older copy there;
    /// `Written::NONE`: never written).
    written: CompileList<Written>,
    store: Store,
}

impl<V, const KEPT: usize> Default for PerCompile<V, KEPT> {
    fn default() -> Self {
        PerCompile::new(&Store::default())
    }
}

impl<V, const KEPT: usize> PerCompile<V, KEPT> {
    /// No values yet; values long unused will go to `store`.
    pub fn new(store: &Store) -> Self {
        PerCompile { live: IndexMap::new(), written: CompileList::new(store), store: store.clone() }
    }
}

impl<V: Serialize + DeserializeOwned + Default, const KEPT: usize> PerCompile<V, KEPT> {
    /// Values kept in memory.
    const KEPT: usize = if cfg!(test) { if KEPT < 2 { KEPT } else { 2 } } else { KEPT };

    /// Record `record`'s value, to change: read back if it was written out, else a new one.
    pub fn entry(&mut self, record: u32) -> &mut V {
        let at = self.load(record, true).expect("made");
        self.live.get_index_mut(at).expect("just loaded").1
    }

    /// Sets record `record`'s value (an older one is not read back).
    pub fn insert(&mut self, record: u32, value: V) {
        self.reach(record);
        self.live.shift_remove(&record);
        self.live.insert(record, value);
        self.evict();
    }

    /// Drops record `record`'s value: it has none until it is given one again.
    pub fn remove(&mut self, record: u32) {
        self.live.shift_remove(&record);
        if (record as usize) < self.written.len() {
            *self.written.get_mut(record as usize) = Written::NONE;
        }
    }

    /// Record `record`'s value, if it has one.
    pub fn get(&mut self, record: u32) -> Option<&V> {
        let at = self.load(record, false)?;
        Some(self.live.get_index(at).expect("just loaded").1)
    }

    /// Every record's value, in record order, read back one at a time.
    pub fn into_values(self) -> impl Iterator<Item = (u32, V)> {
        let PerCompile { mut live, written, store } = self;
        written.into_records().enumerate().filter_map(move |(record, w)| {
            let record = record as u32;
            match live.swap_remove(&record) {
                Some(value) => Some((record, value)),
                None if w == Written::NONE => None,
                None => Some((record, w.read(&**store.spool().expect("written values have a spool")))),
            }
        })
    }

    /// Makes `record`'s value the most recently used in memory (a new one if `make`); returns its
    /// position in `live`, or `None` when it has none.
    fn load(&mut self, record: u32, make: bool) -> Option<usize> {
        if let Some(at) = self.live.get_index_of(&record) {
            let last = self.live.len() - 1;
            self.live.move_index(at, last);
            return Some(last);
        }
        let r = record as usize;
        let w = if r < self.written.len() { *self.written.get(r) } else { Written::NONE };
        let value = match w {
            Written::NONE if !make => return None,
            Written::NONE => V::default(),
            w => w.read(&**self.store.spool().expect("written values have a spool")),
        };
        self.reach(record);
        self.live.insert(record, value);
        self.evict();
        self.live.get_index_of(&record)
    }

    /// Makes `written` long enough to say where `record`'s value is.
    fn reach(&mut self, record: u32) {
        while self.written.len() <= record as usize {
            self.written.push(Written::NONE);
        }
    }

    /// Writes the least recently used values to the spool while more than `KEPT` are in memory
    /// (unless the store has no spool, or writing fails: then they stay).
    fn evict(&mut self) {
        if self.live.len() <= Self::KEPT {
            return;
        }
        let Some(spool) = self.store.spool().cloned() else { return };
        while self.live.len() > Self::KEPT {
            let (record, value) = self.live.first().expect("more than KEPT");
            let Some(written) = Written::write(&*spool, value) else { return };
            *self.written.get_mut(*record as usize) = written;
            self.live.shift_remove_index(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::packed_rows::tests::test_store;
    use super::*;

    /// Values changed in any order (old ones coming back from the spool), asked for, and read in
    /// record order are what a map holds, with a spool or without.
    #[test]
    fn values_read_back_as_a_map_holds_them() {
        for spooled in [false, true] {
            let (store, spool) = test_store(spooled);
            let (mut map, mut plain) = (PerCompile::<Vec<String>>::new(&store), BTreeMap::<u32, Vec<String>>::new());
            for step in 0..60u32 {
                // Mostly the latest records, now and then one long past or far ahead.
                let record = match step % 7 {
                    0 => step / 3,
                    3 => step + 40,
                    _ => step / 2,
                };
                if step % 13 == 9 {
                    map.remove(record / 2);
                    plain.remove(&(record / 2));
                }
                if step % 11 == 5 {
                    map.insert(record, vec![format!("set {step}")]);
                    plain.insert(record, vec![format!("set {step}")]);
                } else {
                    map.entry(record).push(format!("step {step}"));
                    plain.entry(record).or_default().push(format!("step {step}"));
                }
                assert_eq!(map.get(record + 1000), None);
                let asked = step / 4;
                assert_eq!(map.get(asked), plain.get(&asked), "record {asked} at step {step}");
            }
            assert_eq!(map.into_values().collect::<BTreeMap<_, _>>(), plain);
            assert_eq!(!spool.is_empty(), spooled, "values spilled only with a spool");
        }
    }
}
