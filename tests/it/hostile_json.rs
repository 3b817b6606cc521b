//! Hostile JSON in real logs (issue #16, items 1, 2, 5 and 13): lone surrogate escapes, numbers
//! that cannot be times, metadata nested deeper than JSON readers go, header lines that are not
//! UTF-8. Each test puts the hostile bytes into `chromium_events.log` (one compile, six trace
//! events, a `str` table, an artifact and a `compilation_metrics` entry), then checks the bundle
//! one rank and two ranks, `validate` (every build here validates), `cat` and `--strict`.

use std::path::{Path, PathBuf};

use camino::Utf8PathBuf;
use md5::{Digest, Md5};
use serde_json::{Value, json};
use tlparse_build::bundle::reader::Bundle;
use tlparse_build::schema::tables::{
    CacheOutcomes, CompilationMetrics, CompileDirectory, CompileTime, Guards, RuntimeEstimates,
};
use tlparse_build::schema::{DiagnosticKind, IndexRow};

use crate::util::{build, fixture, run};

const FIXTURE: &str = "tlparse-tests/chromium_events.log";

/// `FIXTURE` with hostile bytes put in: each edit replaces the first `old` of line `line` (from 1)
/// with `new`, and the md5 of each payload an edit touched is recomputed (as torch would have
/// logged it), so that only the hostile bytes differ.
fn hostile(edits: &[(usize, &[u8], &[u8])]) -> Vec<u8> {
    hostile_from(FIXTURE, edits)
}

/// [`hostile`] of another fixture.
fn hostile_from(rel: &str, edits: &[(usize, &[u8], &[u8])]) -> Vec<u8> {
    let log = std::fs::read(fixture(rel)).unwrap();
    let mut lines: Vec<Vec<u8>> = log.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    for &(line, old, new) in edits {
        let text = &mut lines[line - 1];
        let at = text.windows(old.len()).position(|w| w == old);
        let at = at.unwrap_or_else(|| panic!("line {line} has no {:?}", String::from_utf8_lossy(old)));
        text.splice(at..at + old.len(), new.iter().copied());
    }
    for &(line, _, _) in edits {
        if lines[line - 1].starts_with(b"\t") {
            fix_md5(&mut lines, line - 1);
        }
    }
    lines.join(&b'\n')
}

/// Recomputes `has_payload` of the entry whose payload holds line index `at`.
fn fix_md5(lines: &mut [Vec<u8>], at: usize) {
    let header = (0..at).rev().find(|&i| !lines[i].starts_with(b"\t")).unwrap();
    let end = (at..lines.len()).find(|&i| !lines[i].starts_with(b"\t")).unwrap_or(lines.len());
    let payload: Vec<&[u8]> = lines[header + 1..end].iter().map(|l| &l[1..]).collect();
    let md5: String = Md5::digest(payload.join(&b'\n')).iter().map(|b| format!("{b:02x}")).collect();
    let key = b"\"has_payload\": \"";
    let text = &mut lines[header];
    let start = text.windows(key.len()).position(|w| w == key).unwrap() + key.len();
    text.splice(start..start + 32, md5.bytes());
}

/// Writes `log` as `hostile.log` in a fresh directory.
fn write_log(log: &[u8]) -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.log");
    std::fs::write(&path, log).unwrap();
    (dir, Utf8PathBuf::from_path_buf(path).unwrap())
}

/// Builds `log` as one file (validated), returning the bundle.
fn build_one(log: &[u8]) -> (tempfile::TempDir, tempfile::TempDir, PathBuf, Bundle<tlparse_bundle::DirSource>) {
    let (logs, path) = write_log(log);
    let (out_dir, out, _) = build(&path);
    let bundle = Bundle::open(&out).unwrap();
    (logs, out_dir, out, bundle)
}

/// Builds `log` as rank 0 and the unchanged fixture as rank 1, the way a multi-rank job's
/// directory looks; the build (with its cross-rank tables and merged trace) must validate.
fn build_two_ranks(log: &[u8]) -> (tempfile::TempDir, Bundle<tlparse_bundle::DirSource>) {
    build_two_ranks_with(log, FIXTURE)
}

