//! tlparse's draft-export report.

use serde_json::Value;
use tlparse_build::bundle::reader::Bundle;
use tlparse_build::schema::DiagnosticKind;

use super::{Built, built, rows, snapshot};
use crate::util::build;

/// (depth, id, result of the node or null) of each provenance step of a failure.
fn provenance(t: &Value, failure: &Value) -> Vec<(u64, u64, Option<String>)> {
    failure["provenance"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let node = s["node"].as_u64().map(|n| t["nodes"][n as usize]["result"].as_str().unwrap().to_string());
            (s["depth"].as_u64().unwrap(), s["id"].as_u64().unwrap(), node)
        })
        .collect()
}

#[test]
fn export_log_has_one_issue_because_only_eval_guards_count() {
    // tlparse's export.log: 7 guard_added entries, none with prefix "eval" (they have no prefix
    // at all), and one propagate_real_tensors_provenance (line 48): `Eq((((-u0)//3)) + 5, 0)`
    // specialized to False, expr_node_id 140538758781280. Following result_id/argument_ids by
    // hand through the expression_created lines 47, 46, ..., 40 reaches node_id
    // 140536506030432, the unbacked symbol u0 created at line 28 (`a = x.item()`): a chain of
    // 9 nodes. One exported_program at line 60.
    let b = built("tlparse-tests/export.log");
    let t = b.table("export_report");
    let failures = rows(&t, "failures");
    assert_eq!(failures.len(), 1);
    assert_eq!(t["skipped_guards"], 7);
    let f = &failures[0];
    assert_eq!(
        (f["failure_type"].as_str(), f["title"].as_str()),
        (Some("data_dependent_error"), Some("Data Dependent Error"))
    );
    assert_eq!((f["line"].as_u64(), f["result"].as_str()), (Some(48), Some("False")));
    assert_eq!(f["expr"], "Eq((((-u0)//3)) + 5, 0)");
    assert!(f["summary"].as_str().unwrap().contains("specialized to evaluate to `False`"));
    assert_eq!(f["frame_locals"]["loc"], "return z[:a]");
    let steps = provenance(&t, f);
    assert_eq!(steps.len(), 9);
    assert!(steps.iter().enumerate().all(|(i, s)| s.0 == i as u64));
    assert_eq!(steps[0], (0, 140538758781280, Some("Eq((((-u0)//3)) + 5, 0)".to_string())));
    assert_eq!(steps[8], (8, 140536506030432, Some("u0".to_string())));
    let u0 = &t["nodes"][8];
    assert_eq!((u0["kind"].as_str(), u0["line"].as_u64()), (Some("unbacked_symbol"), Some(28)));
    assert_eq!(u0["user_frame"]["loc"], "a = x.item()");
    let eps = rows(&t, "exported_programs");
    assert_eq!((eps.len(), eps[0]["line"].as_u64()), (1, Some(60)));
    assert!(b.bundle.blob(eps[0]["blob"].as_str().unwrap()).is_ok());
    snapshot("export_report__export", &t);
}

#[test]
fn evaluated_guard_keeps_the_argument_tlparse_cannot_resolve() {
    // export_guard_added.log: one guard_added with prefix eval (line 27), `Eq(s0, 3)`,
    // expr_node_id 140311800656080 = the expression_created at line 26, whose only argument id
    // 140311800650992 (s0, a backed symbol) was never logged as a node: tlparse shows one node,
    // this table a second step with a null node.
    let b = built("tlparse-tests/export_guard_added.log");
    let t = b.table("export_report");
    let failures = rows(&t, "failures");
    assert_eq!(failures.len(), 1);
    let f = &failures[0];
    assert_eq!((f["failure_type"].as_str(), f["expr"].as_str()), (Some("guard_evaluated"), Some("Eq(s0, 3)")));
    assert_eq!(f["symbol_to_sources"]["s0"], "L['args'][0][0].size()[0]");
    assert_eq!(f["user_frame"]["loc"], "assert a.shape[0] == 3");
    assert_eq!(provenance(&t, f), [(0, 140311800656080, Some("Eq(s0, 3)".to_string())), (1, 140311800650992, None)]);
    snapshot("export_report__export_guard_added", &t);
}

