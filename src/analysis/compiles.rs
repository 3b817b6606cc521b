//! What several tables need to know about each compile id, collected in one pass: its entries'
//! span, `dynamo_start` stack, `compilation_metrics`, artifacts and cache outcomes.

use std::borrow::Cow;
use std::collections::BTreeMap;

use indexmap::IndexSet;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

pub use super::metrics::Metrics;
use super::{Diagnostics, Event};
use crate::fast_hash::HashMap;
use crate::parse::{BlobId, NAMED_KINDS, display_compile_id, hex};
use crate::schema::tables::{ArtifactRef, CacheOutcome, CompileStatus, GraphRole};
use crate::schema::{CompileId, PayloadFormat};
use crate::store::{CompactId, Records, Store};
use tlparse_bundle::ids::parse_blob_id;

mod ids;
mod paged;
use ids::{RecordIds, frame_compile};
pub use paged::CompileRecords;
use paged::PagedRecords;

/// An artifact as [`Compiles`] keeps it ([`Compiles::artifact_ref`] makes its row): a long log
/// has a hundred thousand, so kind and name are interned and the blob id kept as bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Artifact {
    pub seq: u64,
    line: u64,
    size: u64,
    lines: u64,
    /// Index in `Compiles::names`.
    kind: u32,
    /// Index in `Compiles::names`.
    name: u32,
    /// Index in `Compiles::names` of tlparse's name, when it differs.
    tlparse_name: Option<u32>,
    blob: Option<BlobId>,
    format: Option<PayloadFormat>,
    url: Option<Box<str>>,
    /// The AOT graph it was produced for (see [`GraphSpans`]).
    graph: Option<GraphRole>,
}

/// A list of artifacts, serialized as their rows.
pub struct ArtifactRefs<'a>(pub &'a Compiles, pub &'a [Artifact]);

impl Serialize for ArtifactRefs<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.1.iter().map(|a| self.0.artifact_ref(a)))
    }
}

/// Everything collected about one compile id.
/// Paged records round-trip through postcard ([`paged`]), their rare facts kept aside.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompileRecord {
    /// The id ([`CompileRecord::id`]), compact; one too wide for that is whole in `rare`.
    id: CompactId,
    pub first_seq: u64,
    pub last_seq: u64,
    /// The timestamps of its first and last entries ([`CompileRecord::start_ts`]): packed
    /// ([`pack_stamp`]), or [`STAMP_IN_RARE`].
    start_ts: u64,
    end_ts: u64,
    /// The `dynamo_start` stack's id in the stream's stack table.
    pub start_stack: Option<u32>,
    /// The compile's first `compilation_metrics` ([`Compiles::metrics`] reads it).
    metrics: Option<HeldMetrics>,
    /// The row of `Compiles::frozen` holding its latest frozen chunk of artifacts, or
    /// [`NO_ROW`]; the chunks before it are linked by `Compiles::frozen_before`, and a live tail
    /// ([`Compiles::artifact_chunks`]) follows them.
    frozen: u32,
    /// Index (in `Compiles::records`) of the next attempt of the same frame compile, if any.
    next_attempt: Option<u32>,
    /// What few compiles have (graph breaks, a capture's compiles), out of line: a long log's
    /// records are most of what a stream holds per compile.
    #[serde(skip)]
    rare: Option<Box<RareFacts>>,
    /// Which AOT graph Inductor is compiling for this compile id.
    graph_spans: GraphSpans,
    /// Which spellings of the id entries used ([`RAW_AS_IS`], [`RAW_WITHOUT_ATTEMPT`]): the
    /// stream's count of distinct compile ids counts both.
    raw_forms: u8,
}

/// A record's id from its compact form and its rare facts (where a wide id is kept whole).
fn record_id(compact: CompactId, rare: Option<&RareFacts>) -> CompileId {
    compact.id().unwrap_or_else(|| rare.and_then(|r| r.wide_id).expect("a wide id is kept whole"))
}

/// The facts of a [`CompileRecord`] that most compiles do not have.
#[derive(Debug, Clone, Default)]
struct RareFacts {
    /// The id, when it has no compact form.
    wide_id: Option<CompileId>,
    /// The timestamps not written as glog writes them, as written.
    start_text: Option<String>,
    end_text: Option<String>,
    /// Short reasons of the compile's `dynamo_graph_break_reason` artifacts.
    graph_breaks: Vec<String>,
    /// For a compiled-autograd capture, the records (indexes in `Compiles::records`) of the
    /// compiles of its graph, in order of first appearance.
    graph_compiles: Vec<usize>,
}

/// [`CompileRecord::raw_forms`]: an entry named the id as it is filed.
const RAW_AS_IS: u8 = 1;
/// [`CompileRecord::raw_forms`]: an entry named the id without its attempt (filed as attempt 0).
const RAW_WITHOUT_ATTEMPT: u8 = 2;

/// A compile's metrics as its record holds them: the row of their bytes in
/// `Compiles::metrics`, and the status they give.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct HeldMetrics {
    row: u32,
    status: CompileStatus,
}

/// A glog timestamp (`1118 14:22:33.123456`) as a record gives it back: its 16 digits packed in a
/// number when it is written as glog writes it, else its text.
#[derive(Debug, Clone, PartialEq)]
pub enum Stamp {
    Digits(u64),
    Text(String),
}

/// A record's packed timestamp that is not glog's shape: its text is in the record's rare facts
/// (packed digits stay below 10^16).
const STAMP_IN_RARE: u64 = u64::MAX;

/// Where a glog timestamp has its separators; every other byte is a digit.
const STAMP_SHAPE: &[u8; 20] = b"dddd dd:dd:dd.dddddd";

impl Stamp {
    pub fn new(ts: &str) -> Stamp {
        match pack_stamp(ts) {
            Some(digits) => Stamp::Digits(digits),
            None => Stamp::Text(ts.to_string()),
        }
    }
}

