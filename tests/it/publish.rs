//! `publish` to a local directory (the GitHub Pages layout), and the content type and cache
//! policy of every file of a real bundle. The bucket destinations are tested end to end against
//! a real S3 API server by tests/share/run.sh.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use tlparse_build::media;

use crate::util::{assert_valid, build, fixture, read_tree, run};

const RANKS: &str = "torch-2.15/ranks_shifted";

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn publish(bundle: &Path, dest: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["publish", bundle.to_str().unwrap(), dest.to_str().unwrap()];
    args.extend_from_slice(extra);
    run(&args)
}

/// Every file with its (inode, mtime in ns): a file rewritten, even with the same bytes, changes.
fn stamps(root: &Path) -> BTreeMap<String, (u64, i64, i64)> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let m = e.metadata().unwrap();
            let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
            (rel, (m.ino(), m.mtime(), m.mtime_nsec()))
        })
        .collect()
}

/// A file of a Pages site that no bundle lists: a publish never deletes it.
const CNAME: &[u8] = b"traces.example.org\n";

/// The two-rank bundle and simple's, built side by side, and the Pages directory `site` where
/// the two-rank one is published: (dir, ranks, simple, site).
fn ranks_published_and_simple_beside() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let (dir, ranks, _) = build(&fixture(RANKS));
    let simple = dir.path().join("simple");
    crate::util::build_to(&fixture("torch-2.15/simple"), &simple);
    let site = dir.path().join("site");
    assert!(publish(&ranks, &site, &[]).status.success());
    (dir, ranks, simple, site)
}

/// How many files of the bundle `old` the bundle `new` does not have.
fn files_only_in(old: &Path, new: &Path) -> usize {
    let new_files = read_tree(new);
    read_tree(old).keys().filter(|p| !new_files.contains_key(*p)).count()
}

/// Publishes `simple` over `site` with `--replace`: the `old_only` files of the bundle there are
/// deleted, the CNAME kept, and the site (the CNAME aside) validates. Returns what it printed.
fn assert_replaced_keeping_the_cname(simple: &Path, site: &Path, old_only: usize) -> std::process::Output {
    let replaced = publish(simple, site, &["--replace"]);
    assert!(replaced.status.success(), "{}", stderr(&replaced));
    assert!(stdout(&replaced).contains(&format!(", {old_only} old file(s) deleted")), "{}", stdout(&replaced));
    let mut expected = pages_tree(simple);
    expected.insert("CNAME".into(), CNAME.to_vec());
    assert_eq!(read_tree(site), expected);
    std::fs::remove_file(site.join("CNAME")).unwrap(); // not the bundle's
    assert_valid(site);
    replaced
}

/// The bundle's files plus the `.nojekyll` a Pages directory gets.
fn pages_tree(bundle: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut tree = read_tree(bundle);
    tree.insert(".nojekyll".into(), Vec::new());
    tree
}

#[test]
fn every_file_of_a_real_bundle_gets_its_type_and_cache_policy() {
    let (_dir, _out, manifest) = build(&fixture(RANKS));
    assert!(!manifest.blobs.packs.is_empty());
    for pack in &manifest.blobs.packs {
        assert_eq!(media::cache_control(&pack.path), media::IMMUTABLE, "{}", pack.path);
        assert_eq!(media::data_content_type(&pack.path), "application/zstd", "{}", pack.path);
    }
    let packs: Vec<&str> = manifest.blobs.packs.iter().map(|p| p.path.as_str()).collect();
    let data_types = ["application/json", "application/jsonl", "application/zstd", "application/gzip"];
    for f in &manifest.files {
        let ty = media::data_content_type(&f.path);
        assert!(data_types.contains(&ty), "{}: {ty}", f.path);
        if !packs.contains(&f.path.as_str()) {
            assert_eq!(media::cache_control(&f.path), media::REVALIDATE, "{}", f.path);
        }
    }
    assert_eq!(media::cache_control("manifest.json"), media::REVALIDATE);
    let viewer = manifest.viewer.as_ref().expect("the bundle ships a viewer");
    for f in viewer {
        assert_eq!(media::cache_control(&f.path), media::REVALIDATE, "{}", f.path);
        let expected = match f.path.rsplit('.').next().unwrap() {
            "html" => "text/html; charset=utf-8",
            "js" | "mjs" => "text/javascript; charset=utf-8",
            "css" => "text/css; charset=utf-8",
            other => panic!("{}: a viewer file of an unexpected kind ({other})", f.path),
        };
        assert_eq!(media::content_type(&f.path), expected, "{}", f.path);
    }
}

