//! Inductor provenance: the line maps must equal the `lineMappings` tlparse's own tests pin for
//! its provenance fixtures (`tests/integration_test.rs`, `test_provenance_tracking_*`; the maps
//! below are copied from there). `inductor_provenance_long_log.txt`, the fixture of
//! `test_provenance_tracking_multiple_colons_in_kernel_name`, is missing upstream.

use serde_json::{Value, json};

use super::{Built, built, rows, snapshot};

/// The only provenance row of a fixture's only stream, and its only graph.
fn only_row(b: &Built) -> (Value, Value) {
    let t = b.table("provenance");
    let compiles = rows(&t, "compiles");
    assert_eq!(compiles.len(), 1, "one compile with node mappings");
    let graphs = rows(&compiles[0], "graphs");
    assert_eq!(graphs.len(), 1, "one graph with node mappings");
    (compiles[0].clone(), graphs[0].clone())
}

/// Line `n` (1-based) of a pane's blob, with the map line converted by the pane's offset.
fn pane_line(b: &Built, pane: &Value, map_line: &str) -> String {
    let text = String::from_utf8(b.bundle.blob(pane["artifact"]["blob"].as_str().unwrap()).unwrap()).unwrap();
    let n = map_line.parse::<u64>().unwrap() + pane["line_offset"].as_u64().unwrap();
    text.split('\n').nth(n as usize - 1).unwrap_or_else(|| panic!("no line {n}")).to_string()
}

/// Checks the maps against tlparse's, and that they point where a viewer will look: each code
/// line a kernel maps from, read from the blob through the pane's offset, mentions one of the
/// kernels, and each post-grad line a node maps from names that node.
fn check(fixture: &str, expected: Value) -> Built {
    let b = built(&format!("tlparse-tests/{fixture}"));
    let (_, row) = only_row(&b);
    assert_eq!(row["line_mappings"], expected, "{fixture}: maps differ from tlparse's");
    check_lines(&b, &row, fixture);
    b
}

/// The maps of a graph point where a viewer will look (see [`check`]).
fn check_lines(b: &Built, row: &Value, fixture: &str) {
    let raw = &row["raw_node_mappings"];
    let kernels: Vec<&str> = raw["cppCodeToPost"].as_object().unwrap().keys().map(|k| k.as_str()).collect();
    for (pane, map) in [("python_code", "pyCodeToPost"), ("cpp_code", "cppCodeToPost")] {
        for line in row["line_mappings"][map].as_object().unwrap().keys() {
            let text = pane_line(b, &row[pane], line);
            let plain = |k: &str| k.rsplit_once(':').map_or(k, |(p, _)| p).to_string();
            assert!(kernels.iter().any(|k| text.contains(&plain(k))), "{fixture} {pane} line {line}: {text}");
        }
    }
    let post_nodes: Vec<&str> = raw["postToPre"].as_object().unwrap().keys().map(|k| k.as_str()).collect();
    for line in row["line_mappings"]["postToPre"].as_object().unwrap().keys() {
        let text = pane_line(b, &row["post_grad"], line);
        let name = text.trim().split('=').next().unwrap().split(':').next().unwrap().trim();
        assert!(post_nodes.contains(&name), "{fixture} post-grad line {line} names {name}");
    }
}

