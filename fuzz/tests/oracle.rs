//! The oracle against fake binaries (shell scripts standing for tlparse-build): each broken
//! invariant is reported, and a binary that behaves passes. Then the whole command against a
//! panicking fake: the finding, its exit code and its saved input.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tlparse_fuzz::case::{BuildCase, CaseFile, OutSetup, WrittenCase};
use tlparse_fuzz::child::{Limits, Runner};
use tlparse_fuzz::oracle::{Violation, check_build};

const LOG: &[u8] = b"V0101 00:00:00.000000 1 a.py:1] {\"str\": [\"a.py\", 0]}\n";

/// Writes an executable shell script; `$1` is the trace (or `validate`), `$3` the output.
fn fake_binary(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("fake-tlparse-build");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Runs the fakes with a limit of 64 MiB; `timeout` is generous but for the hang's test.
fn runner(timeout: Duration) -> Runner {
    Runner { watcher: PathBuf::from(env!("CARGO_BIN_EXE_tlparse-fuzz")), limits: Limits { max_rss: 64 << 20, timeout } }
}

const PATIENT: Duration = Duration::from_secs(60);

/// A case of the given files (one: a single log; more: a rank directory), written under `dir`.
fn case(dir: &Path, files: &[(&str, &[u8])], out: OutSetup, closed_stdout: bool) -> WrittenCase {
    let files = files
        .iter()
        .map(|(name, bytes)| CaseFile { name: name.to_string(), bytes: bytes.to_vec(), description: String::new() })
        .collect::<Vec<_>>();
    let case = BuildCase { rank_dir: files.len() > 1, files, out, no_viewer: false, closed_stdout };
    case.write(&dir.join("case")).unwrap()
}

/// Runs the oracle with a fake binary on a one-log case.
fn check(body: &str) -> Vec<Violation> {
    check_with(body, &[("trace.log", LOG)], OutSetup::Fresh)
}

fn check_with(body: &str, files: &[(&str, &[u8])], out: OutSetup) -> Vec<Violation> {
    check_case(body, files, out, false)
}

fn check_case(body: &str, files: &[(&str, &[u8])], out: OutSetup, closed_stdout: bool) -> Vec<Violation> {
    let dir = tempfile::tempdir().unwrap();
    let written = case(dir.path(), files, out, closed_stdout);
    check_build(&fake_binary(dir.path(), body), &runner(PATIENT), &written).unwrap()
}

fn invariants(found: &[Violation]) -> Vec<&'static str> {
    found.iter().map(|v| v.invariant).collect()
}

/// Builds a "bundle" that the checks after the build accept: a manifest naming the inputs.
const BEHAVES: &str = r#"[ "$1" = validate ] && exit 0
mkdir -p "$3" && echo '{"inputs": [{"path": "trace.log"}]}' > "$3/manifest.json""#;

#[test]
fn a_binary_that_behaves_passes() {
    assert_eq!(check(BEHAVES), vec![]);
}

#[test]
fn a_panic_is_reported_with_its_location() {
    let found = check("echo \"thread 'main' panicked at src/fake.rs:7:9:\nboom\" >&2; exit 101");
    assert_eq!(invariants(&found), vec!["panic"]);
    assert!(found[0].signature.contains("src/fake.rs:7:9: boom"), "{}", found[0].signature);
}

#[test]
fn a_panic_after_megabytes_of_warnings_is_still_seen() {
    let found = check(
        "head -c 1000000 /dev/zero | tr '\\0' w >&2\necho \"\nthread 'main' panicked at src/fake.rs:2:2:\nlate\" >&2; exit 101",
    );
    assert_eq!(invariants(&found), vec!["panic"]);
    assert!(found[0].signature.contains("src/fake.rs:2:2: late"), "{}", found[0].signature);
}

#[test]
fn a_hang_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let written = case(dir.path(), &[("trace.log", LOG)], OutSetup::Fresh, false);
    let hangs = fake_binary(dir.path(), "exec sleep 30");
    let found = check_build(&hangs, &runner(Duration::from_secs(1)), &written).unwrap();
    assert_eq!(invariants(&found), vec!["hang"]);
}

#[test]
fn a_signal_is_reported() {
    assert_eq!(invariants(&check("kill -SEGV $$")), vec!["signal"]);
}

#[test]
fn memory_over_the_limit_is_reported() {
    // 128 MB held by the shell itself, against a limit of 64 MiB; then it behaves.
    let found = check(&format!("x=$(head -c 128000000 /dev/zero | tr '\\0' a)\n{BEHAVES}"));
    assert!(invariants(&found).contains(&"memory"), "{found:?}");
    assert!(found.iter().all(|v| v.invariant == "memory"), "{found:?}");
}

