//! The Chrome trace of inductor's runtime estimates (`tables/cross_rank/runtime_estimates_trace.json.gz`):
//! one process per member, one thread per graph, each graph's ops laid end to end from time 0 with
//! their estimated durations, so the ranks' estimates can be compared side by side in Perfetto.
//! Pure: this builds the events; the bundle writer compresses them into the file, one member at a
//! time.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::runtime_estimations::{AlignedGraphs, GraphKey};
use super::{Alignment, StreamTables};
use crate::schema::tables::RuntimeEstimates;

/// Category of the op events.
const CATEGORY: &str = "runtime_estimate";

/// The trace's threads: every graph any stream has gets one thread id, the same in every process
/// (so a compile, aligned by code, sits on the same row in each rank), numbered from 1 in
/// `compile_alignment` order.
pub struct RuntimeEstimatesTrace {
    aligned: AlignedGraphs,
    thread_ids: BTreeMap<GraphKey, u32>,
}

impl RuntimeEstimatesTrace {
    /// `None` when no stream has runtime estimates.
    pub fn new(streams: &[StreamTables], alignment: &Alignment) -> Option<RuntimeEstimatesTrace> {
        let aligned = AlignedGraphs::of(streams, alignment)?;
        let thread_ids = aligned.graphs.keys().zip(1..).map(|(k, tid)| (k.clone(), tid)).collect();
        Some(RuntimeEstimatesTrace { aligned, thread_ids })
    }

    /// The events of member `i` (`streams[i]`, the process `pid = i`): process and thread
    /// metadata, then each graph's ops as complete (`X`) events, `ts` and `dur` in microseconds
    /// (`estimated_runtime_ns / 1000`, fractional, never rounded up). A stream without estimates
    /// gets only its process metadata, so every member has its process.
    pub fn member_events(&self, i: usize, stream: &StreamTables) -> Vec<Value> {
        let mut events = vec![
            json!({"name": "process_name", "ph": "M", "pid": i, "tid": 0, "args": {"name": stream.member.label}}),
            json!({"name": "process_sort_index", "ph": "M", "pid": i, "tid": 0, "args": {"sort_index": i}}),
        ];
        // The ops, read now for this stream alone (none without a table). A table that does not
        // read back whole is left out here and named by `StreamTables::damaged`, which fails the
        // bundle.
        let Some(table) = stream.table::<RuntimeEstimates>() else { return events };
        for (g, key) in table.graphs.iter().zip(&self.aligned.keys[i]) {
            // Every graph of a compile the stream's compile directory lists has a key.
            let Some(tid) = key.as_ref().map(|k| self.thread_ids[k]) else { continue };
            let id = g.compile_id.as_deref().unwrap_or("(no compile id)");
            let thread = if g.occurrence == 0 { id.to_string() } else { format!("{id} #{}", g.occurrence) };
            events.push(json!({"name": "thread_name", "ph": "M", "pid": i, "tid": tid, "args": {"name": thread}}));
            events.push(
                json!({"name": "thread_sort_index", "ph": "M", "pid": i, "tid": tid, "args": {"sort_index": tid}}),
            );
            // Start times from the running sum in ns, so rounding does not accumulate.
            let mut start_ns = 0.0;
            for (n, op) in g.ops.iter().enumerate() {
                events.push(json!({
                    "name": op.name,
                    "cat": CATEGORY,
                    "ph": "X",
                    "pid": i,
                    "tid": tid,
                    "ts": start_ns / 1000.0,
                    "dur": op.estimated_runtime_ns / 1000.0,
                    "args": {
                        "compile_id": g.compile_id,
                        "op_index": n,
                        "type": op.op_type,
                        "estimated_runtime_ns": op.estimated_runtime_ns,
                    },
                }));
                start_ns += op.estimated_runtime_ns;
            }
        }
        events
    }
}