#[test]
fn aot_cuda_maps_equal_tlparses() {
    let b = check(
        "inductor_provenance_aot_cuda_log.txt",
        json!({"cppCodeToPost": {"1060": [14, 27, 24], "1064": [21, 18, 15], "1071": [24], "1079": [14, 27, 24], "1084": [35, 31, 28, 34, 33, 32]}, "postToCppCode": {"14": [1060, 1079], "15": [1064], "18": [1064], "21": [1064], "24": [1071, 1060, 1079], "27": [1060, 1079], "28": [1084], "31": [1084], "32": [1084], "33": [1084], "34": [1084], "35": [1084]}, "postToPre": {"11": [8], "14": [8], "15": [8], "18": [11], "21": [14], "24": [17], "27": [20], "28": [20], "31": [23], "32": [23], "33": [23], "34": [23], "35": [23]}, "postToPyCode": {}, "preToPost": {"11": [18], "14": [21], "17": [24], "20": [27, 28], "23": [31, 32, 33, 34, 35], "8": [11, 14, 15]}, "pyCodeToPost": {}}),
    );
    // By hand on the log: AOT Inductor logs everything without a compile id; the panes are the
    // before_pre_grad_graph (line 39), after_post_grad_graph and the inductor_aot_wrapper_code
    // graph_dump, whose payload starts with one empty line (tlparse numbers from the next one).
    let (compile, row) = only_row(&b);
    assert_eq!(compile["compile_id"], Value::Null);
    assert_eq!(compile["dir"], "-_-_-_-");
    assert_eq!(compile["pre_grad"]["artifact"]["name"], "before_pre_grad_graph");
    assert_eq!(compile["pre_grad"]["artifact"]["line"], 39);
    // C++ code has no `# AOT ID:` line: the log does not say which graph this is.
    assert_eq!((&row["graph"], &row["aot_id"]), (&Value::Null, &Value::Null));
    assert_eq!(row["post_grad"]["artifact"]["name"], "after_post_grad_graph");
    assert_eq!(row["cpp_code"]["artifact"]["name"], "inductor_aot_wrapper_code");
    assert_eq!(row["cpp_code"]["line_offset"], 1);
    assert_eq!(row["python_code"], Value::Null);
    assert_eq!(row["node_mappings"]["name"], "inductor_provenance_tracking_node_mappings");
    // Line 1060 of tlparse's C++ pane is line 1061 of the payload, the `aoti_torch_cuda_mm_out`
    // call; 1064 is line 1065, `call_triton_poi_fused_addmm_relu_sigmoid_0(buf1, ...)`.
    assert!(pane_line(&b, &row["cpp_code"], "1060").contains("aoti_torch_cuda_mm_out(buf0,"));
    assert!(pane_line(&b, &row["cpp_code"], "1064").contains("call_triton_poi_fused_addmm_relu_sigmoid_0(buf1,"));
    snapshot("provenance__aot_cuda", &b.table("provenance"));
}

#[test]
fn aot_debug_handle_maps_equal_tlparses() {
    let b = check(
        "inductor_provenance_aot_debug_handle_log.txt",
        json!({"cppCodeToPost": {"1074": [12], "1079": [19, 16, 13], "1087": [22], "1096": [25], "1102": [33, 29, 26, 32, 31, 30]}, "postToCppCode": {"12": [1074], "13": [1079], "16": [1079], "19": [1079], "22": [1087], "25": [1096], "26": [1102], "29": [1102], "30": [1102], "31": [1102], "32": [1102], "33": [1102]}, "postToPre": {"11": [8], "12": [8], "13": [8], "16": [11], "19": [14], "22": [17], "25": [20], "26": [20], "29": [23], "30": [23], "31": [23], "32": [23], "33": [23]}, "postToPyCode": {}, "preToPost": {"11": [16], "14": [19], "17": [22], "20": [25, 26], "23": [29, 30, 31, 32, 33], "8": [11, 12, 13]}, "pyCodeToPost": {}}),
    );
    // By hand: the log's kernel stack traces artifact has 5 kernels, each named with a debug
    // handle (`triton_poi_fused_addmm_relu_sigmoid_0:1` first), each with at least one trace.
    let t = b.table("provenance");
    let traces = rows(&t, "kernel_stack_traces");
    assert_eq!(traces.len(), 5);
    assert_eq!(traces[0]["kernel"], "triton_poi_fused_addmm_relu_sigmoid_0:1");
    assert!(traces[0]["traces"][0].as_str().unwrap().contains("x = self.sigmoid(x)"));
    assert!(traces.iter().all(|r| !r["traces"].as_array().unwrap().is_empty()));
}

