//! `cache_divergence`: which streams got the same compile-cache outcomes, aligned by compile id.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::StreamGroup;
use crate::schema::tables::CacheResult;

/// `tables/cross_rank/cache_divergence.json.zst`: each stream's cache outcome sequence (per
/// compile id, what each cache did), the groups of streams with equal sequences, and per compile
/// id whether the streams that compiled it got different outcomes. It tells "rank 3 missed the
/// cache where the others hit" apart from "rank 3 did not compile this at all". Present when a
/// stream logged a cache lookup. `rows` counts `compile_ids`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheDivergence {
    /// What splits the streams into several groups, if anything.
    pub divergence: CacheDivergenceKind,
    /// Groups of streams with equal sequences, the group of the first stream first. Every stream
    /// is in exactly one group (a stream with no lookup has an empty sequence).
    pub groups: Vec<CacheSequenceGroup>,
    /// One row per stream, in `members` order.
    pub streams: Vec<StreamCacheCounts>,
    /// One row per compile id with a lookup on any stream, in compile-id order; then, if any
    /// stream logged lookups outside any compile, a row with a null `compile_id`.
    pub compile_ids: Vec<CompileIdOutcomes>,
    /// Rows of `compile_ids` whose `differs` is true.
    pub differing_compile_ids: u64,
    /// Rows of `compile_ids` with a non-empty `missing`.
    pub compile_ids_with_missing: u64,
    /// Rows of `compile_ids` with a non-empty `no_lookups`.
    pub compile_ids_without_lookups: u64,
}

/// Why the streams' sequences differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheDivergenceKind {
    /// One group: every stream got the same outcomes for the same compile ids.
    None,
    /// Several groups, but wherever streams looked up the cache for the same compile id their
    /// outcomes agree: the split comes only from compile ids some streams do not have, or
    /// compiled without a lookup (e.g. a compile that failed before reaching the cache).
    MissingCompiles,
    /// On at least one compile id, streams that looked up the cache got different outcomes
    /// (compile ids or lookups may also be missing).
    Outcomes,
}

/// Streams whose cache outcome sequences are equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheSequenceGroup {
    /// The streams.
    #[serde(flatten)]
    pub group: StreamGroup,
    /// Their sequence: every compile id for which they logged a lookup, in compile-id order
    /// (the row with a null compile id last).
    pub sequence: Vec<CompileCacheOutcomes>,
}

/// The outcomes of one compile id's lookups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompileCacheOutcomes {
    /// The compile id as displayed (`[0/1]`); null for lookups outside any compile.
    pub compile_id: Option<String>,
    /// Its lookups, by cache name, then in log order within a cache.
    pub outcomes: Vec<CacheOutcomeItem>,
}

/// One lookup's cache and outcome.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheOutcomeItem {
    /// The cache (`fx_graph_cache`, `aotautograd_cache`, ...), as in the stream's
    /// `cache_outcomes`.
    pub cache: String,
    /// What it did.
    pub outcome: CacheResult,
}

/// One stream's lookups, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamCacheCounts {
    /// The stream id.
    pub stream: String,
    /// Index of its group in `groups`.
    pub group: u32,
    /// Compile ids with a lookup (the outside-any-compile row counts as one).
    pub compile_ids: u64,
    /// Lookups that hit.
    pub hit: u64,
    /// Lookups that missed.
    pub miss: u64,
    /// Lookups that bypassed the cache.
    pub bypass: u64,
    /// Lookups skipped because the cache was disabled.
    pub disabled: u64,
}

/// One compile id's outcomes across the streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompileIdOutcomes {
    /// The compile id as displayed; null for lookups outside any compile (every stream counts as
    /// having that row).
    pub compile_id: Option<String>,
    /// The streams that looked up the cache for the compile id, grouped by equal outcomes, the
    /// group of the first stream first.
    pub groups: Vec<OutcomeGroup>,
    /// Streams that have the compile id but logged no lookup for it (e.g. the compile failed
    /// before reaching the cache), in `members` order. Not counted as different.
    pub no_lookups: Vec<String>,
    /// Streams that do not have the compile id at all (not in their `compile_directory`), in
    /// `members` order. Missing is not different.
    pub missing: Vec<String>,
    /// True when the streams that looked up the cache for the compile id got different outcomes
    /// (several groups).
    pub differs: bool,
}

/// Streams that got the same outcomes for one compile id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutcomeGroup {
    /// The streams.
    #[serde(flatten)]
    pub group: StreamGroup,
    /// Their lookups, by cache name, then in log order within a cache.
    pub outcomes: Vec<CacheOutcomeItem>,
}
