//! Building bundles from the real fixtures: every one validates, outputs are deterministic,
//! nothing in a log is lost, bad lines become diagnostics.

use std::collections::BTreeSet;

use tlparse_build::bundle::reader::Bundle;
use tlparse_build::schema::{DiagnosticKind, IndexRow};

use crate::util::{self, all_traces, build, fixture, payloads_of};

/// One build of each fixture, checked three ways: it validates, it keeps every payload byte and
/// entry of its logs, and the findings its closing lines print are what its tables say.
#[test]
fn every_fixture_builds_validates_keeps_every_payload_byte_and_finds_what_its_tables_say() {
    let traces = all_traces();
    assert!(traces.len() >= 30, "fixtures-repo lists {} traces", traces.len());
    let mut seen = [0usize; 4];
    for trace in traces {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("bundle");
        let (manifest, findings) = tlparse_build::bundle::build_with_findings(&util::build_options(&trace, &out))
            .unwrap_or_else(|e| panic!("building {trace}: {e}"));
        util::assert_valid(&out);
        crate::cli::assert_findings_are_what_the_tables_say(&trace, &out, &manifest, &findings, &mut seen);
        // Input paths are relative to the trace: below the directory, or the file's name.
        let on_disk = |path: &str| if trace.is_dir() { trace.join(path) } else { trace.clone() };
        if trace.is_file() {
            assert_eq!(manifest.inputs[0].path, trace.file_name().unwrap(), "{trace}");
        }
        // The payload bytes the bundle references equal those in the logs, computed plainly.
        let logged: u64 = manifest
            .inputs
            .iter()
            .map(|i| {
                payloads_of(&std::fs::read(on_disk(&i.path)).unwrap()).iter().map(|(_, p)| p.len() as u64).sum::<u64>()
            })
            .sum();
        assert_eq!(manifest.counts.payload_bytes, logged, "{trace}: payload bytes");
        // One index row per header line: every entry is kept.
        let headers: u64 = manifest
            .inputs
            .iter()
            .map(|i| {
                let text = std::fs::read(on_disk(&i.path)).unwrap();
                text.split(|&b| b == b'\n')
                    .filter(|l| l.len() > 6 && !l.starts_with(b"\t") && l[1..5].iter().all(u8::is_ascii_digit))
                    .count() as u64
            })
            .sum();
        let bad_json = manifest.diagnostics.by_kind.get("bad_json").copied().unwrap_or(0);
        assert_eq!(manifest.counts.entries + bad_json, headers, "{trace}: entries");
        let b = Bundle::open(&out).unwrap();
        assert_eq!(b.manifest, manifest);
    }
    // Each kind of finding was compared on some stream (the counts are of streams with the table).
    assert!(seen.iter().all(|&n| n >= 3), "streams with each table: {seen:?}");
}

/// The distinct compile ids a log's entries name, as they spell them, counted plainly from its
/// header lines: `[0/0]` and an attempt-less `[0/0]` are two (the bundle files them under one).
fn raw_compile_ids(log: &[u8]) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for line in log.split(|&b| b == b'\n').filter(|l| !l.starts_with(b"\t")) {
        let Some(at) = line.windows(2).position(|w| w == b"] ") else { continue };
        let Ok(envelope) = serde_json::from_slice::<serde_json::Value>(&line[at + 2..]) else { continue };
        let field = |k: &str| envelope.get(k).map(|v| v.to_string());
        let parts = ["compiled_autograd_id", "frame_id", "frame_compile_id"].map(field);
        if parts.iter().any(Option::is_some) {
            ids.insert(format!("{parts:?} {:?}", field("attempt")));
        }
    }
    ids
}

