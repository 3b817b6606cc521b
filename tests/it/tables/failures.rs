//! Failures and restarts.

use super::{built, rows, snapshot};

#[test]
fn comp_failure_has_one_backend_failure_with_its_traceback() {
    // comp_failure.log: one compilation_metrics with fail_type BackendCompilerFailed and
    // fail_reason "backend='broken_backend' raised:\nRuntimeError: broken backend", and a
    // dynamo_error artifact for the same compile [0/0].
    let b = built("tlparse-tests/comp_failure.log");
    let t = b.table("failures");
    let f = rows(&t, "failures");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["kind"], "failure");
    assert_eq!(f[0]["failure_type"], "BackendCompilerFailed");
    assert_eq!(f[0]["reason"], "backend='broken_backend' raised:\nRuntimeError: broken backend");
    assert!(f[0]["error_blob"].is_string());
    assert!(f[0]["stack"].is_number());
    snapshot("failures__comp_failure", &t);
}

#[test]
fn graph_breaks_restarts_are_listed_with_their_stack() {
    // The graph_breaks fixture: 10 compilation_metrics entries (the attempt-1 metrics of the 10
    // restarted frame compiles) carry one restart reason each, and nothing failed. Every restart
    // row is tied to the dynamo_start stack logged by attempt 0.
    let b = built("torch-2.15/graph_breaks");
    let t = b.table("failures");
    let f = rows(&t, "failures");
    assert_eq!(f.len(), 10);
    assert!(f.iter().all(|r| r["kind"] == "restart" && r["failure_type"] == "RestartAnalysis"));
    assert_eq!(t["restarts"].as_u64().unwrap(), f.len() as u64);
    assert!(f.iter().all(|r| r["stack"].is_number()));
}

#[test]
fn torch_2_15_failures_fixture() {
    // scenarios/failures.py, checked against the raw log's compilation_metrics entries: six
    // compiles fail, in this order: BackendCompilerFailed, BackendCompilerFailed, Unsupported,
    // UserError, BackendCompilerFailed, TorchRuntimeError; none restarts.
    let b = built("torch-2.15/failures");
    let t = b.table("failures");
    let failed: Vec<&serde_json::Value> = rows(&t, "failures").iter().filter(|r| r["kind"] == "failure").collect();
    assert_eq!(t["failed"].as_u64().unwrap(), failed.len() as u64);
    let types: Vec<&str> = failed.iter().map(|r| r["failure_type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "BackendCompilerFailed",
            "BackendCompilerFailed",
            "Unsupported",
            "UserError",
            "BackendCompilerFailed",
            "TorchRuntimeError"
        ]
    );
    assert_eq!(t["restarts"], 0);
    snapshot("failures__torch_2_15_failures", &t);
}

#[test]
fn failed_compiles_and_restarts_are_counted_apart_and_agree_with_the_statuses() {
    // Checked by hand against the raw logs: comp_metrics.log's compilation_metrics at lines 31
    // and 48 each carry one restart reason ("'skip function graph_break in file ...'") and the
    // one at line 65 none, and no fail_type is set: 2 restarts, no failure (not "failures 2").
    // graph_breaks: 10 restarts, no failure (see above); failures: 6 failed compiles, no
    // restart; recompiles: [0/4] fails (recompile limit), no restart.
    // A failure row is a failed compile: `failed` is the number of compile ids whose status is
    // `failed`, and `restarts` the number of restart reasons in compile_directory.
    for (fixture, failed, restarts) in [
        ("tlparse-tests/comp_metrics.log", 0, 2),
        ("torch-2.15/graph_breaks", 0, 10),
        ("torch-2.15/failures", 6, 0),
        ("torch-2.15/recompiles", 1, 0),
    ] {
        let b = built(fixture);
        let t = b.table("failures");
        assert_eq!((t["failed"].as_u64(), t["restarts"].as_u64()), (Some(failed), Some(restarts)), "{fixture}");
        let dir = b.table("compile_directory");
        let compiles = rows(&dir, "compiles");
        let status_failed = compiles.iter().filter(|c| c["status"] == "failed").count() as u64;
        let reasons: u64 = compiles.iter().map(|c| rows(c, "restart_reasons").len() as u64).sum();
        assert_eq!((status_failed, reasons), (failed, restarts), "{fixture}");
        // The manifest's row count of the table is both kinds together: never a failure count.
        let stream = &b.bundle.manifest.streams[0];
        assert_eq!(stream.tables["failures"].rows, failed + restarts, "{fixture}");
    }
}

#[test]
fn a_failure_without_a_user_frame_of_its_own_is_placed_where_tracing_was() {
    // Checked by hand against the raw log (dynamic_shapes): [3/0] fails with
    // ConstraintViolationError (compilation_metrics, line 24228) and logs
    // `fail_user_frame_filename: null`. Its last entries with a user_stack before that are lines
    // 21092-21094 (create_symbol s77, guard_added_fast `Eq(s77, 10)`, the specialization of s77
    // to 10), each at dynamic_shapes.py:74 (`return x.reshape(2, 5) * 2  # forces s0 == 10`), the
    // line that violates the constraint.
    let b = built("torch-2.15/dynamic_shapes");
    let t = b.table("failures");
    let failure = rows(&t, "failures").iter().find(|f| f["compile_id"] == "[3/0]" && f["kind"] == "failure").unwrap();
    assert_eq!(failure["failure_type"], "ConstraintViolationError");
    assert_eq!(failure["user_frame"], "/home/user/scenarios/dynamic_shapes.py:74");
    // Torch's own frame, when it is the user's, is kept (failures fixture, line 1293: [4/0]'s
    // fail_user_frame is failures.py:75, though its create_unbacked_symbol at line 1112 was at :74).
    let b = built("torch-2.15/failures");
    let t = b.table("failures");
    let failure = rows(&t, "failures").iter().find(|f| f["compile_id"] == "[4/0]" && f["kind"] == "failure").unwrap();
    assert_eq!(failure["user_frame"], "/home/user/scenarios/failures.py:75");
}
