//! `execution_order`: in which order each rank ran its compiled graphs.

use serde_json::Value;

use super::edited::built_edited;

/// The labels of graph_exec_order's two compiles (`[0/0]` and `[0/1]` on both ranks): runs are
/// compared by what they ran.
const L0: &str = "inner (external_utils.py:66)";
const L1: &str = "inner (external_utils.py:66), recompile 1";
use super::{built_ranks, ids};
use crate::tables::{rows, snapshot};

/// The runs of each recording of a group, with null shown as `null`.
fn recordings(group: &Value) -> Vec<Vec<&str>> {
    rows(group, "recordings")
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|v| v.as_str().unwrap_or("null")).collect())
        .collect()
}

/// graph_exec_order (checked in the raw logs, the `graph_execution` artifacts at rank_0 line 7483
/// and rank_1 line 7484): rank 0 ran `0/1 0/0 0/1 0/0 0/1 0/0` (its first two entries were
/// swapped by hand), rank 1 `0/0 0/1 0/1 0/0 0/1 0/0`: they differ at positions 0 and 1 only,
/// with the same runs (3 of each).
#[test]
fn graph_exec_order_differs_at_positions_0_and_1() {
    let b = built_ranks("graph_exec_order");
    let t = b.cross("execution_order");
    snapshot("cross_rank_execution_order__graph_exec_order", &t);
    assert_eq!(t["diverges"], true);
    assert!(t["legacy"].is_null());
    let recorded = &t["recorded"];
    assert_eq!(recorded["reference"], 0);
    let groups = rows(recorded, "groups");
    let got: Vec<(Vec<&str>, Vec<Vec<&str>>)> = groups.iter().map(|g| (ids(&g["streams"]), recordings(g))).collect();
    assert_eq!(
        got,
        [(vec!["rank0"], vec![vec![L1, L0, L1, L0, L1, L0]]), (vec!["rank1"], vec![vec![L0, L1, L1, L0, L1, L0]]),]
    );
    assert!(groups[0]["difference"].is_null());
    let d = &groups[1]["difference"];
    assert_eq!(d["same_runs"], true);
    let r = &rows(d, "recordings")[0];
    assert_eq!((r["recording"].as_u64(), r["first_position"].as_u64()), (Some(0), Some(0)));
    assert_eq!(r["positions"], serde_json::json!([0, 1]));
    let streams: Vec<(&str, u64)> = rows(&t, "streams")
        .iter()
        .map(|s| (s["stream"].as_str().unwrap(), s["recorded_group"].as_u64().unwrap()))
        .collect();
    assert_eq!(streams, [("rank0", 0), ("rank1", 1)]);
    assert_eq!(b.bundle.manifest.cross_rank.as_ref().unwrap().tables["execution_order"].rows, 2);
}

/// multi_rank_runtime (checked in the raw logs): files 0-4 log no execution order; files 5 and 6
/// (streams rank1-1, rank1-2) have six legacy `inductor_graph_execution` entries each (lines
/// 3294, 7174, 7178, 7182, 7186, 7190), `graph_0 graph_1 graph_1 graph_0 graph_1 graph_0`:
/// identical, and kept apart from compile-id orders.
#[test]
fn multi_rank_runtime_legacy_sequences_are_identical() {
    let b = built_ranks("multi_rank_runtime");
    let t = b.cross("execution_order");
    snapshot("cross_rank_execution_order__multi_rank_runtime", &t);
    assert_eq!(t["diverges"], false);
    assert!(t["recorded"].is_null());
    assert!(t["legacy_note"].as_str().unwrap().contains("not with the compile ids"));
    let legacy = &t["legacy"];
    assert_eq!(legacy["diverges"], false);
    let groups = rows(legacy, "groups");
    assert_eq!(groups.len(), 1);
    assert_eq!(ids(&groups[0]["streams"]), ["rank1-1", "rank1-2"]);
    assert_eq!(recordings(&groups[0]), [["graph_0", "graph_1", "graph_1", "graph_0", "graph_1", "graph_0"]]);
    let with_legacy: Vec<&str> = rows(&t, "streams")
        .iter()
        .filter(|s| !s["legacy_group"].is_null())
        .map(|s| s["stream"].as_str().unwrap())
        .collect();
    assert_eq!(with_legacy, ["rank1-1", "rank1-2"]);
    assert!(rows(&t, "streams").iter().all(|s| s["recorded_group"].is_null()));
}

/// No stream of multi_rank_logs, messy_input or multi_rank_schedule logs an execution order.
#[test]
fn absent_without_execution_orders() {
    for dir in ["multi_rank_logs", "multi_rank_messy_input", "multi_rank_schedule"] {
        let b = built_ranks(dir);
        assert!(b.bundle.cross_rank_table::<Value>("execution_order").unwrap().is_none(), "{dir}");
    }
}

/// graph_exec_order edited in a temporary copy: rank 1's fourth run (line 7497, `0/0`) is logged
/// as null, and simple.log joins as file 2 (no execution order at all). Rank 1 then differs at
/// positions 0, 1 and 3, and does not have the same runs as rank 0.
#[test]
fn unknown_compile_ids_and_streams_without_orders() {
    let simple = [("tlparse-tests/simple.log", "dedicated_log_torch_trace_rank_2.log")];
    let b = built_edited("graph_exec_order", &simple, |name, lines| {
        if name.contains("rank_1_") {
            assert_eq!(lines[7496], "\t\"compile_id\": \"0/0\"");
            lines[7496] = "\t\"compile_id\": null".into();
        }
    });
    let t = b.cross("execution_order");
    let groups = rows(&t["recorded"], "groups");
    assert_eq!(recordings(&groups[1]), [[L0, L1, L1, "null", L1, L0]]);
    let d = &groups[1]["difference"];
    assert_eq!(d["same_runs"], false);
    assert_eq!(rows(d, "recordings")[0]["positions"], serde_json::json!([0, 1, 3]));
    let streams: Vec<(&str, Option<u64>, u64)> = rows(&t, "streams")
        .iter()
        .map(|s| {
            (s["stream"].as_str().unwrap(), s["recorded_group"].as_u64(), s["unknown_compile_ids"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(streams, [("rank0", Some(0), 0), ("rank1", Some(1), 1), ("rank2", None, 0)]);
    assert_eq!(b.bundle.manifest.cross_rank.as_ref().unwrap().tables["execution_order"].rows, 2);
}
