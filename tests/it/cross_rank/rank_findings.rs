//! `rank_findings`: per stream, the counts an overview warns about; across streams, the headlines
//! of `compile_alignment`, `collective_schedules` and `compile_time_imbalance`. The per-stream
//! counts were checked by hand against the raw logs (grep, and a few lines of Python reading the
//! envelopes and `compilation_metrics` payloads); the headlines must equal the tables they come
//! from, which their own tests check against the logs.

use serde_json::{Value, json};

use super::edited::built_edited;
use super::{built_ranks, ids};
use crate::tables::{Built, rows, snapshot};

/// The row of a stream.
fn stream<'a>(t: &'a Value, id: &str) -> &'a Value {
    rows(t, "streams").iter().find(|s| s["stream"] == id).unwrap_or_else(|| panic!("no row for {id}"))
}

/// `(failed, restarts, recompiled_frames, graph_breaks, graph_break_groups)` of a row.
fn counts(row: &Value) -> [u64; 5] {
    ["failed", "restarts", "recompiled_frames", "graph_breaks", "graph_break_groups"].map(|k| row[k].as_u64().unwrap())
}

/// Every headline equals the table it summarises, and there is one row per member, in order.
fn check_headlines(b: &Built, t: &Value) {
    let members: Vec<&str> =
        b.bundle.manifest.cross_rank.as_ref().unwrap().members.iter().map(|m| m.stream.as_str()).collect();
    let streams: Vec<&str> = rows(t, "streams").iter().map(|s| s["stream"].as_str().unwrap()).collect();
    assert_eq!(streams, members);
    assert_eq!(t["storm_compiles"], 8);
    let al = b.cross("compile_alignment");
    let groups: Vec<Value> = rows(&al, "groups").iter().map(|g| g["group"].clone()).collect();
    assert_eq!(t["alignment"]["groups"], Value::Array(groups));
    for k in ["diverges", "ids_shifted", "partial_code", "ambiguities"] {
        assert_eq!(t["alignment"][k], al[k], "{k}");
    }
    let imb = b.cross("compile_time_imbalance");
    for k in ["slowest", "fastest", "max_us", "min_us", "max_over_min"] {
        assert_eq!(t["compile_time"][k], imb[k], "{k}");
    }
    let differing: Vec<Value> = b
        .bundle
        .cross_rank_table::<Value>("collective_schedules")
        .unwrap()
        .map(|cs| {
            rows(&cs, "compiles")
                .iter()
                .filter(|c| c["differs"] == true)
                .map(|c| {
                    let variants: Vec<Value> =
                        rows(c, "variants").iter().map(|v| json!({"streams": v["streams"]})).collect();
                    json!({"compile": c["compile"], "variants": variants})
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(t["schedules_differ"], differing.len());
    assert_eq!(t["schedules"], Value::Array(differing.into_iter().take(10).collect()));
}

/// multi_rank_logs, by hand: ranks 0 and 2 each log one compile, [0/0], whose
/// `compilation_metrics` has `"fail_type": "BackendCompilerFailed"` (1 failed, no restart
/// reasons). Rank 1 logs 15 `dynamo_start`s, all frame 0 ([0/0]..[0/14]), whose metrics say
/// `co_name` kernel, gen_many_frames.py line 6: 15 ≥ 8 compiles, a storm. Rank 3 compiles the
/// same frame 7 times: recompiled, not a storm. No rank logs a graph break
/// (`dynamo_graph_break_reason`) or a restart reason.
#[test]
fn multi_rank_logs_failures_and_a_recompile_storm() {
    let b = built_ranks("multi_rank_logs");
    let t = b.cross("rank_findings");
    snapshot("cross_rank_rank_findings__multi_rank_logs", &t);
    assert_eq!(b.bundle.manifest.cross_rank.as_ref().unwrap().tables["rank_findings"].rows, 4);
    assert_eq!(counts(stream(&t, "rank0")), [1, 0, 0, 0, 0]);
    assert_eq!(counts(stream(&t, "rank2")), [1, 0, 0, 0, 0]);
    assert_eq!(counts(stream(&t, "rank1")), [0, 0, 1, 0, 0]);
    assert_eq!(counts(stream(&t, "rank3")), [0, 0, 1, 0, 0]);
    assert_eq!(
        stream(&t, "rank1")["storms"],
        json!([{"frame_id": 0, "compiled_autograd_id": null, "co_name": "kernel",
                "location": "/Users/skarjala/Desktop/tlparse/tests/gen_many_frames.py:6", "compiles": 15}])
    );
    for s in ["rank0", "rank2", "rank3"] {
        assert_eq!(stream(&t, s)["storms"], json!([]), "{s}");
    }
    // Across the ranks: groups {0, 2}, {1}, {3}; fn only on ranks 0 and 2, kernel only on 1 and 3;
    // rank 3 is the slowest compiler, ranks 0 and 2 the fastest (compile_time_imbalance's test).
    assert_eq!(t["alignment"]["diverges"], true);
    let groups: Vec<Vec<&str>> = rows(&t["alignment"], "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(groups, [vec!["rank0", "rank2"], vec!["rank1"], vec!["rank3"]]);
    let partial: Vec<&str> =
        rows(&t["alignment"], "partial_code").iter().map(|p| p["label"].as_str().unwrap()).collect();
    assert_eq!(partial, ["fn (test_misc.py:10755)", "kernel (gen_many_frames.py:6)"]);
    assert_eq!(ids(&t["compile_time"]["slowest"]), ["rank3"]);
    assert_eq!(ids(&t["compile_time"]["fastest"]), ["rank0", "rank2"]);
    check_headlines(&b, &t);
}

/// multi_rank_logs plus two single-rank logs copied in as ranks 4 and 5, by hand:
/// - torch-2.15 graph_breaks (rank 4): 10 `dynamo_graph_break_reason` artifacts, grouped by the
///   graph_breaks table into 4 (reason, location) groups (print at graph_breaks.py:18 ×5, a
///   skipped function at :12 ×2, `torch._dynamo.graph_break()` at :34 ×2, `Tensor.item()` at
///   :25 ×1); 10 restart reasons over its `compilation_metrics`, no `fail_type`; frame 6 is the
///   only one with two `dynamo_start`s (frame compile ids 0 and 1): one recompiled frame.
/// - comp_metrics.log (rank 5): two `compilation_metrics` with one restart reason each ("skip
///   function graph_break ..."); this older log has no `dynamo_graph_break_reason` (grep: 0), and
///   a restart is no graph break (docs/definitions.md): 2 restarts, 0 breaks, 0 groups. No frame
///   is compiled twice.
#[test]
fn restarts_graph_breaks_and_a_recompiled_frame() {
    let b = built_edited(
        "multi_rank_logs",
        &[
            ("torch-2.15/graph_breaks/dedicated_log_torch_trace_vyoaitj6.log", "dedicated_log_torch_trace_rank_4.log"),
            ("tlparse-tests/comp_metrics.log", "dedicated_log_torch_trace_rank_5.log"),
        ],
        |_, _| {},
    );
    let t = b.cross("rank_findings");
    assert_eq!(counts(stream(&t, "rank4")), [0, 10, 1, 10, 4]);
    assert_eq!(stream(&t, "rank4")["storms"], json!([]));
    assert_eq!(counts(stream(&t, "rank5")), [0, 2, 0, 0, 0]);
    // The per-stream counts are the streams' own tables' (what the overview read before).
    for s in ["rank0", "rank1", "rank2", "rank3", "rank4", "rank5"] {
        let row = stream(&t, s);
        let table = |name: &str| b.bundle.table::<Value>(s, name).unwrap();
        let failures = table("failures");
        let frames = table("recompiles").map_or(0, |r| rows(&r, "frames").len() as u64);
        let breaks = table("graph_breaks");
        let from_tables = [
            failures.as_ref().map_or(0, |f| f["failed"].as_u64().unwrap()),
            failures.as_ref().map_or(0, |f| f["restarts"].as_u64().unwrap()),
            frames,
            breaks.as_ref().map_or(0, |g| g["total"].as_u64().unwrap()),
            breaks.as_ref().map_or(0, |g| rows(g, "breaks").len() as u64),
        ];
        assert_eq!(counts(row), from_tables, "{s}");
    }
    check_headlines(&b, &t);
}

/// multi_rank_schedule: graph_one [0/0]'s schedules differ (rank 1 lacks reduce_scatter_tensor
/// and a wait, collective_schedules' test); the finding names it with both variants.
#[test]
fn multi_rank_schedule_lists_the_differing_schedule() {
    let b = built_ranks("multi_rank_schedule");
    let t = b.cross("rank_findings");
    assert_eq!(t["schedules_differ"], 1);
    let s = &rows(&t, "schedules")[0];
    assert_eq!(s["compile"]["label"], "graph_one (test2.py:28)");
    let variants: Vec<Vec<&str>> = rows(s, "variants").iter().map(|v| ids(&v["streams"])).collect();
    assert_eq!(variants, [vec!["rank0-0", "rank0-2"], vec!["rank0-1"]]);
    check_headlines(&b, &t);
}
