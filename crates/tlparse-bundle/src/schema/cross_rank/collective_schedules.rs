//! `collective_schedules`: whether the streams (ranks) scheduled the same collectives for each
//! compile, and whether each stream's generated code agrees with its own schedules.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AlignedCompileRef, StreamGroup};
use crate::schema::tables::collectives::OpCount;

/// `tables/cross_rank/collective_schedules.json.zst`: the `inductor_collective_schedule`s of every
/// stream, compile by compile, aligned by the code compiled (`compile_alignment`; never by compile
/// id, file or graph order), grouped into streams that
/// scheduled exactly the same collectives; plus, per stream, where its generated code disagrees
/// with its schedules. Ranks that issue different collectives in the same graph hang or corrupt
/// data. Built from each stream's `collectives` table; written when at least one stream has one.
/// `rows` counts `compiles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CollectiveSchedules {
    /// True when some compile has differing schedules on streams that both made it (its row's
    /// `differs`). A compile that some streams lack is not a divergence: see `missing`.
    pub diverges: bool,
    /// The compiles used for `groups` (their `compile_alignment` labels): those that every
    /// stream made and that at least one stream has a schedule for, in `compile_alignment` order.
    pub shared_compiles: Vec<String>,
    /// Streams grouped by their schedules on every compile of `shared_compiles` (a stream with
    /// no schedule for one counts as such), the group of the first stream first. One group when
    /// no shared compile differs. A difference on a compile that only some streams made shows
    /// in `compiles` and `diverges`, not here.
    pub groups: Vec<StreamGroup>,
    /// One row per compile that has a schedule on at least one stream, in `compile_alignment`
    /// order.
    pub compiles: Vec<CompileSchedules>,
    /// One row per stream, in `members` order: its own schedule/code parity.
    pub streams: Vec<StreamParity>,
}

/// One compile across the streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileSchedules {
    /// The compile, with each stream's compile id for it.
    pub compile: AlignedCompileRef,
    /// True when the streams that made the compile and report on its schedule (those in
    /// `variants` and in `no_schedule`) do not all agree.
    pub differs: bool,
    /// Index in `variants` of the reference the others are compared with: the variant with the
    /// most streams (the first one on ties); null when no stream has a schedule for it.
    pub reference: Option<u64>,
    /// Streams with at least one schedule for the compile, grouped by identical schedules
    /// (same ops in the same order), the group of the first stream first.
    pub variants: Vec<ScheduleVariant>,
    /// Streams that made the compile and log schedules for other compiles but none for this
    /// one. Torch logs a schedule only when it is non-empty, so these ran no collective in
    /// this graph: a difference from any variant.
    pub no_schedule: Vec<String>,
    /// Streams that made the compile but log no schedule at all (older torch, or logging
    /// off): nothing is known of their collectives, so they are left out of the comparison.
    pub no_data: Vec<String>,
    /// Streams that made the compile from the FX graph cache (a hit of `fx_graph_cache`, or of
    /// `aotautograd_cache`, which loads it, in their `cache_outcomes`) and logged no schedule
    /// for it: torch logs none on a hit, so nothing is known of their collectives and they are
    /// left out of the comparison, neither agreeing nor differing.
    pub cache_hit: Vec<String>,
    /// Streams that did not make the compile, in `members` order.
    pub missing: Vec<String>,
    /// Streams whose generated code for this compile disagrees with their own schedule (their
    /// `collectives` parity does not match), in `members` order: the schedule itself may be
    /// what is wrong. Details in `streams`.
    pub parity_mismatches: Vec<String>,
}

/// Streams whose schedules of one compile are identical.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScheduleVariant {
    /// The streams, in `members` order.
    pub streams: Vec<String>,
    /// Their schedules: one list per `inductor_collective_schedule` artifact of the compile,
    /// in log order (a compile with a forward and a backward graph can log two), each the
    /// collective kernels in scheduling order as logged
    /// (`torch.ops._c10d_functional.all_reduce_.default`), waits included; null for a kernel
    /// torch logged without a name.
    pub schedules: Vec<Vec<Option<String>>>,
    /// Ops of the reference variant's schedules that these lack, counting repeats (one element
    /// per missing occurrence), in the reference's order. Empty for the reference.
    pub lacks: Vec<Option<String>>,
    /// Ops of these schedules that the reference lacks, counting repeats, in these schedules'
    /// order. Empty for the reference.
    pub extra: Vec<Option<String>>,
    /// The first position, in the schedules taken one after the other, where these differ from
    /// the reference's (a position past the shorter one's end when one is a prefix of the
    /// other); null for the reference. When `lacks` and `extra` are empty, only the order differs.
    pub first_difference: Option<u64>,
}

/// One stream's collectives, checked against its own schedules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamParity {
    /// The stream id.
    pub stream: String,
    /// Whether the stream has a `collectives` table at all (a schedule or a collective call). When
    /// false every other field is empty or 0: no data, which is not the same as no collectives.
    pub has_data: bool,
    /// Compile ids with at least one schedule.
    pub with_schedule: u64,
    /// Compile ids whose schedules were compared with their output code (parity not null).
    pub parity_checked: u64,
    /// Compile ids whose output code disagrees with their schedules, in the stream's row order.
    pub parity_mismatches: Vec<ParityMismatch>,
    /// Collective calls of the output code that no `wait_tensor` waits for.
    pub unmatched_collectives: Vec<UnmatchedCollective>,
    /// `wait_tensor` calls of the output code on a handle no collective of that code produced.
    pub unmatched_waits: Vec<UnmatchedCollective>,
    /// Schedules logged outside any compile (no compile id), which cannot be aligned and are
    /// left out of the comparison.
    pub schedules_outside_compiles: u64,
}

/// A compile id whose output code does not call the collectives its schedules list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ParityMismatch {
    /// The compile id as displayed: `[0/0]`; null for schedules and code logged outside any
    /// compile.
    pub compile_id: Option<String>,
    /// The op kinds whose counts differ between the schedules and the code (from the stream's
    /// `collectives` parity).
    pub ops: Vec<OpCount>,
    /// Op kinds in the schedules and absent from the code.
    pub only_in_schedule: Vec<String>,
    /// Op kinds in the code and absent from the schedules (e.g. a `reduce_scatter_tensor` the
    /// schedule lacks).
    pub only_in_code: Vec<String>,
    /// tlparse's `offset` for this compile id: the sum over op kinds (waits left out, kinds
    /// merged as tlparse does) of |schedule count − code count|.
    pub tlparse_offset: u64,
    /// tlparse's `missing_waits`: collective calls minus `wait_tensor` calls, 0 if negative.
    pub tlparse_missing_waits: u64,
}

/// A collective or `wait_tensor` call of an output code that found no partner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UnmatchedCollective {
    /// The compile id of the output code as displayed; null for code logged outside any compile.
    pub compile_id: Option<String>,
    /// The op (`torch.ops._c10d_functional.all_reduce_.default`).
    pub op: String,
    /// The call's handle: the name its result is waited on by (for a wait, the name it waits
    /// on); null when the call has none.
    pub handle: Option<String>,
    /// Line of the call in the output code's payload, 1-based.
    pub line: u64,
    /// Blob id of the output code.
    pub blob: String,
}