/// The digits of a timestamp shaped as [`STAMP_SHAPE`], as one decimal number.
fn pack_stamp(ts: &str) -> Option<u64> {
    let bytes = ts.as_bytes();
    if bytes.len() != STAMP_SHAPE.len() {
        return None;
    }
    let mut digits = 0u64;
    for (&b, &shape) in bytes.iter().zip(STAMP_SHAPE) {
        match shape {
            b'd' if b.is_ascii_digit() => digits = digits * 10 + u64::from(b - b'0'),
            b'd' => return None,
            separator if b != separator => return None,
            _ => {}
        }
    }
    Some(digits)
}

impl std::fmt::Display for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Stamp::Text(ref text) => f.write_str(text),
            Stamp::Digits(digits) => {
                let part = |from_right: u32, width: u32| digits / 10u64.pow(from_right) % 10u64.pow(width);
                let (date, hours, minutes) = (part(12, 4), part(10, 2), part(8, 2));
                let (seconds, micros) = (part(6, 2), part(0, 6));
                write!(f, "{date:04} {hours:02}:{minutes:02}:{seconds:02}.{micros:06}")
            }
        }
    }
}

/// Which AOT graph of a compile id Inductor is compiling, from the trace spans torch opens
/// around each graph's compile: `fw_compiler_base` (the forward, or the inference graph) and
/// `bw_compiler` (the backward, often compiled lazily after the compile's metrics). Older torch
/// names them without the `compile_fx.<locals>.` prefix (and `_wrapped_bw_compiler`). Whether
/// `fw_compiler_base` compiles a forward or an inference graph is told by the AOT graph the
/// compile logged before it; when it logged none, the span's artifacts get no label.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct GraphSpans {
    /// The graph of the open compiler span, if known.
    open: Option<GraphRole>,
    /// How many compiler spans are open (a span's end closes `open` only at 0).
    depth: u32,
    /// Whether the compile traced for training (`aot_joint_graph`, `aot_forward_graph`,
    /// `aot_backward_graph`) or for inference (`aot_inference_graph`), once it logged either.
    training: Option<bool>,
}

impl GraphSpans {
    /// Follows a compiler span's begin or end.
    fn span(&mut self, name: &str, ph: &str) {
        let graph = match name.rsplit('.').next() {
            Some("fw_compiler_base") => {
                self.training.map(|t| if t { GraphRole::Forward } else { GraphRole::Inference })
            }
            Some("bw_compiler" | "_wrapped_bw_compiler") => Some(GraphRole::Backward),
            _ => return,
        };
        match ph {
            "B" => {
                self.open = graph;
                self.depth += 1;
            }
            "E" if self.depth > 0 => {
                self.depth -= 1;
                if self.depth == 0 {
                    self.open = None;
                }
            }
            _ => {}
        }
    }

    /// The graph an entry belongs to: the AOT graphs by name, output code by its AOT ID, any
    /// other entry by the open compiler span; chromium events move the span.
    fn see(&mut self, ev: &Event) -> Option<GraphRole> {
        if let Some(te) = ev.trace_event() {
            if let (Some(name), Some(ph)) = (&te.name, &te.ph) {
                self.span(name, ph);
            }
            return None;
        }
        match ev.name.unwrap_or(ev.kind) {
            "aot_joint_graph" => {
                self.training = Some(true);
                None
            }
            "aot_forward_graph" => {
                self.training = Some(true);
                Some(GraphRole::Forward)
            }
            "aot_backward_graph" => {
                self.training = Some(true);
                Some(GraphRole::Backward)
            }
            "aot_inference_graph" => {
                self.training = Some(false);
                Some(GraphRole::Inference)
            }
            "inductor_output_code" => output_code_graph(ev).or(self.open),
            _ => self.open,
        }
    }
}

/// The graphs an AOTAutograd cache hit loads. It opens no compiler span ([`GraphSpans`]): it loads
/// every graph of the compile inside one `AOTAutogradCache.inductor_load` span, one after
/// another, each load logging its `fx_graph_runnable`, its post-grad graph (an
/// `inductor_post_grad_graph` entry), its output code, then its `fx_graph_cache_hit` last (torch
/// 2.15 cache_warm, ranks_cache, graph_breaks; the tlparse test logs of multi_rank_logs). So
/// inside that span a load is the entries up to and including an `fx_graph_cache_hit`, and its
/// graph is the one its output code's `# AOT ID:` names; the entries before the output code
/// learn it then. Kept apart from the records (few compiles are inside such a span at once), so
/// that a record stays small.
#[derive(Debug, Default)]
struct CacheLoads {
    /// The records (index in `Compiles::records`; [`UNATTRIBUTED`] for no compile) inside a
    /// cache load span.
    open: Vec<CacheLoad>,
}

/// One record's open cache load span.
#[derive(Debug)]
struct CacheLoad {
    record: u32,
    /// How many load spans are open (a span's end closes the load only at 0).
    depth: u32,
    /// The seq of the current graph load's first entry.
    start: Option<u64>,
    /// The current graph load's graph, once its output code named it.
    graph: Option<GraphRole>,
}

/// [`CacheLoads`]' record for entries outside any compile.
const UNATTRIBUTED: u32 = u32::MAX;

/// What [`CacheLoads::see`] tells of an entry: its graph, and a graph just learned for the
/// entries of its load from a seq on (for the caller to set on those it filed with none).
struct LoadSeen {
    graph: Option<GraphRole>,
    backfill: Option<(GraphRole, u64)>,
}

