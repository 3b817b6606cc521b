//! `compilation_metrics`: every metrics entry, including the kinds tlparse ignores.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/compilation_metrics.json.zst`: the metrics entries of the stream:
/// `compilation_metrics`, `bwd_compilation_metrics`, `aot_autograd_backward_compilation_metrics`
/// and the `*_runtime` variants torch logs for runtime (e.g. autotuning) work. `rows` counts
/// `metrics`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompilationMetrics {
    /// Metrics entries in log order.
    pub metrics: Vec<MetricsRow>,
    /// Distinct large field values (over 1 KiB of JSON, such as `dynamo_config`), stored once:
    /// in `metrics`, such a field holds `{"shared": i}`, meaning `shared[i]`.
    pub shared: Vec<serde_json::Value>,
}

/// One metrics entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct MetricsRow {
    /// The compile id as displayed; null for entries logged outside a compile.
    pub compile_id: Option<String>,
    /// The entry's kind, e.g. `compilation_metrics` or `bwd_compilation_metrics_runtime`.
    pub kind: String,
    /// True for the `*_runtime` kinds.
    pub runtime: bool,
    /// `seq` of the entry.
    pub seq: u64,
    /// Line of the entry in its input file.
    pub line: u64,
    /// The compile's phase times in seconds, from the fields torch logs (`entire_frame_compile_time_s`,
    /// `backend_compile_time_s`, `inductor_compile_time_s`, `code_gen_time_s`,
    /// `dynamo_time_before_restart_s`, `elapsed_time`, ...): every field ending in `_time_s` or
    /// named `elapsed_time` whose value is a number.
    pub times_s: std::collections::BTreeMap<String, f64>,
    /// The metrics object as logged (fields vary with the torch version), except that a field
    /// whose value is over 1 KiB of JSON holds `{"shared": i}`, an index into the table's
    /// `shared` list.
    pub metrics: serde_json::Value,
}
