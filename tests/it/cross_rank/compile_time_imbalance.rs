//! `compile_time_imbalance`: compile time per stream, phase and compile id. The expected sums were
//! computed from the raw logs with Python: Σ `dynamo_cumulative_compile_time_us` (else
//! `entire_frame_compile_time_s` × 1e6) over the `compilation_metrics` entries of each file, plus
//! the lazily compiled backwards (`entire_backward_compile`) where there are any.

use serde_json::Value;

use super::{built_ranks, ids, same_id};
use crate::tables::{built, rows, snapshot};

/// `(stream, total_us)` per stream.
fn totals(t: &Value) -> Vec<(&str, Option<f64>)> {
    rows(t, "streams").iter().map(|s| (s["stream"].as_str().unwrap(), s["total_us"].as_f64())).collect()
}

/// `(stream, us)` of a phase or compile-id row.
fn times(row: &Value) -> Vec<(&str, f64)> {
    rows(row, "streams").iter().map(|s| (s["stream"].as_str().unwrap(), s["us"].as_f64().unwrap())).collect()
}

/// The phase row of a metrics field.
fn metrics_phase<'a>(t: &'a Value, name: &str) -> &'a Value {
    rows(t, "phases").iter().find(|p| p["source"] == "metrics" && p["name"] == name).unwrap_or_else(|| panic!("{name}"))
}

/// The row of a compile id.
fn compile<'a>(t: &'a Value, cid: &str) -> &'a Value {
    rows(t, "compiles").iter().find(|c| same_id(c) == cid).unwrap_or_else(|| panic!("{cid}"))
}

