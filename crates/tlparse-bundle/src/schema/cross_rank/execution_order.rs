//! `execution_order`: whether the streams (ranks) ran their compiled graphs in the same order.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/cross_rank/execution_order.json.zst`: the order in which each stream ran its compiled
/// graphs, streams grouped by identical orders, and where the others differ from the most common
/// order. Ranks that run graphs in different orders issue their collectives in different orders
/// and hang. Built from each stream's `graph_execution` table; written when at least one stream
/// has one. `rows` counts the streams with an order (`streams` entries with a group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExecutionOrder {
    /// True when the streams with `graph_execution` recordings did not all run the same
    /// compiles in the same order (`recorded` has more than one group).
    pub diverges: bool,
    /// The orders of the streams with `graph_execution` recordings (compile ids); null when no
    /// stream has one.
    pub recorded: Option<OrderComparison>,
    /// The orders of the streams with legacy `inductor_graph_execution` entries (graph names
    /// such as `graph_0`, which the log does not map to compile ids); null when no stream has
    /// any. Never compared with `recorded`.
    pub legacy: Option<OrderComparison>,
    /// Set when `legacy` is set: why its graph names are not comparable with compile ids.
    pub legacy_note: Option<String>,
    /// One row per stream, in `members` order: which group it is in.
    pub streams: Vec<StreamOrder>,
}

/// Streams grouped by identical execution orders, and how each group differs from the reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OrderComparison {
    /// True when there is more than one group.
    pub diverges: bool,
    /// Index in `groups` of the reference the others are compared with: the group with the most
    /// streams (the first one on ties).
    pub reference: u64,
    /// Streams with identical orders, the group of the first stream first.
    pub groups: Vec<OrderGroup>,
}

/// Streams that ran their graphs in the same order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OrderGroup {
    /// The streams, in `members` order.
    pub streams: Vec<String>,
    /// Their order: one list per recording, in log order (for `recorded`: one per
    /// `graph_execution` artifact, i.e. per recording block; for `legacy`: a single list of
    /// every `inductor_graph_execution` entry). Each item is one graph run: for `recorded` the
    /// label of the compile it ran in `compile_alignment` (`forward (model.py:20)`: ranks whose
    /// frame ids are shifted ran the same graphs under other compile ids), or the compile id as
    /// logged when the stream's `compile_directory` lacks it, null when torch logged none (null or
    /// `None`, equal to each other here); for `legacy` the graph name (`graph_0`).
    pub recordings: Vec<Vec<Option<String>>>,
    /// Number of graph runs, over all recordings.
    pub runs: u64,
    /// How this group's order differs from the reference group's; null for the reference.
    pub difference: Option<OrderDifference>,
}

/// Where a group's order differs from the reference's, position by position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OrderDifference {
    /// True when both ran the same graphs the same number of times (over all recordings), so
    /// only the order differs.
    pub same_runs: bool,
    /// The recordings that differ (a recording only one side has counts as empty on the other).
    pub recordings: Vec<RecordingDifference>,
}

/// One recording that differs from the reference's recording at the same index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RecordingDifference {
    /// Index of the recording, 0-based.
    pub recording: u64,
    /// The first position (0-based) where the two differ.
    pub first_position: u64,
    /// Every position (0-based) where the two differ, in order; positions past the end of the
    /// shorter recording count as differing.
    pub positions: Vec<u64>,
    /// Number of runs in this group's recording.
    pub length: u64,
    /// Number of runs in the reference's recording.
    pub reference_length: u64,
}

/// One stream's place in the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamOrder {
    /// The stream id.
    pub stream: String,
    /// Index of its group in `recorded.groups`; null when it has no `graph_execution` recording.
    pub recorded_group: Option<u64>,
    /// Index of its group in `legacy.groups`; null when it has no legacy entry.
    pub legacy_group: Option<u64>,
    /// Runs whose compile id torch did not log (null in its order).
    pub unknown_compile_ids: u64,
}
