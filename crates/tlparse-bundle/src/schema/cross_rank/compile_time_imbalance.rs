//! `compile_time_imbalance`: which streams spent longest compiling, overall, per phase and per
//! compile id.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::AlignedCompileRef;

/// `tables/cross_rank/compile_time_imbalance.json.zst`: each stream's total compile time, the
/// slowest and fastest streams and their ratios, the spread per phase and per compile (aligned by code). In a
/// distributed job the other ranks wait at the next collective for the slowest one to finish
/// compiling. Present when a stream logged a compile time. All times in µs. `rows` counts
/// `compiles`.
///
/// A compile's time is its `compile_directory` `total_s` (forward plus lazily compiled backward,
/// as every per-stream table gives it; see docs/definitions.md), over the stream's timed compiles
/// (a `total_s` above 0, as `compile_summary`'s `timed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileTimeImbalance {
    /// One row per stream, in `members` order.
    pub streams: Vec<StreamCompileTime>,
    /// Streams with the largest `total_us` (several on a tie), in `members` order.
    pub slowest: Vec<String>,
    /// Streams with the smallest `total_us` (several on a tie), in `members` order.
    pub fastest: Vec<String>,
    /// The largest `total_us` (µs).
    pub max_us: f64,
    /// The smallest `total_us` (µs).
    pub min_us: f64,
    /// Median of the streams' `total_us` (µs; the mean of the middle two for an even count).
    /// Streams without a time are left out.
    pub median_us: f64,
    /// `max_us` / `min_us`; null when `min_us` is 0.
    pub max_over_min: Option<f64>,
    /// `max_us` / `median_us`; null when `median_us` is 0.
    pub max_over_median: Option<f64>,
    /// One row per phase with a time on any stream: the `compilation_metrics` phase fields first,
    /// then the trace-event phases; within each, by `max_us` descending (ties by name).
    pub phases: Vec<PhaseSpread>,
    /// One row per aligned compile (see `compile_alignment`) with a time on any stream, in
    /// `compile_alignment` order.
    pub compiles: Vec<CompileSpread>,
}

/// One stream's compile time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamCompileTime {
    /// The stream id.
    pub stream: String,
    /// Summed time of its timed compiles (µs): its `compile_summary`'s `total_s`; null when none
    /// has a time.
    pub total_us: Option<f64>,
    /// Its timed compiles: compile ids with a `total_s` above 0 (its `compile_summary`'s `timed`).
    pub compiles: u64,
    /// Its other compile ids, with no time of their own (not in `total_us`): restarted attempts,
    /// whose frame compile counts in the attempt that completed it, compiled-autograd captures,
    /// and compiles that logged neither metrics nor trace events.
    pub untimed: u64,
    /// `total_us` / the table's `min_us`; null without a time or when `min_us` is 0.
    pub over_fastest: Option<f64>,
    /// `total_us` / the table's `median_us`; null without a time or when `median_us` is 0.
    pub over_median: Option<f64>,
    /// Time spent compiling at run time (µs): the summed `runtime_*_time_us` fields
    /// (`runtime_triton_autotune_time_us`, `runtime_cudagraphify_time_us`) of its `*_runtime`
    /// metrics entries; null when it logged none with such a field. Not part of `total_us`.
    pub runtime_us: Option<f64>,
}

/// Where a phase's times come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhaseSource {
    /// A field of the `compilation_metrics` entries, summed over the stream: the fields ending in
    /// `_time_s` (converted to µs: `entire_frame_compile_time_s`, `backend_compile_time_s`,
    /// `inductor_compile_time_s`, `code_gen_time_s`, ...) and in `_cumulative_compile_time_us`
    /// (`dynamo_cumulative_compile_time_us`, `aot_autograd_cumulative_compile_time_us`, ...). The
    /// name is the field name. Fields overlap (e.g. `backend_compile_time_s` is part of
    /// `entire_frame_compile_time_s`) and repeat each other across torch versions.
    Metrics,
    /// A phase of the stream's `compile_time` table (its `phases` totals, from the
    /// `chromium_event` begin/end pairs): `entire_frame_compile`, `backend_compile`,
    /// `inductor_compile`, ... Phases nest; each is its own total.
    Trace,
}

/// One stream's time in a phase or a compile id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamTime {
    /// The stream id.
    pub stream: String,
    /// Its time (µs).
    pub us: f64,
}

/// One phase across the streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PhaseSpread {
    /// The phase: a metrics field name or a trace-event name (see `source`).
    pub name: String,
    /// Where the times come from.
    pub source: PhaseSource,
    /// The streams with a time for the phase, in `members` order.
    pub streams: Vec<StreamTime>,
    /// Streams without a time for it, in `members` order.
    pub missing: Vec<String>,
    /// Streams with the largest time (several on a tie).
    pub slowest: Vec<String>,
    /// Streams with the smallest time (several on a tie).
    pub fastest: Vec<String>,
    /// The largest time (µs).
    pub max_us: f64,
    /// The smallest time (µs).
    pub min_us: f64,
    /// `max_us` − `min_us` (µs).
    pub delta_us: f64,
}

/// One compile across the streams, aligned by the code it compiled (never by compile id or
/// position).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileSpread {
    /// The compile, and each stream's compile id for it.
    pub compile: AlignedCompileRef,
    /// The streams with a time for it, in `members` order.
    pub streams: Vec<StreamTime>,
    /// Streams that did not make the compile at all, in `members` order.
    pub missing: Vec<String>,
    /// Streams that made the compile but have no time for it (its `compile_directory` `total_s`
    /// is null or 0), in `members` order.
    pub untimed: Vec<String>,
    /// Streams with the largest time (several on a tie).
    pub slowest: Vec<String>,
    /// Streams with the smallest time (several on a tie).
    pub fastest: Vec<String>,
    /// The largest time (µs).
    pub max_us: f64,
    /// The smallest time (µs).
    pub min_us: f64,
    /// `max_us` − `min_us` (µs); 0 when one stream has a time.
    pub delta_us: f64,
    /// `max_us` / `min_us`; null when `min_us` is 0.
    pub max_over_min: Option<f64>,
}
