//! Inductor provenance: for each compile id with provenance node mappings, every graph Inductor
//! compiled in it (forward and backward, or inference), each with the line maps between the
//! compile's pre-grad graph and the graph's post-grad graph and generated code, computed exactly as
//! tlparse's `convert_node_mappings_to_line_numbers` does (its tests pin the maps); and the
//! kernels' stack traces.
//!
//! A compile's post-grad graphs, code and node mappings are grouped into graphs in log order (an
//! entry starts the next graph when the current one already has an entry of its kind): tlparse
//! keeps only the last of each, so the forward's maps of a training compile were lost to the
//! backward's, which come last and are often empty.
//!
//! The panes' texts are held from `observe` to `finish`, compressed. Until the stream has shown a
//! node mappings payload, only the panes of the compile id that logged one most recently are held,
//! so a log without provenance tracking does not keep every compile's code in memory. Rows are
//! made as the table is written, one compile at a time.

use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use std::cell::RefCell;

use super::compiles::{aot_id, graph_role};
use super::{Compiles, Diagnostics, Event, Finish, Observe, Table, compiles, parse_json_bounded};
use crate::fast_hash::HashMap;
use crate::parse::display_compile_id;
use crate::schema::CompileId;
use crate::schema::tables::{
    ArtifactRef, KernelStackTraces, LineMap, LineMappings, Provenance, ProvenanceCompile, ProvenanceGraph,
    ProvenancePane,
};
use crate::store::{CompileList, CompressedBytes, PerCompile, Rows, Store};

/// The artifact names (prefixes, as tlparse matches file names) of each pane, most wanted first:
/// a pane takes the artifact of the first name that was logged at all.
const PANES: [&[&str]; 4] = [
    &["before_pre_grad_graph", "inductor_pre_grad_graph"],
    &["after_post_grad_graph", "inductor_post_grad_graph"],
    &["inductor_output_code"],
    &["inductor_aot_wrapper_code"],
];
/// The compile's pane; the others are each graph's.
const PRE_GRAD: usize = 0;
const POST_GRAD: usize = 1;
const PYTHON_CODE: usize = 2;
const CPP_CODE: usize = 3;

/// `ProvenanceTable::order`'s entry for entries without a compile record.
const OUTSIDE: u32 = u32::MAX;

const NODE_MAPPINGS: &str = "inductor_provenance_tracking_node_mappings";
const KERNEL_STACK_TRACES: &str = "inductor_provenance_tracking_kernel_stack_traces";

/// A pane's text.
#[derive(Serialize, Deserialize)]
struct HeldPane {
    seq: u64,
    /// Which of the pane's names it has (0 is the most wanted).
    precedence: usize,
    /// The payload as logged.
    text: CompressedBytes,
}

impl HeldPane {
    fn text(&self) -> String {
        match String::from_utf8(self.text.get()) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    }
}

/// One graph of a compile, as its entries arrive: panes `POST_GRAD`, `PYTHON_CODE` and
/// `CPP_CODE` (`PRE_GRAD` is never set here), and the node mappings.
#[derive(Default, Serialize, Deserialize)]
struct HeldGraph {
    panes: [Option<HeldPane>; 4],
    /// `seq` and payload of the usable node mappings (a JSON object).
    mappings: Option<(u64, CompressedBytes)>,
}

/// What is held for one compile id (`None`: entries without one).
#[derive(Default, Serialize, Deserialize)]
struct HeldCompile {
    pre_grad: Option<HeldPane>,
    /// In log order; the last is the one entries join.
    graphs: Vec<HeldGraph>,
}

impl HeldCompile {
    /// The graph an entry joins: the last, unless it already has `has` (or there is none).
    fn graph_for(&mut self, has: impl Fn(&HeldGraph) -> bool) -> &mut HeldGraph {
        if self.graphs.last().is_none_or(has) {
            // Entries only join the last graph: one left behind without node mappings never gets
            // any, and its texts are not needed.
            if self.graphs.last().is_some_and(|g| g.mappings.is_none()) {
                self.graphs.pop();
            }
            // Room for one more graph only: a compile has one to three, and room for four (a
            // quarter KiB each) in every compile of a long log added up.
            self.graphs.reserve_exact(1);
            self.graphs.push(HeldGraph::default());
        }
        self.graphs.last_mut().expect("just pushed")
    }

