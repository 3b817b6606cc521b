//! `rank_findings`: what needs attention on each stream and across the streams, small enough for
//! a viewer's first paint at thousands of ranks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile_alignment::{AlignmentAmbiguity, PartialCode};
use super::{AlignedCompileRef, StreamGroup};

/// `tables/cross_rank/rank_findings.json.zst`: per stream, the counts an overview warns about
/// (failed compiles, restarts, recompiled frames and recompile storms, graph breaks), from the
/// stream's own `failures`, `recompiles` and `graph_breaks` tables; across the streams, the
/// headline findings of `compile_alignment`, `collective_schedules` and `compile_time_imbalance`.
/// It grows with the number of streams and of findings, never with streams × compiles, so that a
/// viewer shows what needs attention at thousands of ranks by fetching it alone, not three tables
/// per stream. Present when the bundle has two streams or more. `rows` counts `streams`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RankFindings {
    /// One row per member, in `members` order.
    pub streams: Vec<StreamFindings>,
    /// How many compiles of one frame make a recompile storm (`storms`): 8, torch's default
    /// `recompile_limit` (`cache_size_limit`), past which Dynamo stops recompiling the frame.
    pub storm_compiles: u64,
    /// What `compile_alignment` found; null when the bundle has no `compile_alignment` table (no
    /// stream has a compile).
    pub alignment: Option<AlignmentFindings>,
    /// The first [`SCHEDULES_LISTED`] compiles whose collective schedules differ between streams
    /// (`collective_schedules` rows with `differs`), in that table's order.
    pub schedules: Vec<ScheduleFinding>,
    /// How many compiles' collective schedules differ (`schedules` lists the first ones).
    pub schedules_differ: u64,
    /// The headline of `compile_time_imbalance`; null when the bundle has no such table (no
    /// stream logged a compile time).
    pub compile_time: Option<CompileTimeFindings>,
    /// The headline of `rank_differ`; null when the bundle has no such table.
    #[serde(default)]
    pub artifacts: Option<ArtifactFindings>,
}

/// How many artifact differences `ArtifactFindings::described` says in words at most.
pub const ARTIFACTS_DESCRIBED: usize = 10;

/// What `rank_differ` found, counted, and its first findings in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ArtifactFindings {
    /// Keys whose payloads differ even once ids are masked (`rank_differ.differs`).
    pub differ: u64,
    /// Keys whose payloads differ only in ids (`rank_differ.same_up_to_ids`).
    pub same_up_to_ids: u64,
    /// Keys some stream lacks because it hit the FX graph cache (rows with
    /// `missing_on_cache_hit`).
    pub missing_on_cache_hit: u64,
    /// The first [`ARTIFACTS_DESCRIBED`] findings in words, in `rank_differ` order: real
    /// differences first ("rank 1's `dynamo_cpp_guards_str` of `forward (m.py:20)` differs at
    /// line 32: `…size=[12, 16]…` where the others have `…size=[8, 16]…`"), then keys missing on
    /// a cache hit ("rank 3 logged no `inductor_post_grad_graph` (forward) of `allreduce_fn
    /// (m.py:40)`: FX graph cache hit").
    pub described: Vec<String>,
}

/// How many differing compiles `schedules` lists at most: each names every stream's compile id.
pub const SCHEDULES_LISTED: usize = 10;

/// One stream's findings. Counts are 0 when the stream has no such table (nothing to report).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamFindings {
    /// The stream id.
    pub stream: String,
    /// Compiles that failed: the stream's `failures.failed`.
    pub failed: u64,
    /// Times Dynamo restarted its analysis of a frame: `failures.restarts`.
    pub restarts: u64,
    /// Frames compiled more than once: the rows of the stream's `recompiles`, storms included.
    pub recompiled_frames: u64,
    /// The recompiled frames with at least `storm_compiles` compiles, in `recompiles` order (most
    /// compiles first).
    pub storms: Vec<RecompileStorm>,
    /// Graph breaks: `graph_breaks.total`.
    pub graph_breaks: u64,
    /// Distinct graph breaks (reason, location and where raised): the rows of `graph_breaks`.
    pub graph_break_groups: u64,
}

/// A frame compiled at least `storm_compiles` times: its `recompiles` row, without the compiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RecompileStorm {
    /// The frame's `frame_id` on this stream.
    pub frame_id: u64,
    /// `compiled_autograd_id`, for frames compiled inside compiled autograd.
    pub compiled_autograd_id: Option<u64>,
    /// `co_name` of the frame, when logged.
    pub co_name: Option<String>,
    /// `co_filename:co_firstlineno` of the frame, when logged.
    pub location: Option<String>,
    /// How many times the frame was compiled.
    pub compiles: u64,
}

/// What `compile_alignment` found: whether the streams made different compiles, and the code only
/// some streams compiled or that could not be aligned for sure. Its per-compile rows are left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AlignmentFindings {
    /// `compile_alignment.diverges`: the streams did not all make the same compiles.
    pub diverges: bool,
    /// `compile_alignment.ids_shifted`: the same code has other compile ids on some streams.
    pub ids_shifted: bool,
    /// The streams of each of `compile_alignment.groups`, in its order.
    pub groups: Vec<StreamGroup>,
    /// `compile_alignment.partial_code`, as it is.
    pub partial_code: Vec<PartialCode>,
    /// `compile_alignment.ambiguities`, as they are.
    pub ambiguities: Vec<AlignmentAmbiguity>,
}

/// A compile whose collective schedules differ between streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScheduleFinding {
    /// The compile, and each stream's compile id for it.
    pub compile: AlignedCompileRef,
    /// The streams of each schedule variant, in `collective_schedules` order.
    pub variants: Vec<StreamGroup>,
}

/// The headline of `compile_time_imbalance`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileTimeFindings {
    /// Streams with the largest compile time (several on a tie), in `members` order.
    pub slowest: Vec<String>,
    /// Streams with the smallest compile time (several on a tie), in `members` order.
    pub fastest: Vec<String>,
    /// The largest compile time of a stream (µs).
    pub max_us: f64,
    /// The smallest compile time of a stream (µs).
    pub min_us: f64,
    /// `max_us` / `min_us`; null when `min_us` is 0.
    pub max_over_min: Option<f64>,
}
