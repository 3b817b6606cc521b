//! Comparing two runs: each stream's frame compiles of run A and run B paired by the alignment
//! module ([`super::alignment`], the same keying as the cross-rank tables), and what changed for
//! each pair. A frame compile's final attempt (the one not restarted) is what is compared; the
//! attempts Dynamo restarted before it are its history, shown per side. Payloads that differ are
//! compared once masked by [`mask_volatile`] (the rank differ's rule): two processes never share
//! object ids or addresses. Pure: tables and a [`Payloads`] reader in, a [`RunComparison`] out. `tlparse-build compare` prints it, and the viewer's Compare page
//! computes the same findings from the same tables (pairing compiles by `compile_directory`'s
//! `align_key`, the string form of the same keys, which every attempt of a frame compile shares).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::alignment::{self, Alignment, StreamCompiles};
use super::cross_rank::volatile::mask_volatile;
use crate::schema::cross_rank::compile_alignment::{AlignedCompile, AlignmentKey};
use crate::schema::tables::{
    ArtifactRef, CompileDirectory, CompileEntry, CompileStatus, GraphBreaks, GraphSizes, Guards, Recompiles,
};

/// The tables of one stream of a run that the comparison reads.
#[derive(Default)]
pub struct StreamTables {
    pub stream: String,
    pub compile_directory: Option<CompileDirectory>,
    pub graph_sizes: Option<GraphSizes>,
    pub guards: Option<Guards>,
    pub recompiles: Option<Recompiles>,
    pub graph_breaks: Option<GraphBreaks>,
}

/// Which run of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    A,
    B,
}

/// Reads the payload of a blob of either run (`None` when it cannot be read: then a differing
/// artifact is reported by its hashes alone).
pub trait Payloads {
    fn payload(&self, run: Run, blob: &str) -> Option<Vec<u8>>;
}

impl<F: Fn(Run, &str) -> Option<Vec<u8>>> Payloads for F {
    fn payload(&self, run: Run, blob: &str) -> Option<Vec<u8>> {
        self(run, blob)
    }
}

/// What changed between two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    /// Streams of both runs, paired by stream id, in run A's order.
    pub streams: Vec<StreamComparison>,
    /// Stream ids only run A has.
    pub streams_only_in_a: Vec<String>,
    /// Stream ids only run B has.
    pub streams_only_in_b: Vec<String>,
}

/// One stream of both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamComparison {
    pub stream: String,
    /// Every frame compile of either run, paired where the alignment pairs them, in the
    /// alignment's order.
    pub compiles: Vec<CompileComparison>,
    /// Frames whose number of recompiles changed, or that recompiled for new reasons, in order
    /// of their first compile.
    pub recompiles: Vec<RecompileChange>,
}

/// One aligned frame compile: its final attempt's compile id in each run (null where the run did
/// not make it), the attempts restarted before it, and what changed between the final attempts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompileComparison {
    /// `compile_directory`'s `align_key` (the same on both sides, and on every attempt).
    pub align_key: String,
    /// The frame compiled: `name (file.py:line)`, with `, frame N` for the Nth frame of the
    /// same code (two resume functions of one line are two frames); null when the code is
    /// unknown.
    pub code: Option<String>,
    /// Run A's final attempt (`[0/0]`, `[0/0_2]`).
    pub a: Option<String>,
    /// Run B's final attempt.
    pub b: Option<String>,
    /// Run A's attempts before `a`, restarted, lowest first.
    pub a_restarts: Vec<Restart>,
    /// Run B's attempts before `b`, restarted, lowest first.
    pub b_restarts: Vec<Restart>,
    /// What changed between the final attempts, when both runs made it (empty otherwise, and
    /// when nothing did).
    pub changes: Vec<Change>,
    /// Artifacts both final attempts logged (numbered names) whose payloads differ only in what
    /// is volatile by nature (object ids, addresses, temporary paths, compile ids, times:
    /// `mask_volatile`'s rule): the same up to ids, so not a change.
    pub same_up_to_ids: Vec<String>,
}

/// An attempt Dynamo restarted, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Restart {
    /// Its compile id.
    pub compile_id: String,
    /// Why it restarted: each graph break it logged, `graph break at file.py:22 (reason)`; else
    /// the restart reason torch logged for it (the final attempt's `restart_reasons`, in order:
    /// its first line); empty when neither was logged.
    pub why: Vec<String>,
}

