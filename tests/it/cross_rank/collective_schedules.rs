//! `collective_schedules`: which ranks scheduled which collectives, per compile (aligned by
//! code; in these fixtures every rank gave each compile the same id).

use serde_json::Value;

use super::edited::{built_edited, built_edited_at};
use super::{built_ranks, ids, label, own_ids};
use crate::tables::{rows, snapshot};

const OPS: &str = "torch.ops._c10d_functional.";

/// The ops of a list without the `torch.ops._c10d_functional.` prefix and `.default` suffix.
fn short(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().map_or("null", |s| s.trim_start_matches(OPS).trim_end_matches(".default")))
        .collect()
}

/// The row of the compile that every stream having it calls `compile_id`.
fn row<'a>(t: &'a Value, compile_id: &str) -> &'a Value {
    rows(t, "compiles").iter().find(|c| own_ids(c).iter().all(|(_, id)| *id == compile_id)).unwrap()
}

/// Streams and the ops of their single schedule.
type Variant<'a> = (Vec<&'a str>, Vec<&'a str>);

/// (streams, ops of the single schedule) of each variant of a row.
fn variants(row: &Value) -> Vec<Variant<'_>> {
    rows(row, "variants")
        .iter()
        .map(|v| {
            let schedules = rows(v, "schedules");
            assert_eq!(schedules.len(), 1, "one schedule per compile id in these fixtures");
            (ids(&v["streams"]), short(&schedules[0]))
        })
        .collect()
}