    /// Files a pane's text: the compile's pre-grad graph keeps its most wanted name (the last of
    /// it); a graph pane starts the next graph when the current one has that pane under the same
    /// name, and otherwise keeps the most wanted name.
    /// The text is copied only when it is kept.
    fn add_pane(&mut self, pane: usize, seq: u64, precedence: usize, bytes: &[u8]) {
        let new = || Some(HeldPane { seq, precedence, text: CompressedBytes::new(bytes) });
        if pane == PRE_GRAD {
            if self.pre_grad.as_ref().is_none_or(|h| precedence <= h.precedence) {
                self.pre_grad = new();
            }
            return;
        }
        let graph = self.graph_for(|g| g.panes[pane].as_ref().is_some_and(|h| h.precedence == precedence));
        let held = &mut graph.panes[pane];
        if held.as_ref().is_none_or(|h| precedence < h.precedence) {
            *held = new();
        }
    }
}

#[derive(Default)]
pub struct ProvenanceTable {
    /// What is held of each compile, by record: until tracking is seen, only of the compile that
    /// logged a pane last (a compile whose panes were dropped holds nothing, as a new one). The
    /// two used last are in memory, the others in the spool (borrowed mutably to read one back
    /// as the table is serialized).
    compiles: HeldCompiles,
    /// The compiles' records ([`OUTSIDE`] for entries without one) in order of their first
    /// provenance artifact, the order of the rows: a long log without provenance tracking has
    /// one per compile, so older pages go to the spool.
    order: CompileList<u32>,
    /// Which records are in `order`, a bit each, and whether entries without one are.
    ordered: Vec<u64>,
    outside_ordered: bool,
    /// Whether a node mappings payload was seen (provenance tracking is on).
    tracking_seen: bool,
    /// The compile whose panes were stored last (the only one holding any before tracking is seen).
    last_pane_compile: Option<Option<u32>>,
    /// [`KernelStackTraces`] rows.
    stack_traces: Rows<KernelStackTraces>,
}

impl ProvenanceTable {
    /// What is held of a compile, put in `order` if it is new.
    fn compile(&mut self, record: Option<u32>) -> &mut HeldCompile {
        if self.first_seen(record) {
            self.order.push(record.unwrap_or(OUTSIDE));
        }
        match record {
            Some(r) => self.compiles.by_record.get_mut().entry(r),
            None => self.compiles.outside.get_or_insert_default(),
        }
    }

    /// Drops what is held of a compile.
    fn drop_compile(&mut self, record: Option<u32>) {
        match record {
            Some(r) => self.compiles.by_record.get_mut().remove(r),
            None => self.compiles.outside = None,
        }
    }

    /// Whether `record` is new to `order` (it is marked seen).
    fn first_seen(&mut self, record: Option<u32>) -> bool {
        let Some(r) = record else {
            return !std::mem::replace(&mut self.outside_ordered, true);
        };
        let (word, bit) = (r as usize / 64, 1u64 << (r % 64));
        if self.ordered.len() <= word {
            self.ordered.resize(word + 1, 0);
        }
        let new = self.ordered[word] & bit == 0;
        self.ordered[word] |= bit;
        new
    }

    fn observe_stack_traces(&mut self, ev: &Event, key: Option<CompileId>, diags: &mut Diagnostics) {
        let (Some(Value::Object(kernels)), Some(payload)) = (ev.payload_json(), ev.payload) else {
            diags.unusable(Self::NAME, ev, "the kernel stack traces are not a JSON object");
            return;
        };
        let (compile_id, dir) = compile_names(key);
        for (kernel, traces) in kernels {
            let traces = traces
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|t| t.replace("\\n", "\n").trim_end_matches('\n').to_string())
                        .collect()
                })
                .unwrap_or_default();
            self.stack_traces.push(&KernelStackTraces {
                compile_id: compile_id.clone(),
                dir: dir.clone(),
                seq: ev.seq,
                blob: payload.hash.to_string(),
                kernel: kernel.clone(),
                traces,
            });
        }
    }

    fn observe_mappings(&mut self, ev: &Event, record: Option<u32>, diags: &mut Diagnostics) {
        match (ev.payload_json(), ev.payload) {
            (Some(Value::Object(_)), Some(payload)) => {
                let held = CompressedBytes::new(payload.bytes);
                self.compile(record).graph_for(|g| g.mappings.is_some()).mappings = Some((ev.seq, held));
                self.tracking_seen = true;
            }
            _ => diags.unusable(Self::NAME, ev, "the node mappings are not a JSON object"),
        }
    }

    fn observe_pane(&mut self, ev: &Event, record: Option<u32>, pane: usize, precedence: usize, bytes: &[u8]) {
        if !self.tracking_seen
            && let Some(previous) = self.last_pane_compile.filter(|&p| p != record)
        {
            // Its panes are dropped, and with them all it held: in a log without provenance
            // tracking, what every compile kept added up.
            self.drop_compile(previous);
        }
        self.last_pane_compile = Some(record);
        self.compile(record).add_pane(pane, ev.seq, precedence, bytes);
    }
}