/// One change between the final attempts of an aligned frame compile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// Its final attempt's status changed.
    Status { a: CompileStatus, b: CompileStatus },
    /// Its compile time (`compile_directory`'s `total_s`: forward + backward) changed; null on
    /// a side that logged no time.
    CompileTime { a: Option<f64>, b: Option<f64>, delta: Option<f64> },
    /// The size of one IR both logged changed: FX nodes for readable FX graphs, lines otherwise.
    /// `ir` is the graph's name, with `#2`, `#3` for later graphs of the same name in the
    /// compile.
    GraphSize { ir: String, unit: String, a: u64, b: u64, delta: i64 },
    /// IRs only one side logged (numbered names, `name (9 nodes)`).
    GraphsOnly { a: Vec<String>, b: Vec<String> },
    /// Guards (`KIND: check` of the C++ guard trees, or `dynamo_guards` code), masked by
    /// `mask_volatile`: object ids and addresses, which differ between processes, read as `<?>`.
    Guards { added: Vec<String>, removed: Vec<String> },
    /// Dynamic-shape symbols created, by the source they stand for (the symbol when none).
    Symbols { added: Vec<String>, removed: Vec<String> },
    /// Graph breaks of the final attempts, `reason (at location)`.
    GraphBreaks { added: Vec<String>, removed: Vec<String> },
    /// One cache's outcomes, in log order, changed (e.g. `miss` → `hit`).
    Cache { cache: String, a: Vec<String>, b: Vec<String> },
    /// An artifact both logged (same name and occurrence) whose payloads differ even once
    /// masked by `mask_volatile`: `a` and `b` are the blob ids, `first_difference` the first
    /// line that differs (null when a payload could not be read).
    Artifact { name: String, a: String, b: String, first_difference: Option<LineDifference> },
    /// Artifacts only one run logged (names with occurrence).
    ArtifactsOnly { a: Vec<String>, b: Vec<String> },
}

/// The first line in which two payloads differ once masked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineDifference {
    /// Its number (1-based).
    pub line: u64,
    /// Run A's line, masked (`<?>` where a volatile value was), cut to [`EXCERPT_CHARS`]
    /// characters around the first differing character (`…` marks a cut); null when A's payload
    /// has fewer lines.
    pub a: Option<String>,
    /// Run B's line, the same way.
    pub b: Option<String>,
}

/// A frame's recompiles in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecompileChange {
    /// The frame: `name (file.py:line)`, with `, frame N` for the Nth frame of the same code.
    pub frame: String,
    /// Recompiles (frame compiles of the frame after its first) in each run.
    pub a: u64,
    pub b: u64,
    pub delta: i64,
    /// Recompile reasons B logged for the frame that A did not (the `N/M: ` compile-id prefix
    /// left out).
    pub reasons_added: Vec<String>,
    /// Recompile reasons A logged for the frame that B did not.
    pub reasons_removed: Vec<String>,
}

/// Compares two runs' streams, paired by stream id; two runs of one stream each are paired
/// whatever their ids (`log0` and `rank0` are the same process's log).
pub fn compare(a: &[StreamTables], b: &[StreamTables], payloads: &dyn Payloads) -> RunComparison {
    if let ([sa], [sb]) = (a, b) {
        let streams = vec![compare_stream(sa, sb, payloads)];
        return RunComparison { streams, streams_only_in_a: Vec::new(), streams_only_in_b: Vec::new() };
    }
    let ids = |run: &[StreamTables]| run.iter().map(|s| s.stream.clone()).collect::<BTreeSet<_>>();
    let (ids_a, ids_b) = (ids(a), ids(b));
    let streams = a
        .iter()
        .filter_map(|sa| b.iter().find(|sb| sb.stream == sa.stream).map(|sb| compare_stream(sa, sb, payloads)))
        .collect();
    RunComparison {
        streams,
        streams_only_in_a: a.iter().map(|s| s.stream.clone()).filter(|s| !ids_b.contains(s)).collect(),
        streams_only_in_b: b.iter().map(|s| s.stream.clone()).filter(|s| !ids_a.contains(s)).collect(),
    }
}

fn rows(s: &StreamTables) -> &[CompileEntry] {
    s.compile_directory.as_ref().map_or(&[], |d| &d.compiles)
}

