//! Analysis tables computed from a stream's entries: one module per table, each pure (events in,
//! rows and diagnostics out). The bundle writer feeds every entry of a stream to a
//! [`StreamAnalysis`] in log order and writes what [`StreamAnalysis::finish`] returns.
//!
//! Tables share one pass in two stages: [`compiles::Compiles`] observes each entry first, filing
//! what several tables need about each compile id (artifacts, metrics, stacks) under the compile's
//! record, whose index every table then gets with the entry ([`Observe::record`]); each table
//! finishes from its own state plus that.

pub mod alignment;
pub mod cache_outcomes;
pub mod collectives;
pub mod compilation_metrics;
pub mod compile_directory;
pub mod compile_summary;
pub mod compile_time;
pub mod compiles;
pub mod cross_rank;
pub mod export_report;
pub mod failures;
pub mod graph_breaks;
pub mod graph_execution;
pub mod graph_sizes;
pub mod guards;
pub mod hints;
pub mod inputs;
pub mod log_volume;
pub mod metrics;
pub mod provenance;
pub mod recompiles;
pub mod run_compare;
pub mod runnables;
pub mod runtime_estimates;
pub mod search;
pub mod stack_trie;
pub mod trace_event;

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// The cross-rank tables still serialize their own output (moving with their file reading).
use crate::parse::Meta;
use crate::parse::TraceEvent;
use crate::parse::entry::Fields;
use crate::parse::json_text::{self, escape_lone_surrogates, shallow_value, usable_number};
use crate::schema::{CompileId, DiagnosticKind, IndexRow, PayloadFormat, PayloadRef, StackTable};
use crate::store::Store;
pub use compiles::{CompileRecord, CompileRecords, Compiles};
use tlparse_bundle::naming::{ArtifactNames, artifact_names};

/// One log entry as the tables see it: its index row's fields, with stacks already interned in
/// the stream's stack table, and the payload bytes.
pub struct Event<'a> {
    /// Position in the stream.
    pub seq: u64,
    /// Header line in the input file.
    pub line: u64,
    /// Last line of the entry.
    pub end_line: u64,
    /// Length of the header line in bytes, without its line ending.
    pub header_bytes: u64,
    /// Glog timestamp.
    pub ts: &'a str,
    /// Logging call site, `path/file.py:LINE`.
    pub src: &'a str,
    pub kind: &'a str,
    pub name: Option<&'a str>,
    pub compile_id: Option<&'a CompileId>,
    /// The compile id as displayed (`[0/1]`).
    pub display_id: Option<&'a str>,
    /// Metadata as in the index row: stacks replaced by their ids.
    pub meta: &'a Meta,
    /// The `meta` fields that hold stack ids.
    pub meta_stacks: &'a [String],
    /// The metadata's text, when the bundle does not hold it as JSON (`meta` is then null).
    pub meta_text: Option<&'a str>,
    /// The envelope-level stack id.
    pub stack: Option<u32>,
    pub payload: Option<EventPayload<'a>>,
    /// The index row's payload: also there when the payload was too long to hold, and so
    /// `payload` is `None` (what a table knows of it: size, lines, blob id, format).
    pub payload_ref: Option<&'a PayloadRef>,
    /// The stream's stacks so far (every stack id of this event resolves in it).
    pub stacks: &'a StackTable,
    meta_value: OnceCell<Value>,
    /// The metadata's members, split once for every table that reads them (see
    /// [`Event::meta_members`]); `None` when it is not an object kept raw.
    meta_split: OnceCell<Option<RawMembers<'a>>>,
    payload_json: OnceCell<Option<Value>>,
    trace_event: Option<&'a TraceEvent>,
}

/// The most heap a table may spend on one parsed payload or metadata, estimated before parsing:
/// JSON can take 36 times its size once parsed (`[0,0,…]`), and a payload held in memory may be
/// as long as the line limit.
const MAX_PARSED_JSON: u64 = 64 << 20;

