//! `compile_time`: where each compile spent its time, from the `chromium_event` begin/end pairs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/compile_time.json.zst`: the stream's `chromium_event` trace events paired into
/// timed phases and summed per compile id, keeping their nesting. Times are microseconds on the
/// trace's clock (the events' `ts`). The events themselves are in `tables/<stream>/chrome_trace.json.gz`.
/// `rows` counts `compiles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileTime {
    /// One row per compile id that has timed events, in order of first appearance among the
    /// trace events; a row with a null `compile_id` holds the events outside any compile.
    pub compiles: Vec<CompileTiming>,
    /// Every phase name over the whole stream, by `total_us` descending (ties by name).
    pub phases: Vec<PhaseTotal>,
    /// Wall time in phases over the whole stream: the summed durations of the outermost phases
    /// (those that were the only phase open on their thread when they ended).
    pub total_us: f64,
    /// Begin events never ended and end events with no open begin of the same name, in log order.
    pub unmatched: Vec<UnmatchedEvent>,
    /// Phases that outlived the phase they began in instead of nesting in it, by (name, outlived
    /// phase's name), in order of first occurrence. Routine: torch logs the events of every thread
    /// with the same `pid` and `tid`, so a compile worker's `compile_file` and the main thread's
    /// `async_compile.wait` interleave on one stack. They are paired by name and timed as logged.
    pub overlaps: Vec<Overlap>,
    /// Number of `chromium_event` entries read as trace events.
    pub events: u64,
    /// Trace events whose phase type (`ph`) is none of `B`, `E`, `X`, `i`, `I`, `n`, counted by
    /// `ph` (they are in the Chrome trace but not timed here).
    pub other_events: Vec<PhCount>,
}

/// The timed phases of one compile id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileTiming {
    /// The compile id as displayed (`[0/1]`, as in `compile_directory`); null for events outside
    /// any compile.
    pub compile_id: Option<String>,
    /// `ts` of the compile's first event (µs, trace clock); phases' `offset_us` count from it.
    pub start_us: f64,
    /// Wall-clock span: from `start_us` to the end of the compile's last phase or instant (µs).
    /// Not the compile's time (`total_us`): it also holds the gaps between phases and its `other_us`
    /// phases, and leaves out a frame compile counted here from another attempt.
    pub span_us: f64,
    /// Forward: the frame compile (µs): `compilation_metrics`' `entire_frame_compile_time_s` (or
    /// `dynamo_cumulative_compile_time_us`) when the compile logged it, else the duration of its
    /// `entire_frame_compile` phases. A restarted frame compile counts in the attempt that
    /// completed it, under whose id the phase ended and the metrics were logged (see
    /// `counted_in`). Null when the compile has none. Equals `compile_directory`'s `duration_s`.
    pub forward_us: Option<f64>,
    /// Backward: the compile's outermost `entire_backward_compile` phases (µs). AOTAutograd
    /// compiles the backward graph lazily, at the first backward call, after the frame compile;
    /// its events carry the compile's id. Null when there is none.
    pub backward_us: Option<f64>,
    /// The backward graphs AOTAutograd compiled inside the frame compile, not lazily (µs): the
    /// outermost `compile_fx.<locals>.bw_compiler` phases within `entire_frame_compile`. Part of
    /// `forward_us`, not added to `total_us`. Absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backward_in_forward_us: Option<f64>,
    /// The compile's time (µs): `forward_us` + `backward_us`, as torch's own `total_wall_time`
    /// (0 when both are null). Equals `compile_directory`'s `total_s`.
    pub total_us: f64,
    /// The compile's other outermost phases (µs), not in `total_us`: those neither around its
    /// frame compile (`dynamo`) nor a backward compile. At the first run, Triton autotuning and
    /// CUDA graph recording (torch counts them as runtime: `runtime_triton_autotune_time_us`,
    /// `runtime_cudagraphify_time_us`); compiled autograd's capture (`compiled_autograd`, under an
    /// id like `[!0/-/-]`); in the row with a null `compile_id`, work outside `torch.compile` (AOT
    /// Inductor's `compile_fx_aot`, export's `fullgraph_capture`). Null when there is none. A phase that began inside another compile's phase counts in that one's
    /// time: different compiles' `total_us` and `other_us` can be added up (a frame compile
    /// nested in another's, rare, counts in both, as in their metrics).
    pub other_us: Option<f64>,
    /// The compile id whose `forward_us` counts this compile's `entire_frame_compile`, when it
    /// ended under another id (a restarted attempt `[0/0]`, completed as `[0/0_1]`); else null.
    pub counted_in: Option<String>,
    /// The compile's phases, one per distinct (enclosing phase, name), in order of first begin.
    pub phases: Vec<Phase>,
    /// Instant events (`ph` `i`, `I`, `n`: cache hits and misses, ...) by name, in order of first
    /// appearance.
    pub instants: Vec<InstantCount>,
}

