//! `compile_alignment`: which compile of each rank is the same compile as which of the others,
//! by the code compiled.

use serde_json::Value;

use super::{built_ranks, ids};
use crate::tables::{built, rows, snapshot};

/// An aligned compile as (label, [(stream, compile id)], missing streams).
type Row = (String, Vec<(String, String)>, Vec<String>);

/// Each aligned compile of the table.
fn aligned(t: &Value) -> Vec<Row> {
    rows(t, "compiles")
        .iter()
        .map(|c| {
            let present = rows(c, "present")
                .iter()
                .map(|p| (p["stream"].as_str().unwrap().into(), p["compile_id"].as_str().unwrap().into()))
                .collect();
            let missing = ids(&c["missing"]).into_iter().map(String::from).collect();
            (c["label"].as_str().unwrap().to_string(), present, missing)
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// torch-2.15/ranks_shifted (checked in the raw logs): rank 2's `dynamo_start`s are, by log
/// line, 38 `rank_local_metric` `[0/0]` (ranks_shifted.py:24), 3510 `forward` `[1/0]` (line 20),
/// 8923/12305/15856 `sync_grads` `[2/0]`..`[2/2]` (line 28); rank 0's are 40 `forward` `[0/0]`,
/// 6254/9684/13187 `sync_grads` `[1/0]`..`[1/2]`, and ranks 1 and 3 match rank 0. Ranks 0, 1 and 3 compile `forward` as `[0/0]` and `sync_grads` as
/// `[1/0]`..`[1/2]`; rank 1 alone recompiles `forward` as `[0/1]` (its batch of 12 on step 3).
/// So forward aligns [0/0]/[0/0]/[1/0]/[0/0], sync_grads [1/n] with rank 2's [2/n], and no rank
/// is compared with another function.
#[test]
fn ranks_shifted_aligns_by_code_not_by_id() {
    let b = built("torch-2.15/ranks_shifted");
    let t = b.cross("compile_alignment");
    snapshot("cross_rank_compile_alignment__ranks_shifted", &t);
    let all = ["rank0", "rank1", "rank2", "rank3"];
    let same_on = |ids: [&str; 4]| pairs(&all.iter().copied().zip(ids).collect::<Vec<_>>());
    let got = aligned(&t);
    let expected: Vec<Row> = vec![
        ("forward (ranks_shifted.py:20)".into(), same_on(["[0/0]", "[0/0]", "[1/0]", "[0/0]"]), vec![]),
        (
            "forward (ranks_shifted.py:20), recompile 1".into(),
            pairs(&[("rank1", "[0/1]")]),
            vec!["rank0".into(), "rank2".into(), "rank3".into()],
        ),
        (
            "rank_local_metric (ranks_shifted.py:24)".into(),
            pairs(&[("rank2", "[0/0]")]),
            vec!["rank0".into(), "rank1".into(), "rank3".into()],
        ),
        ("sync_grads (ranks_shifted.py:28)".into(), same_on(["[1/0]", "[1/0]", "[2/0]", "[1/0]"]), vec![]),
        ("sync_grads (ranks_shifted.py:28), recompile 1".into(), same_on(["[1/1]", "[1/1]", "[2/1]", "[1/1]"]), vec![]),
        ("sync_grads (ranks_shifted.py:28), recompile 2".into(), same_on(["[1/2]", "[1/2]", "[2/2]", "[1/2]"]), vec![]),
    ];
    assert_eq!(got, expected);
    assert_eq!((t["diverges"].as_bool(), t["ids_shifted"].as_bool()), (Some(true), Some(true)));

    // The one code only some ranks compiled, and the shift it caused on rank 2.
    // (forward's recompile on rank 1 is not partial code: every rank compiled forward.)
    let partial = rows(&t, "partial_code");
    assert_eq!(partial.len(), 1, "{partial:?}");
    let p = &partial[0];
    assert_eq!(p["code"]["name"], "rank_local_metric");
    assert_eq!(p["code"]["line"], 24);
    assert_eq!(p["compiled_by"][0]["stream"], "rank2");
    assert_eq!(p["compiled_by"][0]["compile_id"], "[0/0]");
    assert_eq!(ids(&p["not_compiled_by"]), ["rank0", "rank1", "rank3"]);
    assert_eq!(p["later_frame_id_shift"], 1);
    let shifts: Vec<(u64, u64, u64, i64)> = rows(&t, "streams")
        .iter()
        .flat_map(|s| rows(s, "frame_id_shifts").iter().map(move |f| (s, f)))
        .map(|(s, f)| {
            assert_eq!(s["stream"], "rank2", "only rank 2 is shifted");
            let n = |k: &str| f[k].as_u64().unwrap();
            (n("aligned"), n("frame_id"), n("usual_frame_id"), f["by"].as_i64().unwrap())
        })
        .collect();
    // forward (row 0): frame 1 on rank 2, 0 elsewhere; sync_grads (row 3): 2 against 1.
    assert_eq!(shifts, [(0, 1, 0, 1), (3, 2, 1, 1)]);
    assert!(rows(&t, "ambiguities").is_empty());
}

/// multi_rank_logs (checked in the raw logs): ranks 0 and 2 compiled `fn` (test_misc.py:10755,
/// `[0/0]`, failed); ranks 1 and 3 compiled `kernel` (gen_many_frames.py:6) 15 and 7 times
/// (`[0/0]`..`[0/14]`, `[0/0]`..`[0/6]`). The same compile id `[0/0]` is two different functions:
/// two compiles, each missing on the other two ranks, not one compile with differing status.
#[test]
fn multi_rank_logs_does_not_pair_two_functions_with_one_id() {
    let b = built_ranks("multi_rank_logs");
    let t = b.cross("compile_alignment");
    snapshot("cross_rank_compile_alignment__multi_rank_logs", &t);
    let got = aligned(&t);
    assert_eq!(got.len(), 16);
    assert_eq!(got[0].0, "fn (test_misc.py:10755)");
    assert_eq!(got[0].1, pairs(&[("rank0", "[0/0]"), ("rank2", "[0/0]")]));
    assert_eq!(got[1].0, "kernel (gen_many_frames.py:6)");
    assert_eq!(got[1].1, pairs(&[("rank1", "[0/0]"), ("rank3", "[0/0]")]));
    for (label, present, missing) in &got[8..] {
        assert_eq!(present.len(), 1, "{label}");
        assert_eq!(present[0].0, "rank1", "{label}");
        assert_eq!(missing, &["rank0", "rank2", "rank3"], "{label}");
    }
    assert_eq!(rows(&t, "compiles")[0]["status_differs"], false, "both `fn` compiles failed");
    let groups: Vec<(Vec<&str>, usize)> = rows(&t, "groups")
        .iter()
        .map(|g| (ids(&g["group"]["streams"]), g["compiles"].as_array().unwrap().len()))
        .collect();
    assert_eq!(groups, [(vec!["rank0", "rank2"], 1), (vec!["rank1"], 15), (vec!["rank3"], 7)]);
    let partial: Vec<(&str, Vec<&str>)> =
        rows(&t, "partial_code").iter().map(|p| (p["label"].as_str().unwrap(), ids(&p["not_compiled_by"]))).collect();
    assert_eq!(
        partial,
        [
            ("fn (test_misc.py:10755)", vec!["rank1", "rank3"]),
            ("kernel (gen_many_frames.py:6)", vec!["rank0", "rank2"])
        ]
    );
    assert_eq!(t["ids_shifted"], false);
}

/// multi_rank_runtime: ranks 0-4 compiled `inner` (external_utils.py:66) four times, `[0/0]`..
/// `[0/3]`; files 5 and 6 (streams rank1-1 and rank1-2, from another run) only twice.
#[test]
fn multi_rank_runtime_splits_ranks_5_and_6() {
    let b = built_ranks("multi_rank_runtime");
    let t = b.cross("compile_alignment");
    snapshot("cross_rank_compile_alignment__multi_rank_runtime", &t);
    let groups: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["group"]["streams"])).collect();
    assert_eq!(groups, [vec!["rank0", "rank1-0", "rank2", "rank3", "rank4"], vec!["rank1-1", "rank1-2"]]);
    let missing: Vec<(String, Vec<String>)> = aligned(&t).into_iter().map(|(l, _, m)| (l, m)).collect();
    let inner = "inner (external_utils.py:66)";
    let late = vec!["rank1-1".to_string(), "rank1-2".to_string()];
    assert_eq!(
        missing,
        [
            (inner.to_string(), vec![]),
            (format!("{inner}, recompile 1"), vec![]),
            (format!("{inner}, recompile 2"), late.clone()),
            (format!("{inner}, recompile 3"), late),
        ]
    );
}

/// multi_rank_messy_input: two byte-identical copies of simple.log, so nothing diverges.
#[test]
fn identical_ranks_do_not_diverge() {
    let b = built_ranks("multi_rank_messy_input");
    let t = b.cross("compile_alignment");
    assert_eq!(t["diverges"], false);
    assert_eq!(t["ids_shifted"], false);
    assert_eq!(rows(&t, "groups").len(), 1);
    assert!(rows(&t, "partial_code").is_empty());
    assert!(rows(&t, "ambiguities").is_empty());
}