fn compare_stream(a: &StreamTables, b: &StreamTables, payloads: &dyn Payloads) -> StreamComparison {
    let (rows_a, rows_b) = (rows(a), rows(b));
    let aligned = Alignment::new(&[
        StreamCompiles { stream: "a", compiles: rows_a },
        StreamCompiles { stream: "b", compiles: rows_b },
    ]);
    let compiles = aligned
        .table
        .compiles
        .iter()
        .map(|c| {
            let (ea, eb) = (side(c, "a", rows_a), side(c, "b", rows_b));
            let (changes, same_up_to_ids) = match (ea, eb) {
                (Some(ea), Some(eb)) => changes(a, ea, b, eb, payloads),
                _ => Default::default(),
            };
            CompileComparison {
                align_key: alignment::key_string(&c.key),
                code: frame_label(&c.key),
                a: ea.map(|e| e.compile_id.clone()),
                b: eb.map(|e| e.compile_id.clone()),
                a_restarts: restarts(c, "a", a, ea),
                b_restarts: restarts(c, "b", b, eb),
                changes,
                same_up_to_ids,
            }
        })
        .collect();
    StreamComparison { stream: a.stream.clone(), compiles, recompiles: recompiles(a, b, &aligned) }
}

/// The row of one run's final attempt of an aligned compile.
fn side<'a>(c: &AlignedCompile, stream: &str, rows: &'a [CompileEntry]) -> Option<&'a CompileEntry> {
    let p = c.present.iter().find(|p| p.stream == stream)?;
    rows.iter().find(|r| r.compile_id == p.compile_id)
}

/// The attempts one run restarted before its final attempt `last` of an aligned compile.
fn restarts(c: &AlignedCompile, stream: &str, s: &StreamTables, last: Option<&CompileEntry>) -> Vec<Restart> {
    let Some(p) = c.present.iter().find(|p| p.stream == stream) else { return Vec::new() };
    let reasons = last.map_or(&[][..], |l| &l.restart_reasons);
    p.earlier_attempts
        .iter()
        .enumerate()
        .map(|(n, attempt)| {
            let row = rows(s).iter().find(|r| r.compile_id == attempt.compile_id);
            let mut why: Vec<String> = row.map(|r| break_places(s, r)).unwrap_or_default();
            if why.is_empty()
                && let Some(reason) = reasons.get(n)
            {
                why.push(reason.lines().next().unwrap_or_default().trim().to_string());
            }
            Restart { compile_id: attempt.compile_id.clone(), why }
        })
        .collect()
}

/// A compile's graph breaks as `graph break at file.py:22 (reason)` (the place from the
/// `graph_breaks` group of that reason and compile), in the row's order.
fn break_places(s: &StreamTables, e: &CompileEntry) -> Vec<String> {
    e.graph_breaks
        .iter()
        .map(|reason| match break_location(s, e, reason) {
            Some(at) => format!("graph break at {} ({reason})", at.rsplit('/').next().unwrap_or(at)),
            None => format!("graph break ({reason})"),
        })
        .collect()
}

/// Where a compile's graph break of `reason` happened, from the `graph_breaks` table.
fn break_location<'a>(s: &'a StreamTables, e: &CompileEntry, reason: &str) -> Option<&'a str> {
    let groups = s.graph_breaks.as_ref().map_or(&[][..], |g| &g.breaks);
    let group = groups.iter().find(|g| g.reason == reason && g.compile_ids.contains(&e.compile_id))?;
    group.location.as_deref()
}

/// `name (file.py:line)` of a key's code, with `, frame N` for its second frame on and after:
/// how a frame is named to people (the alignment's labels name it so too).
fn frame_label(k: &AlignmentKey) -> Option<String> {
    let c = k.code.as_ref()?;
    Some(alignment::code_label(&c.name, &c.filename, c.line) + &alignment::frame_suffix(k.frame))
}

/// The changes between two final attempts, and the artifacts the same up to ids.
fn changes(
    sa: &StreamTables,
    a: &CompileEntry,
    sb: &StreamTables,
    b: &CompileEntry,
    payloads: &dyn Payloads,
) -> (Vec<Change>, Vec<String>) {
    let mut out = Vec::new();
    if a.status != b.status {
        out.push(Change::Status { a: a.status, b: b.status });
    }
    if a.total_s != b.total_s {
        let delta = a.total_s.zip(b.total_s).map(|(x, y)| y - x);
        out.push(Change::CompileTime { a: a.total_s, b: b.total_s, delta });
    }
    out.extend(graph_sizes(sa, a, sb, b));
    let (ga, gb) = (guards(sa, &a.compile_id), guards(sb, &b.compile_id));
    if let Some((added, removed)) = set_change(&ga, &gb) {
        out.push(Change::Guards { added, removed });
    }
    let (ya, yb) = (symbols(sa, &a.compile_id), symbols(sb, &b.compile_id));
    if let Some((added, removed)) = set_change(&ya, &yb) {
        out.push(Change::Symbols { added, removed });
    }
    let (ba, bb) = (breaks(sa, a), breaks(sb, b));
    if let Some((added, removed)) = set_change(&ba, &bb) {
        out.push(Change::GraphBreaks { added, removed });
    }
    out.extend(cache(a, b));
    let (artifact_changes, same_up_to_ids) = artifacts(&artifacts_of(sa, a), &artifacts_of(sb, b), payloads);
    out.extend(artifact_changes);
    (out, same_up_to_ids)
}