#[test]
fn each_stream_counts_the_compile_ids_its_log_spells() {
    // autotune_with_compile_id.log names [0/0] both with `attempt: 0` and without an attempt
    // (checked by hand: its autotuning entries carry no attempt), and multi_rank_runtime does so
    // for several compiles on each rank: each spelling counts once.
    for rel in
        ["tlparse-tests/autotune_with_compile_id.log", "tlparse-tests/multi_rank_runtime", "torch-2.15/recompiles"]
    {
        let trace = fixture(rel);
        let (_dir, _out, manifest) = build(&trace);
        for stream in &manifest.streams {
            let input = &manifest.inputs[stream.input].path;
            let log = if trace.is_dir() { trace.join(input) } else { trace.clone() };
            let expected = raw_compile_ids(&std::fs::read(&log).unwrap()).len() as u64;
            assert!(expected > 0, "{log}");
            assert_eq!(stream.compile_ids, expected, "{log}");
        }
    }
}

#[test]
fn the_same_input_gives_a_byte_identical_bundle() {
    for rel in ["tlparse-tests/multi_rank_runtime", "torch-2.15/graph_breaks/dedicated_log_torch_trace_vyoaitj6.log"] {
        let input = fixture(rel);
        let (_a, out_a, _) = build(&input);
        let (_b, out_b, _) = build(&input);
        let (a, b) = (util::read_tree(&out_a), util::read_tree(&out_b));
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{rel}: file lists differ");
        for (path, bytes) in &a {
            assert!(bytes == &b[path], "{rel}: {path} differs between two builds");
        }
    }
}

#[test]
fn corrupted_json_yields_exactly_its_bad_line_and_keeps_everything_else() {
    // simple_corrupted_json.log is simple.log with `},` deleted from one chromium_event payload:
    // find that entry by comparing the two files line by line.
    let good_log = std::fs::read_to_string(fixture("tlparse-tests/simple.log")).unwrap();
    let bad_log = std::fs::read_to_string(fixture("tlparse-tests/simple_corrupted_json.log")).unwrap();
    let first_diff = good_log.lines().zip(bad_log.lines()).position(|(a, b)| a != b).unwrap() as u64 + 1;
    let header_of_diff =
        bad_log.lines().take(first_diff as usize).enumerate().filter(|(_, l)| !l.starts_with('\t')).last().unwrap().0
            as u64
            + 1;

    let (_g, good_out, good) = build(&fixture("tlparse-tests/simple.log"));
    let (_b, bad_out, bad) = build(&fixture("tlparse-tests/simple_corrupted_json.log"));
    let diags = Bundle::open(&bad_out).unwrap().diagnostics().unwrap();
    // The md5 check flags the entry, and compile_time, which needs the trace event, says it
    // could not use it (tlparse dropped such events silently).
    assert_eq!(diags.len(), 2, "{diags:#?}");
    assert_eq!((diags[0].kind, diags[0].line), (DiagnosticKind::Md5Mismatch, header_of_diff));
    assert_eq!((diags[1].kind, diags[1].line), (DiagnosticKind::UnusableEntry, header_of_diff));
    assert!(diags[1].message.starts_with("compile_time:"), "{}", diags[1].message);
    assert!(diags.iter().all(|d| d.file.ends_with("simple_corrupted_json.log")));
    assert_eq!(good.diagnostics.total, 0);

    // Every entry is still there, and all but the corrupted one are identical to simple.log's.
    let rows = |out: &std::path::Path, id: &str| Bundle::open(out).unwrap().index_rows(id).unwrap();
    let (good_rows, bad_rows): (Vec<IndexRow>, Vec<IndexRow>) = (rows(&good_out, "log0"), rows(&bad_out, "log0"));
    assert_eq!(good_rows.len(), bad_rows.len());
    let differing: Vec<u64> = good_rows
        .iter()
        .zip(&bad_rows)
        .filter(|(g, b)| {
            // Lines after the deleted one shift by one; compare everything else.
            let strip = |r: &IndexRow| IndexRow { line: 0, ..r.clone() };
            strip(g) != strip(b)
        })
        .map(|(_, b)| b.line)
        .collect();
    assert_eq!(differing, vec![header_of_diff]);
    let corrupted = bad_rows.iter().find(|r| r.line == header_of_diff).unwrap();
    let payload = corrupted.payload.as_ref().unwrap();
    assert!(payload.md5_mismatch);
    assert_eq!(payload.format, tlparse_build::schema::PayloadFormat::Text, "broken JSON is kept as text");
    assert_eq!(bad.counts.entries, good.counts.entries);
}

