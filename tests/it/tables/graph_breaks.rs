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
fn a_restart_reason_is_a_restart_not_a_graph_break() {
    // comp_metrics.log (April 2024) has no dynamo_graph_break_reason entry (grep: 0 lines); its
    // metrics for [0/0_1] and [1/0_1] each carry one restart reason, "'skip function graph_break
    // in file .../decorators.py'". A graph break is a dynamo_graph_break_reason entry and nothing
    // else (docs/definitions.md): no graph_breaks table, and the two restarts in failures.
    let b = built("tlparse-tests/comp_metrics.log");
    assert!(!b.has_table("graph_breaks"));
    let f = b.table("failures");
    assert_eq!(f["restarts"], 2);
    let restarts: Vec<&str> = rows(&f, "failures")
        .iter()
        .filter(|r| r["kind"] == "restart")
        .map(|r| r["compile_id"].as_str().unwrap())
        .collect();
    assert_eq!(restarts, ["[0/0_1]", "[1/0_1]"]);
}

#[test]
fn logs_without_breaks_have_no_table() {
    let b = built("torch-2.15/simple");
    assert!(!b.has_table("graph_breaks"));
}

#[test]
fn a_break_inside_torch_code_is_located_at_the_users_line() {
    // torch-2.15/training (a training step with SGD; the fixture's README and the log checked by
    // hand): the breaks at log lines 9003 ([1/0]) and 9436 ([2/0]) say "Graph break in user code
    // at .../site-packages/torch/optim/optimizer.py:78" (`torch._dynamo.graph_break()` in
    // `_use_grad`); their "User code traceback" is training.py:51 <module>, training.py:45
    // train_step (`opt.step()  # graph break inside torch/optim/optimizer.py`), optimizer.py:567
    // wrapper, optimizer.py:78 _use_grad. The user's line is training.py:45. The other breaks are
    // in user code: line 107 ([0/0], `loss.backward()` at training.py:44) and line 14755 ([5/0],
    // `opt.zero_grad()` marked as skipped, training.py:46).
    let b = built("torch-2.15/training");
    let t = b.table("graph_breaks");
    assert_eq!(t["total"], 4);
    let groups = rows(&t, "breaks");
    let script = "/home/user/scenarios/training.py";
    let optimizer = "/opt/venv/lib/python3.11/site-packages/torch/optim/optimizer.py";
    let summary: Vec<(&str, String, Option<String>, u64)> = groups
        .iter()
        .map(|g| {
            let at = |field: &str| {
                g[field].as_str().map(|s| s.replace(script, "training.py").replace(optimizer, "optimizer.py"))
            };
            (g["reason"].as_str().unwrap(), at("location").unwrap(), at("raised_at"), g["count"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("Call to `torch._dynamo.graph_break()`", "training.py:45".into(), Some("optimizer.py:78".into()), 2),
            ("Unsupported Tensor.backward() call", "training.py:44".into(), None, 1),
            ("Attempted to inline function marked as skipped", "training.py:46".into(), None, 1),
        ]
    );
    assert_eq!(groups[0]["compile_ids"], serde_json::json!(["[1/0]", "[2/0]"]));
    // The full stack, one click away: outermost first, user frames marked.
    let stack: Vec<(&str, u64, &str, bool)> = groups[0]["traceback"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (f["name"].as_str().unwrap(), f["line"].as_u64().unwrap(), f["code"].as_str().unwrap(), f["user"] == true)
        })
        .collect();
    assert_eq!(
        stack,
        [
            ("<module>", 51, "loss = train_step(torch.randn(8, 32), torch.randn(8, 4))", true),
            ("train_step", 45, "opt.step()  # graph break inside torch/optim/optimizer.py", true),
            ("wrapper", 567, "out = func(*args, **kwargs)", false),
            ("_use_grad", 78, "torch._dynamo.graph_break()", false),
        ]
    );
    snapshot("graph_breaks__training", &t);
}