/// JSON parsed (lone surrogate escapes kept as text, nesting as deep as a bundle may hold) unless
/// it is invalid or would take more than [`MAX_PARSED_JSON`] of heap (the estimate is a scan,
/// skipped for the small documents nearly all entries have).
pub(crate) fn parse_json_bounded(bytes: &[u8]) -> Option<Value> {
    if bytes.len() as u64 > MAX_PARSED_JSON / 64
        && tlparse_bundle::reader::json_memory(bytes).is_ok_and(|heap| heap > MAX_PARSED_JSON)
    {
        return None;
    }
    json_text::parse_bytes(&escape_lone_surrogates(bytes)).ok()
}

/// An entry's metadata read member by member, for tables that read a few members of many
/// entries. Metadata the parser kept raw (no stack or name in it) is not built whole: each member
/// is parsed when asked for. A tensor-heavy log describes tens of thousands of tensors, and
/// building each description as an object cost more than the rest of the `inputs` table. A
/// member reads as it does in [`Event::meta`]: the last one when a key repeats.
pub enum MetaMembers<'e, 'a> {
    /// The object's members, each key once with its last value, raw (checked by the parser,
    /// lone surrogates escaped): as [`split_members`] makes them.
    Raw(&'e [(Cow<'a, str>, &'a str)]),
    /// Metadata already parsed, or not an object kept raw.
    Parsed(&'e Value),
}

impl<'e, 'a> MetaMembers<'e, 'a> {
    /// A member's value.
    pub fn get(&self, key: &str) -> Option<Cow<'e, Value>> {
        match self {
            MetaMembers::Raw(members) => {
                let (_, raw) = members.iter().find(|(k, _)| k == key)?;
                json_text::parse(raw).ok().map(Cow::Owned)
            }
            MetaMembers::Parsed(meta) => meta.get(key).map(Cow::Borrowed),
        }
    }

    /// A member's raw JSON text, when the metadata is kept raw.
    pub fn raw(&self, key: &str) -> Option<&'a str> {
        match self {
            MetaMembers::Raw(members) => members.iter().find(|(k, _)| k == key).map(|(_, raw)| *raw),
            MetaMembers::Parsed(_) => None,
        }
    }

    /// Each member whose key `wanted` accepts, once, in order of first appearance, with its value.
    pub fn each(&self, wanted: impl Fn(&str) -> bool) -> Vec<(String, Cow<'e, Value>)> {
        match self {
            MetaMembers::Raw(members) => members
                .iter()
                .filter(|(key, _)| wanted(key))
                .filter_map(|(key, raw)| Some((key.to_string(), Cow::Owned(json_text::parse(raw).ok()?))))
                .collect(),
            MetaMembers::Parsed(meta) => meta
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(key, _)| wanted(key))
                .map(|(key, value)| (key.clone(), Cow::Borrowed(value)))
                .collect(),
        }
    }

    /// Whether the metadata is an object.
    pub fn is_object(&self) -> bool {
        match self {
            MetaMembers::Raw(_) => true,
            MetaMembers::Parsed(meta) => meta.is_object(),
        }
    }

    /// The members of an object, each once, in order of first appearance, with its last value
    /// (as the parsed object keeps them); `None` when the metadata is not an object.
    pub fn object(&self) -> Option<Vec<(&str, Member<'e, 'a>)>> {
        match self {
            MetaMembers::Raw(members) => {
                Some(members.iter().map(|(key, raw)| (key.as_ref(), Member::Raw(raw))).collect())
            }
            MetaMembers::Parsed(meta) => {
                Some(meta.as_object()?.iter().map(|(key, value)| (key.as_str(), Member::Parsed(value))).collect())
            }
        }
    }

    /// A member as text, as [`guards::text`] reads it.
    pub fn text(&self, key: &str) -> Option<String> {
        guards::value_text(self.get(key)?.as_ref())
    }

    /// A member that is an unsigned integer.
    pub fn uint(&self, key: &str) -> Option<u64> {
        self.get(key)?.as_u64()
    }

    /// A boolean member, false when absent or not a boolean.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key).and_then(|v| v.as_bool()).unwrap_or(false)
    }
}

