//! Finding the logs of a trace directory that real jobs and hostile users leave: banners before
//! the first header, truncated and corrupt compressed ranks, `--long=31` zstd, the output inside
//! the trace directory, symlinks, FIFOs, unreadable directories, and files that must not leak.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Output;

use tlparse_build::bundle::inputs::DECODE_STEP;
use tlparse_build::bundle::reader::Bundle;
use tlparse_build::schema::{DiagnosticKind, Manifest, Skipped};

use crate::util::{assert_valid, fixture, read_tree, run};

/// A small real rank log (178 lines) and a bigger one (7,193 lines, 860 KB).
const SMALL_RANK: &str = "tlparse-tests/multi_rank_logs/dedicated_log_torch_trace_rank_0.log";
const OTHER_SMALL_RANK: &str = "tlparse-tests/multi_rank_logs/dedicated_log_torch_trace_rank_2.log";
const BIG_RANK: &str = "tlparse-tests/multi_rank_runtime/dedicated_log_torch_trace_rank_5.log";

fn rank_name(rank: u32) -> String {
    format!("dedicated_log_torch_trace_rank_{rank}.log")
}

/// Runs `tlparse-build TRACE -o OUT ARGS`, checks the exit code, validates the bundle and
/// returns its manifest and the command's output.
fn build_cli(trace: &Path, out: &Path, args: &[&str], code: i32) -> (Manifest, Output) {
    let mut all = vec![trace.to_str().unwrap(), "-o", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = run(&all);
    assert_eq!(o.status.code(), Some(code), "{all:?}: {}", String::from_utf8_lossy(&o.stderr));
    assert_valid(out);
    (Bundle::open(out).unwrap().manifest, o)
}

fn skipped(reason: &str, count: u64, paths: &[&str]) -> Skipped {
    Skipped { reason: reason.into(), count, paths: paths.iter().map(|p| p.to_string()).collect() }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn zstd_with_checksum(bytes: &[u8]) -> Vec<u8> {
    let mut e = zstd::Encoder::new(Vec::new(), 3).unwrap();
    e.include_checksum(true).unwrap();
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// What a decoder gives before its first error (the error must come), read the plain way, in
/// small reads so that little is dropped with the failing one.
fn decoded_prefix(mut decoder: impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 16];
    loop {
        match decoder.read(&mut buf) {
            Ok(0) => panic!("the damaged stream decoded without an error"),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => return out,
        }
    }
}

/// Header lines in a text, counted as tests/it/build.rs does.
fn header_lines(text: &[u8]) -> u64 {
    text.split(|&b| b == b'\n')
        .filter(|l| l.len() > 6 && !l.starts_with(b"\t") && l[1..5].iter().all(u8::is_ascii_digit))
        .count() as u64
}

/// The first `n` lines of a text.
fn first_lines(text: &[u8], n: u64) -> &[u8] {
    let end =
        text.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(n as usize - 1).map_or(text.len(), |(i, _)| i + 1);
    &text[..end]
}

fn lines_of(text: &[u8]) -> u64 {
    let newlines = text.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(!text.is_empty() && !text.ends_with(b"\n"))
}

#[test]
fn a_rank_log_behind_a_banner_is_built_and_its_banner_lines_are_diagnostics() {
    // A launcher wrote an NCCL banner and a progress bar into rank 1's log before torch's first
    // header. Such a rank must not be skipped as "not a trace log" with the build exiting 0
    // under --strict (checked by hand).
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    std::fs::create_dir(&trace).unwrap();
    std::fs::copy(fixture(SMALL_RANK), trace.join(rank_name(0))).unwrap();
    let banner = "NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\nNCCL INFO NET/Plugin: No plugin found (libnccl-net.so)\nLoading checkpoint shards: 100%|██████████| 2/2 [00:01<00:00,  1.50it/s]\n";
    let mut log = banner.as_bytes().to_vec();
    log.extend(std::fs::read(fixture(OTHER_SMALL_RANK)).unwrap());
    std::fs::write(trace.join(rank_name(1)), &log).unwrap();

    let out = dir.path().join("b");
    let (m, o) = build_cli(&trace, &out, &["--strict"], 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--strict: the logs had 1 problem(s)"));
    let ids: Vec<&str> = m.streams.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["rank0", "rank1"]);
    assert_eq!(m.skipped, []);
    // rank 2's log has 178 lines; with the banner, 181, every one read.
    assert_eq!(m.inputs[1].lines, 181);
    let b = Bundle::open(&out).unwrap();
    let diags = b.diagnostics().unwrap();
    assert_eq!(diags.len(), 1);
    let d = &diags[0];
    assert_eq!(
        (d.kind, d.file.as_str(), d.line, d.end_line),
        (DiagnosticKind::BadPrefix, "dedicated_log_torch_trace_rank_1.log", 1, 3)
    );
    assert_eq!(b.blob(d.raw.as_ref().unwrap()).unwrap(), banner.as_bytes());
    // The rank's entries all follow: the first index row is the log's first header, line 4.
    assert_eq!(b.index_rows("rank1").unwrap()[0].line, 4);
}

#[test]
fn truncated_and_corrupt_compressed_ranks_keep_what_decompressed() {
    // What a killed job leaves: a .gz and a .zst cut in half, and each with bytes overwritten
    // in the middle, next to an intact rank. Each damaged rank is built from what decompressed
    // before the error (the prefix computed below with the plain decoders: all of it for a cut
    // file; for a corrupt one, all but what the decoder dropped in its failing read, at most
    // DECODE_STEP bytes), with one truncated_input diagnostic at its last line read; the build
    // exits 0, and 1 under --strict. Checked by hand, with the same damage done to files made by
    // Python's gzip and the zstd CLI: the build must not stop at the cut .zst ("incomplete
    // frame", exit 2); the cut .gz keeps 3,623 of the 7,193 lines, the cut .zst 1,157, and the
    // corrupt .gz decodes garbage (bad_prefix and bad_json diagnostics, raw
    // text kept) until its checksum fails.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    std::fs::create_dir(&trace).unwrap();
    let text = std::fs::read(fixture(BIG_RANK)).unwrap();
    std::fs::copy(fixture(SMALL_RANK), trace.join(rank_name(0))).unwrap();
    let (gz, zst) = (gzip(&text), zstd_with_checksum(&text));
    let corrupt = |mut bytes: Vec<u8>| {
        let mid = bytes.len() / 2;
        bytes[mid..mid + 16].fill(0x55);
        bytes
    };
    let damaged: [(u32, &str, Vec<u8>); 4] = [
        (1, "gz", gz[..gz.len() / 2].to_vec()),
        (2, "zst", zst[..zst.len() / 2].to_vec()),
        (3, "gz", corrupt(gz.clone())),
        (4, "zst", corrupt(zst.clone())),
    ];
    let mut prefixes = Vec::new();
    for (rank, ext, bytes) in &damaged {
        std::fs::write(trace.join(format!("{}.{ext}", rank_name(*rank))), bytes).unwrap();
        let prefix = match *ext {
            "gz" => decoded_prefix(flate2::read::MultiGzDecoder::new(&bytes[..])),
            _ => decoded_prefix(zstd::Decoder::new(&bytes[..]).unwrap()),
        };
        // A cut stream decodes to less than the log; a corrupt one may decode garbage of any
        // length before its checksum fails (zlib-rs: 52 bytes more than the log).
        let cut = *rank <= 2;
        assert!(
            prefix.len() > 1000 && (!cut || prefix.len() < text.len()),
            "rank {rank}: {} bytes decoded",
            prefix.len()
        );
        assert!(text.starts_with(&prefix) || *rank >= 3, "a cut stream decodes to a prefix of the log");
        prefixes.push(prefix);
    }

    let out = dir.path().join("b");
    let (m, _) = build_cli(&trace, &out, &[], 0);
    build_cli(&trace, &dir.path().join("strict"), &["--strict"], 1);
    // Every rank is built, one stream each (the big log's entries say rank 1, whatever its
    // copies are named, so their streams are rank1-0 to rank1-3).
    assert_eq!(m.inputs.len(), 5);
    assert!(m.inputs.iter().all(|i| i.streams.len() == 1));
    let b = Bundle::open(&out).unwrap();
    let diags = b.diagnostics().unwrap();
    for (((rank, ext, bytes), prefix), input) in damaged.iter().zip(&prefixes).zip(&m.inputs[1..]) {
        let name = format!("{}.{ext}", rank_name(*rank));
        assert_eq!(input.path, name);
        // Every line that decompressed is read, the partial last one too.
        if *rank <= 2 {
            assert_eq!(input.lines, lines_of(prefix), "{name}");
        } else {
            let dropped_at_most = &prefix[..prefix.len() - DECODE_STEP.min(prefix.len())];
            assert!(
                (lines_of(dropped_at_most)..=lines_of(prefix)).contains(&input.lines),
                "{name}: {} lines",
                input.lines
            );
        }
        // The input's hash is still its whole file's, though the decoder stopped early.
        assert_eq!(input.blake3, blake3::hash(bytes).to_hex().to_string(), "{name}");
        let own: Vec<_> = diags.iter().filter(|d| d.file == name).collect();
        let truncated: Vec<_> = own.iter().filter(|d| d.kind == DiagnosticKind::TruncatedInput).collect();
        assert_eq!(truncated.len(), 1, "{name}: {own:?}");
        assert_eq!((truncated[0].line, truncated[0].end_line), (input.lines, input.lines), "{name}");
        assert!(truncated[0].message.contains("every line before it is kept"), "{}", truncated[0].message);
        // Every header line that decompressed is an entry (or, cut, a bad_json diagnostic).
        let stream = m.streams.iter().find(|s| s.id == input.streams[0]).unwrap();
        let bad_json = own.iter().filter(|d| d.kind == DiagnosticKind::BadJson).count() as u64;
        assert_eq!(stream.entries + bad_json, header_lines(first_lines(prefix, input.lines)), "{name}");
    }
    // The intact rank has no diagnostic.
    assert!(diags.iter().all(|d| d.file != rank_name(0)));
}

#[test]
fn zstd_inputs_with_a_2_gib_window_are_read() {
    // `zstd --long=31` from a pipe: the frame asks for a 2^31-byte window, which libzstd's
    // decoder refuses by default (checked below, and by hand: without allowing 2^31 the build
    // fails with "Frame requires too much memory for decoding").
    let text = std::fs::read(fixture(SMALL_RANK)).unwrap();
    let mut encoder = zstd::Encoder::new(Vec::new(), 3).unwrap();
    encoder.window_log(31).unwrap();
    encoder.long_distance_matching(true).unwrap();
    encoder.include_contentsize(false).unwrap();
    encoder.write_all(&text).unwrap();
    let zst = encoder.finish().unwrap();
    assert!(zstd::decode_all(&zst[..]).is_err(), "the default decoder must refuse this frame");

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("dedicated_log_torch_trace_rank_0.log.zst");
    std::fs::write(&log, &zst).unwrap();
    let plain = dir.path().join("dedicated_log_torch_trace_rank_0.log");
    std::fs::write(&plain, &text).unwrap();
    let (m, _) = build_cli(&log, &dir.path().join("b"), &["--strict"], 0);
    let (expected, _) = build_cli(&plain, &dir.path().join("plain"), &["--strict"], 0);
    assert_eq!(m.inputs[0].path, "dedicated_log_torch_trace_rank_0.log.zst");
    assert_eq!(m.inputs[0].lines, 178);
    assert_eq!(m.counts.entries, expected.counts.entries);
    assert_eq!(m.counts.payload_bytes, expected.counts.payload_bytes);
}

#[test]
fn the_output_directory_and_other_bundles_are_never_read_as_input() {
    // Rank 1 starts with a header whose JSON is cut: its raw text, a diagnostic's, goes into a
    // pack that starts with a log header. Checked by hand: before, the second build into
    // `t/out` read `out/blobs/packs/<hash>.zst` as a third input, and with --latest built from
    // that pack alone, exit 0.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    std::fs::create_dir(&trace).unwrap();
    let mut rank1 = b"V1206 15:20:13.900000 1543231 a.py:1] {\"broken\n".to_vec();
    rank1.extend(std::fs::read(fixture(OTHER_SMALL_RANK)).unwrap());
    std::fs::copy(fixture(SMALL_RANK), trace.join(rank_name(0))).unwrap();
    std::fs::write(trace.join(rank_name(1)), rank1).unwrap();
    for (rank, age) in [(0, 2_000_000), (1, 1_000_000)] {
        let file = std::fs::File::options().write(true).open(trace.join(rank_name(rank))).unwrap();
        file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(age)).unwrap();
    }
    // A staging directory a killed build left, holding a copy of a log.
    let staging = trace.join(".out.tlparse-build-4242");
    let plant_staging = || {
        std::fs::create_dir(&staging).unwrap();
        std::fs::copy(fixture(SMALL_RANK), staging.join(rank_name(7))).unwrap();
    };
    plant_staging();
    let staging_skip = skipped("a tlparse-build staging or backup directory", 1, &[]);

    let out = trace.join("out");
    let (first, _) = build_cli(&trace, &out, &[], 0);
    assert_eq!(first.streams.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["rank0", "rank1"]);
    assert_eq!(first.diagnostics.by_kind.get("bad_json"), Some(&1));
    assert_eq!(first.skipped, std::slice::from_ref(&staging_skip));
    // The first build, its output beside that staging directory, removed it (nobody held its
    // lock: see output_safety.rs).
    assert!(!staging.exists());
    // Again into the same place: the previous bundle is the output, not an input.
    let (second, _) = build_cli(&trace, &out, &["--overwrite"], 0);
    assert_eq!(second.inputs, first.inputs);
    assert_eq!(second.skipped, [skipped("the output directory", 1, &[])]);
    // --latest picks the newest log, rank 1 (the bundle's packs, newer, are not logs).
    plant_staging();
    let (latest, _) = build_cli(&trace, &out, &["--overwrite", "--latest"], 0);
    assert_eq!(latest.inputs.len(), 1);
    assert_eq!(latest.inputs[0].path, rank_name(1));
    let not_newest = format!("not the newest log (--latest chose {})", rank_name(1));
    assert_eq!(
        latest.skipped,
        [staging_skip.clone(), skipped(&not_newest, 1, &[&rank_name(0)]), skipped("the output directory", 1, &[])]
    );
    // Into another directory of the trace: the first bundle is a bundle, not an input (and the
    // staging directory, not beside this output, is left alone).
    plant_staging();
    let (other, _) = build_cli(&trace, &trace.join("other"), &[], 0);
    assert_eq!(other.inputs, first.inputs);
    assert_eq!(other.skipped, [skipped("a tlparse-build bundle", 1, &[]), staging_skip]);
}

/// Makes a FIFO.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {path:?}");
}

