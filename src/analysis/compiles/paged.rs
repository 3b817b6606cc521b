//! Compile records: while a stream's entries are read, the pages of records used last in memory,
//! the others in the thread's spool; once read ([`Compiles::settle`](super::Compiles::settle)),
//! packed and spooled with the stream's other held rows, read back by index or in order. A long
//! log's compiles cost the tables their ids alone.

use super::ids::RecordIds;
use super::{CompileRecord, RareFacts};
use crate::fast_hash::HashMap;
use crate::schema::CompileId;
use crate::store::{CompileList, Records, Store};

/// The records of the compiles seen so far, by index: their fixed-size facts in a [`CompileList`]
/// (each with no rare facts there), the rare facts of the few that have some in a map.
#[derive(Default)]
pub(super) struct PagedRecords {
    facts: CompileList<CompileRecord>,
    rare: HashMap<u32, Box<RareFacts>>,
}

impl PagedRecords {
    /// No records yet; pages long unused go to `store`.
    pub(super) fn new(store: &Store) -> Self {
        PagedRecords { facts: CompileList::new(store), rare: HashMap::default() }
    }

    /// Appends `record`; returns its index.
    pub(super) fn push(&mut self, mut record: CompileRecord) -> usize {
        let rare = record.rare.take();
        let index = self.facts.push(record);
        if let Some(rare) = rare {
            self.rare.insert(index as u32, rare);
        }
        index
    }

    /// Record `index` changed by `change` (its page read back first if it was spooled).
    pub(super) fn update<R>(&mut self, index: usize, change: impl FnOnce(&mut CompileRecord) -> R) -> R {
        let record = self.facts.get_mut(index);
        record.rare = self.rare.remove(&(index as u32));
        let out = change(record);
        if let Some(rare) = record.rare.take() {
            self.rare.insert(index as u32, rare);
        }
        out
    }

    /// The row of `Compiles::frozen` record `index`'s artifacts were frozen in last.
    pub(super) fn frozen(&mut self, index: usize) -> u32 {
        self.facts.get(index).frozen
    }

    /// Every record, settled: moved into blocks in one pass over the pages, with their `ids`
    /// (settled).
    pub(super) fn settle(self, ids: RecordIds) -> CompileRecords {
        let mut rows = Records::new(self.facts.store());
        for record in self.facts.into_records() {
            rows.push(&record);
        }
        CompileRecords { rows, ids, rare: self.rare, next_attempts: HashMap::default() }
    }
}

/// Every compile record of a stream, by index, once its entries are read: each record packed
/// in blocks that go to the spool, its id in memory (ids are what lookups compare), and what few
/// records have (rare facts, a next attempt) in maps.
#[derive(Default)]
pub struct CompileRecords {
    rows: Records<CompileRecord>,
    ids: RecordIds,
    pub(super) rare: HashMap<u32, Box<RareFacts>>,
    /// The next attempt of each record that has one ([`CompileRecord::next_attempt`]).
    pub(super) next_attempts: HashMap<u32, u32>,
}

impl CompileRecords {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.len() == 0
    }

    /// Record `index`, read back.
    pub fn get(&self, index: usize) -> CompileRecord {
        self.whole(index, self.rows.get(index as u32))
    }

    /// Every record in order, read back.
    pub fn iter(&self) -> impl Iterator<Item = CompileRecord> + '_ {
        self.rows.iter().enumerate().map(|(index, record)| self.whole(index, record))
    }

    /// The id of record `index`, without reading the record.
    pub fn id(&self, index: usize) -> CompileId {
        self.ids.get(index)
    }

    /// The records' ids, and where to find each.
    pub(super) fn ids(&self) -> &RecordIds {
        &self.ids
    }

    /// The next attempt of record `index`'s frame compile, without reading the record.
    pub fn next_attempt(&self, index: usize) -> Option<usize> {
        self.next_attempts.get(&(index as u32)).map(|&n| n as usize)
    }

    /// Record `index` as packed, with what is kept aside.
    fn whole(&self, index: usize, mut record: CompileRecord) -> CompileRecord {
        let index = index as u32;
        record.rare = self.rare.get(&index).cloned();
        record.next_attempt = self.next_attempts.get(&index).copied();
        record
    }
}

#[cfg(test)]
mod tests {
    use super::super::{GraphSpans, HeldMetrics};
    use super::*;
    use crate::schema::tables::CompileStatus;
    use crate::schema::tables::GraphRole;

    /// A record with every field set reads back as written, and one with every optional field
    /// unset too (records round-trip through postcard when their page is spooled).
    #[test]
    fn records_read_back_as_written() {
        let full = CompileRecord {
            id: crate::store::CompactId::of(&CompileId {
                compiled_autograd_id: Some(0),
                frame_id: Some(1),
                frame_compile_id: Some(2),
                attempt: Some(3),
            }),
            first_seq: 5,
            last_seq: u64::MAX - 6,
            start_ts: 1_118_142_233_123_456,
            end_ts: super::super::STAMP_IN_RARE,
            start_stack: Some(7),
            metrics: Some(HeldMetrics { row: 8, status: CompileStatus::CompiledAutogradCapture }),
            frozen: 9,
            next_attempt: Some(10),
            rare: None,
            graph_spans: GraphSpans { open: Some(GraphRole::Inference), depth: 11, training: Some(false) },
            raw_forms: 3,
        };
        let empty = CompileRecord {
            start_stack: None,
            metrics: None,
            next_attempt: None,
            graph_spans: GraphSpans { open: None, depth: 0, training: None },
            ..full.clone()
        };
        for record in [full, empty] {
            let bytes = postcard::to_allocvec(&record).unwrap();
            let read: CompileRecord = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(format!("{read:?}"), format!("{record:?}"));
        }
    }
}
