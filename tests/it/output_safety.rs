//! What a build does around OUT (issue #16, items 7, 10 and 14): `--overwrite` replaces only
//! what a bundle wrote, a failed or killed swap leaves the old bundle, staging directories of
//! crashed builds are removed, and a full disk is reported as the output's problem.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use camino::Utf8PathBuf;
use tlparse_build::bundle::output::{self, Staging, Target};
use tlparse_build::bundle::{self, BuildOptions};

use crate::util::{assert_valid, fixture, read_tree, run};

/// Files a GitHub Pages directory holds besides a bundle.
const FOREIGN: [(&str, &str); 5] = [
    ("CNAME", "traces.example.org\n"),
    ("notes.md", "# what we found\n"),
    (".git/HEAD", "ref: refs/heads/main\n"),
    (".git/objects/ab/cdef", "blob"),
    (".nojekyll", ""),
];

fn utf8(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Builds `input` into `out` in this process and validates the bundle.
fn build_to(input: &str, out: &Path, viewer: bool) {
    let options = BuildOptions {
        input: fixture(input),
        output: Utf8PathBuf::from_path_buf(out.to_owned()).unwrap(),
        overwrite: false,
        latest: false,
        progress: false,
        viewer,
        max_line: bundle::DEFAULT_MAX_LINE,
    };
    bundle::build(&options).unwrap_or_else(|e| panic!("building {input}: {e}"));
    assert_valid(out);
}

fn copy_tree(from: &Path, to: &Path) {
    for item in walkdir::WalkDir::new(from) {
        let item = item.unwrap();
        let target = to.join(item.path().strip_prefix(from).unwrap());
        if item.file_type().is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else {
            fs::copy(item.path(), &target).unwrap();
        }
    }
}

fn write_foreign(out: &Path) {
    for (path, text) in FOREIGN {
        let file = out.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }
}

/// `tree` with the foreign files added.
fn with_foreign(mut tree: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    tree.extend(FOREIGN.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())));
    tree
}

/// What builds into any output left in `dir`: staging directories and backups.
fn leftovers(dir: &Path) -> Vec<String> {
    let names = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
    names.filter(|n| n.contains(".tlparse-build-")).collect()
}

fn problems(out: &Path) -> Vec<String> {
    tlparse_bundle::validate::validate(tlparse_bundle::DirSource::new(out)).unwrap()
}

/// Takes the lock a running build holds on its staging directory or backup.
fn hold_lock(dir: &Path) -> fs::File {
    let file = fs::File::open(dir).unwrap();
    // SAFETY: flock reads only the descriptor, which `file` keeps open.
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }, 0);
    file
}

#[test]
fn the_names_a_bundle_writes_come_from_the_format_and_the_viewer() {
    let names: Vec<String> = output::root_names().into_iter().collect();
    // The format crate's list, which `validate` uses, is the same.
    assert_eq!(names, tlparse_build::bundle::paths::ROOT_NAMES);
    // A bundle with every kind of file (cross-rank tables, the viewer) writes under these only.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    build_to("tlparse-tests/multi_rank_logs", &out, true);
    for entry in fs::read_dir(&out).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(names.contains(&name), "{name} is not among {names:?}");
    }
}

