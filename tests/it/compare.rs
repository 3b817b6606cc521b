//! `tlparse-build compare A B` on real runs: torch-2.15/two_runs (run b adds a graph break, a
//! wider layer and recompiles) and cache_cold → cache_warm; and `compile_directory`'s `align_key`,
//! by which the viewer pairs compiles, pairing exactly what the alignment module pairs.
//!
//! Checked by hand in the raw logs (fixtures-repo/torch-2.15/two_runs/run_{a,b}/*.log):
//! - run_a line 4291: one compile, `compilation_metrics` of 0/0, `forward` at two_runs.py:32,
//!   `graph_op_count` 9, `entire_frame_compile_time_s` 12.306798 (plus a backward, line 7158);
//!   no entry of run_a has `"attempt": 1`. Line 4139: a TENSOR_MATCH on a layer weight of
//!   `size=[32, 16]`.
//! - run_b line 36: `dynamo_start` of frame 0 (attempt 0); lines 70-74: its
//!   `dynamo_graph_break_reason` (attempt 0), "Failed to trace builtin operator", "Graph break in
//!   user code at /home/user/scenarios/two_runs.py:22" (the `print`). From line 245 on, frame 0's
//!   entries carry `"attempt": 1`: the analysis restarted as `[0/0_1]`, which is frame 0's real
//!   compile. Line 386: the `compilation_metrics` of "0/0", logged by attempt 1, with that
//!   restart reason, `graph_op_count` 0 (an empty graph), `guard_count` 13,
//!   `entire_frame_compile_time_s` 0.155564; line 309: attempt 1's `dynamo_cpp_guards_str`, its
//!   only artifact. So run_a's `[0/0]` pairs with run_b's `[0/0_1]`, the restart is history.
//! - run_b compiles 18 compile ids, 6 of them restarted attempts (`[0/0]`, `[1/0]`, `[1/1]`,
//!   `[0/1]`, `[1/2]`, `[1/3]`: each a `dynamo_graph_break_reason` at attempt 0, lines 70, 483,
//!   7899, 30416, 30855, 43258): 12 frame compiles, 11 of them only in B.
//! - run_b line 30344-30345: `recompile_reasons` of frame 0, compile 1: "0/0: tensor 'x' size
//!   mismatch at index 0. expected 8, actual 6"; frame 0 compiles twice (`[0/0_1]`, `[0/1_1]`,
//!   metrics lines 386 and 30735 with `cache_size` 0 and 1): one recompile.

use std::collections::BTreeSet;
use std::path::Path;

use camino::{Utf8Path, Utf8PathBuf};
use tlparse_build::analysis::alignment::{Alignment, StreamCompiles};
use tlparse_build::analysis::cross_rank::volatile::mask_volatile;
use tlparse_build::analysis::run_compare::{
    Change, CompileComparison, LineDifference, Restart, RunComparison, findings,
};
use tlparse_build::bundle::reader::Bundle;
use tlparse_build::compare::compare;
use tlparse_build::schema::tables::{CompileDirectory, CompileEntry, CompileStatus};

use crate::util::{build, fixture, run};

fn utf8(p: &Path) -> &Utf8Path {
    Utf8Path::from_path(p).unwrap()
}

fn both(c: &RunComparison) -> Vec<&CompileComparison> {
    c.streams[0].compiles.iter().filter(|x| x.a.is_some() && x.b.is_some()).collect()
}

