//! The compile summary: compile count, compile time and the slowest compiles of a stream, from
//! the compile records and the `CompileClock` (the same numbers `compile_directory` gives each
//! compile), small enough for an overview's first paint.

use super::{CompileRecord, Event, Finish, Observe, Table, compile_directory, compiles};
use crate::schema::tables::{CompileSummary, SlowCompile};

/// How many of the slowest compiles are listed.
const SLOWEST: usize = 10;

#[derive(Default)]
pub struct CompileSummaryTable;

impl Table for CompileSummaryTable {
    type Format = CompileSummary;
    type Output<'a> = CompileSummary;

    fn observe(&mut self, _ev: &Event, _cx: &mut Observe) {}

    fn finish(self, ctx: &Finish) -> Option<(CompileSummary, u64)> {
        let records = &ctx.compiles.records;
        if records.is_empty() {
            return None;
        }
        let (mut total, mut forward, mut backward) = (0.0, 0.0, 0.0);
        let mut backward_in_forward: Option<f64> = None;
        let mut timed: Vec<(f64, &CompileRecord)> = Vec::new();
        for r in records {
            let parts = ctx.clock.parts(ctx.compiles, Some(&r.id()));
            forward += parts.forward_us.unwrap_or(0.0);
            backward += parts.backward_us.unwrap_or(0.0);
            if let Some(us) = parts.backward_in_forward_us {
                *backward_in_forward.get_or_insert(0.0) += us;
            }
            let us = parts.total_us().unwrap_or(0.0);
            total += us;
            if us > 0.0 {
                timed.push((us, r));
            }
        }
        let count = timed.len() as u64;
        // A stable sort: ties keep the directory's order.
        timed.sort_by(|a, b| b.0.total_cmp(&a.0));
        let slowest: Vec<SlowCompile> = timed.iter().take(SLOWEST).map(|&(_, r)| slow(ctx, r)).collect();
        let rows = slowest.len() as u64;
        let summary = CompileSummary {
            compiles: records.len() as u64,
            by_status: compiles::count_by_status(records),
            total_s: total / 1e6,
            forward_s: forward / 1e6,
            backward_s: backward / 1e6,
            backward_in_forward_s: backward_in_forward.map(|us| us / 1e6),
            timed: count,
            slowest_compiles: slowest,
        };
        Some((summary, rows))
    }
}

/// A slow compile's row, with the times and code its `compile_directory` row gives.
fn slow(ctx: &Finish, r: &CompileRecord) -> SlowCompile {
    let parts = ctx.clock.parts(ctx.compiles, Some(&r.id()));
    let code = compile_directory::compiled_code(ctx.compiles, ctx.stacks, r);
    SlowCompile {
        compile_id: r.display(),
        status: r.status(),
        total_s: parts.total_us().unwrap_or(0.0) / 1e6,
        forward_s: parts.forward_us.map(|us| us / 1e6),
        backward_s: parts.backward_us.map(|us| us / 1e6),
        backward_in_forward_s: parts.backward_in_forward_us.map(|us| us / 1e6),
        function: code.as_ref().map(|c| c.name.clone()),
        location: code.map(|c| format!("{}:{}", c.filename, c.line)),
    }
}
