//! Cache outcomes per compile.

use tlparse_build::schema::tables::{CacheLookupSource, CacheOutcomes, CacheResult, CacheVerdictKind, CompileCaches};

use super::{built, snapshot};

fn cache_outcomes(rel: &str) -> (CacheOutcomes, serde_json::Value) {
    let b = built(rel);
    let v = b.table("cache_outcomes");
    (serde_json::from_value(v.clone()).unwrap(), v)
}

fn compile<'a>(t: &'a CacheOutcomes, id: &str) -> &'a CompileCaches {
    t.compiles.iter().find(|c| c.compile_id.as_deref() == Some(id)).unwrap_or_else(|| panic!("no {id}"))
}

/// Each cache's verdict for a compile.
fn verdicts(c: &CompileCaches) -> Vec<(&str, CacheVerdictKind)> {
    c.caches.iter().map(|v| (v.cache.as_str(), v.outcome)).collect()
}

#[test]
fn cold_then_warm_cache() {
    // Same script twice on one inductor cache. cache_cold: [0/0] (training: forward and backward
    // graphs) logs aotautograd_cache_miss then 2 fx_graph_cache_miss; [1/0] one of each.
    // cache_warm: [0/0] logs 2 fx_graph_cache_hit then aotautograd_cache_hit, whose payload says
    // time_saved_ms 11201 (forward 9967 + backward 1234); its compilation_metrics count
    // inductor_fx_local_cache_hit_count 2 and aotautograd_local_cache_hit_count 1.
    let (cold, _) = cache_outcomes("torch-2.15/cache_cold");
    let c = compile(&cold, "[0/0]");
    assert_eq!(
        verdicts(c),
        [("aotautograd_cache", CacheVerdictKind::Miss), ("fx_graph_cache", CacheVerdictKind::Miss)]
    );
    assert_eq!(c.caches[1].miss, 2);
    assert!(c.lookups.iter().all(|l| l.status.as_deref() == Some("full_miss")));
    let (warm, v) = cache_outcomes("torch-2.15/cache_warm");
    let c = compile(&warm, "[0/0]");
    assert_eq!(verdicts(c), [("fx_graph_cache", CacheVerdictKind::Hit), ("aotautograd_cache", CacheVerdictKind::Hit)]);
    let aot = c.lookups.iter().find(|l| l.cache == "aotautograd_cache").unwrap();
    assert_eq!(aot.time_saved_ms, Some(11201.0));
    assert_eq!(aot.details["forward_time_saved_ms"], 9967.0);
    assert_eq!(c.metrics["inductor_fx_local_cache_hit_count"], 2.0);
    assert_eq!(c.metrics["aotautograd_local_cache_hit_count"], 1.0);
    assert!(!c.metrics.contains_key("cache_size"));
    let summary: Vec<(&str, u64, u64)> = warm.summary.iter().map(|s| (s.cache.as_str(), s.hit, s.miss)).collect();
    assert_eq!(summary, [("aotautograd_cache", 2, 0), ("fx_graph_cache", 3, 0)]);
    snapshot("cache_outcomes__cache_warm", &v);
}

#[test]
fn bypass_reasons_and_mixed_outcomes() {
    // cache_hit_miss.log: compile [1/0] logs fx_graph_cache miss, hit, miss and three
    // aotautograd_cache_bypass, each with cache_bypass_reason "Unsupported call_function target
    // flex_attention. ..." and cache_bypass_hard_exception false.
    let (t, v) = cache_outcomes("tlparse-tests/cache_hit_miss.log");
    let c = compile(&t, "[1/0]");
    assert_eq!(
        verdicts(c),
        [("fx_graph_cache", CacheVerdictKind::Mixed), ("aotautograd_cache", CacheVerdictKind::Bypass)]
    );
    let fx: Vec<CacheResult> = c.lookups.iter().filter(|l| l.cache == "fx_graph_cache").map(|l| l.outcome).collect();
    assert_eq!(fx, [CacheResult::Miss, CacheResult::Hit, CacheResult::Miss]);
    let bypasses: Vec<_> = c.lookups.iter().filter(|l| l.outcome == CacheResult::Bypass).collect();
    assert_eq!(bypasses.len(), 3);
    assert!(
        bypasses.iter().all(|l| l
            .reason
            .as_deref()
            .unwrap()
            .starts_with("Unsupported call_function target flex_attention"))
    );
    assert_eq!(bypasses[0].details["cache_bypass_hard_exception"], false);
    snapshot("cache_outcomes__cache_hit_miss", &v);
}

#[test]
fn aotautograd_outcome_hidden_in_a_hash_artifact_is_shown() {
    // pytorch#141788: older torch logged the AOTAutograd lookup as `aotautograd_cache_hash`, so
    // tlparse showed no hit/miss for it. simple.log's payload has "cache_state": "miss".
    let (t, _) = cache_outcomes("tlparse-tests/simple.log");
    let c = compile(&t, "[0/0]");
    assert_eq!(
        verdicts(c),
        [("fx_graph_cache", CacheVerdictKind::Miss), ("aotautograd_cache", CacheVerdictKind::Miss)]
    );
    assert_eq!(c.lookups[1].name, "aotautograd_cache_hash");
    // artifacts.log's fx_graph_cache_hash has no cache_state: not a lookup, so no table.
    assert!(!built("tlparse-tests/artifacts.log").has_table("cache_outcomes"));
}

#[test]
fn disabled_cache_from_trace_events() {
    // multi_rank_schedule rank 2 logs no cache artifact; compiles [0/0] and [1/0] each log a
    // chromium instant `fx_graph_cache_disabled`.
    let (t, _) = cache_outcomes("tlparse-tests/multi_rank_schedule/dedicated_log_torch_trace_rank_2.log");
    for id in ["[0/0]", "[1/0]"] {
        let c = compile(&t, id);
        assert_eq!(verdicts(c), [("fx_graph_cache", CacheVerdictKind::Disabled)]);
        assert_eq!(c.lookups[0].source, CacheLookupSource::ChromiumEvent);
    }
}

#[test]
fn dynamic_shape_hits_keep_their_guard() {
    // pgo_warm reuses the cold run's automatic-dynamic profile: [0/0] hits both caches, and the
    // payloads carry cache_status_guard_expr "2 <= L['t0'] and L['t0'] <= 4096".
    let (t, v) = cache_outcomes("torch-2.15/pgo_warm");
    let c = compile(&t, "[0/0]");
    assert!(c.caches.iter().all(|v| v.outcome == CacheVerdictKind::Hit));
    assert!(c.lookups.iter().all(|l| l.guard_expr.as_deref() == Some("2 <= L['t0'] and L['t0'] <= 4096")));
    snapshot("cache_outcomes__pgo_warm", &v);
}

#[test]
fn graph_breaks_hits_and_misses_per_compile() {
    // graph_breaks: 11 compiles look up the caches; [6/1] and [15/0] hit both caches, the other
    // 9 miss both (the compile ids with an aotautograd_cache_* artifact, by hand).
    let (t, _) = cache_outcomes("torch-2.15/graph_breaks");
    assert_eq!(t.compiles.len(), 11);
    let hits: Vec<&str> = t
        .compiles
        .iter()
        .filter(|c| c.caches.iter().all(|v| v.outcome == CacheVerdictKind::Hit))
        .map(|c| c.compile_id.as_deref().unwrap())
        .collect();
    assert_eq!(hits, ["[6/1]", "[15/0]"]);
    let aot = t.summary.iter().find(|s| s.cache == "aotautograd_cache").unwrap();
    assert_eq!((aot.hit, aot.miss, aot.compiles), (2, 9, 11));
}
