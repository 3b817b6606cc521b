//! `recompiles`: per frame, the sequence of compiles, why each recompile happened and what
//! changed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CompileStatus;

/// `tables/<stream>/recompiles.json.zst`: every frame Dynamo compiled more than once (tlparse
/// #44, #153). `rows` counts `frames`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Recompiles {
    /// Frames with at least one recompile, by number of compiles descending, then frame id.
    pub frames: Vec<RecompiledFrame>,
}

/// One frame and its compiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RecompiledFrame {
    /// `frame_id`.
    pub frame_id: u64,
    /// `compiled_autograd_id`, for frames compiled inside compiled autograd.
    pub compiled_autograd_id: Option<u64>,
    /// `co_name` of the frame (from its metrics), when logged.
    pub co_name: Option<String>,
    /// `co_filename:co_firstlineno` of the frame, when logged.
    pub location: Option<String>,
    /// The frame's compiles in `frame_compile_id` order (the final attempt of each).
    pub compiles: Vec<RecompileStep>,
}

/// One compile of a frame, compared with the previous one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RecompileStep {
    /// The compile id as displayed.
    pub compile_id: String,
    /// Its status.
    pub status: CompileStatus,
    /// Why torch recompiled: the `recompile_reasons` artifact, one reason per earlier cache
    /// entry whose guards failed (`0/0: tensor 'x' size mismatch at index 0. expected 4, actual
    /// 6`); without that artifact, the `recompile_reason` of the frame compile's
    /// `compilation_metrics` (torch writes only the first reason there). A frame compile's
    /// attempts share one reason: it is the frame compile's, whichever attempt logged it. Empty
    /// for the first compile, and when no reason was logged.
    pub reasons: Vec<String>,
    /// Where `reasons` were read; null when they are empty.
    pub reasons_from: Option<RecompileReasonSource>,
    /// The attempt whose entry held `reasons` (`[0/1]`), which is not `compile_id` when the frame
    /// compile was restarted after the reason was logged (`compile_id` is then `[0/1_1]`); null
    /// when `reasons` is empty.
    pub reasons_logged_on: Option<String>,
    /// What differs from the previous compile of the frame; null for the first compile.
    pub changes: Option<Changes>,
}

/// Where a recompile's reasons were logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecompileReasonSource {
    /// The `recompile_reasons` artifact: every earlier cache entry's failed guard.
    RecompileReasons,
    /// `compilation_metrics.recompile_reason`: the first reason only.
    CompilationMetrics,
}

/// The difference between two consecutive compiles of a frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Changes {
    /// The compile compared against.
    pub previous: String,
    /// Artifacts logged by both compiles whose payloads differ (by blob id), in log order of this compile.
    pub changed: Vec<ArtifactChange>,
    /// Artifacts only this compile logged, named as in `changed` (`x#2`: the previous compile
    /// logged one `x`).
    pub added: Vec<String>,
    /// Artifacts only the previous compile logged, named as in `changed`.
    pub removed: Vec<String>,
    /// Artifacts both compiles logged with the same payload, named as in `changed`; with
    /// `changed` and `added`, every artifact of this compile but `no_payload` ones.
    pub unchanged: Vec<String>,
    /// Guards this compile has that the previous did not (from `dynamo_cpp_guards_str`, or
    /// `dynamo_guards` in older logs; source comments after `#` are ignored when comparing).
    pub guards_added: Vec<String>,
    /// Guards the previous compile had that this one does not.
    pub guards_removed: Vec<String>,
}

/// An artifact whose payload changed. Artifacts of the two compiles are paired by name and
/// occurrence: the Nth of a name in one with the Nth of that name in the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ArtifactChange {
    /// The artifact's name as `compile_directory` gives it (`ArtifactRef.name`), with `#N`
    /// appended for the Nth artifact of that name in the compile (none on the first), counted in
    /// log order over those with a payload or a URL (not `no_payload`).
    pub name: String,
    /// The previous compile's payload: a blob id (read it as any blob), or a `link`'s URL.
    pub before: String,
    /// This compile's payload: a blob id, or a `link`'s URL.
    pub after: String,
}
