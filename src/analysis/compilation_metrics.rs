//! Compilation metrics: every `*compilation_metrics*` entry, with its phase times pulled out.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Diagnostics, Event, Finish, Table};
use crate::schema::tables::{CompilationMetrics, MetricsRow};

/// The metrics kinds torch logs (the `_runtime` ones for work done at run time).
pub const METRICS_KINDS: [&str; 5] = [
    "compilation_metrics",
    "bwd_compilation_metrics",
    "aot_autograd_backward_compilation_metrics",
    "compilation_metrics_runtime",
    "bwd_compilation_metrics_runtime",
];

#[derive(Default)]
pub struct CompilationMetricsTable {
    rows: Vec<MetricsRow>,
}

impl Table for CompilationMetricsTable {
    const NAME: &'static str = "compilation_metrics";
    type Output = CompilationMetrics;

    fn observe(&mut self, ev: &Event, diags: &mut Diagnostics) {
        if !METRICS_KINDS.contains(&ev.kind) {
            return;
        }
        let meta = ev.meta();
        let Some(fields) = meta.as_object() else {
            diags.unusable(Self::NAME, ev, "metadata is not an object");
            return;
        };
        let times_s: BTreeMap<String, f64> = fields
            .iter()
            .filter(|(k, _)| k.ends_with("_time_s") || *k == "elapsed_time")
            .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
            .collect();
        self.rows.push(MetricsRow {
            compile_id: ev.display_id.map(str::to_string),
            kind: ev.kind.to_string(),
            runtime: ev.kind.ends_with("_runtime"),
            seq: ev.seq,
            line: ev.line,
            times_s,
            metrics: Value::Object(fields.clone()),
        });
    }

    fn finish(self, _ctx: &Finish) -> Option<(CompilationMetrics, u64)> {
        let rows = self.rows.len() as u64;
        (rows > 0).then_some((CompilationMetrics { metrics: self.rows }, rows))
    }
}
