//! `cache_divergence`: which streams got the same compile-cache outcomes, compile by compile
//! (aligned by code).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AlignedCompileRef, StreamGroup};
use crate::schema::tables::CacheResult;

/// `tables/cross_rank/cache_divergence.json.zst`: each stream's cache outcome sequence (per
/// compile, what each cache did), the groups of streams with equal sequences, and per compile
/// whether the streams that compiled it got different outcomes. Compiles are aligned by the code
/// they compiled (`compile_alignment`), so a rank whose frame ids are shifted is compared with
/// the others' compiles of the same code. It tells "rank 3 missed the
/// cache where the others hit" apart from "rank 3 did not compile this at all". Present when a
/// stream logged a cache lookup. `rows` counts `compiles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CacheDivergence {
    /// What splits the streams into several groups, if anything.
    pub divergence: CacheDivergenceKind,
    /// Groups of streams with equal sequences, the group of the first stream first. Every stream
    /// is in exactly one group (a stream with no lookup has an empty sequence).
    pub groups: Vec<CacheSequenceGroup>,
    /// One row per stream, in `members` order.
    pub streams: Vec<StreamCacheCounts>,
    /// One row per aligned compile with a lookup on any stream, in `compile_alignment` order;
    /// then, if any stream logged lookups outside any compile, a row with a null `compile`.
    pub compiles: Vec<CompileOutcomes>,
    /// Rows of `compiles` whose `differs` is true.
    pub differing_compiles: u64,
    /// Rows of `compiles` with a non-empty `missing`.
    pub compiles_with_missing: u64,
    /// Rows of `compiles` with a non-empty `no_lookups`.
    pub compiles_without_lookups: u64,
}

/// Why the streams' sequences differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheDivergenceKind {
    /// One group: every stream got the same outcomes for the same compiles.
    None,
    /// Several groups, but outcomes agree wherever streams looked up the same compile. The split
    /// comes only from compiles some streams did not make, or compiled without a lookup (e.g. a
    /// compile that failed before reaching the cache).
    MissingCompiles,
    /// On at least one compile, streams that looked up the cache got different outcomes.
    /// Compiles or lookups may also be missing.
    Outcomes,
}

/// Streams whose cache outcome sequences are equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CacheSequenceGroup {
    /// The streams.
    #[serde(flatten)]
    pub group: StreamGroup,
    /// Their sequence: every compile for which they logged a lookup, in `compile_alignment`
    /// order (the row with a null `compile` last).
    pub sequence: Vec<CompileCacheOutcomes>,
}

/// The outcomes of one compile's lookups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileCacheOutcomes {
    /// The compile, with each stream's compile id for it; null for lookups outside any compile.
    pub compile: Option<AlignedCompileRef>,
    /// Its lookups, by cache name, then in log order within a cache.
    pub outcomes: Vec<CacheOutcomeItem>,
}

/// One lookup's cache and outcome.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CacheOutcomeItem {
    /// The cache (`fx_graph_cache`, `aotautograd_cache`, ...), as in the stream's
    /// `cache_outcomes`.
    pub cache: String,
    /// What it did.
    pub outcome: CacheResult,
}

/// One stream's lookups, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StreamCacheCounts {
    /// The stream id.
    pub stream: String,
    /// Index of its group in `groups`.
    pub group: u32,
    /// Compiles with a lookup (the outside-any-compile row counts as one).
    pub compiles: u64,
    /// Lookups that hit.
    pub hit: u64,
    /// Lookups that missed.
    pub miss: u64,
    /// Lookups that bypassed the cache.
    pub bypass: u64,
    /// Lookups skipped because the cache was disabled.
    pub disabled: u64,
}

/// One compile's outcomes across the streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileOutcomes {
    /// The compile, with each stream's compile id for it; null for lookups outside any compile
    /// (every stream counts as having that row).
    pub compile: Option<AlignedCompileRef>,
    /// The streams that looked up the cache for the compile, grouped by equal outcomes, the
    /// group of the first stream first.
    pub groups: Vec<OutcomeGroup>,
    /// Streams that made the compile but logged no lookup for it (e.g. the compile failed
    /// before reaching the cache), in `members` order. Not counted as different.
    pub no_lookups: Vec<String>,
    /// Streams that did not make the compile at all, in `members` order. Missing is not
    /// different.
    pub missing: Vec<String>,
    /// True when the streams that looked up the cache for the compile got different outcomes
    /// (several groups).
    pub differs: bool,
}

/// Streams that got the same outcomes for one compile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OutcomeGroup {
    /// The streams.
    #[serde(flatten)]
    pub group: StreamGroup,
    /// Their lookups, by cache name, then in log order within a cache.
    pub outcomes: Vec<CacheOutcomeItem>,
}