/// Each key of `members` once, in order of first appearance, with its last value: the members a
/// parsed object keeps. Keys rarely repeat: that none does is checked once, by comparing pairs
/// for a few members and with a set for many (torch's metrics have a hundred members, and every
/// table reading them went through all pairs).
fn unique_members(members: RawMembers<'_>) -> RawMembers<'_> {
    const PAIRS_UP_TO: usize = 32;
    let none_repeats = if members.len() <= PAIRS_UP_TO {
        members.iter().enumerate().all(|(at, (key, _))| members[..at].iter().all(|(k, _)| k != key))
    } else {
        let mut seen = crate::fast_hash::HashSet::default();
        members.iter().all(|(key, _)| seen.insert(key.as_ref()))
    };
    if none_repeats {
        return members;
    }
    let first_of = |at: usize, key: &str| !members[..at].iter().any(|(k, _)| k == key);
    let last_value = |key: &str| members.iter().rev().find(|(k, _)| k == key).expect("this key is there").1;
    let unique = members.iter().enumerate().filter(|(at, (key, _))| first_of(*at, key));
    unique.map(|(_, (key, _))| (key.clone(), last_value(key))).collect()
}

/// An object's members, each key once (see [`unique_members`]), and its value's raw JSON text.
pub type RawMembers<'a> = Vec<(Cow<'a, str>, &'a str)>;

/// The members of an object's well-formed JSON text, each key once: split without decoding, or
/// by serde_json when a key holds an escape.
fn split_members(text: &str) -> Option<RawMembers<'_>> {
    let members = match json_text::object_members(text) {
        Some(members) => members.into_iter().map(|(key, value)| (Cow::Borrowed(key), value)).collect(),
        None => {
            let Fields(members) = serde_json::from_str(text).ok()?;
            members.into_iter().map(|(key, value)| (key, value.get())).collect()
        }
    };
    Some(unique_members(members))
}

/// One member's value of [`MetaMembers::object`]: raw JSON text, or parsed.
#[derive(Clone, Copy)]
pub enum Member<'e, 'a> {
    Raw(&'a str),
    Parsed(&'e Value),
}

impl<'e, 'a> Member<'e, 'a> {
    /// The value, parsed if it was raw.
    pub fn value(self) -> Cow<'e, Value> {
        match self {
            Member::Raw(raw) => Cow::Owned(json_text::parse(raw).expect("metadata checked by the parser")),
            Member::Parsed(value) => Cow::Borrowed(value),
        }
    }

    /// The raw JSON text, when the member was not parsed.
    pub fn raw(self) -> Option<&'a str> {
        match self {
            Member::Raw(raw) => Some(raw),
            Member::Parsed(_) => None,
        }
    }
}

/// A payload as the tables see it.
#[derive(Clone, Copy)]
pub struct EventPayload<'a> {
    pub bytes: &'a [u8],
    /// Blob id, 32 hex digits.
    pub hash: &'a str,
    pub lines: u64,
    pub format: PayloadFormat,
}

impl<'a> Event<'a> {
    /// The event of an index row about to be written: `end_line` and `header_bytes` come from
    /// the parsed entry, `payload` is the bytes `row.payload` refers to.
    pub fn new(
        row: &'a IndexRow<Meta>,
        end_line: u64,
        header_bytes: u64,
        payload: Option<&'a [u8]>,
        trace_event: Option<&'a TraceEvent>,
        stacks: &'a StackTable,
    ) -> Self {
        Event {
            seq: row.seq,
            line: row.line,
            end_line,
            header_bytes,
            ts: &row.ts,
            src: &row.src,
            kind: &row.kind,
            name: row.name.as_deref(),
            compile_id: row.cid.as_ref(),
            display_id: row.compile_id.as_deref(),
            meta: &row.meta,
            meta_stacks: &row.meta_stacks,
            meta_text: row.meta_text.as_deref(),
            stack: row.stack,
            payload: row.payload.as_ref().zip(payload).map(|(p, bytes)| EventPayload {
                bytes,
                hash: &p.hash,
                lines: p.lines,
                format: p.format,
            }),
            payload_ref: row.payload.as_ref(),
            stacks,
            meta_value: OnceCell::new(),
            meta_split: OnceCell::new(),
            payload_json: OnceCell::new(),
            trace_event,
        }
    }