/// [`build_two_ranks`] with the fixture `rank1` as rank 1.
fn build_two_ranks_with(log: &[u8], rank1: &str) -> (tempfile::TempDir, Bundle<tlparse_bundle::DirSource>) {
    let ranks = tempfile::tempdir().unwrap();
    std::fs::write(ranks.path().join("dedicated_log_torch_trace_rank_0_x.log"), log).unwrap();
    std::fs::copy(fixture(rank1), ranks.path().join("dedicated_log_torch_trace_rank_1_x.log")).unwrap();
    let (out_dir, out, manifest) = build(&Utf8PathBuf::from_path_buf(ranks.path().to_owned()).unwrap());
    assert_eq!(manifest.streams.len(), 2);
    let bundle = Bundle::open(&out).unwrap();
    assert!(bundle.cross_rank_chrome_trace().unwrap().is_some(), "the merged trace reads back");
    (out_dir, bundle)
}

/// The exit code of `tlparse-build LOG -o OUT --strict`.
fn strict_exit(log: &[u8]) -> Option<i32> {
    let (dir, path) = write_log(log);
    let out = dir.path().join("strict-out");
    run(&[path.as_str(), "-o", out.to_str().unwrap(), "--strict", "-q"]).status.code()
}

/// `tlparse-build cat OUT [0/0] dynamo_error`: reads the stream's index rows to find the artifact.
fn cat_dynamo_error(out: &Path) -> Vec<u8> {
    let cat = run(&["cat", out.to_str().unwrap(), "[0/0]", "dynamo_error"]);
    assert!(cat.status.success(), "cat failed: {}", String::from_utf8_lossy(&cat.stderr));
    cat.stdout
}

/// (kind, line, message) of every diagnostic.
fn diagnostics(b: &Bundle<tlparse_bundle::DirSource>) -> Vec<(DiagnosticKind, u64, String)> {
    b.diagnostics().unwrap().into_iter().map(|d| (d.kind, d.line, d.message)).collect()
}

fn row_at(rows: &[IndexRow], line: u64) -> &IndexRow {
    rows.iter().find(|r| r.line == line).unwrap_or_else(|| panic!("no row for line {line}"))
}