impl Table for ProvenanceTable {
    type Format = Provenance;
    type Output<'a> = ProvenanceView<'a>;

    fn new(store: &Store) -> Self {
        ProvenanceTable {
            order: CompileList::new(store),
            stack_traces: Rows::new(store),
            compiles: HeldCompiles { by_record: RefCell::new(PerCompile::new(store)), ..HeldCompiles::default() },
            ..ProvenanceTable::default()
        }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        // Payload-less entries (torch logs the provenance artifacts without one on a cache hit
        // when tracking is off) have nothing to show; tlparse would let them blank the pane.
        let Some(payload) = ev.payload else { return };
        if ev.kind == "chromium_event" {
            return;
        }
        // The name tlparse's file name starts with (it adds a suffix to `inductor_output_code`).
        let name = ev.name.unwrap_or(ev.kind);
        let key = ev.compile_id.map(compiles::normalize);
        if name.starts_with(KERNEL_STACK_TRACES) {
            self.observe_stack_traces(ev, key, diags);
        } else if name.starts_with(NODE_MAPPINGS) {
            self.observe_mappings(ev, cx.record, diags);
        } else if let Some((pane, precedence)) = PANES
            .iter()
            .enumerate()
            .find_map(|(pane, names)| Some((pane, names.iter().position(|n| name.starts_with(n))?)))
        {
            self.observe_pane(ev, cx.record, pane, precedence, payload.bytes);
        }
    }

    fn finish<'a>(self, ctx: &'a Finish) -> Option<(ProvenanceView<'a>, u64)> {
        // Which compiles have a row: those with a graph that has node mappings and its artifact.
        let compiles = self.compiles;
        let held: Vec<u32> =
            self.order.into_records().filter(|&r| compiles.with(r, |h| has_row(ctx, r, h)) == Some(true)).collect();
        if held.is_empty() && self.stack_traces.is_empty() {
            return None;
        }
        let rows = held.len() as u64;
        Some((
            ProvenanceView { compiles: CompileRows { ctx, compiles, held }, kernel_stack_traces: self.stack_traces },
            rows,
        ))
    }
}

/// [`Provenance`], each compile's row made as it is written.
#[derive(Serialize)]
pub struct ProvenanceView<'a> {
    compiles: CompileRows<'a>,
    kernel_stack_traces: Rows<KernelStackTraces>,
}

/// The compiles with a row: their records, in the rows' order.
struct CompileRows<'a> {
    ctx: &'a Finish<'a>,
    compiles: HeldCompiles,
    held: Vec<u32>,
}

impl Serialize for CompileRows<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.held.len()))?;
        for &record in &self.held {
            if let Some(row) = self.compiles.with(record, |held| finish_compile(self.ctx, record, held)).flatten() {
                seq.serialize_element(&row)?;
            }
        }
        seq.end()
    }
}

/// What is held of each compile (see `ProvenanceTable::compiles`).
#[derive(Default)]
struct HeldCompiles {
    by_record: RefCell<PerCompile<HeldCompile, 2>>,
    /// Of entries without a compile.
    outside: Option<HeldCompile>,
}

impl HeldCompiles {
    /// `f` of what is held of `record` ([`OUTSIDE`]: of entries without a compile), if anything.
    fn with<T>(&self, record: u32, f: impl FnOnce(&HeldCompile) -> T) -> Option<T> {
        if record == OUTSIDE {
            return self.outside.as_ref().map(f);
        }
        self.by_record.borrow_mut().get(record).map(f)
    }
}

/// The compile id (normalized) of a record, none for [`OUTSIDE`].
fn compile_id(ctx: &Finish, record: u32) -> Option<CompileId> {
    (record != OUTSIDE).then(|| ctx.compiles.record(record).id())
}