impl CacheLoads {
    /// Follows `record`'s entry `ev`; `compiling`: a compiler span is open, which then says.
    fn see(&mut self, record: u32, ev: &Event, compiling: bool) -> LoadSeen {
        let none = LoadSeen { graph: None, backfill: None };
        if let Some(te) = ev.trace_event() {
            if te.name.as_deref() == Some("AOTAutogradCache.inductor_load") {
                self.span(record, te.ph.as_deref());
            }
            return none;
        }
        let Some(load) = self.open.iter_mut().find(|l| l.record == record) else { return none };
        if compiling {
            return none;
        }
        let start = *load.start.get_or_insert(ev.seq);
        let name = ev.name.unwrap_or(ev.kind);
        let mut backfill = None;
        if name == "inductor_output_code" && load.graph.is_none() {
            load.graph = output_code_graph(ev);
            backfill = load.graph.map(|g| (g, start));
        }
        let graph = load.graph;
        if name == "fx_graph_cache_hit" {
            (load.start, load.graph) = (None, None);
        }
        LoadSeen { graph, backfill }
    }

    /// A load span's begin or end.
    fn span(&mut self, record: u32, ph: Option<&str>) {
        let at = self.open.iter().position(|l| l.record == record);
        match (ph, at) {
            (Some("B"), Some(i)) => self.open[i].depth += 1,
            (Some("B"), None) => self.open.push(CacheLoad { record, depth: 1, start: None, graph: None }),
            (Some("E"), Some(i)) => {
                self.open[i].depth -= 1;
                if self.open[i].depth == 0 {
                    self.open.swap_remove(i);
                }
            }
            _ => {}
        }
    }
}

/// Gives `role` to the artifacts from `seq` on (the tail of `list`) that have no graph: those a
/// cache load logged before its output code named their graph.
fn backfill(list: &mut [Artifact], role: GraphRole, seq: u64) {
    for a in list.iter_mut().rev().take_while(|a| a.seq >= seq) {
        a.graph.get_or_insert(role);
    }
}

/// The graph output code names on its `# AOT ID:` line, read in its first 4 KiB.
fn output_code_graph(ev: &Event) -> Option<GraphRole> {
    let bytes = ev.payload?.bytes;
    let head = crate::parse::lossy(&bytes[..bytes.len().min(4096)]);
    aot_id(&head).and_then(graph_role)
}

/// The AOT ID of Python output code: `0_forward` from its first `# AOT ID: ['0_forward']` line.
pub fn aot_id(code: &str) -> Option<&str> {
    let line = code.lines().find_map(|l| l.trim_start().strip_prefix("# AOT ID:"))?;
    let inner = line.trim().strip_prefix("['")?.strip_suffix("']")?;
    (!inner.is_empty()).then_some(inner)
}

/// The graph an AOT ID names by its suffix (`0_backward` → backward).
pub fn graph_role(aot_id: &str) -> Option<GraphRole> {
    match aot_id.rsplit('_').next()? {
        "forward" => Some(GraphRole::Forward),
        "backward" => Some(GraphRole::Backward),
        "inference" => Some(GraphRole::Inference),
        _ => None,
    }
}

/// [`CompileRecord::frozen`] of a compile whose artifacts were never frozen.
const NO_ROW: u32 = u32::MAX;

/// How many compiles keep their artifacts in memory: the ones that logged artifacts last (2 in
/// unit tests, so that they freeze and thaw).
const LIVE_ARTIFACTS: usize = if cfg!(test) { 2 } else { 32 };

/// The most artifacts a live compile holds in memory: at this many, the older half is frozen
/// as a chunk (a compile can log a million). Half stays live so that a cache load's artifacts,
/// which its output code labels after the fact ([`backfill`]), are still at hand. 4 in unit
/// tests, so that chunks are frozen.
const LIVE_TAIL: usize = if cfg!(test) { 4 } else { 2048 };

impl CompileRecord {
    /// The timestamp of the compile's first entry.
    pub fn start_ts(&self) -> Stamp {
        self.stamp(self.start_ts, |rare| &rare.start_text)
    }

    /// The timestamp of the compile's last entry.
    pub fn end_ts(&self) -> Stamp {
        self.stamp(self.end_ts, |rare| &rare.end_text)
    }

    fn stamp(&self, packed: u64, text: impl Fn(&RareFacts) -> &Option<String>) -> Stamp {
        match packed {
            STAMP_IN_RARE => {
                let text = self.rare.as_deref().and_then(|rare| text(rare).clone());
                Stamp::Text(text.expect("a timestamp not packed is kept in rare"))
            }
            digits => Stamp::Digits(digits),
        }
    }

    /// Becomes the record of a compile whose last entry so far was written at `ts` (this runs
    /// for every entry of a compile: `ts` is read once, nothing allocated for glog's shape).
    fn set_end_ts(&mut self, ts: &str) {
        self.end_ts = match pack_stamp(ts) {
            Some(digits) => digits,
            None => {
                let text = &mut self.rare.get_or_insert_default().end_text;
                if text.as_deref() != Some(ts) {
                    *text = Some(ts.to_string());
                }
                STAMP_IN_RARE
            }
        };
    }

    /// The id; a missing `attempt` is read as attempt 0 when `frame_compile_id` is set (as
    /// tlparse does), so runtime entries logged without an attempt join their compile.
    pub fn id(&self) -> CompileId {
        record_id(self.id, self.rare.as_deref())
    }

    /// Short reasons of the compile's `dynamo_graph_break_reason` artifacts.
    pub fn graph_breaks(&self) -> &[String] {
        self.rare.as_ref().map_or(&[], |r| &r.graph_breaks)
    }

    /// For a compiled-autograd capture, the records (indexes in `Compiles::records`) of the
    /// compiles of its graph, in order of first appearance.
    pub fn graph_compiles(&self) -> &[usize] {
        self.rare.as_ref().map_or(&[], |r| &r.graph_compiles)
    }

    /// Index (in `Compiles::records`) of the next attempt of the same frame compile, if any.
    pub fn next_attempt(&self) -> Option<usize> {
        self.next_attempt.map(|n| n as usize)
    }