    /// The metadata as a JSON value, parsed once on first use. Of metadata kept as text, what can
    /// be read of it ([`shallow_value`]): the rest of an entry nested too deep is still analysed.
    pub fn meta(&self) -> &Value {
        match (self.meta, self.meta_text) {
            (_, Some(text)) => self.meta_value.get_or_init(|| shallow_value(text)),
            (Meta::Value(v), None) => v,
            (Meta::Raw(raw), None) => {
                self.meta_value.get_or_init(|| parse_json_bounded(raw.get().as_bytes()).unwrap_or_default())
            }
        }
    }

    /// The metadata read member by member (see [`MetaMembers`]).
    pub fn meta_members(&self) -> MetaMembers<'_, 'a> {
        if self.meta_value.get().is_none()
            && let Some(members) = self.meta_split.get_or_init(|| self.split_meta())
        {
            return MetaMembers::Raw(members);
        }
        MetaMembers::Parsed(self.meta())
    }

    /// The members of metadata kept raw, when it is an object small enough to read whole.
    fn split_meta(&self) -> Option<RawMembers<'a>> {
        let (Meta::Raw(raw), None) = (self.meta, self.meta_text) else { return None };
        let raw = raw.get();
        // As `parse_json_bounded` would read it whole: no heap estimate below this size.
        if raw.len() as u64 > MAX_PARSED_JSON / 64 || !raw.starts_with('{') {
            return None;
        }
        split_members(raw)
    }

    /// A metadata field that held a stack: its id in the stream's stack table.
    pub fn meta_stack(&self, key: &str) -> Option<u32> {
        if !self.meta_stacks.iter().any(|k| k == key) {
            return None;
        }
        self.meta().get(key).and_then(Value::as_u64).map(|id| id as u32)
    }

    /// The payload as text (lossy for invalid UTF-8).
    pub fn payload_text(&self) -> Option<Cow<'a, str>> {
        self.payload.map(|p| crate::parse::lossy(p.bytes))
    }

    /// The payload parsed as JSON, once (lone surrogate escapes kept as text); `None` without a
    /// payload, or when it is not JSON the bundle can hold (tables copy parts of it).
    pub fn payload_json(&self) -> Option<&Value> {
        self.payload_json.get_or_init(|| self.payload.and_then(|p| parse_json_bounded(p.bytes))).as_ref()
    }

    /// A `chromium_event` payload read as a trace event (by the parser, which needed to read it
    /// anyway); `None` for other kinds and for payloads of another shape.
    pub fn trace_event(&self) -> Option<&'a TraceEvent> {
        self.trace_event
    }

    /// What to call the entry, and tlparse's name for it where that differs: the one naming
    /// rule, [`tlparse_bundle::naming::artifact_names`].
    pub fn names(&self) -> ArtifactNames {
        // Only output code has a file name in it; reading it needs the metadata parsed.
        let filename = if self.kind == "inductor_output_code" {
            self.meta().get("filename").and_then(Value::as_str)
        } else {
            None
        };
        artifact_names(self.kind, self.name, filename)
    }
}

/// A problem a table found with an entry: an `unusable_entry` diagnostic, or `out_of_range`.
#[derive(Debug, Clone, PartialEq)]
pub struct TableDiagnostic {
    pub kind: DiagnosticKind,
    pub line: u64,
    pub end_line: u64,
    /// Which table, and what was wrong.
    pub message: String,
}

