//! `cache_outcomes`: every compile cache lookup (FX graph cache, AOTAutograd cache, ...) per
//! compile, with the reasons and details its payload gives.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `tables/<stream>/cache_outcomes.json.zst`: the cache lookups of each compile id, a verdict per
/// cache and compile, and counts per cache over the stream. `rows` counts `compiles`.
///
/// A lookup is an `artifact` named `*cache_hit*`, `*cache_miss*`, `*cache_bypass*` or
/// `*cache_disabled*` (`fx_graph_cache_miss`, `aotautograd_cache_hit`, `fx_graph_bundled_cache_hit`,
/// `precompile_cache_bypass`, ...); an `artifact` with another `*cache_*` name (older torch's
/// `aotautograd_cache_hash`) whose JSON payload has a `cache_state` of `hit`, `miss` or `bypass`;
/// or a `chromium_event` instant named `*_cache_disabled` (torch logs no artifact for some of
/// those) unless the same compile has a `disabled` artifact for that cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CacheOutcomes {
    /// One row per compile id with a lookup or a non-zero cache counter in its
    /// `compilation_metrics`, in order of first appearance in the stream; then, if any, a row with
    /// a null `compile_id` for lookups outside any compile.
    pub compiles: Vec<CompileCaches>,
    /// One row per cache over the whole stream, by cache name.
    pub summary: Vec<CacheSummary>,
}

/// The cache lookups of one compile id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileCaches {
    /// The compile id as displayed (`[0/1]`); null for lookups outside any compile.
    pub compile_id: Option<String>,
    /// What each cache did for this compile, in order of its first lookup.
    pub caches: Vec<CacheVerdict>,
    /// Every lookup, in log order.
    pub lookups: Vec<CacheLookup>,
    /// Cache counters of the compile's `compilation_metrics`: numeric fields whose name contains
    /// `cache` (`aotautograd_local_cache_hit_count`, `inductor_fx_local_cache_miss_count`,
    /// `remote_cache_time_saved_s`, ...), except Dynamo's `cache_size` and
    /// `accumulated_cache_size`; zero and null values are left out.
    pub metrics: BTreeMap<String, f64>,
}

/// What one cache did for one compile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CacheVerdict {
    /// The cache: the lookup name up to and including `cache` (`fx_graph_cache`,
    /// `aotautograd_cache`, `fx_graph_bundled_cache`, ...).
    pub cache: String,
    /// The outcome of every lookup, or `mixed` when they differ (e.g. the forward graph hit and
    /// the backward graph missed).
    pub outcome: CacheVerdictKind,
    /// Hits.
    pub hit: u64,
    /// Misses.
    pub miss: u64,
    /// Bypasses (the graph could not be cached).
    pub bypass: u64,
    /// Lookups skipped because the cache was disabled.
    pub disabled: u64,
}

/// One cache lookup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CacheLookup {
    /// The cache (see `CacheVerdict::cache`).
    pub cache: String,
    /// The outcome.
    pub outcome: CacheResult,
    /// The artifact's or trace event's name as logged.
    pub name: String,
    /// Where it was read from.
    pub source: CacheLookupSource,
    /// `seq` of its entry in the stream's index.
    pub seq: u64,
    /// Blob id of the payload (the artifact's JSON, or the trace event); null without a payload.
    pub blob: Option<String>,
    /// The cache key (`key`), when logged.
    pub key: Option<String>,
    /// `cache_status_detailed` (e.g. `full_miss`, `hit`), when logged.
    pub status: Option<String>,
    /// Why: `cache_bypass_reason` (or `reason`, `_reason`) of the payload; for a payload that is a
    /// JSON string or not JSON, its first line.
    pub reason: Option<String>,
    /// Time the hit saved, in ms: `time_saved_ms`, or `time_saved_ns` / 1e6.
    pub time_saved_ms: Option<f64>,
    /// Time the missed compile took, in ms (`time_taken_ns` / 1e6), when logged.
    pub time_taken_ms: Option<f64>,
    /// `cache_status_guard_expr`: the guard under which a cached dynamic-shape entry applies.
    pub guard_expr: Option<String>,
    /// Number of the key's components (`components`: lines `[hash] name: value`, one per input
    /// of the key: `gm`, `example_inputs[0]`, every `inductor_config[...]` entry, ...). They are
    /// left in the blob (hundreds per FX graph lookup); diffing two lookups' blobs shows which
    /// component changed.
    pub components: u64,
    /// The payload's other top-level fields that are strings, numbers or booleans
    /// (`cache_event_time`, `cache_bypass_hard_exception`, `forward_time_saved_ms`,
    /// `triton_bundler_meta`, ...).
    pub details: BTreeMap<String, Value>,
}

/// The outcome of one lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheResult {
    /// Found in the cache.
    Hit,
    /// Not found; compiled and (usually) saved.
    Miss,
    /// Not cacheable; compiled without the cache (see `reason`).
    Bypass,
    /// The cache was turned off.
    Disabled,
}

/// The outcome of all of a compile's lookups in one cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheVerdictKind {
    /// Every lookup hit.
    Hit,
    /// Every lookup missed.
    Miss,
    /// Every lookup bypassed.
    Bypass,
    /// The cache was disabled.
    Disabled,
    /// The lookups had different outcomes.
    Mixed,
}

/// Where a lookup was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheLookupSource {
    /// An `artifact` entry.
    Artifact,
    /// A `chromium_event` instant.
    ChromiumEvent,
}

/// One cache over the whole stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CacheSummary {
    /// The cache.
    pub cache: String,
    /// Hits.
    pub hit: u64,
    /// Misses.
    pub miss: u64,
    /// Bypasses.
    pub bypass: u64,
    /// Disabled lookups.
    pub disabled: u64,
    /// Rows of `compiles` with a lookup in this cache.
    pub compiles: u64,
    /// Summed `time_saved_ms` of the hits (ms).
    pub time_saved_ms: f64,
}
