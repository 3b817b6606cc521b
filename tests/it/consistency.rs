//! One definition per count (docs/definitions.md), held on every fixture of fixtures-repo: each
//! trace is built once with the CLI (its build summary read too), then every quantity is read
//! from every table and summary line that shows it and compared, and counted again in the raw
//! log by a plain scan of its header lines, independent of the parser.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;
use tlparse_build::bundle::reader::Bundle;

use crate::util::{all_traces, assert_valid, run};

/// A compile id as the envelope gives it: (compiled autograd id, frame, frame compile, attempt).
type RawId = (Option<u64>, Option<u64>, Option<u64>, u64);

/// What a plain scan of one log file finds: each header line's JSON envelope (the text from the
/// first `{` after the glog prefix's `] `), read with serde_json; lines that are no JSON object
/// (a cut-short last line) are skipped.
#[derive(Default, Debug)]
struct RawCounts {
    /// Envelopes with an artifact named `dynamo_graph_break_reason` (or that kind).
    graph_breaks: u64,
    /// Distinct compile ids of the envelopes.
    compile_ids: BTreeSet<RawId>,
    /// `compilation_metrics` entries.
    metrics: u64,
    /// Items of their `restart_reasons`.
    restarts: u64,
    /// Metrics entries of any kind (`compilation_metrics`, `bwd_compilation_metrics`, ...) with a
    /// `fail_type`.
    failed: u64,
    /// Frames (compiled autograd id, frame) with a compile id whose frame compile is 1 or more.
    recompiled_frames: BTreeSet<(Option<u64>, u64)>,
    /// Artifacts named `*cache_hit*`, `*cache_miss*` or `*cache_bypass*` logged with a compile id.
    cache_artifacts: u64,
    /// Each `Hint:` text, with how many graph breaks (payload lines of a `dynamo_graph_break_reason`
    /// entry), restart reasons and metrics with a `fail_type` (their `fail_reason`) carry it.
    hints: BTreeMap<String, [u64; 3]>,
}

/// The distinct `Hint:` texts of a message's lines.
fn raw_hints<'a>(lines: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    lines.filter_map(|l| l.trim_start().strip_prefix("Hint:")).map(|h| h.trim().to_string()).collect()
}

fn scan(log: &str) -> RawCounts {
    let mut raw = RawCounts::default();
    for (header, payload) in entries(log) {
        let Some(start) = header.find("] {").map(|i| i + 2) else { continue };
        let Ok(Value::Object(env)) = serde_json::from_str::<Value>(&header[start..]) else { continue };
        let u = |k: &str| env.get(k).and_then(Value::as_u64);
        let artifact = env.get("artifact").and_then(|a| a["name"].as_str()).unwrap_or("");
        if artifact == "dynamo_graph_break_reason" || env.contains_key("dynamo_graph_break_reason") {
            raw.graph_breaks += 1;
            count_hints(&mut raw.hints, 0, raw_hints(payload.iter().copied()));
        }
        let id = (u("compiled_autograd_id"), u("frame_id"), u("frame_compile_id"));
        let has_id = id.0.is_some() || id.1.is_some();
        if has_id {
            raw.compile_ids.insert((id.0, id.1, id.2, u("attempt").unwrap_or(0)));
            if let (Some(frame), Some(1..)) = (id.1, id.2) {
                raw.recompiled_frames.insert((id.0, frame));
            }
            if ["cache_hit", "cache_miss", "cache_bypass"].iter().any(|k| artifact.contains(k)) {
                raw.cache_artifacts += 1;
            }
        }
        if let Some(m) = env.get("compilation_metrics") {
            raw.metrics += 1;
            raw.restarts += m["restart_reasons"].as_array().map_or(0, |r| r.len() as u64);
            for reason in m["restart_reasons"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                count_hints(&mut raw.hints, 1, raw_hints(reason.lines()));
            }
        }
        let metrics_kinds =
            ["compilation_metrics", "bwd_compilation_metrics", "aot_autograd_backward_compilation_metrics"];
        for m in metrics_kinds.iter().filter_map(|k| env.get(*k)).filter(|m| !m["fail_type"].is_null()) {
            raw.failed += 1;
            count_hints(&mut raw.hints, 2, raw_hints(m["fail_reason"].as_str().unwrap_or("").lines()));
        }
    }
    raw
}

