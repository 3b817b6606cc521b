//! `graph_breaks`: graph breaks deduplicated by reason and user-code location.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/graph_breaks.json.zst`: every graph break (a `dynamo_graph_break_reason`
/// entry; restarts are counted apart, in `failures`) grouped by (reason, user-code
/// location, raised_at), most frequent first (tlparse #118). `rows` counts `breaks` (the
/// groups).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphBreaks {
    /// Groups, by `count` descending, then first appearance.
    pub breaks: Vec<GraphBreakGroup>,
    /// Total number of graph breaks (the sum of `count`): the stream's `dynamo_graph_break_reason`
    /// entries.
    pub total: u64,
}

/// One (reason, location, raised_at) group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphBreakGroup {
    /// The short reason, e.g. `Failed to trace builtin operator`.
    pub reason: String,
    /// `file:line` of the user's code the break happened in: the innermost frame of the logged
    /// "User code traceback" that is user code (see [`BreakFrame::user`]); when no frame is, or
    /// there is no traceback, the logged `Graph break in user code at file:line`. Null when the
    /// log says neither.
    pub location: Option<String>,
    /// Where torch raised the break, `file:line` (the logged `Graph break in user code at`, the
    /// innermost frame of the traceback), when it is not `location`: a break inside torch code
    /// (`.../torch/optim/optimizer.py:78`) called from the user's line `location`.
    pub raised_at: Option<String>,
    /// The first occurrence's "User code traceback", outermost call first; empty when not logged.
    pub traceback: Vec<BreakFrame>,
    /// The `Explanation:` of the break, when logged.
    pub explanation: Option<String>,
    /// The graph-break site page for this kind of break (`https://.../gb/gbNNNN.html`), when logged.
    pub url: Option<String>,
    /// Where the break was read from: `dynamo_graph_break_reason` (the artifact, torch ≥ 2.6).
    /// Bundles built before graph breaks were defined as these entries alone may say
    /// `restart_reasons` (a restart reason read as a break, in logs without the artifact).
    pub source: String,
    /// How many times it happened.
    pub count: u64,
    /// The compile ids it happened in, in log order (one per occurrence).
    pub compile_ids: Vec<String>,
    /// Blob id of the first occurrence's full text (reason, hints, user traceback), when it came
    /// from an artifact.
    pub example_blob: Option<String>,
}

/// One frame of a graph break's "User code traceback"
/// (`  File "/home/user/train.py", line 45, in train_step`, then the code line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BreakFrame {
    /// The file, as logged.
    pub file: String,
    /// The line, 1-based.
    pub line: u64,
    /// The function.
    pub name: String,
    /// The source line, trimmed, when logged.
    pub code: Option<String>,
    /// Whether the file is user code: not in a `site-packages` or `dist-packages` directory, not
    /// under a directory named `torch` (a PyTorch source checkout), not in the Python standard
    /// library (a `lib/pythonX.Y` or `lib64/pythonX.Y` directory, or `PythonXY/Lib` on Windows),
    /// and not Python's frozen modules (`<frozen ...>`) nor FX-generated code (`<eval_with_key>`).
    pub user: bool,
}
