//! Compilation metrics, including the kinds tlparse ignores.

use super::{built, rows, snapshot};

#[test]
fn every_metrics_kind_is_kept() {
    // comp_metrics.log has 3 compilation_metrics entries ([0/0_1], [1/0_1], [2/0]).
    let b = built("tlparse-tests/comp_metrics.log");
    let t = b.table("compilation_metrics");
    let m = rows(&t, "metrics");
    let ids: Vec<&str> = m.iter().map(|r| r["compile_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["[0/0_1]", "[1/0_1]", "[2/0]"]);
    assert!(m.iter().all(|r| r["kind"] == "compilation_metrics" && r["runtime"] == false));
    assert!(m[0]["times_s"]["entire_frame_compile_time_s"].is_number());
    snapshot("compilation_metrics__comp_metrics", &t);
}

#[test]
fn runtime_metrics_are_recognised() {
    // Hand count (grep) over tlparse's test logs: autotune_with_compile_id.log has exactly one
    // compilation_metrics entry followed by one compilation_metrics_runtime entry (which tlparse
    // counts as an unknown field).
    let b = built("tlparse-tests/autotune_with_compile_id.log");
    let t = b.table("compilation_metrics");
    let m = rows(&t, "metrics");
    let kinds: Vec<(&str, bool)> = m.iter().map(|r| (r["kind"].as_str().unwrap(), r["runtime"] == true)).collect();
    assert_eq!(kinds, [("compilation_metrics", false), ("compilation_metrics_runtime", true)]);
}

#[test]
fn large_values_are_stored_once() {
    // graph_breaks: each of the 17 compilation_metrics entries logs the whole dynamo_config (a
    // ~17 KB JSON string, identical in all of them).
    let b = built("torch-2.15/graph_breaks");
    let t = b.table("compilation_metrics");
    let m = rows(&t, "metrics");
    assert_eq!(m.len(), 17);
    let shared = rows(&t, "shared");
    let refs: Vec<usize> =
        m.iter().map(|r| r["metrics"]["dynamo_config"]["shared"].as_u64().unwrap() as usize).collect();
    assert!(refs.iter().all(|&i| i == refs[0]));
    let config = shared[refs[0]].as_str().unwrap();
    assert!(config.len() > 1024 && config.contains("accumulated_recompile_limit"));
    // Small fields stay inline.
    assert!(m.iter().all(|r| r["metrics"]["co_name"].is_string()));
}
