//! Recompiles: per frame, its compiles in order, the guard failures that caused each recompile,
//! and what changed against the previous compile (artifacts by blob id, guards added/removed).

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};
use std::cell::RefCell;

use serde_json::Value;

use super::{CompileRecord, Compiles, Event, Finding, Finish, Observe, Table, compiles};
use crate::fast_hash::HashMap;
use crate::schema::tables::{ArtifactChange, Changes, RecompileReasonSource, RecompileStep, RecompiledFrame};
use crate::store::{Distinct, PerCompile, Store};

/// What a compile logged that this table compares.
#[derive(Default, Serialize, Deserialize)]
struct Logged {
    /// Its `recompile_reasons` artifact's reasons.
    reasons: Vec<String>,
    /// Its `compilation_metrics.recompile_reason`, when set: the first reason only, but logged
    /// even when the artifact is not.
    metrics_reason: Option<String>,
    /// Its guards: ids of normalized guard lines (in `RecompilesTable::lines`), in log order
    /// (hundreds per compile, in thousands of compiles); `None` when it logged none.
    guards: Option<Vec<u32>>,
}

/// A compile's record and its number (`Observe::record`), which this table's maps are keyed by.
type Numbered<'a> = (u32, &'a CompileRecord);

#[derive(Default)]
pub struct RecompilesTable {
    /// What each compile record (`Observe::record`) logged; those long past written out
    /// (borrowed mutably to read one back as the table is serialized).
    logged: RefCell<PerCompile<Logged>>,
    /// Each distinct guard line once, its index its id: the same guards repeat across a
    /// frame's compiles, and a long log has thousands of compiles with hundreds of guards each.
    lines: Distinct<String>,
}

/// One guard of a `dynamo_cpp_guards_str` tree line, without the tree drawing and the source
/// comment (so moving code does not count as a guard change); `None` for structure lines.
fn cpp_guard(line: &str) -> Option<&str> {
    let text = line.trim_start_matches(['|', ' ', '+', '-']).trim();
    if text.is_empty()
        || text.starts_with("Guard latency")
        || text == "TREE_GUARD_MANAGER:"
        || text == "RootGuardManager"
    {
        return None;
    }
    let guard = match text.find("  #") {
        Some(at) => text[..at].trim_end(),
        None => text,
    };
    Some(guard)
}

impl RecompilesTable {
    /// The id of a guard line, adding it if new.
    fn intern(&mut self, line: &str) -> u32 {
        self.lines.id_by(&[line.as_bytes()], || line.to_string())
    }

    /// The guard lines of ids.
    fn texts(&self, ids: Vec<u32>) -> Vec<String> {
        ids.into_iter().map(|i| self.lines.get(i)).collect()
    }
}

impl Table for RecompilesTable {
    type Format = crate::schema::tables::Recompiles;
    type Output<'a> = RecompilesView<'a>;

    fn new(store: &Store) -> Self {
        RecompilesTable { logged: RefCell::new(PerCompile::new(store)), lines: Distinct::new(store) }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        let Some(id) = cx.record else { return };
        match (ev.kind, ev.name) {
            ("artifact", Some("recompile_reasons")) => {
                // Declared JSON, but a bare string when there is one reason.
                let reasons = match ev.payload_json() {
                    Some(v @ (Value::Array(_) | Value::String(_))) => compiles::strings(Some(v)),
                    _ => ev.payload_text().map(|t| vec![t.trim().to_string()]).unwrap_or_default(),
                };
                self.logged.get_mut().entry(id).reasons.extend(reasons);
            }
            ("compilation_metrics", _) => {
                let reason = ev.meta_members().get("recompile_reason");
                if let Some(reason) = reason.as_deref().and_then(Value::as_str).filter(|r| !r.trim().is_empty()) {
                    self.logged.get_mut().entry(id).metrics_reason = Some(reason.to_string());
                }
            }
            ("dynamo_cpp_guards_str", _) => {
                let Some(text) = ev.payload_text() else { return };
                let ids: Vec<u32> = text.lines().filter_map(cpp_guard).map(|g| self.intern(g)).collect();
                self.logged.get_mut().entry(id).guards = Some(ids);
            }
            ("dynamo_guards", _) => match ev.payload_json().and_then(Value::as_array) {
                Some(list) => {
                    // The C++ tree, when also logged, is the fuller picture; keep it.
                    if self.logged.get_mut().entry(id).guards.is_none() {
                        let codes: Vec<&str> =
                            list.iter().filter_map(|g| g.get("code").and_then(Value::as_str)).collect();
                        let ids: Vec<u32> = codes.into_iter().map(|g| self.intern(g)).collect();
                        self.logged.get_mut().entry(id).guards = Some(ids);
                    }
                }
                None => diags.unusable(Self::NAME, ev, "payload is not a JSON list of guards"),
            },
            _ => {}
        }
    }

