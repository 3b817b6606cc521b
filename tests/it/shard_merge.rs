//! `tlparse-build shard` and `merge`: shards merged give the bundle a one-run build of the same
//! logs gives, byte for byte (the manifest too); shards made on different "machines" (other
//! directories, thread counts, nested names, copied elsewhere before the merge) merge the same;
//! a missing, unfinished, damaged or foreign shard stops the merge with an error naming it, and
//! nothing is written (an old bundle at OUT stays as it was).

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use camino::Utf8PathBuf;

use tlparse_build::schema::Manifest;

use crate::util::{assert_valid, build, build_to, fixture, read_tree};

fn tlparse(args: &[&str], threads: Option<usize>, cwd: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tlparse-build"));
    command.args(args);
    if let Some(n) = threads {
        command.env("RAYON_NUM_THREADS", n.to_string());
    }
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    command.output().expect("run tlparse-build")
}

fn ok(output: Output) -> Output {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The logs of a trace directory (not recursing), sorted.
fn logs(trace: &Path) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = fs::read_dir(trace).unwrap().map(|e| e.unwrap().path()).collect();
    logs.sort();
    logs
}

/// Shards every log a build of `trace` read (`built`'s inputs) into `dir`, one shard each, named
/// after the log, and returns them.
fn shard_all(trace: &Path, built: &Manifest, dir: &Path) -> Vec<PathBuf> {
    fs::create_dir_all(dir).unwrap();
    built
        .inputs
        .iter()
        .map(|input| {
            let out = dir.join(&input.path);
            ok(tlparse(&["shard", s(&trace.join(&input.path)), "-o", s(&out)], None, None));
            out
        })
        .collect()
}

fn merge(shards: &[PathBuf], out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(|p| s(p)));
    args.extend(["-o", s(out)]);
    args.extend(extra);
    tlparse(&args, None, None)
}

/// Asserts two bundles hold the same files with the same bytes, naming the first difference.
fn assert_same_files(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) {
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "the same files");
    for (path, bytes) in a {
        assert!(bytes == &b[path], "{path} differs");
    }
}

#[test]
fn merged_shards_are_byte_identical_to_a_one_run_build() {
    // Checked by hand on multi_rank_runtime: 7 rank logs, 2985 entries in all, 594 distinct
    // payloads across ranks (ranks 0-4 log the same graphs: most of ranks 1-4's payloads are
    // rank 0's, so the merge must drop and repack chunks exactly as one build does).
    for trace in ["tlparse-tests/multi_rank_runtime", "tlparse-tests/multi_rank_logs", "torch-2.15/ranks_shifted"] {
        let tmp = tempfile::tempdir().unwrap();
        let one = tmp.path().join("one");
        let manifest = build_to(&fixture(trace), &one);
        let shards = shard_all(fixture(trace).as_std_path(), &manifest, &tmp.path().join("shards"));
        assert_eq!(shards.len(), manifest.inputs.len(), "{trace}: one shard per log");
        // Given in reverse: the merge orders shards as a build orders a trace's logs.
        let reversed: Vec<PathBuf> = shards.iter().rev().cloned().collect();
        let merged = tmp.path().join("merged");
        let out = ok(merge(&reversed, &merged, &[]));
        assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("{} shard(s)", shards.len())));
        assert_valid(&merged);
        assert_same_files(&read_tree(&one), &read_tree(&merged));
        if trace.ends_with("multi_rank_runtime") {
            assert_eq!((manifest.counts.entries, manifest.counts.unique_blobs), (2985, 594));
            assert!(manifest.counts.cross_input_saved_bytes > 0, "blobs shared across ranks");
        }
    }
}

