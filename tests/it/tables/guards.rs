//! Guards and shapes.

use serde_json::Value;

use super::{built, rows, snapshot};

fn find(list: &[Value], what: impl Fn(&Value) -> bool) -> &Value {
    list.iter().find(|r| what(r)).expect("no such row")
}

#[test]
fn dynamic_shapes_fixture_has_symbols_guards_and_specializations_per_compile() {
    // Checked by hand against the raw log (grep and a Python count): 35 guard_added_fast, 13
    // create_symbol, 16 create_unbacked_symbol, 2 symbolic_shape_specialization and 7
    // dynamo_cpp_guards_str entries. The first guard tree (line 3654, [0/0]) has 34 payload lines,
    // 27 leaf guards (7 of them LAMBDA_GUARD, the shape guards) and ends with
    // "Guard latency = 72.97 us". [0/0] logs 8 guard_added_fast and its compilation_metrics say
    // guard_count 10, shape_env_guard_count 6. Line 74 creates s77 from L['x'].size()[0] with
    // hint 10, in user code `n = x.shape[0]` (dynamic_shapes.py:15). Line 14633 specializes s77
    // to 7 in [2/0], from `if x.shape[0] == 7:` at line 58 of h.
    let b = built("torch-2.15/dynamic_shapes");
    let t = b.table("guards");
    assert_eq!(rows(&t, "shape_guards").len(), 35);
    assert!(rows(&t, "shape_guards").iter().all(|g| g["kind"] == "guard_added_fast"));
    let symbols = rows(&t, "symbols");
    assert_eq!(symbols.iter().filter(|s| s["unbacked"] == false).count(), 13);
    assert_eq!(symbols.iter().filter(|s| s["unbacked"] == true).count(), 16);
    assert_eq!(rows(&t, "specializations").len(), 2);
    assert_eq!(rows(&t, "data_dependent").len(), 0);
    assert_eq!(rows(&t, "dynamo_guards").len(), 0);

    let trees = rows(&t, "guard_trees");
    assert_eq!(trees.len(), 7);
    let first = &trees[0];
    assert_eq!((first["compile_id"].as_str(), first["line"].as_u64()), (Some("[0/0]"), Some(3654)));
    assert_eq!(first["lines"], 34);
    assert_eq!(first["latency_us"], 72.97);
    let guards = first["guards"].as_array().unwrap();
    assert_eq!(guards.len(), 27);
    assert_eq!(guards.iter().filter(|g| g["kind"] == "LAMBDA_GUARD").count(), 7);
    let tensor_match = find(guards, |g| g["kind"] == "TENSOR_MATCH" && g["source"] == "L['x']");
    assert_eq!(tensor_match["user_code"], "n = x.shape[0]");

    let c00 = find(rows(&t, "compiles"), |c| c["compile_id"] == "[0/0]");
    assert_eq!((c00["shape_guards"].as_u64(), c00["guard_count"].as_u64()), (Some(8), Some(10)));
    assert_eq!((c00["shape_env_guard_count"].as_u64(), c00["tree_guards"].as_u64()), (Some(6), Some(27)));

    let s77 = &symbols[0];
    assert_eq!((s77["symbol"].as_str(), s77["hint"].as_str()), (Some("s77"), Some("10")));
    assert_eq!((s77["line"].as_u64(), s77["source"].as_str()), (Some(74), Some("L['x'].size()[0]")));
    assert_eq!(s77["user_frame"]["line"], 15);
    assert_eq!(s77["user_frame"]["loc"], "n = x.shape[0]");
    // The user frame is the innermost frame of the row's user stack in the stream's stacks.
    let stacks = b.bundle.stacks(&b.only_stream()).unwrap();
    let user_stack = &stacks.stacks[s77["user_stack"].as_u64().unwrap() as usize];
    assert_eq!(stacks.frames[*user_stack.last().unwrap() as usize].line, 15);

    let spec = &rows(&t, "specializations")[0];
    assert_eq!((spec["compile_id"].as_str(), spec["line"].as_u64()), (Some("[2/0]"), Some(14633)));
    assert_eq!((spec["symbol"].as_str(), spec["value"].as_str()), (Some("s77"), Some("7")));
    assert_eq!((spec["user_frame"]["name"].as_str(), spec["user_frame"]["line"].as_i64()), (Some("h"), Some(58)));
    snapshot("guards__dynamic_shapes", &t);
}

