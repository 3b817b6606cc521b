//! `tlparse-build compare A B` on real runs: torch-2.15/two_runs (run b adds a graph break, a
//! wider layer and recompiles) and cache_cold → cache_warm; and `compile_directory`'s `align_key`,
//! by which the viewer pairs compiles, pairing exactly what the alignment module pairs.
//!
//! Checked by hand in the raw logs (fixtures-repo/torch-2.15/two_runs/run_{a,b}/*.log):
//! - run_a line 4291: one compile, `compilation_metrics` of 0/0, `forward` at two_runs.py:32,
//!   `graph_op_count` 9, `entire_frame_compile_time_s` 12.306798 (plus a backward, line 7158);
//!   line 4139: a TENSOR_MATCH on a layer weight of `size=[32, 16]`.
//! - run_b line 70-74: `dynamo_graph_break_reason` of frame 0 attempt 0, "Failed to trace builtin
//!   operator" (the `print` at two_runs.py:22); frame 0 restarts (line 386: metrics of 0/0 with
//!   that restart reason, `graph_op_count` 0). The layers are compiled apart, in
//!   `forward` (two_runs.py:19); line 4154: the same weight's TENSOR_MATCH is `size=[48, 16]`.
//! - run_b line 30344-30345: `recompile_reasons` of frame 0, compile 1: "0/0: tensor 'x' size
//!   mismatch at index 0. expected 8, actual 6".

use std::collections::BTreeSet;
use std::path::Path;

use camino::{Utf8Path, Utf8PathBuf};
use tlparse_build::analysis::alignment::{Alignment, StreamCompiles};
use tlparse_build::analysis::run_compare::{Change, CompileComparison, RunComparison, findings};
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

