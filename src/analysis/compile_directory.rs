//! The compile directory: one row per compile id with status, timing, reasons, cache outcomes
//! and artifacts.

use serde::{Serialize, Serializer};

use super::compiles::{ArtifactRefs, Metrics};
use super::{CompileRecord, Compiles, Diagnostics, Event, Finish, Table, compiles};
use crate::schema::tables::CompileEntry;

#[derive(Default)]
pub struct CompileDirectoryTable;

/// [`crate::schema::tables::CompileDirectory`], each row made from its compile record as it is
/// serialized (as a whole, the rows would copy every artifact of the stream).
#[derive(Serialize)]
pub struct CompileDirectoryView<'a> {
    compiles: Entries<'a>,
    unattributed: ArtifactRefs<'a>,
}

/// The rows of the compile directory.
struct Entries<'a>(&'a Compiles);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.records.iter().map(|r| entry(self.0, r)))
    }
}

fn entry(c: &Compiles, r: &CompileRecord) -> CompileEntry {
    let m = r.metrics.as_deref();
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
        stack: r.start_stack,
        first_seq: r.first_seq,
        last_seq: r.last_seq,
        start_ts: r.start_ts.clone(),
        end_ts: r.end_ts.clone(),
        start_time: m.and_then(|m| m.start_time),
        duration_s: m.and_then(|m| m.entire_frame_compile_time_s),
        fail_type: text(|m| &m.fail_type),
        fail_reason: text(|m| &m.fail_reason),
        restart_reasons: r.restart_reasons().to_vec(),
        graph_breaks: r.graph_breaks.clone(),
        cache: r.cache.clone(),
        artifacts: c.artifact_refs(&r.artifacts),
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
        Some((CompileDirectoryView { compiles: Entries(c), unattributed: ArtifactRefs(c, &c.unattributed) }, rows))
    }
}