/// Makes directories nested below `dir` until their path is longer than PATH_MAX (4096), so
/// reading the deepest fails (ENAMETOOLONG) even for root, whom `chmod 000` does not stop. The
/// shell's relative `cd -P` can go there; a walk by full paths cannot. Returns the first level.
fn nest_past_path_max(dir: &Path) -> String {
    let level = "d".repeat(250);
    let script =
        format!("cd \"$1\" && for i in $(seq 18); do mkdir {level} && cd -P {level}; done && echo x > deep.log");
    let status = std::process::Command::new("sh").args(["-c", &script, "sh", dir.to_str().unwrap()]).status().unwrap();
    assert!(status.success());
    level
}

#[test]
fn symlinks_fifos_sockets_and_unreadable_directories_are_skipped_and_listed() {
    // A symlink loop or a dangling symlink must not stop the build (exit 2), nor a symlink to
    // /etc be walked until a dangling link inside /etc stops it (checked by hand). Tests run
    // as root, whom `chmod 000` does not stop: the unreadable directory is one too deep to
    // open by its path (ENAMETOOLONG), an error of the walk all the same.
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (trace, elsewhere) = (dir.path().join("t"), dir.path().join("elsewhere"));
    std::fs::create_dir_all(&trace).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(fixture(SMALL_RANK), trace.join(rank_name(0))).unwrap();
    std::fs::copy(fixture(OTHER_SMALL_RANK), elsewhere.join("rank1.log")).unwrap();
    // Inside the trace directory: two other names of rank 0, and a link to the directory itself
    // (named like a trace log, yet no log is lost through it: its files are read).
    symlink(rank_name(0), trace.join("rank0_link.log")).unwrap();
    std::fs::hard_link(trace.join(rank_name(0)), trace.join("rank0_hardlink.log")).unwrap();
    symlink(".", trace.join("here_torch_trace")).unwrap();
    // Out of it: a log, a rank log (a rank lost: a diagnostic), and /etc.
    symlink(elsewhere.join("rank1.log"), trace.join("outside.log")).unwrap();
    symlink("../elsewhere/rank1.log", trace.join(rank_name(1))).unwrap();
    symlink("/etc", trace.join("etc")).unwrap();
    symlink("nowhere.log", trace.join("dangling.log")).unwrap();
    symlink("loop_b.log", trace.join("loop_a.log")).unwrap();
    symlink("loop_a.log", trace.join("loop_b.log")).unwrap();
    mkfifo(&trace.join("pipe.log"));
    // A rank log whose name is not UTF-8: read, named with U+FFFD for its byte 0xff.
    let bad_name = std::os::unix::ffi::OsStrExt::from_bytes(b"dedicated_log_torch_trace_rank_\xff.log");
    std::fs::copy(fixture(OTHER_SMALL_RANK), trace.join::<&std::ffi::OsStr>(bad_name)).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(trace.join("sock")).unwrap();
    let deep = nest_past_path_max(&trace);

    // Would block forever if the walk opened the FIFO for reading.
    let out = dir.path().join("b");
    let (m, _) = build_cli(&trace, &out, &[], 0);
    build_cli(&trace, &dir.path().join("strict"), &["--strict"], 1);
    let lossy = "dedicated_log_torch_trace_rank_\u{fffd}.log";
    assert_eq!(m.inputs.iter().map(|i| i.path.as_str()).collect::<Vec<_>>(), [rank_name(0).as_str(), lossy]);
    assert_eq!(
        m.skipped,
        [
            skipped(
                "another name (hard link or symlink) of a file read under its own name",
                2,
                &["rank0_hardlink.log", "rank0_link.log"]
            ),
            skipped("dangling symlink", 1, &["dangling.log"]),
            skipped("directory that cannot be read", 1, &[]),
            skipped("not a regular file (FIFO, socket or device)", 2, &["pipe.log"]),
            skipped("symlink leading out of the trace directory", 3, &[&rank_name(1), "outside.log"]),
            skipped("symlink loop", 2, &["loop_a.log", "loop_b.log"]),
            skipped("symlink to a directory (its files are read where it points)", 1, &["here_torch_trace"]),
        ]
    );
    let diags = Bundle::open(&out).unwrap().diagnostics().unwrap();
    let lost: Vec<(DiagnosticKind, &str, u64)> = diags.iter().map(|d| (d.kind, d.file.as_str(), d.line)).collect();
    let rank1 = rank_name(1);
    // The directory that cannot be read may hold ranks: it is a lost log too, never silent.
    let unreadable = lost[0].1;
    assert!(unreadable.starts_with(&format!("{deep}/{deep}/")), "{unreadable}");
    assert_eq!(
        lost,
        [(DiagnosticKind::UnreadableLog, unreadable, 0), (DiagnosticKind::UnreadableLog, rank1.as_str(), 0)]
    );
    assert!(diags[0].message.starts_with("a directory of the trace was not read (directory that cannot be read: "));
    assert!(diags[1].message.contains("symlink leading out of the trace directory"), "{}", diags[1].message);

    // The trace given through a symlink: the same walk.
    symlink(&trace, dir.path().join("link_to_t")).unwrap();
    let (through_link, _) = build_cli(&dir.path().join("link_to_t"), &dir.path().join("c"), &[], 0);
    assert_eq!((through_link.inputs, through_link.skipped), (m.inputs, m.skipped));
}