#[test]
fn stray_lines_become_diagnostics_with_their_raw_text() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("messy.log");
    let simple = std::fs::read_to_string(fixture("tlparse-tests/comp_metrics.log")).unwrap();
    let mut lines: Vec<&str> = simple.lines().collect();
    lines.insert(3, "Epoch 1: loss=0.25 <print from user code>");
    lines.insert(4, "\tan orphan payload line");
    lines.insert(9, "V0101 00:00:00.000000 7 a.py:1] {not json");
    std::fs::write(&log, lines.join("\n")).unwrap();
    let input = camino::Utf8PathBuf::from_path_buf(log).unwrap();
    let (_d, out, manifest) = build(&input);
    let b = Bundle::open(&out).unwrap();
    let diags = b.diagnostics().unwrap();
    let summary: Vec<(DiagnosticKind, u64, u64)> = diags.iter().map(|d| (d.kind, d.line, d.end_line)).collect();
    assert_eq!(summary, vec![(DiagnosticKind::BadPrefix, 4, 5), (DiagnosticKind::BadJson, 10, 10)]);
    assert_eq!(
        b.blob(diags[0].raw.as_ref().unwrap()).unwrap(),
        b"Epoch 1: loss=0.25 <print from user code>\n\tan orphan payload line\n"
    );
    assert_eq!(b.blob(diags[1].raw.as_ref().unwrap()).unwrap(), b"V0101 00:00:00.000000 7 a.py:1] {not json\n");
    assert!(diags[1].message.contains("not valid JSON"), "{}", diags[1].message);
    assert_eq!(manifest.diagnostics.by_kind.values().sum::<u64>(), 2);
}