#[test]
fn aot_maps_equal_tlparses() {
    check(
        "inductor_provenance_aot_log.txt",
        json!({"cppCodeToPost": {"813": [12, 24, 21], "821": [18, 15, 21], "829": [12, 24, 21], "834": [31, 27, 30, 29, 28]}, "postToCppCode": {"12": [813, 829], "15": [821], "18": [821], "21": [821, 813, 829], "24": [813, 829], "27": [834], "28": [834], "29": [834], "30": [834], "31": [834]}, "postToPre": {"11": [8], "12": [8], "15": [11], "18": [14], "21": [17], "24": [20], "27": [23], "28": [23], "29": [23], "30": [23], "31": [23]}, "postToPyCode": {}, "preToPost": {"11": [15], "14": [18], "17": [21], "20": [24], "23": [27, 28, 29, 30, 31], "8": [11, 12]}, "pyCodeToPost": {}}),
    );
}

#[test]
fn aot_old_artifact_names_maps_equal_tlparses() {
    let b = check(
        "inductor_provenance_aot_log_old.txt",
        json!({"cppCodeToPost": {"704": [21], "717": [31, 27, 30, 29, 28]}, "postToCppCode": {"21": [704], "27": [717], "28": [717], "29": [717], "30": [717], "31": [717]}, "postToPre": {"11": [8], "12": [8], "15": [11], "18": [14], "21": [17], "24": [20], "27": [23], "28": [23], "29": [23], "30": [23], "31": [23]}, "postToPyCode": {}, "preToPost": {"11": [15], "14": [18], "17": [21], "20": [24], "23": [27, 28, 29, 30, 31], "8": [11, 12]}, "pyCodeToPost": {}}),
    );
    // By hand: this older log has the graphs as top-level kinds `inductor_pre_grad_graph` and
    // `inductor_post_grad_graph`, and logs the node mappings before the C++ wrapper code.
    let (compile, row) = only_row(&b);
    assert_eq!(compile["pre_grad"]["artifact"]["kind"], "inductor_pre_grad_graph");
    assert_eq!(row["post_grad"]["artifact"]["kind"], "inductor_post_grad_graph");
    assert!(row["node_mappings"]["seq"].as_u64() < row["cpp_code"]["artifact"]["seq"].as_u64());
}

#[test]
fn jit_cuda_maps_equal_tlparses() {
    let b = check(
        "inductor_provenance_jit_cuda_log.txt",
        json!({"cppCodeToPost": {}, "postToCppCode": {}, "postToPre": {"11": [14], "14": [17], "17": [20], "20": [23], "21": [23], "24": [26], "25": [26], "26": [26], "27": [26], "28": [26], "4": [11], "7": [11], "8": [11]}, "postToPyCode": {"11": [192], "14": [192], "17": [197, 186, 201], "20": [186, 201], "21": [207], "24": [207], "25": [207], "26": [207], "27": [207], "28": [207], "7": [186, 201], "8": [192]}, "preToPost": {"11": [4, 7, 8], "14": [11], "17": [14], "20": [17], "23": [20, 21], "26": [24, 25, 26, 27, 28]}, "pyCodeToPost": {"186": [7, 20, 17], "192": [14, 11, 8], "197": [17], "201": [7, 20, 17], "207": [28, 24, 21, 27, 26, 25]}}),
    );
    // By hand: a JIT compile [0/0]; its inductor_output_code payload starts with `# AOT ID:`, so
    // the Python pane's lines are the blob's; a compilation_metrics_runtime entry logged as
    // [0/0] without attempt joins the same compile id rather than making a second row.
    let (compile, row) = only_row(&b);
    assert_eq!(compile["compile_id"], "[0/0]");
    assert_eq!(compile["dir"], "-_0_0_0");
    // The output code (log line 1115) starts `# AOT ID: ['0_inference']`.
    assert_eq!((&row["graph"], &row["aot_id"]), (&json!("inference"), &json!("0_inference")));
    assert_eq!(row["python_code"]["artifact"]["kind"], "inductor_output_code");
    assert_eq!(row["python_code"]["line_offset"], 0);
    assert_eq!(row["cpp_code"], Value::Null);
    snapshot("provenance__jit_cuda", &b.table("provenance"));
}