/// Whether a compile gets a row (what [`finish_compile`] checks, without reading the texts).
fn has_row(ctx: &Finish, record: u32, held: &HeldCompile) -> bool {
    let id = compile_id(ctx, record);
    let key = id.as_ref();
    held.graphs
        .iter()
        .any(|g| g.mappings.as_ref().is_some_and(|(seq, _)| artifact_at(ctx.compiles, key, *seq).is_some()))
}

/// A compile's row: its graphs with node mappings (none: no row).
fn finish_compile(ctx: &Finish, record: u32, held: &HeldCompile) -> Option<ProvenanceCompile> {
    let id = compile_id(ctx, record);
    let key = id.as_ref();
    let pre = held.pre_grad.as_ref().map(HeldPane::text).unwrap_or_default();
    let graphs: Vec<ProvenanceGraph> =
        held.graphs.iter().filter_map(|g| finish_graph(ctx.compiles, key, &pre, g)).collect();
    if graphs.is_empty() {
        return None;
    }
    let pane_at =
        |p: &HeldPane| Some(ProvenancePane { artifact: artifact_at(ctx.compiles, key, p.seq)?, line_offset: 0 });
    let (compile_id, dir) = compile_names(id);
    Some(ProvenanceCompile { compile_id, cid: id, dir, pre_grad: held.pre_grad.as_ref().and_then(pane_at), graphs })
}

/// A graph's row, when it has node mappings: its panes, maps (with the compile's pre-grad graph
/// `pre`) and role.
fn finish_graph(c: &Compiles, key: Option<&CompileId>, pre: &str, g: &HeldGraph) -> Option<ProvenanceGraph> {
    let (mappings_seq, mappings) = g.mappings.as_ref()?;
    let node_mappings = artifact_at(c, key, *mappings_seq)?;
    let mappings = parse_json_bounded(&mappings.get()).expect("node mappings were read as JSON");
    let texts: Vec<String> = g.panes.iter().map(|p| p.as_ref().map(HeldPane::text).unwrap_or_default()).collect();
    let text = |pane: usize| texts[pane].as_str();
    let python = CodeLines::new(text(PYTHON_CODE));
    let cpp = CodeLines::new(text(CPP_CODE));
    let offsets = [0, 0, python.python_offset(), cpp.leading_empty as u64];
    let pane = |pane: usize| {
        let p = g.panes[pane].as_ref()?;
        Some(ProvenancePane { artifact: artifact_at(c, key, p.seq)?, line_offset: offsets[pane] })
    };
    let aot_id = aot_id(text(PYTHON_CODE));
    Some(ProvenanceGraph {
        graph: aot_id.and_then(graph_role),
        aot_id: aot_id.map(str::to_string),
        post_grad: pane(POST_GRAD),
        python_code: pane(PYTHON_CODE),
        cpp_code: pane(CPP_CODE),
        node_mappings,
        line_mappings: line_mappings(&mappings, pre, text(POST_GRAD), &python, &cpp),
        raw_node_mappings: mappings,
    })
}

/// The displayed compile id (null without one) and tlparse's directory name.
pub(super) fn compile_names(key: Option<CompileId>) -> (Option<String>, String) {
    let id =
        key.unwrap_or(CompileId { compiled_autograd_id: None, frame_id: None, frame_compile_id: None, attempt: None });
    (key.as_ref().map(display_compile_id), compiles::dir_name(&id))
}

/// The artifact logged at `seq` under a compile id (or without one), as the compile directory
/// lists it.
pub(super) fn artifact_at(c: &Compiles, key: Option<&CompileId>, seq: u64) -> Option<ArtifactRef> {
    let list = match key {
        Some(id) => c.artifacts(&c.get(id)?),
        None => std::borrow::Cow::Borrowed(&c.unattributed[..]),
    };
    list.binary_search_by_key(&seq, |a| a.seq).ok().map(|i| c.artifact_ref(&list[i]))
}

/// Code as tlparse numbers it: leading empty lines dropped.
struct CodeLines<'a> {
    lines: Vec<&'a str>,
    leading_empty: usize,
}

impl<'a> CodeLines<'a> {
    fn new(text: &'a str) -> Self {
        let mut lines: Vec<&str> = text.lines().collect();
        let leading_empty = lines.iter().take_while(|l| l.is_empty()).count();
        lines.drain(..leading_empty);
        CodeLines { lines, leading_empty }
    }