#[test]
fn exit_2_needs_a_true_reason() {
    let unexplained = check("echo 'error: something went wrong' >&2; exit 2");
    assert_eq!(invariants(&unexplained), vec!["exit_code"]);
    // "not a log" is a true reason for a file with no header, and a false one for a log.
    let not_a_log = "echo 'error: x is not a TORCH_TRACE log: no header' >&2; exit 2";
    assert_eq!(check_with(not_a_log, &[("trace.log", b"hello\n")], OutSetup::Fresh), vec![]);
    assert_eq!(invariants(&check(not_a_log)), vec!["exit_code"]);
    // Refusing a directory of the user's given as OUT is a true reason too.
    let refuses = "echo 'error: out exists and is not a tlparse-build bundle; refusing to delete it' >&2; exit 2";
    assert_eq!(check_with(refuses, &[("trace.log", LOG)], OutSetup::UserDir), vec![]);
    assert_eq!(invariants(&check(refuses)), vec!["exit_code"]);
}

#[test]
fn a_staging_directory_left_behind_is_reported() {
    let found = check(&format!("mkdir \"$(dirname \"$3\")/.bundle.tlparse-build-77\"\n{BEHAVES}"));
    assert_eq!(invariants(&found), vec!["staging_left"]);
}

#[test]
fn a_bundle_that_fails_validate_is_reported() {
    let found = check(&BEHAVES.replace("exit 0", "{ echo 'bad: thing'; exit 1; }"));
    assert_eq!(invariants(&found), vec!["invalid_bundle"]);
    assert_eq!(found[0].signature, "validate: bad: thing");
}

#[test]
fn the_absolute_path_of_the_trace_in_the_bundle_is_a_leak() {
    let found = check(&format!("{BEHAVES}\necho \"$1\" > \"$3/diagnostics.jsonl\""));
    assert_eq!(invariants(&found), vec!["leak"]);
}

#[test]
fn deleting_the_users_files_is_reported() {
    let found = check(&format!("rm \"$(dirname \"$3\")/keep.txt\"\n{BEHAVES}"));
    assert_eq!(invariants(&found), vec!["deleted"]);
    // Building over a directory of the user's, even with --overwrite, deletes it.
    let over = check_with(&format!("rm -r \"$3\"\n{BEHAVES}"), &[("trace.log", LOG)], OutSetup::UserDir);
    assert_eq!(invariants(&over), vec!["deleted", "deleted"]);
}

#[test]
fn a_rank_left_out_of_the_bundle_is_lost() {
    let files: &[(&str, &[u8])] =
        &[("dedicated_log_torch_trace_rank_0.log", LOG), ("dedicated_log_torch_trace_rank_1.log", LOG)];
    let names_rank_0 = r#"[ "$1" = validate ] && exit 0
mkdir -p "$3" && echo '{"inputs": [{"path": "dedicated_log_torch_trace_rank_0.log"}]}' > "$3/manifest.json""#;
    let found = check_with(names_rank_0, files, OutSetup::Fresh);
    assert_eq!(invariants(&found), vec!["lost_rank"]);
    assert!(found[0].detail.starts_with("dedicated_log_torch_trace_rank_1.log"), "{}", found[0].detail);
}

#[test]
fn stdout_can_be_a_closed_pipe() {
    // The script ignores SIGPIPE, as Rust programs do, and says when a write to stdout fails.
    let body = format!("trap '' PIPE\necho hi || {{ echo 'error: stdout is closed' >&2; exit 3; }}\n{BEHAVES}");
    assert_eq!(check_case(&body, &[("trace.log", LOG)], OutSetup::Fresh, false), vec![]);
    let found = check_case(&body, &[("trace.log", LOG)], OutSetup::Fresh, true);
    assert_eq!(found.iter().map(|v| v.signature.as_str()).collect::<Vec<_>>(), vec!["exit 3: error: stdout is closed"]);
    // Dying of SIGPIPE there is no crash.
    assert_eq!(check_case(&format!("echo hi\n{BEHAVES}"), &[("trace.log", LOG)], OutSetup::Fresh, true), vec![]);
}

#[test]
fn the_command_reports_findings_saves_them_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = dir.path().join("fixtures");
    std::fs::create_dir(&fixtures).unwrap();
    std::fs::write(fixtures.join("tiny.log"), LOG).unwrap();
    let panics = fake_binary(dir.path(), "echo \"thread 'main' panicked at src/fake.rs:1:1:\nboom\" >&2; exit 101");
    let args: Vec<OsString> = vec![
        "build".into(),
        "--jobs".into(),
        "1".into(),
        "--cases".into(),
        "3".into(),
        "--seed".into(),
        "40".into(),
        "--binary".into(),
        panics.into(),
        "--fixtures".into(),
        fixtures.into(),
        "--out-dir".into(),
        dir.path().join("out").into(),
    ];
    let output = Command::new(env!("CARGO_BIN_EXE_tlparse-fuzz")).args(&args).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.starts_with("tlparse-fuzz build: 3 case(s)"), "{stdout}");
    assert!(stdout.contains("FINDING [panic] build: panicked at src/fake.rs:1:1: boom\n  3 case(s)"), "{stdout}");
    let readme = std::fs::read_to_string(dir.path().join("out/fuzz-findings/build-40/README")).unwrap();
    assert!(readme.starts_with("reproduce: target/release/tlparse-fuzz build --binary "), "{readme}");
    assert!(readme.contains("--seed 40 --cases 1"), "{readme}");
}
