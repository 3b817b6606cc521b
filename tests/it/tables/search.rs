//! The search table: the terms a viewer's global search finds, checked against the raw logs.

use serde_json::Value;

use super::{built, rows, snapshot};

/// The compile ids (as displayed) a term of `kind` with exactly `text` points at; panics when the
/// table has no such term.
fn compiles_of(table: &Value, kind: &str, text: &str) -> Vec<String> {
    let ids = rows(table, "compiles");
    let term = rows(table, "terms")
        .iter()
        .find(|t| t["kind"] == kind && t["text"] == text)
        .unwrap_or_else(|| panic!("no {kind} term {text:?}"));
    term["compiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| ids[i.as_u64().unwrap() as usize].as_str().unwrap().into())
        .collect()
}

#[test]
fn graph_breaks_fixture_terms_point_at_their_compiles() {
    // Checked by hand in torch-2.15/graph_breaks' raw log: the dynamo_graph_break_reason artifact
    // of frame 5 attempt 0 (log line 14276) is "Unsupported Tensor.item() call with
    // capture_scalar_outputs=False", the only such artifact; `unsupported_helper` is the co_name
    // of frame 8's compilation_metrics (attempt 1, line 21693) and of attempt 0's dynamo_start
    // stack; every one of the 15 C++ guard trees (dynamo_cpp_guards_str) holds the guard
    // `utils_device.CURRENT_DEVICE == None` (15 lines of the log).
    let b = built("torch-2.15/graph_breaks");
    let t = b.table("search");
    assert_eq!(
        compiles_of(&t, "graph_break", "Unsupported Tensor.item() call with capture_scalar_outputs=False"),
        ["[5/0]"]
    );
    assert_eq!(compiles_of(&t, "function", "unsupported_helper"), ["[8/0_1]", "[8/0]"]);
    assert_eq!(compiles_of(&t, "file", "/home/user/scenarios/graph_breaks.py").len(), 27);
    assert_eq!(compiles_of(&t, "guard", "utils_device.CURRENT_DEVICE == None").len(), 15);
    assert_eq!(compiles_of(&t, "artifact", "dynamo_graph_break_reason").len(), 10);
    // Terms are distinct (kind, text) pairs, each compile listed once.
    let terms = rows(&t, "terms");
    let mut keys: Vec<(String, String)> =
        terms.iter().map(|t| (t["kind"].to_string(), t["text"].as_str().unwrap().to_string())).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), terms.len());
    for term in terms {
        let c: Vec<u64> = term["compiles"].as_array().unwrap().iter().map(|i| i.as_u64().unwrap()).collect();
        assert!(c.windows(2).all(|w| w[0] < w[1]), "{term}");
    }
    snapshot("search__graph_breaks", &t);
}

#[test]
fn failures_fixture_has_each_failure_message() {
    // torch-2.15/failures' raw log: six compilation_metrics with fail_type set; the first two are
    // BackendCompilerFailed "backend='flaky_backend' raised:\nRuntimeError: flaky_backend:
    // refusing to compile a graph with cos" (same text, two compiles), the fourth UserError
    // "Consider annotating your code using torch._check*()...".
    let b = built("torch-2.15/failures");
    let t = b.table("search");
    let failures: Vec<&Value> = rows(&t, "terms").iter().filter(|t| t["kind"] == "failure").collect();
    let flaky: Vec<&&Value> = failures
        .iter()
        .filter(|f| f["text"].as_str().unwrap().contains("refusing to compile a graph with cos"))
        .collect();
    assert_eq!(flaky.len(), 1, "one distinct message");
    assert!(flaky[0]["text"].as_str().unwrap().starts_with("BackendCompilerFailed: backend='flaky_backend' raised:"));
    assert_eq!(flaky[0]["compiles"].as_array().unwrap().len(), 2);
    assert!(
        failures.iter().any(|f| f["text"].as_str().unwrap().starts_with("UserError: Consider annotating your code"))
    );
    let compiles_failed: usize = failures.iter().map(|f| f["compiles"].as_array().unwrap().len()).sum();
    assert_eq!(compiles_failed, 6);
}
