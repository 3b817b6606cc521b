//! The compile directory.

use super::{built, rows, snapshot};

#[test]
fn graph_breaks_fixture_lists_every_compile_id_with_its_status() {
    // Checked by hand against the raw log: 27 distinct envelope compile ids; 10 frames restart
    // once (attempt 0 and 1: frames 0, 1, 2, 3, 5, 7, 8, 10, 11, 14), and 17 compilation_metrics
    // entries, one per final attempt. Frame 6 compiles twice ([6/0], then [6/1] after a
    // recompile), both cache misses then hits: [6/1] logs fx_graph_cache_hit.
    let b = built("torch-2.15/graph_breaks");
    let t = b.table("compile_directory");
    let compiles = rows(&t, "compiles");
    assert_eq!(compiles.len(), 27);
    let status = |id: &str| {
        let c = compiles.iter().find(|c| c["compile_id"] == id).unwrap_or_else(|| panic!("no {id}"));
        c["status"].as_str().unwrap().to_string()
    };
    let restarted: Vec<&str> =
        compiles.iter().filter(|c| c["status"] == "restarted").map(|c| c["compile_id"].as_str().unwrap()).collect();
    assert_eq!(
        restarted,
        ["[0/0]", "[1/0]", "[2/0]", "[3/0]", "[5/0]", "[7/0]", "[8/0]", "[10/0]", "[11/0]", "[14/0]"]
    );
    let with_metrics = compiles.iter().filter(|c| c["co_name"].is_string()).count();
    assert_eq!(with_metrics, 17);
    assert_eq!(status("[1/0_1]"), "ok_with_restart");
    assert_eq!(status("[4/0]"), "ok");
    assert_eq!(status("[0/0_1]"), "empty_graph");
    let c61 = compiles.iter().find(|c| c["compile_id"] == "[6/1]").unwrap();
    assert!(c61["cache"].as_array().unwrap().iter().any(|o| o["cache"] == "fx_graph_cache" && o["outcome"] == "hit"));
    let c00 = compiles.iter().find(|c| c["compile_id"] == "[0/0]").unwrap();
    assert_eq!(c00["restarted_as"], "[0/0_1]");
    assert_eq!(c00["graph_breaks"][0], "Failed to trace builtin operator");
    snapshot("compile_directory__graph_breaks", &t);
}

#[test]
fn failed_compiles_are_marked_failed() {
    // comp_failure.log: compile [0/0] has fail_type set in its compilation_metrics.
    let b = built("tlparse-tests/comp_failure.log");
    let t = b.table("compile_directory");
    let failed: Vec<&serde_json::Value> = rows(&t, "compiles").iter().filter(|c| c["status"] == "failed").collect();
    assert!(!failed.is_empty());
    assert!(failed.iter().all(|c| c["fail_type"].is_string()));
    snapshot("compile_directory__comp_failure", &t);
}

#[test]
fn an_fx_dump_file_keeps_the_name_stacks_use_and_tlparses_beside_it() {
    // torch-2.15/compiled_autograd, checked by hand on the log: line 4453 is a dump_file named
    // `<eval_with_key>.7` in [!0/2/0] (the compiled-autograd graph compiled by Dynamo), whose
    // dynamo_start (line 4428) stack ends in `<eval_with_key>.7`, `forward`. tlparse writes that
    // file as dump_file/eval_with_key_7.html.
    let b = built("torch-2.15/compiled_autograd");
    let t = b.table("compile_directory");
    let c = rows(&t, "compiles").iter().find(|c| c["compile_id"] == "[!0/2/0]").expect("[!0/2/0]");
    let dumps: Vec<&serde_json::Value> =
        c["artifacts"].as_array().unwrap().iter().filter(|a| a["kind"] == "dump_file").collect();
    assert_eq!(dumps.len(), 1);
    assert_eq!((dumps[0]["line"].as_u64(), dumps[0]["name"].as_str()), (Some(4453), Some("<eval_with_key>.7")));
    assert_eq!(dumps[0]["tlparse_name"], "eval_with_key_7");
    let stacks = b.bundle.stacks(&b.only_stream()).unwrap();
    let innermost = &stacks.frames[*stacks.stacks[c["stack"].as_u64().unwrap() as usize].last().unwrap() as usize];
    assert_eq!((innermost.file.as_deref(), innermost.name.as_str()), (Some("<eval_with_key>.7"), "forward"));
}
