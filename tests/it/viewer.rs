//! The reference viewer shipped in every bundle: exactly `index.html` and `viewer/` of
//! viewers/reference-html/ (its zstd decoder, fzstd.js, included), byte for byte; left out by
//! `--no-viewer`.

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
    expected.sort();
    assert_eq!(shipped, expected);
    assert!(shipped.contains(&"viewer/fzstd.js".to_string()), "the viewer's zstd decoder is shipped");
    for f in &expected {
        assert_eq!(std::fs::read(out.join(f)).unwrap(), std::fs::read(source.join(f)).unwrap(), "{f} differs");
    }
    // The viewer is not part of the format: the manifest does not list it.
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(!manifest.contains("\"index.html\"") && !manifest.contains("viewer/"));
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
}

#[test]
fn validate_still_rejects_stray_files_outside_the_viewer() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    assert!(run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", out.to_str().unwrap()]).status.success());
    std::fs::write(out.join("viewer.html"), "stray").unwrap();
    std::fs::write(out.join("viewerx"), "stray").unwrap();
    let o = run(&["validate", out.to_str().unwrap()]);
    assert!(!o.status.success());
    let report = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        report.contains("viewer.html: file is not listed") && report.contains("viewerx: file is not listed"),
        "{report}"
    );
}
