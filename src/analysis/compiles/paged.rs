//! Compile records while a stream's entries are read: the pages of records used last in memory,
//! the others in the thread's spool, so that a long log's compiles cost no memory while it is
//! read. [`Compiles::settle`](super::Compiles::settle) reads them all back for the tables.

use super::{CompileRecord, RareFacts, record_id};
use crate::fast_hash::HashMap;
use crate::schema::CompileId;
use crate::store::{CompileList, Store};

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

    /// The id of record `index`.
    pub(super) fn id(&mut self, index: usize) -> CompileId {
        record_id(self.facts.get(index).id, self.rare.get(&(index as u32)).map(|rare| &**rare))
    }

    /// The row of `Compiles::frozen` record `index`'s artifacts were frozen in last.
    pub(super) fn frozen(&mut self, index: usize) -> u32 {
        self.facts.get(index).frozen
    }

    /// Every record, in order, with its rare facts.
    pub(super) fn into_vec(self) -> Vec<CompileRecord> {
        let PagedRecords { facts, mut rare } = self;
        let mut records = Vec::with_capacity(facts.len());
        records.extend(facts.into_records().enumerate().map(|(index, mut record)| {
            record.rare = rare.remove(&(index as u32));
            record
        }));
        records
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