#[test]
fn lone_surrogates_are_kept_as_escaped_text_and_need_no_diagnostic() {
    // What Python's json.dumps writes for a file name with the byte 0xE9 (not UTF-8): a lone
    // `\udce9`. Put into the `str` entry of string 1 (line 14, the file of the dynamo_start
    // stack's frames), a trace event's argument (line 27, payload of the entry at line 22) and
    // the metrics' `co_filename` (line 145, metadata written to the index as logged), with a
    // valid pair (an emoji) in `co_name` that must stay one character.
    let log = hostile(&[
        (14, b"test_misc.py", br"test_misc\udce9.py"),
        (27, b"_compile.compile_inner", br"_compile\udce9.compile_inner"),
        (145, b"test_misc.py", br"test_misc\udce9.py"),
        (145, br#""co_name": "fn""#, br#""co_name": "fn\ud83d\ude00""#),
    ]);
    let (_logs, _out_dir, out, b) = build_one(&log);
    assert_eq!(diagnostics(&b), vec![], "lossless, legal input: nothing to report");
    let rows = b.index_rows("log0").unwrap();

    // Checked by hand against the log: the string holds the six characters `\udce9`.
    let file = "/data/users/xmfan/a/pytorch/test/dynamo/test_misc\\udce9.py";
    assert_eq!(row_at(&rows, 14).meta, json!([file, 1]));
    // The string table resolved the stack's file (it became null before).
    let stacks = b.stacks("log0").unwrap();
    let stack = &stacks.stacks[row_at(&rows, 21).meta["stack"].as_u64().unwrap() as usize];
    assert_eq!(stacks.frames[stack[0] as usize].file.as_deref(), Some(file));
    // Metadata kept as logged text reads back (the index failed to parse before).
    let metrics = row_at(&rows, 145);
    assert_eq!(metrics.meta["co_filename"], file);
    assert_eq!(metrics.meta["co_name"], "fn\u{1f600}");
    let directory = b.stream_table::<CompileDirectory>("log0").unwrap().unwrap();
    assert_eq!(directory.compiles[0].co_filename.as_deref(), Some(file));

    // The trace event is read (compile_time times its phase) and the Chrome trace holds the
    // argument as escaped text; the payload blob keeps the bytes as logged.
    let compile_time = b.stream_table::<CompileTime>("log0").unwrap().unwrap();
    let phases: Vec<&str> = compile_time.compiles[0].phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(phases, ["dynamo", "entire_frame_compile", "backend_compile"]);
    let trace = b.chrome_trace("log0").unwrap().unwrap();
    let event = trace["traceEvents"].as_array().unwrap().iter().find(|e| e["name"] == "entire_frame_compile").unwrap();
    assert_eq!(event["args"]["fn_name"], "_compile\\udce9.compile_inner");
    let blob = b.blob(&row_at(&rows, 22).payload.as_ref().unwrap().hash).unwrap();
    assert!(String::from_utf8(blob).unwrap().contains(r#""fn_name": "_compile\udce9.compile_inner""#));

    assert!(cat_dynamo_error(&out).starts_with(b"Traceback (most recent call last):"));
    // A whole multi-rank build failed on the merged trace before (exit 2, no bundle).
    let (_two_dir, two) = build_two_ranks(&log);
    let merged = two.cross_rank_chrome_trace().unwrap().unwrap();
    let args: Vec<&Value> = merged["traceEvents"].as_array().unwrap().iter().map(|e| &e["args"]["fn_name"]).collect();
    assert!(
        args.contains(&&json!("_compile\\udce9.compile_inner")) && args.contains(&&json!("_compile.compile_inner"))
    );
    assert_eq!(strict_exit(&log), Some(0));
}

#[test]
fn times_out_of_range_are_ignored_with_a_diagnostic_and_never_become_null() {
    // The `E` event ending `dynamo` (entry at line 146) at ts 1e308, which made the compile's
    // span infinite (null in compile_time, a panic with two ranks), and the metrics' logged
    // forward time at -1e308.
    let log = hostile(&[
        (149, b"1733527214089673.0", b"1e308"),
        (145, b"\"dynamo_cumulative_compile_time_us\": 157247", b"\"dynamo_cumulative_compile_time_us\": -1e308"),
    ]);
    let (_logs, _out_dir, _out, b) = build_one(&log);
    let diags = diagnostics(&b);
    let summary: Vec<(DiagnosticKind, u64)> = diags.iter().map(|d| (d.0, d.1)).collect();
    assert_eq!(
        summary,
        [(DiagnosticKind::OutOfRange, 145), (DiagnosticKind::OutOfRange, 146), (DiagnosticKind::UnusableEntry, 146)]
    );
    // Reported once, though two tables read the field.
    assert_eq!(
        diags[0].2,
        "compilation_metrics dynamo_cumulative_compile_time_us -1e308 is out of range (not finite, or beyond ±2^53): ignored"
    );
    assert_eq!(diags[1].2, "chromium_event ts 1e308 is out of range (not finite, or beyond ±2^53): ignored");
    assert!(diags[2].2.starts_with("compile_time: chromium_event entry not used: trace event has no name or ts"));

    // Without its end, `dynamo` is open at the end of the log; the compile spans from its begin
    // (line 4) to the end of `entire_frame_compile` (line 76): 1733527214085499.0 -
    // 1733527213926572.8 µs. The forward time is the traced one (157247.75 µs, the
    // entire_frame_compile B at line 25 to its E at line 76), not the logged -1e308.
    let compile_time = b.stream_table::<CompileTime>("log0").unwrap().unwrap();
    let compile = &compile_time.compiles[0];
    assert_eq!(compile.span_us, 158926.25);
    assert_eq!(compile.forward_us, Some(157247.75));
    assert_eq!(compile_time.unmatched.len(), 1);
    assert_eq!(compile_time.unmatched[0].name, "dynamo");
    let directory = b.stream_table::<CompileDirectory>("log0").unwrap().unwrap();
    assert_eq!(directory.compiles[0].duration_s, Some(0.15724775));
    // The metrics row keeps the logged value (it is the log's record), but no time is made of it.
    let metrics = b.stream_table::<CompilationMetrics>("log0").unwrap().unwrap();
    assert_eq!(metrics.metrics[0].metrics["dynamo_cumulative_compile_time_us"], json!(-1e308));

    build_two_ranks(&log);
    assert_eq!(strict_exit(&log), Some(1));
}

#[test]
fn runtime_estimates_and_guard_latency_out_of_range_are_ignored() {
    // Rank 0 of multi_rank_runtime: the first two ops of the first runtime estimates (entry at
    // line 1686) at 1e308, whose sum is infinite (null in runtime_estimates, which would then not
    // validate, were it kept), and the guard tree's latency (entry at line 3057) at `inf`, which Rust parses.
    let rank0 = "tlparse-tests/multi_rank_runtime/dedicated_log_torch_trace_rank_0.log";
    let log = hostile_from(
        rank0,
        &[
            (1692, b"6885841.870239033", b"1e308"),
            (1710, b"2167.1957671957675", b"1e308"),
            (3146, b"Guard latency = 117.18 us", b"Guard latency = inf us"),
        ],
    );
    let (_logs, _out_dir, _out, b) = build_one(&log);
    let stream = &b.manifest.streams[0].id;
    let diags: Vec<(DiagnosticKind, u64, String)> =
        diagnostics(&b).into_iter().filter(|d| d.0 == DiagnosticKind::OutOfRange).collect();
    assert_eq!(
        diags,
        [
            (
                DiagnosticKind::OutOfRange,
                1686,
                "artifact estimated_runtime_ns 1e308 is out of range (not finite, or beyond ±2^53): ignored"
                    .to_string()
            ),
            (
                DiagnosticKind::OutOfRange,
                3057,
                "dynamo_cpp_guards_str Guard latency inf is out of range (not finite, or beyond ±2^53): ignored"
                    .to_string()
            ),
        ]
    );
    // The graph without its estimates is left out (as one missing them would be); the log's
    // three others (lines 5499, 9423 and 13347) stay.
    let estimates = b.stream_table::<RuntimeEstimates>(stream).unwrap().unwrap();
    let lines: Vec<u64> = estimates.graphs.iter().map(|g| g.line).collect();
    assert_eq!(lines, [5499, 9423, 13347]);
    // The tree loses its latency; the next one (there are four) keeps its own.
    let guards = b.stream_table::<Guards>(stream).unwrap().unwrap();
    let latencies: Vec<(u64, Option<f64>)> =
        guards.guard_trees.iter().map(|t| (t.line, t.latency_us)).take(2).collect();
    assert_eq!(latencies[0], (3057, None));
    assert!(latencies[1].1.is_some(), "{latencies:?}");
    build_two_ranks_with(&log, "tlparse-tests/multi_rank_runtime/dedicated_log_torch_trace_rank_1.log");
}

#[test]
fn cache_times_out_of_range_are_ignored() {
    // The time the fx graph cache hit saved (payload line 4282 of the artifact at 4281) and the
    // time its miss took (payload line 2016 of the artifact at 2015), at 1e308 and -1e308.
    let cache = "tlparse-tests/cache_hit_miss.log";
    let log = hostile_from(
        cache,
        &[
            (4282, b"\"time_saved_ns\": 4009141776", b"\"time_saved_ns\": 1e308"),
            (2016, b"\"time_taken_ns\": 4009141776", b"\"time_taken_ns\": -1e308"),
        ],
    );
    let (_logs, _out_dir, _out, b) = build_one(&log);
    let summary: Vec<(DiagnosticKind, u64)> = diagnostics(&b).iter().map(|d| (d.0, d.1)).collect();
    assert_eq!(summary, [(DiagnosticKind::OutOfRange, 2015), (DiagnosticKind::OutOfRange, 4281)]);
    let outcomes = b.stream_table::<CacheOutcomes>("log0").unwrap().unwrap();
    let lookups: Vec<_> = outcomes.compiles.iter().flat_map(|c| &c.lookups).collect();
    let hit = lookups.iter().find(|l| l.name == "fx_graph_cache_hit").unwrap();
    let miss = lookups.iter().find(|l| l.name == "fx_graph_cache_miss").unwrap();
    assert_eq!((hit.time_saved_ms, miss.time_taken_ms), (None, None));
    build_two_ranks_with(&log, cache);
}

#[test]
fn every_number_replaced_by_a_hostile_one_still_builds_valid_bundles() {
    // Found by fuzzing: any number of the metrics or of a trace event may be huge, tiny or not a
    // float at all. Every number after a `: ` in every line, in turn: ±1e308, a subnormal (which
    // made a ratio infinite), 2^64 - 1, 1e400 (beyond a float) and a plain 0; then one rank and
    // two ranks must build and validate, each header still an entry.
    let hostile_numbers: [&[u8]; 6] = [b"1e308", b"-1e308", b"5e-324", b"18446744073709551615", b"1e400", b"0"];
    let log = std::fs::read(fixture(FIXTURE)).unwrap();
    let mut lines: Vec<Vec<u8>> = log.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let mut n = 0;
    for line in &mut lines {
        *line = replace_numbers(line, &mut || {
            n += 1;
            hostile_numbers[n % hostile_numbers.len()]
        });
    }
    for i in 0..lines.len() {
        if lines[i].starts_with(b"\t") && !lines.get(i + 1).is_some_and(|l| l.starts_with(b"\t")) {
            fix_md5(&mut lines, i);
        }
    }
    let log = lines.join(&b'\n');
    assert!(n >= 60, "{n} numbers replaced");
    let (_logs, _out_dir, _out, b) = build_one(&log);
    assert_eq!(b.manifest.counts.entries, 21, "every header is still an entry");
    let diags = diagnostics(&b);
    assert!(diags.iter().any(|d| d.0 == DiagnosticKind::OutOfRange), "{diags:#?}");
    assert!(!diags.iter().any(|d| d.0 == DiagnosticKind::BadJson), "{diags:#?}");
    build_two_ranks(&log);
}

/// `line` with each JSON number that follows `": "` replaced by `next()`; the ids of the
/// envelope are left alone (they are not times).
fn replace_numbers(line: &[u8], next: &mut dyn FnMut() -> &'static [u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let after_key = line[..i].ends_with(b"\": ");
        let is_id = [&b"frame_id\": "[..], b"frame_compile_id\": ", b"attempt\": ", b"pid\": ", b"tid\": "]
            .iter()
            .any(|k| line[..i].ends_with(k));
        let len = line[i..].iter().take_while(|b| b.is_ascii_digit() || b"-+.eE".contains(b)).count();
        if after_key && !is_id && len > 0 && (line[i].is_ascii_digit() || line[i] == b'-') {
            out.extend_from_slice(next());
            i += len;
        } else {
            out.push(line[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn metadata_nested_too_deep_is_kept_as_text_and_the_rest_is_read() {
    // 200 levels of nesting: in the `str` entry of string 1 (line 14), the artifact's metadata
    // (line 86, whose name was lost), two context values of line 35 (one the envelope `stack`)
    // and an argument of the trace event at line 146 (its payload). 120 levels in the metrics
    // (line 145): serde_json reads 127, but the metrics table, four levels deeper, could then not
    // be read (its index row, written as logged, could not be from 127 on).
    let nested = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels)).into_bytes();
    let (deep, deep_120) = (&nested(200)[..], &nested(120)[..]);
    let log = hostile(&[
        (14, b"1]}", &[b"1, ", deep, b"]}"].concat()),
        (86, br#""encoding": "string"}"#, &[br#""encoding": "string", "x": "#, deep, b"}"].concat()),
        (145, br#""frame_key": "1""#, &[br#""frame_key": "#, deep_120].concat()),
        (35, br#""attempt": 0}"#, &[br#""attempt": 0, "deep": "#, deep, br#", "stack": "#, deep, b"}"].concat()),
        (167, b"[]", deep),
    ]);
    let (_logs, _out_dir, out, b) = build_one(&log);
    let diags = diagnostics(&b);
    let summary: Vec<(DiagnosticKind, u64)> = diags.iter().map(|d| (d.0, d.1)).collect();
    use DiagnosticKind::{TooDeep, UnresolvedString, UnusableEntry};
    assert_eq!(
        summary,
        [
            (TooDeep, 14),
            // String 1 was never defined: the stack of line 21 has no file for its frames.
            (UnresolvedString, 21),
            (TooDeep, 35),
            (TooDeep, 35),
            (TooDeep, 86),
            (TooDeep, 145),
            (TooDeep, 146),
            (UnusableEntry, 146),
        ],
        "{diags:#?}"
    );
    assert!(diags[0].2.starts_with("metadata is nested deeper than 100 levels"), "{}", diags[0].2);
    assert!(diags[2].2.starts_with("context value \"deep\" is nested deeper"), "{}", diags[2].2);
    assert!(diags[6].2.ends_with("left out of the Chrome trace (its blob keeps it)"), "{}", diags[6].2);

    let rows = b.index_rows("log0").unwrap();
    let logged_meta = |line: usize, kind: &str| -> String {
        let header = String::from_utf8_lossy(log.split(|&b| b == b'\n').nth(line - 1).unwrap()).into_owned();
        let start = header.find(&format!("{{\"{kind}\": ")).unwrap() + kind.len() + 5;
        let end = header.find(", \"compiled_autograd_id\"").unwrap_or(header.len() - 1);
        header[start..end].to_string()
    };
    // The metadata's text, exactly as logged, and a null `meta`; the artifact keeps its name.
    let artifact = row_at(&rows, 86);
    assert_eq!((artifact.name.as_deref(), &artifact.meta), (Some("dynamo_error"), &Value::Null));
    assert_eq!(artifact.meta_text.as_deref(), Some(logged_meta(86, "artifact").as_str()));
    assert_eq!(row_at(&rows, 145).meta_text.as_deref(), Some(logged_meta(145, "compilation_metrics").as_str()));
    assert_eq!(row_at(&rows, 14).meta_text.as_deref(), Some(logged_meta(14, "str").as_str()));
    // Context values become strings of their text; the stack stays with them.
    let extra = row_at(&rows, 35).extra.clone().unwrap();
    let deep_text = std::str::from_utf8(deep).unwrap();
    assert_eq!((extra["deep"].as_str(), extra["stack"].as_str()), (Some(deep_text), Some(deep_text)));

    // The rest of the deep entries is analysed: the compile has its metrics and its artifact.
    let directory = b.stream_table::<CompileDirectory>("log0").unwrap().unwrap();
    let compile = &directory.compiles[0];
    assert_eq!(compile.fail_type.as_deref(), Some("BackendCompilerFailed"));
    assert!(directory.artifacts_of(compile).iter().any(|a| a.artifact.name == "dynamo_error"));
    let metrics = b.stream_table::<CompilationMetrics>("log0").unwrap().unwrap();
    assert_eq!(metrics.metrics[0].metrics["frame_key"], std::str::from_utf8(deep_120).unwrap());
    assert!(cat_dynamo_error(&out).starts_with(b"Traceback (most recent call last):"));
    // The deep trace event is left out of the Chrome trace, which reads back, merged too.
    let trace = b.chrome_trace("log0").unwrap().unwrap();
    assert_eq!(trace["traceEvents"].as_array().unwrap().len(), 5);
    build_two_ranks(&log);
    assert_eq!(strict_exit(&log), Some(1));
}

#[test]
fn numbers_beyond_a_float_keep_their_metadata_as_text() {
    // 1e400 parses as no 64-bit float (serde_json refuses it; a raw value does not check): in
    // the metrics (line 145) and in a context value (line 35).
    let log = hostile(&[
        (
            145,
            br#""aot_autograd_cumulative_compile_time_us": 478"#,
            br#""aot_autograd_cumulative_compile_time_us": 1e400"#,
        ),
        (35, br#""attempt": 0}"#, br#""attempt": 0, "big": 1e400}"#),
    ]);
    let (_logs, _out_dir, _out, b) = build_one(&log);
    let summary: Vec<(DiagnosticKind, u64)> = diagnostics(&b).iter().map(|d| (d.0, d.1)).collect();
    assert_eq!(summary, [(DiagnosticKind::OutOfRange, 35), (DiagnosticKind::OutOfRange, 145)]);
    let rows = b.index_rows("log0").unwrap();
    assert_eq!(row_at(&rows, 35).extra.as_ref().unwrap()["big"], "1e400");
    let metrics = row_at(&rows, 145);
    assert_eq!(metrics.meta, Value::Null);
    assert!(metrics.meta_text.as_deref().unwrap().contains(r#""aot_autograd_cumulative_compile_time_us": 1e400"#));
    // The other metrics are still read.
    let directory = b.stream_table::<CompileDirectory>("log0").unwrap().unwrap();
    assert_eq!(directory.compiles[0].duration_s, Some(0.157247));
    build_two_ranks(&log);
    assert_eq!(strict_exit(&log), Some(1));
}

#[test]
fn a_header_line_that_is_not_utf8_keeps_its_raw_bytes() {
    // The byte 0xE9 (Latin-1 é) in the file name of the `str` entry at line 13.
    let log = hostile(&[(13, b"convert_frame.py", b"convert_frame\xe9.py")]);
    let (_logs, _out_dir, _out, b) = build_one(&log);
    let diags = b.diagnostics().unwrap();
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!((diags[0].kind, diags[0].line, diags[0].end_line), (DiagnosticKind::InvalidUtf8, 13, 13));
    // The blob is the line's bytes as logged (with its line ending), checked against the input.
    let line13 = log.split(|&b| b == b'\n').nth(12).unwrap();
    assert_eq!(b.blob(diags[0].raw.as_ref().unwrap()).unwrap(), [line13, b"\n"].concat());
    // The index holds the line read with U+FFFD, as before.
    let rows = b.index_rows("log0").unwrap();
    assert_eq!(row_at(&rows, 13).meta[0], "/data/users/xmfan/a/pytorch/torch/_dynamo/convert_frame\u{fffd}.py");
    build_two_ranks(&log);
    assert_eq!(strict_exit(&log), Some(1));
}

#[test]
fn a_trace_event_payload_that_is_not_utf8_keeps_the_merged_trace_readable() {
    // Found by the fuzzer: a byte 0xED in a chromium_event payload's "cat" (md5 recomputed, as
    // torch would log such bytes), copied as is into the stream's Chrome trace, would make it
    // other than UTF-8 JSON, and reading it back for the merged trace fail ("invalid unicode code
    // point", exit 2). Line 9 of chromium_events.log is its first `"cat": "dynamo_timed",`
    // (checked by hand). The trace gets U+FFFD; the blob keeps the byte.
    let log = hostile(&[(9, b"dynamo_timed", b"dyna\xedo_timed")]);
    let (_dir, bundle) = build_two_ranks(&log);
    let trace = bundle.chrome_trace("rank0").unwrap().expect("rank 0 has a trace");
    assert!(trace.to_string().contains("dyna\u{fffd}o_timed"), "{trace}");
    assert_eq!(strict_exit(&log), Some(0), "bytes as logged are not damage");
}

#[test]
fn an_empty_payload_beside_another_in_one_pack_validates() {
    // Found by the fuzzer: an entry declaring the md5 of no bytes (d41d8...) and no payload
    // line, then an entry with the payload `x`: the empty blob and `x` both sit at offset 0 of
    // the pack, and `validate` called the empty one "overlaps the blob before it" (the other
    // order passed). An empty blob holds none of the pack.
    let log = b"V0101 00:00:00.000000 1 a.py:1] {\"a\": {}, \"has_payload\": \"d41d8cd98f00b204e9800998ecf8427e\"}\n\
V0101 00:00:00.000000 1 a.py:2] {\"b\": {}, \"has_payload\": \"9dd4e461268c8034f5c8564e155c67a6\"}\n\tx\n";
    let (_logs, _out_dir, _out, bundle) = build_one(log);
    assert_eq!(bundle.manifest.counts.unique_blobs, 2);
    assert_eq!(strict_exit(log), Some(0));
}

#[test]
fn a_failure_logged_without_a_compile_id_is_shown_as_documented_and_validates() {
    // Found while fuzzing: the compilation_metrics entry of comp_failure.log (line 145, with
    // fail_type BackendCompilerFailed) with its compile id removed. The failures table shows
    // such a row as `[-/-]` (docs/tables/failures.md), which `validate` refused as "a compile id
    // no index row carries".
    let log = hostile_from(
        "tlparse-tests/comp_failure.log",
        &[(145, b", \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}", b"}")],
    );
    let (_logs, _out_dir, _out, bundle) = build_one(&log);
    let failures = bundle.stream_table::<tlparse_build::schema::tables::Failures>("log0").unwrap().unwrap();
    let ids: Vec<&str> = failures.failures.iter().map(|f| f.compile_id.as_str()).collect();
    assert!(ids.contains(&"[-/-]"), "{ids:?}");
}

#[test]
fn entries_of_a_compile_logged_without_attempt_are_one_compile_and_validate() {
    // Found by the 30-minute fuzz run: torch logs some entries of a compile without `attempt`
    // (compilation_metrics_runtime, in multi_rank_runtime); when no entry of the compile carries
    // it, compile_directory's `cid` says attempt 0 (both display as [0/0]) and `validate` found
    // no index row with those parts. Here every `"attempt": 0` of comp_metrics.log's compile
    // [0/0] is removed (checked by hand: one header line carries it, the others of [0/0] carry none).
    let log = std::fs::read_to_string(fixture("tlparse-tests/comp_metrics.log")).unwrap().replace(
        "\"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0",
        "\"frame_id\": 0, \"frame_compile_id\": 0",
    );
    let (_logs, _out_dir, _out, bundle) = build_one(log.as_bytes());
    let directory = bundle.stream_table::<tlparse_build::schema::tables::CompileDirectory>("log0").unwrap().unwrap();
    assert!(directory.compiles.iter().any(|c| c.compile_id == "[0/0]"));
}
