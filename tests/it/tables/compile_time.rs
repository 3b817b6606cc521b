//! Compile time by phase, from the chromium events.

use camino::Utf8PathBuf;
use md5::{Digest, Md5};
use tlparse_build::bundle::reader::Bundle;
use tlparse_build::schema::tables::{CompileDirectory, CompileTime, CompileTiming, UnmatchedCause, UnmatchedSide};

use super::{Built, built, built_dir, snapshot};
use crate::util::build_to;

fn compile_time(b: &Built) -> CompileTime {
    serde_json::from_value(b.table("compile_time")).unwrap()
}

fn compile_time_of(b: &Built, stream: &str) -> CompileTime {
    serde_json::from_value(b.table_of(stream, "compile_time")).unwrap()
}

/// Every compile's (forward, backward, total, other) in µs as `compile_directory` gives them,
/// checked to be `compile_time`'s to the nanosecond; by compile id.
fn times_agree(b: &Built, stream: &str) -> Vec<(String, [Option<f64>; 4])> {
    let dir: CompileDirectory = serde_json::from_value(b.table_of(stream, "compile_directory")).unwrap();
    let t = compile_time_of(b, stream);
    let us = |s: Option<f64>| s.map(|s| (s * 1e9).round() / 1e3);
    let mut out = Vec::new();
    for c in &dir.compiles {
        let row = [us(c.duration_s), us(c.backward_s), us(c.total_s), us(c.other_s)];
        if let Some(timing) = t.compiles.iter().find(|x| x.compile_id.as_deref() == Some(&c.compile_id)) {
            let total = (timing.total_us > 0.0).then_some(timing.total_us);
            let timed = [timing.forward_us, timing.backward_us, total, timing.other_us];
            assert_eq!(row, timed, "{stream} {}: compile_directory and compile_time disagree", c.compile_id);
        }
        out.push((c.compile_id.clone(), row));
    }
    out
}

fn compile<'a>(t: &'a CompileTime, id: &str) -> &'a CompileTiming {
    t.compiles.iter().find(|c| c.compile_id.as_deref() == Some(id)).unwrap_or_else(|| panic!("no {id}"))
}

/// Total of the phase `name` directly under a compile (no enclosing phase of the same compile).
fn phase_s(c: &CompileTiming, name: &str) -> f64 {
    let p = c.phases.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no phase {name}"));
    p.total_us / 1e6
}

