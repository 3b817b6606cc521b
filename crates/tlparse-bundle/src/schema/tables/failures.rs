//! `failures`: every compile failure and analysis restart.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/failures.json.zst`: tlparse's "Failures and Restarts" page, plus failures of
/// backward compiles. `rows` counts `failures`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
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
#[schemars(deny_unknown_fields)]
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
    /// Where in the user's code it failed, `file:line`: torch's `fail_user_frame_filename` /
    /// `fail_user_frame_lineno` when that file is user code (not under `site-packages`,
    /// `dist-packages` or a `torch` directory, nor the Python standard library); else, but for
    /// a `BackendCompilerFailed` (the backend refused the whole graph, not a line of it), the
    /// innermost user-code frame of the last `user_stack` the compile logged before its metrics
    /// (a symbol or guard entry: where tracing was); else torch's frame as logged. Null for
    /// restarts, and when none of these was logged.
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
