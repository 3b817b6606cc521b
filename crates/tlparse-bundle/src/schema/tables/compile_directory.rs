//! `compile_directory`: one row per compile id, with its status, timing, reasons and artifacts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ArtifactRef;
use crate::schema::CompileId;

/// `tables/<stream>/compile_directory.json.zst`: every compile id of the stream in order of first
/// appearance, their artifacts, and the artifacts logged outside any compile. `rows` counts
/// `compiles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileDirectory {
    /// One row per compile id, in order of first appearance in the stream.
    pub compiles: Vec<CompileEntry>,
    /// Every compile's artifacts, compile by compile in `compiles` order, each compile's in log
    /// order: a compile's are `artifacts[first_artifact .. first_artifact + artifact_count]` (of
    /// the table joined from its parts). A list of their own, not one in each row, because one
    /// compile can log a million.
    pub artifacts: Vec<CompileArtifact>,
    /// Artifacts logged with no compile id (tlparse files them under `-_-_-_-`).
    pub unattributed: Vec<ArtifactRef>,
}

impl CompileDirectory {
    /// The artifacts of `compile`, a row of this table (empty for a row of another).
    pub fn artifacts_of(&self, compile: &CompileEntry) -> &[CompileArtifact] {
        let start = usize::try_from(compile.first_artifact).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(compile.artifact_count).unwrap_or(usize::MAX));
        self.artifacts.get(start..end).unwrap_or_default()
    }
}

/// An artifact of a compile: the compile's id and the artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileArtifact {
    /// The compile's id in display form, as in its row.
    pub compile_id: String,
    #[serde(flatten)]
    pub artifact: ArtifactRef,
}

/// What became of a compile, with tlparse's stack-trie colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompileStatus {
    /// Compiled a graph (tlparse: green, `status-ok`).
    Ok,
    /// Compiled, after restarting the analysis (non-empty `restart_reasons`; tlparse: yellow,
    /// `status-break`). Unlike tlparse, a null `restart_reasons` is not a restart.
    OkWithRestart,
    /// Produced no graph: `graph_op_count` is 0 or absent (tlparse: `status-empty`).
    EmptyGraph,
    /// `fail_type` is set (tlparse: red, `status-error`).
    Failed,
    /// An attempt whose analysis was abandoned and restarted as a later attempt of the same
    /// frame compile. `[0/0]` restarted as `[0/0_1]`, whose metrics hold the restart reasons;
    /// tlparse shows these as metrics missing.
    Restarted,
    /// No `compilation_metrics` entry was logged for the compile id. Causes: a crash, or a
    /// compile still running when the log ended (tlparse: `status-missing`).
    MetricsMissing,
    /// Compiled autograd capturing a backward graph (`[!0/-/-]`: a compiled-autograd id and no
    /// frame). torch logs no metrics for a capture: Dynamo compiles the captured graph later,
    /// under compile ids of the same compiled-autograd id (`[!0/2/0]`), listed in
    /// `graph_compiles`. tlparse shows these as metrics missing.
    CompiledAutogradCapture,
}