/// Every artifact the comparison reports as differing, read again from the two bundles: its
/// payloads still differ once masked, and its first differing line is the first line of the
/// masked payloads that differs. Returns how many were checked.
fn reported_artifacts_really_differ(c: &RunComparison, a: &Path, b: &Path) -> usize {
    let (ba, bb) = (Bundle::open(a).unwrap(), Bundle::open(b).unwrap());
    let masked =
        |bundle: &Bundle, blob: &str| String::from_utf8(mask_volatile("", &bundle.blob(blob).unwrap())).unwrap();
    let mut checked = 0;
    for x in c.streams.iter().flat_map(|s| &s.compiles) {
        for change in &x.changes {
            let Change::Artifact { name, a, b, first_difference } = change else { continue };
            let (ma, mb) = (masked(&ba, a), masked(&bb, b));
            assert_ne!(ma, mb, "{name} of {:?} is reported but is the same once masked", x.code);
            let at = ma.lines().zip(mb.lines()).position(|(p, q)| p != q).unwrap();
            let d = first_difference.as_ref().unwrap();
            assert_eq!(d.line, at as u64 + 1, "{name}");
            let (la, lb) = (ma.lines().nth(at).unwrap(), mb.lines().nth(at).unwrap());
            let shown = |full: &str, shown: &Option<String>| {
                let shown = shown.as_deref().unwrap().trim_matches('…');
                full.contains(shown)
            };
            assert!(shown(la, &d.a) && shown(lb, &d.b), "{name}: {d:?}");
            checked += 1;
        }
    }
    checked
}

#[test]
fn two_runs_pairs_the_final_attempts_and_shows_the_restart_as_history() {
    let (_da, a, _) = build(&fixture("torch-2.15/two_runs/run_a"));
    let (_db, b, _) = build(&fixture("torch-2.15/two_runs/run_b"));
    let c = compare(utf8(&a), utf8(&b)).unwrap();
    assert_eq!(c.streams.len(), 1);
    // run_a's only compile pairs with run_b's final attempt of the same frame compile.
    let pairs: Vec<_> = both(&c).iter().map(|x| (x.code.clone().unwrap(), x.a.clone(), x.b.clone())).collect();
    assert_eq!(pairs, [("forward (two_runs.py:32)".to_string(), Some("[0/0]".into()), Some("[0/0_1]".into()))]);
    let pair = both(&c)[0];
    // B's history: `[0/0]` restarted at the print (lines 70-74); A never restarted.
    assert_eq!(
        pair.b_restarts,
        [Restart {
            compile_id: "[0/0]".into(),
            why: vec!["graph break at two_runs.py:22 (Failed to trace builtin operator)".into()],
        }]
    );
    assert!(pair.a_restarts.is_empty());
    let ch = &pair.changes;
    // The final attempt compiled an empty graph (line 386: graph_op_count 0).
    assert!(ch.contains(&Change::Status { a: CompileStatus::Ok, b: CompileStatus::EmptyGraph }), "{ch:?}");
    // The break belongs to the restarted attempt, not to the final one: no graph-break change.
    assert!(!ch.iter().any(|x| matches!(x, Change::GraphBreaks { .. })), "{ch:?}");
    // Compile time: A's forward 12.306798 s (metrics) + its backward's trace phases; B's 0.155564 s.
    let Some(&Change::CompileTime { a: Some(ta), b: Some(tb), delta: Some(_) }) =
        ch.iter().find(|x| matches!(x, Change::CompileTime { .. }))
    else {
        panic!("{ch:?}")
    };
    assert!(ta > 12.306798 && ta < 14.0, "{ta}");
    assert!((tb - 0.155564).abs() < 1e-9, "{tb}");
    // B's empty graph logged no IR: A's IRs are listed as only in A, never as "→ none".
    let Some(Change::GraphsOnly { a: only_a, b: only_b }) = ch.iter().find(|x| matches!(x, Change::GraphsOnly { .. }))
    else {
        panic!("{ch:?}")
    };
    assert!(only_a.contains(&"dynamo_output_graph (9 nodes)".to_string()), "{only_a:?}");
    assert!(only_b.is_empty());
    // The wider layer: A's 32-wide weight guard is not among B's 13 guards of frame 0 (B's
    // layers are compiled in forward (two_runs.py:19)).
    let Some(Change::Guards { removed, .. }) = ch.iter().find(|x| matches!(x, Change::Guards { .. })) else {
        panic!("{ch:?}")
    };
    assert!(removed.iter().any(|g| g.starts_with("TENSOR_MATCH:") && g.contains("size=[32, 16]")), "{removed:?}");
    assert!(removed.iter().all(|g| !g.contains("139740562968704")), "object ids are read as <id>");
    assert!(ch.contains(&Change::Cache { cache: "fx_graph_cache".into(), a: vec!["miss".into(); 2], b: vec![] }));
    // Both logged dynamo_cpp_guards_str (A's at line 4064, B's at line 309, attempt 1): it
    // differs beyond ids from payload line 9 on, L['x']'s TENSOR_MATCH, whose source comment is
    // `nn/modules/linear.py:134` in A (line 4073) and `two_runs.py:33` in B (line 318).
    assert!(ch.iter().any(|x| matches!(x, Change::Artifact { name, .. } if name == "dynamo_cpp_guards_str")));
    assert_eq!(reported_artifacts_really_differ(&c, &a, &b), 1);
    assert!(pair.same_up_to_ids.is_empty());
    // Frame compiles only in B: the layers' forward, the resume functions, forward's recompile.
    let only_b: Vec<&str> =
        c.streams[0].compiles.iter().filter(|x| x.a.is_none()).filter_map(|x| x.b.as_deref()).collect();
    assert_eq!(only_b.len(), 11, "{only_b:?}");
    assert!(["[0/1_1]", "[1/0_1]", "[2/0]", "[3/1]"].iter().all(|id| only_b.contains(id)), "{only_b:?}");
    assert!(!only_b.contains(&"[0/0_1]") && !only_b.contains(&"[1/0]"), "restarted attempts are history: {only_b:?}");
    // Recompiles per frame: forward (two_runs.py:32) recompiled once in B, for the batch size.
    let r = &c.streams[0].recompiles[0];
    assert_eq!((r.frame.as_str(), r.a, r.b, r.delta), ("forward (two_runs.py:32)", 0, 1, 1));
    assert_eq!(r.reasons_added, ["tensor 'x' size mismatch at index 0. expected 8, actual 6"]);
    assert_eq!(c.streams[0].recompiles.len(), 4);

    // The binary prints the same comparison as JSON, and the same findings in words.
    let out = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(serde_json::from_slice::<RunComparison>(&out.stdout).unwrap(), c);
    let out = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().collect::<Vec<_>>(), findings(&c));
    assert!(text.contains(
        "forward (two_runs.py:32) [0/0]→[0/0_1]: B restarted once: graph break at two_runs.py:22 (Failed to trace \
         builtin operator)\n"
    ));
    assert!(text.contains("forward (two_runs.py:32) [0/0]→[0/0_1]: status ok → empty_graph\n"), "{text}");
    assert!(!text.contains("→ none"), "{text}");
    insta::assert_snapshot!("compare_two_runs", text);
    // -q: the same findings without the stream's heading.
    let out = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "-q"]);
    let quiet = String::from_utf8(out.stdout).unwrap();
    let all = findings(&c);
    let want: Vec<&str> = all[1..].iter().map(|l| l.trim_start()).collect();
    assert_eq!(quiet.lines().collect::<Vec<_>>(), want);
}