#[test]
fn overwrite_keeps_the_files_a_bundle_did_not_write() {
    // Checked by hand: a Pages directory (CNAME, notes, .git, .nojekyll) holding a 4-rank bundle,
    // rebuilt from simple.log: `ls -a` showed the foreign entries and the new bundle only, and
    // `validate` passed (the foreign entries are beside the bundle's names, not in them).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let old = run(&[fixture("tlparse-tests/multi_rank_logs").as_str(), "-o", utf8(&out)]);
    assert!(old.status.success(), "{}", stderr(&old));
    write_foreign(&out);
    let input = fixture("tlparse-tests/simple.log");
    let rebuilt = run(&[input.as_str(), "-o", utf8(&out), "--overwrite"]);
    assert!(rebuilt.status.success(), "{}", stderr(&rebuilt));

    // OUT is the new bundle, byte for byte as built into an empty directory, plus the foreign
    // files untouched; nothing of the old bundle is left (it had rank1's index).
    let fresh = dir.path().join("fresh");
    assert!(run(&[input.as_str(), "-o", utf8(&fresh)]).status.success());
    assert_valid(&fresh);
    assert_eq!(read_tree(&out), with_foreign(read_tree(&fresh)));
    assert!(!out.join("index/rank1.jsonl.zst").exists());
    // The bundle validates: the foreign files are beside the names a bundle writes.
    assert_eq!(problems(&out), Vec::<String>::new());
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn overwrite_refuses_a_bundle_holding_a_file_it_did_not_write_and_changes_nothing() {
    // Checked by hand: with `tables/my-notes.txt` in a bundle, `--overwrite` printed
    // "error: .../tables/my-notes.txt: not a file of the bundle it is in ..." and left every file.
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("tlparse-tests/simple.log");
    // (what is planted, whether the bundle ships the viewer); the last: a bundle without the
    // viewer in a directory with the user's own index.html.
    let cases =
        [("tables/my-notes.txt", true), ("viewer/custom.css", true), ("stacks/link", true), ("index.html", false)];
    for (i, (foreign, viewer)) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("b{i}"));
        build_to("tlparse-tests/comp_metrics.log", &out, viewer);
        plant(&out.join(foreign));
        let before = read_tree(&out);
        let refused = run(&[input.as_str(), "-o", utf8(&out), "--overwrite"]);
        assert_eq!(refused.status.code(), Some(2), "{foreign}");
        let named = format!("{}: not a file of the bundle it is in", out.join(foreign).display());
        assert!(stderr(&refused).contains(&named), "{foreign}: {}", stderr(&refused));
        assert_eq!(read_tree(&out), before, "{foreign}");
        assert!(fs::symlink_metadata(out.join(foreign)).is_ok(), "{foreign}");
        // The old bundle itself is intact.
        fs::remove_file(out.join(foreign)).unwrap();
        assert_valid(&out);
    }
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

/// A file the user put at `path`; a symlink where its name says so.
fn plant(path: &Path) {
    if path.ends_with("link") {
        std::os::unix::fs::symlink("../../elsewhere", path).unwrap();
    } else {
        fs::write(path, "mine").unwrap();
    }
}

/// An old bundle (4 ranks, no viewer) at `parent/b` with the foreign files, and the new one
/// (simple.log, with the viewer) staged next to it as a killed build would have left it.
struct SwapCase {
    parent: PathBuf,
    out: PathBuf,
    staged: PathBuf,
}

/// The two bundles, built once: (old, new).
fn swap_bundles(dir: &Path) -> (PathBuf, PathBuf) {
    let (old, new) = (dir.join("old"), dir.join("new"));
    build_to("tlparse-tests/multi_rank_logs", &old, false);
    build_to("tlparse-tests/simple.log", &new, true);
    (old, new)
}

fn swap_case(parent: PathBuf, old: &Path, new: &Path) -> SwapCase {
    let out = parent.join("b");
    copy_tree(old, &out);
    write_foreign(&out);
    let staged = parent.join(".b.tlparse-build-4242");
    copy_tree(new, &staged);
    SwapCase { parent, out, staged }
}

/// The renames of a swap of `old` by `new`: the old manifest, the old entries, the new
/// manifest's copy, the new entries, the new manifest.
fn swap_steps(old: &Path, new: &Path) -> usize {
    fs::read_dir(old).unwrap().count() + 1 + fs::read_dir(new).unwrap().count()
}

#[test]
fn a_failed_swap_puts_the_old_bundle_back_whichever_step_fails() {
    // Nothing makes a rename fail for root at a chosen step (permissions do not stop root), so
    // the swap's rename is injected: the real `fs::rename`, failing at step k, for every k.
    // Checked by hand: the error names OUT and the failed step ("moving .../b/index to ...").
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = swap_bundles(dir.path());
    let steps = swap_steps(&old, &new);
    for k in 0..=steps {
        let case = swap_case(dir.path().join(format!("k{k}")), &old, &new);
        let mut calls = 0;
        let mut rename = |from: &Path, to: &Path| {
            calls += 1;
            if calls - 1 == k { Err(io::Error::other("injected failure")) } else { fs::rename(from, to) }
        };
        let target = Target::new(&Utf8PathBuf::from_path_buf(case.out.clone()).unwrap()).unwrap();
        let result = output::swap(&case.staged, &target, &mut rename);
        if k == steps {
            // No step failed: OUT is the new bundle, with the foreign files kept.
            assert!(result.is_ok(), "{result:?}");
            assert_eq!(read_tree(&case.out), with_foreign(read_tree(&new)));
        } else {
            let message = result.expect_err("a step failed").to_string();
            assert!(message.starts_with(&format!("{}: replacing the old bundle failed", case.out.display())));
            assert!(
                message.contains("injected failure") && message.ends_with("the old bundle is back in place"),
                "{message}"
            );
            assert_eq!(read_tree(&case.out), with_foreign(read_tree(&old)), "failing step {k}");
        }
        assert_eq!(leftovers(&case.parent), [".b.tlparse-build-4242"], "step {k}: only the staging is left");
    }
}

