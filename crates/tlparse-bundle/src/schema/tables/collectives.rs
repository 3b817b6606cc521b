//! `collectives`: per compile id, the collective schedule Inductor chose, the collective calls in
//! the generated code, whether the two agree, and the collectives the code never waits for.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/collectives.json.zst`: for each compile id with an
/// `inductor_collective_schedule` artifact or a collective call in its `inductor_output_code`,
/// the schedule(s), the calls found in the code, their parity, and the unmatched calls; plus a
/// summary over the stream. `rows` counts `compiles`. Written only when the stream has a schedule
/// or a collective call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Collectives {
    /// Totals over the stream.
    pub summary: CollectivesSummary,
    /// One row per compile id with a schedule or a collective call, in order of first appearance
    /// of the compile id in the stream; then, if any, a row with a null `compile_id` for schedules
    /// or code logged outside any compile.
    pub compiles: Vec<CompileCollectives>,
}

/// Totals over the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CollectivesSummary {
    /// Rows with at least one `inductor_collective_schedule` artifact.
    pub with_schedule: u64,
    /// Rows whose output code has at least one collective or `wait_tensor` call.
    pub with_code_calls: u64,
    /// Rows whose `parity` is not null.
    pub parity_checked: u64,
    /// Compile ids (as displayed) whose parity does not match, in row order.
    pub parity_mismatches: Vec<String>,
    /// Collective calls with no `wait_tensor` on their handle, over all rows.
    pub unmatched_collectives: u64,
    /// `wait_tensor` calls on a handle no collective of the same output code produced, over all
    /// rows.
    pub unmatched_waits: u64,
}

/// The collectives of one compile id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileCollectives {
    /// The compile id as displayed (`[0/1]`); null for entries outside any compile.
    pub compile_id: Option<String>,
    /// Every `inductor_collective_schedule` artifact of the compile id, in log order (a compile
    /// with a forward and a backward graph can log one per graph). Empty when none was logged:
    /// torch logs a schedule only when it is non-empty, and only since mid-2025.
    pub schedules: Vec<Schedule>,
    /// Every `inductor_output_code` of the compile id, in log order, with the calls found in it
    /// (output codes without any call are listed too, with no calls).
    pub code: Vec<OutputCode>,
    /// The schedules compared with the code, counting each op over all schedules and all output
    /// codes of the compile id. Null when the compile id has no output code, or when it has no
    /// schedule and the stream logged no schedule at all (a torch that does not log schedules).
    /// When the stream has schedules, a compile id without one is compared as an empty schedule,
    /// since torch logs only non-empty ones.
    pub parity: Option<Parity>,
    /// Collective calls (not `wait_tensor`) that no `wait_tensor` of the same output code waits
    /// for, in log order then payload order.
    pub unmatched: Vec<UnmatchedCall>,
    /// `wait_tensor` calls whose argument is the handle of no earlier collective of the same
    /// output code (e.g. a wait on a graph input produced by another graph), in log order then
    /// payload order.
    pub unmatched_waits: Vec<UnmatchedCall>,
}

/// One `inductor_collective_schedule` artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Schedule {
    /// `seq` of the artifact in the stream's index.
    pub seq: u64,
    /// Line of the artifact's header in its input file.
    pub line: u64,
    /// Blob id of the payload.
    pub blob: String,
    /// The scheduler's collective kernels in scheduling order, wait kernels included: each
    /// kernel's `python_kernel_name` as logged (`torch.ops._c10d_functional.all_reduce_.default`).
    /// Null where torch logged null (a kernel without a Python name) or, never seen, a value that
    /// is not a string.
    pub ops: Vec<Option<String>>,
}

/// One `inductor_output_code` entry and the collective calls in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OutputCode {
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// Blob id of the payload (the generated Python wrapper).
    pub blob: String,
    /// Calls of functional collective ops in the code, in payload order: every
    /// `torch.ops.<ns>.<op>.<overload>(` outside comments and string literals where `<ns>` contains
    /// `c10d_functional` (`_c10d_functional`, older `c10d_functional`). `wait_tensor` calls are
    /// included.
    pub calls: Vec<CollectiveCall>,
}

/// One collective (or `wait_tensor`) call in an output code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CollectiveCall {
    /// The op as the schedule names it: `torch.ops.<ns>.<op>.<overload>`, whitespace removed
    /// (`torch.ops._c10d_functional.all_gather_into_tensor.default`).
    pub op: String,
    /// For a collective, the name its result is waited on by: the left-hand side of
    /// `X = torch.ops...(...)`, else (in-place ops such as `all_reduce_`) the first argument as
    /// written (`buf4`; a list such as `[buf0, buf1]` for coalesced in-place ops). For a
    /// `wait_tensor`, its first argument: the handle it waits on. Null when there is neither.
    pub handle: Option<String>,
    /// Line of the call in the payload, 1-based.
    pub line: u64,
}

/// The schedules compared with the calls in the code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Parity {
    /// Every op kind has the same count in the schedules as in the code (null schedule elements
    /// are not compared; see `unnamed_in_schedule`).
    pub matches: bool,
    /// The code's calls, in payload order, name for name the same sequence as the schedules'
    /// named ops (a stronger check than `matches`: the scheduler's order is the code's order).
    pub same_sequence: bool,
    /// Per op kind, in order of first appearance in the schedules then in the code.
    pub ops: Vec<OpCount>,
    /// Op kinds in the schedules and absent from the code.
    pub only_in_schedule: Vec<String>,
    /// Op kinds in the code and absent from the schedules.
    pub only_in_code: Vec<String>,
    /// Null elements of the schedules, which cannot be compared.
    pub unnamed_in_schedule: u64,
    /// tlparse's `offset`, for comparison: the sum over op kinds of |schedule count − code count|,
    /// leaving out `wait_tensor` and merging kinds as tlparse's `normalize_op` does (`all_reduce`,
    /// `reduce_scatter`, `all_gather`, `broadcast`, `all_to_all`, else `reduce`, else the name).
    pub tlparse_offset: u64,
    /// tlparse's `missing_waits`, for comparison: collective calls in the code minus
    /// `wait_tensor` calls, 0 if negative (so surplus waits hide missing ones; `unmatched` does
    /// not).
    pub tlparse_missing_waits: u64,
}

/// How often one op kind appears in the schedules and in the code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OpCount {
    /// The op (`torch.ops._c10d_functional.wait_tensor.default`).
    pub op: String,
    /// Occurrences in the schedules.
    pub schedule: u64,
    /// Calls in the code.
    pub code: u64,
    /// Whether the two counts are equal.
    pub matches: bool,
}

/// A call that found no partner: a collective never waited for, or a wait for no collective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UnmatchedCall {
    /// The op (`torch.ops._c10d_functional.all_reduce_.default`).
    pub op: String,
    /// The call's handle (see `CollectiveCall::handle`).
    pub handle: Option<String>,
    /// Line of the call in the payload, 1-based.
    pub line: u64,
    /// Blob id of the output code the call is in.
    pub blob: String,
}