    /// Index of the first line containing all of `needles`, else 0 (tlparse searches from there).
    fn first_with(&self, needles: &[&str]) -> usize {
        self.lines.iter().position(|l| needles.iter().all(|n| l.contains(n))).unwrap_or(0)
    }

    /// Index of the `# AOT ID:` line, which tlparse numbers 1 in the Python code (it numbers the
    /// lines of its syntax-highlighted HTML, whose first line is the `<pre>` tag).
    fn aot_id_line(&self) -> usize {
        self.first_with(&["# AOT ID:"])
    }

    /// What to add to a Python map line to get the blob's 1-based line.
    fn python_offset(&self) -> u64 {
        (self.leading_empty + self.aot_id_line()) as u64
    }
}

/// Kernel name → its lines in the Python code, tlparse's `build_python_kernel_to_lines_map`.
/// Searches from the `def call(args)` line. A kernel with a debug handle (`name:N`) maps to the
/// first line after the first line naming it exactly that mentions its plain name; otherwise (or
/// when that fails) to every line mentioning the plain name.
fn python_kernel_lines(code: &CodeLines, kernels: &[&str]) -> HashMap<String, Vec<u64>> {
    let lines = &code.lines;
    let start = code.first_with(&["def", "call", "(args)"]);
    let first = code.aot_id_line();
    // tlparse subtracts in unsigned arithmetic; lines before the `# AOT ID:` line have no number.
    let number = |i: usize| (i + 1).checked_sub(first).filter(|&n| n > 0).map(|n| n as u64);
    let mut out: HashMap<String, Vec<u64>> = HashMap::default();
    for &kernel in kernels {
        let plain = kernel.find(':').map_or(kernel, |at| &kernel[..at]);
        let mut found = false;
        if kernel.contains(':') {
            if let Some(i) = (start..lines.len()).find(|&i| lines[i].contains(kernel)) {
                if let Some(j) = (i + 1..lines.len()).find(|&j| lines[j].contains(plain)) {
                    out.entry(kernel.to_string()).or_default().extend(number(j));
                    found = true;
                }
            }
        }
        if !found {
            for i in (start..lines.len()).filter(|&i| lines[i].contains(plain)) {
                out.entry(kernel.to_string()).or_default().extend(number(i));
            }
        }
    }
    out
}

/// Kernel name → its lines in the C++ code, tlparse's `build_cpp_kernel_to_lines_map`. Searches
/// from the `::run_impl(` line; the debug handle is after the last `:`; a line naming the kernel
/// exactly must not start with `def` or `static inline void`, and the line it maps to must not
/// declare an `_xnumel` variable. Falls back to every line mentioning the plain name.
fn cpp_kernel_lines(code: &CodeLines, kernels: &[&str]) -> HashMap<String, Vec<u64>> {
    let lines = &code.lines;
    let start = code.first_with(&["::run_impl("]);
    let mut out: HashMap<String, Vec<u64>> = HashMap::default();
    for &kernel in kernels {
        let plain = kernel.rfind(':').map_or(kernel, |at| &kernel[..at]);
        let mut found = false;
        if kernel.contains(':') {
            for i in start..lines.len() {
                let line = lines[i];
                if !(valid_line(line, "def") && valid_line(line, "static inline void") && line.contains(kernel)) {
                    continue;
                }
                let next = lines[i + 1..]
                    .iter()
                    .position(|l| l.contains(plain) && !l.contains("_xnumel = ") && !declares_xnumel(l));
                if let Some(pos) = next {
                    out.entry(kernel.to_string()).or_default().push((i + pos + 2) as u64);
                    found = true;
                    break;
                }
            }
        }
        if !found {
            for i in (start..lines.len()).filter(|&i| lines[i].contains(plain)) {
                out.entry(kernel.to_string()).or_default().push(i as u64 + 1);
            }
        }
    }
    out
}

/// tlparse's regex `^\s*\w+\s+.*_xnumel(?:_\d+)?\s*=`: a declaration like
/// `int64_t kernel_xnumel_1 = ...;`.
fn declares_xnumel(line: &str) -> bool {
    let rest = line.trim_start();
    let word = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    if word == 0 {
        return false;
    }
    let Some(space) = rest[word..].chars().next().filter(|c| c.is_whitespace()) else { return false };
    let tail = &rest[word + space.len_utf8()..];
    let assigns = |s: &str| s.trim_start().starts_with('=');
    tail.match_indices("_xnumel").any(|(at, m)| {
        let after = &tail[at + m.len()..];
        assigns(after)
            || after.strip_prefix('_').is_some_and(|d| {
                let digits = d.find(|c: char| !c.is_ascii_digit()).unwrap_or(d.len());
                digits > 0 && assigns(&d[digits..])
            })
    })
}