#[test]
fn two_runs_findings_are_those_of_the_logs() {
    let (_da, a, _) = build(&fixture("torch-2.15/two_runs/run_a"));
    let (_db, b, _) = build(&fixture("torch-2.15/two_runs/run_b"));
    let c = compare(utf8(&a), utf8(&b)).unwrap();
    assert_eq!(c.streams.len(), 1);
    // Aligned by code, ordinal and attempt: run_a's only compile pairs with run_b's first attempt
    // of the same code (which broke the graph and restarted).
    let pairs: Vec<_> = both(&c).iter().map(|x| (x.code.clone().unwrap(), x.a.clone(), x.b.clone())).collect();
    assert_eq!(pairs, [("forward (two_runs.py:32)".to_string(), Some("[0/0]".into()), Some("[0/0]".into()))]);
    let ch = &both(&c)[0].changes;
    // run_b's `[0/0]` restarted as `[0/0_1]` (entries of frame 0, frame compile 0 with
    // `"attempt": 1` from line 245 on; attempt 1 logs no dynamo_start): the status line names it,
    // since the alignment, keyed by attempt, lists `[0/0_1]` as only in B.
    let status = Change::Status {
        a: CompileStatus::Ok,
        b: CompileStatus::Restarted,
        a_restarted_as: None,
        b_restarted_as: Some("[0/0_1]".into()),
    };
    assert!(ch.contains(&status), "{ch:?}");
    assert!(ch.contains(&Change::GraphBreaks {
        added: vec!["Failed to trace builtin operator (at /home/user/scenarios/two_runs.py:22)".into()],
        removed: vec![],
    }));
    // Compile time: forward 12.306798 s (metrics) + the backward's trace phases; none in B.
    let Some(Change::CompileTime { a: Some(t), b: None, delta: None }) =
        ch.iter().find(|x| matches!(x, Change::CompileTime { .. }))
    else {
        panic!("{ch:?}")
    };
    assert!(*t > 12.306798 && *t < 14.0, "{t}");
    assert!(ch.contains(&Change::GraphSize {
        ir: "dynamo_output_graph".into(),
        unit: "nodes".into(),
        a: Some(9),
        b: None,
        delta: None
    }));
    // The wider layer: A's 32-wide weight guard is gone from the pair (B's is 48 wide, in the
    // only-in-B compiles of forward (two_runs.py:19)).
    let Some(Change::Guards { removed, .. }) = ch.iter().find(|x| matches!(x, Change::Guards { .. })) else {
        panic!("{ch:?}")
    };
    assert!(removed.iter().any(|g| g.starts_with("TENSOR_MATCH:") && g.contains("size=[32, 16]")), "{removed:?}");
    assert!(removed.iter().all(|g| !g.contains("139740562968704")), "object ids are read as <id>");
    assert!(ch.contains(&Change::Cache { cache: "fx_graph_cache".into(), a: vec!["miss".into(); 2], b: vec![] }));
    let Some(Change::ArtifactsOnly { b: only_b, .. }) = ch.iter().find(|x| matches!(x, Change::ArtifactsOnly { .. }))
    else {
        panic!("{ch:?}")
    };
    assert_eq!(only_b, &["dynamo_graph_break_reason"]);
    // Compiles only in B: the restarted attempt, the layers' forward, the resume functions.
    let only_b: Vec<&str> =
        c.streams[0].compiles.iter().filter(|x| x.a.is_none()).filter_map(|x| x.b.as_deref()).collect();
    assert_eq!(only_b.len(), 17);
    assert!(["[0/0_1]", "[1/0_1]", "[0/1]", "[2/0]", "[3/1]"].iter().all(|id| only_b.contains(id)), "{only_b:?}");
    // Recompiles: forward (two_runs.py:32) recompiled once in B, for the batch size.
    let r = &c.streams[0].recompiles[0];
    assert_eq!((r.code.as_str(), r.a, r.b, r.delta), ("forward (two_runs.py:32)", 0, 1, 1));
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
    assert!(text.contains("forward (two_runs.py:32) [0/0]→[0/0]: status ok → restarted as [0/0_1]\n"), "{text}");
    assert!(text.contains("forward (two_runs.py:32) [0/0]→[0/0]: graph breaks +1: Failed to trace builtin operator"));
    insta::assert_snapshot!("compare_two_runs", text);
    // -q: the same findings without the stream's heading.
    let out = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "-q"]);
    let quiet = String::from_utf8(out.stdout).unwrap();
    let all = findings(&c);
    let want: Vec<&str> = all[1..].iter().map(|l| l.trim_start()).collect();
    assert_eq!(quiet.lines().collect::<Vec<_>>(), want);
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
    // The guard trees differ only by object ids: an artifact that differs, no guard change.
    assert!(
        first.changes.iter().any(|x| matches!(x, Change::Artifact { name, .. } if name == "dynamo_cpp_guards_str"))
    );
    assert!(!first.changes.iter().any(|x| matches!(x, Change::Guards { .. })), "{:?}", first.changes);
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

/// The groups of (stream, compile id) paired by equal `align_key`s, and by `Alignment::new`.
fn groups_both_ways(streams: &[(String, Vec<CompileEntry>)]) -> (Groups, Groups) {
    let mut by_key: std::collections::BTreeMap<&str, Vec<(String, String)>> = Default::default();
    for (s, rows) in streams {
        for r in rows {
            let key = r.align_key.as_deref().expect("every row has an align_key");
            by_key.entry(key).or_default().push((s.clone(), r.compile_id.clone()));
        }
    }
    let input: Vec<StreamCompiles> =
        streams.iter().map(|(s, rows)| StreamCompiles { stream: s, compiles: rows }).collect();
    let aligned = Alignment::new(&input);
    let from_alignment = aligned
        .table
        .compiles
        .iter()
        .map(|c| c.present.iter().map(|p| (p.stream.clone(), p.compile_id.clone())).collect())
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
    assert_eq!(by_key.iter().filter(|g| g.len() == 2).count(), 1);
    // Deterministic: a second build writes the same keys.
    let (_dc, again, _) = build(&fixture("torch-2.15/two_runs/run_b"));
    let keys = |out: &Path| rows_of(out).remove(0).1.into_iter().map(|r| r.align_key).collect::<Vec<_>>();
    assert_eq!(keys(&b), keys(&again));
}