#[test]
fn a_rank_in_a_folder_that_cannot_be_read_is_never_lost_silently() {
    // Rank 1 is in a folder too deep to open by its path (ENAMETOOLONG: root, whom `chmod 000`
    // does not stop, is stopped too). Its rank is missing: a diagnostic naming the folder, a
    // warning on stderr, and --strict fails.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    std::fs::create_dir(&trace).unwrap();
    std::fs::copy(fixture(SMALL_RANK), trace.join(rank_name(0))).unwrap();
    nest_past_path_max(&trace);
    let (m, o) = build_cli(&trace, &dir.path().join("b"), &[], 0);
    assert_eq!(m.inputs.len(), 1);
    assert_eq!(m.diagnostics.by_kind.get("unreadable_log"), Some(&1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("warning: ") && stderr.contains("a directory of the trace was not read"), "{stderr}");
    build_cli(&trace, &dir.path().join("strict"), &["--strict"], 1);
}

#[test]
fn logs_whose_names_are_not_utf8_are_read_and_one_named_like_another_is_lost_not_dropped() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    std::fs::create_dir_all(trace.join(std::ffi::OsStr::from_bytes(b"run\xfe"))).unwrap();
    std::fs::copy(fixture(SMALL_RANK), trace.join(std::ffi::OsStr::from_bytes(b"rank\xff.log"))).unwrap();
    // Three names that read alike as text: U+FFFD itself (UTF-8, kept) and two bytes that are not.
    std::fs::copy(fixture(OTHER_SMALL_RANK), trace.join("run\u{fffd}.log")).unwrap();
    for name in [&b"run\xfe.log"[..], b"run\xfd.log"] {
        std::fs::copy(fixture(BIG_RANK), trace.join(std::ffi::OsStr::from_bytes(name))).unwrap();
    }
    std::fs::copy(fixture(SMALL_RANK), trace.join(std::ffi::OsStr::from_bytes(b"run\xfe/log.txt"))).unwrap();
    let (m, _) = build_cli(&trace, &dir.path().join("b"), &[], 0);
    let inputs: Vec<(&str, u64)> = m.inputs.iter().map(|i| (i.path.as_str(), i.lines)).collect();
    let lines = |rel: &str| lines_of(&std::fs::read(fixture(rel)).unwrap());
    assert_eq!(
        inputs,
        [
            ("rank\u{fffd}.log", lines(SMALL_RANK)),
            ("run\u{fffd}.log", lines(OTHER_SMALL_RANK)),
            ("run\u{fffd}/log.txt", lines(SMALL_RANK))
        ]
    );
    assert_eq!(
        m.skipped,
        [skipped("name is not UTF-8, and as text is another log's name", 2, &["run\u{fffd}.log", "run\u{fffd}.log"])]
    );
    assert_eq!(m.diagnostics.by_kind.get("unreadable_log"), Some(&2));
    build_cli(&trace, &dir.path().join("strict"), &["--strict"], 1);
}