/// One compile id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileEntry {
    /// The compile id as displayed: `[0/1]`, `[0/1_2]`, `[!0/1/2]`.
    pub compile_id: String,
    /// Its parts.
    pub cid: CompileId,
    /// tlparse's directory name for the compile id, `{compiled_autograd_id}_{frame_id}_{frame_compile_id}_{attempt}`
    /// with `-` for missing parts (e.g. `-_0_0_0`).
    pub dir: String,
    /// The compile's status.
    pub status: CompileStatus,
    /// For a `restarted` attempt, the compile id of the attempt that replaced it.
    pub restarted_as: Option<String>,
    /// For a `compiled_autograd_capture`, the compile ids that compiled its graph: every compile
    /// id of the stream with the same `compiled_autograd_id` and a frame (`[!0/2/0]`, and more
    /// after graph breaks, restarts or recompiles of the captured graph), in order of first
    /// appearance. Present only when not empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graph_compiles: Vec<String>,
    /// `co_name` of the compiled frame, from the compile id's own `compilation_metrics`: null
    /// when not logged there, as on every `restarted` attempt (torch logs metrics on the last
    /// attempt only). Name a compile's function by `code.name`, set on restarted attempts too.
    pub co_name: Option<String>,
    /// `co_filename` of the compiled frame, from its `compilation_metrics`; null as `co_name` is
    /// (prefer `code.filename`).
    pub co_filename: Option<String>,
    /// `co_firstlineno` of the compiled frame, from its `compilation_metrics`; null as `co_name`
    /// is (prefer `code.line`).
    pub co_firstlineno: Option<i64>,
    /// The code object compiled, the field to name a compile's function by (`code.name`): from
    /// `compilation_metrics` (`co_*`), else from the innermost frame of the `dynamo_start` stack
    /// (torch logs the compiled function's first line there), so restarted attempts have it;
    /// null when neither was logged (e.g. a compiled-autograd capture). Cross-rank tables align
    /// compiles by it.
    pub code: Option<CompiledCode>,
    /// Id, in the stream's stack table, of the `dynamo_start` stack (the user code that
    /// triggered the compile).
    pub stack: Option<u32>,
    /// `seq` of the compile's first entry in the stream's index.
    pub first_seq: u64,
    /// `seq` of the compile's last entry.
    pub last_seq: u64,
    /// When the compile id's first entry was logged: its glog time as written,
    /// `MMDD HH:MM:SS.ffffff`, the logging machine's local time (no year, no time zone). Compare
    /// within one stream only; for an absolute time use `start_time`.
    pub start_ts: String,
    /// When the compile id's last entry was logged, in `start_ts`'s form: it can be the lazy
    /// backward's, long after the frame compile (`end_ts - start_ts` is no compile time).
    pub end_ts: String,
    /// When the frame compile started (its first attempt), in seconds since the Unix epoch:
    /// `start_time` of the compile id's `compilation_metrics`; null when not logged there (older
    /// logs, `restarted` attempts).
    pub start_time: Option<f64>,
    /// Forward: wall time of the frame compile in seconds, `compilation_metrics`'
    /// `entire_frame_compile_time_s` (or `dynamo_cumulative_compile_time_us`), else the duration
    /// of the `entire_frame_compile` trace phases that ended under this compile id:
    /// `compile_time`'s `forward_us`, in seconds.
    pub duration_s: Option<f64>,
    /// Backward: the lazily compiled backward, in seconds (`compile_time`'s `backward_us`): the
    /// compile's outermost `entire_backward_compile` trace phases, at the first backward call.
    /// Null when there is none, or the stream logged no trace events.
    pub backward_s: Option<f64>,
    /// The backward graphs compiled inside the frame compile, not lazily, in seconds
    /// (`compile_time`'s `backward_in_forward_us`): part of `duration_s`, not added to `total_s`.
    /// Absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backward_in_forward_s: Option<f64>,
    /// The compile's time in seconds: `duration_s` + `backward_s` (`compile_time`'s `total_us`).
    /// Null when both are.
    pub total_s: Option<f64>,
    /// The compile's other outermost trace phases, in seconds, not in `total_s`
    /// (`compile_time`'s `other_us`: Triton autotuning and CUDA graph recording at the first
    /// run, compiled autograd's capture). Null when there is none.
    pub other_s: Option<f64>,
    /// `fail_type` from `compilation_metrics`, for failed compiles.
    pub fail_type: Option<String>,
    /// `fail_reason` from `compilation_metrics`, for failed compiles.
    pub fail_reason: Option<String>,
    /// `restart_reasons` from `compilation_metrics` (why the analysis restarted, often a graph
    /// break).
    pub restart_reasons: Vec<String>,
    /// Graph-break reasons logged for the compile (`dynamo_graph_break_reason` artifacts), first
    /// line of each.
    pub graph_breaks: Vec<String>,
    /// Cache outcomes logged for the compile, in log order.
    pub cache: Vec<CacheOutcome>,
    /// Where the compile's artifacts start in the table's `artifacts`: every entry of the compile
    /// that carries a payload (except `chromium_event`) or a link, in log order, are the
    /// `artifact_count` from there.
    pub first_artifact: u64,
    /// How many artifacts the compile has.
    pub artifact_count: u64,
    /// The compile's alignment key as a canonical string:
    /// compiles of two streams or two runs that `compile_alignment` would pair (same code,
    /// ordinal for that code on the stream, attempt; see the cross-rank `compile_alignment`
    /// table) have equal strings, and no others do. Readers pair compiles by equality of this
    /// string alone; its content is the JSON of `compile_alignment`'s `key`, but only equality
    /// is meant to be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align_key: Option<String>,
}

/// The code object a compile compiled.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompiledCode {
    /// The file (`co_filename`).
    pub filename: String,
    /// The first line of the code (`co_firstlineno`).
    pub line: i64,
    /// The code's name (`co_name`): the function, `<lambda>`, `<module>`, ...
    pub name: String,
    /// Where it was read from.
    pub from: CodeSource,
}

/// Where a compile's code was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CodeSource {
    /// The `co_*` fields of the compile's `compilation_metrics`.
    Metrics,
    /// The innermost frame of its `dynamo_start` stack (or of the first attempt's).
    DynamoStart,
}

/// A cache hit, miss or bypass, from an artifact named `*cache_hit*`, `*cache_miss*` or
/// `*cache_bypass*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CacheOutcome {
    /// The cache, from the artifact name: `fx_graph_cache`, `aotautograd_cache`, ...
    pub cache: String,
    /// `hit`, `miss` or `bypass`.
    pub outcome: String,
    /// The artifact's name as logged.
    pub name: String,
    /// `seq` of the artifact's entry.
    pub seq: u64,
}
