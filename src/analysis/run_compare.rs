//! Comparing two runs: each stream's frame compiles of run A and run B paired by the alignment
//! module ([`super::alignment`], the same keying as the cross-rank tables), and what changed for
//! each pair. A frame compile's final attempt (the one not restarted) is what is compared; the
//! attempts Dynamo restarted before it are its history, shown per side. Pure: tables in, a
//! [`RunComparison`] out. `tlparse-build compare` prints it, and the viewer's Compare page
//! computes the same findings from the same tables (pairing compiles by `compile_directory`'s
//! `align_key`, the string form of the same keys, which every attempt of a frame compile shares).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::alignment::{self, Alignment, StreamCompiles};
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
    /// Guards (`KIND: check` of the C++ guard trees, or `dynamo_guards` code; numbers of 10 or
    /// more digits, object and type ids that differ between processes, read as `<id>`).
    Guards { added: Vec<String>, removed: Vec<String> },
    /// Dynamic-shape symbols created, by the source they stand for (the symbol when none).
    Symbols { added: Vec<String>, removed: Vec<String> },
    /// Graph breaks of the final attempts, `reason (at location)`.
    GraphBreaks { added: Vec<String>, removed: Vec<String> },
    /// One cache's outcomes, in log order, changed (e.g. `miss` → `hit`).
    Cache { cache: String, a: Vec<String>, b: Vec<String> },
    /// An artifact both logged (same name and occurrence) with different payloads.
    Artifact { name: String, a: String, b: String },
    /// Artifacts only one run logged (names with occurrence).
    ArtifactsOnly { a: Vec<String>, b: Vec<String> },
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
pub fn compare(a: &[StreamTables], b: &[StreamTables]) -> RunComparison {
    if let ([sa], [sb]) = (a, b) {
        let streams = vec![compare_stream(sa, sb)];
        return RunComparison { streams, streams_only_in_a: Vec::new(), streams_only_in_b: Vec::new() };
    }
    let ids = |run: &[StreamTables]| run.iter().map(|s| s.stream.clone()).collect::<BTreeSet<_>>();
    let (ids_a, ids_b) = (ids(a), ids(b));
    let streams =
        a.iter().filter_map(|sa| b.iter().find(|sb| sb.stream == sa.stream).map(|sb| compare_stream(sa, sb))).collect();
    RunComparison {
        streams,
        streams_only_in_a: a.iter().map(|s| s.stream.clone()).filter(|s| !ids_b.contains(s)).collect(),
        streams_only_in_b: b.iter().map(|s| s.stream.clone()).filter(|s| !ids_a.contains(s)).collect(),
    }
}

fn rows(s: &StreamTables) -> &[CompileEntry] {
    s.compile_directory.as_ref().map_or(&[], |d| &d.compiles)
}