/// multi_rank_logs: r0 157,247 µs, r1 4,573,422, r2 157,247, r3 10,518,427 (ranks 0 and 2 are a
/// failed compile with only the cumulative fields); rank 3 is 66.9× ranks 0/2 and 2.30× rank 1.
/// Per phase, backend_compile_time_s: r1 4.4528 s, r3 10.4194 s; inductor and code_gen only on
/// rank 1 (2.9186 s, 2.8397 s).
#[test]
fn multi_rank_logs_rank_3_is_slowest() {
    let b = built_ranks("multi_rank_logs");
    let t = b.cross("compile_time_imbalance");
    snapshot("cross_rank_compile_time_imbalance__multi_rank_logs", &t);
    assert_eq!(
        totals(&t),
        [
            ("rank0", Some(157_247.0)),
            ("rank1", Some(4_573_422.0)),
            ("rank2", Some(157_247.0)),
            ("rank3", Some(10_518_427.0))
        ]
    );
    assert_eq!(ids(&t["slowest"]), ["rank3"]);
    assert_eq!(ids(&t["fastest"]), ["rank0", "rank2"]);
    assert_eq!(format!("{:.1}", t["max_over_min"].as_f64().unwrap()), "66.9");
    assert_eq!(format!("{:.2}", 10_518_427.0 / 4_573_422.0), "2.30");
    assert_eq!(t["median_us"], (157_247.0 + 4_573_422.0) / 2.0);

    let backend = metrics_phase(&t, "backend_compile_time_s");
    assert_eq!(times(backend), [("rank1", 4_452_847.0), ("rank3", 10_419_390.0)]);
    assert_eq!(ids(&backend["missing"]), ["rank0", "rank2"]);
    assert_eq!(times(metrics_phase(&t, "inductor_compile_time_s")), [("rank1", 2_918_631.0)]);
    assert_eq!(times(metrics_phase(&t, "code_gen_time_s")), [("rank1", 2_839_719.0)]);
    // The trace phases come from each stream's compile_time table: the failed compile of ranks 0
    // and 2 did enter backend_compile (raw chromium events B at ts 1733527214084600.2, E at
    // 1733527214085078.5: 478.25 µs), which the metrics above leave out.
    let trace_backend = rows(&t, "phases").iter().find(|p| p["source"] == "trace" && p["name"] == "backend_compile");
    let trace_backend = times(trace_backend.expect("trace phase"));
    assert_eq!(trace_backend[0], ("rank0", 478.25));
    assert_eq!(trace_backend.len(), 4);

    // `[0/0]` is two functions: `fn` on ranks 0 and 2 (157247 µs each), `kernel` on ranks 1 and
    // 3: 1.33 s on rank 1, 10.28 s on rank 3 (raw: 1334062 and 10283392). Compared by compile id
    // alone, all four would be one spread, 157247..10283392; aligned by code, each compares like
    // with like.
    let rows_of_0_0: Vec<&Value> = rows(&t, "compiles").iter().filter(|c| same_id(c) == "[0/0]").collect();
    type Spread<'a> = (&'a str, Vec<(&'a str, f64)>, f64);
    let spreads: Vec<Spread> = rows_of_0_0
        .iter()
        .map(|c| (c["compile"]["label"].as_str().unwrap(), times(c), c["delta_us"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        spreads,
        [
            ("fn (test_misc.py:10755)", vec![("rank0", 157_247.0), ("rank2", 157_247.0)], 0.0),
            (
                "kernel (gen_many_frames.py:6)",
                vec![("rank1", 1_334_062.0), ("rank3", 10_283_392.0)],
                10_283_392.0 - 1_334_062.0
            ),
        ]
    );
    let last = compile(&t, "[0/14]");
    assert_eq!(ids(&last["missing"]), ["rank0", "rank2", "rank3"]);
    assert_eq!(last["delta_us"], 0.0);
}

/// multi_rank_runtime: r0 6,660,633 µs; r1-r4 6,552,590 each; files 5 and 6 2,908,378. Slowest
/// rank 0, +1.65% over ranks 1-4 (the median), 2.29× files 5-6. Per compile `[0/0]`: r0
/// 2,708,391, r1-4 2,655,635, r5-6 2,263,443. Runtime autotuning
/// (`runtime_triton_autotune_time_us` of `compilation_metrics_runtime`): r0 77,034 + 3×51,610,
/// r1-4 76,563 + 3×67,268, r5-6 none.
#[test]
fn multi_rank_runtime_per_stream_and_compile_id() {
    let b = built_ranks("multi_rank_runtime");
    let t = b.cross("compile_time_imbalance");
    snapshot("cross_rank_compile_time_imbalance__multi_rank_runtime", &t);
    let (r0, r1, r5) = (Some(6_660_633.0), Some(6_552_590.0), Some(2_908_378.0));
    assert_eq!(
        totals(&t),
        [("rank0", r0), ("rank1-0", r1), ("rank2", r1), ("rank3", r1), ("rank4", r1), ("rank1-1", r5), ("rank1-2", r5)]
    );
    assert_eq!(ids(&t["slowest"]), ["rank0"]);
    assert_eq!(ids(&t["fastest"]), ["rank1-1", "rank1-2"]);
    assert_eq!(format!("{:.4}", t["max_over_median"].as_f64().unwrap()), "1.0165");
    assert_eq!(format!("{:.2}", t["max_over_min"].as_f64().unwrap()), "2.29");
    let runtime: Vec<Option<f64>> = rows(&t, "streams").iter().map(|s| s["runtime_us"].as_f64()).collect();
    let (a, b5) = (Some(77_034.0 + 3.0 * 51_610.0), Some(76_563.0 + 3.0 * 67_268.0));
    assert_eq!(runtime, [a, b5, b5, b5, b5, None, None]);

    let first = compile(&t, "[0/0]");
    let (c0, c1, c5) = (2_708_391.0, 2_655_635.0, 2_263_443.0);
    assert_eq!(
        times(first),
        [("rank0", c0), ("rank1-0", c1), ("rank2", c1), ("rank3", c1), ("rank4", c1), ("rank1-1", c5), ("rank1-2", c5)]
    );
    assert_eq!(ids(&first["fastest"]), ["rank1-1", "rank1-2"]);
    // Aligned by compile id: files 5 and 6 never compiled [0/2], which is missing, not slow.
    let third = compile(&t, "[0/2]");
    assert_eq!(ids(&third["missing"]), ["rank1-1", "rank1-2"]);
    assert_eq!(times(third).len(), 5);
}

/// multi_rank_schedule: files 0 and 2 (streams rank0-0, rank0-2) 9,035,053 µs ([0/0] 8,604,889 +
/// [1/0] 430,164), file 1 6,041,998 (5,621,637 + 420,361): 1.495×; inductor 8.7137 s vs 5.6136 s.
#[test]
fn multi_rank_schedule_two_copies_are_slowest() {
    let b = built_ranks("multi_rank_schedule");
    let t = b.cross("compile_time_imbalance");
    assert_eq!(
        totals(&t),
        [("rank0-0", Some(9_035_053.0)), ("rank0-1", Some(6_041_998.0)), ("rank0-2", Some(9_035_053.0))]
    );
    assert_eq!(ids(&t["slowest"]), ["rank0-0", "rank0-2"]);
    assert_eq!(format!("{:.3}", t["max_over_min"].as_f64().unwrap()), "1.495");
    assert_eq!(
        times(metrics_phase(&t, "inductor_compile_time_s")),
        [("rank0-0", 8_713_733.0), ("rank0-1", 5_613_568.0), ("rank0-2", 8_713_733.0)]
    );
    assert_eq!(times(compile(&t, "[1/0]")), [("rank0-0", 430_164.0), ("rank0-1", 420_361.0), ("rank0-2", 430_164.0)]);
}

/// messy_input (Dec 2024 format, no `*_time_s` fields): 1,659,332 µs on both copies, and the
/// metrics phases are the `*_cumulative_compile_time_us` fields only.
/// graph_exec_order: r0 3,899,894, r1 3,968,081 (+1.75%); runtime autotuning r0 117,790 +
/// 85,734, r1 83,270 + 48,086.
#[test]
fn older_format_and_two_close_ranks() {
    let b = built_ranks("multi_rank_messy_input");
    let t = b.cross("compile_time_imbalance");
    assert_eq!(totals(&t), [("rank0", Some(1_659_332.0)), ("rank1", Some(1_659_332.0))]);
    assert_eq!(t["max_over_min"], 1.0);
    let metric_names: Vec<&str> =
        rows(&t, "phases").iter().filter(|p| p["source"] == "metrics").map(|p| p["name"].as_str().unwrap()).collect();
    assert!(metric_names.iter().all(|n| n.ends_with("_cumulative_compile_time_us")), "{metric_names:?}");

    let b = built_ranks("graph_exec_order");
    let t = b.cross("compile_time_imbalance");
    assert_eq!(totals(&t), [("rank0", Some(3_899_894.0)), ("rank1", Some(3_968_081.0))]);
    assert_eq!(ids(&t["slowest"]), ["rank1"]);
    assert_eq!(format!("{:.4}", t["max_over_min"].as_f64().unwrap()), "1.0175");
    let runtime: Vec<Option<f64>> = rows(&t, "streams").iter().map(|s| s["runtime_us"].as_f64()).collect();
    assert_eq!(runtime, [Some(117_790.0 + 85_734.0), Some(83_270.0 + 48_086.0)]);
}

/// ranks_shifted: a stream's compile time counts the backward that AOTAutograd compiled lazily,
/// at the first backward call, as the compile directory and compile_time do. Rank 0, from its
/// raw log: entire_frame_compile_time_s 19.552467 ([0/0]), 1.911605, 1.450855 and 1.298577 s,
/// and [0/0]'s entire_backward_compile, lines 3617 to 6212: 1651572.5 µs, which its
/// compilation_metrics entry does not count.
#[test]
fn a_stream_total_counts_its_lazy_backward_compiles() {
    let b = built("torch-2.15/ranks_shifted");
    let t = b.cross("compile_time_imbalance");
    let rank0 = totals(&t).into_iter().find(|(s, _)| *s == "rank0").unwrap().1;
    assert_eq!(rank0, Some(19_552_467.0 + 1_911_605.0 + 1_450_855.0 + 1_298_577.0 + 1_651_572.5));
}
