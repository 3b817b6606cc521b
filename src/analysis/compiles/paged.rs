//! Compile records while a stream's entries are read: the pages of records used last in memory,
//! the others in the thread's spool, so that a long log's compiles cost no memory while it is
//! read. [`Compiles::settle`](super::Compiles::settle) reads them all back for the tables.

use super::{ABSENT_U8, CompileRecord, GraphSpans, HeldMetrics, RareFacts, record_id, role_code, role_of};
use crate::fast_hash::HashMap;
use crate::schema::CompileId;
use crate::schema::tables::CompileStatus;
use crate::store::spill_vec::{Fields, Record, SpillVec};

/// The records of the compiles seen so far, by index: their fixed-size facts in a [`SpillVec`]
/// (each with no rare facts there), the rare facts of the few that have some in a map.
#[derive(Default)]
pub(super) struct PagedRecords {
    facts: SpillVec<CompileRecord>,
    rare: HashMap<u32, Box<RareFacts>>,
}

impl PagedRecords {
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

/// [`CompileRecord::metrics`]' status, as a byte.
fn status_code(status: CompileStatus) -> u8 {
    match status {
        CompileStatus::Ok => 0,
        CompileStatus::OkWithRestart => 1,
        CompileStatus::EmptyGraph => 2,
        CompileStatus::Failed => 3,
        CompileStatus::Restarted => 4,
        CompileStatus::MetricsMissing => 5,
        CompileStatus::CompiledAutogradCapture => 6,
    }
}

/// The statuses, by [`status_code`].
const STATUSES: [CompileStatus; 7] = [
    CompileStatus::Ok,
    CompileStatus::OkWithRestart,
    CompileStatus::EmptyGraph,
    CompileStatus::Failed,
    CompileStatus::Restarted,
    CompileStatus::MetricsMissing,
    CompileStatus::CompiledAutogradCapture,
];

/// [`Record::write`]'s flags: which optional fields are set.
const HAS_START_STACK: u8 = 1;
const HAS_METRICS: u8 = 2;
const HAS_NEXT_ATTEMPT: u8 = 4;

/// A record without its rare facts ([`PagedRecords`] keeps those), which it must not have here.
impl Record for CompileRecord {
    /// The id's four words, four u64 (seqs and stamps), five u32, five bytes.
    const BYTES: usize = 16 + 4 * 8 + 5 * 4 + 5;

    fn write(&self, out: &mut Vec<u8>) {
        debug_assert!(self.rare.is_none(), "rare facts are kept out of pages");
        let flag = |set: bool, flag: u8| if set { flag } else { 0 };
        let flags = flag(self.start_stack.is_some(), HAS_START_STACK)
            | flag(self.metrics.is_some(), HAS_METRICS)
            | flag(self.next_attempt.is_some(), HAS_NEXT_ATTEMPT);
        let spans = &self.graph_spans;
        for word in self.id {
            out.extend_from_slice(&word.to_le_bytes());
        }
        for x in [self.first_seq, self.last_seq, self.start_ts, self.end_ts] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let metrics_row = self.metrics.map_or(0, |m| m.row);
        for x in [self.start_stack.unwrap_or(0), metrics_row, self.frozen, self.next_attempt.unwrap_or(0), spans.depth]
        {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let status = self.metrics.map_or(ABSENT_U8, |m| status_code(m.status));
        let training = spans.training.map_or(ABSENT_U8, u8::from);
        out.extend_from_slice(&[flags, status, role_code(spans.open), training, self.raw_forms]);
    }

    fn read(bytes: &[u8]) -> Self {
        let mut f = Fields(bytes);
        let id = [f.u32(), f.u32(), f.u32(), f.u32()];
        let (first_seq, last_seq, start_ts, end_ts) = (f.u64(), f.u64(), f.u64(), f.u64());
        let (start_stack, metrics_row, frozen, next_attempt, depth) = (f.u32(), f.u32(), f.u32(), f.u32(), f.u32());
        let [flags, status, open, training, raw_forms] = [f.u8(), f.u8(), f.u8(), f.u8(), f.u8()];
        let has = |flag: u8| flags & flag != 0;
        CompileRecord {
            id,
            first_seq,
            last_seq,
            start_ts,
            end_ts,
            start_stack: has(HAS_START_STACK).then_some(start_stack),
            metrics: has(HAS_METRICS).then(|| HeldMetrics { row: metrics_row, status: STATUSES[usize::from(status)] }),
            frozen,
            next_attempt: has(HAS_NEXT_ATTEMPT).then_some(next_attempt),
            rare: None,
            graph_spans: GraphSpans {
                open: role_of(open),
                depth,
                training: (training != ABSENT_U8).then_some(training == 1),
            },
            raw_forms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::tables::GraphRole;

    /// A record with every field set reads back as written, and one with every optional field
    /// unset too; the statuses' codes and list agree.
    #[test]
    fn records_read_back_from_their_bytes() {
        for (i, status) in STATUSES.iter().enumerate() {
            assert_eq!(usize::from(status_code(*status)), i);
        }
        let full = CompileRecord {
            id: [1, 2, 3, 4],
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
            let mut bytes = Vec::new();
            record.write(&mut bytes);
            assert_eq!(bytes.len(), CompileRecord::BYTES);
            assert_eq!(format!("{:?}", CompileRecord::read(&bytes)), format!("{record:?}"));
        }
    }
}
