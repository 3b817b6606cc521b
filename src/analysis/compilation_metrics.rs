//! Compilation metrics: every `*compilation_metrics*` entry, with its phase times pulled out.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::packed_rows::PackedRows;
use super::{Diagnostics, Event, Finish, Table};
use crate::parse::json_text::usable_number;
use crate::schema::tables::MetricsRow;

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
    /// The rows, packed: a parsed metrics object takes several times the memory of its text, and
    /// a long log has thousands.
    rows: PackedRows,
    /// Distinct large values, and where each is in `shared`.
    shared: Vec<Value>,
    shared_index: crate::fast_hash::HashMap<String, usize>,
}

/// Whether a metrics field's name says it holds a time, a size or a count (`start_time`,
/// `*_time_s`, `*_us`, `*_count`, `param_bytes`...): what its number must be usable as. Other
/// numbers (versions, ids) are the log's business.
fn names_a_measure(key: &str) -> bool {
    const SUFFIXES: [&str; 9] = ["_time", "_s", "_ms", "_us", "_ns", "_count", "_size", "_bytes", "_numel"];
    SUFFIXES.iter().any(|s| key.ends_with(s))
}

/// Values over this many bytes of JSON are stored once per table (torch repeats its whole
/// `dynamo_config` in every compile's metrics).
const SHARED_OVER: usize = 1024;

impl CompilationMetricsTable {
    /// A field's value, or `{"shared": i}` for a large one.
    fn share(&mut self, value: &Value) -> Value {
        // Serialized once: to measure a container and, when big, as its key.
        let key = match value {
            Value::String(s) if s.len() > SHARED_OVER => value.to_string(),
            Value::Array(_) | Value::Object(_) => match value.to_string() {
                json if json.len() > SHARED_OVER => json,
                _ => return value.clone(),
            },
            _ => return value.clone(),
        };
        let i = *self.shared_index.entry(key).or_insert_with(|| {
            self.shared.push(value.clone());
            self.shared.len() - 1
        });
        serde_json::json!({ "shared": i })
    }
}

/// [`crate::schema::tables::CompilationMetrics`], serialized from the packed rows.
#[derive(Serialize)]
pub struct PackedCompilationMetrics {
    metrics: PackedRows,
    shared: Vec<Value>,
}

impl Table for CompilationMetricsTable {
    type Format = crate::schema::tables::CompilationMetrics;
    type Output<'a> = PackedCompilationMetrics;

    fn observe(&mut self, ev: &Event, diags: &mut Diagnostics) {
        if !METRICS_KINDS.contains(&ev.kind) {
            return;
        }
        let meta = ev.meta();
        let Some(fields) = meta.as_object() else {
            diags.unusable(Self::NAME, ev, "metadata is not an object");
            return;
        };
        // The row keeps every field as logged; a time, size or count that cannot be one is
        // reported here, and left out of `times_s` (the cross-rank tables skip it too).
        for (key, value) in fields.iter().filter(|(k, _)| names_a_measure(k)) {
            diags.json_number(ev, key, Some(value));
        }
        let times_s: BTreeMap<String, f64> = fields
            .iter()
            .filter(|(k, _)| k.ends_with("_time_s") || *k == "elapsed_time")
            .filter_map(|(k, v)| Some((k.clone(), v.as_f64().and_then(usable_number)?)))
            .collect();
        let metrics: serde_json::Map<String, Value> = fields.iter().map(|(k, v)| (k.clone(), self.share(v))).collect();
        let row = MetricsRow {
            compile_id: ev.display_id.map(str::to_string),
            kind: ev.kind.to_string(),
            runtime: ev.kind.ends_with("_runtime"),
            seq: ev.seq,
            line: ev.line,
            times_s,
            metrics: Value::Object(metrics),
        };
        self.rows.push(&row);
    }

    fn finish(self, _ctx: &Finish) -> Option<(PackedCompilationMetrics, u64)> {
        let rows = self.rows.len() as u64;
        (rows > 0).then_some((PackedCompilationMetrics { metrics: self.rows, shared: self.shared }, rows))
    }
}