    /// `[0/1]`.
    pub fn display(&self) -> String {
        display_compile_id(&self.id())
    }

    /// Whether the id is compiled autograd capturing a graph (`[!0/-/-]`): a compiled-autograd
    /// id and no frame. Its entries are those logged while the backward graph was traced.
    pub fn is_capture(&self) -> bool {
        let id = self.id();
        id.compiled_autograd_id.is_some() && id.frame_id.is_none() && id.frame_compile_id.is_none()
    }

    /// [`CompileRecord::status`] as its JSON name in the tables (`ok_with_restart`).
    pub fn status_name(&self) -> String {
        serde_json::to_value(self.status()).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
    }

    /// The compile's status, with tlparse's precedence (failed, empty, restarted, ok) minus its
    /// bug of taking a null `restart_reasons` for a restart.
    pub fn status(&self) -> CompileStatus {
        let Some(m) = self.metrics else {
            // torch logs no metrics for a capture (its graph's compiles log them): not missing.
            return if self.is_capture() {
                CompileStatus::CompiledAutogradCapture
            } else if self.next_attempt.is_some() {
                CompileStatus::Restarted
            } else {
                CompileStatus::MetricsMissing
            };
        };
        m.status
    }
}

/// How many compiles have each status, by its name in the tables: `compile_summary`'s
/// `by_status`, and the closing lines' count of the compile directory's rows.
pub fn count_by_status(records: impl IntoIterator<Item = CompileRecord>) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for r in records {
        *counts.entry(r.status_name()).or_insert(0) += 1;
    }
    counts
}

/// The status metrics give a compile that has them.
fn metrics_status(m: &Metrics) -> CompileStatus {
    if m.failed {
        CompileStatus::Failed
    } else if m.graph_op_count.unwrap_or(0) == 0 {
        CompileStatus::EmptyGraph
    } else if !m.restart_reasons.is_empty() {
        CompileStatus::OkWithRestart
    } else {
        CompileStatus::Ok
    }
}

/// A JSON list of strings (other items are shown as JSON); empty for null or absent.
pub fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => {
            items.iter().map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string)).collect()
        }
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// tlparse's directory name for a compile id: `{ca}_{frame}_{compile}_{attempt}`, `-` for missing.
pub fn dir_name(id: &CompileId) -> String {
    let part = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    format!(
        "{}_{}_{}_{}",
        part(id.compiled_autograd_id),
        part(id.frame_id),
        part(id.frame_compile_id),
        part(id.attempt)
    )
}

/// The compile ids of a stream, in order of first appearance.
#[derive(Default)]
pub struct Compiles {
    /// Every record, by index; empty until [`Compiles::settle`] moves them from `paged`.
    pub records: CompileRecords,
    /// The records while entries are read, most of them in the store's spool.
    paged: PagedRecords,
    /// Their ids while entries are read, by which entries find their record; `settle` moves
    /// them into `records`.
    ids: RecordIds,
    /// How many distinct compile ids the entries named, as they spelled them.
    raw_ids: u64,
    /// Artifacts logged outside any compile.
    pub unattributed: Vec<Artifact>,
    /// The graph spans of entries logged outside any compile (AOT Inductor logs no compile id).
    unattributed_spans: GraphSpans,
    /// The AOTAutograd cache loads in progress.
    cache_loads: CacheLoads,
    /// Artifact kinds and names, each once.
    names: IndexSet<Box<str>>,
    /// The latest artifacts of the records that logged some last, by record index, least
    /// recently added to first; the others are frozen.
    live: Vec<(usize, Vec<Artifact>)>,
    /// Chunks of artifacts frozen when they left `live` or when a live list grew to
    /// [`LIVE_TAIL`]: a long log has a million artifacts, most of them in compiles long finished.
    frozen: Records<Vec<Artifact>>,
    /// For each row of `frozen`, the row of the same compile's chunk before it, or [`NO_ROW`].
    frozen_before: Vec<u32>,
    /// Each compile's metrics.
    metrics: Records<Metrics>,
}

/// The key a compile id is filed under (attempt-less ids join attempt 0).
pub fn normalize(id: &CompileId) -> CompileId {
    let mut id = *id;
    if id.frame_compile_id.is_some() && id.attempt.is_none() {
        id.attempt = Some(0);
    }
    id
}

/// Classifies a cache artifact name: (`fx_graph_cache`, `hit`) for `fx_graph_cache_hit`.
pub fn cache_outcome(name: &str) -> Option<(String, &'static str)> {
    // Markers spelled out: this runs for every artifact, and formatting them cost allocations.
    for (marker, outcome) in [("cache_hit", "hit"), ("cache_miss", "miss"), ("cache_bypass", "bypass")] {
        if let Some(at) = name.find(marker) {
            return Some((name[..at + "cache".len()].to_string(), outcome));
        }
    }
    None
}

impl Compiles {
    /// No compiles yet; records, artifact lists and metrics long past go to `store`.
    pub fn new(store: &Store) -> Self {
        Compiles {
            paged: PagedRecords::new(store),
            frozen: Records::new(store),
            metrics: Records::new(store),
            ..Compiles::default()
        }
    }

    /// The `dynamo_start` stack of a compile, or of the first attempt of its frame compile that
    /// logged one (restarted attempts often log `dynamo_start` only once).
    pub fn start_stack(&self, id: &CompileId) -> Option<u32> {
        self.get(id).and_then(|r| r.start_stack).or_else(|| self.attempts(id).find_map(|r| r.start_stack))
    }

