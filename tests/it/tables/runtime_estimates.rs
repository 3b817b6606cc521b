//! Runtime estimates and tensor-metadata fingerprints per compile id, on the multi-rank fixtures.

use md5::Digest;
use tlparse_build::bundle::reader::Bundle;
use tlparse_build::schema::DiagnosticKind;
use tlparse_build::schema::tables::{RuntimeEstimates, RuntimeGraph, RuntimeOp};

use super::{Built, built, snapshot};

/// The stream made from the file `dedicated_log_torch_trace_rank_<file_rank>*.log` (file rank,
/// not envelope rank: in multi_rank_runtime files 1, 5 and 6 all say rank 1).
pub fn stream_of_file(b: &Built, file_rank: u32) -> String {
    let inputs = &b.bundle.manifest.inputs;
    let input = inputs.iter().find(|i| i.rank_from_name == Some(file_rank)).expect("a file with that rank");
    assert_eq!(input.streams.len(), 1, "one stream per file");
    input.streams[0].clone()
}

fn has_table_of(b: &Built, stream: &str, name: &str) -> bool {
    b.bundle.manifest.streams.iter().find(|s| s.id == stream).expect("the stream").tables.contains_key(name)
}

fn estimates(b: &Built, stream: &str) -> RuntimeEstimates {
    serde_json::from_value(b.table_of(stream, "runtime_estimates")).unwrap()
}

fn graph<'a>(t: &'a RuntimeEstimates, id: &str) -> &'a RuntimeGraph {
    t.graphs.iter().find(|g| g.compile_id.as_deref() == Some(id)).unwrap_or_else(|| panic!("no {id}"))
}

fn op<'a>(g: &'a RuntimeGraph, name: &str) -> &'a RuntimeOp {
    g.ops.iter().find(|o| o.name.ends_with(name)).unwrap_or_else(|| panic!("no op {name}"))
}

