//! The compile directory.

use super::{artifacts_of, built, rows, snapshot};

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
fn artifacts_logged_without_a_payload_are_listed_and_marked() {
    // Checked by hand: cache_warm's log lines 918, 919, 1489 and 1490 are
    // `{"artifact": {"name": "inductor_provenance_tracking_node_mappings" (then
    // "..._kernel_stack_traces"), "encoding": "json"}, "frame_id": 0, "frame_compile_id": 0,
    // "attempt": 0}` with no `has_payload` and no payload line after them (an FX graph cache hit,
    // fx_graph_cache_hit is logged at line 920); lines 2375 and 2376 are the same pair for [1/0].
    // The log has no other header line without `has_payload` but str, dynamo_start,
    // describe_*, compilation_metrics and chromium_event entries, which are no artifacts.
    let b = built("torch-2.15/cache_warm");
    let t = b.table("compile_directory");
    let payloadless = |id: &str| -> Vec<(String, u64)> {
        let c = rows(&t, "compiles").iter().find(|c| c["compile_id"] == id).unwrap();
        artifacts_of(&t, c)
            .iter()
            .filter(|a| a["no_payload"] == true)
            .map(|a| (a["name"].as_str().unwrap().to_string(), a["line"].as_u64().unwrap()))
            .collect()
    };
    let (nodes, kernels) =
        ("inductor_provenance_tracking_node_mappings", "inductor_provenance_tracking_kernel_stack_traces");
    let want = |pairs: &[(&str, u64)]| pairs.iter().map(|&(n, l)| (n.to_string(), l)).collect::<Vec<_>>();
    assert_eq!(payloadless("[0/0]"), want(&[(nodes, 918), (kernels, 919), (nodes, 1489), (kernels, 1490)]));
    assert_eq!(payloadless("[1/0]"), want(&[(nodes, 2375), (kernels, 2376)]));
    // Each is a row of its own, in log order among the others, with nothing to read.
    let c00 = &rows(&t, "compiles")[0];
    let a = artifacts_of(&t, c00).iter().find(|a| a["line"] == 918).unwrap();
    assert_eq!(a["kind"], "artifact");
    assert!(a["blob"].is_null() && a["format"].is_null() && a.get("url").is_none());
    assert_eq!((a["size"].as_u64(), a["lines"].as_u64()), (Some(0), Some(0)));
    let next = artifacts_of(&t, c00).iter().find(|x| x["seq"].as_u64() == Some(a["seq"].as_u64().unwrap() + 2));
    assert_eq!(next.unwrap()["name"], "fx_graph_cache_hit");
    // Artifacts with a payload never carry the marker (it is left out, not false).
    assert!(artifacts_of(&t, c00).iter().all(|a| a["blob"].is_null() || a.get("no_payload").is_none()));
}