/// multi_rank_schedule (checked in the raw logs): the `[0/0]` schedule of files 0 and 2 (streams
/// rank0-0, rank0-2; file 2 is a byte copy of file 0) is all_reduce_, wait, all_gather,
/// reduce_scatter, wait, wait; file 1's (rank0-1, line 1081, hand-edited) lacks the
/// reduce_scatter and one wait. `[1/0]` is all_reduce_, wait on all three. File 1's `[0/0]`
/// output code still calls reduce_scatter_tensor (6 calls, 3 waits), so its own parity fails.
#[test]
fn multi_rank_schedule_splits_file_rank_1() {
    let b = built_ranks("multi_rank_schedule");
    let t = b.cross("collective_schedules");
    snapshot("cross_rank_collective_schedules__multi_rank_schedule", &t);
    assert_eq!(t["diverges"], true);
    assert_eq!(ids(&t["shared_compiles"]), ["graph_one (test2.py:28)", "graph_two (test2.py:52)"]);
    let groups: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(groups, [vec!["rank0-0", "rank0-2"], vec!["rank0-1"]]);

    let first = row(&t, "[0/0]");
    assert_eq!(first["differs"], true);
    assert_eq!(first["reference"], 0);
    let full = vec![
        "all_reduce_",
        "wait_tensor",
        "all_gather_into_tensor",
        "reduce_scatter_tensor",
        "wait_tensor",
        "wait_tensor",
    ];
    assert_eq!(
        variants(first),
        [
            (vec!["rank0-0", "rank0-2"], full),
            (vec!["rank0-1"], vec!["all_reduce_", "wait_tensor", "all_gather_into_tensor", "wait_tensor"]),
        ]
    );
    let odd = &rows(first, "variants")[1];
    assert_eq!(short(&odd["lacks"]), ["reduce_scatter_tensor", "wait_tensor"]);
    assert!(odd["extra"].as_array().unwrap().is_empty());
    assert_eq!(odd["first_difference"], 3);
    assert_eq!(ids(&first["parity_mismatches"]), ["rank0-1"]);

    let second = row(&t, "[1/0]");
    assert_eq!(second["differs"], false);
    assert_eq!(variants(second), [(vec!["rank0-0", "rank0-1", "rank0-2"], vec!["all_reduce_", "wait_tensor"])]);

    // Parity, per stream: only file rank 1's [0/0], whose code has the reduce_scatter (and the
    // third wait) its schedule lacks; tlparse's offset 1, missing waits 0.
    let mismatches: Vec<(&str, usize)> = rows(&t, "streams")
        .iter()
        .map(|s| (s["stream"].as_str().unwrap(), s["parity_mismatches"].as_array().unwrap().len()))
        .collect();
    assert_eq!(mismatches, [("rank0-0", 0), ("rank0-1", 1), ("rank0-2", 0)]);
    let m = &rows(&t, "streams")[1]["parity_mismatches"][0];
    assert_eq!(m["compile_id"], "[0/0]");
    assert_eq!(short(&m["only_in_code"]), ["reduce_scatter_tensor"]);
    let counts: Vec<(&str, u64, u64)> = rows(m, "ops")
        .iter()
        .map(|o| {
            let op = o["op"].as_str().unwrap().trim_start_matches(OPS).trim_end_matches(".default");
            (op, o["schedule"].as_u64().unwrap(), o["code"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(counts, [("wait_tensor", 2, 3), ("reduce_scatter_tensor", 0, 1)]);
    assert_eq!((m["tlparse_offset"].as_u64(), m["tlparse_missing_waits"].as_u64()), (Some(1), Some(0)));
    assert!(rows(&t, "streams").iter().all(|s| s["unmatched_collectives"].as_array().unwrap().is_empty()));
}

/// multi_rank_runtime (checked in the raw logs): `[0/0]` is all_reduce_, wait and `[0/1]` the six
/// ops on all seven files; `[0/2]` and `[0/3]` the six ops on files 0-4, and files 5 and 6
/// (streams rank1-1, rank1-2) never compiled them. tlparse concatenates each rank's graphs and
/// reports {0..4} vs {5,6} as diverging collectives; no schedule differs on any compile id.
#[test]
fn multi_rank_runtime_missing_compiles_are_not_divergence() {
    let b = built_ranks("multi_rank_runtime");
    let t = b.cross("collective_schedules");
    snapshot("cross_rank_collective_schedules__multi_rank_runtime", &t);
    let all = ["rank0", "rank1-0", "rank2", "rank3", "rank4", "rank1-1", "rank1-2"];
    assert_eq!(t["diverges"], false);
    let inner = "inner (external_utils.py:66)";
    assert_eq!(ids(&t["shared_compiles"]), [inner.to_string(), format!("{inner}, recompile 1")]);
    assert_eq!(rows(&t, "groups").len(), 1);
    assert_eq!(ids(&rows(&t, "groups")[0]["streams"]), all);
    let six = vec![
        "all_reduce_",
        "wait_tensor",
        "all_gather_into_tensor",
        "reduce_scatter_tensor",
        "wait_tensor",
        "wait_tensor",
    ];
    let got: Vec<(&str, bool, Vec<Variant>, Vec<&str>)> = rows(&t, "compiles")
        .iter()
        .map(|c| (own_ids(c)[0].1, c["differs"].as_bool().unwrap(), variants(c), ids(&c["missing"])))
        .collect();
    assert_eq!(
        got,
        [
            ("[0/0]", false, vec![(all.to_vec(), vec!["all_reduce_", "wait_tensor"])], vec![]),
            ("[0/1]", false, vec![(all.to_vec(), six.clone())], vec![]),
            ("[0/2]", false, vec![(all[..5].to_vec(), six.clone())], vec!["rank1-1", "rank1-2"]),
            ("[0/3]", false, vec![(all[..5].to_vec(), six)], vec!["rank1-1", "rank1-2"]),
        ]
    );
    // Parity is clean everywhere: every collective has its wait.
    for s in rows(&t, "streams") {
        assert_eq!(s["has_data"], true);
        assert!(s["parity_mismatches"].as_array().unwrap().is_empty(), "{}", s["stream"]);
        assert!(s["unmatched_collectives"].as_array().unwrap().is_empty(), "{}", s["stream"]);
    }
}

/// graph_exec_order (checked in the raw logs): `[0/0]` is all_reduce_, wait on both ranks; rank
/// 0's `[0/1]` schedule (line 5795, hand-edited) lacks the reduce_scatter rank 1's has, while
/// rank 0's code still calls it.
#[test]
fn graph_exec_order_differs_on_0_1() {
    let b = built_ranks("graph_exec_order");
    let t = b.cross("collective_schedules");
    snapshot("cross_rank_collective_schedules__graph_exec_order", &t);
    assert_eq!(t["diverges"], true);
    let groups: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(groups, [vec!["rank0"], vec!["rank1"]]);
    assert_eq!(row(&t, "[0/0]")["differs"], false);
    let r = row(&t, "[0/1]");
    let v = variants(r);
    assert_eq!(
        v[0],
        (vec!["rank0"], vec!["all_reduce_", "wait_tensor", "all_gather_into_tensor", "wait_tensor", "wait_tensor"])
    );
    assert_eq!(v[1].0, ["rank1"]);
    // A tie: the first group is the reference, so rank 1 has an extra reduce_scatter; rank 0's
    // parity says its own code disagrees with its schedule.
    assert_eq!(short(&rows(r, "variants")[1]["extra"]), ["reduce_scatter_tensor"]);
    assert_eq!(ids(&r["parity_mismatches"]), ["rank0"]);
    let m = &rows(&t, "streams")[0]["parity_mismatches"][0];
    assert_eq!(m["compile_id"], "[0/1]");
    assert_eq!((m["tlparse_offset"].as_u64(), m["tlparse_missing_waits"].as_u64()), (Some(1), Some(0)));
    assert!(rows(&t, "streams")[1]["parity_mismatches"].as_array().unwrap().is_empty());
}

/// Without any collective (multi_rank_logs, messy_input) there is no table.
#[test]
fn absent_without_collectives() {
    for dir in ["multi_rank_logs", "multi_rank_messy_input"] {
        let b = built_ranks(dir);
        assert!(b.bundle.cross_rank_table::<Value>("collective_schedules").unwrap().is_none(), "{dir}");
    }
}

/// multi_rank_schedule edited in a temporary copy: file 0's `[1/0]` schedule gets a null op
/// (torch's `list[str | None]`), file 2's `[1/0]` schedule is removed (so it ran no collective
/// there, as torch logs only non-empty schedules), simple.log joins as file 3 (a stream that
/// compiled another function, `forward` of test_torchinductor.py, as `[0/0]`: missing on both
/// compiles, never compared), and file 2 joins again as file 4 with every
/// `inductor_collective_schedule` entry removed (a stream that compiled both graphs and logs no
/// schedule at all: no data).
#[test]
fn null_ops_no_schedule_and_no_data_are_told_apart() {
    let extra = [
        ("tlparse-tests/simple.log", "dedicated_log_torch_trace_rank_3.log"),
        (
            "tlparse-tests/multi_rank_schedule/dedicated_log_torch_trace_rank_2.log",
            "dedicated_log_torch_trace_rank_4.log",
        ),
    ];
    let b = built_edited("multi_rank_schedule", &extra, |name, lines| {
        if name.ends_with("rank_4.log") {
            drop_entries(lines, "inductor_collective_schedule");
        } else if name.contains("rank_0_") {
            assert_eq!(lines[2227], "\t\"torch.ops._c10d_functional.all_reduce_.default\",");
            lines[2227] = "\tnull,".into();
        } else if name.contains("rank_2") {
            assert!(lines[2225].contains("inductor_collective_schedule") && lines[2225].contains("\"frame_id\": 1"));
            lines.drain(2225..2230);
        }
    });
    let t = b.cross("collective_schedules");
    assert_eq!(t["diverges"], true);
    // No compile is shared by all five streams (simple.log compiled neither graph), so the
    // whole-run groups compare nothing and make one group; the rows tell the story.
    assert!(ids(&t["shared_compiles"]).is_empty());
    let groups: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(groups, [vec!["rank0-0", "rank0-1", "rank0-2", "rank3", "rank0-3"]]);
    let first = row(&t, "[0/0]");
    assert_eq!(label(first), "graph_one (test2.py:28)");
    assert_eq!(first["differs"], true, "file 1's edited schedule still differs");
    assert_eq!(ids(&first["no_data"]), ["rank0-3"]);
    assert_eq!(ids(&first["missing"]), ["rank3"], "simple.log's [0/0] is another function");

    let second = row(&t, "[1/0]");
    assert_eq!(second["differs"], true);
    assert_eq!(
        variants(second),
        [(vec!["rank0-0"], vec!["null", "wait_tensor"]), (vec!["rank0-1"], vec!["all_reduce_", "wait_tensor"])]
    );
    assert_eq!(ids(&second["no_schedule"]), ["rank0-2"]);
    assert_eq!(ids(&second["no_data"]), ["rank0-3"]);
    assert_eq!(ids(&second["missing"]), ["rank3"]);
    let odd = &rows(second, "variants")[1];
    assert_eq!((short(&odd["lacks"]), short(&odd["extra"])), (vec!["null"], vec!["all_reduce_"]));
    assert_eq!(odd["first_difference"], 0);

    let simple = &rows(&t, "streams")[3];
    assert_eq!((simple["stream"].as_str(), simple["has_data"].as_bool()), (Some("rank3"), Some(false)));
    // Both edits break the streams' own parity on [1/0]: file 2's code calls all_reduce_ and wait
    // with no schedule left, and file 0's null op cannot stand for the all_reduce_ its code calls.
    assert_eq!(ids(&second["parity_mismatches"]), ["rank0-0", "rank0-2"]);
}

/// ranks_cache (SUMMARY.md section 18, checked in the raw logs): every rank compiles `[1/0]`
/// allreduce_fn (ranks_cache.py:32) and misses the caches for it; each logs the schedule
/// [all_reduce_, wait_tensor] (ranks 0-2 line 7984, rank 3 line 2993). Rank 3's `[0/0]` hits the
/// FX graph cache (lines 658, 945) but no rank schedules a collective in `[0/0]`.
#[test]
fn ranks_cache_every_rank_schedules_allreduce_fn_alike() {
    let b = crate::tables::built("torch-2.15/ranks_cache");
    let t = b.cross("collective_schedules");
    assert_eq!(t["diverges"], false);
    let compiles = rows(&t, "compiles");
    assert_eq!(compiles.len(), 1, "only allreduce_fn has collectives");
    let row = &compiles[0];
    assert_eq!(label(row), "allreduce_fn (ranks_cache.py:32)");
    assert_eq!(variants(row), [(vec!["rank0", "rank1", "rank2", "rank3"], vec!["all_reduce_", "wait_tensor"])]);
    for list in ["no_schedule", "no_data", "cache_hit", "missing"] {
        assert!(ids(&row[list]).is_empty(), "{list}");
    }
}

/// ranks_cache edited as the held-out 4-rank job ran: rank 3 compiles allreduce_fn but logs no
/// schedule for it. Without its schedule (line 2993) rank 3 is `no_data`, never in a variant;
/// with its `fx_graph_cache_miss` for `[1/0]` (line 3717) made a hit as well, it is `cache_hit`:
/// neither agreeing nor differing.
#[test]
fn a_rank_that_logged_no_schedule_is_not_counted_as_agreeing() {
    let drop_schedule = |name: &str, lines: &mut Vec<String>| {
        if name.contains("rank_3") {
            assert!(lines[2992].contains("inductor_collective_schedule") && lines[2992].contains("\"frame_id\": 1"));
            drop_entries(lines, "inductor_collective_schedule");
        }
    };
    let b = built_edited_at("torch-2.15/ranks_cache", drop_schedule);
    let t = b.cross("collective_schedules");
    let row = &rows(&t, "compiles")[0];
    assert_eq!(variants(row), [(vec!["rank0", "rank1", "rank2"], vec!["all_reduce_", "wait_tensor"])]);
    assert_eq!(ids(&row["no_data"]), ["rank3"]);
    assert!(ids(&row["cache_hit"]).is_empty() && ids(&row["missing"]).is_empty());

    let b = built_edited_at("torch-2.15/ranks_cache", |name, lines| {
        if name.contains("rank_3") {
            assert!(
                lines[3716].contains("\"name\": \"fx_graph_cache_miss\"") && lines[3716].contains("\"frame_id\": 1")
            );
            lines[3716] = lines[3716].replace("fx_graph_cache_miss", "fx_graph_cache_hit");
        }
        drop_schedule(name, lines);
    });
    let t = b.cross("collective_schedules");
    assert_eq!(t["diverges"], false);
    let row = &rows(&t, "compiles")[0];
    assert_eq!(row["differs"], false);
    assert_eq!(variants(row), [(vec!["rank0", "rank1", "rank2"], vec!["all_reduce_", "wait_tensor"])]);
    assert_eq!(ids(&row["cache_hit"]), ["rank3"]);
    assert!(ids(&row["no_data"]).is_empty() && ids(&row["no_schedule"]).is_empty());
}

/// Removes every entry whose header line contains `kind`, with its payload lines.
fn drop_entries(lines: &mut Vec<String>, kind: &str) {
    let mut dropping = false;
    lines.retain(|line| {
        if !line.starts_with('\t') {
            dropping = line.contains(kind);
        }
        !dropping
    });
}
