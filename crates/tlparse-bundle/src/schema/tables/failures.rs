//! `failures`: every compile failure and analysis restart.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/failures.json.zst`: tlparse's "Failures and Restarts" page, plus failures of
/// backward compiles. `rows` counts `failures`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Failures {
    /// Failures and restarts in log order.
    pub failures: Vec<Failure>,
    /// Number of `restart` rows.
    pub restarts: u64,
    /// Number of `failure` rows.
    pub failed: u64,
}

/// Whether a row is a restart or a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Dynamo restarted its analysis of the frame (one row per `restart_reasons` item; tlparse's
    /// "RestartAnalysis").
    Restart,
    /// The compile failed (`fail_type` set).
    Failure,
}

/// One failure or restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// The compile id as displayed.
    pub compile_id: String,
    /// Restart or failure.
    pub kind: FailureKind,
    /// Which metrics entry reported it: `compilation_metrics`, `bwd_compilation_metrics`,
    /// `aot_autograd_backward_compilation_metrics` (or a `_runtime` variant).
    pub source: String,
    /// `fail_type` (exception class) for failures; `RestartAnalysis` for restarts.
    pub failure_type: String,
    /// The restart reason, or `fail_reason`; null when a failure logged no reason (tlparse aborts
    /// the whole run on that).
    pub reason: Option<String>,
    /// The user frame where it failed, `file:line` (`fail_user_frame_filename` /
    /// `fail_user_frame_lineno`), when logged.
    pub user_frame: Option<String>,
    /// `exception_stack_trace` from the metrics, when logged.
    pub exception: Option<Vec<String>>,
    /// Blob id of the compile's `dynamo_error` artifact (the traceback), when logged.
    pub error_blob: Option<String>,
    /// Id of the compile's `dynamo_start` stack in the stream's stack table (that of an earlier
    /// attempt of the same frame compile when this attempt logged none).
    pub stack: Option<u32>,
    /// `seq` of the metrics entry.
    pub seq: u64,
}
