//! Embeds the reference viewer (`viewers/reference-html/`) in the binary, together with its zstd
//! decoder: `viewers/zstd-wasm` (the crates.io decoder `ruzstd`) compiled to WebAssembly.
//!
//! Writes `$OUT_DIR/viewer_files.rs`: a sorted list of `(path in the bundle, bytes)` that
//! `src/viewer.rs` includes. Sorted so bundles stay byte-identical across builds.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const VIEWER_DIR: &str = "viewers/reference-html";
const WASM_CRATE: &str = "viewers/zstd-wasm";
const WASM_TARGET: &str = "wasm32-unknown-unknown";

fn main() {
    let root = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for watched in [VIEWER_DIR, &format!("{WASM_CRATE}/src"), &format!("{WASM_CRATE}/Cargo.toml")] {
        println!("cargo::rerun-if-changed={watched}");
    }

    // Only the entry page and viewer/ are shipped: they are the paths `validate` knows to skip.
    let viewer = root.join(VIEWER_DIR);
    let mut files: Vec<(String, PathBuf)> = vec![("index.html".into(), viewer.join("index.html"))];
    collect(&viewer.join("viewer"), "viewer/", &mut files);
    files.push(("viewer/zstd.wasm".into(), build_wasm_decoder(&root, &out)));
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

/// Compiles the decoder crate for wasm32 and returns the .wasm path. It gets a target dir of its
/// own (a nested cargo must not wait on the outer build's lock), inside the outer target dir so
/// that the debug and release builds share one wasm build.
fn build_wasm_decoder(root: &Path, out: &Path) -> PathBuf {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // OUT_DIR lies under the target dir, whose root cargo marks with CACHEDIR.TAG.
    let outer = out.ancestors().find(|dir| dir.join("CACHEDIR.TAG").is_file()).unwrap_or(out);
    let target_dir = outer.join("zstd-wasm");
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "--locked", "--quiet", "--target", WASM_TARGET, "--manifest-path"])
        .arg(root.join(WASM_CRATE).join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's flags are for the host binary, not for wasm.
    for var in ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "CARGO_BUILD_TARGET", "RUSTC_WRAPPER"]
    {
        cmd.env_remove(var);
    }
    let status = cmd.status().unwrap_or_else(|e| panic!("could not run cargo to build {WASM_CRATE}: {e}"));
    if !status.success() {
        panic!(
            "building the viewer's zstd decoder ({WASM_CRATE}) for {WASM_TARGET} failed. \
             The shipped viewer needs it; install the target with `rustup target add {WASM_TARGET}`."
        );
    }
    target_dir.join(WASM_TARGET).join("release").join("tlparse_viewer_zstd.wasm")
}