#[test]
fn jit_maps_equal_tlparses() {
    check(
        "inductor_provenance_jit_log.txt",
        json!({"cppCodeToPost": {}, "postToCppCode": {}, "postToPre": {"11": [17], "14": [20], "17": [23], "20": [26], "21": [26], "22": [26], "23": [26], "24": [26], "4": [11], "5": [11], "8": [14]}, "postToPyCode": {"11": [138], "14": [138, 132, 142], "17": [132, 142], "20": [147], "21": [147], "22": [147], "23": [147], "24": [147], "5": [132, 142], "8": [138]}, "preToPost": {"11": [4, 5], "14": [8], "17": [11], "20": [14], "23": [17], "26": [20, 21, 22, 23, 24]}, "pyCodeToPost": {"132": [5, 17, 14], "138": [11, 8, 14], "142": [5, 17, 14], "147": [24, 20, 23, 22, 21]}}),
    );
}

#[test]
fn jit_debug_handle_maps_equal_tlparses() {
    check(
        "inductor_provenance_jit_debug_handle_log.txt",
        json!({"cppCodeToPost": {}, "postToCppCode": {}, "postToPre": {"12": [17], "15": [20], "18": [23], "19": [23], "22": [26], "23": [26], "24": [26], "25": [26], "26": [26], "4": [11], "5": [11], "6": [11], "9": [14]}, "postToPyCode": {"12": [204], "15": [211], "18": [216], "19": [223], "22": [223], "23": [223], "24": [223], "25": [223], "26": [223], "29": [204], "5": [197], "6": [204], "9": [204]}, "preToPost": {"11": [4, 5, 6], "14": [9], "17": [12], "20": [15], "23": [18, 19], "26": [22, 23, 24, 25, 26]}, "pyCodeToPost": {"197": [5], "204": [12, 9, 6, 29], "211": [15], "216": [18], "223": [26, 22, 19, 25, 24, 23]}}),
    );
}

#[test]
fn extended_log_has_readable_kernel_stack_traces() {
    // The extended log is the AOT CUDA log plus a kernel stack traces artifact logged after the
    // compilation metrics, so its maps are the AOT CUDA ones. By hand: the artifact has 5
    // kernels, `triton_kernel` first with 2 traces written with literal `\n` (backslash n), which
    // become newlines as on tlparse's readable page (its test checks `line 1\n  foo()`).
    let b = check(
        "inductor_provenance_extended_log.txt",
        json!({"cppCodeToPost": {"1060": [14, 27, 24], "1064": [21, 18, 15], "1071": [24], "1079": [14, 27, 24], "1084": [35, 31, 28, 34, 33, 32]}, "postToCppCode": {"14": [1060, 1079], "15": [1064], "18": [1064], "21": [1064], "24": [1071, 1060, 1079], "27": [1060, 1079], "28": [1084], "31": [1084], "32": [1084], "33": [1084], "34": [1084], "35": [1084]}, "postToPre": {"11": [8], "14": [8], "15": [8], "18": [11], "21": [14], "24": [17], "27": [20], "28": [20], "31": [23], "32": [23], "33": [23], "34": [23], "35": [23]}, "postToPyCode": {}, "preToPost": {"11": [18], "14": [21], "17": [24], "20": [27, 28], "23": [31, 32, 33, 34, 35], "8": [11, 14, 15]}, "pyCodeToPost": {}}),
    );
    let t = b.table("provenance");
    let traces = rows(&t, "kernel_stack_traces");
    assert_eq!(traces.len(), 5);
    assert_eq!(traces[0]["kernel"], "triton_kernel");
    assert_eq!(traces[4]["kernel"], "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0");
    assert_eq!(traces[0]["compile_id"], Value::Null);
    assert_eq!(
        traces[0]["traces"],
        json!(["  File \"/data/users/x.py\", line 1\n  foo()", "  File \"/data/users/x.py\", line 2\n  bar()"])
    );
    assert!(
        traces.iter().all(|r| r["traces"].as_array().unwrap().iter().all(|s| !s.as_str().unwrap().contains("\\n")))
    );
    snapshot("provenance__extended", &t);
}

