//! `runtime_estimations`: each graph's estimated runtime across ranks, aligned by compile id.

use serde_json::Value;

use super::{built_ranks, ids, same_id};
use crate::tables::{rows, snapshot};

fn graph<'a>(t: &'a Value, compile_id: &str) -> &'a Value {
    rows(t, "graphs")
        .iter()
        .find(|g| !g["compile"].is_null() && same_id(g) == compile_id)
        .unwrap_or_else(|| panic!("no {compile_id}"))
}

/// multi_rank_runtime, checked by hand with python on the raw logs (payload lines joined, `sum`
/// of `estimated_runtime_ns` in op order, per `inductor_runtime_and_tensor_meta` artifact):
/// - `[0/0]`: files 0, 5, 6 13806088.656527853; file 1 14496393.089465443; file 2
///   15186697.522297116; file 3 15877001.955129309 (the largest); file 4 has no artifact for it
///   though it compiled `[0/0]` (its compile_directory has it);
/// - `[0/1]`: file 0 13859314.55187109, files 5/6 13859314.549121048 (0.00275 ns less: rank 0's
///   payload was hand-edited and lost a digit), file 4 16631177.458945258 (the largest);
/// - `[0/2]`, `[0/3]`: as `[0/1]` on files 0-4; files 5 and 6 never compiled them.
///
/// So per compile id (spec §2.3): `[0/0]` fastest 0/5/6 (13.806 ms), slowest 3 (15.877 ms),
/// Δ 2.071 ms (15%); `[0/1]` slowest 4 (16.631 ms), Δ 2.772 ms (20%). tlparse, aligning by graph
/// index, gives no deltas at all here (graph counts 4,4,4,4,3,2,2).
#[test]
fn multi_rank_runtime_deltas_per_compile_id() {
    let b = built_ranks("multi_rank_runtime");
    let t = b.cross("runtime_estimations");
    snapshot("cross_rank_runtime_estimations__multi_rank_runtime", &t);
    assert_eq!(t["relative_tolerance"], 1e-9);
    let cids: Vec<&str> = rows(&t, "graphs").iter().map(same_id).collect();
    assert_eq!(cids, ["[0/0]", "[0/1]", "[0/2]", "[0/3]"]);
    assert_eq!(b.bundle.manifest.cross_rank.as_ref().unwrap().tables["runtime_estimations"].rows, 4);

    let g = graph(&t, "[0/0]");
    assert_eq!(ids(&g["fastest"]), ["rank0", "rank1-1", "rank1-2"]);
    assert_eq!(g["fastest_ns"], 13806088.656527853);
    assert_eq!(ids(&g["slowest"]), ["rank3"]);
    assert_eq!(g["slowest_ns"], 15877001.955129309);
    assert_eq!(g["delta_ns"], 15877001.955129309 - 13806088.656527853);
    assert_eq!(format!("{:.3} ms", g["delta_ns"].as_f64().unwrap() / 1e6), "2.071 ms");
    assert_eq!(g["delta_percent"].as_f64().unwrap().round(), 15.0);
    assert_eq!(ids(&g["missing"]), ["rank4"]);
    assert_eq!(ids(&g["compiled_without_estimate"]), ["rank4"]);
    let totals: Vec<(&str, f64)> = rows(g, "totals")
        .iter()
        .map(|s| (s["stream"].as_str().unwrap(), s["total_estimated_runtime_ns"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        totals,
        [
            ("rank0", 13806088.656527853),
            ("rank1-0", 14496393.089465443),
            ("rank2", 15186697.522297116),
            ("rank3", 15877001.955129309),
            ("rank1-1", 13806088.656527853),
            ("rank1-2", 13806088.656527853),
        ]
    );

    // [0/1]: rank 0 is 0.00275 ns above files 5/6, within the tolerance: all three are fastest;
    // fastest_ns is the exact minimum (files 5/6).
    let g = graph(&t, "[0/1]");
    assert_eq!(ids(&g["fastest"]), ["rank0", "rank1-1", "rank1-2"]);
    assert_eq!(g["fastest_ns"], 13859314.549121048);
    assert_eq!(ids(&g["slowest"]), ["rank4"]);
    assert_eq!(g["slowest_ns"], 16631177.458945258);
    assert_eq!(format!("{:.3} ms", g["delta_ns"].as_f64().unwrap() / 1e6), "2.772 ms");
    assert_eq!(g["delta_percent"].as_f64().unwrap().round(), 20.0);
    assert_eq!(ids(&g["missing"]), Vec::<&str>::new());
    for id in ["[0/2]", "[0/3]"] {
        let g = graph(&t, id);
        assert_eq!((ids(&g["fastest"]), ids(&g["slowest"])), (vec!["rank0"], vec!["rank4"]), "{id}");
        assert_eq!(format!("{:.3} ms", g["delta_ns"].as_f64().unwrap() / 1e6), "2.772 ms");
        // Files 5 and 6 never compiled [0/2] or [0/3]: missing, but not "compiled without".
        assert_eq!(ids(&g["missing"]), ["rank1-1", "rank1-2"]);
        assert_eq!(ids(&g["compiled_without_estimate"]), Vec::<&str>::new());
    }
    assert_eq!(t["differs"], true);
    let labels: Vec<&str> = rows(&t, "graphs").iter().map(|g| g["compile"]["label"].as_str().unwrap()).collect();
    assert_eq!(ids(&t["differing_compiles"]), labels);

    // Whole-run: ranks 0-4 each have their own scale (×1.00..×1.20); files 5 and 6 are equal
    // (byte-identical logs) and lack [0/2], [0/3].
    let groups: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(
        groups,
        [vec!["rank0"], vec!["rank1-0"], vec!["rank2"], vec!["rank3"], vec!["rank4"], vec!["rank1-1", "rank1-2"]]
    );
    let streams: Vec<(&str, u64)> =
        rows(&t, "streams").iter().map(|s| (s["stream"].as_str().unwrap(), s["graphs"].as_u64().unwrap())).collect();
    assert_eq!(
        streams,
        [("rank0", 4), ("rank1-0", 4), ("rank2", 4), ("rank3", 4), ("rank4", 3), ("rank1-1", 2), ("rank1-2", 2)]
    );
    // File 0: 13806088.656527853 + 3 × 13859314.55187109.
    let rank0 = rows(&t, "streams")[0]["total_estimated_runtime_ns"].as_f64().unwrap();
    assert!((rank0 - (13806088.656527853 + 3.0 * 13859314.55187109)).abs() < 1e-6);
    assert_eq!(ids(&t["no_data"]), Vec::<&str>::new());
}

/// graph_exec_order: both ranks' estimates are identical (python on the raw logs: `[0/0]`
/// 13806088.656527853 and `[0/1]` 13859314.549121048 on both), so nothing differs, Δ 0.
#[test]
fn identical_estimates_do_not_differ() {
    let b = built_ranks("graph_exec_order");
    let t = b.cross("runtime_estimations");
    snapshot("cross_rank_runtime_estimations__graph_exec_order", &t);
    assert_eq!(t["differs"], false);
    assert_eq!(ids(&t["differing_compiles"]), Vec::<&str>::new());
    assert_eq!(rows(&t, "groups").len(), 1);
    for g in rows(&t, "graphs") {
        assert_eq!(g["delta_ns"], 0.0);
        assert_eq!(ids(&g["fastest"]), ["rank0", "rank1"]);
        assert_eq!(ids(&g["slowest"]), ["rank0", "rank1"]);
    }
    assert_eq!(graph(&t, "[0/1]")["fastest_ns"], 13859314.549121048);
}

/// multi_rank_logs and multi_rank_schedule log no `inductor_runtime_and_tensor_meta` (grep finds
/// none): no table, no trace (absent, not empty).
#[test]
fn absent_without_estimates() {
    for dir in ["multi_rank_logs", "multi_rank_schedule"] {
        let b = built_ranks(dir);
        let c = b.bundle.manifest.cross_rank.as_ref().expect("several streams");
        for name in ["runtime_estimations", "tensor_meta"] {
            assert!(!c.tables.contains_key(name), "{dir} {name}");
        }
        assert!(c.runtime_estimates_trace.is_none(), "{dir}");
        assert!(b.bundle.cross_rank_runtime_estimates_trace().unwrap().is_none());
    }
}
