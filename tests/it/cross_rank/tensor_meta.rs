//! `tensor_meta`: the ops' output tensor metadata across ranks, runtimes left out.

use serde_json::{Value, json};

use super::{built_ranks, ids, same_id};
use crate::tables::{rows, snapshot};

fn graph<'a>(t: &'a Value, compile_id: &str) -> &'a Value {
    rows(t, "graphs")
        .iter()
        .find(|g| !g["compile"].is_null() && same_id(g) == compile_id)
        .unwrap_or_else(|| panic!("no {compile_id}"))
}

fn fingerprint_groups(g: &Value) -> Vec<Vec<&str>> {
    rows(g, "groups").iter().map(|g| ids(&g["streams"])).collect()
}

/// multi_rank_runtime, checked by hand with python on the raw logs (each artifact's ops with
/// `name`, `type` and `outputs`, `estimated_runtime_ns` dropped, compared as JSON):
/// - `[0/0]`: files 0-3 equal, files 5/6 equal and different; file 4 has no artifact;
/// - `[0/1]`: files 0-4 equal, 5/6 different; `[0/2]`, `[0/3]`: files 0-4 equal, 5/6 absent;
/// - whole run: {0,1,2,3}, {4}, {5,6}; rank 4 only because its `[0/0]` artifact is missing.
///
/// tlparse fingerprints the runtimes too, so it splits files 0-4 into five groups.
/// What differs, by op index, file 0 vs file 5 (same op names in the same order):
/// - `[0/0]`: only op 3 (`wait_tensor`): no `outputs` key in file 0 (the hand edit, spec §4) vs
///   two `{shape [], stride [], dtype null}`;
/// - `[0/1]`: op 1 `op1_op2_op4` (one f16 [1024,1024] vs two f32 [1024,1] stride [1,1024] plus
///   the f16), ops 3, 8, 9 (`wait_tensor`, as above), op 6 `all_gather_into_tensor` (two empty
///   outputs vs f16 [2048,1024]), op 7 `reduce_scatter_tensor` (two empty vs f16 [1024,1024]),
///   op 10 `op13` ([1024,1024] vs [2048,1024]).
#[test]
fn multi_rank_runtime_groups_ignore_runtimes() {
    let b = built_ranks("multi_rank_runtime");
    let t = b.cross("tensor_meta");
    snapshot("cross_rank_tensor_meta__multi_rank_runtime", &t);

    let whole: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(whole, [vec!["rank0", "rank1-0", "rank2", "rank3"], vec!["rank4"], vec!["rank1-1", "rank1-2"]]);
    // In file ranks: {0,1,2,3}, {4}, {5,6}.
    let file_rank = |stream: &str| {
        b.bundle.manifest.inputs.iter().find(|i| i.streams == [stream]).and_then(|i| i.rank_from_name).unwrap()
    };
    let whole_files: Vec<Vec<u32>> = whole.iter().map(|g| g.iter().map(|s| file_rank(s)).collect()).collect();
    assert_eq!(whole_files, [vec![0, 1, 2, 3], vec![4], vec![5, 6]]);
    // Rank 4 is apart only for its missing [0/0]: it agrees with group 0 wherever both have a graph.
    let compatible: Vec<&Value> = rows(&t, "groups").iter().map(|g| &g["differs_only_by_missing_from"]).collect();
    assert_eq!(compatible, [&json!([1]), &json!([0]), &json!([])]);
    assert_eq!((t["diverges"].clone(), t["fingerprints_differ"].clone()), (json!(true), json!(true)));

    let g = graph(&t, "[0/0]");
    assert_eq!(fingerprint_groups(g), [vec!["rank0", "rank1-0", "rank2", "rank3"], vec!["rank1-1", "rank1-2"]]);
    assert_eq!(ids(&g["missing"]), ["rank4"]);
    assert_eq!(ids(&g["compiled_without_artifact"]), ["rank4"]);
    let diffs = rows(g, "differences");
    assert_eq!(diffs.len(), 1);
    assert_eq!(diffs[0]["group"], 1);
    let ops = rows(&diffs[0], "ops");
    assert_eq!(ops.len(), 1, "only the wait_tensor's absent outputs differ in [0/0]");
    assert_eq!(ops[0]["name"], "torch.ops._c10d_functional.wait_tensor.default");
    assert_eq!((ops[0]["reference_index"].clone(), ops[0]["other_index"].clone()), (json!(3), json!(3)));
    assert_eq!(ops[0]["reference"], json!({"type": "compute", "outputs": null}));
    let empty = json!({"shape": [], "stride": [], "dtype": null});
    assert_eq!(ops[0]["other"], json!({"type": "compute", "outputs": [empty, empty]}));

    let g = graph(&t, "[0/1]");
    assert_eq!(
        fingerprint_groups(g),
        [vec!["rank0", "rank1-0", "rank2", "rank3", "rank4"], vec!["rank1-1", "rank1-2"]]
    );
    assert_eq!(ids(&g["missing"]), Vec::<&str>::new());
    let ops = rows(&rows(g, "differences")[0], "ops");
    let indexes: Vec<(u64, &str)> = ops
        .iter()
        .map(|o| (o["reference_index"].as_u64().unwrap(), o["name"].as_str().unwrap().trim_end_matches(".default")))
        .collect();
    assert_eq!(
        indexes,
        [
            (1, "op1_op2_op4"),
            (3, "torch.ops._c10d_functional.wait_tensor"),
            (6, "torch.ops._c10d_functional.all_gather_into_tensor"),
            (7, "torch.ops._c10d_functional.reduce_scatter_tensor"),
            (8, "torch.ops._c10d_functional.wait_tensor"),
            (9, "torch.ops._c10d_functional.wait_tensor"),
            (10, "op13"),
        ]
    );
    let f16 = |shape: [i64; 2], stride: [i64; 2]| json!({"shape": shape, "stride": stride, "dtype": "float16"});
    let f32_col = json!({"shape": [1024, 1], "stride": [1, 1024], "dtype": "float32"});
    assert_eq!(ops[0]["reference"]["outputs"], json!([f16([1024, 1024], [1024, 1])]));
    assert_eq!(ops[0]["other"]["outputs"], json!([f32_col, f32_col, f16([1024, 1024], [1024, 1])]));
    assert_eq!(ops[2]["reference"]["outputs"], json!([empty, empty]));
    assert_eq!(ops[2]["other"]["outputs"], json!([f16([2048, 1024], [1024, 1])]));
    assert_eq!(ops[3]["other"]["outputs"], json!([f16([1024, 1024], [1024, 1])]));
    assert_eq!(ops[6]["reference"]["outputs"], json!([f16([1024, 1024], [1024, 1])]));
    assert_eq!(ops[6]["other"]["outputs"], json!([f16([2048, 1024], [1024, 1])]));

    for id in ["[0/2]", "[0/3]"] {
        let g = graph(&t, id);
        assert_eq!(fingerprint_groups(g), [vec!["rank0", "rank1-0", "rank2", "rank3", "rank4"]], "{id}");
        assert_eq!(g["differs"], false);
        assert_eq!(ids(&g["missing"]), ["rank1-1", "rank1-2"]);
        // Files 5/6 never compiled these: missing, not "compiled without artifact".
        assert_eq!(ids(&g["compiled_without_artifact"]), Vec::<&str>::new());
        assert_eq!(rows(g, "differences").len(), 0);
    }
}

/// graph_exec_order: both ranks' artifacts have the same ops and outputs (python on the raw
/// logs), so one group, no divergence (tlparse agrees here).
#[test]
fn identical_tensor_meta_is_one_group() {
    let b = built_ranks("graph_exec_order");
    let t = b.cross("tensor_meta");
    snapshot("cross_rank_tensor_meta__graph_exec_order", &t);
    assert_eq!((t["diverges"].clone(), t["fingerprints_differ"].clone()), (json!(false), json!(false)));
    let whole: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(whole, [vec!["rank0", "rank1"]]);
    assert_eq!(rows(&t, "graphs").len(), 2);
}
