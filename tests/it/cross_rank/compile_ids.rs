//! `compile_ids`: which ranks compiled which compile ids.

use super::{built_ranks, ids};
use crate::tables::{rows, snapshot};

/// multi_rank_logs (checked in the raw logs): ranks 0 and 2 are the same failed compile `[0/0]`;
/// rank 1 compiled `[0/0]`..`[0/14]`, rank 3 `[0/0]`..`[0/6]`. So three groups, `[0/0]` on all
/// four (failed on 0 and 2, ok on 1 and 3), `[0/7]`..`[0/14]` only on rank 1.
#[test]
fn multi_rank_logs_has_three_groups() {
    let b = built_ranks("multi_rank_logs");
    let t = b.cross("compile_ids");
    snapshot("cross_rank_compile_ids__multi_rank_logs", &t);
    assert_eq!(t["diverges"], true);
    let groups = rows(&t, "groups");
    let got: Vec<(Vec<&str>, usize)> =
        groups.iter().map(|g| (ids(&g["streams"]), g["compile_ids"].as_array().unwrap().len())).collect();
    assert_eq!(got, [(vec!["rank0", "rank2"], 1), (vec!["rank1"], 15), (vec!["rank3"], 7)]);

    let cids = rows(&t, "compile_ids");
    assert_eq!(cids.len(), 15);
    let first = &cids[0];
    assert_eq!(first["compile_id"], "[0/0]");
    assert_eq!(first["status_differs"], true);
    let statuses: Vec<(&str, &str)> = first["present"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["stream"].as_str().unwrap(), p["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, [("rank0", "failed"), ("rank1", "ok"), ("rank2", "failed"), ("rank3", "ok")]);
    for c in &cids[7..] {
        assert_eq!(ids(&c["missing"]), ["rank0", "rank2", "rank3"], "{}", c["compile_id"]);
    }
}

/// multi_rank_runtime: ranks 0-4 compiled `[0/0]`..`[0/3]`; files 5 and 6 (streams rank1-1 and
/// rank1-2, from another run) only `[0/0]` and `[0/1]`.
#[test]
fn multi_rank_runtime_splits_ranks_5_and_6() {
    let b = built_ranks("multi_rank_runtime");
    let t = b.cross("compile_ids");
    snapshot("cross_rank_compile_ids__multi_rank_runtime", &t);
    let groups: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(groups, [vec!["rank0", "rank1-0", "rank2", "rank3", "rank4"], vec!["rank1-1", "rank1-2"]]);
    let missing: Vec<(&str, Vec<&str>)> =
        rows(&t, "compile_ids").iter().map(|c| (c["compile_id"].as_str().unwrap(), ids(&c["missing"]))).collect();
    assert_eq!(
        missing,
        [
            ("[0/0]", vec![]),
            ("[0/1]", vec![]),
            ("[0/2]", vec!["rank1-1", "rank1-2"]),
            ("[0/3]", vec!["rank1-1", "rank1-2"]),
        ]
    );
}

/// multi_rank_messy_input: two byte-identical copies of simple.log, so nothing diverges.
#[test]
fn identical_ranks_do_not_diverge() {
    let b = built_ranks("multi_rank_messy_input");
    let t = b.cross("compile_ids");
    assert_eq!(t["diverges"], false);
    assert_eq!(rows(&t, "groups").len(), 1);
}