/// Where tables report entries they cannot use.
#[derive(Debug, Default)]
pub struct Diagnostics(pub Vec<TableDiagnostic>);

impl Diagnostics {
    /// Records that `table` could not use the entry.
    pub fn unusable(&mut self, table: &str, ev: &Event, why: impl std::fmt::Display) {
        self.0.push(TableDiagnostic {
            kind: DiagnosticKind::UnusableEntry,
            line: ev.line,
            end_line: ev.end_line,
            message: format!("{table}: {} entry not used: {why}", ev.kind),
        });
    }

    /// A number of the entry read as a time, duration, size or count: `None` (as if absent) when
    /// it cannot be one ([`usable_number`]), with an `out_of_range` diagnostic. Tables that read
    /// the same field of an entry report it once.
    pub fn number(&mut self, ev: &Event, field: &str, value: Option<f64>) -> Option<f64> {
        let x = value?;
        if usable_number(x).is_some() {
            return Some(x);
        }
        let message = format!("{} {field} {x:?} is out of range (not finite, or beyond ±2^53): ignored", ev.kind);
        let reported = self.0.iter().rev().take_while(|d| d.line == ev.line).any(|d| d.message == message);
        if !reported {
            self.0.push(TableDiagnostic {
                kind: DiagnosticKind::OutOfRange,
                line: ev.line,
                end_line: ev.end_line,
                message,
            });
        }
        None
    }

    /// A JSON field of the entry read as a time, duration, size or count (see [`Self::number`]).
    pub fn json_number(&mut self, ev: &Event, field: &str, value: Option<&Value>) -> Option<f64> {
        self.number(ev, field, value.and_then(Value::as_f64))
    }
}

/// What a table's observing step gets besides the entry.
pub struct Observe<'a> {
    /// Where it reports what it cannot use.
    pub diags: &'a mut Diagnostics,
    /// The index of the entry's compile (its id normalized, see [`compiles::normalize`]) among
    /// the stream's [`Compiles`] records, which observe every entry first: `None` exactly when
    /// it has no compile id. Tables key their per-compile state by it (4 bytes) rather than by
    /// the id (72).
    pub record: Option<u32>,
}

/// What every table's finishing step can read.
pub struct Finish<'a> {
    /// The stream's complete stack table.
    pub stacks: &'a StackTable,
    /// What was collected about each compile id.
    pub compiles: &'a Compiles,
    /// Each compile's time as the trace events give it: every table that reports a compile's
    /// time takes it from here (`CompileClock::parts`), so that they agree.
    pub clock: &'a compile_time::CompileClock,
}

/// One analysis table of a stream: observes every entry in log order, then finishes into its
/// rows. Implementations are pure: no I/O, no clocks.
pub trait Table: Default {
    /// The table's type in the format's registry, which gives its name: its file is
    /// `tables/<stream>/<NAME>.json.zst`.
    type Format: tlparse_bundle::Table;
    const NAME: &'static str = <Self::Format as tlparse_bundle::Table>::NAME;
    /// The table file's type (`Format`), or a type that serializes as it does (and may borrow
    /// what the finishing step reads).
    type Output<'a>: Serialize;
    /// An empty table whose rows and per-compile state spill to `store` (the bundle writer's
    /// spool, or memory). A table that keeps nothing in `store`'s types is its `Default`.
    fn new(_store: &Store) -> Self {
        Self::default()
    }
    /// Sees one entry, after [`Compiles`] did.
    fn observe(&mut self, ev: &Event, cx: &mut Observe);
    /// The finished table and its number of rows; `None` when the stream has nothing for it.
    fn finish<'a>(self, ctx: &'a Finish) -> Option<(Self::Output<'a>, u64)>;
    /// What a build's closing lines say of the finished table, if they say anything.
    fn finding(_output: &Self::Output<'_>) -> Option<Finding> {
        None
    }
}

