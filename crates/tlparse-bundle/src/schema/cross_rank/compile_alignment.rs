//! `compile_alignment`: which compile of each stream is "the same compile" as which compile of
//! the others, decided by the code each compiled, not by compile id.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::StreamGroup;
use crate::schema::tables::CompileStatus;

/// `tables/cross_rank/compile_alignment.json.zst`: every compile of every stream, aligned across
/// the streams by what it compiled. Dynamo numbers frames per process in the order it first
/// compiles them, so a rank that compiles one extra function shifts every later frame id by one:
/// its `[5/0]` is then another function than everyone else's `[5/0]`. Compiles are therefore
/// aligned by their key (`AlignmentKey`): the code object, which frame of that code on its stream,
/// and the frame compile's index within that frame; compiled-autograd compiles by their
/// compiled-autograd id and order. One row is one frame compile: its attempts (restarts of the
/// analysis) are its history, and its final attempt is the one compared. Every other cross-rank
/// table compares the compiles this table aligns (their `AlignedCompileRef`s point into
/// `compiles`). `rows` counts `compiles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileAlignment {
    /// True when the streams did not all compile the same compiles (some row has `missing`).
    pub diverges: bool,
    /// True when some aligned compile has different compile ids on the streams that have it
    /// (frame ids shifted by a compile only some streams made).
    pub ids_shifted: bool,
    /// Groups of streams that made exactly the same aligned compiles, the group of the first
    /// stream first.
    pub groups: Vec<AlignmentGroup>,
    /// One row per aligned frame compile, grouped by code (codes in order of their first compile;
    /// each code's frames in order of their first compile, each frame's recompiles after it).
    pub compiles: Vec<AlignedCompile>,
    /// Code that some streams compiled and others did not, in `compiles` order: the reason the
    /// frame ids of the streams that compiled it are shifted.
    pub partial_code: Vec<PartialCode>,
    /// One row per stream, in `members` order.
    pub streams: Vec<StreamAlignment>,
    /// Every place where the key did not decide alone (two frames of the same code, a compile
    /// whose code is unknown, ...), with how it was resolved. Nothing is paired silently.
    pub ambiguities: Vec<AlignmentAmbiguity>,
}

/// What makes two frame compiles on two streams the same compile. Every attempt of one frame
/// compile has the same key: the attempt is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AlignmentKey {
    /// The `compiled_autograd_id`, for compiles inside compiled autograd.
    pub compiled_autograd_id: Option<u64>,
    /// The code compiled; null inside compiled autograd (its graphs are generated code whose
    /// file name, `<eval_with_key>.N`, counts per process: they align by `ordinal`) and for a
    /// compile whose code is unknown (then `compile_id` is set).
    pub code: Option<CodeKey>,
    /// Which frame of `code` on its stream: 0 for the first frame that compiled that code, 1 for
    /// the second (two resume functions of one line, two lambdas of one line, the same function
    /// again after `torch._dynamo.reset()`), in order of their first compile. Null when `code`
    /// is.
    pub frame: Option<u64>,
    /// The frame compile's ordinal within its frame (its recompile index): 0 for the frame's
    /// first compile, 1 for its first recompile, ..., counted over the frame's compiles on the
    /// stream in `frame_compile_id` order. Inside compiled autograd, the ordinal among the frame
    /// compiles of the `compiled_autograd_id`. Null for a capture and for unknown code.
    pub ordinal: Option<u64>,
    /// For a compile whose code is unknown and is not a capture: its frame compile's id (`[3/0]`,
    /// no attempt), the only key left (such compiles align by compile id, and `ambiguities` says
    /// so).
    pub compile_id: Option<String>,
}

/// A code object: where its source starts and its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CodeKey {
    /// `co_filename`.
    pub filename: String,
    /// `co_firstlineno`.
    pub line: i64,
    /// `co_name`.
    pub name: String,
}

/// One aligned frame compile: the same frame of the same code compiled the same time, on each
/// stream that did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AlignedCompile {
    /// What it is, for people: `forward (model.py:20)`, `forward (model.py:20), recompile 1`
    /// (the frame compile index within the frame), `resume (model.py:18), frame 2` (the second
    /// frame of that code), `compiled autograd 0: capture`, `compiled autograd 0: graph 1`,
    /// `[3/0] (code unknown)`. Unique in the table.
    pub label: String,
    /// The key the streams' compiles were aligned by.
    pub key: AlignmentKey,
    /// Each stream that made it, with its final attempt's compile id and status there and the
    /// attempts before it, in `members` order.
    pub present: Vec<StreamCompile>,
    /// Streams that did not make it, in `members` order.
    pub missing: Vec<String>,
    /// True when the streams that made it disagree on its (final attempt's) status.
    pub status_differs: bool,
    /// True when the streams that made it gave its final attempt different compile ids.
    pub compile_id_differs: bool,
}

