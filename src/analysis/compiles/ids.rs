//! The compile ids of a stream's records, and the index that finds a record by its id: twelve
//! bytes a compile, where a hash table of them took more than the ids themselves. Each id is
//! kept in 8 bytes ([`CompactId`]); the records are kept sorted by frame compile in 4 more, the
//! latest ones in a small table until they are merged in. The sorted records are also how the
//! attempts of a frame compile are found: a run of them.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::fast_hash::HashMap;
use crate::schema::CompileId;
use crate::store::CompactId;

/// Records held in `recent` before they are merged into `sorted`: at least this many, and at
/// least a quarter of those sorted (so that merging, which moves every sorted record, costs a
/// few moves a record in all). Unit tests merge often.
const RECENT_MIN: usize = if cfg!(test) { 3 } else { 4_096 };

/// A frame compile: a compile id without its attempt, ordered as the index sorts them.
pub type FrameCompile = (Option<u64>, Option<u64>, Option<u64>);

pub fn frame_compile(id: &CompileId) -> FrameCompile {
    (id.compiled_autograd_id, id.frame_id, id.frame_compile_id)
}

/// The ids of a stream's records (by record index), each filed once, and where to find each.
#[derive(Default)]
pub struct RecordIds {
    ids: Vec<CompactId>,
    /// The ids with no compact form, by record.
    wide: HashMap<u32, CompileId>,
    /// Every record but the `recent` ones, by frame compile, then index.
    sorted: Vec<u32>,
    /// The records filed since the last merge, by the hash of their id.
    recent: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl RecordIds {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The id of record `index`.
    pub fn get(&self, index: usize) -> CompileId {
        id_of(&self.ids, &self.wide, index as u32)
    }

    /// Files `id` (not filed before) as the next record's; returns its index.
    pub fn push(&mut self, id: CompileId) -> usize {
        let index = self.ids.len();
        let compact = CompactId::of(&id);
        if compact.id().is_none() {
            self.wide.insert(index as u32, id);
        }
        if self.ids.len() == self.ids.capacity() {
            // An eighth more at a time: a long log's ids are most of what it holds per compile.
            self.ids.reserve_exact(self.ids.len() / 8 + 1024);
        }
        self.ids.push(compact);
        let (hasher, ids, wide) = (&self.hasher, &self.ids, &self.wide);
        self.recent.insert_unique(hasher.hash_one(id), index as u32, |&i| hasher.hash_one(id_of(ids, wide, i)));
        if self.recent.len() >= RECENT_MIN.max(self.sorted.len() / 4) {
            self.merge();
        }
        index
    }

    /// The record `id` was filed for, if any.
    pub fn find(&self, id: &CompileId) -> Option<usize> {
        let recent = self.recent.find(self.hasher.hash_one(id), |&i| self.get(i as usize) == *id);
        if let Some(&index) = recent {
            return Some(index as usize);
        }
        self.attempts(&frame_compile(id)).iter().map(|&i| i as usize).find(|&i| self.get(i) == *id)
    }

    /// The records of a frame compile's attempts, in order of index: once [`RecordIds::settle`]d,
    /// all of them.
    pub fn attempts(&self, frame: &FrameCompile) -> &[u32] {
        let of = |&i: &u32| frame_compile(&self.get(i as usize));
        let start = self.sorted.partition_point(|i| of(i) < *frame);
        let end = start + self.sorted[start..].partition_point(|i| of(i) == *frame);
        &self.sorted[start..end]
    }

    /// Every record, by frame compile, then index. Only after [`RecordIds::settle`].
    pub fn by_frame_compile(&self) -> &[u32] {
        &self.sorted
    }

    /// Called after the last record is filed: every record sorted.
    pub fn settle(&mut self) {
        self.merge();
        self.ids.shrink_to_fit();
        self.sorted.shrink_to_fit();
        self.recent = HashTable::new();
    }

    /// Moves the recent records into the sorted ones, from the back: each is newer than every
    /// sorted record, so equal frame compiles keep their records in order of index.
    fn merge(&mut self) {
        let of = |i: u32| frame_compile(&id_of(&self.ids, &self.wide, i));
        let mut recent: Vec<u32> = self.recent.drain().collect();
        recent.sort_unstable_by_key(|&i| (of(i), i));
        let mut old = self.sorted.len();
        self.sorted.reserve_exact(recent.len());
        self.sorted.resize(old + recent.len(), 0);
        for at in (0..self.sorted.len()).rev() {
            let take_old = match (old.checked_sub(1), recent.last()) {
                (Some(o), Some(&r)) => of(self.sorted[o]) > of(r),
                (Some(_), None) => break,
                (None, _) => false,
            };
            self.sorted[at] = if take_old {
                old -= 1;
                self.sorted[old]
            } else {
                recent.pop().expect("a recent record left")
            };
        }
    }
}

/// [`RecordIds::get`] on the parts, for closures that run while another part is borrowed.
fn id_of(ids: &[CompactId], wide: &HashMap<u32, CompileId>, index: u32) -> CompileId {
    ids[index as usize].id().unwrap_or_else(|| wide[&index])
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn id(frame: Option<u64>, compile: Option<u64>, attempt: Option<u64>, wide: bool) -> CompileId {
        let ca = wide.then_some(u64::MAX);
        CompileId { compiled_autograd_id: ca, frame_id: frame, frame_compile_id: compile, attempt }
    }

    proptest! {
        /// Whatever order ids come in (repeats dropped, as a stream files each once), each is
        /// found at its record, an id never filed is not found, and once settled the records
        /// are sorted by frame compile, then index (the stable sort of every record) and each
        /// frame compile's attempts are the run of that order with its frame compile.
        #[test]
        fn ids_are_found_and_sorted(
            raw in proptest::collection::vec((0..4u64, 0..3u64, 0..3u64, any::<bool>(), any::<bool>()), 0..60)
        ) {
            let mut ids = RecordIds::default();
            let mut filed: Vec<CompileId> = Vec::new();
            for (frame, compile, attempt, frameless, wide) in raw {
                let cid = if frameless { id(None, None, None, wide) } else { id(Some(frame), Some(compile), Some(attempt), wide) };
                if filed.contains(&cid) {
                    continue;
                }
                prop_assert_eq!(ids.push(cid), filed.len());
                filed.push(cid);
                for (i, cid) in filed.iter().enumerate() {
                    prop_assert_eq!(ids.find(cid), Some(i));
                }
            }
            ids.settle();
            let mut expected: Vec<u32> = (0..filed.len() as u32).collect();
            expected.sort_by_key(|&i| frame_compile(&filed[i as usize]));
            prop_assert_eq!(ids.by_frame_compile(), &expected[..]);
            for (i, cid) in filed.iter().enumerate() {
                prop_assert_eq!(ids.get(i), *cid);
                prop_assert_eq!(ids.find(cid), Some(i));
                let frame = frame_compile(cid);
                let attempts: Vec<u32> = expected.iter().copied().filter(|&j| frame_compile(&filed[j as usize]) == frame).collect();
                prop_assert_eq!(ids.attempts(&frame), &attempts[..]);
            }
            prop_assert_eq!(ids.find(&id(Some(9), Some(0), Some(0), false)), None);
        }
    }
}
