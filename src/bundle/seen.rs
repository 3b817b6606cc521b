//! The blob ids one input file already stored, known exactly in little memory: the latest ids in
//! a capped hash table, older ones in sorted runs in a file of the staging directory, each run
//! with a Bloom filter (10 bits an id) and a sparse index in memory: about 1.3 bytes an old id,
//! where holding the ids took 16 and more.

use std::fs;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use hashbrown::HashTable;

use super::blobs::Hash;

/// Ids held in the hash table before they go to a run: 7/8 of a power of two, the table's full
/// load, so the table never grows past 32 Ki buckets (about 0.5 MiB).
const RECENT: usize = 28_672;
/// Bytes of an id in a run.
const ID_BYTES: usize = 16;
/// Ids of a run read at once when the filter lets an id through (4 KiB).
const PAGE: usize = 256;
/// Filter bits per id and probes per lookup: about 1% false positives, each costing one read.
const BITS_PER_ID: usize = 10;
const PROBES: u64 = 7;

/// One run: ids sorted, back to back in the runs file from `start`.
struct Run {
    start: u64,
    len: usize,
    /// The Bloom filter of its ids, `bits` long.
    filter: Vec<u64>,
    bits: u64,
    /// The first id of each page.
    index: Vec<Hash>,
}

/// The set of blob ids a file stored.
pub struct SeenBlobs {
    recent: HashTable<Hash>,
    runs: Vec<Run>,
    /// The runs file (unlinked once open, so it never outlives the build) and its length;
    /// `None` until the first run, and when it cannot be made (then every id stays in `recent`).
    file: Option<(fs::File, u64)>,
    no_file: bool,
}

/// The table hash of an id: its first 8 bytes, already uniform (blake3).
fn table_hash(id: &Hash) -> u64 {
    u64::from_le_bytes(id[..8].try_into().expect("ids are 16 bytes"))
}

/// The filter bits of an id (double hashing over its two halves).
fn probes(id: &Hash, bits: u64) -> impl Iterator<Item = u64> {
    let h1 = table_hash(id);
    let h2 = u64::from_le_bytes(id[8..].try_into().expect("ids are 16 bytes")) | 1;
    (0..PROBES).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
}

impl Run {
    fn new(start: u64, sorted: &[Hash]) -> Run {
        let bits = (sorted.len() * BITS_PER_ID).max(64) as u64;
        let mut filter = vec![0u64; bits.div_ceil(64) as usize];
        for id in sorted {
            for bit in probes(id, bits) {
                filter[(bit / 64) as usize] |= 1 << (bit % 64);
            }
        }
        let index = sorted.iter().step_by(PAGE).copied().collect();
        Run { start, len: sorted.len(), filter, bits, index }
    }

    fn may_hold(&self, id: &Hash) -> bool {
        probes(id, self.bits).all(|bit| self.filter[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }

    /// Whether the run holds `id`: one page read from `file`.
    fn holds(&self, file: &fs::File, id: &Hash) -> io::Result<bool> {
        let page = self.index.partition_point(|first| first <= id);
        if page == 0 {
            return Ok(false);
        }
        let first = (page - 1) * PAGE;
        let count = PAGE.min(self.len - first);
        let mut bytes = vec![0; count * ID_BYTES];
        file.read_exact_at(&mut bytes, self.start + (first * ID_BYTES) as u64)?;
        let ids: Vec<&[u8]> = bytes.chunks_exact(ID_BYTES).collect();
        Ok(ids.binary_search(&&id[..]).is_ok())
    }
}

impl SeenBlobs {
    pub fn new() -> Self {
        SeenBlobs { recent: HashTable::new(), runs: Vec::new(), file: None, no_file: false }
    }

    /// Whether `id` was added.
    pub fn contains(&self, id: &Hash) -> io::Result<bool> {
        if self.recent.find(table_hash(id), |x| x == id).is_some() {
            return Ok(true);
        }
        let Some((file, _)) = &self.file else { return Ok(false) };
        for run in self.runs.iter().rev() {
            if run.may_hold(id) && run.holds(file, id)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Adds an id not added before; `dir` is where the runs file goes.
    pub fn insert(&mut self, id: Hash, dir: &Path, name: &str) -> io::Result<()> {
        self.recent.insert_unique(table_hash(&id), id, table_hash);
        if self.recent.len() >= RECENT {
            self.spill(dir, name)?;
        }
        Ok(())
    }

    /// Moves the ids of the table to a new run (unless the runs file cannot be made).
    fn spill(&mut self, dir: &Path, name: &str) -> io::Result<()> {
        if self.file.is_none() && !self.no_file {
            match open_unlinked(&dir.join(format!("{name}-seen"))) {
                Ok(file) => self.file = Some((file, 0)),
                Err(_) => self.no_file = true,
            }
        }
        let Some((file, end)) = &mut self.file else { return Ok(()) };
        let mut ids: Vec<Hash> = self.recent.drain().collect();
        ids.sort_unstable();
        let bytes: Vec<u8> = ids.iter().flatten().copied().collect();
        file.write_all_at(&bytes, *end)?;
        self.runs.push(Run::new(*end, &ids));
        *end += bytes.len() as u64;
        Ok(())
    }
}

/// A new file, removed from its directory as soon as it is open.
fn open_unlinked(path: &Path) -> io::Result<fs::File> {
    let file = fs::OpenOptions::new().read(true).write(true).create_new(true).open(path)?;
    fs::remove_file(path)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_in_the_table_and_in_runs_and_others_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut seen = SeenBlobs::new();
        let id = |i: u32| crate::parse::blob_id(&i.to_le_bytes());
        let n = 3 * RECENT as u32 + 100;
        for i in 0..n {
            assert!(!seen.contains(&id(i)).unwrap());
            seen.insert(id(i), dir.path(), "f0").unwrap();
        }
        assert_eq!(seen.runs.len(), 3);
        assert!((0..n).step_by(7).all(|i| seen.contains(&id(i)).unwrap()));
        assert!((n..n + 5000).all(|i| !seen.contains(&id(i)).unwrap()));
        // The runs file is gone from the directory already.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