/// One stream's frame compile of an aligned compile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamCompile {
    /// The stream id.
    pub stream: String,
    /// The final attempt's compile id there, as displayed (`[1/0]`, `[0/0_2]`): the attempt
    /// that was not restarted (the highest attempt logged).
    pub compile_id: String,
    /// The final attempt's status there (as in the stream's `compile_directory`).
    pub status: CompileStatus,
    /// The attempts before the final one (restarts of the analysis), lowest first; empty when
    /// the frame compile was not restarted.
    pub earlier_attempts: Vec<CompileAttempt>,
    /// The final attempt's `restart_reasons` (`compile_directory`): why torch restarted the
    /// analysis of this frame compile, one per restart as torch logged them.
    pub restart_reasons: Vec<String>,
}

/// One attempt of a frame compile, before its final one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileAttempt {
    /// Its compile id, as displayed (`[0/0]`, `[0/0_1]`).
    pub compile_id: String,
    /// Its status (as in the stream's `compile_directory`; `restarted` for an attempt Dynamo
    /// restarted).
    pub status: CompileStatus,
}

/// Streams that made the same aligned compiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AlignmentGroup {
    /// The streams.
    pub group: StreamGroup,
    /// Their aligned compiles: indexes into `compiles`, in order.
    pub compiles: Vec<u32>,
}

/// Code that only some streams compiled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PartialCode {
    /// The code.
    pub code: CodeKey,
    /// Its `compiled_autograd_id`, when compiled inside compiled autograd.
    pub compiled_autograd_id: Option<u64>,
    /// For people: `rank_local_metric (ranks_shifted.py:24)`.
    pub label: String,
    /// Streams that compiled it (at least once), with their first frame compile of it, in
    /// `members` order.
    pub compiled_by: Vec<StreamCompile>,
    /// Streams that never compiled it, in `members` order.
    pub not_compiled_by: Vec<String>,
    /// When one stream compiled it: the amount by which that stream's frame ids are shifted
    /// (against the usual ones, see `streams[].frame_id_shifts`) for every code it first compiled
    /// later; null when no later code is shifted, or not all by the same amount.
    pub later_frame_id_shift: Option<i64>,
}

/// One stream's place in the alignment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamAlignment {
    /// The stream id.
    pub stream: String,
    /// Its compiles (rows of its `compile_directory`: every attempt).
    pub compiles: u64,
    /// Aligned compiles (frame compiles) it lacks.
    pub missing: u64,
    /// Where its frame ids differ from the other streams' for the same frame: one row per frame
    /// (of a code) whose first compile has another frame id on this stream than on most streams
    /// that compiled it, in `compiles` order.
    pub frame_id_shifts: Vec<FrameIdShift>,
}

/// A code whose frame id on one stream differs from the frame id most streams gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FrameIdShift {
    /// Index in `compiles` of the frame's first compile.
    pub aligned: u32,
    /// The stream's frame id for the code.
    pub frame_id: u64,
    /// The frame id most other streams that compiled the code gave it (the smallest on a tie).
    pub usual_frame_id: u64,
    /// `frame_id − usual_frame_id`.
    pub by: i64,
}

/// Why a compile could not be aligned by its key alone, and what was done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AlignmentAmbiguity {
    /// The stream.
    pub stream: String,
    /// What is ambiguous.
    pub kind: AmbiguityKind,
    /// The stream's compile ids concerned.
    pub compile_ids: Vec<String>,
    /// How it was resolved, in words.
    pub resolution: String,
}

/// The kinds of ambiguity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AmbiguityKind {
    /// The same code (file, first line, name) was compiled under several frame ids on the stream.
    /// That happens with two code objects that share a file, line and name (two resume functions
    /// of one line, lambdas on one line), or after `torch._dynamo.reset()`. They are never one
    /// frame: each is its own `key.frame`, told apart by order of first compile.
    SameCodeSeveralFrames,
    /// Neither `compilation_metrics` nor `dynamo_start` named the compile's code. It is aligned
    /// by its compile id, and only with compiles whose code is unknown too.
    CodeUnknown,
    /// The attempts of one frame compile name different code: the first attempt's code is used.
    AttemptsDisagree,
}

/// A reference, from a row of another cross-rank table, to one aligned compile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AlignedCompileRef {
    /// Index of the compile in `compile_alignment`'s `compiles`.
    pub aligned: u32,
    /// Its label there (`forward (model.py:20)`).
    pub label: String,
    /// Each stream's own compile id for it (its final attempt's), in `members` order; streams
    /// that lack it are left out.
    pub compile_ids: Vec<StreamCompileId>,
}

/// A reference, from a row that must not grow with the number of streams, to one aligned
/// compile: its index and label alone; each stream's own compile id for it is in that
/// `compile_alignment` row's `present`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AlignedCompileLabel {
    /// Index of the compile in `compile_alignment`'s `compiles`.
    pub aligned: u32,
    /// Its label there (`forward (model.py:20)`).
    pub label: String,
}

/// A stream's own compile id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamCompileId {
    /// The stream id.
    pub stream: String,
    /// The compile id there, as displayed.
    pub compile_id: String,
}