#[test]
fn multi_rank_runtime_totals_and_fingerprints_per_compile_id() {
    let b = built("tlparse-tests/multi_rank_runtime");
    // Files 1, 5 and 6 all have envelope rank 1: the streams are told apart by file.
    let streams: Vec<String> = (0..7).map(|r| stream_of_file(&b, r)).collect();
    assert_eq!(streams, ["rank0", "rank1-0", "rank2", "rank3", "rank4", "rank1-1", "rank1-2"]);
    let t: Vec<RuntimeEstimates> = streams.iter().map(|s| estimates(&b, s)).collect();

    // By hand (python on the raw logs: payload lines joined, `sum` of `estimated_runtime_ns` in
    // order): rank_0 line 1686 [0/0] has 6 ops summing to 13806088.656527853 ns, lines 5499,
    // 9423, 13347 ([0/1]..[0/3]) 11 ops summing to 13859314.55187109. Files 1-3 are rank 0 scaled
    // by 1.05/1.10/1.15; file 4 has no [0/0] artifact (3 of them, [0/1] 16631177.458945258 =
    // ×1.20); files 5 and 6 (another run) have [0/0] 13806088.656527853 (line 1703) and [0/1]
    // 13859314.549121048 (line 5426). Exact float equality: the sums are done in log order.
    let totals = |t: &RuntimeEstimates| -> Vec<(String, u64, f64)> {
        t.graphs.iter().map(|g| (g.compile_id.clone().unwrap(), g.op_count, g.total_estimated_runtime_ns)).collect()
    };
    let ids = ["[0/0]", "[0/1]", "[0/2]", "[0/3]"];
    let four = |r00: f64, rest: f64| -> Vec<(String, u64, f64)> {
        ids.iter()
            .map(|id| (id.to_string(), if *id == "[0/0]" { 6 } else { 11 }, if *id == "[0/0]" { r00 } else { rest }))
            .collect()
    };
    assert_eq!(totals(&t[0]), four(13806088.656527853, 13859314.55187109));
    assert_eq!(totals(&t[1]), four(14496393.089465443, 14552280.276577098));
    assert_eq!(totals(&t[2]), four(15186697.522297116, 15245246.004033152));
    assert_eq!(totals(&t[3]), four(15877001.955129309, 15938211.731489202));
    assert_eq!(totals(&t[4]), &four(0.0, 16631177.458945258)[1..]);
    for file in [5, 6] {
        assert_eq!(
            totals(&t[file]),
            [("[0/0]".to_string(), 6, 13806088.656527853), ("[0/1]".to_string(), 11, 13859314.549121048)]
        );
    }
    let g = graph(&t[0], "[0/0]");
    assert_eq!((g.line, g.occurrence), (1686, 0));
    assert_eq!(g.ops[0].name, "extern_kernels.mm");
    assert_eq!(g.ops[0].estimated_runtime_ns, 6885841.870239033);
    // Rank 0's [0/1] was hand-edited (md5 mismatch): its 5th op (the second mm, log line 5563)
    // lost a digit, 6885841.87239033 where file 5 has 6885841.870239033; kept as logged.
    assert_eq!(graph(&t[0], "[0/1]").ops[4].estimated_runtime_ns, 6885841.87239033);
    assert_eq!(graph(&t[5], "[0/1]").ops[4].estimated_runtime_ns, 6885841.870239033);

    // Tensor-meta fingerprints ignore the runtimes: ranks 0-3 (different runtimes, same
    // shapes) share one per compile id, rank 4 matches them where it has the artifact, and
    // files 5/6 differ from them in [0/0] and [0/1] (tlparse, hashing the runtimes too, splits
    // ranks 0-3 into four groups).
    let fp = |t: &RuntimeEstimates, id: &str| graph(t, id).tensor_meta_fingerprint.clone();
    for id in ids {
        for rank in 1..4 {
            assert_eq!(fp(&t[rank], id), fp(&t[0], id), "rank {rank} {id}");
        }
        if id != "[0/0]" {
            assert_eq!(fp(&t[4], id), fp(&t[0], id), "rank 4 {id}");
        }
    }
    assert_eq!(fp(&t[0], "[0/1]"), fp(&t[0], "[0/2]"), "[0/2] is a copy of [0/1]");
    for id in ["[0/0]", "[0/1]"] {
        assert_ne!(fp(&t[5], id), fp(&t[0], id), "{id}");
        assert_eq!(fp(&t[5], id), fp(&t[6], id), "{id}");
    }
    assert_ne!(fp(&t[0], "[0/0]"), fp(&t[0], "[0/1]"));

    // What makes [0/0] differ (by hand, rank_0 line 1686 vs rank_5 line 1703): only the
    // wait_tensor op, whose `outputs` key was deleted in rank 0 (absent, not `[]`) while rank 5
    // logs two `{shape: [], stride: [], dtype: null}`.
    let (ours, theirs) = (graph(&t[0], "[0/0]"), graph(&t[5], "[0/0]"));
    let wait = "wait_tensor.default";
    assert_eq!(op(ours, wait).outputs, None);
    let outputs = op(theirs, wait).outputs.as_ref().unwrap();
    assert_eq!(outputs.len(), 2);
    assert!(outputs.iter().all(|o| o.shape.is_empty() && o.stride.is_empty() && o.dtype.is_none()));
    let differing: Vec<&str> = ours
        .ops
        .iter()
        .zip(&theirs.ops)
        .filter(|(a, b)| (&a.name, &a.op_type, &a.outputs) != (&b.name, &b.op_type, &b.outputs))
        .map(|(a, _)| a.name.as_str())
        .collect();
    assert_eq!(differing, ["torch.ops._c10d_functional.wait_tensor.default"]);
    // all_reduce_ is a `collective`, the mm an f16 [1024, 1024] with stride [1024, 1].
    assert_eq!(op(ours, "all_reduce_.default").op_type, "collective");
    let mm = &ours.ops[0].outputs.as_ref().unwrap()[0];
    assert_eq!(
        (&mm.shape[..], &mm.stride[..], mm.dtype.as_deref()),
        (&[1024, 1024][..], &[1024, 1][..], Some("float16"))
    );

    // In [0/1] (rank_5 line 5426) `op13` outputs [2048, 1024] where rank 0 has [1024, 1024].
    assert_eq!(op(graph(&t[0], "[0/1]"), "op13").outputs.as_ref().unwrap()[0].shape, [1024, 1024]);
    assert_eq!(op(graph(&t[5], "[0/1]"), "op13").outputs.as_ref().unwrap()[0].shape, [2048, 1024]);

    // The manifest counts one row per artifact; rank 4 has 3.
    let rows = |s: &str| b.bundle.manifest.streams.iter().find(|m| m.id == s).unwrap().tables["runtime_estimates"].rows;
    assert_eq!(streams.iter().map(|s| rows(s)).collect::<Vec<_>>(), [4, 4, 4, 4, 3, 2, 2]);
    snapshot("runtime_estimates__multi_rank_runtime_rank4", &b.table_of("rank4", "runtime_estimates"));
}