/// Not blank and not starting with `prefix` once trimmed.
fn valid_line(line: &str, prefix: &str) -> bool {
    let trimmed = line.trim();
    !trimmed.is_empty() && !trimmed.starts_with(prefix)
}

/// An FX node's name on a graph line: the text before the first `=`, then before the first `:`,
/// trimmed (`mul: "f32[4]" = ...` → `mul`); comment and blank lines name none.
fn node_name(line: &str) -> Option<&str> {
    let trimmed = line.trim();
    if !valid_line(trimmed, "#") {
        return None;
    }
    let name = trimmed.split('=').next()?.split(':').next()?.trim();
    (!name.is_empty()).then_some(name)
}

/// Node name → its (last) line in a graph, 1-based.
fn node_lines(text: &str) -> HashMap<&str, u64> {
    let mut out = HashMap::default();
    for (i, line) in text.lines().enumerate() {
        if let Some(name) = node_name(line) {
            out.insert(name, i as u64 + 1);
        }
    }
    out
}

/// A field of the node mappings as (key, value) pairs in key order: tlparse reads the JSON into
/// a sorted map, and when two keys land on the same line, the later key's entry wins.
fn sorted_entries<'v>(mappings: &'v Value, field: &str) -> Vec<(&'v str, &'v Value)> {
    let mut entries: Vec<(&str, &Value)> = mappings
        .get(field)
        .and_then(Value::as_object)
        .map(|o| o.iter().map(|(k, v)| (k.as_str(), v)).collect())
        .unwrap_or_default();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// The strings of a JSON list (other items and non-lists give none).
fn strs(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

/// Node → nodes as line → lines.
fn node_map(entries: &[(&str, &Value)], from: &HashMap<&str, u64>, to: &HashMap<&str, u64>) -> LineMap {
    let mut out = LineMap::new();
    for &(node, targets) in entries {
        let Some(&line) = from.get(node) else { continue };
        let lines: Vec<u64> = strs(targets).filter_map(|t| to.get(t).copied()).collect();
        if !lines.is_empty() {
            out.insert(line, lines);
        }
    }
    out
}

/// Kernel → post-grad nodes as code line → graph lines (each line of the kernel gets them).
fn kernel_map(entries: &[(&str, &Value)], kernels: &HashMap<String, Vec<u64>>, post: &HashMap<&str, u64>) -> LineMap {
    let mut out = LineMap::new();
    for &(kernel, nodes) in entries {
        for &code_line in kernels.get(kernel).into_iter().flatten() {
            let lines: Vec<u64> = strs(nodes).filter_map(|n| post.get(n).copied()).collect();
            if !lines.is_empty() {
                out.insert(code_line, lines);
            }
        }
    }
    out
}

/// Post-grad node → kernels as graph line → code lines (every line of every kernel, in order).
fn post_to_kernel_map(
    entries: &[(&str, &Value)],
    post: &HashMap<&str, u64>,
    kernels: &HashMap<String, Vec<u64>>,
) -> LineMap {
    let mut out = LineMap::new();
    for &(node, names) in entries {
        let Some(&line) = post.get(node) else { continue };
        let lines: Vec<u64> = strs(names).filter_map(|k| kernels.get(k)).flatten().copied().collect();
        if !lines.is_empty() {
            out.insert(line, lines);
        }
    }
    out
}

/// tlparse's `convert_node_mappings_to_line_numbers`. The kernel names are `cppCodeToPost`'s keys,
/// for the Python code too.
fn line_mappings(mappings: &Value, pre: &str, post: &str, python: &CodeLines, cpp: &CodeLines) -> LineMappings {
    let pre_lines = node_lines(pre);
    let post_lines = node_lines(post);
    let code_to_post = sorted_entries(mappings, "cppCodeToPost");
    let post_to_code = sorted_entries(mappings, "postToCppCode");
    let kernels: Vec<&str> = code_to_post.iter().map(|&(k, _)| k).collect();
    let python_kernels = python_kernel_lines(python, &kernels);
    let cpp_kernels = cpp_kernel_lines(cpp, &kernels);
    LineMappings {
        pre_to_post: node_map(&sorted_entries(mappings, "preToPost"), &pre_lines, &post_lines),
        post_to_pre: node_map(&sorted_entries(mappings, "postToPre"), &post_lines, &pre_lines),
        py_code_to_post: kernel_map(&code_to_post, &python_kernels, &post_lines),
        post_to_py_code: post_to_kernel_map(&post_to_code, &post_lines, &python_kernels),
        cpp_code_to_post: kernel_map(&code_to_post, &cpp_kernels, &post_lines),
        post_to_cpp_code: post_to_kernel_map(&post_to_code, &post_lines, &cpp_kernels),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows come in order of each compile's first provenance artifact, also for a compile whose
    /// panes were dropped (before tracking was seen) and that comes back, and for entries
    /// without a compile; a compile is in the order once, and a dropped one holds nothing until
    /// it comes back. Unit-test maps keep two compiles in memory: the others are spooled.
    #[test]
    fn compiles_keep_the_place_of_their_first_artifact() {
        use crate::store::packed_rows::tests::test_store;
        for spooled in [false, true] {
            let (store, spool) = test_store(spooled);
            let mut table = ProvenanceTable::new(&store);
            for record in [Some(70), Some(3), Some(5), Some(70), None, Some(3), Some(200)] {
                table.compile(record).pre_grad = Some(HeldPane {
                    seq: 1,
                    precedence: 0,
                    text: CompressedBytes::new(format!("{record:?}").as_bytes()),
                });
                if record == Some(3) {
                    // What observing a pane of another compile does before tracking is seen.
                    table.drop_compile(Some(70));
                    table.drop_compile(Some(5));
                }
            }
            table.compile(Some(70));
            let held = |t: &ProvenanceTable, r: u32| {
                t.compiles.with(r, |h| h.pre_grad.as_ref().map(|p| String::from_utf8(p.text.get()).unwrap()))
            };
            assert_eq!(held(&table, 5), None, "spooled: {spooled}");
            assert_eq!(held(&table, 70), Some(None), "spooled: {spooled}");
            assert_eq!(held(&table, 3), Some(Some("Some(3)".into())), "spooled: {spooled}");
            assert_eq!(held(&table, OUTSIDE), Some(Some("None".into())), "spooled: {spooled}");
            assert_eq!(held(&table, 200), Some(Some("Some(200)".into())), "spooled: {spooled}");
            assert_eq!(table.order.into_records().collect::<Vec<_>>(), [70, 3, 5, OUTSIDE, 200]);
            assert_eq!(!spool.is_empty(), spooled);
        }
    }

    #[test]
    fn xnumel_declarations_are_recognised_like_tlparses_regex() {
        assert!(declares_xnumel("    int64_t triton_poi_fused_0_xnumel = 17;"));
        assert!(declares_xnumel("  const int64_t k_xnumel_12 =5;"));
        assert!(!declares_xnumel("    triton_poi_fused_0_xnumel = 17"), "no type before the name");
        assert!(!declares_xnumel("    launch(k_xnumel, stream);"));
        assert!(!declares_xnumel("int64_t k_xnumel_ = 1;"), "`_` must be followed by digits");
    }

    #[test]
    fn graph_lines_name_their_nodes() {
        assert_eq!(node_name("    mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, y)"), Some("mul"));
        assert_eq!(node_name("    x_1 = self.relu(x);  x = None"), Some("x_1"));
        assert_eq!(node_name("  # File: model.py:3"), None);
        assert_eq!(node_name("   "), None);
    }

    #[test]
    fn a_debug_handle_maps_to_the_next_call_of_the_kernel() {
        // The debug handle is in a comment; the next line mentioning the kernel wins, even an
        // `_xnumel` assignment (only the C++ search skips those).
        let text = "# AOT ID: ['0_inference']\nk_0 = async_compile.triton('k_0')\ndef call(args):\n    # [Provenance debug handles] k_0:1\n    k_0_xnumel = 4\n    k_0.run(buf0)\n    k_0.run(buf1)\n";
        let code = CodeLines::new(text);
        let lines = python_kernel_lines(&code, &["k_0:1", "k_0"]);
        assert_eq!(lines["k_0:1"], [5]);
        assert_eq!(lines["k_0"], [4, 5, 6, 7]);
    }
}
