//! torch's own `Hint:` lines, one row per distinct hint, counted by the graph breaks, restarts and
//! failures that carried it.

use serde_json::json;

use super::{built, rows, snapshot};

/// Each row's (hint, graph breaks, restarts, failures).
fn counts(t: &serde_json::Value) -> Vec<(String, u64, u64, u64)> {
    let n = |h: &serde_json::Value, f: &str| h[f].as_u64().unwrap();
    rows(t, "hints")
        .iter()
        .map(|h| (h["hint"].as_str().unwrap().to_string(), n(h, "graph_breaks"), n(h, "restarts"), n(h, "failures")))
        .collect()
}

#[test]
fn graph_breaks_fixture_quotes_torchs_hints_with_their_breaks_and_restarts() {
    // Checked by hand against the raw log (grep -n "Hint:"): the ten dynamo_graph_break_reason
    // artifacts (lines 70 [0/0], 506 [1/0], 3998 [2/0], 7620 [3/0], 14275 [5/0], 21045 [7/0],
    // 21473 [8/0], 21992 [10/0], 22424 [11/0], 29239 [14/0]) each quote their hints twice (after
    // the reason, then in the traceback's `torch._dynamo.exc.Unsupported:` message: lines 76-78
    // and 235-237 for [0/0]): a break carries a hint once.
    // - The print breaks (graph_breaks.py:18) in frames 0, 1, 2, 3, 14 carry three hints: "Avoid
    //   calling builtin `print` ...", "If you are attempting to call a logging function ...",
    //   "Please report an issue to PyTorch." (lines 76-78, 512-514, 4004-4006, 7626-7628,
    //   29245-29247): 5 breaks each.
    // - time.sleep (graph_breaks.py:12) in frames 7 and 8: "If it is a Python builtin, please file
    //   an issue ..." and "If it is a third-party C/C++ Python extension ..." (21051-21052,
    //   21479-21480): 2 each. torch._dynamo.graph_break() (:34) in frames 10, 11: "Remove the
    //   `torch._dynamo.graph_break()` call." (21998, 22430): 2. Tensor.item() (:25) in frame 5:
    //   "Set `torch._dynamo.config.capture_scalar_outputs = True` ..." (14281): 1.
    // Restarts: the compilation_metrics of attempt 1 of each of those ten frames (lines 410, 3905,
    // 7527, 10866, 17629, 21386, 21693, 22334, 25651, 32697) have one restart reason each, the
    // break's text with the same hints (3, 3, 3, 3, 1, 2, 2, 1, 1, 3 `Hint:` on those lines): so
    // each hint has as many restarts as breaks, at [f/0_1]. No metrics has a fail_reason.
    let b = built("torch-2.15/graph_breaks");
    let t = b.table("hints");
    let print = "Avoid calling builtin `print` with argument types ['str']. Consider using an equivalent alternative function/method to `print`.";
    let logging = "If you are attempting to call a logging function (e.g. `print`), you can try adding it to `torch._dynamo.config.reorderable_logging_functions`.";
    let builtin = "If it is a Python builtin, please file an issue on GitHub so the PyTorch team can add support for it and see the next case for a workaround.";
    let extension = "If it is a third-party C/C++ Python extension, please either wrap it into a PyTorch-understood custom operator (see https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html for more details) or, if it is traceable, use `torch.compiler.allow_in_graph`.";
    let scalar = "Set `torch._dynamo.config.capture_scalar_outputs = True` or `export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in the captured graph.";
    let expected: Vec<(String, u64, u64, u64)> = [
        (print, 5, 5, 0),
        (logging, 5, 5, 0),
        ("Please report an issue to PyTorch.", 5, 5, 0),
        (builtin, 2, 2, 0),
        (extension, 2, 2, 0),
        ("Remove the `torch._dynamo.graph_break()` call.", 2, 2, 0),
        (scalar, 1, 1, 0),
    ]
    .into_iter()
    .map(|(h, g, r, f)| (h.to_string(), g, r, f))
    .collect();
    assert_eq!(counts(&t), expected, "most occurrences first, then by text");
    let hints = rows(&t, "hints");
    let kinds: Vec<&str> = hints.iter().map(|h| h["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["action", "action", "report_to_pytorch", "report_to_pytorch", "action", "action", "action"]);
    let item = &hints[6];
    assert_eq!(item["reasons"], json!(["Unsupported Tensor.item() call with capture_scalar_outputs=False"]));
    assert_eq!(item["locations"], json!(["/home/user/scenarios/graph_breaks.py:25"]));
    assert_eq!(item["compile_ids"], json!(["[5/0]", "[5/0_1]"]));
    assert_eq!(hints[0]["compile_ids"].as_array().unwrap().len(), 10, "[f/0] and [f/0_1] of frames 0, 1, 2, 3, 14");
    snapshot("hints__graph_breaks", &t);
}

#[test]
fn compare_pair_run_b_counts_the_item_restart_once_and_not_the_tensorify_restart() {
    // Checked by hand against run_b's raw log (grep -n "Hint:"): breaks at line 103 ([0/0],
    // Tensor.item() at compare_pair.py:31, its hint at 109 and again at 161), 7913 ([2/0]) and
    // 11338 ([3/0]) (print of a str and a Tensor at compare_pair.py:41, three hints at 7919-7921
    // and 11344-11346, again at 7964-7966 and 11389-11391). Restarts: [0/0_2]'s metrics (line
    // 4262) lists two restart reasons, the .item() break (one Hint:) and
    // "<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>" (none); [2/0_1] (7821) and
    // [3/0_1] (11196) one each, the print break with its three hints.
    let b = built("torch-2.15/compare_pair/run_b");
    let t = b.table("hints");
    let print = "Avoid calling builtin `print` with argument types ['str', 'Tensor']. Consider using an equivalent alternative function/method to `print`.";
    let logging = "If you are attempting to call a logging function (e.g. `print`), you can try adding it to `torch._dynamo.config.reorderable_logging_functions`.";
    let scalar = "Set `torch._dynamo.config.capture_scalar_outputs = True` or `export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in the captured graph.";
    let expected: Vec<(String, u64, u64, u64)> =
        [(print, 2, 2, 0), (logging, 2, 2, 0), ("Please report an issue to PyTorch.", 2, 2, 0), (scalar, 1, 1, 0)]
            .into_iter()
            .map(|(h, g, r, f)| (h.to_string(), g, r, f))
            .collect();
    assert_eq!(counts(&t), expected);
    let item = &rows(&t, "hints")[3];
    assert_eq!(item["compile_ids"], json!(["[0/0]", "[0/0_2]"]));
    assert_eq!(item["locations"], json!(["/home/user/scenarios/compare_pair.py:31"]));
    snapshot("hints__compare_pair_run_b", &t);
}

#[test]
fn a_failure_reason_carries_its_hints_too() {
    // recompiles fixture (grep -n "Hint:"): no graph break artifact; the metrics at line 13483, of [0/4] (the
    // frame's fifth compile) fail with "Dynamo recompile limit exceeded", whose fail_reason
    // carries two hints (TORCH_LOGS=recompiles / recompile_limit, and the recompilation guide).
    let b = built("torch-2.15/recompiles");
    let t = b.table("hints");
    let hints = rows(&t, "hints");
    assert_eq!(hints.len(), 2);
    for h in hints {
        assert_eq!((&h["graph_breaks"], &h["restarts"], &h["failures"]), (&json!(0), &json!(0), &json!(1)));
        assert_eq!(h["reasons"], json!(["Dynamo recompile limit exceeded"]));
        assert_eq!(h["compile_ids"], json!(["[0/4]"]));
        assert_eq!(h["locations"], json!([]), "a fail reason names no user line");
    }
    assert!(hints[1]["hint"].as_str().unwrap().starts_with("To monitor recompilations, enable TORCH_LOGS=recompiles."));
}

#[test]
fn logs_without_hints_have_no_table() {
    // torch before 2.7 wrote no Hint: lines (grep: none in the tlparse-tests logs); simple has no
    // break nor restart.
    assert!(!built("torch-2.15/simple").has_table("hints"));
    assert!(!built("tlparse-tests/comp_metrics.log").has_table("hints"));
}
