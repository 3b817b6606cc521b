//! Bounded memory on hostile logs: a line or a payload longer than the line limit, and a small
//! `.zst` that inflates to one huge line, are streamed to the blob store, never held whole. Each
//! test runs the binary with a 1 MiB limit on an input tens of times longer and measures its
//! peak RSS (`wait4`): holding the long record even once would exceed the bound.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use md5::{Digest, Md5};
use tlparse_build::bundle::reader::Bundle;

use crate::util::{assert_valid, fixture};

/// The peak RSS allowed: what the debug binary needs on the real fixture this file's inputs
/// start from, with room to spare, and far below the record of 100 MiB or more each input holds.
const BOUND: u64 = 64 << 20;

/// Runs the binary; its exit code, peak resident set size in bytes (as the binary reports it
/// with `TLPARSE_BUILD_PEAK_RSS_FILE`: `wait4` would count this test process's pages) and stderr.
fn run_measured(args: &[&str]) -> (i32, u64, String) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("peak");
    let out = Command::new(env!("CARGO_BIN_EXE_tlparse-build"))
        .args(args)
        .env("TLPARSE_BUILD_PEAK_RSS_FILE", &report)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or_else(|| panic!("killed by a signal: {stderr}"));
    let kib: u64 = std::fs::read_to_string(&report).unwrap().parse().unwrap();
    (code, kib * 1024, stderr)
}

/// Builds `log` into `out` with a 1 MiB line limit (and `extra` arguments), checks that the peak
/// RSS stayed under [`BOUND`] and that the bundle is valid; returns the exit code and stderr.
fn build_bounded(log: &Path, out: &Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec![log.to_str().unwrap(), "-o", out.to_str().unwrap(), "--max-line-mb", "1"];
    args.extend_from_slice(extra);
    let (code, rss, stderr) = run_measured(&args);
    assert!(rss < BOUND, "peak RSS {} MiB", rss >> 20);
    if code != 2 {
        assert_valid(out);
    }
    (code, stderr)
}

/// The real fixture the inputs wrap: 16 KB of a torch 2.x compile (comp_metrics.log).
fn base_log() -> Vec<u8> {
    std::fs::read(fixture("tlparse-tests/comp_metrics.log")).unwrap()
}

fn entries(bundle: &Path) -> u64 {
    Bundle::open(bundle).unwrap().manifest.streams.iter().map(|s| s.entries).sum()
}

