//! Helpers shared by the integration tests: fixture paths, building bundles, reading them back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use camino::Utf8PathBuf;
use tlparse_build::bundle::{self, BuildOptions};
use tlparse_build::schema::Manifest;

/// Path of a fixture, relative to the crate root (tests run there), so manifests are stable.
pub fn fixture(rel: &str) -> Utf8PathBuf {
    let p = Utf8PathBuf::from("fixtures-repo").join(rel);
    assert!(p.exists(), "missing fixture {p}");
    p
}

/// Every trace in fixtures-repo: each log file outside the multi-file sets, and each directory
/// of rank logs as one trace.
pub fn all_traces() -> Vec<Utf8PathBuf> {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read("fixtures-repo/manifest.json").expect("fixtures manifest")).unwrap();
    manifest["traces"].as_array().unwrap().iter().map(|t| fixture(t["path"].as_str().unwrap())).collect()
}

/// Builds a bundle in a fresh temporary directory and checks it validates.
pub fn build(input: &Utf8PathBuf) -> (tempfile::TempDir, PathBuf, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    let manifest = build_to(input, &out);
    (dir, out, manifest)
}

/// The options the tests build with: `input` into `out`, with the viewer, as the CLI would.
pub fn build_options(input: &Utf8PathBuf, out: &Path) -> BuildOptions {
    BuildOptions {
        input: input.clone(),
        output: Utf8PathBuf::from_path_buf(out.to_owned()).unwrap(),
        overwrite: true,
        latest: false,
        progress: false,
        viewer: true,
        max_line: tlparse_build::bundle::DEFAULT_MAX_LINE,
    }
}

pub fn build_to(input: &Utf8PathBuf, out: &Path) -> Manifest {
    let manifest = bundle::build(&build_options(input, out)).unwrap_or_else(|e| panic!("building {input}: {e}"));
    assert_valid(out);
    manifest
}

/// Checks a bundle with the strict reader: every file against its JSON Schema (jsonschema
/// crate), every hash, every reference.
pub fn assert_valid(out: &Path) {
    let problems = tlparse_bundle::validate::validate(tlparse_bundle::DirSource::new(out)).unwrap();
    assert!(problems.is_empty(), "bundle {out:?} does not validate:\n{}", problems.join("\n"));
}

/// Runs the binary.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tlparse-build")).args(args).output().expect("run tlparse-build")
}

/// Every file of a bundle with its bytes.
pub fn read_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

/// The payloads of a log computed the plain way, independently of the parser: for each header
/// line, the tab-indented lines after it without their tab, joined with `\n`. A `\r` ending a
/// line belongs to the line ending (CRLF logs), not to the payload: torch's md5 excludes it.
pub fn payloads_of(log: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut current: Option<(u64, Vec<Vec<u8>>)> = None;
    for (i, line) in log.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(rest) = line.strip_prefix(b"\t") {
            if let Some((_, lines)) = current.as_mut() {
                lines.push(rest.to_vec());
            }
            continue;
        }
        if let Some((n, lines)) = current.take() {
            if !lines.is_empty() {
                out.push((n, lines.join(&b'\n')));
            }
        }
        if !line.is_empty() {
            current = Some((i as u64 + 1, Vec::new()));
        }
    }
    if let Some((n, lines)) = current.filter(|(_, l)| !l.is_empty()) {
        out.push((n, lines.join(&b'\n')));
    }
    out
}