/// What a build's closing lines say of one table of a stream, taken from the table as it
/// finishes: reading the tables back from the bundle to count them took a tenth of the build of
/// a 1 GB log of many failing compiles (an 80 MB failures table), on one core after the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// `compile_directory`: its compiles by status (the status's name in the table).
    CompileStatuses(BTreeMap<String, u64>),
    /// `graph_breaks`: its `total`, and its groups (the places breaks happened).
    GraphBreaks { total: u64, places: u64 },
    /// `recompiles`: its frames.
    RecompiledFrames(u64),
    /// `failures`: its `failed` and `restarts`.
    Failures { failed: u64, restarts: u64 },
}

/// The findings of one stream's tables; `None` where the stream has no such table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamFindings {
    pub compiles_by_status: Option<BTreeMap<String, u64>>,
    pub graph_breaks: Option<(u64, u64)>,
    pub recompiled_frames: Option<u64>,
    pub failures: Option<(u64, u64)>,
}

impl StreamFindings {
    pub fn add(&mut self, finding: Finding) {
        match finding {
            Finding::CompileStatuses(by_status) => self.compiles_by_status = Some(by_status),
            Finding::GraphBreaks { total, places } => self.graph_breaks = Some((total, places)),
            Finding::RecompiledFrames(frames) => self.recompiled_frames = Some(frames),
            Finding::Failures { failed, restarts } => self.failures = Some((failed, restarts)),
        }
    }
}

/// What a finished table becomes: the bundle writer serializes it (into a writer of its own,
/// compressing as it goes) the moment its table finishes, so only the tables being finished are
/// held, never their JSON whole.
pub trait TableSerializer {
    /// What the bundle keeps of a serialized table.
    type Serialized;
    /// `output` (the table `name`, of `rows` rows), serialized; `finding` is what the build's
    /// closing lines say of it ([`Table::finding`]).
    fn serialize(
        &mut self,
        name: &'static str,
        rows: u64,
        finding: Option<Finding>,
        output: &impl Serialize,
    ) -> Self::Serialized;
}

/// One table to finish, handed to whichever finishing thread the bundle writer runs it on, with
/// that thread's serializer; `None` when the stream has nothing for the table.
pub type FinishJob<'f, S> = Box<dyn FnOnce(&mut S) -> Option<<S as TableSerializer>::Serialized> + Send + 'f>;

/// Finishes one table and serializes it with `serializer`.
fn finish_table<T: Table, S: TableSerializer>(table: T, ctx: &Finish, serializer: &mut S) -> Option<S::Serialized> {
    let (output, rows) = table.finish(ctx)?;
    let finding = T::finding(&output);
    Some(serializer.serialize(T::NAME, rows, finding, &output))
}

