//! Cross-rank tables: computed after every stream is read, from the streams' own tables (as a
//! viewer would read them), comparing the compiles `alignment` aligns by code. Pure like the per-stream tables: tables in,
//! tables out; the bundle writer hands each stream's tables over and writes what comes back.

pub mod cache_divergence;
pub mod chrome_trace;
pub mod collective_schedules;
pub mod compile_time_imbalance;
pub mod execution_order;
pub mod rank_differ;
pub mod rank_findings;
pub mod runtime_estimates_trace;
pub mod runtime_estimations;
pub mod tensor_meta;
pub mod volatile;

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::TableSerializer;
use super::alignment::{AlignedRow, Alignment, StreamCompiles};
use crate::schema::CompileId;
use crate::schema::cross_rank::{CompileAlignment, RankFindings};
use crate::schema::cross_rank::{RankMember, StreamGroup};
use crate::schema::tables::{self, CompileDirectory, CompileStatus, CompiledCode};

/// The per-stream tables the cross-rank tables read; a stream's other tables are not kept.
pub const READS: &[&str] = &[
    <CompileDirectory as tlparse_bundle::Table>::NAME,
    <tables::CacheOutcomes as tlparse_bundle::Table>::NAME,
    <tables::CompilationMetrics as tlparse_bundle::Table>::NAME,
    <tables::CompileTime as tlparse_bundle::Table>::NAME,
    <tables::Collectives as tlparse_bundle::Table>::NAME,
    <tables::GraphExecution as tlparse_bundle::Table>::NAME,
    <tables::RuntimeEstimates as tlparse_bundle::Table>::NAME,
    <tables::Failures as tlparse_bundle::Table>::NAME,
    <tables::Recompiles as tlparse_bundle::Table>::NAME,
    <tables::GraphBreaks as tlparse_bundle::Table>::NAME,
];

/// One stream as the cross-rank tables see it: who it is, its compiles, and the tables they read
/// (`READS`), their bytes asked for and parsed on demand one stream at a time, so that memory
/// does not grow with the number of streams' tables (thousands of ranks' tables add up).
pub struct StreamTables {
    pub member: RankMember,
    /// Each per-stream table of `READS` the stream has, by name (JSON, zstd-compressed).
    tables: BTreeMap<&'static str, TableSource>,
    /// The first of `tables` found not to read back as its type (a shard's tables come from
    /// elsewhere than this build: its hashes may be forged too), read as missing meanwhile.
    damaged: Cell<Option<&'static str>>,
    /// The rows of the stream's `compile_directory` (none without one), with only what aligning
    /// and the cross-rank tables read of every rank at once (`rank_differ` reads the whole table,
    /// one stream at a time).
    pub compiles: Vec<CompileRow>,
}

/// What the cross-rank tables keep of a `compile_directory` row: a merge of a thousand ranks
/// holds every rank's rows at once, and whole rows (names, timestamps, stacks, reasons) were
/// most of its memory after the tables' own views.
#[derive(Debug, Deserialize)]
pub struct CompileRow {
    pub compile_id: String,
    pub cid: CompileId,
    pub status: CompileStatus,
    pub code: Option<CompiledCode>,
    pub total_s: Option<f64>,
    /// Why torch restarted the frame compile (on its final attempt; empty for most rows).
    #[serde(default)]
    pub restart_reasons: Vec<String>,
}

/// A `compile_directory` read as [`CompileRow`]s (the fields they leave out are skipped unbuilt).
#[derive(Deserialize)]
struct CompileRows {
    compiles: Vec<CompileRow>,
}

super::alignment::keyed_row_from_fields!(CompileRow);

impl AlignedRow for CompileRow {
    fn status(&self) -> CompileStatus {
        self.status
    }
    fn restart_reasons(&self) -> &[String] {
        &self.restart_reasons
    }
}

/// A stream's table as the cross-rank tables read it: the bytes of its parts (JSON,
/// zstd-compressed), asked for anew at each parse, so that a thousand ranks' tables are never
/// held at once. The bundle writer hands over tables it reads from the files it placed; analysis
/// never opens a file.
pub trait TableBytes {
    /// How many parts the table has.
    fn parts(&self) -> usize;
    /// Part `k`'s bytes, or `None` when they cannot be had (then the table is damaged).
    fn part(&self, k: usize) -> Option<Cow<'_, [u8]>>;
}

/// Parts held in memory (the fuzzer's in-process runs, which write no files).
impl TableBytes for Vec<Vec<u8>> {
    fn parts(&self) -> usize {
        self.len()
    }

    fn part(&self, k: usize) -> Option<Cow<'_, [u8]>> {
        self.get(k).map(|part| Cow::Borrowed(&part[..]))
    }
}