/// A bundle of a log of `chromium_event` entries: `(envelope context keys, payload)` pairs, each
/// payload logged on one line with its correct md5.
pub fn synthetic_log(entries: &[(&str, &str)]) -> Built {
    let mut text = String::new();
    for (i, (context, payload)) in entries.iter().enumerate() {
        let context = if context.is_empty() { String::new() } else { format!(", {context}") };
        let md5: String = Md5::digest(payload.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        text.push_str(&format!(
            "V0101 00:00:{i:02}.000000 7 torch/_dynamo/utils.py:1] {{\"chromium_event\": {{}}{context}, \"has_payload\": \"{md5}\"}}\n\t{payload}\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("synthetic.log");
    std::fs::write(&log, text).unwrap();
    let out = dir.path().join("bundle");
    build_to(&Utf8PathBuf::from_path_buf(log).unwrap(), &out);
    Built { bundle: Bundle::open(&out).unwrap(), _dir: dir }
}

#[test]
fn phases_match_the_compilation_metrics_times() {
    // Checked by hand (python over the raw log): graph_breaks pairs 586 B with 586 E events, all
    // properly nested on one (pid 0, tid 0) stack, plus 21 instants. Each frame's
    // entire_frame_compile begins under attempt 0 (e.g. [2/0]) and ends under attempt 1; its
    // duration equals compilation_metrics' entire_frame_compile_time_s to the microsecond, and
    // backend_compile / inductor_compile (begun under [2/0_1]) equal backend_compile_time_s /
    // inductor_compile_time_s: 10.647143, 10.594137 and 10.566818 s for frame 2.
    let b = built("torch-2.15/graph_breaks");
    let t = compile_time(&b);
    assert_eq!(t.events, 586 * 2 + 21);
    assert!(t.unmatched.is_empty(), "{:?}", t.unmatched);
    assert!(t.other_events.is_empty());
    let close = |a: f64, b: f64| assert!((a - b).abs() < 2e-6, "{a} != {b}");
    close(phase_s(compile(&t, "[2/0]"), "entire_frame_compile"), 10.647143);
    close(phase_s(compile(&t, "[2/0_1]"), "backend_compile"), 10.594137);
    close(phase_s(compile(&t, "[2/0_1]"), "inductor_compile"), 10.566818);
    close(phase_s(compile(&t, "[12/0]"), "entire_frame_compile"), 0.713083);
    close(phase_s(compile(&t, "[12/0]"), "inductor_compile"), 0.660182);

    // Nesting: in [2/0_1], compile_attempt_1 sits in [2/0]'s entire_frame_compile, so it has no
    // parent in its own compile but points to that outer phase; backend_compile nests in it.
    let c = compile(&t, "[2/0_1]");
    let attempt = c.phases.iter().position(|p| p.name == "compile_attempt_1").unwrap();
    assert_eq!(c.phases[attempt].parent, None);
    let outer = c.phases[attempt].outer.as_ref().expect("compile_attempt_1 sits in [2/0]'s phases");
    assert_eq!(outer.compile_id.as_deref(), Some("[2/0]"));
    let first = compile(&t, "[2/0]");
    let frame = &first.phases[outer.phase as usize];
    assert_eq!(frame.name, "entire_frame_compile");
    assert_eq!(first.phases[frame.parent.unwrap() as usize].name, "dynamo");
    let backend = c.phases.iter().find(|p| p.name == "backend_compile").unwrap();
    assert_eq!(backend.parent, Some(attempt as u32));
    // Self time never exceeds the total, and children add up to total minus self.
    for c in &t.compiles {
        for (i, p) in c.phases.iter().enumerate() {
            assert!(p.self_us <= p.total_us + 1e-6, "{} {}", p.name, p.self_us);
            let children: f64 = c.phases.iter().filter(|q| q.parent == Some(i as u32)).map(|q| q.total_us).sum();
            assert!(children <= p.total_us - p.self_us + 1e-3, "{:?} {}", c.compile_id, p.name);
        }
    }
    // 16 compile_file events carry no compile id anywhere (args.compile_id is null); they run
    // inside inductor phases and are attributed to the enclosing compile, so no row has a null id.
    assert!(t.compiles.iter().all(|c| c.compile_id.is_some()));
    let compile_file = t.phases.iter().find(|p| p.name == "compile_file").unwrap();
    assert_eq!(compile_file.count, 19);
    // The two instants of frame 6's recompile: automatic_dynamic, then the AOTAutograd cache hit.
    let names: Vec<&str> = compile(&t, "[6/1]").instants.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["automatic_dynamic", "autograd_cache_hit"]);
    // The stream total is the 17 outermost `dynamo` phases.
    let dynamo = t.phases.iter().find(|p| p.name == "dynamo").unwrap();
    assert_eq!(dynamo.count, 17);
    assert_eq!(t.total_us, dynamo.total_us);
}

#[test]
fn a_compile_is_its_frame_compile_plus_its_lazy_backward_in_every_table() {
    // ranks_shifted rank 0 trains `forward`, [0/0]; AOTAutograd compiles its backward lazily, at
    // the first backward call, after the frame compile. Checked by hand in
    // dedicated_log_torch_trace_rank_0_ctepc446.log: `dynamo` begins at line 1 (ts
    // 1795461764505103.5); entire_frame_compile runs from line 19 (ts 1795461764506006.25) to
    // line 3566 (ts 1795461784058473.25): 19552467 µs, compilation_metrics' (line 3579)
    // entire_frame_compile_time_s 19.552467; `dynamo` ends at line 3580 (ts 1795461784061869.5,
    // 19556766 µs). Then entire_backward_compile, with compile id 0/0, runs from line 3617 (ts
    // 1795461784079462.5) to line 6212 (ts 1795461785731035.0): 1651572.5 µs;
    // bwd_compilation_metrics (line 6228) says backward_cumulative_compile_time_us 1651572.
    // The compile directory said 19.55 s, compile_time 21.21 s (dynamo + the backward, unnamed).
    let (b, ranks) = built_dir("torch-2.15/ranks_shifted");
    let t = compile_time_of(&b, &ranks[&0]);
    let c = t.compiles.iter().find(|c| c.compile_id.as_deref() == Some("[0/0]")).unwrap();
    assert_eq!((c.forward_us, c.backward_us, c.other_us), (Some(19552467.0), Some(1651572.5), None));
    assert_eq!(c.total_us, 19552467.0 + 1651572.5);
    let dynamo = c.phases.iter().find(|p| p.name == "dynamo").unwrap();
    assert_eq!(dynamo.total_us, 19556766.0, "the wrapper around the frame compile is not its time");
    let times = times_agree(&b, &ranks[&0]);
    assert_eq!(times[0], ("[0/0]".into(), [Some(19552467.0), Some(1651572.5), Some(21204039.5), None]));
    // Every compile of every rank: the two tables agree (times_agree), and only `forward` ([0/0],
    // [1/0] on rank 2) has a lazy backward: sync_grads and rank 2's helper run on tensors that need
    // no gradient, and rank 1's recompile of `forward` with a dynamic batch, [0/1], compiled its
    // backward within its frame compile (bw_compiler at lines 19830-22428 of rank 1's log, inside
    // entire_frame_compile, lines 16552-22732), so that time is in its forward.
    for (rank, stream) in &ranks {
        let with_backward: Vec<String> =
            times_agree(&b, stream).into_iter().filter(|(_, t)| t[1].is_some()).map(|(id, _)| id).collect();
        assert_eq!(with_backward, [if *rank == 2 { "[1/0]" } else { "[0/0]" }], "rank {rank}");
    }
}

#[test]
fn phases_of_compile_workers_overlap_instead_of_going_unpaired() {
    // torch logs every thread's events with pid 0 and tid 0. In rank 0's backward compile,
    // checked by hand: compile_file (a compile worker, no compile id) begins at line 4656, the
    // main thread's async_compile.wait at line 4668 (ts 1795461784473670.0), another
    // compile_file at 4680; the compile_files end at 4692 and 4704, and async_compile.wait at
    // 4716 (ts 1795461785708645.75): 1234975.75 µs, bwd_compilation_metrics'
    // triton_compile_time_us 1234975. The wait began inside the first compile_file and ended
    // after it: it was reported as a begin without end (line 4668) and an end without begin
    // (line 4716), and the first compile_file's self time took the whole wait, so the stream's
    // compile_file self time (5036455.75 µs) exceeded its total (3252131.25 µs).
    let (b, ranks) = built_dir("torch-2.15/ranks_shifted");
    let t = compile_time_of(&b, &ranks[&0]);
    assert!(t.unmatched.is_empty(), "{:?}", t.unmatched);
    assert_eq!(t.overlaps.len(), 1);
    let o = &t.overlaps[0];
    // The second one is [1/2]'s, at line 14817.
    assert_eq!(
        (o.name.as_str(), o.outlived.as_str(), o.count, o.first_line),
        ("async_compile.wait", "compile_file", 2, 4668)
    );
    let c = t.compiles.iter().find(|c| c.compile_id.as_deref() == Some("[0/0]")).unwrap();
    let backward = c.phases.iter().position(|p| p.name == "entire_backward_compile").unwrap() as u32;
    let under = |parent: u32| c.phases.iter().filter(move |p| p.parent == Some(parent));
    let mut path = vec![backward];
    for name in [
        "compile_fx.<locals>.bw_compiler",
        "inductor_compile",
        "fx_codegen_and_compile",
        "GraphLowering.compile_to_fn",
        "code_gen",
        "PyCodeCache.load_by_key_path",
        "compile_file",
        "async_compile.wait",
    ] {
        let parent = *path.last().unwrap();
        let i = c
            .phases
            .iter()
            .position(|p| p.name == name && p.parent == Some(parent))
            .unwrap_or_else(|| panic!("no {name}"));
        path.push(i as u32);
    }
    let wait = &c.phases[*path.last().unwrap() as usize];
    assert_eq!((wait.count, wait.unfinished, wait.total_us), (1, 0, 1234975.75));
    assert_eq!(under(*path.last().unwrap()).count(), 1, "the second compile_file began inside the wait");
    let compile_file = t.phases.iter().find(|p| p.name == "compile_file").unwrap();
    assert_eq!(compile_file.total_us, 3252131.25);
    for p in &t.phases {
        assert!(p.self_us <= p.total_us, "{p:?}");
    }
}

#[test]
fn a_restarted_frame_compile_counts_in_the_attempt_that_completed_it() {
    // two_runs/run_b, checked by hand: [2/1]'s entire_frame_compile runs from line 11448 (ts
    // 1795462580764296.25) to line 14268 (ts 1795462580925554.5), 161258.25 µs (metrics, line
    // 14281: 0.161258 s); its backward from line 20277 (ts 1795462581873446.25) to line 22758
    // (ts 1795462582653093.0), 779646.75 µs (bwd metrics, line 22774: 779646). inductor_compile
    // ran in both, 24963.25 + 772924.25 µs: more than the forward, so a Compile time page that
    // summed it with the forward alone would show inductor_compile above entire_frame_compile.
    let b = built("torch-2.15/two_runs/run_b");
    let stream = b.only_stream();
    let times: std::collections::BTreeMap<String, [Option<f64>; 4]> = times_agree(&b, &stream).into_iter().collect();
    assert_eq!(times["[2/1]"], [Some(161258.0), Some(779646.75), Some(940904.75), None]);
    // Frame 1's first compile restarted at a graph break: its entire_frame_compile began under
    // [1/0] and ended under [1/0_1], which logged the metrics (9.769775 s) and the backward.
    assert_eq!(times["[1/0]"], [None, None, None, None]);
    assert_eq!(times["[1/0_1]"], [Some(9769775.0), Some(86547.5), Some(9856322.5), None]);
    let t = compile_time(&b);
    let first = t.compiles.iter().find(|c| c.compile_id.as_deref() == Some("[1/0]")).unwrap();
    assert_eq!((first.counted_in.as_deref(), first.total_us), (Some("[1/0_1]"), 0.0));
    assert_eq!(phase_s(first, "entire_frame_compile"), 9.76977525);
}

#[test]
fn autotuning_at_the_first_run_is_other_time_not_compile_time() {
    // multi_rank_runtime rank 0 (CUDA), checked by hand: after [0/0]'s frame compile, its first
    // run benchmarks two Triton kernels, CachingAutotuner.benchmark_all_configs with args
    // compile_id 0/0, lines 3235-3297 (47709 µs) and 3311-3373 (29326 µs): 77035 µs, which
    // torch reports as runtime, compilation_metrics_runtime's runtime_triton_autotune_time_us
    // 77034 (line 3387). The frame compile is 2.708391 s (entire_frame_compile_time_s).
    let (b, ranks) = built_dir("tlparse-tests/multi_rank_runtime");
    let times = times_agree(&b, &ranks[&0]);
    assert_eq!(times[0], ("[0/0]".into(), [Some(2708391.0), None, Some(2708391.0), Some(77035.0)]));
}

#[test]
fn warm_cache_compile_is_snapshotted() {
    // cache_warm: 30 B/E pairs and 2 instants (autograd_cache_hit in [0/0] and [1/0]).
    let b = built("torch-2.15/cache_warm");
    let t = compile_time(&b);
    assert_eq!(t.events, 62);
    assert_eq!(compile(&t, "[1/0]").instants[0].name, "autograd_cache_hit");
    snapshot("compile_time__cache_warm", &b.table("compile_time"));
}

#[test]
fn events_outside_a_compile_form_a_null_row() {
    // aot_inductor: AOT Inductor runs outside torch.compile; its 133 chromium events have no
    // envelope compile id and args.compile_id "None".
    let b = built("torch-2.15/aot_inductor");
    let t = compile_time(&b);
    assert_eq!(t.events, 133);
    assert_eq!(t.compiles.len(), 1);
    assert_eq!(t.compiles[0].compile_id, None);
}

#[test]
fn logs_without_chromium_events_have_no_table() {
    // comp_metrics.log has no chromium_event entries.
    assert!(!built("tlparse-tests/comp_metrics.log").has_table("compile_time"));
}

#[test]
fn unmatched_events_are_reported_and_threads_have_their_own_stacks() {
    let ev = |name: &str, ph: &str, ts: u32, tid: u32| {
        format!(
            r#"{{"name": "{name}", "ts": {ts}, "args": {{"compile_id": "0/0"}}, "ph": "{ph}", "pid": 0, "tid": {tid}}}"#
        )
    };
    let cid = r#""frame_id": 0, "frame_compile_id": 0, "attempt": 0"#;
    let events = [
        ev("outer", "B", 0, 0),
        ev("inner", "B", 10, 0),
        ev("outer", "E", 100, 0), // closes outer, outermost: inner, of its compile, is given up
        ev("stray", "E", 150, 0), // nothing open by that name
        ev("a", "B", 200, 1),     // two threads interleaved
        ev("b", "B", 210, 2),
        ev("a", "E", 260, 1),
        ev("b", "E", 300, 2),
        r#"{"name": "complete", "ts": 400, "dur": 5, "ph": "X", "pid": 0, "tid": 0}"#.to_string(),
        ev("open", "B", 500, 0), // still open at the end
    ];
    let mut entries: Vec<(&str, &str)> = events.iter().map(|e| (cid, e.as_str())).collect();
    // No envelope id: args.compile_id names the compile (attempt-less, read as attempt 0).
    let other = r#"{"name": "elsewhere", "ts": 600, "args": {"compile_id": "1/2"}, "ph": "i", "pid": 0, "tid": 0}"#;
    entries.push(("", other));
    entries.push((cid, "not json"));
    let b = synthetic_log(&entries);
    let t = compile_time(&b);
    assert_eq!(t.events, 11);
    let unmatched: Vec<(UnmatchedSide, UnmatchedCause, &str)> =
        t.unmatched.iter().map(|u| (u.side, u.cause, u.name.as_str())).collect();
    assert_eq!(
        unmatched,
        [
            (UnmatchedSide::Begin, UnmatchedCause::Abandoned, "inner"),
            (UnmatchedSide::End, UnmatchedCause::NoBegin, "stray"),
            (UnmatchedSide::Begin, UnmatchedCause::OpenAtEnd, "open")
        ]
    );
    assert!(t.overlaps.is_empty());
    let c = compile(&t, "[0/0]");
    let phase = |n: &str| c.phases.iter().find(|p| p.name == n).unwrap();
    assert_eq!((phase("outer").total_us, phase("outer").self_us), (100.0, 100.0));
    assert_eq!((phase("inner").count, phase("inner").unfinished), (0, 1));
    assert_eq!(phase("inner").parent, Some(0));
    assert_eq!((phase("a").total_us, phase("b").total_us), (60.0, 90.0));
    assert_eq!(phase("complete").total_us, 5.0);
    assert_eq!((phase("open").count, phase("open").unfinished), (0, 1));
    assert_eq!(t.total_us, 100.0 + 60.0 + 90.0 + 5.0);
    // No frame compile, no backward: every outermost phase is the compile's other time.
    assert_eq!((c.forward_us, c.backward_us, c.other_us, c.total_us), (None, None, Some(255.0), 0.0));
    assert_eq!(compile(&t, "[1/2]").instants[0].name, "elsewhere");
    // The payload that is not a trace event is a diagnostic, not a silent drop.
    let diags = b.bundle.diagnostics().unwrap();
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(diags[0].message.starts_with("compile_time: chromium_event entry not used"), "{}", diags[0].message);
}
