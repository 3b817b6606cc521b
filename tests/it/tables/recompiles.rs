//! Recompiles and what changed.

use super::{artifacts_of, built, rows, snapshot};

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
            artifacts_of(&dir, c).iter().filter(|a| a["kind"] == "inductor_output_code").collect();
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

#[test]
fn a_restarted_frame_compile_keeps_its_reason_on_the_attempt_that_logged_it() {
    // Checked by hand against the raw log (two_runs/run_b): line 30344 is the `recompile_reasons`
    // artifact of frame 0, frame compile 1, attempt 0 ([0/1]): "0/0: tensor 'x' size mismatch at
    // index 0. expected 8, actual 6". Dynamo restarted that attempt (entries of attempt 1 from
    // line 30591), and the frame compile's compilation_metrics (line 30735, attempt 1, [0/1_1])
    // repeats the same `recompile_reason`. The table lists the frame compile by its final
    // attempt, [0/1_1]; the reason is the frame compile's and was logged on [0/1], from the
    // artifact.
    let b = built("torch-2.15/two_runs/run_b");
    let t = b.table("recompiles");
    let frame = rows(&t, "frames").iter().find(|f| f["frame_id"] == 0).expect("frame 0 recompiled");
    let step = &frame["compiles"][1];
    assert_eq!(step["compile_id"], "[0/1_1]");
    assert_eq!(step["reasons"], serde_json::json!(["0/0: tensor 'x' size mismatch at index 0. expected 8, actual 6"]));
    assert_eq!(step["reasons_from"], "recompile_reasons");
    assert_eq!(step["reasons_logged_on"], "[0/1]");
    // The first compile has no reason, and says where none came from.
    assert_eq!(frame["compiles"][0]["compile_id"], "[0/0_1]");
    assert!(frame["compiles"][0]["reasons_from"].is_null() && frame["compiles"][0]["reasons_logged_on"].is_null());
}

#[test]
fn without_the_artifact_the_metrics_reason_is_read() {
    // The recompiles fixture with its 7 `recompile_reasons` entries taken out (as a log whose
    // artifact was renamed or not logged). Checked by hand against the raw log: the
    // compilation_metrics of [0/1] (line 6797) has `recompile_reason` "0/0: tensor 'x' size
    // mismatch at index 0. expected 4, actual 6"; that of [0/2] (line 10075) only "0/1: tensor
    // 'x' dtype mismatch. expected Float, actual Double", the first of the two reasons its
    // artifact (line 6860) lists. [0/0]'s metrics (line 3491, no recompile) has none; every
    // recompile's metrics has one (lines 6797, 10075, 13400, 13483, 20163, 23610, 24469).
    let copy = tempfile::tempdir().unwrap();
    let log = std::fs::read_dir(crate::util::fixture("torch-2.15/recompiles")).unwrap().next().unwrap().unwrap();
    let text = std::fs::read_to_string(log.path()).unwrap();
    let mut kept = Vec::new();
    let mut dropping = false;
    for line in text.split('\n') {
        if !line.starts_with('\t') {
            dropping = line.contains(r#"{"artifact": {"name": "recompile_reasons""#);
        }
        if !dropping {
            kept.push(line);
        }
    }
    assert_eq!(text.matches(r#""name": "recompile_reasons""#).count(), 7);
    std::fs::write(copy.path().join(log.file_name()), kept.join("\n")).unwrap();
    let b = built(copy.path().to_str().unwrap());
    let t = b.table("recompiles");
    let steps = rows(&t, "frames")[0]["compiles"].as_array().unwrap().clone();
    assert_eq!(steps[0]["compile_id"], "[0/0]");
    assert_eq!(steps[0]["reasons"], serde_json::json!([]));
    assert_eq!(
        steps[1]["reasons"],
        serde_json::json!(["0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"])
    );
    assert_eq!(steps[1]["reasons_from"], "compilation_metrics");
    assert_eq!(steps[1]["reasons_logged_on"], "[0/1]");
    assert_eq!(
        steps[2]["reasons"],
        serde_json::json!(["0/1: tensor 'x' dtype mismatch. expected Float, actual Double"])
    );
    // Every recompile of the log has its reason, none is taken for a first compile.
    for frame in rows(&t, "frames") {
        for step in &frame["compiles"].as_array().unwrap()[1..] {
            assert_eq!(step["reasons"].as_array().unwrap().len(), 1, "{}", step["compile_id"]);
        }
    }
}
