//! `graph_breaks`: graph breaks deduplicated by reason and user-code location.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/graph_breaks.json.zst`: every graph break grouped by (reason, user-code
/// location), most frequent first (tlparse #118). `rows` counts `breaks` (the groups).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphBreaks {
    /// Groups, by `count` descending, then first appearance.
    pub breaks: Vec<GraphBreakGroup>,
    /// Total number of graph breaks (the sum of `count`).
    pub total: u64,
}

/// One (reason, location) group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphBreakGroup {
    /// The short reason, e.g. `Failed to trace builtin operator`.
    pub reason: String,
    /// The user-code location `file:line` the break happened at; null when the log does not say.
    pub location: Option<String>,
    /// The `Explanation:` of the break, when logged.
    pub explanation: Option<String>,
    /// The graph-break site page for this kind of break (`https://.../gb/gbNNNN.html`), when logged.
    pub url: Option<String>,
    /// Where the break was read from: `dynamo_graph_break_reason` (the artifact, torch ≥ 2.6) or
    /// `restart_reasons` (the compile's metrics, in older logs without the artifact).
    pub source: String,
    /// How many times it happened.
    pub count: u64,
    /// The compile ids it happened in, in log order (one per occurrence).
    pub compile_ids: Vec<String>,
    /// Blob id of the first occurrence's full text (reason, hints, user traceback), when it came
    /// from an artifact.
    pub example_blob: Option<String>,
}
