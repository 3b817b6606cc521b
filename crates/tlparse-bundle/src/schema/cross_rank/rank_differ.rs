//! `rank_differ`: which streams logged the same payload for each artifact of each compile.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AlignedCompileRef, StreamGroup};

/// `tables/cross_rank/rank_differ.json.zst`: every artifact key (compile, kind, name,
/// occurrence) of any stream, compiles aligned by the code they compiled (`compile_alignment`), with the streams grouped by identical payload (same blob id) and
/// the streams that lack it. "Rank 3's `dynamo_output_graph` of `forward` differs from ranks 0-2":
/// fetch one blob per group and diff them. Payloads are compared byte for byte, so a device
/// string (`cuda:0` vs `cuda:1`) makes graphs differ. Present when a stream logged an artifact
/// with a payload. `rows` counts `artifacts`.
///
/// Source: the `artifacts` (and `unattributed`) lists of each stream's `compile_directory`;
/// entries without a payload and `str` entries are left out (`chromium_event`s are not in those
/// lists).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RankDiffer {
    /// Rows of `artifacts`.
    pub keys: u64,
    /// Rows whose `status` is `identical`.
    pub identical: u64,
    /// Rows whose `status` is `differs`.
    pub differs: u64,
    /// Rows whose `status` is `same_where_present`.
    pub same_where_present: u64,
    /// Rows with a non-empty `missing` (any status).
    pub with_missing: u64,
    /// One row per stream, in `members` order.
    pub streams: Vec<StreamDiffer>,
    /// One row per artifact key: by compile in `compile_alignment` order (keys outside any
    /// compile last), then in order of first appearance (the first stream's log order, then keys only
    /// later streams have).
    pub artifacts: Vec<ArtifactComparison>,
}

/// How one stream compares with the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamDiffer {
    /// The stream id.
    pub stream: String,
    /// Keys the stream has.
    pub present: u64,
    /// Keys the stream lacks (some other stream has them).
    pub missing: u64,
    /// Keys where its payload matches no other stream's while another stream has the key: the
    /// stream is the odd one out there.
    pub alone: u64,
}

/// Whether the streams agree on one artifact key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactStatus {
    /// Every stream has it, with the same payload.
    Identical,
    /// The streams that have it logged different payloads (some may also lack it).
    Differs,
    /// The streams that have it logged the same payload, but some streams lack it.
    SameWherePresent,
}

/// One artifact key across the streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactComparison {
    /// The compile, with each stream's compile id for it; null for artifacts logged outside
    /// any compile (e.g. `graph_execution`).
    pub compile: Option<AlignedCompileRef>,
    /// The entry's kind (`artifact`, `dynamo_output_graph`, `inductor_output_code`, ...).
    pub kind: String,
    /// The entry's name as in `compile_directory` (the format's one naming rule: no name holds
    /// a content hash, so output code is `inductor_output_code` on every rank).
    pub name: String,
    /// Which occurrence of this kind and name within the compile (0 for the first), counted in
    /// each stream's log order.
    pub occurrence: u32,
    /// Whether the streams agree.
    pub status: ArtifactStatus,
    /// The streams that have it, grouped by payload, the group of the first stream first.
    pub groups: Vec<PayloadGroup>,
    /// Streams that lack it, in `members` order.
    pub missing: Vec<String>,
}

/// Streams that logged the same payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PayloadGroup {
    /// The streams.
    #[serde(flatten)]
    pub group: StreamGroup,
    /// Blob id of the payload.
    pub blob: String,
    /// Payload size in bytes.
    pub size: u64,
}
