//! `runtime_estimations`: inductor's estimated runtime of each graph, compared across streams.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AlignedCompileRef, StreamGroup};

/// `tables/cross_rank/runtime_estimations.json.zst`: inductor's estimated runtime of every graph
/// (the sum of its ops' `estimated_runtime_ns`, from each stream's `runtime_estimates` table),
/// aligned by compile (by the code compiled: `compile_alignment`; never by compile id or graph
/// order) and occurrence, with the fastest and slowest
/// streams and the spread per graph. A rank whose graphs are estimated slower than the others'
/// makes the others wait at every collective. `rows` counts `graphs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RuntimeEstimations {
    /// Two totals `a` and `b` count as equal when `|a − b| ≤ relative_tolerance × max(|a|, |b|)`
    /// (1e-9: a nanosecond per second). Floating-point noise and digits lost in a log stay
    /// under it; any real change of an estimate is far above it.
    pub relative_tolerance: f64,
    /// True when some graph's totals differ (beyond the tolerance) between the streams that have
    /// it. A graph missing on a stream does not count.
    pub differs: bool,
    /// The compiles (their `compile_alignment` labels; null for graphs logged outside any
    /// compile) of the graphs whose totals differ, in `graphs` order.
    pub differing_compiles: Vec<Option<String>>,
    /// Groups of streams with the same graphs and equal totals on each (within the tolerance of
    /// the group's first stream), the group of the first stream first. Streams in `no_data`
    /// belong to no group.
    pub groups: Vec<StreamGroup>,
    /// Each stream with runtime estimates: how many graphs and their summed estimate, in
    /// `members` order.
    pub streams: Vec<StreamRuntime>,
    /// Streams without any runtime estimate (no `runtime_estimates` table), in `members` order.
    pub no_data: Vec<String>,
    /// One row per (compile, occurrence) estimated on any stream, in `compile_alignment` order
    /// (graphs logged outside any compile last).
    pub graphs: Vec<GraphRuntimes>,
}

/// One stream's estimates, all graphs together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamRuntime {
    /// The stream id.
    pub stream: String,
    /// Number of graphs with an estimate.
    pub graphs: u64,
    /// Sum of the graphs' estimated totals, in nanoseconds. Comparable between streams only
    /// when they have the same graphs (see `groups` and `graphs[].missing`).
    pub total_estimated_runtime_ns: f64,
}

/// One graph's estimated total on every stream that has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphRuntimes {
    /// The compile, with each stream's compile id for it; null for a graph logged outside any
    /// compile.
    pub compile: Option<AlignedCompileRef>,
    /// Which of the compile's estimates this is, per stream (0 for the first; a compile with
    /// forward and backward graphs has 0 and 1).
    pub occurrence: u32,
    /// The graph's total on each stream that has it, in `members` order.
    pub totals: Vec<StreamGraphRuntime>,
    /// Streams without an estimate for this graph, in `members` order ("missing", never
    /// "different").
    pub missing: Vec<String>,
    /// The streams of `missing` that did make this compile but logged no estimate for it.
    pub compiled_without_estimate: Vec<String>,
    /// The smallest total, in nanoseconds.
    pub fastest_ns: f64,
    /// The streams whose total equals the smallest (within the tolerance), in `members` order.
    pub fastest: Vec<String>,
    /// The largest total, in nanoseconds.
    pub slowest_ns: f64,
    /// The streams whose total equals the largest (within the tolerance), in `members` order.
    pub slowest: Vec<String>,
    /// `slowest_ns − fastest_ns`, exactly (it can be a tiny non-zero number while `differs` is
    /// false), in nanoseconds.
    pub delta_ns: f64,
    /// `delta_ns` as a percentage of `fastest_ns`; null when `fastest_ns` is 0.
    pub delta_percent: Option<f64>,
    /// True when the largest and smallest totals differ beyond the tolerance.
    pub differs: bool,
}

/// One graph's estimate on one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamGraphRuntime {
    /// The stream id.
    pub stream: String,
    /// Sum of the graph's ops' `estimated_runtime_ns` there (its `runtime_estimates` row).
    pub total_estimated_runtime_ns: f64,
    /// Number of ops.
    pub op_count: u64,
}