#[test]
fn compare_pair_two_restarts_are_history_and_two_same_named_resume_frames_are_two_frames() {
    // Checked by hand in fixtures-repo/torch-2.15/compare_pair/run_{a,b}/*.log (SUMMARY.md §17):
    // - run_a line 3497: metrics of 0/0, `forward` at compare_pair.py:27; line 6764: of 1/0,
    //   `summarize` at compare_pair.py:38. No restart, no graph break.
    // - run_b `forward`: line 36 dynamo_start of [0/0]; line 103-104 its
    //   dynamo_graph_break_reason, "Graph break in user code at compare_pair.py:31" (the
    //   Tensor.item()); [0/0_1] logs no graph break (restarted by TensorifyScalarRestartAnalysis
    //   inside AOTAutograd); line 4262: metrics of "0/0" logged by attempt 2 (`[0/0_2]`), with
    //   `restart_reasons` "Unsupported Tensor.item() call ..." then "<class
    //   'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>".
    // - run_b `summarize`: [2/0] breaks at compare_pair.py:41 (line 7913, the print), final
    //   [2/0_1] (metrics line 11196, restart reason "Failed to trace builtin operator").
    // - run_b line 14727: metrics of 3/0 (attempt 1), `torch_dynamo_resume_in_summarize_at_41`
    //   at line 41, frame_key 9, cache_size 0; line 18139: metrics of 4/0, the same name and
    //   line, frame_key 10, cache_size 0: two frames, each compiled once. No recompile_reasons
    //   entry in either log.
    let (_da, a, _) = build(&fixture("torch-2.15/compare_pair/run_a"));
    let (_db, b, _) = build(&fixture("torch-2.15/compare_pair/run_b"));
    let c = compare(utf8(&a), utf8(&b)).unwrap();
    let s = &c.streams[0];
    let pairs: Vec<_> = both(&c).iter().map(|x| (x.code.clone().unwrap(), x.a.clone(), x.b.clone())).collect();
    assert_eq!(
        pairs,
        [
            ("forward (compare_pair.py:27)".to_string(), Some("[0/0]".into()), Some("[0/0_2]".into())),
            ("summarize (compare_pair.py:38)".to_string(), Some("[1/0]".into()), Some("[2/0_1]".into())),
        ]
    );
    let forward = both(&c)[0];
    assert_eq!(
        forward.b_restarts,
        [
            Restart {
                compile_id: "[0/0]".into(),
                why: vec![
                    "graph break at compare_pair.py:31 (Unsupported Tensor.item() call with capture_scalar_outputs=False)"
                        .into()
                ],
            },
            Restart {
                compile_id: "[0/0_1]".into(),
                why: vec!["<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>".into()],
            },
        ]
    );
    assert!(forward.changes.contains(&Change::Status { a: CompileStatus::Ok, b: CompileStatus::OkWithRestart }));
    // Both final attempts compiled: their times and sizes are compared, never "→ none".
    assert!(
        forward.changes.iter().any(|x| matches!(x, Change::CompileTime { a: Some(_), b: Some(_), delta: Some(_) }))
    );
    assert!(!forward.changes.iter().any(|x| matches!(x, Change::GraphsOnly { .. })), "{:?}", forward.changes);
    // The two resume functions of line 41 are two frames of B, neither in A.
    let only_b: Vec<(&str, &str)> = s
        .compiles
        .iter()
        .filter(|x| x.a.is_none())
        .map(|x| (x.code.as_deref().unwrap(), x.b.as_deref().unwrap()))
        .collect();
    assert_eq!(
        only_b,
        [
            ("torch_dynamo_resume_in_forward_at_31 (compare_pair.py:31)", "[1/0]"),
            ("torch_dynamo_resume_in_summarize_at_41 (compare_pair.py:41)", "[3/0_1]"),
            ("torch_dynamo_resume_in_summarize_at_41 (compare_pair.py:41), frame 2", "[4/0]"),
        ]
    );
    // No recompile anywhere: none reported.
    assert_eq!(s.recompiles, []);
    let text = findings(&c).join("\n");
    assert!(text.contains(
        "forward (compare_pair.py:27) [0/0]→[0/0_2]: B restarted twice: graph break at compare_pair.py:31 \
         (Unsupported Tensor.item() call with capture_scalar_outputs=False), then <class \
         'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>"
    ));
    assert!(!text.contains("→ none") && !text.contains("recompile"), "{text}");
    // Each of the 29 artifacts both final attempts logged differs beyond ids (B's are of
    // dynamic shapes): read again and masked, each still differs.
    assert_eq!(reported_artifacts_really_differ(&c, &a, &b), 29);
    assert!(s.compiles.iter().all(|x| x.same_up_to_ids.is_empty()));
}

