//! `compile_summary`: the few numbers a stream's overview leads with.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CompileStatus;

/// `tables/<stream>/compile_summary.json.zst`: how many compiles the stream has, how long they
/// took and which took longest, made from the same rows as `compile_directory`, so that an
/// overview need not fetch the directory (megabytes for a long log). Written whenever
/// `compile_directory` has a compile. `rows` counts `slowest_compiles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileSummary {
    /// Compile ids of the stream: the rows of `compile_directory`'s `compiles`.
    pub compiles: u64,
    /// Compile ids by `status` (as `compile_directory` gives it); statuses no compile has are
    /// left out.
    pub by_status: BTreeMap<String, u64>,
    /// The stream's compile time in seconds: the sum of every compile's `total_s` (forward plus
    /// backward, `compile_time`'s `total_us`; compiles without one count 0).
    pub total_s: f64,
    /// The sum of the compiles' forwards (`compile_time`'s `forward_us`), in seconds.
    pub forward_s: f64,
    /// The sum of the compiles' lazily compiled backwards (`compile_time`'s `backward_us`), in
    /// seconds. A backward compiled inside the frame compile is in `forward_s` (see
    /// `backward_in_forward_s`), so this is 0 when every backward was.
    pub backward_s: f64,
    /// The sum of the compiles' backwards compiled inside their frame compile
    /// (`compile_directory`'s `backward_in_forward_s`), in seconds: part of `forward_s`, not added
    /// to `total_s`. Absent when no compile has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backward_in_forward_s: Option<f64>,
    /// Timed compiles: compile ids with a `total_s` above 0, the ones the time was spent in (the
    /// Compile time page's "compiles timed", `compile_time_imbalance`'s `compiles`).
    pub timed: u64,
    /// At most the 10 compiles with the longest `total_s` above 0, longest first (ties in
    /// `compile_directory` order).
    pub slowest_compiles: Vec<SlowCompile>,
}

/// One of the slowest compiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SlowCompile {
    /// The compile id as displayed (`[0/1]`): its `compile_directory` row.
    pub compile_id: String,
    /// Its status, as in `compile_directory`.
    pub status: CompileStatus,
    /// Its time in seconds (`compile_directory`'s `total_s`).
    pub total_s: f64,
    /// Its forward in seconds; null when it has none.
    pub forward_s: Option<f64>,
    /// Its lazily compiled backward in seconds; null when it has none.
    pub backward_s: Option<f64>,
    /// Its backward compiled inside the frame compile, in seconds (part of `forward_s`); absent
    /// when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backward_in_forward_s: Option<f64>,
    /// The function compiled (`compile_directory`'s `code.name`), when known.
    pub function: Option<String>,
    /// Where it is defined: `file:line` of `compile_directory`'s `code`, when known.
    pub location: Option<String>,
}