#[test]
fn payload_less_provenance_artifacts_make_no_table() {
    // By hand: on an FX graph cache hit torch 2.15 logs inductor_provenance_tracking_node_mappings
    // and _kernel_stack_traces without a payload (provenance tracking was off): cache_warm has 3
    // of each, no other provenance data. There is nothing to show, and nothing is reported.
    let b = built("torch-2.15/cache_warm");
    assert!(!b.has_table("provenance"));
    let diagnostics = b.bundle.diagnostics().unwrap();
    assert!(!diagnostics.iter().any(|d| d.message.contains("provenance:")));
}

/// A log entry: an artifact of compile `[frame/0]` (or of none), with a payload when given.
fn artifact(frame: Option<u64>, name: &str, encoding: &str, payload: Option<&str>) -> String {
    let id = frame.map_or(String::new(), |f| format!(r#", "frame_id": {f}, "frame_compile_id": 0, "attempt": 0"#));
    let Some(payload) = payload else {
        return format!(
            r#"V0101 00:00:00.000000 7 a.py:1] {{"artifact": {{"name": "{name}", "encoding": "{encoding}"}}{id}}}"#
        );
    };
    let digest: [u8; 16] = <md5::Md5 as md5::Digest>::digest(payload.as_bytes()).into();
    let body: String = payload.split('\n').map(|l| format!("\n\t{l}")).collect();
    format!(
        r#"V0101 00:00:00.000000 7 a.py:1] {{"artifact": {{"name": "{name}", "encoding": "{encoding}"}}{id}, "has_payload": "{}"}}{body}"#,
        tlparse_build::parse::hex(&digest)
    )
}

#[test]
fn panes_take_tlparses_artifacts_and_ignore_payload_less_or_broken_mappings() {
    let pre = "def forward(self, a):\n    x = a + 1\n    y = x * 2";
    let post = "def forward(self, a):\n    add: \"f32[4]\" = a + 1\n    mul: \"f32[4]\" = add * 2";
    let mappings = r#"{"preToPost": {"x": ["add"], "y": ["mul"]}, "postToPre": {"add": ["x"], "mul": ["y"]}}"#;
    let log = [
        // Before any node mappings, only the latest compile's panes are held: [5/0]'s post-grad
        // graph is dropped when [6/0] logs one, so [5/0]'s row has no post-grad pane.
        artifact(Some(5), "after_post_grad_graph", "string", Some(post)),
        artifact(Some(6), "after_post_grad_graph", "string", Some(post)),
        artifact(Some(5), "inductor_provenance_tracking_node_mappings", "json", Some(mappings)),
        // [0/0]: a before_pre_grad_graph wins over a later inductor_pre_grad_graph; a later
        // payload-less or broken node mappings artifact does not replace the good one.
        artifact(Some(0), "before_pre_grad_graph", "string", Some(pre)),
        artifact(Some(0), "inductor_pre_grad_graph", "string", Some("def forward(self):\n    z = 1")),
        artifact(Some(0), "after_post_grad_graph", "string", Some(post)),
        artifact(Some(0), "inductor_provenance_tracking_node_mappings", "json", Some(mappings)),
        artifact(Some(0), "inductor_provenance_tracking_node_mappings", "json", None),
        artifact(Some(0), "inductor_provenance_tracking_node_mappings", "json", Some("[1, 2]")),
        // Without a compile id: a second post-grad graph starts a second graph; the first, left
        // without node mappings, has none and no row.
        artifact(None, "after_post_grad_graph", "string", Some("def forward(self, a):\n    z = 1")),
        artifact(None, "after_post_grad_graph", "string", Some(post)),
        artifact(None, "before_pre_grad_graph", "string", Some(pre)),
        artifact(None, "inductor_provenance_tracking_node_mappings", "json", Some(mappings)),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("provenance.log");
    std::fs::write(&path, log.join("\n")).unwrap();
    let (out_dir, out, _) = crate::util::build(&camino::Utf8PathBuf::from_path_buf(path).unwrap());
    let b = Built { _dir: out_dir, bundle: tlparse_build::bundle::reader::Bundle::open(&out).unwrap() };
    let t = b.table("provenance");
    let compiles = rows(&t, "compiles");
    let ids: Vec<&Value> = compiles.iter().map(|c| &c["compile_id"]).collect();
    assert_eq!(ids, [&json!("[5/0]"), &json!("[0/0]"), &Value::Null]);
    let expected = json!({"preToPost": {"2": [2], "3": [3]}, "postToPre": {"2": [2], "3": [3]}, "pyCodeToPost": {}, "postToPyCode": {}, "cppCodeToPost": {}, "postToCppCode": {}});
    let graph = |i: usize| {
        let graphs = rows(&compiles[i], "graphs");
        assert_eq!(graphs.len(), 1, "compile {i}");
        graphs[0].clone()
    };
    assert_eq!(graph(0)["post_grad"], Value::Null);
    assert_eq!(
        graph(0)["line_mappings"],
        json!({"preToPost": {}, "postToPre": {}, "pyCodeToPost": {}, "postToPyCode": {}, "cppCodeToPost": {}, "postToCppCode": {}})
    );
    assert_eq!(compiles[1]["pre_grad"]["artifact"]["name"], "before_pre_grad_graph");
    assert_eq!(graph(1)["node_mappings"]["line"], 22, "the mappings with a payload");
    assert_eq!(graph(1)["line_mappings"], expected);
    assert_eq!(graph(2)["line_mappings"], expected);
    assert_eq!(graph(2)["post_grad"]["artifact"]["line"], 30, "the second post-grad graph (lines 27-29 are the first)");
    let diagnostics = b.bundle.diagnostics().unwrap();
    let ours: Vec<(u64, &str)> = diagnostics
        .iter()
        .filter(|d| d.message.starts_with("provenance:"))
        .map(|d| (d.line, d.message.as_str()))
        .collect();
    assert_eq!(ours, [(25, "provenance: artifact entry not used: the node mappings are not a JSON object")]);
}

#[test]
fn multi_rank_logs_have_provenance_per_stream() {
    // By hand on multi_rank_schedule/..._rank_0_...log: compiles [0/0] and [1/0] each log node
    // mappings and Python output code. In [1/0], cppCodeToPost maps cpp_fused_all_reduce_0 to
    // `all_reduce` and cpp_fused_mul_1 to `mul`; the output code calls them on lines 84
    // (`cpp_fused_all_reduce_0(arg0_1, buf0)`) and 91 (`cpp_fused_mul_1(buf0, buf5)`), and the
    // post-grad graph defines all_reduce on line 4 and mul on line 10. Each of the three logs
    // has the same two compiles with node mappings.
    let b = built("tlparse-tests/multi_rank_schedule");
    let streams: Vec<String> = b.bundle.manifest.streams.iter().map(|s| s.id.clone()).collect();
    assert_eq!(streams.len(), 3);
    for stream in &streams {
        let t = b.table_of(stream, "provenance");
        let ids: Vec<&Value> = rows(&t, "compiles").iter().map(|c| &c["compile_id"]).collect();
        assert_eq!(ids, [&json!("[0/0]"), &json!("[1/0]")], "{stream}");
    }
    let t = b.table_of(&streams[0], "provenance");
    let c10 = &rows(&t, "compiles")[1]["graphs"][0];
    assert_eq!(c10["line_mappings"]["pyCodeToPost"], json!({"84": [4], "91": [10]}));
    assert_eq!(c10["line_mappings"]["postToPyCode"], json!({"4": [84], "10": [91]}));
    assert_eq!(c10["python_code"]["line_offset"], 0);
}

#[test]
fn a_training_compile_keeps_the_forwards_and_the_backwards_maps() {
    // torch-2.15/training (provenance_tracking_level 1; its README and the log checked by hand):
    // compile [0/0_1] logs its pre-grad graph (line 415), then the forward's post-grad graph
    // (2297), output code (2691, `# AOT ID: ['0_forward']`) and node mappings (3453); the backward
    // is compiled lazily, at the first loss.backward(), after the compile's metrics (5370): its
    // post-grad graph (6206), output code (6489, `# AOT ID: ['0_backward']`) and node mappings
    // (7411), which are only `{"version": 2.0}`. tlparse keeps the last mappings: the backward's
    // empty ones. [3/0] (SGD.step) is one inference graph (output code 11913, `['1_inference']`,
    // mappings 12478).
    let b = built("torch-2.15/training");
    let t = b.table("provenance");
    let compiles = rows(&t, "compiles");
    let ids: Vec<&Value> = compiles.iter().map(|c| &c["compile_id"]).collect();
    assert_eq!(ids, [&json!("[0/0_1]"), &json!("[3/0]")]);
    assert_eq!(compiles[0]["pre_grad"]["artifact"]["line"], 415);
    let graphs = rows(&compiles[0], "graphs");
    let lines = |g: &Value, pane: &str| g[pane]["artifact"]["line"].as_u64();
    // Each graph as JSON: [graph, aot_id, post-grad line, output code line, node mappings line].
    let summary: Vec<Value> = graphs
        .iter()
        .map(|g| {
            json!([g["graph"], g["aot_id"], lines(g, "post_grad"), lines(g, "python_code"), g["node_mappings"]["line"]])
        })
        .collect();
    assert_eq!(
        summary,
        [json!(["forward", "0_forward", 2297, 2691, 3453]), json!(["backward", "0_backward", 6206, 6489, 7411])]
    );
    // The forward's maps: pre-grad line 22 is `linear: ... = torch._C._nn.linear(layer_norm, ...)`,
    // which the mappings send to `permute` and `addmm`, post-grad lines 13 and 14.
    let forward = &graphs[0]["line_mappings"];
    assert_eq!(forward["preToPost"]["22"], json!([13, 14]));
    // Line 455 of the forward's output code (log line 3146) is `extern_kernels.addmm(primals_5,
    // buf4, ...)`, the kernel `extern_kernels.addmm:2` of the mappings, which implements `addmm`.
    assert_eq!(forward["pyCodeToPost"]["455"], json!([14]));
    check_lines(&b, &graphs[0], "training forward");
    // The backward's are empty, as logged; its raw mappings are kept to say so.
    let backward = &graphs[1];
    assert!(backward["line_mappings"].as_object().unwrap().values().all(|m| m.as_object().unwrap().is_empty()));
    assert_eq!(backward["raw_node_mappings"], json!({"version": 2.0}));
    let sgd = rows(&compiles[1], "graphs");
    assert_eq!(sgd.len(), 1);
    assert_eq!((&sgd[0]["graph"], lines(&sgd[0], "python_code")), (&json!("inference"), Some(11913)));
    snapshot("provenance__training", &t);
}