#[test]
fn a_directory_gets_the_pages_layout_and_a_second_publish_writes_nothing() {
    let (dir, bundle, manifest) = build(&fixture(RANKS));
    let site = dir.path().join("site");
    let first = publish(&bundle, &site, &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let files = manifest.files.len() + manifest.viewer.as_ref().unwrap().len() + 1;
    assert!(stdout(&first).contains(&format!(": {files} file(s) uploaded (")), "{}", stdout(&first));
    assert!(stdout(&first).contains(", 0 already there, 0 old file(s) deleted"), "{}", stdout(&first));
    assert!(stdout(&first).contains(&format!("open:       tlparse-build serve {}", site.display())));
    assert_eq!(read_tree(&site), pages_tree(&bundle), "the directory is the bundle plus .nojekyll");
    assert_valid(&site);
    // Written in order: every file, then the lite manifest a viewer reads first, then the manifest
    // (by mtime; files written within one clock tick tie).
    let written = stamps(&site);
    let at = |p: &str| (written[p].1, written[p].2);
    let lite = at("manifest.lite.json.zst");
    let others = written.keys().filter(|p| !p.starts_with("manifest.") && *p != ".nojekyll").map(|p| at(p));
    assert!(others.max().unwrap() <= lite && lite <= at("manifest.json"), "{written:?}");

    let before = stamps(&site);
    let second = publish(&bundle, &site, &[]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stdout(&second).contains(&format!(": 0 file(s) uploaded (0 B), {files} already there")),
        "{}",
        stdout(&second)
    );
    assert_eq!(stamps(&site), before, "a second publish rewrote files");
}

#[test]
fn a_different_bundle_is_refused_and_replace_swaps_it_leaving_other_files() {
    let (_dir, ranks, simple, site) = ranks_published_and_simple_beside();
    std::fs::write(site.join("CNAME"), CNAME).unwrap();
    let before = read_tree(&site);

    let refused = publish(&simple, &site, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("already holds a different bundle; nothing was published. Pass --replace"));
    assert_eq!(read_tree(&site), before, "a refused publish changed the directory");

    let old_only = files_only_in(&ranks, &simple);
    let replaced = assert_replaced_keeping_the_cname(&simple, &site, old_only);
    assert!(stdout(&replaced).contains("replaced the bundle there"), "{}", stdout(&replaced));
}

#[test]
fn a_damaged_bundle_is_refused_before_anything_is_written() {
    let (dir, bundle, manifest) = build(&fixture("torch-2.15/simple"));
    let pack = bundle.join(&manifest.blobs.packs[0].path);
    let mut bytes = std::fs::read(&pack).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&pack, bytes).unwrap();
    let site = dir.path().join("site");
    let out = publish(&bundle, &site, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("does not validate ("), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing was published"), "{}", stderr(&out));
    assert!(!site.exists(), "a refused publish created the destination");
}

#[test]
fn a_symlink_in_the_destination_is_never_followed() {
    let (dir, bundle, _) = build(&fixture("torch-2.15/simple"));
    let site = dir.path().join("site");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, site.join("blobs")).unwrap();
    let out = publish(&bundle, &site, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is a symlink; refusing to follow it"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "a file was written through the symlink");
    assert!(!site.join("manifest.json").exists());
}

#[test]
fn replace_deletes_only_inside_the_destination_whatever_the_old_manifest_lists() {
    let (dir, bundle, _) = build(&fixture("torch-2.15/simple"));
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(dir.path().join("victim"), "keep me").unwrap();
    let hostile = r#"{"files": [{"path": "../victim"}, {"path": "/etc/hostname"}, {"path": "a/../../victim"}]}"#;
    std::fs::write(site.join("manifest.json"), hostile).unwrap();
    let out = publish(&bundle, &site, &["--replace"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(", 0 old file(s) deleted"), "{}", stdout(&out));
    assert_eq!(std::fs::read(dir.path().join("victim")).unwrap(), b"keep me");
    assert_valid(&site);
}

#[test]
fn files_left_by_an_interrupted_publish_are_deleted_by_the_next_even_without_replace() {
    let (_dir, ranks, simple, site) = ranks_published_and_simple_beside();
    // What a --replace publish stopped after deleting the old manifest leaves.
    std::fs::remove_file(site.join("manifest.json")).unwrap();
    std::fs::write(site.join("CNAME"), CNAME).unwrap();
    // Files in a bundle's folders but of no shape a bundle writes: not a bundle's, kept.
    std::fs::write(site.join("blobs/README.md"), "mine").unwrap();
    std::fs::create_dir_all(site.join("notes/blobs")).unwrap();
    std::fs::write(site.join("notes/blobs/x.zst"), "mine").unwrap();
    let old_only = files_only_in(&ranks, &simple);

    // Temporary files of a directory publish that was killed: removed too, and not counted.
    std::fs::write(site.join(".manifest.json.publish-4242"), "{").unwrap();
    std::fs::write(site.join("blobs/packs/.0123.zst.publish-4242"), "x").unwrap();
    let out = publish(&simple, &site, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!(", {old_only} old file(s) deleted")), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(&format!("note: {old_only} of the old file(s) deleted were left by an earlier")),
        "{}",
        stdout(&out)
    );
    let mut expected = pages_tree(&simple);
    expected.insert("CNAME".into(), CNAME.to_vec());
    expected.insert("blobs/README.md".into(), b"mine".to_vec());
    expected.insert("notes/blobs/x.zst".into(), b"mine".to_vec());
    assert_eq!(read_tree(&site), expected);
}

#[test]
fn a_republish_puts_a_corrupted_file_right() {
    let (dir, bundle, manifest) = build(&fixture("torch-2.15/simple"));
    let site = dir.path().join("site");
    assert!(publish(&bundle, &site, &[]).status.success());
    let pack = site.join(&manifest.blobs.packs[0].path);
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&pack, bytes).unwrap();
    let again = publish(&bundle, &site, &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stdout(&again).contains(": 1 file(s) uploaded ("), "{}", stdout(&again));
    assert_eq!(read_tree(&site), pages_tree(&bundle));
}