    fn finish<'a>(self, ctx: &'a Finish) -> Option<(RecompilesView<'a>, u64)> {
        let compiles = ctx.compiles;
        let frame_compile = |record: u32| -> Option<FrameCompile> {
            let id = compiles.records.id(record as usize);
            Some((id.compiled_autograd_id, id.frame_id?, id.frame_compile_id?))
        };
        // The final attempt of each frame compile, in frame-compile order, then record order
        // within one (of two such records, the later is kept). Record numbers only, in the
        // order `by_frame_compile` already has: keys held beside them and sorted here would cost
        // memory per compile at the point where a long log of many compiles peaks.
        let mut kept: Vec<u32> = Vec::new();
        for &record in compiles.by_frame_compile() {
            if compiles.records.next_attempt(record as usize).is_some() {
                continue;
            }
            let Some(key) = frame_compile(record) else { continue };
            if kept.last().is_some_and(|&last| frame_compile(last) == Some(key)) {
                kept.pop();
            }
            kept.push(record);
        }
        // Frames compiled more than once, by number of compiles descending, then frame.
        let frame = |record: u32| frame_compile(record).map(|(ca, frame, _)| (ca, frame));
        let mut frames: Vec<RecompiledRecords> = kept
            .chunk_by(|&a, &b| frame(a) == frame(b))
            .filter(|records| records.len() > 1)
            .map(|records| {
                let (compiled_autograd_id, frame_id) = frame(records[0]).expect("kept records have a frame");
                RecompiledRecords { compiled_autograd_id, frame_id, records: records.to_vec() }
            })
            .collect();
        if frames.is_empty() {
            return None;
        }
        frames.sort_by_key(|f| std::cmp::Reverse(f.records.len()));
        let rows = frames.len() as u64;
        Some((RecompilesView { table: self, ctx, frames }, rows))
    }

    fn finding(view: &RecompilesView<'_>) -> Option<Finding> {
        Some(Finding::RecompiledFrames(view.frames.len() as u64))
    }
}

/// A frame compile's recompile reasons, where they were read and the attempt that logged them.
#[derive(Default)]
struct StepReasons {
    reasons: Vec<String>,
    from: Option<RecompileReasonSource>,
    logged_on: Option<String>,
}

/// A frame compile: (compiled-autograd id, frame id, frame compile id).
type FrameCompile = (Option<u64>, u64, u64);

/// A frame compiled more than once: its compiles' records, in frame-compile order.
struct RecompiledRecords {
    compiled_autograd_id: Option<u64>,
    frame_id: u64,
    records: Vec<u32>,
}

/// [`crate::schema::tables::Recompiles`], each frame's row made as it is serialized: with their reasons and changes,
/// all the rows of a log of many recompiles took 20 MiB at once (52,000 compiles).
pub struct RecompilesView<'a> {
    table: RecompilesTable,
    ctx: &'a Finish<'a>,
    frames: Vec<RecompiledRecords>,
}

impl Serialize for RecompilesView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // `Recompiles`' one field (the snapshot tests of the table compare the two).
        let mut s = serializer.serialize_struct("Recompiles", 1)?;
        s.serialize_field("frames", &FramesView(self))?;
        s.end()
    }
}

/// The frames of a [`RecompilesView`], each made as it is written.
struct FramesView<'v, 'a>(&'v RecompilesView<'a>);

impl Serialize for FramesView<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let view = self.0;
        let mut seq = serializer.serialize_seq(Some(view.frames.len()))?;
        for frame in &view.frames {
            seq.serialize_element(&view.table.frame(view.ctx, frame))?;
        }
        seq.end()
    }
}

impl RecompilesTable {
    /// A frame's row: its compiles, each with its reasons and what changed from the one before.
    fn frame(&self, ctx: &Finish, frame: &RecompiledRecords) -> RecompiledFrame {
        let records: Vec<CompileRecord> = frame.records.iter().map(|&i| ctx.compiles.records.get(i as usize)).collect();
        let list: Vec<Numbered> = frame.records.iter().copied().zip(&records).collect();
        let named = list.iter().find_map(|(_, r)| ctx.compiles.metrics(r));
        let steps = list
            .iter()
            .enumerate()
            .map(|(i, &(_, r))| {
                let why = self.reasons_of(ctx, r);
                RecompileStep {
                    compile_id: r.display(),
                    status: r.status(),
                    reasons: why.reasons,
                    reasons_from: why.from,
                    reasons_logged_on: why.logged_on,
                    changes: (i > 0).then(|| self.changes(ctx.compiles, list[i - 1], list[i])),
                }
            })
            .collect();
        RecompiledFrame {
            frame_id: frame.frame_id,
            compiled_autograd_id: frame.compiled_autograd_id,
            co_name: named.as_ref().and_then(|m| m.co_name.as_deref()).map(str::to_string),
            location: named.as_ref().and_then(|m| Some(format!("{}:{}", m.co_filename.as_deref()?, m.co_firstlineno?))),
            compiles: steps,
        }
    }