#[test]
fn old_structured_dynamo_guards_are_listed_with_their_frames() {
    // comp_metrics.log (April 2024 format) has 3 dynamo_guards entries (lines 25, 42, 59), each
    // a JSON list of 3 guards whose user_stack is null. The 2nd guard of each,
    // `utils_device.CURRENT_DEVICE == None`, has a 31-33 frame stack whose innermost frame is
    // init_ambient_guards at output_graph.py:425, its file given as a string-table index.
    // compilation_metrics: guard_count 9 for [0/0_1] and [1/0_1], 6 for [2/0].
    let b = built("tlparse-tests/comp_metrics.log");
    let t = b.table("guards");
    let guards = rows(&t, "dynamo_guards");
    assert_eq!(guards.len(), 9);
    let lines: Vec<u64> = guards.iter().map(|g| g["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [25, 25, 25, 42, 42, 42, 59, 59, 59]);
    assert!(guards.iter().all(|g| g["user_frame"].is_null()));
    let device = &guards[1];
    assert_eq!(
        (device["index"].as_u64(), device["code"].as_str()),
        (Some(1), Some("utils_device.CURRENT_DEVICE == None"))
    );
    assert_eq!(device["frame"]["name"], "init_ambient_guards");
    assert_eq!(device["frame"]["line"], 425);
    assert!(device["frame"]["file"].as_str().unwrap().ends_with("torch/_dynamo/output_graph.py"));
    // The blob is the entry's payload.
    let blob = b.bundle.blob(device["blob"].as_str().unwrap()).unwrap();
    let payload: Value = serde_json::from_slice(&blob).unwrap();
    assert_eq!(payload[1]["code"], "utils_device.CURRENT_DEVICE == None");
    let counts: Vec<(String, u64)> = rows(&t, "compiles")
        .iter()
        .map(|c| (c["compile_id"].as_str().unwrap().to_string(), c["guard_count"].as_u64().unwrap()))
        .collect();
    assert_eq!(counts, [("[0/0_1]".into(), 9), ("[1/0_1]".into(), 9), ("[2/0]".into(), 6)]);
    snapshot("guards__comp_metrics", &t);
}

#[test]
fn dtrace_logs_add_slow_guards_and_data_dependent_errors() {
    // export_dtrace's main file (the larger one): line 1503 is guard_on_data_dependent_error
    // `Eq(u0, 1)` with expr_id 140672872353936 (the node_id of u0, created at line 1498) in
    // [1/0]; line 1540 is guard_added `Eq(s77, 6)` with prefix eval in [2/0], and line 1542 the
    // same guard as guard_added_fast; line 1543 specializes s77 to 6 with a null user_stack.
    let b = built("torch-2.15/export_dtrace");
    let stream = b.bundle.manifest.streams.iter().max_by_key(|s| s.entries).unwrap().id.clone();
    let t = b.table_of(&stream, "guards");
    let dd = rows(&t, "data_dependent");
    assert_eq!(dd.len(), 1);
    assert_eq!((dd[0]["kind"].as_str(), dd[0]["line"].as_u64()), (Some("guard_on_data_dependent_error"), Some(1503)));
    assert_eq!((dd[0]["expr"].as_str(), dd[0]["expr_id"].as_u64()), (Some("Eq(u0, 1)"), Some(140672872353936)));
    let u0 = find(rows(&t, "symbols"), |s| s["symbol"] == "u0");
    assert_eq!((u0["line"].as_u64(), u0["node_id"].as_u64()), (Some(1498), Some(140672872353936)));
    let eq = |kind: &str| find(rows(&t, "shape_guards"), |g| g["expr"] == "Eq(s77, 6)" && g["kind"] == kind).clone();
    let (slow, fast) = (eq("guard_added"), eq("guard_added_fast"));
    assert_eq!((slow["line"].as_u64(), slow["prefix"].as_str()), (Some(1540), Some("eval")));
    assert_eq!(slow["frame_locals"]["loc"], "return x.reshape(2, 3) * 2");
    assert_eq!(slow["symbol_to_sources"]["s77"], "L['x'].size()[0]");
    assert_eq!((fast["line"].as_u64(), fast["compile_id"].as_str()), (Some(1542), Some("[2/0]")));
    let spec = &rows(&t, "specializations")[0];
    assert_eq!((spec["line"].as_u64(), spec["user_stack"].is_null()), (Some(1543), true));
    snapshot("guards__export_dtrace", &t);
}

#[test]
fn logs_without_guards_or_shapes_have_no_guards_table() {
    // chromium_events.log has no guard, symbol or specialization entry.
    let b = built("tlparse-tests/chromium_events.log");
    assert!(!b.has_table("guards"));
}

#[test]
fn a_symbol_is_placed_at_the_users_line_not_the_library_call_under_it() {
    // Checked by hand against the raw log of rank 1 (ranks_shifted): line 9668 creates s72 with
    // user_stack [sync_grads at file 5 line 30, all_reduce at file 8 line 195]; file 5 is
    // /home/user/scenarios/ranks_shifted.py (line 37), file 8
    // .../site-packages/torch/distributed/_functional_collectives.py (line 9652). Line 16619
    // creates s77 with user_stack [forward at file 5 line 21, forward at file 24 line 134], file
    // 24 being .../site-packages/torch/nn/modules/linear.py (line 16617). The innermost frame is
    // torch's each time; the user's line is ranks_shifted.py:30 and :21.
    let (b, ranks) = super::built_dir("torch-2.15/ranks_shifted");
    let t = b.table_of(&ranks[&1], "guards");
    let symbols = rows(&t, "symbols");
    let at = |line: u64| {
        let f = &find(symbols, |s| s["line"] == line)["user_frame"];
        (f["file"].as_str().unwrap().to_string(), f["line"].as_i64().unwrap(), f["name"].as_str().unwrap().to_string())
    };
    let user = "/home/user/scenarios/ranks_shifted.py".to_string();
    assert_eq!(at(9668), (user.clone(), 30, "sync_grads".to_string()));
    assert_eq!(at(16619), (user, 21, "forward".to_string()));
    // The whole stack is still there, library frame last.
    let s77 = find(symbols, |s| s["line"] == 16619);
    assert_eq!(s77["symbol"], "s77");
    assert!(s77["user_stack"].is_u64());
}