/// Added and removed, sorted; `None` when the sets are equal.
fn set_change(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Option<(Vec<String>, Vec<String>)> {
    (a != b).then(|| (b.difference(a).cloned().collect(), a.difference(b).cloned().collect()))
}

/// The artifacts of `compile`, a row of `s`'s compile directory.
fn artifacts_of<'s>(s: &'s StreamTables, compile: &CompileEntry) -> Vec<&'s ArtifactRef> {
    let Some(directory) = &s.compile_directory else { return Vec::new() };
    directory.artifacts_of(compile).iter().map(|a| &a.artifact).collect()
}

/// Names with `#2`, `#3` for the later occurrences of the same name, in order.
fn numbered<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen: HashMap<&str, u32> = HashMap::new();
    names
        .map(|n| {
            let k = seen.entry(n).or_default();
            *k += 1;
            if *k == 1 { n.to_string() } else { format!("{n}#{k}") }
        })
        .collect()
}

/// One compile's IR sizes by numbered name: (unit, size).
fn sizes(s: &StreamTables, compile_id: &str) -> BTreeMap<String, (&'static str, u64)> {
    let Some(g) =
        s.graph_sizes.as_ref().and_then(|t| t.compiles.iter().find(|c| c.compile_id.as_deref() == Some(compile_id)))
    else {
        return BTreeMap::new();
    };
    let names = numbered(g.graphs.iter().map(|x| x.name.as_str()));
    names
        .into_iter()
        .zip(&g.graphs)
        .map(|(n, x)| (n, x.fx_nodes.map_or(("lines", x.lines), |nodes| ("nodes", nodes))))
        .collect()
}

fn graph_sizes(sa: &StreamTables, a: &CompileEntry, sb: &StreamTables, b: &CompileEntry) -> Vec<Change> {
    let (za, zb) = (sizes(sa, &a.compile_id), sizes(sb, &b.compile_id));
    let mut out: Vec<Change> = za
        .iter()
        .filter_map(|(ir, &(unit, x))| {
            let &(other_unit, y) = zb.get(ir)?;
            (x != y && unit == other_unit).then(|| Change::GraphSize {
                ir: ir.clone(),
                unit: unit.to_string(),
                a: x,
                b: y,
                delta: y as i64 - x as i64,
            })
        })
        .collect();
    let only = |of: &BTreeMap<String, (&str, u64)>, not: &BTreeMap<String, (&str, u64)>| -> Vec<String> {
        of.iter().filter(|(ir, _)| !not.contains_key(*ir)).map(|(ir, (unit, n))| format!("{ir} ({n} {unit})")).collect()
    };
    let (only_a, only_b) = (only(&za, &zb), only(&zb, &za));
    if !only_a.is_empty() || !only_b.is_empty() {
        out.push(Change::GraphsOnly { a: only_a, b: only_b });
    }
    out
}

/// A guard's text masked by [`mask_volatile`], as text.
fn masked(text: &str) -> String {
    String::from_utf8_lossy(&mask_volatile("guards", text.as_bytes())).into_owned()
}

fn guards(s: &StreamTables, compile_id: &str) -> BTreeSet<String> {
    let Some(g) = &s.guards else { return BTreeSet::new() };
    let of = |c: &Option<String>| c.as_deref() == Some(compile_id);
    let trees = g.guard_trees.iter().filter(|t| of(&t.compile_id)).flat_map(|t| &t.guards);
    let tree_guards = trees.map(|t| masked(&format!("{}: {}", t.kind, t.code)));
    let dynamo = g.dynamo_guards.iter().filter(|d| of(&d.compile_id)).map(|d| masked(&d.code));
    tree_guards.chain(dynamo).collect()
}

fn symbols(s: &StreamTables, compile_id: &str) -> BTreeSet<String> {
    let Some(g) = &s.guards else { return BTreeSet::new() };
    let mine = g.symbols.iter().filter(|y| y.compile_id.as_deref() == Some(compile_id));
    mine.filter_map(|y| y.source.clone().or_else(|| y.symbol.clone())).collect()
}

