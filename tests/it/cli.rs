//! The command line as a user runs it: inputs, output discipline, exit codes, validate and cat.

use std::path::Path;

use crate::util::{assert_valid, fixture, payloads_of, run};

fn tmp_out(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().unwrap().to_string()
}

#[test]
fn builds_a_directory_of_rank_logs_in_rank_order_and_lists_skipped_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    let o = run(&[fixture("tlparse-tests/multi_rank_messy_input").as_str(), "-o", &out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_valid(Path::new(&out));
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(&out).join("manifest.json")).unwrap()).unwrap();
    // Skipped files are grouped by reason, named relative to the trace directory. The two
    // empty decoys are not named like trace logs: no diagnostic.
    assert_eq!(
        m["skipped"],
        serde_json::json!([{
            "reason": "empty file",
            "count": 2,
            "paths": ["another.log", "some_other_file.txt"]
        }])
    );
    let inputs: Vec<&str> = m["inputs"].as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap()).collect();
    assert_eq!(inputs, ["dedicated_log_torch_trace_rank_0.log", "dedicated_log_torch_trace_rank_1.log"]);
    assert_eq!(m["diagnostics"]["total"], 0);
    let ids: Vec<&str> = m["streams"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["rank0", "rank1"]);

    // Ranks sort numerically (2 before 10), whatever the file names' order.
    let ranks = tempfile::tempdir().unwrap();
    for r in [10, 2, 1] {
        std::fs::copy(
            fixture("tlparse-tests/comp_metrics.log"),
            ranks.path().join(format!("dedicated_log_torch_trace_rank_{r}_x.log")),
        )
        .unwrap();
    }
    std::fs::write(ranks.path().join("notes.txt"), "not a log\n").unwrap();
    let out2 = tmp_out(&dir, "c");
    assert!(run(&[ranks.path().to_str().unwrap(), "-o", &out2]).status.success());
    assert_valid(Path::new(&out2));
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(&out2).join("manifest.json")).unwrap()).unwrap();
    let ids: Vec<&str> = m["streams"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["rank1", "rank2", "rank10"]);
    assert_eq!(
        m["skipped"],
        serde_json::json!([{
            "reason": "not a TORCH_TRACE log (no log header in its first 4 MiB)",
            "count": 1,
            "paths": ["notes.txt"]
        }])
    );
}

#[test]
fn latest_picks_the_newest_log_of_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("t");
    std::fs::create_dir(&traces).unwrap();
    std::fs::copy(fixture("tlparse-tests/comp_metrics.log"), traces.join("dedicated_log_torch_trace_new.log")).unwrap();
    std::fs::copy(fixture("tlparse-tests/comp_failure.log"), traces.join("dedicated_log_torch_trace_old.log")).unwrap();
    let old = std::fs::File::options().write(true).open(traces.join("dedicated_log_torch_trace_old.log")).unwrap();
    old.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000)).unwrap();
    let out = tmp_out(&dir, "b");
    assert!(run(&[traces.to_str().unwrap(), "-o", &out, "--latest"]).status.success());
    assert_valid(Path::new(&out));
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(&out).join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["inputs"].as_array().unwrap().len(), 1);
    assert_eq!(m["inputs"][0]["path"], "dedicated_log_torch_trace_new.log");
    assert_eq!(m["skipped"][0]["reason"], "not the newest log (--latest chose dedicated_log_torch_trace_new.log)");
    assert_eq!(m["skipped"][0]["paths"], serde_json::json!(["dedicated_log_torch_trace_old.log"]));
}

