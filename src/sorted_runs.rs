//! Finding a 128-bit key again among sorted runs spilled to a file, in little memory: each run
//! keeps a Bloom filter (10 bits a key, about 1% false positives) and the first key of each page
//! in memory, so a lookup reads at most one page of a run that may hold the key. Shared by the
//! blob ids a file stored (`bundle::seen`) and the digests an interner knows
//! (`store::digest_ids`), which keep their recent keys in a table and spill older ones here.

/// Filter bits per key and probes per lookup.
const BITS_PER_KEY: usize = 10;
const PROBES: u64 = 7;

/// What memory keeps of one run: its entries (each `entry_bytes` long, its key first) sorted by
/// key, back to back in the file from `at`.
pub struct RunIndex {
    at: u64,
    len: usize,
    entry_bytes: usize,
    /// Entries read at once.
    page: usize,
    /// The Bloom filter of its keys, `bits` long.
    filter: Vec<u64>,
    bits: u64,
    /// The first key of each page.
    firsts: Vec<u128>,
}

/// The filter bits of a key (double hashing over its two halves, both uniform: the keys are
/// digests).
fn probes(key: u128, bits: u64) -> impl Iterator<Item = u64> {
    let (h1, h2) = (key as u64, (key >> 64) as u64 | 1);
    (0..PROBES).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
}

impl RunIndex {
    /// The index of a run written at `at`, given its keys in order.
    pub fn new(at: u64, sorted_keys: &[u128], entry_bytes: usize, page: usize) -> RunIndex {
        let bits = (sorted_keys.len() * BITS_PER_KEY).max(64) as u64;
        let mut filter = vec![0u64; bits.div_ceil(64) as usize];
        for &key in sorted_keys {
            for bit in probes(key, bits) {
                filter[(bit / 64) as usize] |= 1 << (bit % 64);
            }
        }
        let firsts = sorted_keys.iter().step_by(page).copied().collect();
        RunIndex { at, len: sorted_keys.len(), entry_bytes, page, filter, bits, firsts }
    }

    /// Where in the file (offset and length) the page is that holds `key` if the run does;
    /// `None` when the run cannot hold it.
    pub fn page_of(&self, key: u128) -> Option<(u64, usize)> {
        if !probes(key, self.bits).all(|bit| self.filter[(bit / 64) as usize] & (1 << (bit % 64)) != 0) {
            return None;
        }
        let page = self.firsts.partition_point(|&first| first <= key).checked_sub(1)?;
        let first = page * self.page;
        let count = self.page.min(self.len - first);
        Some((self.at + (first * self.entry_bytes) as u64, count * self.entry_bytes))
    }
}

/// The entry of `key` in a page read at [`RunIndex::page_of`], whose entries start with their
/// key as `key_of` reads it.
pub fn find_in_page(page: &[u8], entry_bytes: usize, key: u128, key_of: impl Fn(&[u8]) -> u128) -> Option<&[u8]> {
    let entries: Vec<&[u8]> = page.chunks_exact(entry_bytes).collect();
    let at = entries.binary_search_by_key(&key, |e| key_of(e)).ok()?;
    Some(entries[at])
}