#[test]
fn a_swap_whose_undoing_fails_too_is_undone_by_the_next_build() {
    // The first new entry fails to move in, and so does the first old entry moved back: the old
    // bundle stays in the backup, OUT without a manifest. Checked by hand: the error names both
    // failed steps, the backup where the old bundle is kept, and says the next build puts it back.
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = swap_bundles(dir.path());
    let case = swap_case(dir.path().join("case"), &old, &new);
    let first_new_entry = fs::read_dir(&old).unwrap().count() + 1;
    let mut calls = 0;
    let mut rename = |from: &Path, to: &Path| {
        calls += 1;
        if calls - 1 == first_new_entry || calls - 1 == first_new_entry + 1 {
            Err(io::Error::other("injected failure"))
        } else {
            fs::rename(from, to)
        }
    };
    let target = Target::new(&Utf8PathBuf::from_path_buf(case.out.clone()).unwrap()).unwrap();
    let message = output::swap(&case.staged, &target, &mut rename).unwrap_err().to_string();
    assert!(message.contains("putting the old bundle back failed too"), "{message}");
    assert!(message.contains(&format!(".b.tlparse-build-old-{}", std::process::id())), "{message}");
    assert!(!case.out.join("manifest.json").exists());

    let next = run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", utf8(&case.out)]);
    assert_eq!(next.status.code(), Some(2));
    assert!(stderr(&next).contains("already exists; pass --overwrite"), "{}", stderr(&next));
    assert_eq!(read_tree(&case.out), with_foreign(read_tree(&old)));
    assert!(leftovers(&case.parent).is_empty(), "{:?}", leftovers(&case.parent));
}

#[test]
fn a_build_killed_after_any_step_of_a_swap_is_undone_by_the_next_build() {
    // A kill -9 cannot be aimed at one step of a real swap, so the state it would leave is
    // copied after each step of a real swap (in-process, injected rename), then handed to a
    // real build. Until the new manifest is in place, the next build puts the old bundle back;
    // after it, the new bundle stays; either way the backup and the staging are removed, and
    // the foreign files kept. Checked by hand for the step after the new manifest's copy: OUT
    // held no bundle entry, the backup all of the old ones and `.new-manifest.json`.
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = swap_bundles(dir.path());
    let steps = swap_steps(&old, &new);
    let case = swap_case(dir.path().join("live"), &old, &new);
    let mut snapshots = Vec::new();
    let mut rename = |from: &Path, to: &Path| {
        fs::rename(from, to)?;
        let killed = dir.path().join(format!("killed-after-{}", snapshots.len()));
        copy_tree(&case.parent, &killed);
        snapshots.push(killed);
        Ok(())
    };
    let target = Target::new(&Utf8PathBuf::from_path_buf(case.out.clone()).unwrap()).unwrap();
    output::swap(&case.staged, &target, &mut rename).unwrap();
    assert_eq!(snapshots.len(), steps);
    for (k, killed) in snapshots.iter().enumerate() {
        let out = killed.join("b");
        let next = run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", utf8(&out)]);
        assert_eq!(next.status.code(), Some(2), "after step {k}: {}", stderr(&next));
        assert!(stderr(&next).contains("already exists; pass --overwrite"), "after step {k}: {}", stderr(&next));
        let expected = if k + 1 == steps { &new } else { &old };
        assert_eq!(read_tree(&out), with_foreign(read_tree(expected)), "after step {k}");
        assert!(leftovers(killed).is_empty(), "after step {k}: {:?}", leftovers(killed));
    }
}

