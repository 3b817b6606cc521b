//! The cross-rank tables' types: what differs between the streams (ranks) of one bundle. Each
//! table is `tables/cross_rank/<name>.json.zst` with its schema
//! `schema/cross_rank/<name>.schema.json`; the manifest's `cross_rank` section lists them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::TableRef;

pub mod cache_divergence;
pub mod compile_alignment;
pub mod compile_time_imbalance;
pub mod rank_differ;
pub mod rank_findings;
pub mod runtime_estimations;
pub mod tensor_meta;

pub use cache_divergence::CacheDivergence;
pub use compile_alignment::{AlignedCompileLabel, AlignedCompileRef, CompileAlignment, StreamCompileId};
pub use compile_time_imbalance::CompileTimeImbalance;
pub use rank_differ::RankDiffer;
pub use rank_findings::RankFindings;
pub mod collective_schedules;
pub mod execution_order;
pub use collective_schedules::CollectiveSchedules;
pub use execution_order::ExecutionOrder;
pub use runtime_estimations::RuntimeEstimations;
pub use tensor_meta::CrossRankTensorMeta;

/// Directory of the cross-rank tables, under `tables/`.
pub const DIR: &str = crate::paths::CROSS_RANK_DIR;

/// The manifest's `cross_rank` section, present when the bundle has two streams or more.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CrossRank {
    /// The streams compared, in the order of the manifest's `streams`. Every cross-rank table
    /// names streams by `stream` id; show them by `label`.
    pub members: Vec<RankMember>,
    /// The cross-rank tables with at least one row, by name. Each file is zstd-compressed JSON
    /// following `schema/cross_rank/<name>.schema.json`.
    pub tables: BTreeMap<String, TableRef>,
    /// Path of a Chrome trace-event file (gzip-compressed JSON, `tables/cross_rank/chrome_trace.json.gz`)
    /// merging every stream's `chromium_event`s: `members[i]`'s events are process `pid` i, named
    /// by its `label`; null when no stream logged any.
    pub chrome_trace: Option<String>,
    /// Path of a Chrome trace-event file (gzip-compressed JSON) of inductor's runtime
    /// estimates: one process per member, one thread per graph (per aligned compile: the same row
    /// in every process), its ops laid end to end with their estimated durations; null when no stream has runtime estimates.
    pub runtime_estimates_trace: Option<String>,
}

/// One stream, as the cross-rank tables know it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RankMember {
    /// The stream id (as in the manifest's `streams`).
    pub stream: String,
    /// The stream's rank (from its envelopes, else its file name); null when neither has one.
    pub rank: Option<u32>,
    /// The rank in the stream's file name (`..._rank_N...`), when it has one. It can differ from
    /// `rank` when a file's entries name another rank; tlparse only knows this one.
    pub file_rank: Option<u32>,
    /// What to call the stream: `rank N` when N (the stream's rank, else its file rank) names
    /// no other stream, the stream id otherwise.
    pub label: String,
}

/// Streams that agree on something, named by stream id in `members` order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamGroup {
    /// The streams of the group, in `members` order.
    pub streams: Vec<String>,
}