#[test]
fn a_viewer_other_than_ours_is_published_with_a_note() {
    let (dir, bundle, _) = build(&fixture("torch-2.15/simple"));
    let site = dir.path().join("site");
    let ours = publish(&bundle, &site, &[]);
    assert!(ours.status.success(), "{}", stderr(&ours));
    assert!(!stdout(&ours).contains("note: the bundle's viewer"), "{}", stdout(&ours));

    // A bundle whose author changed its viewer, manifest and all: it validates.
    let page = b"<!doctype html><title>another viewer</title>\n";
    std::fs::write(bundle.join("index.html"), page).unwrap();
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("manifest.json")).unwrap()).unwrap();
    let entry = manifest["viewer"].as_array_mut().unwrap().iter_mut().find(|f| f["path"] == "index.html").unwrap();
    *entry = serde_json::to_value(tlparse_build::schema::ViewerFile::of("index.html", page)).unwrap();
    std::fs::write(bundle.join("manifest.json"), serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    assert_valid(&bundle);
    let other = dir.path().join("other");
    let out = publish(&bundle, &other, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("note: the bundle's viewer is not the one this tlparse-build ships"),
        "{}",
        stdout(&out)
    );
    assert_eq!(std::fs::read(other.join("index.html")).unwrap(), page);
    assert_valid(&other);
}

#[test]
fn validation_accepts_an_empty_nojekyll_and_nothing_else_unlisted() {
    let (_dir, bundle, _) = build(&fixture("torch-2.15/simple"));
    let problems = |b: &Path| tlparse_bundle::validate::validate(tlparse_bundle::DirSource::new(b)).unwrap();
    std::fs::write(bundle.join(".nojekyll"), "").unwrap();
    assert_eq!(problems(&bundle), Vec::<String>::new());
    std::fs::write(bundle.join(".nojekyll"), "theme: x\n").unwrap();
    assert_eq!(problems(&bundle), vec![".nojekyll: file is not listed in manifest.json".to_string()]);
    std::fs::write(bundle.join(".nojekyll"), "").unwrap();
    std::fs::write(bundle.join("tables/.nojekyll"), "").unwrap();
    assert_eq!(problems(&bundle), vec!["tables/.nojekyll: file is not listed in manifest.json".to_string()]);
}

#[test]
fn a_nojekyll_symlink_is_never_written_through() {
    let (dir, bundle, _) = build(&fixture("torch-2.15/simple"));
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(dir.path().join("precious"), "keep").unwrap();
    std::os::unix::fs::symlink(dir.path().join("precious"), site.join(".nojekyll")).unwrap();
    let out = publish(&bundle, &site, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(".nojekyll: there, and not a plain file"), "{}", stderr(&out));
    assert_eq!(std::fs::read(dir.path().join("precious")).unwrap(), b"keep");
    assert!(!site.join("manifest.json").exists(), "the manifest was written after a failure");
}

#[test]
fn a_password_in_the_endpoint_url_is_never_printed() {
    let (_dir, bundle, _) = build(&fixture("tlparse-tests/simple.log"));
    // Nothing listens there: the publish fails, and its error quotes the endpoint's URL.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tlparse-build"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("AWS_") {
            command.env_remove(name);
        }
    }
    let out = command
        .args(["publish", bundle.to_str().unwrap(), "s3://bucket/prefix"])
        .env("AWS_ENDPOINT_URL", format!("http://admin:hunter2secret@127.0.0.1:{port}"))
        .envs([("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE0001"), ("AWS_SECRET_ACCESS_KEY", "not-a-real-secret")])
        .envs([("AWS_REGION", "us-east-1"), ("AWS_ALLOW_HTTP", "true")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = stderr(&out);
    assert!(stderr.contains(&format!("http://[redacted]@127.0.0.1:{port}/")), "{stderr}");
    assert!(!stderr.contains("hunter2secret") && !stderr.contains("not-a-real-secret"), "{stderr}");
}