/// A phase of another compile, as the enclosing phase of a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OuterPhase {
    /// That compile's id as displayed (`[0/0]`); null for phases logged outside any compile.
    pub compile_id: Option<String>,
    /// Index of the phase in that compile's `phases`.
    pub phase: u32,
}

/// A phase of a compile: every begin/end pair (or complete `X` event) with this name under the
/// same enclosing phase, summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Phase {
    /// The trace event's `name` (`dynamo`, `entire_frame_compile`, `backend_compile`,
    /// `inductor_compile`, ...: whatever the log has).
    pub name: String,
    /// Index in this compile's `phases` of the enclosing phase; null when the phase began with no
    /// phase open, or inside a phase of another compile (see `outer`).
    pub parent: Option<u32>,
    /// The enclosing phase when it belongs to another compile (a restarted attempt's phases sit
    /// inside the first attempt's `entire_frame_compile`); null otherwise. Following `parent` and
    /// `outer` gives every phase that was open around this one.
    pub outer: Option<OuterPhase>,
    /// Completed occurrences.
    pub count: u64,
    /// Occurrences that began and never ended (also listed in `unmatched`).
    pub unfinished: u64,
    /// Summed duration of the completed occurrences (µs).
    pub total_us: f64,
    /// Time of the completed occurrences when they were the innermost open phase of their thread
    /// (not inside a nested phase of any compile), minus complete (`X`) events directly inside
    /// (µs). Never more than `total_us`.
    pub self_us: f64,
    /// Start of the first occurrence, relative to the compile's `start_us` (µs).
    pub offset_us: f64,
    /// `seq` of the first occurrence's begin entry in the stream's index.
    pub first_seq: u64,
}

/// An instant event name and how often it occurred.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InstantCount {
    /// The event's `name` (e.g. `fx_graph_cache_miss`).
    pub name: String,
    /// Occurrences.
    pub count: u64,
    /// `seq` of the first occurrence's entry.
    pub first_seq: u64,
}

/// One phase name over the whole stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PhaseTotal {
    /// The phase name.
    pub name: String,
    /// Completed occurrences.
    pub count: u64,
    /// Time with an occurrence of this name open (µs), over its completed occurrences: an
    /// occurrence nested in another of the same name is not added again.
    pub total_us: f64,
    /// Summed self time of the completed occurrences (µs), as in `Phase`. Never more than
    /// `total_us`.
    pub self_us: f64,
    /// Number of rows of `compiles` that have the phase.
    pub compiles: u64,
}

/// A begin or end event that could not be paired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UnmatchedEvent {
    /// Which side is missing its partner.
    pub side: UnmatchedSide,
    /// Why it is unpaired.
    pub cause: UnmatchedCause,
    /// The event's `name`.
    pub name: String,
    /// The compile id it was attributed to, if any.
    pub compile_id: Option<String>,
    /// `seq` of its entry.
    pub seq: u64,
    /// Header line of its entry in the input file.
    pub line: u64,
    /// The event's `ts` (µs).
    pub ts_us: f64,
}

/// Which half of a pair an unmatched event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnmatchedSide {
    /// A `B` event with no `E` of the same name on its thread (see `UnmatchedCause`).
    Begin,
    /// An `E` event with no open `B` of the same name on its thread.
    End,
}

/// Why an event is unpaired. None of these is routine in a complete torch log: torch ends every
/// phase it begins, even on an exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnmatchedCause {
    /// A begin still open when the log ended. The process was killed, or the log was copied
    /// while it was still being written.
    OpenAtEnd,
    /// A begin still open when the outermost phase of its compile ended. Its end was lost (a
    /// corrupted line) or never logged.
    Abandoned,
    /// An end with no open begin of its name. Its begin was lost or logged before the log began.
    NoBegin,
}

/// Phases of one name that outlived an enclosing phase of another name (see
/// `CompileTime::overlaps`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Overlap {
    /// The phase that began inside `outlived` and ended after it.
    pub name: String,
    /// The enclosing phase's name.
    pub outlived: String,
    /// Occurrences.
    pub count: u64,
    /// `seq` of the first occurrence's begin entry.
    pub first_seq: u64,
    /// Header line of that entry in the input file.
    pub first_line: u64,
}

/// A count of trace events of one `ph`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PhCount {
    /// The event's `ph` (null when absent).
    pub ph: Option<String>,
    /// Events.
    pub count: u64,
}