#[test]
fn with_latest_only_lost_logs_newer_than_the_chosen_one_are_diagnostics() {
    // Rank logs of two older runs: one lost (empty), one read. With --latest the newest log is
    // chosen; a lost log newer than it may have been the run asked for (a diagnostic), an older
    // one would not have been read anyway (only skipped).
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    std::fs::create_dir(&trace).unwrap();
    let age = |name: &str, seconds: u64| {
        let file = std::fs::File::options().write(true).open(trace.join(name)).unwrap();
        file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(seconds)).unwrap();
    };
    std::fs::write(trace.join("dedicated_log_torch_trace_old_lost.log"), "").unwrap();
    age("dedicated_log_torch_trace_old_lost.log", 3000);
    std::fs::copy(fixture(SMALL_RANK), trace.join("dedicated_log_torch_trace_read.log")).unwrap();
    age("dedicated_log_torch_trace_read.log", 2000);
    let (m, _) = build_cli(&trace, &dir.path().join("b"), &["--latest", "--strict"], 0);
    assert_eq!(m.inputs[0].path, "dedicated_log_torch_trace_read.log");
    assert_eq!(m.skipped, [skipped("empty file", 1, &["dedicated_log_torch_trace_old_lost.log"])]);

    std::fs::write(trace.join("dedicated_log_torch_trace_new_lost.log"), "").unwrap();
    let (m, _) = build_cli(&trace, &dir.path().join("c"), &["--latest"], 0);
    assert_eq!(m.inputs[0].path, "dedicated_log_torch_trace_read.log");
    let diags = Bundle::open(&dir.path().join("c")).unwrap().diagnostics().unwrap();
    let lost: Vec<&str> = diags.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(lost, ["dedicated_log_torch_trace_new_lost.log"]);
}