#[test]
fn graph_exec_order_ranks_have_identical_tensor_meta_and_runtimes() {
    // Both ranks log the same payloads (md5 a05de043… at line 1702, ea1a141b… at line 5574),
    // which are also multi_rank_runtime files 5/6's: [0/0] 13806088.656527853 ns (6 ops),
    // [0/1] 13859314.549121048 ns (11 ops); every op has `outputs`.
    let b = built("tlparse-tests/graph_exec_order");
    let (r0, r1) = (estimates(&b, &stream_of_file(&b, 0)), estimates(&b, &stream_of_file(&b, 1)));
    assert_eq!(r0, r1.clone());
    let shown: Vec<(&str, u64, u64, f64)> = r0
        .graphs
        .iter()
        .map(|g| (g.compile_id.as_deref().unwrap(), g.line, g.op_count, g.total_estimated_runtime_ns))
        .collect();
    assert_eq!(shown, [("[0/0]", 1702, 6, 13806088.656527853), ("[0/1]", 5574, 11, 13859314.549121048)]);
    assert!(r0.graphs.iter().flat_map(|g| &g.ops).all(|o| o.outputs.is_some()));
    assert_eq!(r0.graphs[0].blob, r1.graphs[0].blob);
    snapshot("runtime_estimates__graph_exec_order_rank0", &b.table_of("rank0", "runtime_estimates"));
}

#[test]
fn collectives_parity_matches_multi_rank_runtime_rank0() {
    // collectives_parity is multi_rank_runtime's rank_0 with waits removed from the output
    // code only: its runtime artifacts (lines 1685, 5498, 9422, 13346) are rank 0's.
    let b = built("tlparse-tests/collectives_parity");
    let t: RuntimeEstimates = serde_json::from_value(b.table("runtime_estimates")).unwrap();
    let lines: Vec<u64> = t.graphs.iter().map(|g| g.line).collect();
    assert_eq!(lines, [1685, 5498, 9422, 13346]);
    assert_eq!(graph(&t, "[0/0]").total_estimated_runtime_ns, 13806088.656527853);
    assert_eq!(graph(&t, "[0/3]").total_estimated_runtime_ns, 13859314.55187109);
}

#[test]
fn absent_without_runtime_artifacts() {
    // grep: no inductor_runtime_and_tensor_meta in multi_rank_logs or multi_rank_schedule.
    for fixture in ["tlparse-tests/multi_rank_logs", "tlparse-tests/multi_rank_schedule"] {
        let b = built(fixture);
        for s in &b.bundle.manifest.streams {
            assert!(!has_table_of(&b, &s.id, "runtime_estimates"), "{fixture} {}", s.id);
            assert!(has_table_of(&b, &s.id, "compile_directory"), "{fixture} {}", s.id);
        }
    }
}

/// An `inductor_runtime_and_tensor_meta` artifact of `[frame/0]` with a correct md5.
fn runtime_artifact(frame: u64, payload: &str) -> String {
    let md5: String = md5::Md5::digest(payload.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "V0101 00:00:00.000000 7 torch/_inductor/debug.py:1] {{\"artifact\": {{\"name\": \"inductor_runtime_and_tensor_meta\", \"encoding\": \"json\"}}, \"frame_id\": {frame}, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"{md5}\"}}\n\t{payload}\n"
    )
}

#[test]
fn malformed_payloads_are_diagnosed_and_repeats_counted() {
    let good = r#"{"ops": [{"name": "op1", "type": "compute", "estimated_runtime_ns": 1.5, "outputs": []}, {"name": "op2", "type": "compute", "estimated_runtime_ns": 2}]}"#;
    let log = [
        runtime_artifact(0, good),
        runtime_artifact(0, good), // a second graph of [0/0]
        runtime_artifact(1, r#"{"ops": [{"name": "op1", "type": "compute"}]}"#), // no runtime
        runtime_artifact(2, "[1, 2]"),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runtime.log");
    std::fs::write(&path, log).unwrap();
    let (out_dir, out, _) = crate::util::build(&camino::Utf8PathBuf::from_path_buf(path).unwrap());
    let b = Built { _dir: out_dir, bundle: Bundle::open(&out).unwrap() };
    let t: RuntimeEstimates = serde_json::from_value(b.table("runtime_estimates")).unwrap();
    let shown: Vec<(&str, u32, f64)> = t
        .graphs
        .iter()
        .map(|g| (g.compile_id.as_deref().unwrap(), g.occurrence, g.total_estimated_runtime_ns))
        .collect();
    assert_eq!(shown, [("[0/0]", 0, 3.5), ("[0/0]", 1, 3.5)]);
    assert_eq!(t.graphs[0].ops[0].outputs, Some(vec![]));
    assert_eq!(t.graphs[0].ops[1].outputs, None);
    let unusable: Vec<u64> = b
        .bundle
        .diagnostics()
        .unwrap()
        .iter()
        .filter(|d| d.kind == DiagnosticKind::UnusableEntry && d.message.starts_with("runtime_estimates"))
        .map(|d| d.line)
        .collect();
    assert_eq!(unusable, [5, 7]);
}
