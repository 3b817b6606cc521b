//! The compile summary: what the overview leads with, agreeing with the compile directory.

use super::{built, rows, snapshot};

#[test]
fn recompiles_fixture_sums_every_compile_and_lists_the_slowest_first() {
    // Checked by hand against the raw log: nine compilation_metrics (lines 3491 to 24469), for
    // [0/0]..[0/4] and [1/0]..[1/3], whose entire_frame_compile_time_s add up to 17.495582 s
    // (12.728984 + 1.032073 + 0.781624 + 0.72402 + 0.002849 + 0.668384 + 0.739209 + 0.765046 +
    // 0.053393); no entire_backward_compile span: no backward. [0/4] has a fail_type (the
    // recompile limit), the others none. The slowest is [0/0] (12.73 s), then [0/1] and [0/2].
    let b = built("torch-2.15/recompiles");
    let t = b.table("compile_summary");
    assert_eq!(t["compiles"], 9);
    assert_eq!(t["by_status"], serde_json::json!({"failed": 1, "ok": 8}));
    assert!((t["total_s"].as_f64().unwrap() - 17.495582).abs() < 1e-9);
    assert_eq!((t["backward_s"].as_f64(), t["timed"].as_u64()), (Some(0.0), Some(9)));
    let slowest: Vec<&str> = rows(&t, "slowest_compiles").iter().map(|c| c["compile_id"].as_str().unwrap()).collect();
    assert_eq!(&slowest[..3], ["[0/0]", "[0/1]", "[0/2]"]);
    assert_eq!(slowest.len(), 9);
    let first = &rows(&t, "slowest_compiles")[0];
    assert_eq!((first["total_s"].as_f64(), first["function"].as_str()), (Some(12.728984), Some("f")));
    assert_eq!(first["location"], "/home/user/scenarios/recompiles.py:11");
    snapshot("compile_summary__recompiles", &t);
}

#[test]
fn totals_are_the_compile_directorys_forward_plus_backward() {
    // two_runs/run_a: one training compile, [0/0], forward 12.306798 s (entire_frame_compile_time_s
    // of its compilation_metrics) and a lazy backward (entire_backward_compile, 1.3828725 s).
    for fixture in ["torch-2.15/two_runs/run_a", "torch-2.15/training", "torch-2.15/failures"] {
        let b = built(fixture);
        let (t, dir) = (b.table("compile_summary"), b.table("compile_directory"));
        let compiles = rows(&dir, "compiles");
        assert_eq!(t["compiles"].as_u64(), Some(compiles.len() as u64), "{fixture}");
        let sum = |key: &str| compiles.iter().filter_map(|c| c[key].as_f64()).sum::<f64>();
        assert!((t["total_s"].as_f64().unwrap() - sum("total_s")).abs() < 1e-6, "{fixture}");
        assert!((t["backward_s"].as_f64().unwrap() - sum("backward_s")).abs() < 1e-6, "{fixture}");
        let total = t["forward_s"].as_f64().unwrap() + t["backward_s"].as_f64().unwrap();
        assert!((total - t["total_s"].as_f64().unwrap()).abs() < 1e-6, "{fixture}");
        for s in rows(&t, "slowest_compiles") {
            let c = compiles.iter().find(|c| c["compile_id"] == s["compile_id"]).unwrap();
            assert_eq!((&s["total_s"], &s["status"]), (&c["total_s"], &c["status"]), "{fixture}");
        }
    }
    let b = built("torch-2.15/two_runs/run_a");
    let t = b.table("compile_summary");
    assert_eq!((t["forward_s"].as_f64(), t["backward_s"].as_f64()), (Some(12.306798), Some(1.3828725)));
}
