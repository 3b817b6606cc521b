//! `graph_execution`: the order in which compiled graphs ran, from inductor's execution-order
//! recordings, and the legacy per-run `inductor_graph_execution` entries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/graph_execution.json.zst`: every recorded run of a compiled graph. `rows`
/// counts executions: the items of every recording's `order` plus the `legacy` rows.
///
/// Current torch logs a `graph_execution` artifact when a
/// `torch._inductor.debug.record_and_log_graph_execution_order()` block exits: the compile id of
/// every compiled graph called inside it, in call order. Older torch logged one
/// `inductor_graph_execution` artifact per call, naming the graph `graph_N`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphExecution {
    /// One row per usable `graph_execution` artifact, in log order.
    pub recordings: Vec<ExecutionRecording>,
    /// One row per usable legacy `inductor_graph_execution` artifact (one per call), in log order.
    pub legacy: Vec<LegacyExecution>,
    /// Set when `legacy` is not empty: why its graph names cannot be compared with compile ids.
    pub legacy_note: Option<String>,
}

/// One `graph_execution` artifact: a recorded sequence of calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExecutionRecording {
    /// `seq` of the artifact's entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// Blob id of the payload.
    pub blob: String,
    /// Id, in the stream's stack table, of the entry's envelope `stack` (where the recording
    /// block exited), when logged.
    pub stack: Option<u32>,
    /// The calls in the order they ran; none is dropped, so positions match the log's.
    pub order: Vec<GraphRun>,
}

/// One call of a compiled graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphRun {
    /// The compile id of the graph as displayed (`[0/1]`, as `compile_directory` shows it); null
    /// when torch had none (logged as null or as the string `None`) or the item is not a compile
    /// id.
    pub compile_id: Option<String>,
    /// What was logged: the compile id string without brackets (`0/1`, `None`), or the compact
    /// JSON of an item of another shape; null when logged as null.
    pub logged: Option<String>,
}

/// One legacy `inductor_graph_execution` artifact: one call of the graph it names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LegacyExecution {
    /// `seq` of the artifact's entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// Id, in the stream's stack table, of the entry's envelope `stack` (the call site), when
    /// logged.
    pub stack: Option<u32>,
    /// The payload's `graph`: inductor's name for the graph in this process (`graph_0`), not a
    /// compile id.
    pub graph: String,
}