    /// Every attempt of the frame compile `id` belongs to (`[0/0]`, `[0/0_1]`, ...), in order of
    /// first appearance. Only after [`Compiles::settle`].
    pub fn attempts<'a>(&'a self, id: &CompileId) -> impl Iterator<Item = CompileRecord> + 'a {
        self.attempt_records(id).map(|i| self.records.get(i as usize))
    }

    /// Every record (as `Observe::record` numbers them), by frame compile, then in order of
    /// first appearance. Only after [`Compiles::settle`].
    pub fn by_frame_compile(&self) -> &[u32] {
        self.records.ids().by_frame_compile()
    }

    /// The records (as `Observe::record` numbers them) of [`Compiles::attempts`].
    pub fn attempt_records<'a>(&'a self, id: &CompileId) -> impl Iterator<Item = u32> + 'a {
        self.records.ids().attempts(&frame_compile(id)).iter().copied()
    }

    /// The record an entry's `Observe::record` names.
    pub fn record(&self, index: u32) -> CompileRecord {
        self.records.get(index as usize)
    }

    /// The record of a compile id, if the stream has it.
    pub fn get(&self, id: &CompileId) -> Option<CompileRecord> {
        self.index_of(&normalize(id)).map(|i| self.records.get(i))
    }

    /// The row of an artifact.
    pub fn artifact_ref(&self, a: &Artifact) -> ArtifactRef {
        ArtifactRef {
            seq: a.seq,
            line: a.line,
            kind: self.kind(a).to_string(),
            name: self.name(a).to_string(),
            tlparse_name: a.tlparse_name.map(|n| self.names[n as usize].to_string()),
            blob: a.blob.as_ref().map(|b| hex(b)),
            size: a.size,
            lines: a.lines,
            format: a.format,
            url: a.url.as_deref().map(str::to_string),
            no_payload: self.no_payload(a),
            graph: a.graph,
        }
    }

    /// The rows of artifacts.
    pub fn artifact_refs(&self, list: &[Artifact]) -> Vec<ArtifactRef> {
        list.iter().map(|a| self.artifact_ref(a)).collect()
    }

    pub fn kind(&self, a: &Artifact) -> &str {
        &self.names[a.kind as usize]
    }

    pub fn name(&self, a: &Artifact) -> &str {
        &self.names[a.name as usize]
    }

    /// Whether an artifact was logged without the payload it should have had (a link never has
    /// one): only entries with a payload have a format.
    pub fn no_payload(&self, a: &Artifact) -> bool {
        a.format.is_none() && self.kind(a) != "link"
    }

    /// Every artifact of a compile, in log order, in one list: for the few compiles a table
    /// looks at closely. A table reading every compile's reads [`Compiles::artifact_chunks`].
    pub fn artifacts(&self, r: &CompileRecord) -> Cow<'_, [Artifact]> {
        let mut chunks = self.artifact_chunks(r);
        let Some(first) = chunks.next() else { return Cow::Borrowed(&[]) };
        match chunks.next() {
            None => first,
            Some(second) => {
                let mut all = first.into_owned();
                all.extend_from_slice(&second);
                chunks.for_each(|chunk| all.extend_from_slice(&chunk));
                Cow::Owned(all)
            }
        }
    }

    /// Every artifact of a compile, in log order, a chunk at a time: its frozen chunks oldest
    /// first, then its live tail. Holds one chunk, however many the compile logged.
    pub fn artifact_chunks<'c>(&'c self, r: &CompileRecord) -> impl Iterator<Item = Cow<'c, [Artifact]>> + use<'c> {
        let mut rows = Vec::new();
        let mut row = r.frozen;
        while row != NO_ROW {
            rows.push(row);
            row = self.frozen_before[row as usize];
        }
        // No two records have the same id.
        let id = r.id();
        let live = self.live.iter().find(move |(i, _)| self.records.id(*i) == id);
        let frozen = rows.into_iter().rev().map(|row| Cow::Owned(self.frozen.get(row)));
        frozen.chain(live.map(|(_, list)| Cow::Borrowed(&list[..])))
    }

    /// How many artifacts a compile logged.
    pub fn artifact_count(&self, r: &CompileRecord) -> usize {
        self.artifact_chunks(r).map(|chunk| chunk.len()).sum()
    }

    /// The artifacts of a compile with a given name, in log order.
    pub fn artifacts_named(&self, r: &CompileRecord, name: &str) -> Vec<ArtifactRef> {
        let named = |chunk: Cow<'_, [Artifact]>| -> Vec<ArtifactRef> {
            chunk.iter().filter(|a| self.name(a) == name).map(|a| self.artifact_ref(a)).collect()
        };
        self.artifact_chunks(r).flat_map(named).collect()
    }

    /// Adds an artifact to record `index`, its latest chunk thawed if frozen; the list of the
    /// record that was added to least recently is frozen when too many are in memory, and the
    /// older half of a list that reached [`LIVE_TAIL`].
    fn add_artifact(&mut self, index: usize, a: Artifact) {
        let mut live = match self.live.iter().position(|(i, _)| *i == index) {
            Some(at) => self.live.remove(at),
            None => {
                if self.live.len() >= LIVE_ARTIFACTS {
                    let (cold, list) = self.live.remove(0);
                    self.freeze(cold, &list);
                }
                (index, self.thaw(index))
            }
        };
        live.1.push(a);
        if live.1.len() >= LIVE_TAIL {
            let older: Vec<Artifact> = live.1.drain(..LIVE_TAIL / 2).collect();
            self.freeze(index, &older);
        }
        self.live.push(live);
    }

    /// Freezes `list`, the artifacts record `index` logged after its frozen chunks, as its
    /// latest chunk.
    fn freeze(&mut self, index: usize, list: &[Artifact]) {
        if list.is_empty() {
            return;
        }
        let before = self.paged.frozen(index);
        let row = self.frozen.push(&list.to_vec());
        self.frozen_before.push(before);
        self.paged.update(index, |record| record.frozen = row);
    }

    /// Takes record `index`'s latest frozen chunk back (its row is left unread: only a
    /// compile logging artifacts long after others did has one thawed).
    fn thaw(&mut self, index: usize) -> Vec<Artifact> {
        let row = self.paged.frozen(index);
        if row == NO_ROW {
            return Vec::new();
        }
        let before = self.frozen_before[row as usize];
        self.paged.update(index, |record| record.frozen = before);
        self.frozen.get(row)
    }

    fn intern(&mut self, text: &str) -> u32 {
        crate::store::index_in(&mut self.names, text)
    }

    /// The artifact an entry is, if it is one: every entry of a named kind (artifacts, links,
    /// graph dumps, ...), payload or not, as tlparse lists one without a payload as an empty
    /// file; and any other entry with a payload but chromium events (a timeline, not a product).
    fn artifact(&mut self, ev: &Event) -> Option<Artifact> {
        let named = NAMED_KINDS.contains(&ev.kind);
        // The row's payload, not the bytes: a payload too long to hold is still an artifact.
        if ev.kind == "chromium_event" || (ev.payload_ref.is_none() && !named) {
            return None;
        }
        let names = ev.names();
        Some(Artifact {
            seq: ev.seq,
            line: ev.line,
            size: ev.payload_ref.map_or(0, |p| p.size),
            lines: ev.payload_ref.map_or(0, |p| p.lines),
            kind: self.intern(ev.kind),
            name: self.intern(&names.name),
            tlparse_name: names.tlparse_name.map(|t| self.intern(&t)),
            blob: ev.payload_ref.and_then(|p| parse_blob_id(&p.hash)),
            format: ev.payload_ref.map(|p| p.format),
            url: (ev.kind == "link").then(|| ev.meta().get("url").and_then(Value::as_str).map(Box::from)).flatten(),
            graph: None,
        })
    }

    /// What the shared facts read of a `compilation_metrics` entry's metadata. A time or count
    /// that cannot be one is ignored (see [`Diagnostics::number`]).
    fn read_metrics(&mut self, ev: &Event, diags: &mut Diagnostics) -> Metrics {
        // Member by member: the 28 KB config strings of torch's metrics are never built.
        let meta = ev.meta_members();
        let text = |key| meta.get(key).as_deref().and_then(Value::as_str).map(Box::from);
        let mut number = |key: &str| diags.json_number(ev, key, meta.get(key).as_deref());
        let start_time = number("start_time");
        let entire_frame_compile_time_s = number("entire_frame_compile_time_s");
        let dynamo_cumulative_compile_time_us = number("dynamo_cumulative_compile_time_us");
        let mut uint = |key: &str| {
            let n = meta.uint(key)?;
            diags.number(ev, key, Some(n as f64)).map(|_| n)
        };
        let (graph_op_count, graph_node_count, graph_input_count) =
            (uint("graph_op_count"), uint("graph_node_count"), uint("graph_input_count"));
        let (guard_count, shape_env_guard_count) = (uint("guard_count"), uint("shape_env_guard_count"));
        let mut cache_counters = Vec::new();
        let counter = |key: &str| key.contains("cache") && key != "cache_size" && key != "accumulated_cache_size";
        for (key, value) in meta.each(counter) {
            if let Some(x) = diags.json_number(ev, &key, Some(&value)).filter(|&x| x != 0.0) {
                cache_counters.push((self.intern(&key), x));
            }
        }
        Metrics {
            co_name: text("co_name"),
            co_filename: text("co_filename"),
            co_firstlineno: meta.get("co_firstlineno").as_deref().and_then(Value::as_i64),
            start_time,
            entire_frame_compile_time_s,
            dynamo_cumulative_compile_time_us,
            failed: meta.get("fail_type").is_some_and(|v| !v.is_null()),
            fail_type: text("fail_type"),
            fail_reason: text("fail_reason"),
            restart_reasons: strings(meta.get("restart_reasons").as_deref()),
            graph_op_count,
            graph_node_count,
            graph_input_count,
            guard_count,
            shape_env_guard_count,
            cache_counters,
        }
    }

    /// The non-zero cache counters of a compile's metrics, by name.
    pub fn cache_metrics(&self, r: &CompileRecord) -> BTreeMap<String, f64> {
        let counters = self.metrics(r).map_or_else(Vec::new, |m| m.cache_counters);
        counters.iter().map(|&(name, x)| (self.names[name as usize].to_string(), x)).collect()
    }

    /// The compile's first `compilation_metrics`, as far as the shared facts read it.
    pub fn metrics(&self, r: &CompileRecord) -> Option<Metrics> {
        let held = r.metrics?;
        Some(self.metrics.get(held.row))
    }

    /// `restart_reasons` from the compile's metrics (empty when null or absent).
    pub fn restart_reasons(&self, r: &CompileRecord) -> Vec<String> {
        self.metrics(r).map_or_else(Vec::new, |m| m.restart_reasons)
    }

    /// The compile's cache outcomes, in log order: its artifacts named as one.
    pub fn cache(&self, r: &CompileRecord) -> Vec<CacheOutcome> {
        let outcome = |a: &Artifact| {
            let name = self.name(a);
            let (cache, outcome) = cache_outcome(name)?;
            Some(CacheOutcome { cache, outcome: outcome.into(), name: name.to_string(), seq: a.seq })
        };
        let outcomes = |chunk: Cow<'_, [Artifact]>| chunk.iter().filter_map(outcome).collect::<Vec<_>>();
        self.artifact_chunks(r).flat_map(outcomes).collect()
    }

    /// How many distinct compile ids the stream's entries named, as they spelled them (`[0/0]`
    /// and an attempt-less `[0/0]` are two, though they share a record).
    pub fn raw_id_count(&self) -> u64 {
        self.raw_ids
    }

    /// The index of a (normalized) compile id's record, if it has one. Only after
    /// [`Compiles::settle`].
    fn index_of(&self, id: &CompileId) -> Option<usize> {
        self.records.ids().find(id)
    }

    /// A new record for a compile id first seen in `ev`; returns its index.
    fn add_record(&mut self, id: CompileId, ev: &Event) -> usize {
        let compact = CompactId::of(&id);
        let stamp = pack_stamp(ev.ts);
        let mut rare = None;
        if compact.id().is_none() || stamp.is_none() {
            rare = Some(Box::new(RareFacts {
                wide_id: compact.id().is_none().then_some(id),
                start_text: stamp.is_none().then(|| ev.ts.to_string()),
                end_text: stamp.is_none().then(|| ev.ts.to_string()),
                ..RareFacts::default()
            }));
        }
        let index = self.ids.push(id);
        let paged = self.paged.push(CompileRecord {
            id: compact,
            first_seq: ev.seq,
            last_seq: ev.seq,
            start_ts: stamp.unwrap_or(STAMP_IN_RARE),
            end_ts: stamp.unwrap_or(STAMP_IN_RARE),
            start_stack: None,
            metrics: None,
            frozen: NO_ROW,
            next_attempt: None,
            rare,
            graph_spans: GraphSpans::default(),
            raw_forms: 0,
        });
        debug_assert_eq!(paged, index, "records and their ids are filed alike");
        index
    }

    /// Files one entry under its compile's record (the first stage of a stream's pass): returns
    /// the record's index, `None` when the entry has no compile id.
    pub fn observe(&mut self, ev: &Event, diags: &mut Diagnostics) -> Option<u32> {
        let artifact = self.artifact(ev);
        let Some(raw_id) = ev.compile_id else {
            let graph = self.unattributed_spans.see(ev);
            let loaded = self.cache_loads.see(UNATTRIBUTED, ev, self.unattributed_spans.depth > 0);
            if let Some(mut a) = artifact {
                a.graph = loaded.graph.or(graph);
                self.unattributed.push(a);
            }
            if let Some((role, from)) = loaded.backfill {
                backfill(&mut self.unattributed, role, from);
            }
            return None;
        };
        let id = normalize(raw_id);
        let index = match self.ids.find(&id) {
            Some(index) => index,
            None => self.add_record(id, ev),
        };
        let raw_form = if *raw_id == id { RAW_AS_IS } else { RAW_WITHOUT_ATTEMPT };
        let break_reason = match ev.name {
            Some("dynamo_graph_break_reason") => ev.payload_text().map(|text| super::graph_breaks::reason(&text)),
            _ => None,
        };
        let (graph, compiling, new_form, wants_metrics) = self.paged.update(index, |record| {
            let new_form = raw_form & !record.raw_forms;
            record.raw_forms |= raw_form;
            let graph = record.graph_spans.see(ev);
            let compiling = record.graph_spans.depth > 0;
            record.last_seq = ev.seq;
            record.set_end_ts(ev.ts);
            if ev.kind == "dynamo_start" && record.start_stack.is_none() {
                record.start_stack = ev.meta_stack("stack");
            }
            if let Some(reason) = break_reason {
                record.rare.get_or_insert_default().graph_breaks.push(reason);
            }
            (graph, compiling, new_form, ev.kind == "compilation_metrics" && record.metrics.is_none())
        });
        let loaded = self.cache_loads.see(index as u32, ev, compiling);
        let graph = loaded.graph.or(graph);
        self.raw_ids += u64::from(new_form.count_ones());
        if wants_metrics {
            let metrics = self.read_metrics(ev, diags);
            let row = self.metrics.push(&metrics);
            let held = HeldMetrics { row, status: metrics_status(&metrics) };
            self.paged.update(index, |record| record.metrics = Some(held));
        }
        if let Some(mut a) = artifact {
            a.graph = graph;
            self.add_artifact(index, a);
        }
        if let Some((role, from)) = loaded.backfill {
            if let Some((_, list)) = self.live.iter_mut().find(|(i, _)| *i == index) {
                backfill(list, role, from);
            }
        }
        Some(index as u32)
    }

    /// Called once after the last entry: groups the attempts of each frame compile, links each
    /// attempt to the next one and each compiled-autograd capture to its graph's compiles.
    pub fn settle(&mut self) {
        let mut ids = std::mem::take(&mut self.ids);
        ids.settle();
        self.records = std::mem::take(&mut self.paged).settle(ids);
        for i in 0..self.records.len() {
            let id = self.records.id(i);
            let Some(attempt) = id.attempt else { continue };
            let next = CompileId { attempt: Some(attempt + 1), ..id };
            if let Some(n) = self.index_of(&next) {
                self.records.next_attempts.insert(i as u32, n as u32);
            }
        }
        self.link_captures();
    }

    /// Links each compiled-autograd capture `[!k/-/-]` to the compile ids with the same
    /// compiled-autograd id and a frame (`[!k/F/C]`): torch compiles the captured graph with
    /// Dynamo under the capture's compiled-autograd id, which it takes from a counter of captures
    /// (`COMPILE_COUNTER` in torch/_dynamo/compiled_autograd.py), so no other capture shares it.
    /// Only `torch._dynamo.reset()` restarts that counter, as it restarts frame ids: a log with
    /// a reset repeats compile ids, and those are merged into one row anyway.
    fn link_captures(&mut self) {
        let records = &mut self.records;
        let mut compiles_of: HashMap<u64, Vec<usize>> = HashMap::default();
        let mut captures = Vec::new();
        for i in 0..records.len() {
            let id = records.id(i);
            match (id.compiled_autograd_id, id.frame_id, id.frame_compile_id) {
                (Some(ca), Some(_), _) => compiles_of.entry(ca).or_default().push(i),
                (Some(ca), None, None) => captures.push((i, ca)),
                _ => {}
            }
        }
        for (i, ca) in captures {
            if let Some(compiles) = compiles_of.get(&ca) {
                records.rare.entry(i as u32).or_default().graph_compiles = compiles.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_read_back_from_hex() {
        let id: BlobId = std::array::from_fn(|i| (i * 17) as u8);
        assert_eq!(parse_blob_id(&hex(&id)), Some(id));
        assert_eq!(parse_blob_id("0g"), None);
    }

    /// Timestamps read back as written, packed or not; only glog's own shape is packed.
    #[test]
    fn stamps_read_back_as_written() {
        for ts in ["1118 14:22:33.123456", "0000 00:00:00.000000", "9999 99:99:99.999999", "0524 12:48:44.657000"] {
            let stamp = Stamp::new(ts);
            assert!(matches!(stamp, Stamp::Digits(_)), "{ts}");
            assert_eq!(stamp.to_string(), ts);
        }
        for ts in
            ["", "1118 14:22:33.12345", "1118 14:22:33.1234567", "1118 14:22:33,123456", "1118 1a:22:33.123456", "١١١٨"]
        {
            let stamp = Stamp::new(ts);
            assert!(matches!(stamp, Stamp::Text(_)), "{ts}");
            assert_eq!(stamp.to_string(), ts);
        }
    }

    /// A record stays small: a long log holds one per compile until its tables finish (264
    /// bytes before its rare facts went out of line and its timestamps were packed, 200 before
    /// its id was packed and its artifacts moved to `Compiles`).
    #[test]
    fn a_compile_record_is_small() {
        assert!(std::mem::size_of::<CompileRecord>() <= 96, "{}", std::mem::size_of::<CompileRecord>());
    }

    /// Records give back what their entries said, whichever way they hold it: ids too large
    /// for a small form, timestamps not in glog's shape, artifact lists frozen and thawed as
    /// seventeen compiles take turns (two lists live in tests), and, with a spool, records
    /// paged out while entries are read (pages of 4, 2 kept in tests) and read back.
    #[test]
    fn records_give_back_what_their_entries_said() {
        use crate::schema::{IndexRow, StackTable};
        use crate::store::packed_rows::tests::test_store;
        let id = |ca, frame: u64, attempt| CompileId {
            compiled_autograd_id: ca,
            frame_id: Some(frame),
            frame_compile_id: Some(0),
            attempt: Some(attempt),
        };
        let mut ids = vec![
            id(None, 0, 0),
            id(None, u64::MAX - 1, 0),
            id(Some(u64::MAX), 1, 0),
            id(None, 2, 0),
            id(Some(4), 3, 1),
        ];
        ids.extend((10..22).map(|frame| id(None, frame, 0)));
        let stamps = ["1118 14:22:33.000001", "late", "1118 14:22:33.000003", "1118 14:22:33,000004"];
        // Compile k logs artifacts k0, k1, ... in turns: 0 1 ... 16 0 1 ... 16 0 2 4 ... 16.
        // Compile 3 then logs eleven more in a row: its list is frozen in chunks as it grows.
        let turns: Vec<usize> =
            (0..ids.len()).chain(0..ids.len()).chain((0..ids.len()).step_by(2)).chain([3; 11]).collect();
        for spooled in [false, true] {
            let (store, spool) = test_store(spooled);
            let (stacks, mut diags, mut compiles) =
                (StackTable::default(), Diagnostics::default(), Compiles::new(&store));
            for (seq, &k) in turns.iter().enumerate() {
                let n = turns[..seq].iter().filter(|&&j| j == k).count();
                let row = IndexRow {
                    ts: stamps[(seq + k) % stamps.len()].to_string(),
                    name: Some(format!("a{k}{n}")),
                    cid: Some(ids[k]),
                    ..super::super::test_row(seq as u64, "artifact")
                };
                let ev = Event::new(&row, row.line, 0, None, None, &stacks);
                assert_eq!(compiles.observe(&ev, &mut diags), Some(k as u32), "entry {seq}");
            }
            assert_eq!(!spool.is_empty(), spooled, "pages were spooled");
            assert_eq!(compiles.raw_id_count(), ids.len() as u64);
            compiles.settle();
            assert_eq!(compiles.records.len(), ids.len());
            for (k, r) in compiles.records.iter().enumerate() {
                let mine: Vec<usize> = (0..turns.len()).filter(|&seq| turns[seq] == k).collect();
                let (first, last) = (mine[0], *mine.last().unwrap());
                assert_eq!(r.id(), ids[k]);
                assert_eq!(compiles.get(&ids[k]).map(|g| g.first_seq), Some(first as u64));
                assert_eq!((r.first_seq, r.last_seq), (first as u64, last as u64));
                assert_eq!(r.start_ts().to_string(), stamps[(first + k) % stamps.len()]);
                assert_eq!(r.end_ts().to_string(), stamps[(last + k) % stamps.len()]);
                let names: Vec<&str> = compiles.artifacts(&r).iter().map(|a| compiles.name(a)).collect::<Vec<_>>();
                let want: Vec<String> = (0..mine.len()).map(|n| format!("a{k}{n}")).collect();
                assert_eq!(names, want, "compile {k}");
                let seqs: Vec<u64> = compiles.artifacts(&r).iter().map(|a| a.seq).collect();
                assert_eq!(seqs, mine.iter().map(|&s| s as u64).collect::<Vec<_>>());
            }
            // Lists were frozen, and some thawed and frozen again.
            assert!(compiles.frozen.len() > ids.len() - LIVE_ARTIFACTS, "{}", compiles.frozen.len());
            assert_eq!(compiles.frozen_before.len(), compiles.frozen.len());
        }
    }

    #[test]
    fn cache_names_are_classified() {
        assert_eq!(cache_outcome("fx_graph_cache_hit"), Some(("fx_graph_cache".into(), "hit")));
        assert_eq!(cache_outcome("aotautograd_cache_miss"), Some(("aotautograd_cache".into(), "miss")));
        assert_eq!(cache_outcome("fx_graph_bundled_cache_hit"), Some(("fx_graph_bundled_cache".into(), "hit")));
        assert_eq!(cache_outcome("aotautograd_cache_hash"), None);
    }
}