fn compare_stream(a: &StreamTables, b: &StreamTables) -> StreamComparison {
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
            let changes = match (ea, eb) {
                (Some(ea), Some(eb)) => changes(a, ea, b, eb),
                _ => Vec::new(),
            };
            CompileComparison {
                align_key: alignment::key_string(&c.key),
                code: frame_label(&c.key),
                a: ea.map(|e| e.compile_id.clone()),
                b: eb.map(|e| e.compile_id.clone()),
                a_restarts: restarts(c, "a", a, ea),
                b_restarts: restarts(c, "b", b, eb),
                changes,
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

fn changes(sa: &StreamTables, a: &CompileEntry, sb: &StreamTables, b: &CompileEntry) -> Vec<Change> {
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
    out.extend(artifacts(&a.artifacts, &b.artifacts));
    out
}

/// Added and removed, sorted; `None` when the sets are equal.
fn set_change(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Option<(Vec<String>, Vec<String>)> {
    (a != b).then(|| (b.difference(a).cloned().collect(), a.difference(b).cloned().collect()))
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

/// A guard's text with object and type ids (10 digits or more) read as `<id>`.
pub fn normalize_guard(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut digits = String::new();
    for ch in text.chars().chain(std::iter::once('\0')) {
        if ch.is_ascii_digit() {
            digits.push(ch);
            continue;
        }
        out.push_str(if digits.len() >= 10 { "<id>" } else { &digits });
        digits.clear();
        if ch != '\0' {
            out.push(ch);
        }
    }
    out
}

fn guards(s: &StreamTables, compile_id: &str) -> BTreeSet<String> {
    let Some(g) = &s.guards else { return BTreeSet::new() };
    let of = |c: &Option<String>| c.as_deref() == Some(compile_id);
    let trees = g.guard_trees.iter().filter(|t| of(&t.compile_id)).flat_map(|t| &t.guards);
    let tree_guards = trees.map(|t| normalize_guard(&format!("{}: {}", t.kind, t.code)));
    let dynamo = g.dynamo_guards.iter().filter(|d| of(&d.compile_id)).map(|d| normalize_guard(&d.code));
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
fn by_name(list: &[ArtifactRef]) -> Vec<(String, String)> {
    let names = numbered(list.iter().map(|r| r.name.as_str()));
    names.into_iter().zip(list).map(|(n, r)| (n, r.blob.clone().unwrap_or_default())).collect()
}

fn artifacts(a: &[ArtifactRef], b: &[ArtifactRef]) -> Vec<Change> {
    let (la, lb) = (by_name(a), by_name(b));
    let mb: HashMap<&String, &String> = lb.iter().map(|(n, h)| (n, h)).collect();
    let ma: HashMap<&String, &String> = la.iter().map(|(n, h)| (n, h)).collect();
    let mut out: Vec<Change> = la
        .iter()
        .filter_map(|(n, x)| {
            let y = mb.get(n)?;
            (x != *y).then(|| Change::Artifact { name: n.clone(), a: x.clone(), b: (*y).clone() })
        })
        .collect();
    let only_a: Vec<String> = la.iter().filter(|(n, _)| !mb.contains_key(n)).map(|(n, _)| n.clone()).collect();
    let only_b: Vec<String> = lb.iter().filter(|(n, _)| !ma.contains_key(n)).map(|(n, _)| n.clone()).collect();
    if !only_a.is_empty() || !only_b.is_empty() {
        out.push(Change::ArtifactsOnly { a: only_a, b: only_b });
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

/// The comparison in words: per stream a heading, then per paired frame compile its restart
/// history on each side and one line per change, each naming it by its final attempts
/// (`forward (two_runs.py:32) [0/0]→[0/0_1]: ...`); frame compiles only one run made;
/// recompile counts per frame.
pub fn findings(c: &RunComparison) -> Vec<String> {
    let mut lines = Vec::new();
    for s in &c.streams {
        let both = s.compiles.iter().filter(|x| x.a.is_some() && x.b.is_some()).count();
        let only = |f: fn(&CompileComparison) -> bool| s.compiles.iter().filter(|x| f(x)).count();
        let (only_a, only_b) = (only(|x| x.b.is_none()), only(|x| x.a.is_none()));
        lines.push(format!(
            "stream {}: {both} frame compile(s) in both runs (aligned by code and frame), {only_a} only in A, \
             {only_b} only in B",
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

fn change_text(c: &Change) -> String {
    match c {
        Change::Status { a, b } => format!("status {} → {}", status_text(*a), status_text(*b)),
        Change::CompileTime { a, b, delta } => {
            let delta = delta.map(|d| format!(" ({d:+.2} s)")).unwrap_or_default();
            format!("compile time {} → {}{delta}", seconds(*a), seconds(*b))
        }
        Change::GraphSize { ir, unit, a, b, delta } => format!("{ir}: {a} {unit} → {b} {unit} ({delta:+})"),
        Change::GraphsOnly { a, b } => {
            let mut parts = Vec::new();
            if !a.is_empty() {
                parts.push(format!("only in A: {}", a.join(", ")));
            }
            if !b.is_empty() {
                parts.push(format!("only in B: {}", b.join(", ")));
            }
            format!("graphs {}", parts.join("; "))
        }
        Change::Guards { added, removed } => format!("guards {}", added_removed(added, removed)),
        Change::Symbols { added, removed } => format!("dynamic-shape symbols {}", added_removed(added, removed)),
        Change::GraphBreaks { added, removed } => format!("graph breaks {}", added_removed(added, removed)),
        Change::Cache { cache, a, b } => format!("{cache} {} → {}", outcomes(a), outcomes(b)),
        Change::Artifact { name, a, b } => format!("artifact {name} differs ({a} → {b})"),
        Change::ArtifactsOnly { a, b } => {
            let mut parts = Vec::new();
            if !a.is_empty() {
                parts.push(format!("only in A: {}", a.join(", ")));
            }
            if !b.is_empty() {
                parts.push(format!("only in B: {}", b.join(", ")));
            }
            format!("artifacts {}", parts.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_ids_are_not_guard_changes_but_small_numbers_are() {
        let g = "ID_MATCH: ___check_obj_id(G['torch'], 139740562968704), type=<class 'module'>";
        assert_eq!(normalize_guard(g), "ID_MATCH: ___check_obj_id(G['torch'], <id>), type=<class 'module'>");
        assert_eq!(normalize_guard("size=[32, 16], x"), "size=[32, 16], x");
        assert_eq!(normalize_guard("1234567890"), "<id>");
    }

    #[test]
    fn repeated_names_are_numbered() {
        assert_eq!(numbered(["a", "b", "a", "a"].into_iter()), ["a", "b", "a#2", "a#3"]);
    }
}