/// A table read from its parts as the one document they were cut from, parsed as it is
/// decompressed; `None` when a part cannot be had or the whole does not parse as `V`.
fn read_parts<V: serde::de::DeserializeOwned>(source: &dyn TableBytes) -> Option<V> {
    if source.parts() == 1 {
        // serde_json parses a slice faster than a stream, and one part is bounded.
        let json = zstd::decode_all(&source.part(0)?[..]).ok()?;
        return serde_json::from_slice(&json).ok();
    }
    let open =
        |k: usize| -> std::io::Result<zstd::stream::Decoder<'static, std::io::BufReader<std::io::Cursor<Vec<u8>>>>> {
            let bytes = source.part(k).ok_or_else(|| std::io::Error::other("a part cannot be read"))?;
            zstd::stream::Decoder::new(std::io::Cursor::new(bytes.into_owned()))
        };
    let joined = tlparse_bundle::parts::Joined::new(open, source.parts()).ok()?;
    serde_json::from_reader(std::io::BufReader::new(joined)).ok()
}

/// Where a stream's table is read from each time a cross-rank table parses it.
pub type TableSource = Box<dyn TableBytes>;

impl StreamTables {
    /// A stream's tables (any not in `READS` is dropped), its compile directory's
    /// rows read.
    pub fn new(member: RankMember, mut tables: BTreeMap<&'static str, TableSource>) -> Self {
        tables.retain(|name, _| READS.contains(name));
        let mut s = StreamTables { member, tables, damaged: Cell::new(None), compiles: Vec::new() };
        s.compiles = s.table_as::<CompileDirectory, CompileRows>().map(|d| d.compiles).unwrap_or_default();
        s
    }

    /// A per-stream table (one of `READS`), when the stream has it: parsed anew at each call.
    /// One that does not read back is missing, and [`StreamTables::damaged`] names it.
    pub fn table<T: tlparse_bundle::Table>(&self) -> Option<T> {
        self.table_as::<T, T>()
    }

    /// A per-stream table read as `V`, a view of `T` that reads only some of its fields (and
    /// skips the rest unbuilt): for tables whose rows hold much that a cross-rank table ignores.
    pub fn table_as<T: tlparse_bundle::Table, V: serde::de::DeserializeOwned>(&self) -> Option<V> {
        let name = T::NAME;
        debug_assert!(READS.contains(&name), "{name} is not kept for the cross-rank tables: add it to READS");
        let source = self.tables.get(name)?;
        let table = read_parts(source.as_ref());
        if table.is_none() && self.damaged.get().is_none() {
            self.damaged.set(Some(name));
        }
        table
    }

    /// The first table [`StreamTables::table`] found damaged: the cross-rank tables computed
    /// without it are wrong, and the bundle must not be written. (A build wrote its tables from
    /// the same types a moment ago, so only a shard's can be.)
    pub fn damaged(&self) -> Option<&'static str> {
        self.damaged.get()
    }
}

/// One cross-rank table: built from every stream's tables at once.
pub trait CrossRankTable {
    /// The table's type in the format's registry, which gives its name: its file is
    /// `tables/cross_rank/<NAME>.json.zst`.
    type Format: tlparse_bundle::Table;
    const NAME: &'static str = <Self::Format as tlparse_bundle::Table>::NAME;
    /// The table file's type (in `schema::cross_rank`).
    type Output: Serialize;
    /// The table and its number of rows; `None` when no stream has data for it. `alignment`
    /// pairs the streams' compiles (its streams are `streams`, in order).
    fn build(streams: &[StreamTables], alignment: &Alignment) -> Option<(Self::Output, u64)>;
    /// [`CrossRankTable::build`] for a table that reads payloads too (`rank_differ`).
    fn build_reading(
        streams: &[StreamTables],
        alignment: &Alignment,
        _payloads: &dyn PayloadReader,
    ) -> Option<(Self::Output, u64)> {
        Self::build(streams, alignment)
    }
    /// Hands `rank_findings` what it reports of this table (nothing, by default).
    fn findings(_table: &Self::Output, _headlines: &mut rank_findings::Headlines) {}
}

/// Reads payloads by blob id, for the tables that compare payload texts (`rank_differ`) once
/// the bundle's blob store is assembled.
pub trait PayloadReader {
    /// Where a blob lies, as a key that orders reads cheaply (blobs of one pack together, in
    /// order); `None` for a blob it cannot read.
    fn place(&self, blob: &str) -> Option<(u32, u64)>;
    /// The payload of a blob (hex id); `None` when it cannot be read.
    fn payload(&self, blob: &str) -> Option<Vec<u8>>;
}

/// No payloads (a build that keeps no blob store, such as the fuzzer's in-process runs): tables
/// compare blob ids alone.
pub struct NoPayloads;