#[test]
fn compressed_logs_are_read_transparently() {
    let plain = fixture("tlparse-tests/comp_metrics.log");
    let bytes = std::fs::read(&plain).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("comp_metrics.log.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, &bytes).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let zst = dir.path().join("comp_metrics.log.zst");
    std::fs::write(&zst, zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();

    let (_p, plain_out, plain_m) = build(&plain);
    let plain_rows = Bundle::open(&plain_out).unwrap().index_rows("log0").unwrap();
    for (path, kind) in [(gz, "gzip"), (zst, "zstd")] {
        let (_d, out, m) = build(&camino::Utf8PathBuf::from_path_buf(path).unwrap());
        assert_eq!(serde_json::to_value(m.inputs[0].compression).unwrap(), kind);
        assert_eq!(m.counts.input_bytes, bytes.len() as u64);
        assert_eq!(Bundle::open(&out).unwrap().index_rows("log0").unwrap(), plain_rows);
        assert_eq!(m.blobs, plain_m.blobs);
    }
}

#[test]
fn interleaved_processes_are_demultiplexed_with_their_own_string_tables() {
    // Two real logs interleaved entry by entry into one file, as a captured stderr would be.
    let a = std::fs::read_to_string(fixture("tlparse-tests/comp_metrics.log")).unwrap();
    let b = std::fs::read_to_string(fixture("torch-2.15/simple/dedicated_log_torch_trace_oqrpb3uu.log")).unwrap();
    let entries = |s: &str| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for line in s.lines() {
            if line.starts_with('\t') {
                out.last_mut().unwrap().push_str(&format!("\n{line}"));
            } else {
                out.push(line.to_string());
            }
        }
        out
    };
    let (ea, eb) = (entries(&a), entries(&b));
    let mut mixed = Vec::new();
    let (mut ia, mut ib) = (ea.iter(), eb.iter());
    loop {
        match (ia.next(), ib.next(), ib.next()) {
            (None, None, _) => break,
            (x, y, z) => mixed.extend([x, y, z].into_iter().flatten().cloned()),
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.log");
    std::fs::write(&path, mixed.join("\n")).unwrap();
    let (_d, out, m) = build(&camino::Utf8PathBuf::from_path_buf(path).unwrap());
    let (_da, out_a, _) = build(&fixture("tlparse-tests/comp_metrics.log"));
    let (_db, out_b, _) = build(&fixture("torch-2.15/simple/dedicated_log_torch_trace_oqrpb3uu.log"));
    assert_eq!(m.streams.len(), 2);
    assert_eq!(m.diagnostics.total, 0);
    let mixed_bundle = Bundle::open(&out).unwrap();
    for (single, stream) in [(&out_a, &m.streams[0]), (&out_b, &m.streams[1])] {
        let single = Bundle::open(single).unwrap();
        let strip = |rows: Vec<IndexRow>| rows.into_iter().map(|r| IndexRow { line: 0, ..r }).collect::<Vec<_>>();
        assert_eq!(strip(mixed_bundle.index_rows(&stream.id).unwrap()), strip(single.index_rows("log0").unwrap()));
        assert_eq!(mixed_bundle.stacks(&stream.id).unwrap(), single.stacks("log0").unwrap());
    }
}

#[test]
fn stacks_are_interned_and_resolved_through_the_process_string_table() {
    let (_d, out, _) = build(&fixture("torch-2.15/graph_breaks/dedicated_log_torch_trace_vyoaitj6.log"));
    let b = Bundle::open(&out).unwrap();
    let rows = b.index_rows("log0").unwrap();
    let table = b.stacks("log0").unwrap();
    let starts: Vec<&IndexRow> = rows.iter().filter(|r| r.kind == "dynamo_start").collect();
    assert!(starts.len() >= 16, "graph_breaks compiles 16 frames, got {}", starts.len());
    for r in &starts {
        let id = r.meta["stack"].as_u64().expect("stack replaced by its id") as usize;
        let frames = &table.stacks[id];
        assert!(!frames.is_empty());
        let innermost = &table.frames[*frames.last().unwrap() as usize];
        assert_eq!(innermost.file.as_deref(), Some("/home/user/scenarios/graph_breaks.py"), "{r:?}");
    }
    let distinct: BTreeSet<&Vec<u32>> = table.stacks.iter().collect();
    assert_eq!(distinct.len(), table.stacks.len(), "stacks are stored once");
}

/// A log still being written while the build reads it: its manifest `size` must be the bytes its
/// `blake3` covers (what was read), not its size when it was found.
#[test]
fn a_log_that_grew_while_read_has_the_size_its_hash_covers() {
    use tlparse_build::bundle::{file, inputs};
    let dir = tempfile::tempdir().unwrap();
    let log = camino::Utf8PathBuf::from_path_buf(dir.path().join("growing.log")).unwrap();
    let first = std::fs::read(fixture("tlparse-tests/simple.log")).unwrap();
    std::fs::write(&log, &first).unwrap();
    let found = inputs::discover(&log, false, &log.with_file_name("out")).unwrap();
    // The run goes on logging after the build found the file.
    let grown = first.repeat(2);
    std::fs::write(&log, &grown).unwrap();
    let work = tempfile::tempdir().unwrap();
    let progress = indicatif::ProgressBar::hidden();
    let max_line = tlparse_build::bundle::DEFAULT_MAX_LINE;
    let result = file::process_file(0, &found.inputs[0], work.path(), &progress, max_line).unwrap();
    assert_eq!(found.inputs[0].size, first.len() as u64, "the size when found");
    assert_eq!(result.raw_bytes, grown.len() as u64);
    assert_eq!(&result.blake3, blake3::hash(&grown).as_bytes());
}
