//! `tensor_meta`: the output shapes, strides and dtypes of every graph's ops, compared across
//! streams.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AlignedCompileRef, StreamGroup};
use crate::schema::tables::TensorMeta;

/// `tables/cross_rank/tensor_meta.json.zst`: which streams scheduled the same ops with the same
/// output tensor metadata (shape, stride, dtype), per graph and over the whole run, from the
/// `tensor_meta_fingerprint` of each stream's `runtime_estimates` table (runtime estimates left
/// out, unlike tlparse). Graphs are aligned by compile (by the code compiled:
/// `compile_alignment`) and occurrence; a graph missing on a
/// stream is "missing", never "different". Where streams differ, `graphs[].differences` lists the
/// differing ops. Ranks that disagree on tensor layouts run different kernels and can exchange
/// mismatched buffers in collectives. `rows` counts `graphs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CrossRankTensorMeta {
    /// True when the streams with data form more than one whole-run group (`groups`): tlparse's
    /// "divergent tensor meta", but without counting the runtime numbers. Can be true only
    /// because of missing artifacts; see `fingerprints_differ`.
    pub diverges: bool,
    /// True when some graph has different fingerprints on two streams that both have it.
    pub fingerprints_differ: bool,
    /// Whole-run groups: streams with exactly the same graphs and the same fingerprint for each,
    /// the group of the first stream first. Streams in `no_data` belong to no group.
    pub groups: Vec<TensorMetaGroup>,
    /// Streams without any `inductor_runtime_and_tensor_meta` artifact (no `runtime_estimates`
    /// table), in `members` order.
    pub no_data: Vec<String>,
    /// One row per (compile, occurrence) that any stream has, in `compile_alignment` order
    /// (graphs logged outside any compile last).
    pub graphs: Vec<GraphTensorMeta>,
}

/// Streams that agree on every graph's tensor metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TensorMetaGroup {
    /// The streams.
    #[serde(flatten)]
    pub group: StreamGroup,
    /// Their graphs and fingerprints, in `compile_alignment` order.
    pub graphs: Vec<GraphFingerprint>,
    /// Indexes (in `groups`) of the other groups that have the same fingerprint on every graph
    /// both have: this group is separate from those only because one side lacks some graphs'
    /// artifacts (e.g. a rank that logged no estimate for one compile).
    pub differs_only_by_missing_from: Vec<u32>,
}

/// One graph's fingerprint in a whole-run group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphFingerprint {
    /// The compile, with each stream's compile id for it; null for a graph logged outside any
    /// compile.
    pub compile: Option<AlignedCompileRef>,
    /// The occurrence of the artifact for that compile (0 for the first).
    pub occurrence: u32,
    /// The `tensor_meta_fingerprint` (see the `runtime_estimates` table).
    pub fingerprint: String,
}

/// One graph across the streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphTensorMeta {
    /// The compile, with each stream's compile id for it; null for a graph logged outside any
    /// compile.
    pub compile: Option<AlignedCompileRef>,
    /// Which of the compile's artifacts this is, per stream (0 for the first).
    pub occurrence: u32,
    /// Streams with equal fingerprints for this graph, in order of their first stream; the
    /// first group is the reference the `differences` compare to.
    pub groups: Vec<FingerprintGroup>,
    /// Streams without this graph's artifact, in `members` order ("missing", never "different").
    pub missing: Vec<String>,
    /// The streams of `missing` that did make this compile but logged no artifact for it.
    pub compiled_without_artifact: Vec<String>,
    /// True when `groups` has more than one group.
    pub differs: bool,
    /// For each group after the first, how its ops differ from the first group's (both taken
    /// from the group's first stream). Empty when `differs` is false.
    pub differences: Vec<GroupDifference>,
}

/// Streams with one fingerprint for a graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FingerprintGroup {
    /// The streams.
    #[serde(flatten)]
    pub group: StreamGroup,
    /// Their `tensor_meta_fingerprint`.
    pub fingerprint: String,
    /// Number of ops in the graph.
    pub op_count: u64,
}

/// How one fingerprint group's ops differ from the reference group's (the row's first group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GroupDifference {
    /// Index of the group in the row's `groups` (1 or more).
    pub group: u32,
    /// The differing ops, in op order. Ops are paired by name along the longest common
    /// subsequence of the two op-name lists (so an inserted op does not shift every later pair);
    /// a paired op is listed when its type or outputs differ, an unpaired one always.
    pub ops: Vec<OpDifference>,
}

/// One op that differs between the reference group and another group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OpDifference {
    /// The op's name (`op1_op2_op4`, `torch.ops._c10d_functional.wait_tensor.default`).
    pub name: String,
    /// Its index in the reference group's ops (0-based); null when only the other group has it.
    pub reference_index: Option<u64>,
    /// Its index in the other group's ops (0-based); null when only the reference has it.
    pub other_index: Option<u64>,
    /// The op in the reference group; null when only the other group has it.
    pub reference: Option<OpLayout>,
    /// The op in the other group; null when only the reference has it.
    pub other: Option<OpLayout>,
}

/// The compared part of an op (its runtime estimate is not compared).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OpLayout {
    /// `compute` or `collective`, as logged.
    #[serde(rename = "type")]
    pub op_type: String,
    /// The output buffers; null when the op had no `outputs` key (not the same as `[]`).
    pub outputs: Option<Vec<TensorMeta>>,
}
