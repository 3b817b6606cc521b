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
        let (mut count, mut slowest) = (0, Vec::with_capacity(SLOWEST + 1));
        for (index, r) in records.iter().enumerate() {
            let parts = ctx.clock.parts(ctx.compiles, Some(&r.id()));
            forward += parts.forward_us.unwrap_or(0.0);
            backward += parts.backward_us.unwrap_or(0.0);
            if let Some(us) = parts.backward_in_forward_us {
                *backward_in_forward.get_or_insert(0.0) += us;
            }
            let us = parts.total_us().unwrap_or(0.0);
            total += us;
            if us > 0.0 {
                count += 1;
                keep_slowest(&mut slowest, (us, index));
            }
        }
        let slowest: Vec<SlowCompile> = slowest.iter().map(|&(_, r)| slow(ctx, &records.get(r))).collect();
        let rows = slowest.len() as u64;
        let summary = CompileSummary {
            compiles: records.len() as u64,
            by_status: compiles::count_by_status(records.iter()),
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

/// Adds a timed compile to the [`SLOWEST`] compiles so far, slowest first; of equal times the
/// earlier in the directory comes first.
fn keep_slowest(slowest: &mut Vec<(f64, usize)>, timed: (f64, usize)) {
    let at = slowest.partition_point(|kept| kept.0.total_cmp(&timed.0).is_ge());
    if at < SLOWEST {
        slowest.insert(at, timed);
        slowest.truncate(SLOWEST);
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The slowest kept one at a time are the first of all the timed compiles sorted by time,
        /// slowest first, ties in directory order (a stable sort).
        #[test]
        fn the_slowest_kept_are_the_first_of_a_stable_sort(times in proptest::collection::vec(1u8..6, 0..40)) {
            let timed: Vec<(f64, usize)> = times.iter().enumerate().map(|(i, &t)| (f64::from(t), i)).collect();
            let mut kept = Vec::new();
            for &t in &timed {
                keep_slowest(&mut kept, t);
            }
            let mut sorted = timed.clone();
            sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
            sorted.truncate(SLOWEST);
            prop_assert_eq!(kept, sorted);
        }
    }
}