#[test]
fn payloadless_artifacts_stay_out_of_rank_differ() {
    // Checked by hand: ranks_shifted's rank 2 log (lines 4590-4591) logs the two
    // inductor_provenance_tracking_* artifacts of [1/0] without a payload (an FX graph cache hit),
    // and no other rank logs them. rank_differ compares payloads: these have none, so it must
    // not list them (neither as a key present on rank 2 alone nor as missing elsewhere).
    let (b, streams) = super::built_dir("torch-2.15/ranks_shifted");
    let dir = b.table_of(&streams[&2], "compile_directory");
    let c10 = rows(&dir, "compiles").iter().find(|c| c["compile_id"] == "[1/0]").unwrap();
    let lines: Vec<u64> = artifacts_of(&dir, c10)
        .iter()
        .filter(|a| a["no_payload"] == true)
        .map(|a| a["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [4590, 4591]);
    let differ = b.bundle.cross_rank_table("rank_differ").unwrap().unwrap();
    assert!(rows(&differ, "artifacts").iter().all(|a| !a["name"].as_str().unwrap().starts_with("inductor_provenance")));
}

#[test]
fn compiled_autograd_captures_have_their_own_status_and_link_to_their_graphs_compiles() {
    // Checked by hand against the raw log (torch 2.15, compiled autograd on, a compiled
    // train_step whose loss.backward() compiled autograd takes over): lines 4037 to 4240 are the
    // 32 entries that carry `"compiled_autograd_id": 0, "attempt": 0` and no frame ids (chromium
    // "compiled_autograd" B at 4037 and E at 4240, the capture's describe_* entries, the
    // compiled_autograd_graph_pre_reordering artifact at 4088 and compiled_autograd_graph at
    // 4169); none is a compilation_metrics. The only entries with compiled_autograd_id 0 and a
    // frame are the 144 of frame 2, compile 0, attempt 0: Dynamo compiling the captured graph
    // (`forward` of <eval_with_key>.7; its compilation_metrics at line 8383 has compile_id
    // "!0/2/0", graph_op_count 43, fail_type null). [1/0] (inspect.isclass) and [3/0] carry no
    // compiled_autograd_id.
    let b = built("torch-2.15/compiled_autograd");
    let t = b.table("compile_directory");
    let compiles = rows(&t, "compiles");
    let ids: Vec<&str> = compiles.iter().map(|c| c["compile_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["[0/0]", "[0/0_1]", "[!0/-/-]", "[1/0]", "[!0/2/0]", "[3/0]"]);
    let row = |id: &str| compiles.iter().find(|c| c["compile_id"] == id).unwrap();

    let capture = row("[!0/-/-]");
    assert_eq!(capture["status"], "compiled_autograd_capture");
    assert_eq!(capture["graph_compiles"], serde_json::json!(["[!0/2/0]"]));
    assert!(capture["co_name"].is_null() && capture["duration_s"].is_null());
    let names: Vec<&str> = artifacts_of(&t, capture).iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["compiled_autograd_graph_pre_reordering", "compiled_autograd_graph"]);
    assert_eq!(artifacts_of(&t, capture)[0]["line"], 4088);
    assert_eq!(
        b.bundle.index_rows(&b.only_stream()).unwrap()[capture["first_seq"].as_u64().unwrap() as usize].line,
        4037
    );

    let graph = row("[!0/2/0]");
    assert_eq!((graph["status"].as_str(), graph["co_name"].as_str()), (Some("ok"), Some("forward")));
    assert!(graph.get("graph_compiles").is_none(), "only captures list graph compiles");
    // Nothing of this log is missing its metrics any more.
    assert!(compiles.iter().all(|c| c["status"] != "metrics_missing"));
    snapshot("compile_directory__compiled_autograd", &t);
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
    let dumps: Vec<&serde_json::Value> = artifacts_of(&t, c).iter().filter(|a| a["kind"] == "dump_file").collect();
    assert_eq!(dumps.len(), 1);
    assert_eq!((dumps[0]["line"].as_u64(), dumps[0]["name"].as_str()), (Some(4453), Some("<eval_with_key>.7")));
    assert_eq!(dumps[0]["tlparse_name"], "eval_with_key_7");
    let stacks = b.bundle.stacks(&b.only_stream()).unwrap();
    let innermost = &stacks.frames[*stacks.stacks[c["stack"].as_u64().unwrap() as usize].last().unwrap() as usize];
    assert_eq!((innermost.file.as_deref(), innermost.name.as_str()), (Some("<eval_with_key>.7"), "forward"));
}

/// (line, name, graph) of a compile's artifacts that have a graph label or are AOT graphs or
/// output code.
fn graph_labels(t: &serde_json::Value, c: &serde_json::Value) -> Vec<(u64, String, Option<String>)> {
    artifacts_of(t, c)
        .iter()
        .map(|a| {
            (
                a["line"].as_u64().unwrap(),
                a["name"].as_str().unwrap().to_string(),
                a["graph"].as_str().map(str::to_string),
            )
        })
        .filter(|(_, name, graph)| graph.is_some() || name.starts_with("aot_") || name == "inductor_output_code")
        .collect()
}

fn labels(want: &[(u64, &str, Option<&str>)]) -> Vec<(u64, String, Option<String>)> {
    want.iter().map(|&(l, n, g)| (l, n.to_string(), g.map(str::to_string))).collect()
}

#[test]
fn training_artifacts_are_labelled_forward_then_backward() {
    // Checked by hand against two_runs/run_a's raw log: the chromium_event B of
    // `compile_fx.<locals>.fw_compiler_base` is at line 1147, its E at 3909; the B of
    // `compile_fx.<locals>.bw_compiler` at 4342 (after [0/0]'s compilation_metrics at 4291: the
    // backward is compiled lazily), its E at 7130, then bwd_compilation_metrics at 7158. The
    // compile logged aot_joint_graph (479), aot_forward_graph (1019), aot_backward_graph (1071).
    // fx_graph_runnable (1184), before_post_grad_graph (1320), inductor_post_grad_graph (1780),
    // inductor_output_code (2145, `# AOT ID: ['0_forward']`) and fx_graph_cache_miss (3189) are
    // inside the forward span; their namesakes at 4379, 4538, 5022, 5268 (`['0_backward']`) and
    // 6411 inside the backward's. aot_autograd_runtime_wrappers (3921) and dynamo_cpp_guards_str
    // (4064) are outside both: no label. aot_forward_graph_fw_metadata is no graph: no label.
    let b = built("torch-2.15/two_runs/run_a");
    let t = b.table("compile_directory");
    let c = &rows(&t, "compiles")[0];
    assert_eq!(c["compile_id"], "[0/0]");
    let (f, bw) = (Some("forward"), Some("backward"));
    assert_eq!(
        graph_labels(&t, c),
        labels(&[
            (479, "aot_joint_graph", None),
            (809, "aot_forward_graph_fw_metadata", None),
            (1019, "aot_forward_graph", f),
            (1071, "aot_backward_graph", bw),
            (1184, "fx_graph_runnable", f),
            (1320, "before_post_grad_graph", f),
            (1780, "inductor_post_grad_graph", f),
            (2145, "inductor_output_code", f),
            (3189, "fx_graph_cache_miss", f),
            (3921, "aot_autograd_runtime_wrappers", None),
            (4379, "fx_graph_runnable", bw),
            (4538, "before_post_grad_graph", bw),
            (5022, "inductor_post_grad_graph", bw),
            (5268, "inductor_output_code", bw),
            (6411, "fx_graph_cache_miss", bw),
        ])
    );
    let unlabelled = |line: u64| artifacts_of(&t, c).iter().find(|a| a["line"] == line).unwrap().get("graph").is_none();
    assert!(unlabelled(3921) && unlabelled(4064) && unlabelled(134));
}

#[test]
fn inference_artifacts_are_labelled_inference_with_old_and_new_span_names() {
    // tlparse-tests/simple.log, checked by hand: aot_inference_graph at line 236, then the span
    // `compile_fx.<locals>.fw_compiler_base` from 258 to 1502 holding fx_graph_runnable (307),
    // inductor_post_grad_graph (433), inductor_output_code (629, `# AOT ID: ['0_inference']`)
    // and fx_graph_cache_miss (1206); aotautograd_cache_hash (1811) is after it.
    let b = built("tlparse-tests/simple.log");
    let t = b.table("compile_directory");
    let i = Some("inference");
    assert_eq!(
        graph_labels(&t, &rows(&t, "compiles")[0]),
        labels(&[
            (202, "aot_forward_graph_fw_metadata", None),
            (236, "aot_inference_graph", i),
            (307, "fx_graph_runnable", i),
            (433, "inductor_post_grad_graph", i),
            (629, "inductor_output_code", i),
            (1206, "fx_graph_cache_miss", i),
        ])
    );
    // inductor_provenance_aot_log.txt (AOT Inductor, older torch): no compile ids; the span is
    // named plain `fw_compiler_base` (B at line 296, E at 1921) after aot_inference_graph (257);
    // the AOT wrapper code (823) inside it is the inference graph's, before_pre_grad_graph (39)
    // before it has no label.
    let b = built("tlparse-tests/inductor_provenance_aot_log.txt");
    let t = b.table("compile_directory");
    let graph_at = |line: u64| {
        let a = rows(&t, "unattributed").iter().find(|a| a["line"] == line).unwrap();
        a.get("graph").and_then(|g| g.as_str()).map(str::to_string)
    };
    assert_eq!(graph_at(257).as_deref(), i);
    assert_eq!(graph_at(823).as_deref(), i);
    assert_eq!(graph_at(1898).as_deref(), i);
    assert_eq!(graph_at(39), None);
}

#[test]
fn cache_hits_label_each_graph_load_by_its_output_codes_aot_id() {
    // torch-2.15/cache_warm, checked by hand: an AOTAutograd cache hit logs no compiler spans; it
    // loads both graphs inside one `AOTAutogradCache.inductor_load` span (B at line 541, E at
    // 1493), one after the other, each load ending with its fx_graph_cache_hit: 649
    // fx_graph_runnable, 755 inductor_post_grad_graph, 777 output code `# AOT ID: ['0_forward']`,
    // 918-919 provenance, 920 fx_graph_cache_hit; then 994, 1127, 1173 (`['0_backward']`),
    // 1489-1490, 1491. Each load's entries take its output code's graph. The AOT graphs before
    // the span are labelled by name; `aot_joint_graph` holds both and has none.
    let b = built("torch-2.15/cache_warm");
    let t = b.table("compile_directory");
    let c = &rows(&t, "compiles")[0];
    let graph_at = |line: u64| {
        let a = artifacts_of(&t, c).iter().find(|a| a["line"] == line).unwrap();
        a.get("graph").and_then(|g| g.as_str()).map(str::to_string)
    };
    for line in [649, 755, 777, 918, 919, 920] {
        assert_eq!(graph_at(line).as_deref(), Some("forward"), "line {line}");
    }
    for line in [994, 1127, 1173, 1489, 1490, 1491] {
        assert_eq!(graph_at(line).as_deref(), Some("backward"), "line {line}");
    }
}

#[test]
fn labels_agree_with_provenance_graphs() {
    // One definition: each provenance graph's role (from its output code's AOT ID) is the label
    // of its Python code and of its post-grad graph (labelled from the compiler span it was
    // logged in). training's [0/0_1] has a forward (code at line 2691) and a backward (6489),
    // [3/0] an inference graph (11913); the jit_debug_handle log a forward (1423).
    let fixtures = ["torch-2.15/training", "tlparse-tests/inductor_provenance_jit_debug_handle_log.txt"];
    let mut roles = Vec::new();
    for fixture in fixtures {
        let b = built(fixture);
        let prov = b.table("provenance");
        let dir = b.table("compile_directory");
        let all: Vec<&serde_json::Value> = rows(&dir, "compiles")
            .iter()
            .flat_map(|c| artifacts_of(&dir, c))
            .chain(rows(&dir, "unattributed"))
            .collect();
        for g in rows(&prov, "compiles").iter().flat_map(|c| rows(c, "graphs")) {
            for pane in ["python_code", "post_grad"] {
                let seq = &g[pane]["artifact"]["seq"];
                let a = all.iter().find(|a| &a["seq"] == seq).unwrap_or_else(|| panic!("{fixture}: no {pane}"));
                assert_eq!(a["graph"], g["graph"], "{fixture} {pane} at line {}", a["line"]);
            }
            roles.push((
                g["python_code"]["artifact"]["line"].as_u64().unwrap(),
                g["graph"].as_str().unwrap().to_string(),
            ));
        }
    }
    let want = [(2691, "forward"), (6489, "backward"), (11913, "inference"), (1423, "forward")];
    assert_eq!(roles, want.map(|(l, g)| (l, g.to_string())));
}
