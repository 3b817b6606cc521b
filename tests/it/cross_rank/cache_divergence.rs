//! `cache_divergence`: cache outcomes per stream and compile id, "different" kept apart from
//! "missing".

use serde_json::Value;
use tlparse_build::bundle::reader::Bundle;

use super::{built_ranks, ids, label, own_ids};
use crate::tables::{rows, snapshot};
use crate::util::{build, fixture};

/// A `(cache, outcome)` pair.
type Outcome<'a> = (&'a str, &'a str);

/// `(cache, outcome)` pairs of an outcome list.
fn outcomes(list: &Value) -> Vec<Outcome<'_>> {
    list.as_array().unwrap().iter().map(|o| (o["cache"].as_str().unwrap(), o["outcome"].as_str().unwrap())).collect()
}

const HIT_HIT: [Outcome; 2] = [("aotautograd_cache", "hit"), ("fx_graph_cache", "hit")];
const MISS_MISS: [Outcome; 2] = [("aotautograd_cache", "miss"), ("fx_graph_cache", "miss")];

/// multi_rank_logs, checked in the raw logs (artifacts named `*cache_hit*`/`*cache_miss*` per
/// compile id): rank 1 has (fx_graph_cache_hit, aotautograd_cache_hit) for `[0/0]`..`[0/9]` and
/// both misses for `[0/10]`..`[0/14]`; rank 3 both hits for `[0/0]`..`[0/6]`; ranks 0 and 2 no
/// cache artifact (their one compile `[0/0]` failed). tlparse's emoji strings give the same three
/// groups (rank 1 ✅×20 ❌×10, rank 3 ✅×14, ranks 0/2 empty), but cannot say that on the shared
/// compiles ranks 1 and 3 agree: the split comes from compiles rank 3 does not have. Ranks 0
/// and 2 compiled another function (`fn`, test_misc.py:10755) than ranks 1 and 3 (`kernel`,
/// gen_many_frames.py:6), so they are missing from every `kernel` row, not "without lookup".
#[test]
fn multi_rank_logs_splits_on_missing_compiles_not_outcomes() {
    let b = built_ranks("multi_rank_logs");
    let t = b.cross("cache_divergence");
    snapshot("cross_rank_cache_divergence__multi_rank_logs", &t);
    assert_eq!(t["divergence"], "missing_compiles");
    assert_eq!(t["differing_compiles"], 0);

    let groups = rows(&t, "groups");
    let got: Vec<(Vec<&str>, usize)> =
        groups.iter().map(|g| (ids(&g["streams"]), g["sequence"].as_array().unwrap().len())).collect();
    assert_eq!(got, [(vec!["rank0", "rank2"], 0), (vec!["rank1"], 15), (vec!["rank3"], 7)]);
    for (i, c) in rows(&groups[1], "sequence").iter().enumerate() {
        assert_eq!(own_ids(c)[0], ("rank1", format!("[0/{i}]").as_str()));
        assert_eq!(outcomes(&c["outcomes"]), if i < 10 { HIT_HIT } else { MISS_MISS }, "[0/{i}]");
    }
    let counts: Vec<(&str, u64, u64, u64)> = rows(&t, "streams")
        .iter()
        .map(|s| {
            (
                s["stream"].as_str().unwrap(),
                s["group"].as_u64().unwrap(),
                s["hit"].as_u64().unwrap(),
                s["miss"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(counts, [("rank0", 0, 0, 0), ("rank1", 1, 20, 10), ("rank2", 0, 0, 0), ("rank3", 2, 14, 0)]);

    let cids = rows(&t, "compiles");
    assert_eq!(cids.len(), 15, "the 15 compiles of `kernel`; `fn` had no lookup");
    for c in &cids[..7] {
        assert_eq!(c["differs"], false);
        assert_eq!(ids(&c["missing"]), ["rank0", "rank2"], "{}", label(c));
        assert!(c["no_lookups"].as_array().unwrap().is_empty());
        assert_eq!(ids(&c["groups"][0]["streams"]), ["rank1", "rank3"]);
    }
    assert_eq!(outcomes(&cids[0]["groups"][0]["outcomes"]), HIT_HIT);
    assert_eq!(label(&cids[0]), "kernel (gen_many_frames.py:6)");
    for c in &cids[7..] {
        assert_eq!(ids(&c["missing"]), ["rank0", "rank2", "rank3"], "{}", label(c));
    }
}

/// multi_rank_runtime (raw logs): every rank logs (aotautograd_cache_miss, fx_graph_cache_miss)
/// for each of its compile ids; files 5 and 6 (streams rank1-1 and rank1-2) only compiled `[0/0]`
/// and `[0/1]`. tlparse reports "Diverging Cache hit/miss patterns" (❌×8 vs ❌×4); the outcomes
/// do not differ on any shared compile.
#[test]
fn multi_rank_runtime_outcomes_agree_where_compiles_are_shared() {
    let b = built_ranks("multi_rank_runtime");
    let t = b.cross("cache_divergence");
    snapshot("cross_rank_cache_divergence__multi_rank_runtime", &t);
    assert_eq!(t["divergence"], "missing_compiles");
    let groups: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(groups, [vec!["rank0", "rank1-0", "rank2", "rank3", "rank4"], vec!["rank1-1", "rank1-2"]]);
    let got: Vec<(&str, usize, bool, Vec<&str>)> = rows(&t, "compiles")
        .iter()
        .map(|c| {
            for g in rows(c, "groups") {
                assert_eq!(outcomes(&g["outcomes"]), MISS_MISS);
            }
            (
                own_ids(c)[0].1,
                c["groups"].as_array().unwrap().len(),
                c["differs"].as_bool().unwrap(),
                ids(&c["missing"]),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("[0/0]", 1, false, vec![]),
            ("[0/1]", 1, false, vec![]),
            ("[0/2]", 1, false, vec!["rank1-1", "rank1-2"]),
            ("[0/3]", 1, false, vec!["rank1-1", "rank1-2"]),
        ]
    );
}

/// Identical ranks: messy_input's two copies of simple.log (one fx_graph_cache_miss artifact,
/// and an `aotautograd_cache_hash` artifact whose payload says `"cache_state": "miss"`), and
/// graph_exec_order (aot and fx misses on `[0/0]` and `[0/1]` on both ranks; tlparse: "Cache
/// hit/miss sequence: Consistent across ranks").
#[test]
fn consistent_ranks_do_not_diverge() {
    for (dir, compiles) in [("multi_rank_messy_input", 1), ("graph_exec_order", 2)] {
        let b = built_ranks(dir);
        let t = b.cross("cache_divergence");
        assert_eq!(t["divergence"], "none", "{dir}");
        let groups = rows(&t, "groups");
        assert_eq!(groups.len(), 1, "{dir}");
        let sequence = rows(&groups[0], "sequence");
        assert_eq!(sequence.len(), compiles, "{dir}");
        assert!(sequence.iter().all(|c| outcomes(&c["outcomes"]) == MISS_MISS), "{dir}");
    }
}

/// multi_rank_schedule has no cache hit/miss artifact, but each file logs two
/// `fx_graph_cache_disabled` chromium instants (grep), one per compile, which the per-stream
/// `cache_outcomes` reads as lookups: the table says the cache was disabled alike everywhere.
#[test]
fn disabled_caches_are_compared_too() {
    let b = built_ranks("multi_rank_schedule");
    let t = b.cross("cache_divergence");
    assert_eq!(t["divergence"], "none");
    let cids = rows(&t, "compiles");
    let got: Vec<&str> = cids.iter().map(label).collect();
    assert_eq!(got, ["graph_one (test2.py:28)", "graph_two (test2.py:52)"]);
    for c in cids {
        assert_eq!(ids(&c["groups"][0]["streams"]), ["rank0-0", "rank0-1", "rank0-2"]);
        assert_eq!(outcomes(&c["groups"][0]["outcomes"]), [("fx_graph_cache", "disabled")]);
    }
}

/// A real outcome difference: messy_input with rank 1's `fx_graph_cache_miss` envelope renamed
/// `fx_graph_cache_hit` (the payload, and so its md5, is untouched).
#[test]
fn a_changed_outcome_on_a_shared_compile_differs() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    for r in [0, 1] {
        let name = format!("dedicated_log_torch_trace_rank_{r}.log");
        let text = std::fs::read_to_string(fixture(&format!("tlparse-tests/multi_rank_messy_input/{name}"))).unwrap();
        let text = if r == 1 {
            let header = r#"{"artifact": {"name": "fx_graph_cache_miss""#;
            assert_eq!(text.matches(header).count(), 1);
            text.replace(header, r#"{"artifact": {"name": "fx_graph_cache_hit""#)
        } else {
            text
        };
        std::fs::write(logs.join(name), text).unwrap();
    }
    let (_out_dir, out, _) = build(&camino::Utf8PathBuf::from_path_buf(logs).unwrap());
    let t: Value = Bundle::open(&out).unwrap().cross_rank_table("cache_divergence").unwrap().unwrap();
    assert_eq!(t["divergence"], "outcomes");
    assert_eq!(t["differing_compiles"], 1);
    let row = &rows(&t, "compiles")[0];
    assert_eq!(row["differs"], true);
    let groups: Vec<(Vec<&str>, Vec<Outcome>)> =
        rows(row, "groups").iter().map(|g| (ids(&g["streams"]), outcomes(&g["outcomes"]))).collect();
    assert_eq!(
        groups,
        [
            (vec!["rank0"], MISS_MISS.to_vec()),
            (vec!["rank1"], vec![("aotautograd_cache", "miss"), ("fx_graph_cache", "hit")]),
        ]
    );
}

/// torch-2.15/ranks_shifted (raw logs): the four ranks shared one inductor cache directory, and
/// rank 2 compiled `forward` last (as `[1/0]`, after its own `rank_local_metric`), so its second
/// FX-graph lookup hit (`fx_graph_cache_hit`, rank 2's log line 5292, frame_id 1) where ranks 0,
/// 1 and 3 missed twice on `[0/0]`. Compared by compile id, rank 2's `[1/0]` would have been set
/// against the others' `sync_grads` `[1/0]`; aligned by code, `forward` is the one compile whose
/// outcomes differ.
#[test]
fn ranks_shifted_rank_2_hit_the_cache_on_forward() {
    let b = crate::tables::built("torch-2.15/ranks_shifted");
    let t = b.cross("cache_divergence");
    assert_eq!(t["divergence"], "outcomes");
    assert_eq!(t["differing_compiles"], 1);
    let differing: Vec<&Value> = rows(&t, "compiles").iter().filter(|c| c["differs"] == true).collect();
    let row = differing[0];
    assert_eq!(label(row), "forward (ranks_shifted.py:20)");
    assert_eq!(own_ids(row), [("rank0", "[0/0]"), ("rank1", "[0/0]"), ("rank2", "[1/0]"), ("rank3", "[0/0]")]);
    let groups: Vec<(Vec<&str>, Vec<Outcome>)> =
        rows(row, "groups").iter().map(|g| (ids(&g["streams"]), outcomes(&g["outcomes"]))).collect();
    let miss = ("fx_graph_cache", "miss");
    let aot_miss = ("aotautograd_cache", "miss");
    assert_eq!(
        groups,
        [
            (vec!["rank0", "rank1", "rank3"], vec![aot_miss, miss, miss]),
            (vec!["rank2"], vec![aot_miss, ("fx_graph_cache", "hit"), miss]),
        ]
    );
}
