//! Embeds the reference viewer (`viewers/reference-html/`) in the binary, with the shared loader
//! (`viewers/bundle-loader/src/bundle-loader.js`) as its `viewer/bundle-loader.js`: the one copy of
//! the loader a bundle ships is made here, never by hand. Plain files only: the viewer has no build
//! step, so building needs nothing but the stock Rust toolchain.
//!
//! Writes `$OUT_DIR/viewer_files.rs`: a sorted list of `(path in the bundle, bytes)` that
//! `src/viewer.rs` includes. Sorted so bundles stay byte-identical across builds.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

const VIEWER_DIR: &str = "viewers/reference-html";
/// The shared loader, written into every bundle as `viewer/bundle-loader.js`.
const LOADER: &str = "viewers/bundle-loader/src/bundle-loader.js";

fn main() {
    let root = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo::rerun-if-changed={VIEWER_DIR}");
    println!("cargo::rerun-if-changed={LOADER}");

    // Only the entry page and viewer/ are shipped: they are the paths `validate` knows to skip.
    let viewer = root.join(VIEWER_DIR);
    let mut files: Vec<(String, PathBuf)> = vec![("index.html".into(), viewer.join("index.html"))];
    collect(&viewer.join("viewer"), "viewer/", &mut files);
    assert!(
        !files.iter().any(|(path, _)| path == "viewer/bundle-loader.js"),
        "{VIEWER_DIR}/viewer/bundle-loader.js must not exist: the loader lives in {LOADER}"
    );
    files.push(("viewer/bundle-loader.js".into(), root.join(LOADER)));
    files.sort();

    let mut code = String::from("&[\n");
    for (path, file) in &files {
        code += &format!("    ({path:?}, include_bytes!({:?})),\n", file.display().to_string());
    }
    code += "]\n";
    fs::write(out.join("viewer_files.rs"), code).expect("write viewer_files.rs");
}

/// Every file under `dir` (dot files skipped), as (path relative to the viewer root, file).
fn collect(dir: &Path, prefix: &str, files: &mut Vec<(String, PathBuf)>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.expect("read viewer dir entry");
        let name = entry.file_name().into_string().expect("viewer file names are UTF-8");
        if name.starts_with('.') {
            continue;
        }
        let rel = format!("{prefix}{name}");
        if entry.file_type().expect("file type").is_dir() {
            collect(&entry.path(), &format!("{rel}/"), files);
        } else {
            files.push((rel, entry.path()));
        }
    }
}