#[test]
fn output_is_never_clobbered_and_overwrite_only_replaces_bundles() {
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    let input = fixture("tlparse-tests/comp_metrics.log");
    assert!(run(&[input.as_str(), "-o", &out]).status.success());
    let again = run(&[input.as_str(), "-o", &out]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists; pass --overwrite"));
    assert!(run(&[input.as_str(), "-o", &out, "--overwrite"]).status.success());
    assert_valid(Path::new(&out));

    let precious = tmp_out(&dir, "precious");
    std::fs::create_dir(&precious).unwrap();
    std::fs::write(Path::new(&precious).join("thesis.tex"), "do not delete").unwrap();
    let refused = run(&[input.as_str(), "-o", &precious, "--overwrite"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is not a tlparse-build bundle; refusing to delete it"));
    assert!(Path::new(&precious).join("thesis.tex").exists());
    // Nothing is left beside the output either.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_killed_build_leaves_no_half_bundle() {
    // A log big enough that a debug build takes a while: one fixture repeated.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.log");
    let one = std::fs::read(fixture("tlparse-tests/multi_rank_logs/dedicated_log_torch_trace_rank_1.log")).unwrap();
    std::fs::write(&log, one.repeat(40)).unwrap();
    let out = dir.path().join("b");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tlparse-build"))
        .args([log.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .spawn()
        .unwrap();
    // Wait until the build has started writing (its staging directory exists), then kill it.
    let started = std::time::Instant::now();
    while !std::fs::read_dir(dir.path())
        .unwrap()
        .any(|e| e.unwrap().file_name().to_string_lossy().starts_with(".b.tlparse-build"))
    {
        assert!(started.elapsed().as_secs() < 60, "build never started");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!out.exists(), "a killed build must not leave {out:?}");
}

/// A rank log of one compile with `artifacts` small artifacts, each of its own name and payload.
fn artifacts_log(artifacts: usize) -> Vec<u8> {
    artifacts_in(artifacts, |_| 0)
}

/// A log of `artifacts` small artifacts, each of its own name and payload, the `i`th in the
/// compile of frame `frame(i)`.
fn artifacts_in(artifacts: usize, frame: impl Fn(usize) -> usize) -> Vec<u8> {
    use md5::{Digest, Md5};
    let mut log = Vec::new();
    for i in 0..artifacts {
        let payload = format!("x = {i}");
        let frame = frame(i);
        let md5: String = Md5::digest(payload.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        log.extend_from_slice(
            format!(
                "V1206 15:24:46.953000 1 torch/_inductor/compile_fx.py:835] {{\"artifact\": {{\"name\": \"a{i}\", \
                 \"encoding\": \"string\"}}, \"frame_id\": {frame}, \"frame_compile_id\": 0, \"attempt\": 0, \
                 \"has_payload\": \"{md5}\"}}\n\t{payload}\n"
            )
            .as_bytes(),
        );
    }
    log
}

/// The entries beside `dir`'s bundles a build leaves when it stops: staging and backup folders.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tlparse-build-"))
        .collect()
}

#[test]
fn quiet_or_not_a_build_exits_alike_and_never_installs_a_bundle_it_cannot_read_back() {
    // Two ranks, one with many artifacts in one compile: at 100,000 its rank_differ table was
    // once more than the reader takes, and reading it for the closing lines failed after the swap
    // (exit 2 with the new bundle in place; exit 0 with -q, which did not read it). That size is
    // built by scripts/test-scale with the release binary; this debug build takes fewer.
    let dir = tempfile::tempdir().unwrap();
    let ranks = dir.path().join("ranks");
    std::fs::create_dir(&ranks).unwrap();
    std::fs::write(ranks.join("dedicated_log_torch_trace_rank_0.log"), artifacts_log(5_000)).unwrap();
    std::fs::write(ranks.join("dedicated_log_torch_trace_rank_1.log"), artifacts_log(10)).unwrap();
    let out = tmp_out(&dir, "b");
    assert!(run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", &out, "-q"]).status.success());
    let old = crate::util::read_tree(Path::new(&out));
    let loud = run(&[ranks.to_str().unwrap(), "-o", &out, "--overwrite"]);
    let loud_bundle = crate::util::read_tree(Path::new(&out));
    let quiet = run(&[ranks.to_str().unwrap(), "-o", &out, "--overwrite", "-q"]);
    assert_eq!(loud.status.code(), quiet.status.code(), "{}", String::from_utf8_lossy(&loud.stderr));
    if quiet.status.success() {
        assert_valid(Path::new(&out));
    } else {
        // Refused before the swap: said so, and the old bundle is still there, untouched.
        let stderr = String::from_utf8_lossy(&quiet.stderr);
        assert!(stderr.contains("does not read back") && stderr.contains("not installed"), "{stderr}");
        assert!(loud_bundle == old && crate::util::read_tree(Path::new(&out)) == old, "the old bundle was replaced");
    }
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn a_bundle_whose_check_fails_is_not_installed_and_the_old_one_stays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    crate::util::build_to(&fixture("tlparse-tests/simple.log"), &out);
    let old = crate::util::read_tree(&out);
    let options = crate::util::build_options(&fixture("tlparse-tests/comp_metrics.log"), &out);
    let tables = tlparse_build::bundle::table_files::TableOptions::default();
    let mut checked = None;
    let error = tlparse_build::bundle::build_checked(&options, &tables, |root, manifest, _| {
        // The check reads the finished bundle where it was built, not at OUT.
        checked = Some(tlparse_build::bundle::reader::Bundle::open(root).map(|b| b.manifest == *manifest));
        Err::<(), _>("made up".to_string())
    })
    .unwrap_err();
    assert_eq!(checked.map(|c| c.unwrap()), Some(true));
    assert!(error.to_string().contains("does not read back (made up); it was not installed"), "{error}");
    assert_eq!(crate::util::read_tree(&out), old);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn sigint_and_sigterm_remove_the_staging_folder_and_leave_the_old_bundle() {
    // A log a debug build takes many seconds over: one real rank log repeated.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.log");
    let one = std::fs::read(fixture("tlparse-tests/multi_rank_runtime/dedicated_log_torch_trace_rank_5.log")).unwrap();
    std::fs::write(&log, one.repeat(60)).unwrap();
    let out = tmp_out(&dir, "b");
    assert!(run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", &out, "-q"]).status.success());
    let old = crate::util::read_tree(Path::new(&out));
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_tlparse-build"))
            .args([log.to_str().unwrap(), "-o", &out, "--overwrite"])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Once the build has written into its staging folder, stop it.
        let started = std::time::Instant::now();
        let staging = dir.path().join(format!(".b.tlparse-build-{}", child.id()));
        while !staging.join(".work").exists() {
            assert!(started.elapsed().as_secs() < 60, "build never started");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(code), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains("the unfinished bundle was removed"));
        assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
        assert_eq!(crate::util::read_tree(Path::new(&out)), old);
    }
}

#[test]
fn sigint_and_sigterm_remove_the_temporary_bundles_of_compare() {
    // A trace a debug build takes many seconds over, compared with a small one: each built in a
    // temporary folder under TMPDIR.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.log");
    let one = std::fs::read(fixture("tlparse-tests/multi_rank_runtime/dedicated_log_torch_trace_rank_5.log")).unwrap();
    std::fs::write(&log, one.repeat(60)).unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let in_tmp = || std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect::<Vec<_>>();
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_tlparse-build"))
            .args(["compare", log.to_str().unwrap(), fixture("tlparse-tests/simple.log").as_str()])
            .env("TMPDIR", &tmp)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Once the first build has written into its staging folder, stop the compare.
        let started = std::time::Instant::now();
        let staging = format!(".bundle.tlparse-build-{}", child.id());
        while !in_tmp().iter().any(|t| t.join(&staging).join(".work").exists()) {
            assert!(started.elapsed().as_secs() < 60, "build never started");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(code), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(in_tmp().is_empty(), "left in TMPDIR: {:?}", in_tmp());
    }
}

/// Runs the build of `args`, its files limited to `max_file_bytes` (RLIMIT_FSIZE: a write past
/// it fails with EFBIG, as one on a full disk fails with ENOSPC, for any user); how long it took.
fn build_with_file_limit(args: &[&str], max_file_bytes: Option<u64>) -> (std::process::Output, std::time::Duration) {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tlparse-build"));
    command.args(args);
    if let Some(limit) = max_file_bytes {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit { rlim_cur: limit, rlim_max: limit };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The write then fails rather than the signal ending the process.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    let started = std::time::Instant::now();
    let output = command.output().unwrap();
    (output, started.elapsed())
}

#[test]
fn a_build_stops_at_its_first_failed_write() {
    // 20,000 compile ids: a build that could not write its index or its tables' spool went on
    // reading, and retried the spool for every compile: 75 times as long as a build that works.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("compiles.log");
    std::fs::write(&log, artifacts_in(20_000, |i| i)).unwrap();
    let (out, failing) = (tmp_out(&dir, "b"), tmp_out(&dir, "failing"));
    let (ok, works_in) = build_with_file_limit(&[log.to_str().unwrap(), "-o", &out, "-q"], None);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let (failed, fails_in) = build_with_file_limit(&[log.to_str().unwrap(), "-o", &failing, "-q"], Some(256 << 10));
    assert_eq!(failed.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains("writing ") && stderr.contains("File too large"), "{stderr}");
    assert!(fails_in * 3 < works_in, "failing took {fails_in:?}, working {works_in:?}");
    assert!(!Path::new(&failing).exists() && leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn control_characters_in_names_and_logs_never_reach_the_terminal_raw() {
    // A log whose name clears the screen and forges a line of its own, and an output named alike:
    // both printed (a warning names the log, "wrote" the output), each control escaped.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    std::fs::create_dir(&trace).unwrap();
    let evil = "evil\u{1b}[2J\nwarning: forged\u{9b}1m.log";
    std::fs::copy(fixture("tlparse-tests/simple_corrupted_json.log"), trace.join(evil)).unwrap();
    let out = tmp_out(&dir, "out\u{1b}]0;title\u{7}");
    let o = run(&[trace.to_str().unwrap(), "-o", &out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let missing = dir.path().join("missing\u{1b}[31m\nerror: forged");
    let failed = run(&[missing.to_str().unwrap(), "-o", &tmp_out(&dir, "b")]);
    assert_eq!(failed.status.code(), Some(2));
    for printed in [&o.stdout, &o.stderr, &failed.stderr] {
        let text = String::from_utf8_lossy(printed);
        assert!(!text.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{text:?}");
        assert!(!text.lines().any(|l| l.starts_with("warning: forged") || l.starts_with("error: forged")), "{text}");
    }
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("warning: evil\\u{1b}[2J\\nwarning: forged\\u{9b}1m.log:13: payload md5"), "{stderr}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("out\\u{1b}]0;title\\u{7}: 1 input(s)"));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("missing\\u{1b}[31m\\nerror: forged"));
}

#[test]
fn strict_turns_diagnostics_into_a_failing_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let bad =
        run(&[fixture("tlparse-tests/simple_corrupted_json.log").as_str(), "-o", &tmp_out(&dir, "a"), "--strict"]);
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("simple_corrupted_json.log:13: payload md5"), "{stderr}");
    assert_valid(Path::new(&tmp_out(&dir, "a")));
    let good = run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", &tmp_out(&dir, "b"), "--strict"]);
    assert_eq!(good.status.code(), Some(0));
    let not_a_log = run(&[fixture("tlparse-tests/README.md").as_str(), "-o", &tmp_out(&dir, "c")]);
    assert_eq!(not_a_log.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&not_a_log.stderr).contains("README.md is not a TORCH_TRACE log"));
}

#[test]
fn cat_prints_payloads_by_hash_and_by_compile_id_and_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    let input = fixture("tlparse-tests/simple.log");
    assert!(run(&[input.as_str(), "-o", &out]).status.success());
    assert_valid(Path::new(&out));
    // The inductor_output_code payload of [0/0], cut out of the log by hand.
    let log = std::fs::read(&input).unwrap();
    let text = String::from_utf8_lossy(&log);
    let header = text.lines().position(|l| l.contains("{\"inductor_output_code\"")).unwrap() as u64 + 1;
    let expected = payloads_of(&log).into_iter().find(|(line, _)| *line == header).unwrap().1;

    let by_name = run(&["cat", &out, "[0/0]", "inductor_output_code"]);
    assert!(by_name.status.success(), "{}", String::from_utf8_lossy(&by_name.stderr));
    assert_eq!(by_name.stdout, expected);
    let by_bare_id = run(&["cat", &out, "0/0", "fx_graph_runnable"]);
    assert!(String::from_utf8_lossy(&by_bare_id.stdout).contains("import torch"));

    let hash = blake3::hash(&expected).to_hex()[..32].to_string();
    assert_eq!(run(&["cat", &out, &hash]).stdout, expected);
    let missing = run(&["cat", &out, "[9/9]", "inductor_output_code"]);
    assert_eq!(missing.status.code(), Some(2));

    // The README's examples: a graph-break reason, and the graph of a restarted attempt.
    let demo = tmp_out(&dir, "demo");
    assert!(run(&[fixture("torch-2.15/graph_breaks").as_str(), "-o", &demo]).status.success());
    let reason = run(&["cat", &demo, "[0/0]", "dynamo_graph_break_reason"]);
    assert!(
        String::from_utf8_lossy(&reason.stdout)
            .starts_with("Graph break in user code at /home/user/scenarios/graph_breaks.py:")
    );
    let graph = run(&["cat", &demo, "[1/0_1]", "dynamo_output_graph"]);
    assert!(String::from_utf8_lossy(&graph.stdout).contains("class GraphModule(torch.nn.Module)"), "{graph:?}");
}

#[test]
fn cat_says_when_an_artifact_was_logged_without_a_payload() {
    // cache_warm's log line 918: [0/0]'s inductor_provenance_tracking_node_mappings artifact,
    // logged with `encoding: json` but no `has_payload` and no payload line.
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    assert!(run(&[fixture("torch-2.15/cache_warm").as_str(), "-o", &out, "--no-viewer"]).status.success());
    let cat = run(&["cat", &out, "[0/0]", "inductor_provenance_tracking_node_mappings"]);
    assert_eq!(cat.status.code(), Some(2));
    assert!(cat.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&cat.stderr);
    assert!(stderr.contains("was logged without a payload (stream log0, log line 918)"), "{stderr}");
}

#[test]
fn validate_reports_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    assert!(run(&[fixture("tlparse-tests/comp_metrics.log").as_str(), "-o", &out]).status.success());
    let ok = run(&["validate", &out]);
    assert!(ok.status.success());
    assert!(String::from_utf8_lossy(&ok.stdout).ends_with(": valid\n"));

    // Flip one byte of the pack, and add a stray file among the bundle's (a file beside them,
    // like a Pages site's CNAME, is not the bundle's and is passed over).
    let pack = std::fs::read_dir(Path::new(&out).join("blobs/packs")).unwrap().next().unwrap().unwrap().path();
    let mut bytes = std::fs::read(&pack).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&pack, bytes).unwrap();
    std::fs::write(Path::new(&out).join("tables/stray.txt"), "x").unwrap();
    std::fs::write(Path::new(&out).join("CNAME"), "example.com").unwrap();
    let bad = run(&["validate", &out]);
    assert_eq!(bad.status.code(), Some(1));
    let report = String::from_utf8_lossy(&bad.stdout);
    assert!(report.contains("tables/stray.txt: file is not listed in manifest.json"), "{report}");
    assert!(!report.contains("CNAME"), "{report}");
    assert!(report.contains("blake3 does not match manifest.json"), "{report}");
}

#[test]
fn a_build_prints_what_the_tables_found() {
    // The graph_breaks fixture (see tables::graph_breaks and tables::recompiles for the hand
    // counts): 27 compile ids, 10 graph breaks at 4 places, frame 6 recompiled, 10 restarts.
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    let o = run(&[fixture("torch-2.15/graph_breaks").as_str(), "-o", &out]);
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let findings = stdout.lines().find(|l| l.starts_with("  log0: ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(findings.contains("27 compile id(s)"), "{findings}");
    assert!(findings.contains("10 restarted"), "{findings}");
    assert!(findings.contains("10 graph break(s) at 4 place(s)"), "{findings}");
    assert!(findings.contains("1 frame(s) recompiled"), "{findings}");
    assert!(findings.contains("0 failed compile(s), 10 restart(s)"), "{findings}");
    let quiet = run(&[fixture("torch-2.15/graph_breaks").as_str(), "-o", &out, "--overwrite", "-q"]);
    assert!(quiet.stdout.is_empty());
}

/// The closing lines come from the tables as they finish (`build_with_findings`), not from the
/// bundle: they must equal what the written tables say, read back with the format crate's
/// reader. Run on every fixture by `build::every_fixture_builds_...`, from its one build of each;
/// `seen` counts the streams where each kind of finding was compared.
pub(crate) fn assert_findings_are_what_the_tables_say(
    trace: &camino::Utf8Path,
    out: &Path,
    manifest: &tlparse_build::schema::Manifest,
    findings: &tlparse_build::bundle::Findings,
    seen: &mut [usize; 4],
) {
    use tlparse_build::bundle::reader::Bundle;
    use tlparse_build::schema::tables::{CompileDirectory, Failures, GraphBreaks, Recompiles};
    use tlparse_bundle::Table;
    let ids: std::collections::BTreeSet<&String> = manifest.streams.iter().map(|s| &s.id).collect();
    assert_eq!(findings.keys().collect::<std::collections::BTreeSet<_>>(), ids, "{trace}: every stream's");
    let b = Bundle::open(out).unwrap();
    for s in &manifest.streams {
        let found = &findings[&s.id];
        let statuses = b.stream_table::<CompileDirectory>(&s.id).unwrap().map(|t| {
            let mut by_status = std::collections::BTreeMap::new();
            for c in t.compiles {
                *by_status.entry(serde_json::to_value(c.status).unwrap().as_str().unwrap().to_string()).or_insert(0) +=
                    1u64;
            }
            by_status
        });
        assert_eq!(found.compiles_by_status, statuses, "{trace} {}: {}", s.id, CompileDirectory::NAME);
        let breaks = b.stream_table::<GraphBreaks>(&s.id).unwrap().map(|t| (t.total, t.breaks.len() as u64));
        assert_eq!(found.graph_breaks, breaks, "{trace} {}: {}", s.id, GraphBreaks::NAME);
        let frames = b.stream_table::<Recompiles>(&s.id).unwrap().map(|t| t.frames.len() as u64);
        assert_eq!(found.recompiled_frames, frames, "{trace} {}: {}", s.id, Recompiles::NAME);
        let failures = b.stream_table::<Failures>(&s.id).unwrap().map(|t| (t.failed, t.restarts));
        assert_eq!(found.failures, failures, "{trace} {}: {}", s.id, Failures::NAME);
        let present = [statuses.is_some(), breaks.is_some(), frames.is_some(), failures.is_some()];
        for (count, present) in seen.iter_mut().zip(present) {
            *count += usize::from(present);
        }
    }
}

#[test]
fn a_build_does_not_count_a_compiled_autograd_capture_as_missing_metrics() {
    // compiled_autograd (see tables::compile_directory for the hand check): 6 compile ids, one of
    // them the capture [!0/-/-], which logs no metrics by design; [0/0] restarted once.
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    let o = run(&[fixture("torch-2.15/compiled_autograd").as_str(), "-o", &out, "--no-viewer"]);
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let findings = stdout.lines().find(|l| l.starts_with("  log0: ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(findings.contains("6 compile id(s) (1 compiled_autograd_capture, 2 empty_graph, 1 ok, "), "{findings}");
    assert!(!findings.contains("missing"), "{findings}");
    assert!(findings.contains("0 failed compile(s), 1 restart(s)"), "{findings}");
}

#[test]
fn a_build_of_many_ranks_prints_how_they_diverge() {
    // multi_rank_logs: ranks 0 and 2 compiled `fn` once as `[0/0]`, ranks 1 and 3 `kernel` 15
    // and 7 times from `[0/0]` on (see cross_rank::compile_alignment): the same `[0/0]` is two
    // functions, which the findings say by name.
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    let o = run(&[fixture("tlparse-tests/multi_rank_logs").as_str(), "-o", &out]);
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let across: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("  across 4 streams: ")).collect();
    assert_eq!(
        across[..3],
        [
            "rank 0, rank 2 compiled `fn` (test_misc.py:10755) as [0/0], which rank 1, rank 3 did not compile",
            "rank 1, rank 3 compiled `kernel` (gen_many_frames.py:6) as [0/0], which rank 0, rank 2 did not compile",
            "compiles DIVERGE (aligned by code): rank 0, rank 2 [1] vs rank 1 [15] vs rank 3 [7]",
        ],
        "{stdout}"
    );
}

#[test]
fn a_build_prints_diverging_collective_schedules() {
    // multi_rank_schedule (see cross_rank::collective_schedules): file ranks 0 and 2 schedule six
    // collectives for [0/0], file rank 1 four, and its output code has a reduce_scatter its
    // schedule lacks. All three files say rank 0 inside, so the labels come from the file names.
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    let o = run(&[fixture("tlparse-tests/multi_rank_schedule").as_str(), "-o", &out]);
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let across: Vec<&str> = stdout.lines().filter(|l| l.starts_with("  across 3 streams: ")).collect();
    assert!(
        across.contains(
            &"  across 3 streams: collective schedules DIFFER on graph_one (test2.py:28) [0/0]: rank 0, rank 2 vs rank 1"
        ),
        "{stdout}"
    );
    assert!(
        across.contains(&"  across 3 streams: scheduler/output-code collective parity fails on rank 1"),
        "{stdout}"
    );
    assert!(across.contains(&"  across 3 streams: same 2 compile(s) everywhere (aligned by code)"), "{stdout}");
    // rank_differ's counts in its own words (cross_rank::rank_differ's test checks them by hand:
    // 28 keys, 17 identical, 10 same up to ids, 1 differs), then the one real difference: rank_1's
    // log line 1086 (payload line 5) `wait_tensor` where the others' line 1086 has
    // `reduce_scatter_tensor`.
    assert!(
        across.contains(
            &"  across 3 streams: artifacts: 28 keys: 17 identical, 10 same up to ids, 1 differs, \
              0 same where present; 0 missing on some rank (rank_differ)"
        ),
        "{stdout}"
    );
    let described = across.iter().find(|l| l.contains("`inductor_collective_schedule`")).expect(&stdout);
    assert!(described.contains("differs at line 5"), "{described}");
    assert!(described.contains("wait_tensor") && described.contains("reduce_scatter_tensor"), "{described}");
}

/// A fresh bundle of `simple.log` with its manifest edited (and, like an attacker would, its
/// files' sizes and hashes left as they are).
fn tampered_bundle(dir: &tempfile::TempDir, edit: impl FnOnce(&Path, &mut serde_json::Value)) -> String {
    let out = tmp_out(dir, "b");
    assert!(run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", &out, "-q"]).status.success());
    let path = Path::new(&out).join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(Path::new(&out), &mut m);
    std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
    out
}

/// Runs `validate` and checks it exits 1 (problems found, not "cannot run", not a panic) with a
/// report holding `expected`.
fn assert_validate_reports(bundle: &str, expected: &str) {
    let o = run(&["validate", bundle]);
    let report = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{report}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(report.contains(expected), "{report}");
}

#[test]
fn validate_exits_1_on_a_manifest_nested_too_deep_or_of_the_wrong_types() {
    let dir = tempfile::tempdir().unwrap();
    let out = tampered_bundle(&dir, |_, _| {});
    std::fs::write(Path::new(&out).join("manifest.json"), "[".repeat(100_000)).unwrap();
    assert_validate_reports(&out, "manifest.json: refused: JSON nested more than 128 levels deep");

    let dir = tempfile::tempdir().unwrap();
    let out = tampered_bundle(&dir, |_, m| m["streams"][0]["entries"] = serde_json::json!("many"));
    assert_validate_reports(&out, "manifest.json: does not follow schema/manifest.schema.json");
    assert!(String::from_utf8_lossy(&run(&["validate", &out]).stdout).contains("(at /streams/0/entries)"));
}

#[test]
fn validate_checks_that_the_lite_manifest_is_the_manifests() {
    // A manifest that says one entry more than the lite manifest a viewer reads first.
    let dir = tempfile::tempdir().unwrap();
    let out = tampered_bundle(&dir, |_, m| {
        let n = m["counts"]["entries"].as_u64().unwrap();
        m["counts"]["entries"] = serde_json::json!(n + 1);
    });
    assert_validate_reports(&out, "manifest.lite.json.zst: differs from manifest.json");
    // A bundle without one.
    let dir = tempfile::tempdir().unwrap();
    let out = tampered_bundle(&dir, |root, m| {
        std::fs::remove_file(root.join("manifest.lite.json.zst")).unwrap();
        m["files"].as_array_mut().unwrap().retain(|f| f["path"] != "manifest.lite.json.zst");
    });
    assert_validate_reports(&out, "manifest.lite.json.zst: not listed in manifest.json");
    // Untouched, it is the manifest without `files`, `viewer` and the inputs' `blake3`.
    let dir = tempfile::tempdir().unwrap();
    let out = tampered_bundle(&dir, |_, _| {});
    assert!(run(&["validate", &out]).status.success());
    let read = |name: &str| std::fs::read(Path::new(&out).join(name)).unwrap();
    let mut m: serde_json::Value = serde_json::from_slice(&read("manifest.json")).unwrap();
    let lite: serde_json::Value =
        serde_json::from_slice(&zstd::decode_all(read("manifest.lite.json.zst").as_slice()).unwrap()).unwrap();
    let object = m.as_object_mut().unwrap();
    object.remove("files");
    object.remove("viewer");
    object["inputs"].as_array_mut().unwrap().iter_mut().for_each(|i| drop(i.as_object_mut().unwrap().remove("blake3")));
    assert_eq!(lite, m);
}

#[test]
fn validate_and_cat_refuse_a_pack_outside_the_bundle() {
    let dir = tempfile::tempdir().unwrap();
    // Outside the bundle: a real zstd file holding a secret, which a pack path points at.
    let secret = "SENTINEL-outside-the-bundle";
    std::fs::write(dir.path().join("secret.zst"), zstd::encode_all(secret.as_bytes(), 3).unwrap()).unwrap();
    let out = tampered_bundle(&dir, |_, m| m["blobs"]["packs"][0]["path"] = serde_json::json!("../secret.zst"));
    assert_validate_reports(&out, "../secret.zst: path is not allowed in a bundle");
    // Any blob: it lives in the only pack, which is now outside.
    let log = std::fs::read(fixture("tlparse-tests/simple.log")).unwrap();
    let hash = blake3::hash(&payloads_of(&log)[0].1).to_hex()[..32].to_string();
    let cat = run(&["cat", &out, &hash]);
    assert_eq!(cat.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&cat.stdout).contains(secret));
    assert!(String::from_utf8_lossy(&cat.stderr).contains("path is not allowed in a bundle"), "{cat:?}");
}

#[test]
fn validate_exits_1_on_a_huge_prefix_length_and_an_overflowing_pack_size() {
    let dir = tempfile::tempdir().unwrap();
    let out = tampered_bundle(&dir, |_, m| {
        m["blobs"]["index_prefix_len"] = serde_json::json!(4_000_000_000u32);
        m["blobs"]["packs"][0]["raw_size"] = serde_json::json!(u64::MAX);
    });
    assert_validate_reports(&out, "manifest.json: blobs.index_prefix_len 4000000000 is more than 8");
    assert_validate_reports(&out, "bytes decompressed, over the limit");
}

#[test]
fn validate_exits_2_only_without_a_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let empty = run(&["validate", dir.path().to_str().unwrap()]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("is not a bundle (manifest.json: missing)"), "{empty:?}");
    let missing = run(&["validate", dir.path().join("nope").to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("is not a directory"), "{missing:?}");
}

#[test]
fn a_build_of_shifted_ranks_names_the_extra_function() {
    // torch-2.15/ranks_shifted (see cross_rank::compile_alignment): rank 2 alone compiled
    // `rank_local_metric` (ranks_shifted.py:24) first, as [0/0], so its `forward` is [1/0] and
    // its `sync_grads` [2/*]; aligned by code, the ranks' sync_grads schedules are identical (an
    // all_reduce_ and its wait each time), where comparing by id reported "DIFFER on [1/0]".
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    let o = run(&[fixture("torch-2.15/ranks_shifted").as_str(), "-o", &out]);
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let across: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("  across 4 streams: ")).collect();
    assert_eq!(
        across[0],
        "rank 2 compiled `rank_local_metric` (ranks_shifted.py:24) as [0/0], which no other rank compiled; \
         its later frame ids are shifted by 1",
        "{stdout}"
    );
    assert!(!stdout.contains("collective schedules DIFFER"), "{stdout}");
    assert!(
        across.contains(
            &"cache outcomes DIFFER on 1 compile(s): forward (ranks_shifted.py:20) = [0/0] on rank 0, rank 1, rank 3; \
              [1/0] on rank 2"
        ),
        "rank 2's fx cache hit on forward (cross_rank::cache_divergence): {stdout}"
    );
}

#[test]
fn a_closed_stdout_is_not_a_crash() {
    // `tlparse-build LOG -o OUT | head -c 0`: the summary cannot be printed. That must not panic
    // ("failed printing to stdout: Broken pipe", exit 101, found by the fuzzer): the bundle is
    // built and the exit is 0.
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_out(&dir, "b");
    let script = format!(
        "'{}' '{}' -o '{out}' | head -c 0; exit ${{PIPESTATUS[0]}}",
        env!("CARGO_BIN_EXE_tlparse-build"),
        fixture("tlparse-tests/comp_metrics.log")
    );
    let o = std::process::Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    assert_valid(Path::new(&out));
}