/// A compile's graph breaks: each reason of its row, with the location the `graph_breaks`
/// group of that reason and compile gives.
fn breaks(s: &StreamTables, e: &CompileEntry) -> BTreeSet<String> {
    let groups = s.graph_breaks.as_ref().map_or(&[][..], |g| &g.breaks);
    e.graph_breaks
        .iter()
        .map(|reason| {
            let group = groups.iter().find(|g| &g.reason == reason && g.compile_ids.contains(&e.compile_id));
            match group.and_then(|g| g.location.as_deref()) {
                Some(at) => format!("{reason} (at {at})"),
                None => reason.clone(),
            }
        })
        .collect()
}

fn cache(a: &CompileEntry, b: &CompileEntry) -> Vec<Change> {
    let by_cache = |e: &CompileEntry| {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in &e.cache {
            m.entry(c.cache.clone()).or_default().push(c.outcome.clone());
        }
        m
    };
    let (ca, cb) = (by_cache(a), by_cache(b));
    let caches: BTreeSet<&String> = ca.keys().chain(cb.keys()).collect();
    caches
        .into_iter()
        .filter_map(|c| {
            let (x, y) = (ca.get(c).cloned().unwrap_or_default(), cb.get(c).cloned().unwrap_or_default());
            (x != y).then(|| Change::Cache { cache: c.clone(), a: x, b: y })
        })
        .collect()
}

/// Artifacts by numbered name: the payload's blob id, or "" for one without a payload.
fn by_name(list: &[&ArtifactRef]) -> Vec<(String, String)> {
    let names = numbered(list.iter().map(|r| r.name.as_str()));
    names.into_iter().zip(list).map(|(n, r)| (n, r.blob.clone().unwrap_or_default())).collect()
}

/// An artifact's name without the `#2` of a later occurrence ([`numbered`]).
fn artifact_name(numbered: &str) -> &str {
    numbered.rsplit_once('#').filter(|(_, n)| n.parse::<u32>().is_ok()).map_or(numbered, |(name, _)| name)
}

/// Artifacts both logged whose payloads differ (even once masked), those only one logged, and
/// the names of those the same up to ids.
fn artifacts(a: &[&ArtifactRef], b: &[&ArtifactRef], payloads: &dyn Payloads) -> (Vec<Change>, Vec<String>) {
    let (la, lb) = (by_name(a), by_name(b));
    let mb: HashMap<&String, &String> = lb.iter().map(|(n, h)| (n, h)).collect();
    let ma: HashMap<&String, &String> = la.iter().map(|(n, h)| (n, h)).collect();
    let mut out = Vec::new();
    let mut same_up_to_ids = Vec::new();
    for (name, x) in &la {
        let Some(&y) = mb.get(name).filter(|&&y| y != x) else { continue };
        match payload_difference(payloads, artifact_name(name), x, y) {
            Some(None) => same_up_to_ids.push(name.clone()),
            found => out.push(Change::Artifact {
                name: name.clone(),
                a: x.clone(),
                b: y.clone(),
                first_difference: found.flatten(),
            }),
        }
    }
    let only_a: Vec<String> = la.iter().filter(|(n, _)| !mb.contains_key(n)).map(|(n, _)| n.clone()).collect();
    let only_b: Vec<String> = lb.iter().filter(|(n, _)| !ma.contains_key(n)).map(|(n, _)| n.clone()).collect();
    if !only_a.is_empty() || !only_b.is_empty() {
        out.push(Change::ArtifactsOnly { a: only_a, b: only_b });
    }
    (out, same_up_to_ids)
}

/// Two payloads compared once masked: `Some(None)` when they are the same up to ids,
/// `Some(Some(line))` when they differ, `None` when either cannot be read.
fn payload_difference(payloads: &dyn Payloads, name: &str, a: &str, b: &str) -> Option<Option<LineDifference>> {
    let read = |run, blob: &str| (!blob.is_empty()).then(|| payloads.payload(run, blob)).flatten();
    let (pa, pb) = (read(Run::A, a)?, read(Run::B, b)?);
    let (ma, mb) = (mask_volatile(name, &pa), mask_volatile(name, &pb));
    Some((ma != mb).then(|| first_difference(&String::from_utf8_lossy(&ma), &String::from_utf8_lossy(&mb))))
}

/// At most this many characters of a differing line are shown.
pub const EXCERPT_CHARS: usize = 160;
/// An excerpt of a long line starts this many characters before its first difference.
const EXCERPT_LEAD: usize = 40;