macro_rules! tables {
    ($($field:ident: $ty:ty),* $(,)?; finish order: $($order:ident),* $(,)?) => {
        /// Every table of one stream, fed in one pass.
        pub struct StreamAnalysis {
            compiles: Compiles,
            diagnostics: Diagnostics,
            $($field: $ty,)*
        }

        /// Every table, empty, keeping all it holds in memory.
        impl Default for StreamAnalysis {
            fn default() -> Self {
                StreamAnalysis::new(&Store::default())
            }
        }

        impl StreamAnalysis {
            /// Every table, empty, keeping what spills in `store`.
            pub fn new(store: &Store) -> Self {
                StreamAnalysis {
                    compiles: Compiles::new(store),
                    diagnostics: Diagnostics::default(),
                    $($field: <$ty as Table>::new(store),)*
                }
            }

            /// Feeds one entry to every table.
            pub fn observe(&mut self, ev: &Event) {
                // The first stage: the tables key what they hold by the record it files.
                let record = self.compiles.observe(ev, &mut self.diagnostics);
                let cx = &mut Observe { diags: &mut self.diagnostics, record };
                $(self.$field.observe(ev, cx);)*
            }

            /// How many distinct compile ids the entries named, as they spelled them.
            pub fn compile_ids(&self) -> u64 {
                self.compiles.raw_id_count()
            }

            /// Finishes every table: hands `run` one job per table, in `finish order`, for the
            /// bundle writer to run (on as many threads as it chooses, each with a serializer of
            /// its own); returns the entries the tables could not use. The largest come last,
            /// when the other tables' state is freed: last of all the compile directory, whose
            /// alignment keys every compile at once (on a log of many small compiles it is the
            /// largest). Order changes no output. A table missing from that list is an unused
            /// variable, one listed twice a use after move.
            #[deny(unused_variables)]
            pub fn finish<S: TableSerializer, E>(
                mut self,
                stacks: &StackTable,
                run: impl FnOnce(Vec<FinishJob<'_, S>>) -> Result<(), E>,
            ) -> Result<Vec<TableDiagnostic>, E> {
                self.compiles.settle();
                let clock = self.compile_time.clock();
                let StreamAnalysis { compiles, diagnostics, $($field),* } = self;
                let ctx = &Finish { stacks, compiles: &compiles, clock: &clock };
                let jobs: Vec<FinishJob<'_, S>> =
                    vec![$(Box::new(move |serializer: &mut S| finish_table($order, ctx, serializer))),*];
                run(jobs)?;
                Ok(diagnostics.0)
            }
        }

        /// The names of every table, in the order they observe entries.
        pub const TABLE_NAMES: &[&str] = &[$(<$ty as Table>::NAME),*];
    };
}

tables! {
    compile_directory: compile_directory::CompileDirectoryTable,
    stack_trie: stack_trie::StackTrieTable,
    failures: failures::FailuresTable,
    compilation_metrics: compilation_metrics::CompilationMetricsTable,
    guards: guards::GuardsTable,
    inputs: inputs::InputsTable,
    recompiles: recompiles::RecompilesTable,
    graph_breaks: graph_breaks::GraphBreaksTable,
    graph_sizes: graph_sizes::GraphSizesTable,
    cache_outcomes: cache_outcomes::CacheOutcomesTable,
    compile_time: compile_time::CompileTimeTable,
    log_volume: log_volume::LogVolumeTable,
    export_report: export_report::ExportReportTable,
    provenance: provenance::ProvenanceTable,
    runnables: runnables::RunnablesTable,
    collectives: collectives::CollectivesTable,
    runtime_estimates: runtime_estimates::RuntimeEstimatesTable,
    graph_execution: graph_execution::GraphExecutionTable,
    search: search::SearchTable,
    compile_summary: compile_summary::CompileSummaryTable,
    hints: hints::HintsTable,
    ;
    finish order: stack_trie, failures, inputs, recompiles, graph_breaks, hints, graph_sizes, cache_outcomes, log_volume,
    export_report, provenance, runnables, collectives, runtime_estimates, graph_execution, compile_summary,
    search, compilation_metrics, compile_time, guards, compile_directory,
}

/// For unit tests of tables: `table` finished with no stacks, compile records or clock, read
/// back as its format's type (as a viewer would), with its number of rows.
#[cfg(test)]
pub(crate) fn finish_alone<T: Table>(table: T) -> Option<(T::Format, u64)>
where
    T::Format: serde::de::DeserializeOwned,
{
    let (stacks, compiles, clock) = (StackTable::default(), Compiles::default(), compile_time::CompileClock::default());
    let ctx = Finish { stacks: &stacks, compiles: &compiles, clock: &clock };
    let (output, rows) = table.finish(&ctx)?;
    Some((serde_json::from_value(serde_json::to_value(&output).unwrap()).unwrap(), rows))
}

/// An index row for unit tests of tables: entry `seq` (on line `seq + 1`) of kind `kind`, with
/// no timestamp, name, compile id, metadata or payload; tests set what they need over it.
#[cfg(test)]
pub(crate) fn test_row(seq: u64, kind: &str) -> IndexRow<Meta> {
    IndexRow {
        seq,
        line: seq + 1,
        ts: String::new(),
        level: "V".into(),
        src: String::new(),
        kind: kind.into(),
        name: None,
        compile_id: None,
        cid: None,
        rank: None,
        meta: Meta::Value(serde_json::json!({})),
        meta_stacks: Vec::new(),
        meta_text: None,
        stack: None,
        extra: None,
        payload: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Both ways of reading `text`: raw members, and the object parsed whole.
    fn both(text: &str) -> (RawMembers<'_>, Value) {
        (split_members(text).unwrap(), json_text::parse(text).unwrap())
    }

    /// What a table can read of metadata, through every accessor.
    fn readings(m: &MetaMembers, keys: &[&str]) -> Vec<String> {
        let mut out: Vec<String> =
            keys.iter().map(|k| format!("{k}: {:?} {:?} {:?} {}", m.get(k), m.text(k), m.uint(k), m.flag(k))).collect();
        out.push(format!("{:?} {}", m.each(|k| k != "b"), m.is_object()));
        let object =
            m.object().map(|members| members.into_iter().map(|(k, v)| (k.to_string(), v.value().into_owned())));
        out.push(format!("{:?}", object.map(Vec::from_iter)));
        out
    }

    #[test]
    fn a_repeated_key_reads_as_the_parsed_object_keeps_it() {
        // The last value, at the place of the first: `b` comes before `c`, with value 3.
        let text = r#"{"a": 1, "b": [1, "x"], "c": "s", "b": 3, "d": {"e": null}}"#;
        let (members, parsed) = both(text);
        let raw = MetaMembers::Raw(&members);
        assert_eq!(raw.get("b").as_deref(), Some(&Value::from(3)));
        let keys: Vec<String> = raw.each(|_| true).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["a", "b", "c", "d"]);
        let keys = ["a", "b", "c", "d", "e", "missing"];
        assert_eq!(readings(&raw, &keys), readings(&MetaMembers::Parsed(&parsed), &keys));
    }

    #[test]
    fn many_members_read_as_the_parsed_object_with_or_without_a_repeated_key() {
        // Over `unique_members`' PAIRS_UP_TO members, repeats are found with a set.
        let distinct: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        let keys = ["k0", "k3", "k39", "missing"];
        for tail in ["", r#", "k3": "again", "k0": [1]"#] {
            let text = format!("{{{}{tail}}}", distinct.join(", "));
            let (members, parsed) = both(&text);
            assert_eq!(members.len(), 40, "{tail}");
            let raw = MetaMembers::Raw(&members);
            assert_eq!(readings(&raw, &keys), readings(&MetaMembers::Parsed(&parsed), &keys), "{tail}");
        }
    }

    proptest! {
        /// Whatever members an object has (keys repeated, values of every kind), reading them
        /// raw gives what reading the parsed object gives.
        #[test]
        fn raw_members_read_as_the_parsed_object(members in proptest::collection::vec(
            (
                prop_oneof![Just("a"), Just("b"), Just("is_x"), Just("size")],
                prop_oneof![
                    Just("null".to_string()),
                    any::<bool>().prop_map(|b| b.to_string()),
                    any::<i64>().prop_map(|n| n.to_string()),
                    any::<u64>().prop_map(|n| n.to_string()),
                    (-1e6f64..1e6).prop_map(|x| format!("{x:?}")),
                    "[a-z\\\\\"]{0,4}".prop_map(|s| serde_json::to_string(&s).unwrap()),
                    Just(r#"[1, "s0", [2]]"#.to_string()),
                    Just(r#"{"k": [true], "j": 1.5}"#.to_string()),
                ],
            ),
            0..8,
        )) {
            let body: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
            let text = format!("{{{}}}", body.join(", "));
            let (members, parsed) = both(&text);
            let raw = MetaMembers::Raw(&members);
            let keys = ["a", "b", "is_x", "size", "missing"];
            prop_assert_eq!(readings(&raw, &keys), readings(&MetaMembers::Parsed(&parsed), &keys));
        }
    }
}
