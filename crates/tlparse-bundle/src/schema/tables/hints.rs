//! `hints`: torch's own `Hint:` lines, one row per distinct hint, with the graph breaks, restarts
//! and failures whose messages carried it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/hints.json.zst`: every distinct `Hint:` line torch wrote in a graph break
/// (`dynamo_graph_break_reason` payload), a restart reason (`restart_reasons` item) or a failure's
/// `fail_reason` (torch 2.7 and later write them), quoted as logged: the advice is torch's, none is
/// added. Absent when no such message carries a hint. `rows` counts `hints`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Hints {
    /// One row per distinct hint text, by occurrences (`graph_breaks + restarts + failures`)
    /// descending, then by `hint`.
    pub hints: Vec<Hint>,
}

/// One distinct hint and the messages that carried it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Hint {
    /// The hint, as torch wrote it after `Hint: ` on its line, trimmed.
    pub hint: String,
    /// What the hint asks for, by a rule on its text alone.
    pub kind: HintKind,
    /// Graph breaks (`dynamo_graph_break_reason` entries, as `graph_breaks` counts them) whose
    /// text carries the hint.
    pub graph_breaks: u64,
    /// Restarts (`restart_reasons` items, as `failures.restarts` counts them) whose text carries
    /// the hint.
    pub restarts: u64,
    /// Failures (metrics with a `fail_type`, as `failures.failed` counts them) whose `fail_reason`
    /// carries the hint.
    pub failures: u64,
    /// The short reasons of those messages (as `graph_breaks` reads a reason), each once, in order
    /// of first appearance.
    pub reasons: Vec<String>,
    /// The user-code locations (`file:line`, as `graph_breaks` gives a break's `location`) of the
    /// messages that name one, each once, in order of first appearance. Restart and failure
    /// reasons name none.
    pub locations: Vec<String>,
    /// The compile ids of those messages' entries, each once, in order of first appearance (`[-/-]`
    /// for an entry without one).
    pub compile_ids: Vec<String>,
}

/// What a hint asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HintKind {
    /// To report or file an issue (its text says "report an issue" or "file an issue").
    ReportToPytorch,
    /// Anything else: a change to the code or a config to set.
    Action,
}
