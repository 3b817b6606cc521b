//! The blob ids one input file already stored, known exactly in little memory: the latest ids in
//! a capped hash table, older ones in sorted runs in a file of the staging directory, found again
//! through a [`RunIndex`] each: about 1.3 bytes an old id, where holding the ids took 16 and more.

use std::fs;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use hashbrown::HashTable;

use super::blobs::Hash;
use crate::sorted_runs::{RunIndex, find_in_page};

/// Ids held in the hash table before they go to a run: 7/8 of a power of two, the table's full
/// load, so the table never grows past 32 Ki buckets (about 0.5 MiB).
const RECENT: usize = 28_672;
/// Bytes of an id in a run.
const ID_BYTES: usize = 16;
/// Ids of a run read at once when the filter lets an id through (4 KiB).
const PAGE: usize = 256;

/// The set of blob ids a file stored.
pub struct SeenBlobs {
    recent: HashTable<Hash>,
    runs: Vec<RunIndex>,
    /// The runs file (unlinked once open, so it never outlives the build) and its length;
    /// `None` until the first run, and when it cannot be made (then every id stays in `recent`).
    file: Option<(fs::File, u64)>,
    no_file: bool,
}

/// The table hash of an id: its first 8 bytes, already uniform (blake3).
fn table_hash(id: &Hash) -> u64 {
    u64::from_le_bytes(id[..8].try_into().expect("ids are 16 bytes"))
}

/// An id as a run's key: big-endian, so that keys sort as the ids' bytes do.
fn key(id: &Hash) -> u128 {
    u128::from_be_bytes(*id)
}

/// Whether `run` holds `id`: one page read from `file`.
fn holds(run: &RunIndex, file: &fs::File, id: &Hash) -> io::Result<bool> {
    let Some((at, len)) = run.page_of(key(id)) else { return Ok(false) };
    let mut page = vec![0; len];
    file.read_exact_at(&mut page, at)?;
    let key_of = |e: &[u8]| key(e.try_into().expect("ids are 16 bytes"));
    Ok(find_in_page(&page, ID_BYTES, key(id), key_of).is_some())
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
            if holds(run, file, id)? {
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
        let keys: Vec<u128> = ids.iter().map(key).collect();
        self.runs.push(RunIndex::new(*end, &keys, ID_BYTES, PAGE));
        *end += bytes.len() as u64;
        Ok(())
    }
}

/// A new file, removed from its directory as soon as it is open.
pub(super) fn open_unlinked(path: &Path) -> io::Result<fs::File> {
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