#[test]
fn a_build_removes_abandoned_staging_directories_but_not_those_in_use() {
    // Checked by hand: with a shell holding `flock` on a staging directory, a build left it;
    // once the shell exited, the next build removed it.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let make = |name: &str| {
        let path = dir.path().join(name);
        fs::create_dir(&path).unwrap();
        fs::write(path.join("junk"), "half a bundle").unwrap();
        path
    };
    let abandoned = [make(".b.tlparse-build-77777"), make(".b.tlparse-build-old-77778")];
    let in_use = [make(".b.tlparse-build-88888"), make(".b.tlparse-build-old-88889")];
    // Not a build's, or another output's: never touched.
    let others = [make(".bb.tlparse-build-1"), make(".b.tlparse-build-notes"), make(".b.tlparse-build-old-1x")];
    fs::write(dir.path().join(".b.tlparse-build-55555"), "a file").unwrap();
    let locks: Vec<fs::File> = in_use.iter().map(|d| hold_lock(d)).collect();

    let input = fixture("tlparse-tests/comp_metrics.log");
    let first = run(&[input.as_str(), "-o", utf8(&out)]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_valid(&out);
    for d in &abandoned {
        assert!(!d.exists(), "{d:?} should be removed");
    }
    for d in in_use.iter().chain(&others) {
        assert!(d.join("junk").exists(), "{d:?} should be kept");
    }
    assert!(dir.path().join(".b.tlparse-build-55555").is_file());

    drop(locks);
    let second = run(&[input.as_str(), "-o", utf8(&out), "--overwrite"]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert_valid(&out);
    for d in &in_use {
        assert!(!d.exists(), "{d:?} should be removed once unlocked");
    }
    for d in &others {
        assert!(d.join("junk").exists(), "{d:?} should be kept");
    }
}

#[test]
fn a_build_killed_mid_way_leaves_a_staging_directory_the_next_build_removes() {
    // Checked by hand: the 10-fold log takes about 4 s to build (debug); killed with kill -9 half
    // a second in, its staging directory stayed until the next build into the same OUT.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.log");
    let one = fs::read(fixture("tlparse-tests/multi_rank_logs/dedicated_log_torch_trace_rank_1.log")).unwrap();
    fs::write(&log, one.repeat(10)).unwrap();
    let out = dir.path().join("b");
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_tlparse-build")).args([utf8(&log), "-o", utf8(&out)]).spawn().unwrap();
    while leftovers(dir.path()).is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "the build ended before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL: no destructor runs.
    child.wait().unwrap();
    assert_eq!(leftovers(dir.path()).len(), 1, "the killed build's staging directory");
    assert!(!out.exists());

    let next = run(&[fixture("tlparse-tests/comp_metrics.log").as_str(), "-o", utf8(&out)]);
    assert!(next.status.success(), "{}", stderr(&next));
    assert_valid(&out);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn a_panicking_build_removes_its_staging_directory() {
    // The profile unwinds on panic (Cargo.toml sets no `panic = "abort"`), so the staging guard's
    // Drop runs; a kill -9 is the case left to the next build's clean-up (test above).
    let dir = tempfile::tempdir().unwrap();
    let target = Target::new(&Utf8PathBuf::from_path_buf(dir.path().join("b")).unwrap()).unwrap();
    let panicked = std::panic::catch_unwind(|| {
        let staging = Staging::create(&target).unwrap();
        fs::create_dir(staging.path().join("index")).unwrap();
        fs::write(staging.path().join("index/rank0.jsonl.zst"), "half written").unwrap();
        std::panic::panic_any(staging.path().to_owned());
    });
    let staging: PathBuf = *panicked.unwrap_err().downcast().unwrap();
    assert!(staging.starts_with(dir.path()));
    assert!(!staging.exists());
    assert!(leftovers(dir.path()).is_empty());
}

/// Runs a build whose files may not grow past `limit` bytes, as on a full disk: writes fail
/// with EFBIG (SIGXFSZ ignored, so the process is not killed by it).
fn run_with_file_size_limit(args: &[&str], limit: u64) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tlparse-build"));
    command.args(args);
    // SAFETY: between fork and exec only async-signal-safe calls (setrlimit, signal).
    unsafe {
        command.pre_exec(move || {
            let rlimit = libc::rlimit { rlim_cur: limit, rlim_max: limit };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &rlimit) != 0 {
                return Err(io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    command.output().unwrap()
}

#[test]
fn a_full_disk_is_reported_on_the_output_and_the_old_bundle_stays() {
    // Checked by hand (ulimit -f with SIGXFSZ ignored, simple.log): at 4 KiB the first write of
    // reading the log fails, at 16 KiB a later write; neither may be blamed on the log or on the
    // staging directory's name. Both say "error: writing <OUT>: File too large (os error 27)".
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let input = fixture("tlparse-tests/simple.log");
    build_to("tlparse-tests/comp_metrics.log", &out, true);
    let before = read_tree(&out);
    for limit in [4 << 10, 16 << 10] {
        let full = run_with_file_size_limit(&[input.as_str(), "-o", utf8(&out), "--overwrite"], limit);
        assert_eq!(full.status.code(), Some(2), "limit {limit}: {}", stderr(&full));
        let message = stderr(&full);
        assert!(message.contains(&format!("error: writing {}: File too large", out.display())), "{message}");
        assert!(!message.contains("simple.log"), "{message}");
        assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
        assert_eq!(read_tree(&out), before);
        assert_valid(&out);
    }
}