    /// The reasons logged for a frame compile, in any of its attempts: its `recompile_reasons`
    /// artifact (every failed entry), else its metrics' `recompile_reason` (the first one only).
    /// Torch logs the artifact on the attempt that starts the frame compile and the metrics on
    /// its last attempt; restarted attempts share the reason.
    fn reasons_of(&self, ctx: &Finish, r: &CompileRecord) -> StepReasons {
        let mut logged = self.logged.borrow_mut();
        let mut artifact = StepReasons::default();
        let mut metrics = StepReasons::default();
        for o in ctx.compiles.attempt_records(&r.id()) {
            let Some(l) = logged.get(o) else { continue };
            let attempt = || Some(ctx.compiles.record(o).display());
            if !l.reasons.is_empty() {
                artifact.logged_on = artifact.logged_on.or_else(attempt);
                artifact.reasons.extend(l.reasons.iter().cloned());
            }
            if let Some(reason) = &l.metrics_reason {
                metrics = StepReasons { reasons: vec![reason.clone()], from: None, logged_on: attempt() };
            }
        }
        if !artifact.reasons.is_empty() {
            StepReasons { from: Some(RecompileReasonSource::RecompileReasons), ..artifact }
        } else if !metrics.reasons.is_empty() {
            StepReasons { from: Some(RecompileReasonSource::CompilationMetrics), ..metrics }
        } else {
            StepReasons::default()
        }
    }

    /// The guard ids of a compile record (none when it logged no guards).
    fn guard_ids(&self, record: u32) -> Vec<u32> {
        self.logged.borrow_mut().get(record).and_then(|l| l.guards.clone()).unwrap_or_default()
    }

    fn changes(&self, c: &Compiles, (before_record, before): Numbered, (after_record, after): Numbered) -> Changes {
        // Artifacts by name (the naming rule keeps content hashes out of names, so the same
        // artifact of two compiles has one name); repeated names are numbered in log order
        // (`name`, `name#2`, ...). An entry logged without a payload has no content to compare
        // (torch logs some only on a cache hit).
        let numbered = |r: &CompileRecord| -> Vec<(String, Option<String>)> {
            let mut seen: HashMap<&str, usize> = HashMap::default();
            c.artifacts(r)
                .iter()
                .filter(|a| !c.no_payload(a))
                .map(|a| {
                    let key = c.name(a);
                    let n = seen.entry(key).or_default();
                    *n += 1;
                    let name = if *n == 1 { key.to_string() } else { format!("{key}#{n}") };
                    let row = c.artifact_ref(a);
                    (name, row.blob.or(row.url))
                })
                .collect()
        };
        let old = numbered(before);
        let new = numbered(after);
        let old_map: HashMap<&str, &Option<String>> = old.iter().map(|(n, b)| (n.as_str(), b)).collect();
        let new_names: crate::fast_hash::HashSet<&str> = new.iter().map(|(n, _)| n.as_str()).collect();
        let (mut changed, mut added, mut unchanged) = (Vec::new(), Vec::new(), Vec::new());
        for (name, blob) in &new {
            match old_map.get(name.as_str()) {
                None => added.push(name.clone()),
                Some(prev) if *prev == blob => unchanged.push(name.clone()),
                Some(prev) => changed.push(ArtifactChange {
                    name: name.clone(),
                    before: (*prev).clone().unwrap_or_default(),
                    after: blob.clone().unwrap_or_default(),
                }),
            }
        }
        let removed = old.iter().filter(|(n, _)| !new_names.contains(n.as_str())).map(|(n, _)| n.clone()).collect();
        let g_old = self.guard_ids(before_record);
        let g_new = self.guard_ids(after_record);
        Changes {
            previous: before.display(),
            changed,
            added,
            removed,
            unchanged,
            guards_added: self.texts(multiset_minus(&g_new, &g_old)),
            guards_removed: self.texts(multiset_minus(&g_old, &g_new)),
        }
    }
}

/// The items of `a` not matched by an equal item of `b` (counting repeats), in `a`'s order.
fn multiset_minus<T: Eq + std::hash::Hash + Clone>(a: &[T], b: &[T]) -> Vec<T> {
    let mut left: HashMap<&T, usize> = HashMap::default();
    for s in b {
        *left.entry(s).or_default() += 1;
    }
    a.iter()
        .filter(|s| match left.get_mut(s) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_lines_lose_tree_drawing_and_source_comments() {
        assert_eq!(
            cpp_guard(
                "| | +- EQUALS_MATCH: L['k'] == 2                      # return (x * k + 1).sin()  # r.py:13 in f"
            ),
            Some("EQUALS_MATCH: L['k'] == 2")
        );
        assert_eq!(cpp_guard("+- RootGuardManager"), None);
        assert_eq!(cpp_guard("Guard latency = 53.81 us"), None);
    }

    #[test]
    fn multiset_difference_counts_repeats() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(multiset_minus(&s(&["a", "a", "b"]), &s(&["a"])), s(&["a", "b"]));
    }
}
