//! Ids known by a [`Digest`], in bounded memory: the latest in a capped hash table, older ones in
//! sorted runs in a [`Store`]'s spool, found again through a [`RunIndex`] each (about 1.3 bytes
//! an old id, where the table takes 24 and more). What [`super::Distinct`] rows and
//! [`super::Numbers`] of a long log are found by, so that a hundred thousand distinct guards
//! cost no memory.

use hashbrown::HashTable;

use super::packed_rows::{Digest, Spool, Store};
use crate::sorted_runs::{RunIndex, find_in_page};

/// Entries held in the table before they go to a run: 7/8 of a power of two, the table's full
/// load, so it never grows past 4 Ki buckets (about 100 KiB). A build has several of these
/// tables, each full on a long log: larger ones hold more memory for no measurable speed. Unit
/// tests spill after a few.
const RECENT: usize = if cfg!(test) { 7 } else { 3_584 };
/// Bytes of an entry in a run: the digest, then the id (little-endian).
const ENTRY_BYTES: usize = 20;
/// Entries of a run read at once when the filter lets a digest through (about 4 KiB).
const PAGE: usize = if cfg!(test) { 2 } else { 204 };

/// An entry of the table; `spilled` when it was found in a run (a copy kept for the next
/// lookups, not written again).
#[derive(Clone, Copy)]
struct Entry {
    low: u64,
    high: u64,
    id: u32,
    spilled: bool,
}

impl Entry {
    fn digest(&self) -> Digest {
        u128::from(self.low) | (u128::from(self.high) << 64)
    }
}

/// Reads the id of `key` from the run, if it holds it: one page read from the spool. The spool
/// is a file of the build's own staging directory: failing to read back what was written there
/// is the end of the build.
fn find(run: &RunIndex, spool: &dyn Spool, key: Digest) -> Option<u32> {
    let (at, len) = run.page_of(key)?;
    let page = spool.get(at, len).unwrap_or_else(|e| panic!("reading back the analysis spool: {e}"));
    let digest_of = |e: &[u8]| u128::from_le_bytes(e[..16].try_into().expect("16 bytes"));
    let entry = find_in_page(&page, ENTRY_BYTES, key, digest_of)?;
    Some(u32::from_le_bytes(entry[16..].try_into().expect("4 bytes")))
}

/// A map from digests to ids; every entry is added once.
#[derive(Default)]
pub struct DigestIds {
    recent: HashTable<Entry>,
    runs: Vec<RunIndex>,
    /// Where the runs go; with no spool, every entry stays in `recent`.
    store: Store,
    /// How many keys [`DigestIds::number`] numbered.
    numbered: u32,
}

impl DigestIds {
    /// No ids yet; older ones will go to `store`.
    pub fn new(store: &Store) -> Self {
        DigestIds { store: store.clone(), ..DigestIds::default() }
    }

    /// The id of `key`, if it was added.
    pub fn get(&mut self, key: Digest) -> Option<u32> {
        if let Some(e) = self.recent.find(key as u64, |e| e.digest() == key) {
            return Some(e.id);
        }
        let spool = self.store.spool()?.as_ref();
        let id = self.runs.iter().rev().find_map(|run| find(run, spool, key))?;
        // Kept for the next lookups until the table spills (a few hundred ids repeat all along).
        self.put(Entry { low: key as u64, high: (key >> 64) as u64, id, spilled: true });
        Some(id)
    }

    /// The number of `key`: keys are numbered 0, 1, 2... in the order this first sees them (a
    /// table whose keys are numbered so adds none with [`DigestIds::insert`]).
    pub fn number(&mut self, key: Digest) -> u32 {
        if let Some(n) = self.get(key) {
            return n;
        }
        let n = self.numbered;
        self.insert(key, n);
        self.numbered += 1;
        n
    }

    /// Adds `key` (not added before) with its id.
    pub fn insert(&mut self, key: Digest, id: u32) {
        self.put(Entry { low: key as u64, high: (key >> 64) as u64, id, spilled: false });
    }

    fn put(&mut self, entry: Entry) {
        self.recent.insert_unique(entry.low, entry, |e| e.low);
        if self.recent.len() >= RECENT {
            self.spill();
        }
    }

    /// Moves the table's new entries to a run (unless the store has no spool, or it fails).
    fn spill(&mut self) {
        let Some(spool) = self.store.spool() else { return };
        let mut entries: Vec<Entry> = self.recent.iter().filter(|e| !e.spilled).copied().collect();
        if entries.is_empty() {
            self.recent.clear();
            return;
        }
        entries.sort_unstable_by_key(Entry::digest);
        let mut bytes = Vec::with_capacity(entries.len() * ENTRY_BYTES);
        for e in &entries {
            bytes.extend_from_slice(&e.digest().to_le_bytes());
            bytes.extend_from_slice(&e.id.to_le_bytes());
        }
        let Ok(at) = spool.put(&bytes) else { return };
        let keys: Vec<Digest> = entries.iter().map(Entry::digest).collect();
        self.runs.push(RunIndex::new(at, &keys, ENTRY_BYTES, PAGE));
        self.recent.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::super::packed_rows::{digest, tests::test_store};
    use super::*;

    #[test]
    fn ids_are_found_in_the_table_and_in_runs_and_others_are_not() {
        for spooled in [false, true] {
            let (store, _spool) = test_store(spooled);
            let mut ids = DigestIds::new(&store);
            let key = |i: u32| digest(&[&i.to_le_bytes()]);
            for i in 0..100 {
                assert_eq!(ids.get(key(i)), None);
                ids.insert(key(i), i);
            }
            assert_eq!(ids.runs.is_empty(), !spooled);
            for i in (0..100).rev().chain(0..100) {
                assert_eq!(ids.get(key(i)), Some(i));
            }
            assert_eq!(ids.get(key(100)), None);
        }
    }
}