#[test]
fn a_trace_with_other_files_merges_to_the_build_but_for_what_the_build_skipped() {
    // multi_rank_messy_input: two rank logs, `another.log` (empty) and `some_other_file.txt`
    // (not a log). The build passes over both and records them under `skipped`; shards are
    // made of logs only (`shard` refuses either), so a merge cannot know of them. Everything
    // else is equal.
    let trace = fixture("tlparse-tests/multi_rank_messy_input");
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one");
    let built = build_to(&trace, &one);
    assert_eq!(built.skipped.iter().map(|g| g.count).sum::<u64>(), 2);
    let shards = shard_all(trace.as_std_path(), &built, &tmp.path().join("shards"));
    let merged = tmp.path().join("merged");
    ok(merge(&shards, &merged, &[]));
    assert_valid(&merged);
    let (mut a, mut b) = (read_tree(&one), read_tree(&merged));
    // The manifest and the lite manifest differ in `skipped` only (and so does the manifest's
    // entry for the lite manifest, its size and hash).
    let manifest = |bytes: Vec<u8>| {
        let mut m: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let m_obj = m.as_object_mut().unwrap();
        m_obj.remove("skipped");
        if let Some(files) = m_obj.get_mut("files").and_then(|f| f.as_array_mut()) {
            files.retain(|f| f["path"] != "manifest.lite.json.zst");
        }
        m
    };
    assert_eq!(manifest(a.remove("manifest.json").unwrap()), manifest(b.remove("manifest.json").unwrap()));
    let lite = |bytes: Vec<u8>| manifest(zstd::decode_all(&bytes[..]).unwrap());
    assert_eq!(lite(a.remove("manifest.lite.json.zst").unwrap()), lite(b.remove("manifest.lite.json.zst").unwrap()));
    assert_same_files(&a, &b);
    let merged_manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(merged.join("manifest.json")).unwrap()).unwrap();
    let inputs: Vec<&str> =
        merged_manifest["inputs"].as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap()).collect();
    assert_eq!(inputs, ["dedicated_log_torch_trace_rank_0.log", "dedicated_log_torch_trace_rank_1.log"]);
}

#[test]
fn shards_from_different_machines_merge_to_the_build_of_the_whole_trace() {
    // Two "machines": each holds its node's logs under its own directory, builds its shards
    // from its own working directory with its own thread count, naming each log by its path in
    // the job's trace (`node0/…`). The shards are then copied to a third place and merged. The
    // one-run build reads the same logs laid out as one trace directory with node subfolders.
    let source = fixture("tlparse-tests/multi_rank_runtime");
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("trace");
    let mut shards = Vec::new();
    for (i, log) in logs(source.as_std_path()).iter().enumerate() {
        let node = format!("node{}", i % 2);
        let name = format!("{node}/{}", log.file_name().unwrap().to_str().unwrap());
        fs::create_dir_all(trace.join(&node)).unwrap();
        fs::copy(log, trace.join(&name)).unwrap();
        let machine = tmp.path().join(format!("machine-{node}"));
        fs::create_dir_all(machine.join("logs")).unwrap();
        let local = machine.join("logs").join(log.file_name().unwrap());
        fs::copy(log, &local).unwrap();
        let shard = format!("shard-{i}");
        let relative = format!("logs/{}", log.file_name().unwrap().to_str().unwrap());
        let args = ["shard", relative.as_str(), "-o", shard.as_str(), "--name", name.as_str()];
        ok(tlparse(&args, Some(1 + i % 2), Some(&machine)));
        let collected = tmp.path().join("collected").join(&shard);
        copy_dir(&machine.join(&shard), &collected);
        shards.push(collected);
    }
    let one = tmp.path().join("one");
    build_to(&Utf8PathBuf::from_path_buf(trace).unwrap(), &one);
    let merged = tmp.path().join("merged");
    ok(merge(&shards, &merged, &["--expect-ranks", "7"]));
    assert_valid(&merged);
    assert_same_files(&read_tree(&one), &read_tree(&merged));
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A merge that must fail: exit 2, an error naming `names`, no bundle at `out` and nothing left
/// beside it.
fn assert_refused(output: Output, out: &Path, names: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    for name in names {
        assert!(stderr.contains(name), "error names {name:?}: {stderr}");
    }
    assert!(!out.exists(), "nothing written at {out:?}");
    let leftovers: Vec<_> = fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("tlparse-build"))
        .collect();
    assert!(leftovers.is_empty(), "staging left behind: {leftovers:?}");
}