/// Each entry of a log: its header line and its payload lines (the tab-indented lines after it,
/// without the tab).
fn entries(log: &str) -> Vec<(&str, Vec<&str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in log.lines() {
        match (line.strip_prefix('\t'), out.last_mut()) {
            (Some(payload_line), Some((_, payload))) => payload.push(payload_line),
            (Some(_), None) => {}
            (None, _) => out.push((line, Vec::new())),
        }
    }
    out
}

/// Adds one message's hints to column `which` (0 graph breaks, 1 restarts, 2 failures).
fn count_hints(hints: &mut BTreeMap<String, [u64; 3]>, which: usize, found: BTreeSet<String>) {
    for hint in found.into_iter().filter(|h| !h.is_empty()) {
        hints.entry(hint).or_default()[which] += 1;
    }
}

/// The numbers of one stream's line of the build summary (`  log0: 18 compile id(s) (...); ...`).
#[derive(Default, Debug, PartialEq)]
struct SummaryLine {
    compile_ids: Option<u64>,
    graph_breaks: Option<u64>,
    recompiled_frames: Option<u64>,
    failed: Option<u64>,
    restarts: Option<u64>,
}

/// The number right before `what` in `text`, if `what` is there.
fn number_before(text: &str, what: &str) -> Option<u64> {
    let at = text.find(what)?;
    text[..at].trim_end().rsplit([' ', '(', ';']).next()?.parse().ok()
}

fn summary_line(stdout: &str, stream: &str) -> Option<SummaryLine> {
    let line = stdout.lines().find_map(|l| l.strip_prefix(&format!("  {stream}: ")))?;
    Some(SummaryLine {
        compile_ids: number_before(line, "compile id(s)"),
        graph_breaks: number_before(line, "graph break(s)"),
        recompiled_frames: number_before(line, "frame(s) recompiled"),
        failed: number_before(line, "failed compile(s)"),
        restarts: number_before(line, "restart(s)"),
    })
}

/// Seconds equal to the microsecond (tables keep µs rounded to the ns; sums in another order
/// differ in the last bits).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

fn list<'a>(v: &'a Value, field: &str) -> &'a [Value] {
    v[field].as_array().map_or(&[], Vec::as_slice)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// Collects disagreements rather than stopping at the first, so one run shows them all.
struct Check<'a> {
    trace: &'a str,
    problems: Vec<String>,
}

impl Check<'_> {
    fn eq<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, a: T, b: T) {
        if a != b {
            self.problems.push(format!("{}: {what}: {a:?} != {b:?}", self.trace));
        }
    }

    fn close(&mut self, what: &str, a: f64, b: f64) {
        if !close(a, b) {
            self.problems.push(format!("{}: {what}: {a} != {b}", self.trace));
        }
    }
}

/// Every stream table of one stream, as JSON (`Null` when absent).
fn tables(b: &Bundle, stream: &str) -> BTreeMap<&'static str, Value> {
    let names = [
        "compile_directory",
        "compile_summary",
        "compile_time",
        "graph_breaks",
        "failures",
        "recompiles",
        "cache_outcomes",
        "compilation_metrics",
        "hints",
    ];
    names.into_iter().map(|n| (n, b.table::<Value>(stream, n).unwrap().unwrap_or(Value::Null))).collect()
}