#[test]
fn a_fifo_given_as_the_trace_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trace.log");
    mkfifo(&fifo);
    let o = run(&[fifo.to_str().unwrap(), "-o", dir.path().join("b").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a regular file or directory (a FIFO, socket or device)"), "{err}");
}

#[test]
fn files_named_like_trace_logs_that_cannot_be_read_are_lost_ranks() {
    // Rank 1 is empty (killed before its first flush), rank 2 holds no header, rank 3 is a
    // .gz corrupt from its first block: each a rank missing from the bundle, so an
    // unreadable_log diagnostic (line 0). A corrupt `.gz` of another name is a lost log too;
    // an empty `.log` of another name is just skipped.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    std::fs::create_dir(&trace).unwrap();
    std::fs::copy(fixture(SMALL_RANK), trace.join(rank_name(0))).unwrap();
    std::fs::write(trace.join(rank_name(1)), "").unwrap();
    std::fs::write(trace.join(rank_name(2)), "Traceback (most recent call last):\n  oom\n").unwrap();
    let mut gz = gzip(&std::fs::read(fixture(OTHER_SMALL_RANK)).unwrap());
    gz[10..40].fill(0xff);
    std::fs::write(trace.join(format!("{}.gz", rank_name(3))), &gz).unwrap();
    std::fs::write(trace.join("old_run.log.gz"), &gz).unwrap();
    std::fs::write(trace.join("another.log"), "").unwrap();
    // One of a name unlike a log's may have been a log: lost too, named by its folder only.
    std::fs::write(trace.join("private.bin"), &gz).unwrap();

    let out = dir.path().join("b");
    let (m, _) = build_cli(&trace, &out, &[], 0);
    build_cli(&trace, &dir.path().join("strict"), &["--strict"], 1);
    assert_eq!(m.inputs.len(), 1);
    let rank3 = format!("{}.gz", rank_name(3));
    assert_eq!(
        m.skipped,
        [
            skipped("cannot be read or decompressed", 3, &[&rank3, "old_run.log.gz"]),
            skipped("empty file", 2, &["another.log", &rank_name(1)]),
            skipped("not a TORCH_TRACE log (no log header in its first 4 MiB)", 1, &[&rank_name(2)]),
        ]
    );
    let diags = Bundle::open(&out).unwrap().diagnostics().unwrap();
    let lost: Vec<(&str, u64)> = diags.iter().map(|d| (d.file.as_str(), d.line)).collect();
    assert_eq!(
        lost,
        [(".", 0), (rank_name(1).as_str(), 0), (rank_name(2).as_str(), 0), (rank3.as_str(), 0), ("old_run.log.gz", 0)]
    );
    assert!(diags.iter().all(|d| d.kind == DiagnosticKind::UnreadableLog));
    assert!(diags[3].message.contains("cannot be read or decompressed: "), "{}", diags[3].message);
    assert!(diags[0].message.starts_with("a file in this directory was not read"), "{}", diags[0].message);
    assert!(!diags[0].message.contains("private"), "{}", diags[0].message);
}

#[test]
fn a_directory_without_logs_is_an_error_that_says_what_was_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.log"), "").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a log\n").unwrap();
    std::fs::write(dir.path().join("dedicated_log_torch_trace_rank_0.log"), "").unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = run(&[dir.path().to_str().unwrap(), "-o", out.path().join("b").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let expected = "skipped 3: empty file: 2; not a TORCH_TRACE log (no log header in its first 4 MiB): 1; \
        dedicated_log_torch_trace_rank_0.log: a trace log was not read (empty file): what it holds is missing\n";
    assert!(err.contains(expected), "{err}");
}

/// Every byte of a bundle, decompressed where compressed, as one text per file.
fn bundle_texts(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut texts = Vec::new();
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        let name = entry.file_name().to_string_lossy();
        let text = if name.ends_with(".zst") {
            zstd::decode_all(&bytes[..]).unwrap()
        } else if name.ends_with(".gz") {
            let mut text = Vec::new();
            flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut text).unwrap();
            text
        } else {
            bytes
        };
        texts.push((entry.path().to_owned(), text));
    }
    texts
}

