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

#[test]
fn recompiles_and_the_compile_directory_name_output_code_alike() {
    // Checked by hand against the raw log: [0/0] writes its output code to
    // .../2w/c2w3vze5oziy6o2k53pbexhgeknfupc7psiekbmezujjn46oee33.py (log line 1671), [0/1] to
    // .../in/cin6slx6zlbufzzbbo732uacybnek6gsmd4igyqofgtxmucqveix.py (line 4956); [1/2] and [1/3]
    // both to .../3f/c3flyejkxqvshxmsdvu6jax2gklb4gii2qsgpugdj46npf3g52uk.py (lines 21717, 24093).
    // tlparse names the files after those stems; every table names the artifact
    // `inductor_output_code` and keeps tlparse's name beside it in `tlparse_name`.
    let b = built("torch-2.15/recompiles");
    let dir = b.table("compile_directory");
    let output_code = |id: &str| {
        let c = rows(&dir, "compiles").iter().find(|c| c["compile_id"] == id).unwrap();
        let code: Vec<&serde_json::Value> =
            c["artifacts"].as_array().unwrap().iter().filter(|a| a["kind"] == "inductor_output_code").collect();
        assert_eq!(code.len(), 1, "{id}");
        assert_eq!(code[0]["name"], "inductor_output_code", "{id}");
        (code[0]["tlparse_name"].as_str().unwrap().to_string(), code[0]["blob"].as_str().unwrap().to_string())
    };
    let (t00, blob00) = output_code("[0/0]");
    let (t01, blob01) = output_code("[0/1]");
    assert_eq!(t00, "inductor_output_code_c2w3vze5oziy6o2k53pbexhgeknfupc7psiekbmezujjn46oee33");
    assert_eq!(t01, "inductor_output_code_cin6slx6zlbufzzbbo732uacybnek6gsmd4igyqofgtxmucqveix");
    let t = b.table("recompiles");
    let frames = rows(&t, "frames");
    let step = |frame: usize, i: usize| &frames[frame]["compiles"][i]["changes"];
    let changed = step(0, 1)["changed"].as_array().unwrap();
    let code = changed.iter().find(|a| a["name"] == "inductor_output_code").expect("output code changed in [0/1]");
    assert_eq!((code["before"].as_str().unwrap(), code["after"].as_str().unwrap()), (&*blob00, &*blob01));
    // Same file, same code: unchanged from [1/2] to [1/3], under the same name.
    assert_eq!(frames[1]["compiles"][3]["compile_id"], "[1/3]");
    assert!(step(1, 3)["unchanged"].as_array().unwrap().iter().any(|n| n == "inductor_output_code"));
}
