//! `rank_differ`: which streams logged the same payload for each artifact of each compile.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::AlignedCompileLabel;
use crate::schema::tables::GraphRole;

/// `tables/cross_rank/rank_differ.json.zst`: every artifact key (compile, name, graph, occurrence)
/// of any stream, compiles aligned by the code they compiled (`compile_alignment`, final attempts
/// only), with the streams grouped by identical payload (same blob id) and the streams that lack
/// it. Payloads whose bytes differ are compared again once what is volatile by nature (object
/// ids, addresses, compile ids, temporary paths, pids, measured times: the rule of
/// docs/cross_rank/rank_differ.md) is masked: groups equal once masked share a `variant`, and a
/// key whose groups are all one variant is `same_up_to_ids`. "Rank 3's `dynamo_output_graph` of
/// `forward` differs from ranks 0-2": fetch one blob per variant and diff them. A device string
/// (`cuda:0` vs `cuda:1`) is content. Present when a stream logged an artifact with a payload.
/// `rows` counts `artifacts`.
///
/// A row names only the streams that differ from the majority: the largest payload group holds
/// "every other stream that has the key" without listing them, and the streams that lack a key
/// are listed only when they are fewer than those that have it (else every group is listed and
/// the streams of no group lack it). A row's size grows with the streams outside its largest
/// side, not with the number of streams; `streams` (every stream, in `members` order) is what
/// the unlisted streams are taken from.
///
/// Source: the `artifacts` (and `unattributed`) lists of each stream's `compile_directory`
/// (attempts that restarted are left out: only a frame compile's final attempt is compared);
/// entries without a payload and `str` entries are left out (`chromium_event`s are not in those
/// lists).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RankDiffer {
    /// Rows of `artifacts`.
    pub keys: u64,
    /// Rows whose `status` is `identical`.
    pub identical: u64,
    /// Rows whose `status` is `differs`.
    pub differs: u64,
    /// Rows whose `status` is `same_up_to_ids`.
    pub same_up_to_ids: u64,
    /// Rows whose `status` is `same_where_present`.
    pub same_where_present: u64,
    /// Rows some stream lacks (`present` below the number of streams; any status).
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
#[schemars(deny_unknown_fields)]
pub struct StreamDiffer {
    /// The stream id.
    pub stream: String,
    /// Keys the stream has.
    pub present: u64,
    /// Keys the stream lacks (some other stream has them).
    pub missing: u64,
    /// Keys where its payload matches no other stream's while another stream has the key: the
    /// stream is the odd one out there (byte for byte: a payload that differs only in ids counts).
    pub alone: u64,
}

/// Whether the streams agree on one artifact key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactStatus {
    /// Every stream has it, with the same payload.
    Identical,
    /// Payloads differ even once ids are masked (some streams may lack it).
    Differs,
    /// Payloads equal once ids are masked (some streams may lack it).
    SameUpToIds,
    /// The streams that have it logged the same payload, but some streams lack it.
    SameWherePresent,
}

/// One artifact key across the streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ArtifactComparison {
    /// The compile (its index and label in `compile_alignment`, whose row gives each stream's own
    /// compile id for it); null for artifacts logged outside any compile (e.g. `graph_execution`).
    pub compile: Option<AlignedCompileLabel>,
    /// The entry's kind (`artifact`, `dynamo_output_graph`, `inductor_output_code`, ...), as the
    /// first stream that has the key logged it (a cache hit logs some graphs under their own
    /// kind: the key is the name).
    pub kind: String,
    /// The entry's name as in `compile_directory` (the format's one naming rule: no name holds
    /// a content hash, so output code is `inductor_output_code` on every rank).
    pub name: String,
    /// The AOT graph it was produced for (`compile_directory`'s `graph` of the artifact:
    /// forward, backward or inference); absent when not one graph's. Part of the key: a rank
    /// whose FX cache hit logged no post-grad graph for the forward has no forward key, and its
    /// backward graph is still compared with the others' backward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphRole>,
    /// Which occurrence of this name and graph within the compile (0 for the first), counted in
    /// each stream's log order.
    pub occurrence: u32,
    /// Whether the streams agree.
    pub status: ArtifactStatus,
    /// How many streams have it (the others lack it).
    pub present: u64,
    /// The streams that have it, grouped by payload, the group of the first stream first. When
    /// `missing` is listed, the largest group (the first of them on a tie) lists no `streams`:
    /// it holds every stream that has the key and is in no other group.
    pub groups: Vec<PayloadGroup>,
    /// The streams that lack it, in `members` order (`[]` when every stream has it), listed
    /// when no more streams lack it than have it. Left out otherwise: every group lists its
    /// streams then, and the streams in no group lack it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<String>>,
    /// Of the `missing` streams (when listed), those that logged an `fx_graph_cache_hit` for
    /// the same compile and graph: an FX graph cache hit skips Inductor's compile, so it logs no
    /// post-grad graph. Left out when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_on_cache_hit: Option<Vec<String>>,
    /// For a `differs` row: the first line where a group of another variant than the largest
    /// differs from the largest's, once masked. Absent on other rows, and when the payloads could
    /// not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<LineDifference>,
}

/// Where two variants of a payload first differ, line by line, masked (`<?>` for what is
/// volatile): the odd variant's line and the largest variant's line at the same place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LineDifference {
    /// The `variant` of the odd group described (its first group).
    pub variant: u32,
    /// The line number (from 1) where they first differ.
    pub line: u64,
    /// That line of the odd variant (empty past its end), clipped to 160 characters around the
    /// first differing character (`…` marks a cut).
    pub text: String,
    /// That line of the largest variant (empty past its end), clipped the same way.
    pub usual: String,
}

/// Streams that logged the same payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PayloadGroup {
    /// How many streams the group holds.
    pub count: u64,
    /// The streams, in `members` order; left out for the largest group when the row lists
    /// `missing` (see `groups`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<Vec<String>>,
    /// Blob id of the payload.
    pub blob: String,
    /// Payload size in bytes.
    pub size: u64,
    /// Groups with the same variant logged payloads equal once ids are masked: 0 for the first
    /// group's, then numbered in order of first group. Every group is its own variant when the
    /// payloads could not be read.
    pub variant: u32,
}