#[test]
fn bundles_record_no_absolute_path_and_no_name_of_unrelated_files() {
    // A trace directory under a distinctive path, holding private files beside the rank logs
    // (whose own text was checked to hold neither that path nor these names). Inputs and skipped
    // files must not be recorded by the path as given (absolute if given so), nor every skipped
    // file be named.
    let dir = tempfile::Builder::new().prefix("privacy-Kq7vX-").tempdir().unwrap();
    let trace = dir.path().join("job-Zp3Wm").join("trace");
    std::fs::create_dir_all(trace.join("private-subdir")).unwrap();
    std::fs::copy(fixture(SMALL_RANK), trace.join(rank_name(0))).unwrap();
    std::fs::copy(fixture(OTHER_SMALL_RANK), trace.join("private-subdir").join(rank_name(1))).unwrap();
    let secrets = [".env", "id_rsa", "notes.docx"];
    for name in secrets {
        std::fs::write(trace.join(name), "AWS_SECRET=hunter2\n").unwrap();
    }
    std::fs::write(trace.join("private-subdir").join("salaries.xlsx"), "x").unwrap();
    let absolute = dir.path().to_str().unwrap();
    let forbidden =
        [absolute, "privacy-Kq7vX", "job-Zp3Wm", ".env", "id_rsa", "notes.docx", "salaries.xlsx", "hunter2"];
    for rel in [SMALL_RANK, OTHER_SMALL_RANK] {
        let log = String::from_utf8(std::fs::read(fixture(rel)).unwrap()).unwrap();
        assert!(forbidden.iter().all(|f| !log.contains(f)), "{rel} holds a forbidden string itself");
    }

    let out = dir.path().join("job-Zp3Wm").join("bundle");
    let (m, _) = build_cli(&trace, &out, &["--strict"], 0);
    let paths: Vec<&str> = m.inputs.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(paths, [rank_name(0), format!("private-subdir/{}", rank_name(1))]);
    assert_eq!(m.skipped, [skipped("not a TORCH_TRACE log (no log header in its first 4 MiB)", 4, &[])]);
    // Nor does anything of the trace's location: the same logs elsewhere give the same bundle.
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = elsewhere.path().join("a").join("b");
    std::fs::create_dir_all(moved.join("private-subdir")).unwrap();
    for entry in walkdir::WalkDir::new(&trace).into_iter().map(Result::unwrap).filter(|e| e.file_type().is_file()) {
        std::fs::copy(entry.path(), moved.join(entry.path().strip_prefix(&trace).unwrap())).unwrap();
    }
    let (moved_manifest, _) = build_cli(&moved, &elsewhere.path().join("bundle"), &["--strict"], 0);
    assert_eq!(moved_manifest.inputs, m.inputs);
    assert!(read_tree(&elsewhere.path().join("bundle")) == read_tree(&out), "the bundles differ");
    let texts = bundle_texts(&out);
    assert!(texts.len() > 20, "read {} files", texts.len());
    for (path, text) in texts {
        let text = String::from_utf8_lossy(&text);
        for f in forbidden {
            assert!(!text.contains(f), "{path:?} holds {f:?}");
        }
    }
}