#[test]
fn dtrace_files_each_get_their_report() {
    // export_dtrace: the small file (38 lines) is draft_export's own log: a
    // propagate_real_tensors_provenance `Eq(u0, 1)` → False in [3/0] whose expr_node_id is the
    // node_id of u0 (create_unbacked_symbol, line 1), and one exported_program. The main file
    // has one guard_added with prefix eval (line 1540, `Eq(s77, 6)` in [2/0]: node
    // 140672870659344 `eq` ← 140672870773520 `mul` (line 1528) ← 140672871769616, s77, a backed
    // symbol with no node) and two exported_program entries (lines 492 and 1464).
    let b = built("torch-2.15/export_dtrace");
    let mut streams: Vec<_> = b.bundle.manifest.streams.iter().collect();
    streams.sort_by_key(|s| s.entries);
    let small = b.table_of(&streams[0].id, "export_report");
    let f = &rows(&small, "failures")[0];
    assert_eq!(rows(&small, "failures").len(), 1);
    assert_eq!((f["compile_id"].as_str(), f["failure_type"].as_str()), (Some("[3/0]"), Some("data_dependent_error")));
    assert_eq!(provenance(&small, f), [(0, 140672871226512, Some("u0".to_string()))]);
    assert_eq!(rows(&small, "exported_programs").len(), 1);

    let main = b.table_of(&streams[1].id, "export_report");
    let failures = rows(&main, "failures");
    assert_eq!(failures.len(), 1);
    let f = &failures[0];
    assert_eq!((f["line"].as_u64(), f["compile_id"].as_str()), (Some(1540), Some("[2/0]")));
    assert_eq!(f["expr"], "Eq(s77, 6)");
    assert_eq!(
        provenance(&main, f),
        [
            (0, 140672870659344, Some("Eq(s77, 6)".to_string())),
            (1, 140672870773520, Some("s77".to_string())),
            (2, 140672871769616, None)
        ]
    );
    assert_eq!(main["nodes"][1]["line"], 1528);
    let lines: Vec<u64> = rows(&main, "exported_programs").iter().map(|a| a["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [492, 1464]);
    snapshot("export_report__export_dtrace_main", &main);
}

#[test]
fn plain_trace_of_an_export_has_no_report() {
    // torch-2.15/export ran torch.export under TORCH_TRACE only: none of the dtrace kinds
    // (exported_program, guard_added, expression_created, ...) was logged, so there is nothing
    // to report (tlparse -e would claim "no issues").
    let b = built("torch-2.15/export");
    assert!(!b.has_table("export_report"));
    assert!(b.has_table("guards"));
}

#[test]
fn malformed_export_entries_never_panic() {
    // tlparse unwraps `expr`, `op`, `reason`, `result_id` and `expr_node_id` and panics when one
    // is missing; here they become nulls, and a node without result_id a diagnostic. Node 1
    // and node 2 refer to each other (a cycle), node 3 was never logged.
    let log = [
        r#"{"expression_created": {"method": "add", "result": "a", "result_id": 1, "arguments": ["b"], "argument_ids": [2]}}"#,
        r#"{"expression_created": {"method": "neg", "result": "b", "result_id": 2, "argument_ids": [1, 3]}}"#,
        r#"{"expression_created": {"method": "neg"}}"#,
        r#"{"guard_added": {"prefix": "eval", "expr_node_id": 1}}"#,
        r#"{"missing_fake_kernel": {}}"#,
        r#"{"mismatched_fake_kernel": {"op": "mylib.foo.default", "reason": "bad strides"}}"#,
        r#"{"propagate_real_tensors_provenance": {"expr": "Eq(u0, 1)"}}"#,
        r#"{"guard_added": "not an object"}"#,
    ]
    .iter()
    .map(|json| format!("V1120 23:50:08.100000 7 torch/x.py:1] {json}\n"))
    .collect::<String>();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("malformed.log");
    std::fs::write(&path, log).unwrap();
    let (dir, out, _) = build(&camino::Utf8PathBuf::from_path_buf(path).unwrap());
    let b = Built { bundle: Bundle::open(&out).unwrap(), _dir: dir };
    let t = b.table("export_report");
    let failures = rows(&t, "failures");
    let types: Vec<&str> = failures.iter().map(|f| f["failure_type"].as_str().unwrap()).collect();
    assert_eq!(types, ["guard_evaluated", "missing_fake_kernel", "mismatched_fake_kernel", "data_dependent_error"]);
    assert!(failures[0]["expr"].is_null());
    assert_eq!(
        provenance(&t, &failures[0]),
        [(0, 1, Some("a".to_string())), (1, 2, Some("b".to_string())), (2, 3, None)]
    );
    assert!(failures[1]["op"].is_null());
    assert!(failures[2]["summary"].as_str().unwrap().ends_with("The reason for the mismatch is: bad strides"));
    assert_eq!(failures[3]["provenance"], serde_json::json!([]));
    let unusable: Vec<u64> = b
        .bundle
        .diagnostics()
        .unwrap()
        .iter()
        .filter(|d| d.kind == DiagnosticKind::UnusableEntry && d.message.starts_with("export_report"))
        .map(|d| d.line)
        .collect();
    assert_eq!(unusable, [3, 8]);
}
