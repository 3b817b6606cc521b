//! The compile directory: one row per compile id with status, timing, reasons, cache outcomes
//! and artifacts.

use serde::{Serialize, Serializer};

use super::alignment;
use super::compiles::{ArtifactRefs, Metrics};
use super::stack_trie::user_frames;
use super::{CompileRecord, Compiles, Diagnostics, Event, Finish, Table, compiles};
use crate::schema::StackTable;
use crate::schema::tables::{CodeSource, CompileEntry, CompiledCode};

#[derive(Default)]
pub struct CompileDirectoryTable;

/// [`crate::schema::tables::CompileDirectory`], each row made from its compile record as it is
/// serialized (as a whole, the rows would copy every artifact of the stream).
#[derive(Serialize)]
pub struct CompileDirectoryView<'a> {
    compiles: Entries<'a>,
    unattributed: ArtifactRefs<'a>,
}

/// The rows of the compile directory, with each row's `align_key` (in record order).
struct Entries<'a>(&'a Finish<'a>, Vec<String>);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rows = self.0.compiles.records.iter().zip(&self.1);
        serializer.collect_seq(rows.map(|(r, key)| entry(self.0, r, key.clone())))
    }
}

/// Every compile's alignment key as a string, by the alignment's own keying (one algorithm for
/// cross-rank tables and run comparison); keyed from rows without their artifacts, which the
/// keying does not read.
fn align_keys(ctx: &Finish) -> Vec<String> {
    let rows: Vec<CompileEntry> = ctx.compiles.records.iter().map(|r| summary(ctx, r)).collect();
    let keys = alignment::stream_keys(&alignment::StreamCompiles { stream: "", compiles: &rows });
    keys.iter().map(alignment::key_string).collect()
}

/// The code a compile compiled: its metrics' `co_*` fields when all three were logged, else the
/// innermost user frame of its `dynamo_start` stack (whose line torch logs as the code's first
/// line: checked on torch 2.15, e.g. `rank_local_metric` at ranks_shifted.py:24 in both).
pub(crate) fn compiled_code(c: &Compiles, stacks: &StackTable, r: &CompileRecord) -> Option<CompiledCode> {
    if let Some(m) = r.metrics.as_deref()
        && let (Some(filename), Some(line), Some(name)) = (&m.co_filename, m.co_firstlineno, &m.co_name)
    {
        let (filename, name) = (filename.to_string(), name.to_string());
        return Some(CompiledCode { filename, line, name, from: CodeSource::Metrics });
    }
    let frames = user_frames(stacks, c.start_stack(&r.id)?);
    let frame = stacks.frames.get(*frames.last()? as usize)?;
    Some(CompiledCode {
        filename: frame.file.clone()?,
        line: frame.line,
        name: frame.name.clone(),
        from: CodeSource::DynamoStart,
    })
}

fn entry(ctx: &Finish, r: &CompileRecord, align_key: String) -> CompileEntry {
    let artifacts = ctx.compiles.artifact_refs(&r.artifacts());
    CompileEntry { artifacts, align_key: Some(align_key), ..summary(ctx, r) }
}

/// A row without its artifacts nor its alignment key.
fn summary(ctx: &Finish, r: &CompileRecord) -> CompileEntry {
    let c = ctx.compiles;
    let m = r.metrics.as_deref();
    // The compile's time in the parts `compile_time` reports, in seconds.
    let parts = ctx.clock.parts(c, Some(&r.id));
    let s = |us: Option<f64>| us.map(|us| us / 1e6);
    let text = |field: fn(&Metrics) -> &Option<Box<str>>| m.and_then(|m| field(m).as_deref()).map(str::to_string);
    CompileEntry {
        compile_id: r.display.clone(),
        cid: r.id,
        dir: compiles::dir_name(&r.id),
        status: r.status(),
        restarted_as: r.next_attempt.map(|n| c.records[n].display.clone()),
        graph_compiles: r.graph_compiles.iter().map(|&n| c.records[n].display.clone()).collect(),
        co_name: text(|m| &m.co_name),
        co_filename: text(|m| &m.co_filename),
        co_firstlineno: m.and_then(|m| m.co_firstlineno),
        code: compiled_code(c, ctx.stacks, r),
        stack: r.start_stack,
        first_seq: r.first_seq,
        last_seq: r.last_seq,
        start_ts: r.start_ts.clone(),
        end_ts: r.end_ts.clone(),
        start_time: m.and_then(|m| m.start_time),
        // As logged when it is, not through µs and back.
        duration_s: m.and_then(|m| m.entire_frame_compile_time_s).or(s(parts.forward_us)),
        backward_s: s(parts.backward_us),
        total_s: s(parts.total_us()),
        other_s: s(parts.other_us),
        fail_type: text(|m| &m.fail_type),
        fail_reason: text(|m| &m.fail_reason),
        restart_reasons: r.restart_reasons().to_vec(),
        graph_breaks: r.graph_breaks.clone(),
        cache: r.cache.clone(),
        artifacts: Vec::new(),
        align_key: None,
    }
}

impl Table for CompileDirectoryTable {
    type Format = crate::schema::tables::CompileDirectory;
    type Output<'a> = CompileDirectoryView<'a>;

    fn observe(&mut self, _ev: &Event, _diags: &mut Diagnostics) {}

    fn finish<'a>(self, ctx: &'a Finish) -> Option<(CompileDirectoryView<'a>, u64)> {
        let c = ctx.compiles;
        if c.records.is_empty() && c.unattributed.is_empty() {
            return None;
        }
        let rows = c.records.len() as u64;
        Some((
            CompileDirectoryView {
                compiles: Entries(ctx, align_keys(ctx)),
                unattributed: ArtifactRefs(c, &c.unattributed),
            },
            rows,
        ))
    }
}