impl PayloadReader for NoPayloads {
    fn place(&self, _blob: &str) -> Option<(u32, u64)> {
        None
    }
    fn payload(&self, _blob: &str) -> Option<Vec<u8>> {
        None
    }
}

/// Groups streams by a key: streams with equal keys form a group; groups come in order of their
/// first stream, streams in `streams` order. Streams whose key is `None` belong to no group.
pub fn group_streams<K: PartialEq>(
    streams: &[StreamTables],
    key: impl Fn(&StreamTables) -> Option<K>,
) -> Vec<(StreamGroup, K)> {
    group_by(streams.iter().filter_map(|s| key(s).map(|k| (s.member.stream.as_str(), k))))
}

/// Groups (stream id, key) pairs by key: pairs with equal keys form a group; groups come in
/// order of their first pair, streams in the order given.
pub fn group_by<'a, K: PartialEq>(items: impl IntoIterator<Item = (&'a str, K)>) -> Vec<(StreamGroup, K)> {
    let mut groups: Vec<(StreamGroup, K)> = Vec::new();
    for (stream, k) in items {
        match groups.iter_mut().find(|(_, gk)| *gk == k) {
            Some((g, _)) => g.streams.push(stream.to_string()),
            None => groups.push((StreamGroup { streams: vec![stream.to_string()] }, k)),
        }
    }
    groups
}

/// Where a row about one aligned compile sorts: in `compile_alignment` order, rows about entries
/// outside any compile (`None`) last.
pub fn row_order(aligned: Option<u32>) -> (bool, u32) {
    (aligned.is_none(), aligned.unwrap_or(0))
}

/// The label of each stream: `rank N` when N (its rank, else its file rank) is unique among the
/// streams, its id otherwise.
pub fn labels(members: &mut [RankMember]) {
    let count = |f: fn(&RankMember) -> Option<u32>, r: u32| members.iter().filter(|m| f(m) == Some(r)).count();
    let labels: Vec<String> = members
        .iter()
        .map(|m| {
            let unique = |f: fn(&RankMember) -> Option<u32>| f(m).filter(|&r| count(f, r) == 1);
            match unique(|m| m.rank).or_else(|| unique(|m| m.file_rank)) {
                Some(r) => format!("rank {r}"),
                None => m.stream.clone(),
            }
        })
        .collect();
    for (m, l) in members.iter_mut().zip(labels) {
        m.label = l;
    }
}

macro_rules! cross_rank_tables {
    ($($ty:ty),* $(,)?) => {
        /// Builds every cross-rank table that has rows, each serialized by `serializer` (the
        /// bundle writer's); `rank_findings` last, from the streams and the headlines of the
        /// others. `payloads` reads the blob store.
        pub fn build<S: TableSerializer>(
            streams: &[StreamTables],
            alignment: &Alignment,
            payloads: &dyn PayloadReader,
            serializer: &mut S,
        ) -> Vec<S::Serialized> {
            let mut out = Vec::new();
            if !alignment.is_empty() {
                let name = <CompileAlignment as tlparse_bundle::Table>::NAME;
                out.push(serializer.serialize(name, alignment.len() as u64, None, &alignment.table));
            }
            let mut headlines = rank_findings::Headlines::default();
            $(
                if let Some((table, rows)) = <$ty as CrossRankTable>::build_reading(streams, alignment, payloads) {
                    <$ty as CrossRankTable>::findings(&table, &mut headlines);
                    out.push(serializer.serialize(<$ty as CrossRankTable>::NAME, rows, None, &table));
                }
            )*
            let (findings, rows) = rank_findings::build(streams, alignment, headlines);
            out.push(serializer.serialize(<RankFindings as tlparse_bundle::Table>::NAME, rows, None, &findings));
            out
        }

        /// The names of every cross-rank table, in the order they are computed.
        pub const CROSS_RANK_TABLE_NAMES: &[&str] = &[
            <CompileAlignment as tlparse_bundle::Table>::NAME,
            $(<$ty as CrossRankTable>::NAME,)*
            <RankFindings as tlparse_bundle::Table>::NAME,
        ];
    };
}

/// The streams' compiles, aligned by code.
pub fn align(streams: &[StreamTables]) -> Alignment {
    let compiles: Vec<StreamCompiles<CompileRow>> =
        streams.iter().map(|s| StreamCompiles { stream: &s.member.stream, compiles: &s.compiles }).collect();
    Alignment::new(&compiles)
}

cross_rank_tables! {
    cache_divergence::CacheDivergenceTable,
    compile_time_imbalance::CompileTimeImbalanceTable,
    rank_differ::RankDifferTable,
    collective_schedules::CollectiveSchedulesTable,
    execution_order::ExecutionOrderTable,
    runtime_estimations::RuntimeEstimationsTable,
    tensor_meta::TensorMetaTable,
}