#[test]
fn cache_cold_to_warm_shows_misses_turned_hits_and_differing_artifacts() {
    // cache_cold: aotautograd_cache_miss (line 220) and fx_graph_cache_miss (3034, 6246) for
    // [0/0]; cache_warm: fx_graph_cache_hit (920, 1491) and aotautograd_cache_hit (1611).
    let (_da, a, _) = build(&fixture("torch-2.15/cache_cold"));
    let (_db, b, _) = build(&fixture("torch-2.15/cache_warm"));
    let c = compare(utf8(&a), utf8(&b)).unwrap();
    let first = both(&c)[0];
    assert_eq!((first.a.as_deref(), first.b.as_deref()), (Some("[0/0]"), Some("[0/0]")));
    let caches: Vec<&Change> = first.changes.iter().filter(|x| matches!(x, Change::Cache { .. })).collect();
    assert_eq!(
        caches,
        [
            &Change::Cache { cache: "aotautograd_cache".into(), a: vec!["miss".into()], b: vec!["hit".into()] },
            &Change::Cache { cache: "fx_graph_cache".into(), a: vec!["miss".into(); 2], b: vec!["hit".into(); 2] },
        ]
    );
    // The guard trees differ only by object ids: the same up to ids, no change. cache_cold line
    // 3905 and cache_warm line 1659 log [0/0]'s dynamo_cpp_guards_str, 142 payload lines each
    // (3906-4047, 1660-1801); 23 lines differ: 22 by an object or type id (cold line 3914
    // `___check_type_id(L['args'], 140077273834368)`, warm line 1668 `... 140520343331712`),
    // and the last by the measured `Guard latency = 76.72 us` (4047) vs `78.71 us` (1801).
    // [1/0]'s (cold 10115, warm 2482, 16 lines each) differ only in `Guard latency = 52.96 us`
    // (10131) vs `34.67 us` (2498).
    let second = both(&c)[1];
    assert_eq!(first.same_up_to_ids, ["dynamo_cpp_guards_str"]);
    assert_eq!(second.same_up_to_ids, ["dynamo_cpp_guards_str"]);
    let artifact_named = |x: &CompileComparison, n: &str| {
        x.changes.iter().any(|ch| matches!(ch, Change::Artifact { name, .. } if name == n))
    };
    assert!(!artifact_named(first, "dynamo_cpp_guards_str") && !artifact_named(second, "dynamo_cpp_guards_str"));
    assert!(!first.changes.iter().any(|x| matches!(x, Change::Guards { .. })), "{:?}", first.changes);
    // What still differs is real: aot_forward_graph_fw_metadata (cold line 721, warm line 291),
    // whose payload line 80 is `traced_tangents=[FakeTensor(..., size=(16, 10))],` (cold line
    // 801) where the cache hit logged `traced_tangents=[],` (warm line 371).
    let metadata = first.changes.iter().find_map(|ch| match ch {
        Change::Artifact { name, first_difference, .. } if name == "aot_forward_graph_fw_metadata" => {
            first_difference.clone()
        }
        _ => None,
    });
    let want = LineDifference {
        line: 80,
        a: Some("                    traced_tangents=[FakeTensor(..., size=(16, 10))],".into()),
        b: Some("                    traced_tangents=[],".into()),
    };
    assert_eq!(metadata, Some(want));
    assert_eq!(reported_artifacts_really_differ(&c, &a, &b), 2);
    // The CLI counts the two apart from the findings, on the stream's line.
    let text = findings(&c);
    assert!(text[0].ends_with("; 2 artifact(s) the same up to ids"), "{}", text[0]);
    assert!(!text.iter().any(|l| l.contains("dynamo_cpp_guards_str")), "{text:?}");
    let Some(Change::CompileTime { delta: Some(d), .. }) =
        first.changes.iter().find(|x| matches!(x, Change::CompileTime { .. }))
    else {
        panic!()
    };
    assert!(*d < -10.0, "the warm compile is over 10 s faster: {d}");
}

