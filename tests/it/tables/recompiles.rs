//! Recompiles and what changed.

use super::{built, rows, snapshot};

#[test]
fn recompiles_fixture_shows_each_reason_and_the_guard_change() {
    // Checked by hand against the raw log (scenarios/recompiles.py): frame 0 (`f`) compiles 5
    // times ([0/0]..[0/4]) and frame 1 four times; 7 recompile_reasons artifacts (4 + 3). [0/1]
    // recompiled because "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"; its
    // dynamo_cpp_guards_str has TENSOR_MATCH with size=[None, 8] where [0/0] had size=[4, 8], and a
    // new LAMBDA_GUARD `2 <= L['x'].size()[0]`. [0/2]'s reason lists two failed entries (0/1 and 0/0,
    // dtype mismatch Float vs Double).
    let b = built("torch-2.15/recompiles");
    let t = b.table("recompiles");
    let frames = rows(&t, "frames");
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0]["co_name"], "f");
    let steps = frames[0]["compiles"].as_array().unwrap();
    let ids: Vec<&str> = steps.iter().map(|s| s["compile_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["[0/0]", "[0/1]", "[0/2]", "[0/3]", "[0/4]"]);
    assert_eq!(frames[1]["compiles"].as_array().unwrap().len(), 4);
    let reasons: usize = frames
        .iter()
        .flat_map(|f| f["compiles"].as_array().unwrap())
        .map(|s| s["reasons"].as_array().unwrap().len())
        .sum();
    assert!(reasons >= 7);
    assert!(steps[0]["changes"].is_null());
    assert_eq!(steps[1]["reasons"][0], "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6");
    let c = &steps[1]["changes"];
    assert_eq!(c["previous"], "[0/0]");
    let added: Vec<&str> = c["guards_added"].as_array().unwrap().iter().map(|g| g.as_str().unwrap()).collect();
    let removed: Vec<&str> = c["guards_removed"].as_array().unwrap().iter().map(|g| g.as_str().unwrap()).collect();
    assert!(added.iter().any(|g| g.contains("size=[None, 8]")), "{added:?}");
    assert!(added.contains(&"LAMBDA_GUARD: 2 <= L['x'].size()[0]"), "{added:?}");
    assert!(removed.iter().any(|g| g.contains("size=[4, 8]")), "{removed:?}");
    let changed: Vec<&str> = c["changed"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert!(changed.contains(&"dynamo_output_graph") && changed.contains(&"dynamo_cpp_guards_str"));
    assert_eq!(steps[2]["reasons"].as_array().unwrap().len(), 2);
    snapshot("recompiles__recompiles", &t);
}

#[test]
fn a_log_without_recompiles_has_no_table() {
    let b = built("torch-2.15/simple");
    assert!(!b.has_table("recompiles"));
}