/// The shards of the multi-rank fixture, in a new temporary folder, and where a merge of them
/// may write its bundle (`outs/bundle`: the folder `outs` holds nothing else).
fn multi_rank_shards() -> (tempfile::TempDir, Vec<PathBuf>, PathBuf) {
    let trace = fixture("tlparse-tests/multi_rank_logs");
    let (_built, _, built) = build(&trace);
    let tmp = tempfile::tempdir().unwrap();
    let shards = shard_all(trace.as_std_path(), &built, &tmp.path().join("shards"));
    let out_dir = tmp.path().join("outs");
    fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("bundle");
    (tmp, shards, out)
}

#[test]
fn a_missing_unfinished_or_damaged_shard_stops_the_merge_before_anything_is_written() {
    let (tmp, shards, out) = multi_rank_shards();
    let with = |extra: PathBuf| -> Vec<PathBuf> { shards.iter().cloned().chain([extra]).collect() };

    // A shard directory that is not there.
    assert_refused(
        merge(&with(tmp.path().join("shards/rank9")), &out, &[]),
        &out,
        &["rank9", "no such shard directory"],
    );

    // A shard whose build did not finish: its directory has files but no shard.json.
    let unfinished = tmp.path().join("unfinished");
    copy_dir(&shards[0], &unfinished);
    fs::remove_file(unfinished.join("shard.json")).unwrap();
    assert_refused(merge(&with(unfinished), &out, &[]), &out, &["unfinished", "not a finished shard"]);

    // A rank the job had that no shard brings (a lost array task).
    assert_refused(merge(&shards[..3], &out, &["--expect-ranks", "4"]), &out, &["no shard has rank 3"]);

    // Damage, each in a fresh copy of shard 1: a chunk, an index file, the slots, shard.json.
    let damaged = |what: &str, edit: &dyn Fn(&Path)| {
        let copy = tmp.path().join(format!("damaged-{what}"));
        copy_dir(&shards[1], &copy);
        edit(&copy);
        let mut set = shards.clone();
        set[1] = copy;
        set
    };
    let flip = |path: &Path| {
        let mut bytes = fs::read(path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x20;
        fs::write(path, bytes).unwrap();
    };
    let manifest = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&fs::read(dir.join("shard.json")).unwrap()).unwrap()
    };
    let first_chunk = |dir: &Path| dir.join(manifest(dir)["chunks"][0]["path"].as_str().unwrap());
    let index = |dir: &Path| dir.join(manifest(dir)["streams"][0]["index"].as_str().unwrap());
    let set = damaged("chunk", &|d| flip(&first_chunk(d)));
    assert_refused(merge(&set, &out, &[]), &out, &["damaged-chunk", "damaged"]);
    let set = damaged("index", &|d| flip(&index(d)));
    assert_refused(merge(&set, &out, &[]), &out, &["damaged-index", "does not match its size and blake3"]);
    let set = damaged("slots", &|d| fs::write(d.join("slots.bin"), b"short").unwrap());
    assert_refused(merge(&set, &out, &[]), &out, &["damaged-slots", "slots.bin"]);
    let set = damaged("manifest", &|d| {
        let text = fs::read(d.join("shard.json")).unwrap();
        fs::write(d.join("shard.json"), &text[..text.len() / 2]).unwrap();
    });
    assert_refused(merge(&set, &out, &[]), &out, &["damaged-manifest", "shard.json"]);
    let set = damaged("escape", &|d| {
        let mut m = manifest(d);
        m["streams"][0]["index"] = "../../../etc/passwd".into();
        fs::write(d.join("shard.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    });
    assert_refused(merge(&set, &out, &[]), &out, &["damaged-escape"]);
    let set = damaged("version", &|d| {
        let mut m = manifest(d);
        m["generator"] = "tlparse-build 0.0.1".into();
        fs::write(d.join("shard.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    });
    assert_refused(merge(&set, &out, &[]), &out, &["damaged-version", "built by tlparse-build 0.0.1"]);
    // A table the cross-rank tables read, replaced by well-formed zstd of JSON that is not that
    // table, its size and hash rewritten to match: the hashes alone cannot vouch for a shard.
    // Replaces a file of the shard in `d` and rewrites its size and hash in shard.json.
    let forge = |d: &Path, path: &str, bytes: &[u8]| {
        let mut m = manifest(d);
        fs::write(d.join(path), bytes).unwrap();
        let entry = m["files"].as_array_mut().unwrap().iter_mut().find(|f| f["path"] == path).unwrap();
        entry["size"] = bytes.len().into();
        entry["blake3"] = blake3::hash(bytes).to_hex().as_str().into();
        fs::write(d.join("shard.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    };
    let set = damaged("table", &|d| {
        let m = manifest(d);
        let tables = m["streams"][0]["tables"].as_array().unwrap();
        let table = tables.iter().find(|t| t["name"] == "compile_directory").unwrap();
        forge(d, table["parts"][0].as_str().unwrap(), &zstd::encode_all(&b"{\"compiles\": 3}"[..], 3).unwrap());
    });
    assert_refused(merge(&set, &out, &[]), &out, &["damaged-table", "compile_directory", "does not read back"]);
    // The same with the stream's Chrome trace: gzip of a trace whose one event is not an object.
    let set = damaged("trace", &|d| {
        let m = manifest(d);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n[1]\n]}\n").unwrap();
        forge(d, m["streams"][0]["chrome_trace"].as_str().unwrap(), &gz.finish().unwrap());
    });
    assert_refused(merge(&set, &out, &[]), &out, &["damaged-trace", "trace.json.gz", "is not a Chrome trace"]);

    // Two shards of the same log name.
    assert_refused(merge(&with(shards[0].clone()), &out, &[]), &out, &["the same log name"]);

    // An old bundle at OUT stays whole when a merge over it fails.
    ok(merge(&shards, &out, &[]));
    let before = read_tree(&out);
    let set = damaged("over-old", &|d| flip(&first_chunk(d)));
    let failed = merge(&set, &out, &["--overwrite"]);
    assert_eq!(failed.status.code(), Some(2));
    assert_same_files(&before, &read_tree(&out));
    assert_valid(&out);
}

#[test]
fn a_shard_is_written_whole_or_not_at_all_and_never_over_a_directory_that_is_not_one() {
    let tmp = tempfile::tempdir().unwrap();
    let log = fixture("tlparse-tests/multi_rank_logs/dedicated_log_torch_trace_rank_0.log");
    let out = tmp.path().join("shard");
    // Not a log: refused, nothing written.
    let not_a_log = tmp.path().join("notes.txt");
    fs::write(&not_a_log, "hello\n").unwrap();
    let failed = tlparse(&["shard", s(&not_a_log), "-o", s(&out)], None, None);
    assert_eq!(failed.status.code(), Some(2));
    assert!(!out.exists());
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1, "no staging left behind");
    // A directory that is not a shard is never replaced, even with --overwrite.
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("mine.txt"), "keep").unwrap();
    let refused = tlparse(&["shard", log.as_str(), "-o", s(&out), "--overwrite"], None, None);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is not a shard"));
    assert_eq!(fs::read_to_string(out.join("mine.txt")).unwrap(), "keep");
    fs::remove_dir_all(&out).unwrap();
    // A shard is replaced only with --overwrite; the new one is whole.
    ok(tlparse(&["shard", log.as_str(), "-o", s(&out)], None, None));
    let again = tlparse(&["shard", log.as_str(), "-o", s(&out)], None, None);
    assert_eq!(again.status.code(), Some(2));
    ok(tlparse(&["shard", log.as_str(), "-o", s(&out), "--overwrite", "--name", "n/x_rank_0.log"], None, None));
    let m: serde_json::Value = serde_json::from_slice(&fs::read(out.join("shard.json")).unwrap()).unwrap();
    assert_eq!(m["input"]["name"], "n/x_rank_0.log");
    assert_eq!(m["input"]["rank_from_name"], 0);
    for bad in ["/abs.log", "../up.log", "a//b.log", ""] {
        let refused = tlparse(&["shard", log.as_str(), "-o", s(&out), "--overwrite", "--name", bad], None, None);
        assert_eq!(refused.status.code(), Some(2), "--name {bad:?}");
    }
}

/// `merge`, killed and failed after `bound` (a merge blocked on a FIFO would hang the test).
fn merge_within(shards: &[PathBuf], out: &Path, bound: std::time::Duration) -> Output {
    let mut args = vec!["merge".to_string()];
    args.extend(shards.iter().map(|p| s(p).to_string()));
    args.extend(["-o".to_string(), s(out).to_string()]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tlparse-build"))
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > bound {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("merge still running after {bound:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_shard_file_that_is_a_symlink_a_fifo_or_a_device_or_a_wrong_entries_count_stops_the_merge() {
    let (tmp, shards, out) = multi_rank_shards();
    let manifest = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&fs::read(dir.join("shard.json")).unwrap()).unwrap()
    };
    let index = manifest(&shards[1])["streams"][0]["index"].as_str().unwrap().to_string();
    let chunk = manifest(&shards[1])["chunks"][0]["path"].as_str().unwrap().to_string();
    let refused = |what: &str, edit: &dyn Fn(&Path), names: &[&str]| {
        let copy = tmp.path().join(format!("bad-{what}"));
        copy_dir(&shards[1], &copy);
        edit(&copy);
        let mut set = shards.clone();
        set[1] = copy;
        let output = merge_within(&set, &out, std::time::Duration::from_secs(30));
        assert_refused(output, &out, &[&[&*format!("bad-{what}")][..], names].concat());
    };
    // A symlink to a copy outside of the very bytes shard.json lists: followed, it would pass.
    let outside = tmp.path().join("outside.jsonl.zst");
    fs::copy(shards[1].join(&index), &outside).unwrap();
    let link_out = |d: &Path| {
        fs::remove_file(d.join(&index)).unwrap();
        std::os::unix::fs::symlink(&outside, d.join(&index)).unwrap();
    };
    refused("symlink", &link_out, &[&index, "symlink"]);
    let fifo = |d: &Path| {
        fs::remove_file(d.join(&index)).unwrap();
        let c = std::ffi::CString::new(d.join(&index).to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    };
    refused("fifo", &fifo, &[&index, "not a regular file"]);
    let zero = |d: &Path| {
        fs::remove_file(d.join(&chunk)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join(&chunk)).unwrap();
    };
    refused("dev-zero", &zero, &[&chunk, "symlink"]);
    let shard_json_to_zero = |d: &Path| {
        fs::remove_file(d.join("shard.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("shard.json")).unwrap();
    };
    refused("shard-json", &shard_json_to_zero, &["shard.json", "symlink"]);
    for (what, delta) in [("more-entries", 1i64), ("fewer-entries", -1)] {
        let lie = |d: &Path| {
            let mut m = manifest(d);
            let entries = m["streams"][0]["entries"].as_i64().unwrap();
            m["streams"][0]["entries"] = (entries + delta).into();
            fs::write(d.join("shard.json"), serde_json::to_vec(&m).unwrap()).unwrap();
        };
        refused(what, &lie, &[&index, "entries shard.json declares"]);
    }
}