#[test]
fn a_trace_compares_like_its_bundle() {
    let (_da, a, _) = build(&fixture("torch-2.15/two_runs/run_a"));
    let (_db, b, _) = build(&fixture("torch-2.15/two_runs/run_b"));
    let from_bundles = compare(utf8(&a), utf8(&b)).unwrap();
    let trace_dir = fixture("torch-2.15/two_runs/run_b");
    assert_eq!(compare(utf8(&a), &trace_dir).unwrap(), from_bundles);
    let log = std::fs::read_dir(&trace_dir).unwrap().map(|e| e.unwrap().path()).next().unwrap();
    let log = Utf8PathBuf::from_path_buf(log).unwrap();
    let out = run(&["compare", a.to_str().unwrap(), log.as_str(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(serde_json::from_slice::<RunComparison>(&out.stdout).unwrap(), from_bundles);
}

#[test]
fn a_path_that_is_neither_is_named_in_the_error() {
    let (_da, a, _) = build(&fixture("torch-2.15/two_runs/run_a"));
    let out = run(&["compare", a.to_str().unwrap(), "no/such/run"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no/such/run: no such file or directory"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let out = run(&["compare", empty.path().to_str().unwrap(), a.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(empty.path().to_str().unwrap()) && err.contains("neither a bundle nor a trace"), "{err}");
}

/// Every stream's compile directory rows of a bundle, by stream id.
fn rows_of(out: &Path) -> Vec<(String, Vec<CompileEntry>)> {
    let b = Bundle::open(out).unwrap();
    let streams = b.manifest.streams.iter();
    streams.map(|s| (s.id.clone(), b.stream_table::<CompileDirectory>(&s.id).unwrap().unwrap().compiles)).collect()
}

/// Compiles paired together: each a list of (stream, compile id).
type Groups = BTreeSet<Vec<(String, String)>>;

/// The groups of (stream, compile id) paired by equal `align_key`s, and by `Alignment::new`
/// (every attempt of each aligned frame compile).
fn groups_both_ways(streams: &[(String, Vec<CompileEntry>)]) -> (Groups, Groups) {
    let mut by_key: std::collections::BTreeMap<&str, Vec<(String, String)>> = Default::default();
    for (s, rows) in streams {
        for r in rows {
            let key = r.align_key.as_deref().expect("every row has an align_key");
            by_key.entry(key).or_default().push((s.clone(), r.compile_id.clone()));
        }
    }
    by_key.values_mut().for_each(|g| g.sort());
    let input: Vec<StreamCompiles> =
        streams.iter().map(|(s, rows)| StreamCompiles { stream: s, compiles: rows }).collect();
    let aligned = Alignment::new(&input);
    let from_alignment = aligned
        .table
        .compiles
        .iter()
        .map(|c| {
            let mut group: Vec<(String, String)> = Vec::new();
            for p in &c.present {
                let attempts = p.earlier_attempts.iter().map(|x| &x.compile_id).chain([&p.compile_id]);
                group.extend(attempts.map(|id| (p.stream.clone(), id.clone())));
            }
            group.sort();
            group
        })
        .collect();
    (by_key.into_values().collect(), from_alignment)
}

#[test]
fn align_key_equality_pairs_exactly_what_the_alignment_pairs() {
    // Across ranks: ranks_shifted (rank 2 compiled one more function, shifting its frame ids).
    let (_d, out, _) = build(&fixture("torch-2.15/ranks_shifted"));
    let streams = rows_of(&out);
    assert_eq!(streams.len(), 4);
    let (by_key, by_alignment) = groups_both_ways(&streams);
    assert_eq!(by_key, by_alignment);
    assert!(
        by_key.iter().any(|g| g.len() == 4 && g.iter().map(|x| &x.1).collect::<BTreeSet<_>>().len() > 1),
        "some compile has different compile ids across ranks: {by_key:?}"
    );
    // Across runs: two_runs, run a and run b as two streams.
    let (_da, a, _) = build(&fixture("torch-2.15/two_runs/run_a"));
    let (_db, b, _) = build(&fixture("torch-2.15/two_runs/run_b"));
    let runs = vec![("a".to_string(), rows_of(&a).remove(0).1), ("b".to_string(), rows_of(&b).remove(0).1)];
    let (by_key, by_alignment) = groups_both_ways(&runs);
    assert_eq!(by_key, by_alignment);
    // One frame compile in both runs: a's [0/0] with b's [0/0] and its final attempt [0/0_1].
    let in_both: Vec<&Vec<(String, String)>> = by_key.iter().filter(|g| g.iter().any(|x| x.0 == "a")).collect();
    let ids = |g: &Vec<(String, String)>| g.iter().map(|(s, id)| format!("{s}{id}")).collect::<Vec<_>>();
    assert_eq!(in_both.into_iter().map(ids).collect::<Vec<_>>(), [["a[0/0]", "b[0/0]", "b[0/0_1]"]]);
    // Deterministic: a second build writes the same keys.
    let (_dc, again, _) = build(&fixture("torch-2.15/two_runs/run_b"));
    let keys = |out: &Path| rows_of(out).remove(0).1.into_iter().map(|r| r.align_key).collect::<Vec<_>>();
    assert_eq!(keys(&b), keys(&again));
}
