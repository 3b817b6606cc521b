//! Graph breaks, deduplicated.

use super::{built, rows, snapshot};

#[test]
fn graph_breaks_fixture_groups_ten_breaks_by_reason_and_line() {
    // Checked by hand against the raw log: 10 dynamo_graph_break_reason artifacts. "Graph break
    // in user code at graph_breaks.py:18" (print) in frames 0, 1, 2, 3 and 14; :12 (time.sleep,
    // skipped function) in frames 7 and 8; :34 (torch._dynamo.graph_break()) in frames 10 and 11;
    // :25 (Tensor.item()) in frame 5.
    let b = built("torch-2.15/graph_breaks");
    let t = b.table("graph_breaks");
    assert_eq!(t["total"], 10);
    let groups = rows(&t, "breaks");
    let summary: Vec<(String, String, u64)> = groups
        .iter()
        .map(|g| {
            let line = g["location"].as_str().unwrap().rsplit(':').next().unwrap().to_string();
            (line, g["reason"].as_str().unwrap().to_string(), g["count"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("18".into(), "Failed to trace builtin operator".into(), 5),
            ("12".into(), "Attempted to call function marked as skipped".into(), 2),
            ("34".into(), "Call to `torch._dynamo.graph_break()`".into(), 2),
            ("25".into(), "Unsupported Tensor.item() call with capture_scalar_outputs=False".into(), 1),
        ]
    );
    assert_eq!(groups[0]["compile_ids"], serde_json::json!(["[0/0]", "[1/0]", "[2/0]", "[3/0]", "[14/0]"]));
    assert!(groups.iter().all(|g| g["example_blob"].is_string() && g["source"] == "dynamo_graph_break_reason"));
    snapshot("graph_breaks__graph_breaks", &t);
}

#[test]
fn older_logs_fall_back_to_restart_reasons() {
    // comp_metrics.log (April 2024) has no dynamo_graph_break_reason artifact; its metrics for
    // [0/0_1] and [1/0_1] each carry one restart reason, "'skip function graph_break in file
    // .../decorators.py'".
    let b = built("tlparse-tests/comp_metrics.log");
    let t = b.table("graph_breaks");
    let groups = rows(&t, "breaks");
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["source"], "restart_reasons");
    assert_eq!(groups[0]["compile_ids"], serde_json::json!(["[0/0_1]", "[1/0_1]"]));
    assert!(groups[0]["reason"].as_str().unwrap().contains("skip function graph_break"));
}

#[test]
fn logs_without_breaks_have_no_table() {
    let b = built("torch-2.15/simple");
    assert!(!b.has_table("graph_breaks"));
}