/// The per-stream checks: tables against each other, against the build summary, and against
/// the raw log when the stream is its input file's only stream.
fn check_stream(c: &mut Check, t: &BTreeMap<&str, Value>, line: Option<&SummaryLine>, raw: Option<&RawCounts>) {
    let dir = list(&t["compile_directory"], "compiles");
    let summary = &t["compile_summary"];
    let none = SummaryLine::default();
    let line = line.unwrap_or(&none);

    // Compile ids: compile_directory rows = compile_summary.compiles = the summary line.
    if !summary.is_null() {
        c.eq("compile_summary.compiles vs directory rows", summary["compiles"].as_u64(), Some(dir.len() as u64));
        let by_status: u64 = summary["by_status"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        c.eq("by_status sum vs compiles", by_status, dir.len() as u64);
        c.eq("summary line compile ids", line.compile_ids, Some(dir.len() as u64));
    }

    // Timed compiles and compile time: directory, summary, compile_time agree.
    let timed: Vec<&Value> = dir.iter().filter(|r| f(&r["total_s"]) > 0.0).collect();
    let timing = list(&t["compile_time"], "compiles");
    if !summary.is_null() {
        c.eq("compile_summary.timed vs directory total_s > 0", summary["timed"].as_u64(), Some(timed.len() as u64));
        c.close(
            "compile_summary.total_s vs directory",
            f(&summary["total_s"]),
            dir.iter().map(|r| f(&r["total_s"])).sum(),
        );
        c.close("compile_summary.forward_s", f(&summary["forward_s"]), dir.iter().map(|r| f(&r["duration_s"])).sum());
        c.close("compile_summary.backward_s", f(&summary["backward_s"]), dir.iter().map(|r| f(&r["backward_s"])).sum());
        let inside: f64 = dir.iter().map(|r| f(&r["backward_in_forward_s"])).sum();
        c.close("compile_summary.backward_in_forward_s", f(&summary["backward_in_forward_s"]), inside);
        let slowest = list(summary, "slowest_compiles").first().map(|s| f(&s["total_s"]));
        let max =
            timed.iter().map(|r| f(&r["total_s"])).fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        c.eq(
            "slowest compile is the largest directory total",
            slowest.map(|s| (s * 1e6).round()),
            max.map(|m| (m * 1e6).round()),
        );
    }
    if !t["compile_time"].is_null() {
        // A compile timed by its metrics alone (no trace events) has no compile_time row.
        let timed_rows = timing.iter().filter(|r| !r["compile_id"].is_null() && f(&r["total_us"]) > 0.0).count();
        let with_row = timed.iter().filter(|d| timing.iter().any(|r| r["compile_id"] == d["compile_id"])).count();
        c.eq("compile_time timed rows vs directory", timed_rows, with_row);
        for row in timing.iter().filter(|r| !r["compile_id"].is_null()) {
            let id = row["compile_id"].as_str().unwrap();
            let Some(d) = dir.iter().find(|d| d["compile_id"] == id) else {
                c.problems.push(format!("{}: compile_time row {id} not in the directory", c.trace));
                continue;
            };
            c.close(&format!("{id} total"), f(&row["total_us"]) / 1e6, f(&d["total_s"]));
            c.close(&format!("{id} backward"), f(&row["backward_us"]) / 1e6, f(&d["backward_s"]));
            c.close(
                &format!("{id} backward inside"),
                f(&row["backward_in_forward_us"]) / 1e6,
                f(&d["backward_in_forward_s"]),
            );
        }
    }

    // Graph breaks: dynamo_graph_break_reason entries, nothing else.
    let breaks = t["graph_breaks"]["total"].as_u64().unwrap_or(0);
    let per_compile: u64 = dir.iter().map(|r| list(r, "graph_breaks").len() as u64).sum();
    let grouped: u64 = list(&t["graph_breaks"], "breaks").iter().map(|g| g["count"].as_u64().unwrap()).sum();
    c.eq("graph_breaks.total vs its groups", breaks, grouped);
    c.eq("graph_breaks.total vs directory graph_breaks", breaks, per_compile);
    c.eq("summary line graph breaks", line.graph_breaks.unwrap_or(0), breaks);
    for g in list(&t["graph_breaks"], "breaks") {
        c.eq("graph break source", g["source"].as_str(), Some("dynamo_graph_break_reason"));
    }

    // Restarts: restart_reasons items; failures: fail_type set.
    let restarts = t["failures"]["restarts"].as_u64().unwrap_or(0);
    let failed = t["failures"]["failed"].as_u64().unwrap_or(0);
    let reasons: u64 = dir.iter().map(|r| list(r, "restart_reasons").len() as u64).sum();
    c.eq("failures.restarts vs directory restart_reasons", restarts, reasons);
    c.eq("summary line restarts", line.restarts.unwrap_or(0), restarts);
    c.eq("summary line failed", line.failed.unwrap_or(0), failed);
    let failed_ids = summary["by_status"]["failed"].as_u64().unwrap_or(0);
    if failed_ids > failed {
        c.problems.push(format!("{}: {failed_ids} failed compile ids but {failed} failures", c.trace));
    }

    // Recompiles: frames with a frame compile N >= 1; each step [f/N] in N order.
    let frames = list(&t["recompiles"], "frames");
    c.eq("summary line recompiled frames", line.recompiled_frames.unwrap_or(0), frames.len() as u64);
    for frame in frames {
        let ns: Vec<u64> = list(frame, "compiles")
            .iter()
            .filter_map(|s| dir.iter().find(|d| d["compile_id"] == s["compile_id"]))
            .map(|d| d["cid"]["frame_compile_id"].as_u64().unwrap())
            .collect();
        c.eq("recompile steps in frame compile order", ns.windows(2).all(|w| w[0] < w[1]), true);
        c.eq("a recompiled frame has a frame compile >= 1", ns.last().is_some_and(|&n| n >= 1), true);
    }

    // Cache: each directory cache artifact is one of cache_outcomes' lookups of that compile.
    let lookups: BTreeMap<&str, BTreeSet<(u64, &str)>> = list(&t["cache_outcomes"], "compiles")
        .iter()
        .filter_map(|r| {
            let seqs = list(r, "lookups").iter().map(|l| (l["seq"].as_u64().unwrap(), l["outcome"].as_str().unwrap()));
            Some((r["compile_id"].as_str()?, seqs.collect()))
        })
        .collect();
    let mut cache_entries = 0;
    for d in dir {
        for o in list(d, "cache") {
            cache_entries += 1;
            let found = lookups
                .get(d["compile_id"].as_str().unwrap())
                .is_some_and(|l| l.contains(&(o["seq"].as_u64().unwrap(), o["outcome"].as_str().unwrap())));
            c.eq(&format!("{} cache {} in cache_outcomes", d["compile_id"], o["name"]), found, true);
        }
    }

    // Hints: each carried by at most every graph break, restart and failure, in known compiles.
    let hints = list(&t["hints"], "hints");
    for h in hints {
        let n = |f: &str| h[f].as_u64().unwrap();
        let name = h["hint"].as_str().unwrap();
        c.eq(&format!("hint within graph breaks: {name}"), n("graph_breaks") <= breaks, true);
        c.eq(&format!("hint within restarts: {name}"), n("restarts") <= restarts, true);
        c.eq(&format!("hint within failures: {name}"), n("failures") <= failed, true);
        for id in list(h, "compile_ids") {
            c.eq(&format!("hint compile {id} in the directory"), dir.iter().any(|d| d["compile_id"] == *id), true);
        }
    }

    let Some(raw) = raw else { return };
    let table_hints: BTreeMap<String, [u64; 3]> = hints
        .iter()
        .map(|h| {
            let n = |f: &str| h[f].as_u64().unwrap();
            (h["hint"].as_str().unwrap().to_string(), [n("graph_breaks"), n("restarts"), n("failures")])
        })
        .collect();
    c.eq("raw: hints and the breaks, restarts, failures carrying each", &raw.hints, &table_hints);
    c.eq("raw: dynamo_graph_break_reason entries", raw.graph_breaks, breaks);
    c.eq("raw: distinct compile ids", raw.compile_ids.len(), dir.len());
    let metrics_rows = list(&t["compilation_metrics"], "metrics").iter().filter(|m| m["kind"] == "compilation_metrics");
    c.eq("raw: compilation_metrics entries", raw.metrics, metrics_rows.count() as u64);
    c.eq("raw: restart_reasons items", raw.restarts, restarts);
    c.eq("raw: metrics with fail_type", raw.failed, failed);
    c.eq("raw: frames with a frame compile >= 1", raw.recompiled_frames.len(), frames.len());
    c.eq("raw: cache hit/miss/bypass artifacts", raw.cache_artifacts, cache_entries);
}

/// The cross-rank checks: compile_time_imbalance's per-rank totals and timed compiles are each
/// stream's compile_summary's; the build summary's slowest rank and slowest single compile.
fn check_cross_rank(c: &mut Check, b: &Bundle, per_stream: &BTreeMap<String, BTreeMap<&str, Value>>, stdout: &str) {
    let Some(imb) = b.cross_rank_table::<Value>("compile_time_imbalance").unwrap() else { return };
    for s in list(&imb, "streams") {
        let summary = &per_stream[s["stream"].as_str().unwrap()]["compile_summary"];
        c.eq(
            "imbalance compiles vs compile_summary.timed",
            s["compiles"].as_u64(),
            summary["timed"].as_u64().or(Some(0)),
        );
        c.close("imbalance total_us vs compile_summary.total_s", f(&s["total_us"]) / 1e6, f(&summary["total_s"]));
    }
    if let Some(line) = stdout.lines().find_map(|l| l.split_once("slowest rank to compile: ").map(|x| x.1)) {
        let slowest = imb["slowest"][0].as_str().unwrap();
        let summary = &per_stream[slowest]["compile_summary"];
        c.eq("slowest rank line: total", line.contains(&format!("({:.2} s in total", f(&summary["total_s"]))), true);
        c.eq("slowest rank line: timed", line.contains(&format!("over {} timed", summary["timed"])), true);
    }
    if let Some(line) = stdout.lines().find_map(|l| l.split_once("slowest single compile: ").map(|x| x.1)) {
        // The longest single compile id of any rank among the aligned compiles, with its id.
        let (id, stream, s) = list(&imb, "compiles")
            .iter()
            .flat_map(|r| {
                list(r, "streams").iter().map(move |t| {
                    let stream = t["stream"].as_str().unwrap();
                    let ids = list(&r["compile"], "compile_ids");
                    let id = ids.iter().find(|i| i["stream"] == stream).unwrap()["compile_id"].as_str().unwrap();
                    (id, stream, f(&t["us"]) / 1e6)
                })
            })
            .fold(("", "", 0.0), |best, x| if x.2 > best.2 { x } else { best });
        let directory = list(&per_stream[stream]["compile_directory"], "compiles");
        let total = directory.iter().find(|d| d["compile_id"] == id).map(|d| f(&d["total_s"]));
        c.close("slowest single compile is one compile's total", total.unwrap_or(-1.0), s);
        c.eq(
            "slowest single compile line",
            line.contains(&format!("{id} on")) && line.ends_with(&format!("({s:.2} s)")),
            true,
        );
    }
    if let Some(alignment) = b.cross_rank_table::<Value>("compile_alignment").unwrap() {
        for row in list(&alignment, "compiles") {
            for p in list(row, "present") {
                let dir = list(&per_stream[p["stream"].as_str().unwrap()]["compile_directory"], "compiles");
                c.eq(
                    "aligned compile id is a directory row",
                    dir.iter().any(|d| d["compile_id"] == p["compile_id"]),
                    true,
                );
            }
        }
    }
}

/// The raw counts of each stream that is the only stream of its input file.
fn raw_by_stream(trace: &Path, b: &Bundle) -> BTreeMap<String, RawCounts> {
    let mut out = BTreeMap::new();
    for input in &b.manifest.inputs {
        if let [stream] = input.streams.as_slice() {
            let path = if trace.is_dir() { trace.join(&input.path) } else { trace.to_owned() };
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            out.insert(stream.clone(), scan(&text));
        }
    }
    out
}

#[test]
fn every_count_agrees_across_tables_summaries_and_the_raw_log_on_every_fixture() {
    let mut problems = Vec::new();
    let traces = all_traces();
    assert!(traces.len() >= 40, "fixtures-repo/manifest.json lists {} traces", traces.len());
    for trace in &traces {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("b");
        let o = run(&[trace.as_str(), "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{trace}: {}", String::from_utf8_lossy(&o.stderr));
        assert_valid(&out);
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        let b = Bundle::open(&out).unwrap();
        let raw = raw_by_stream(trace.as_std_path(), &b);
        let mut c = Check { trace: trace.as_str(), problems: Vec::new() };
        let mut per_stream = BTreeMap::new();
        for (i, s) in b.manifest.streams.iter().enumerate() {
            let t = tables(&b, &s.id);
            // The build summary prints the first 8 streams.
            let line = summary_line(&stdout, &s.id);
            if i < 8 && !t["compile_summary"].is_null() {
                c.eq(&format!("{} has a summary line", s.id), line.is_some(), true);
            }
            check_stream(&mut c, &t, line.as_ref(), raw.get(&s.id));
            per_stream.insert(s.id.clone(), t);
        }
        check_cross_rank(&mut c, &b, &per_stream, &stdout);
        problems.extend(c.problems);
    }
    assert!(problems.is_empty(), "{} disagreement(s):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_raw_scan_counts_what_the_log_says() {
    // torch-2.15 two_runs/run_b, checked by hand with grep: 6 `dynamo_graph_break_reason` header
    // lines (log lines 70, 483, 7899, 30416, 30855, 43258), 12 `compilation_metrics` entries
    // (lines 386, 4213, 7800, 11396, 14281, 17740, 30735, 36972, 43154, 49311, 54725, 60749), 6
    // of them with one restart reason each ([0/0_1], [1/0_1], [1/1_1], [0/1_1], [1/2_1],
    // [1/3_1]); 18 compile ids; frames 0, 1, 2 and 3 each have a frame compile >= 1 ([0/1],
    // [1/1], [2/1], [3/1]).
    let log = std::fs::read_to_string(crate::util::fixture(
        "torch-2.15/two_runs/run_b/dedicated_log_torch_trace_rkf60auw.log",
    ))
    .unwrap();
    let raw = scan(&log);
    assert_eq!(raw.graph_breaks, 6);
    assert_eq!(raw.metrics, 12);
    assert_eq!(raw.compile_ids.len(), 18);
    assert_eq!(raw.restarts, 6);
    assert_eq!(raw.recompiled_frames.len(), 4);
    // torch-2.15 graph_breaks, by hand (grep -n "Hint:"): "Remove the `torch._dynamo.graph_break()`
    // call." in the break payloads of [10/0] (line 21998, again in its traceback at 22088) and
    // [11/0] (22430, 22488), and in the restart reasons of [10/0_1] (line 22334) and [11/0_1]
    // (25651); no fail_reason: 2 breaks, 2 restarts, 0 failures. Seven distinct hints.
    let log =
        std::fs::read_to_string(crate::util::fixture("torch-2.15/graph_breaks/dedicated_log_torch_trace_vyoaitj6.log"))
            .unwrap();
    let raw = scan(&log);
    assert_eq!(raw.hints["Remove the `torch._dynamo.graph_break()` call."], [2, 2, 0]);
    assert_eq!(raw.hints.len(), 7);
}

#[test]
fn a_data_dependent_restart_is_a_restart_and_graph_breaks_are_the_break_entries() {
    // torch-2.15 compare_pair/run_b, by hand: three `dynamo_graph_break_reason` entries, log lines
    // 103 ([0/0], Tensor.item()), 7913 ([2/0]) and 11338 ([3/0], print). The metrics of [0/0_2]
    // (line 4262, envelope attempt 2) list two restart reasons: the Tensor.item() break and
    // "<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>" (line 4292), a restart with no
    // break entry of its own; [2/0_1] (line 11196) and [3/0_1] (line 14727) one each. So 3 graph
    // breaks and 4 restarts, never 4 graph breaks.
    let b = crate::tables::built("torch-2.15/compare_pair/run_b");
    let breaks = b.table("graph_breaks");
    assert_eq!(breaks["total"], 3);
    let ids: BTreeSet<&str> = list(&breaks, "breaks")
        .iter()
        .flat_map(|g| list(g, "compile_ids").iter().map(|i| i.as_str().unwrap()))
        .collect();
    assert_eq!(ids, BTreeSet::from(["[0/0]", "[2/0]", "[3/0]"]));
    let failures = b.table("failures");
    assert_eq!((failures["restarts"].as_u64(), failures["failed"].as_u64()), (Some(4), Some(0)));
    let restarts: Vec<(&str, &str)> = list(&failures, "failures")
        .iter()
        .map(|f| (f["compile_id"].as_str().unwrap(), f["reason"].as_str().unwrap().lines().next().unwrap()))
        .collect();
    assert_eq!(
        restarts[..2],
        [
            ("[0/0_2]", "Unsupported Tensor.item() call with capture_scalar_outputs=False"),
            ("[0/0_2]", "<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>"),
        ]
    );
    // The compile page's facts: [0/0_2]'s num_graph_breaks is 1 in its metrics (torch's running
    // total, line 4262), the same as [1/0]'s (line 7821), which logged no break: it is no
    // compile's own count, and the directory gives [1/0] none.
    let dir = b.table("compile_directory");
    let row = |id: &str| list(&dir, "compiles").iter().find(|c| c["compile_id"] == id).unwrap().clone();
    assert_eq!(list(&row("[1/0]"), "graph_breaks").len(), 0);
    assert_eq!(list(&row("[0/0]"), "graph_breaks").len(), 1);
    assert_eq!(list(&row("[0/0_2]"), "restart_reasons").len(), 2);
}

#[test]
fn the_build_summary_names_the_slowest_rank_and_the_slowest_single_compile_apart() {
    // torch-2.15 ranks_cache, by hand. Rank 0's [0/0]: entire_frame_compile from log line 19 to
    // 3614, and its metrics (line 3627) say entire_frame_compile_time_s 56.959776; its lazy
    // backward, entire_backward_compile from line 3665 to 6260, 8 696 356.75 µs: 65.66 s, the
    // longest single compile of any rank. Rank 2 has the largest total: [0/0] 55.184069 s +
    // 8.1990755 s backward, [1/0] 12.097296 s = 75.48 s over 2 timed compiles; rank 3 (FX cache
    // hit) the smallest, 34.52 s: 2.2x. The old line said "slowest compile: rank 2 (75.48 s)".
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let o = run(&[crate::util::fixture("torch-2.15/ranks_cache").as_str(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(
            "slowest rank to compile: rank 2 (75.48 s in total over 2 timed compile(s), 2.2x the fastest rank)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("slowest single compile: forward (ranks_cache.py:28) [0/0] on rank 0 (65.66 s)"),
        "{stdout}"
    );
    assert!(!stdout.contains("slowest compile:"), "{stdout}");
}