fn diagnostics(bundle: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(bundle.join("diagnostics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn lines_in(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

#[test]
fn a_header_line_longer_than_the_limit_is_stored_as_a_diagnostic_without_being_held() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_log();
    let header =
        "V1206 15:18:15.925000 139877824898048 torch/_dynamo/utils.py:1288] {\"artifact\": {\"name\": \"x\", \"v\": \"";
    let long: Vec<u8> = [header.as_bytes(), &vec![b'a'; 120 << 20], b"\"}}"].concat();
    let log = dir.path().join("long_line.log");
    let mut f = std::fs::File::create(&log).unwrap();
    f.write_all(&base).unwrap();
    f.write_all(&long).unwrap();
    f.write_all(b"\r\n").unwrap();
    f.write_all(&base).unwrap();
    drop(f);
    let out = dir.path().join("b");
    let (code, stderr) = build_bounded(&log, &out, &["--strict"]);
    // --strict: the long line is damage.
    assert_eq!(code, 1, "{stderr}");
    // Checked by hand: comp_metrics.log has 65 lines, 26 of them headers (pid 139877824898048,
    // the pid of the long line too); the long line is line 66, and both copies of the fixture
    // are read (52 entries).
    let d = diagnostics(&out);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["kind"], "line_too_long");
    assert_eq!(d[0]["line"], lines_in(&base) + 1);
    assert_eq!(d[0]["stream"], "log0", "the glog prefix of its first bytes names its process");
    assert_eq!(entries(&out), 2 * 26);
    // Nothing lost: the blob is the line's bytes, without its `\r\n`.
    let bundle = Bundle::open(&out).unwrap();
    let raw = bundle.blob(d[0]["raw"].as_str().unwrap()).unwrap();
    assert!(raw == long, "the stored line differs ({} bytes, expected {})", raw.len(), long.len());
}

#[test]
fn a_payload_longer_than_the_limit_is_stored_whole_and_md5_checked_but_not_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_log();
    // 150 MiB in 1 KiB lines: stored whole, streamed.
    let line = vec![b'b'; 1023];
    let lines = 150 * 1024;
    let mut md5 = Md5::new();
    for i in 0..lines {
        md5.update(&line);
        if i + 1 < lines {
            md5.update(b"\n");
        }
    }
    let md5 = tlparse_build::parse::hex(&md5.finalize());
    let log = dir.path().join("big_payload.log");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
    f.write_all(&base).unwrap();
    let header = format!(
        "V1206 15:18:15.925000 139877824898048 torch/_dynamo/utils.py:1288] {{\"artifact\": {{\"name\": \"big\", \"encoding\": \"string\"}}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"{md5}\"}}\n"
    );
    f.write_all(header.as_bytes()).unwrap();
    for _ in 0..lines {
        f.write_all(b"\t").unwrap();
        f.write_all(&line).unwrap();
        f.write_all(b"\n").unwrap();
    }
    f.write_all(&base).unwrap();
    drop(f);
    let out = dir.path().join("b");
    let (code, stderr) = build_bounded(&log, &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    let d = diagnostics(&out);
    // The md5 matched (no md5_mismatch): only the size is reported.
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["kind"], "payload_too_large");
    assert_eq!(d[0]["line"], lines_in(&base) + 1);
    let bundle = Bundle::open(&out).unwrap();
    let row = bundle
        .index_rows_iter("log0")
        .unwrap()
        .map(Result::unwrap)
        .find(|r| r.name.as_deref() == Some("big"))
        .expect("the entry is indexed");
    let payload = row.payload.expect("with its payload");
    let size = (lines * 1024 - 1) as u64;
    assert_eq!((payload.size, payload.lines, payload.md5_mismatch), (size, lines as u64, false));
    let blob = bundle.blob(&payload.hash).unwrap();
    assert_eq!(blob.len() as u64, size);
    assert!(blob.split(|&b| b == b'\n').all(|l| l == line.as_slice()));
    // The artifact is listed in the compile directory with its blob, like any other.
    let dir_json =
        String::from_utf8(bundle.read_zst("tables/log0/compile_directory.json.zst", 1 << 26).unwrap()).unwrap();
    assert!(dir_json.contains(&payload.hash), "compile_directory lists the big artifact");
}

#[test]
fn a_small_zst_inflating_to_one_huge_line_keeps_the_first_512_mib_and_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_log();
    let log = dir.path().join("bomb.log.zst");
    let mut z = zstd::stream::Encoder::new(std::fs::File::create(&log).unwrap(), 3).unwrap();
    z.write_all(&base).unwrap();
    let block = vec![b'c'; 1 << 20];
    let huge = 600u64 << 20;
    for _ in 0..huge >> 20 {
        z.write_all(&block).unwrap();
    }
    z.write_all(b"\n").unwrap();
    z.write_all(&base).unwrap();
    z.finish().unwrap();
    assert!(std::fs::metadata(&log).unwrap().len() < 1 << 20, "a bomb: small on disk");
    let out = dir.path().join("b");
    let (code, stderr) = build_bounded(&log, &out, &[]);
    assert_eq!(code, 0, "{stderr}");
    let d = diagnostics(&out);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["kind"], "line_too_long");
    let message = d[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("line of {huge} bytes")) && message.contains("first 536870912 bytes"),
        "{message}"
    );
    assert_eq!(entries(&out), 2 * 26, "the log goes on after the huge line");
    let pack = Bundle::open(&out).unwrap().manifest.blobs.packs;
    assert!(pack.iter().any(|p| p.raw_size == 512 << 20), "{pack:?}");
}