/// A text's lines, without the empty piece after a final line break.
fn lines_of(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.len() > 1 && lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// The first line in which two different (masked) texts differ; when their lines are equal
/// (they differ only in a final line break), the line after the last, on neither side.
fn first_difference(a: &str, b: &str) -> LineDifference {
    let (la, lb) = (lines_of(a), lines_of(b));
    let at = (0..la.len().max(lb.len())).find(|&i| la.get(i) != lb.get(i)).unwrap_or(la.len());
    let (xa, xb) = (la.get(at).copied(), lb.get(at).copied());
    let column = match (xa, xb) {
        (Some(x), Some(y)) => x.chars().zip(y.chars()).take_while(|(p, q)| p == q).count(),
        _ => 0,
    };
    let start = column.saturating_sub(EXCERPT_LEAD);
    LineDifference { line: at as u64 + 1, a: xa.map(|x| excerpt(x, start)), b: xb.map(|y| excerpt(y, start)) }
}

/// A line whole when it is short, else [`EXCERPT_CHARS`] characters of it from `start`, with `…`
/// where it is cut.
fn excerpt(line: &str, start: usize) -> String {
    let count = line.chars().count();
    if count <= EXCERPT_CHARS {
        return line.to_string();
    }
    let start = start.min(count.saturating_sub(EXCERPT_CHARS));
    let mut out = if start > 0 { "…".to_string() } else { String::new() };
    out.extend(line.chars().skip(start).take(EXCERPT_CHARS));
    if start + EXCERPT_CHARS < count {
        out.push('…');
    }
    out
}

/// Per frame (named as [`frame_label`] names it), in alignment order: the number of its frame
/// compiles after the first on each side, and each side's recompile reasons for it. Frames are
/// told apart by the alignment (code and which frame of that code), never merged by name;
/// compiled-autograd graphs and compiles of unknown code have no frame to count.
type FrameRecompiles = BTreeMap<String, ([u64; 2], [BTreeSet<String>; 2])>;

fn recompiles(a: &StreamTables, b: &StreamTables, aligned: &Alignment) -> Vec<RecompileChange> {
    let mut order: Vec<String> = Vec::new();
    let mut frames: FrameRecompiles = BTreeMap::new();
    for c in &aligned.table.compiles {
        let Some(frame) = frame_label(&c.key).filter(|_| c.key.compiled_autograd_id.is_none()) else { continue };
        let entry = frames.entry(frame.clone()).or_insert_with(|| {
            order.push(frame);
            Default::default()
        });
        for p in &c.present {
            entry.0[usize::from(p.stream == "b")] += 1;
        }
    }
    for (i, s) in [a, b].into_iter().enumerate() {
        let steps = s.recompiles.iter().flat_map(|r| &r.frames).flat_map(|f| &f.compiles);
        for step in steps {
            let Some(at) = aligned.aligned(i, &step.compile_id) else { continue };
            let key = &aligned.table.compiles[at as usize].key;
            let Some(entry) = frame_label(key).and_then(|f| frames.get_mut(&f)) else { continue };
            let reasons = step.reasons.iter().map(|r| r.split_once(": ").map_or(r.as_str(), |(_, r)| r).to_string());
            entry.1[i].extend(reasons);
        }
    }
    order
        .into_iter()
        .filter_map(|frame| {
            let ([na, nb], [xa, xb]) = &frames[&frame];
            let (na, nb) = (na.saturating_sub(1), nb.saturating_sub(1));
            let (added, removed) = set_change(xa, xb).unwrap_or_default();
            (na != nb || !added.is_empty() || !removed.is_empty()).then(|| RecompileChange {
                frame,
                a: na,
                b: nb,
                delta: nb as i64 - na as i64,
                reasons_added: added,
                reasons_removed: removed,
            })
        })
        .collect()
}

/// `once`, `twice`, `3 times`.
fn times(n: usize) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// `B restarted twice: graph break at two_runs.py:22 (reason), then ...`; `None` without
/// restarts.
pub fn restart_history(run: &str, restarts: &[Restart]) -> Option<String> {
    if restarts.is_empty() {
        return None;
    }
    let each = restarts.iter().map(|r| match r.why.as_slice() {
        [] => format!("{} (no reason logged)", r.compile_id),
        why => why.join("; "),
    });
    Some(format!("{run} restarted {}: {}", times(restarts.len()), each.collect::<Vec<_>>().join(", then ")))
}

/// The comparison in words: per stream a heading (with the number of artifacts the same up to
/// ids, when there are any: not findings), then per paired frame compile its restart
/// history on each side and one line per change, each naming it by its final attempts
/// (`forward (two_runs.py:32) [0/0]→[0/0_1]: ...`); frame compiles only one run made;
/// recompile counts per frame.
pub fn findings(c: &RunComparison) -> Vec<String> {
    let mut lines = Vec::new();
    for s in &c.streams {
        let both = s.compiles.iter().filter(|x| x.a.is_some() && x.b.is_some()).count();
        let only = |f: fn(&CompileComparison) -> bool| s.compiles.iter().filter(|x| f(x)).count();
        let (only_a, only_b) = (only(|x| x.b.is_none()), only(|x| x.a.is_none()));
        let same: usize = s.compiles.iter().map(|x| x.same_up_to_ids.len()).sum();
        let same = if same > 0 { format!("; {same} artifact(s) the same up to ids") } else { String::new() };
        lines.push(format!(
            "stream {}: {both} frame compile(s) in both runs (aligned by code and frame), {only_a} only in A, \
             {only_b} only in B{same}",
            s.stream
        ));
        for x in &s.compiles {
            let code = x.code.as_deref().unwrap_or("code unknown");
            let history =
                |run: &str, r: &[Restart]| restart_history(run, r).map(|h| format!("; {h}")).unwrap_or_default();
            match (&x.a, &x.b) {
                (Some(a), Some(b)) => {
                    let sides = [("A", &x.a_restarts), ("B", &x.b_restarts)];
                    let restarts = sides.iter().filter_map(|(run, r)| restart_history(run, r));
                    lines.extend(restarts.map(|h| format!("  {code} {a}→{b}: {h}")));
                    lines.extend(x.changes.iter().map(|ch| format!("  {code} {a}→{b}: {}", change_text(ch))));
                }
                (Some(a), None) => lines.push(format!("  only in A: {code} {a}{}", history("A", &x.a_restarts))),
                (None, Some(b)) => lines.push(format!("  only in B: {code} {b}{}", history("B", &x.b_restarts))),
                (None, None) => {}
            }
        }
        for r in &s.recompiles {
            let mut line = format!("  recompiles of {}: {} → {} ({:+})", r.frame, r.a, r.b, r.delta);
            for reason in &r.reasons_added {
                line.push_str(&format!("; new reason: {reason}"));
            }
            for reason in &r.reasons_removed {
                line.push_str(&format!("; reason gone: {reason}"));
            }
            lines.push(line);
        }
    }
    for id in &c.streams_only_in_a {
        lines.push(format!("stream {id}: only in A"));
    }
    for id in &c.streams_only_in_b {
        lines.push(format!("stream {id}: only in B"));
    }
    lines
}

fn status_text(s: CompileStatus) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// `3.1 s`, or `not timed`.
fn seconds(s: Option<f64>) -> String {
    s.map_or_else(|| "not timed".to_string(), |s| format!("{s:.2} s"))
}

/// `+2: a | b; -1: c`, at most 3 of each shown (`--json` has them all).
fn added_removed(added: &[String], removed: &[String]) -> String {
    let list = |sign: char, items: &[String]| {
        let more = if items.len() > 3 { format!(" | … {} more", items.len() - 3) } else { String::new() };
        let shown: Vec<&str> = items.iter().take(3).map(String::as_str).collect();
        format!("{sign}{}: {}{more}", items.len(), shown.join(" | "))
    };
    let mut parts = Vec::new();
    if !added.is_empty() {
        parts.push(list('+', added));
    }
    if !removed.is_empty() {
        parts.push(list('-', removed));
    }
    parts.join("; ")
}

/// `miss,hit`, or `no lookup`.
fn outcomes(list: &[String]) -> String {
    if list.is_empty() { "no lookup".to_string() } else { list.join(",") }
}

/// `only in A: x, y; only in B: z`, leaving out an empty side.
fn only_in(a: &[String], b: &[String]) -> String {
    let sides = [("A", a), ("B", b)].into_iter().filter(|(_, names)| !names.is_empty());
    sides.map(|(run, names)| format!("only in {run}: {}", names.join(", "))).collect::<Vec<_>>().join("; ")
}

fn change_text(c: &Change) -> String {
    match c {
        Change::Status { a, b } => format!("status {} → {}", status_text(*a), status_text(*b)),
        Change::CompileTime { a, b, delta } => {
            let delta = delta.map(|d| format!(" ({d:+.2} s)")).unwrap_or_default();
            format!("compile time {} → {}{delta}", seconds(*a), seconds(*b))
        }
        Change::GraphSize { ir, unit, a, b, delta } => format!("{ir}: {a} {unit} → {b} {unit} ({delta:+})"),
        Change::GraphsOnly { a, b } => format!("graphs {}", only_in(a, b)),
        Change::Guards { added, removed } => format!("guards {}", added_removed(added, removed)),
        Change::Symbols { added, removed } => format!("dynamic-shape symbols {}", added_removed(added, removed)),
        Change::GraphBreaks { added, removed } => format!("graph breaks {}", added_removed(added, removed)),
        Change::Cache { cache, a, b } => format!("{cache} {} → {}", outcomes(a), outcomes(b)),
        Change::Artifact { name, first_difference: Some(d), .. } => {
            let side =
                |x: &Option<String>| x.as_ref().map_or_else(|| "(no such line)".to_string(), |x| format!("{x:?}"));
            format!("artifact {name} differs at line {}: {} → {}", d.line, side(&d.a), side(&d.b))
        }
        Change::Artifact { name, a, b, first_difference: None } => format!("artifact {name} differs ({a} → {b})"),
        Change::ArtifactsOnly { a, b } => format!("artifacts {}", only_in(a, b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_ids_are_not_guard_changes_but_small_numbers_are() {
        let g = "ID_MATCH: ___check_obj_id(G['torch'], 139740562968704), type=<class 'module'>";
        assert_eq!(masked(g), "ID_MATCH: ___check_obj_id(G['torch'], <?>), type=<class 'module'>");
        assert_eq!(masked("size=[32, 16], x"), "size=[32, 16], x");
        assert_eq!(masked("1234567890"), "<?>");
    }

    fn artifact(name: &str, blob: &str) -> ArtifactRef {
        let row = serde_json::json!({"seq": 0, "line": 1, "kind": "artifact", "name": name, "blob": blob, "size": 1,
            "lines": 1, "format": null});
        serde_json::from_value(row).unwrap()
    }

    /// Payloads by blob id, the same for both runs.
    fn reader(blobs: &[(&str, &str)]) -> impl Fn(Run, &str) -> Option<Vec<u8>> {
        let blobs: HashMap<String, String> = blobs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |_, blob| blobs.get(blob).map(|t| t.as_bytes().to_vec())
    }

    #[test]
    fn artifacts_differing_only_by_ids_are_not_changes() {
        let read = reader(&[
            ("1", "guards\n___check_obj_id(G['torch'], 139958002446672)\n"),
            ("2", "guards\n___check_obj_id(G['torch'], 140088525910512)\n"),
            ("3", "a\nsize=[8, 16] at 0x7f00\nc\n"),
            ("4", "a\nsize=[12, 16] at 0x7f99\nc\n"),
        ]);
        let a = [artifact("g", "1"), artifact("code", "3"), artifact("g", "1")];
        let b = [artifact("g", "2"), artifact("code", "4"), artifact("g", "1")];
        let (changes, same) = artifacts(&a.each_ref(), &b.each_ref(), &read);
        assert_eq!(same, ["g"]);
        let want = LineDifference {
            line: 2,
            a: Some("size=[8, 16] at 0x<?>".into()),
            b: Some("size=[12, 16] at 0x<?>".into()),
        };
        assert_eq!(
            changes,
            [Change::Artifact { name: "code".into(), a: "3".into(), b: "4".into(), first_difference: Some(want) }]
        );
        // A payload that cannot be read is reported by its hashes.
        let (changes, same) = artifacts(&a.each_ref(), &b.each_ref(), &|_, _: &str| None);
        assert!(same.is_empty());
        assert_eq!(changes.len(), 2);
        assert!(changes.iter().all(|c| matches!(c, Change::Artifact { first_difference: None, .. })));
    }

    #[test]
    fn the_first_difference_of_lines_that_end_or_run_long() {
        let d = first_difference("a\nb\n", "a\nb\nc\n");
        assert_eq!(d, LineDifference { line: 3, a: None, b: Some("c".into()) });
        let d = first_difference("a", "a\n\n");
        assert_eq!(d, LineDifference { line: 2, a: None, b: Some("".into()) });
        let (long_a, long_b) = ("x".repeat(300) + "A" + &"y".repeat(300), "x".repeat(300) + "B" + &"y".repeat(300));
        let d = first_difference(&long_a, &long_b);
        let want =
            |c: &str| format!("…{}{c}{}…", "x".repeat(EXCERPT_LEAD), "y".repeat(EXCERPT_CHARS - EXCERPT_LEAD - 1));
        assert_eq!((d.a.unwrap(), d.b.unwrap()), (want("A"), want("B")));
    }

    #[test]
    fn repeated_names_are_numbered() {
        assert_eq!(numbered(["a", "b", "a", "a"].into_iter()), ["a", "b", "a#2", "a#3"]);
    }
}
