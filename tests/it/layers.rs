//! The layers point one way, read from the source as rust-analyzer's tidy tests do: parse and
//! analysis touch neither the file system nor the network (the bundle writer hands them bytes),
//! the bundle writer never reaches into the sharing layer, and the core builds without sharing's
//! dependencies (`cargo tree` without the `share` feature).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    assert!(files.len() > 5, "{dir} has its modules");
    files
}

/// `file:line: text` for each line of `files` naming one of `forbidden` (`fs::` must follow no
/// identifier character, so that `use std::{fs, io}; fs::read` is found and `refs::` is not).
fn lines_naming(files: &[PathBuf], forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let names = |word: &&str| {
                line.match_indices(*word).any(|(at, _)| {
                    let before = line[..at].chars().next_back();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            };
            if forbidden.iter().any(names) {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn parse_and_analysis_touch_no_file_system_or_network() {
    let forbidden = ["std::fs", "fs::", "File::", "std::net", "tokio"];
    let files: Vec<PathBuf> = [rust_files("src/parse"), rust_files("src/analysis")].concat();
    let found = lines_naming(&files, &forbidden);
    assert!(
        found.is_empty(),
        "parse and analysis get bytes from the bundle writer (see cross_rank::TableBytes) and open no \
         file or socket themselves:\n{}",
        found.join("\n")
    );
}

#[test]
fn analysis_holds_no_thread_local_global_switch_or_unsafe() {
    // Tables get what they need through `Observe` and `Finish`, and the build's switches through
    // its options: nothing reaches them through a thread or a global behind their back.
    let forbidden = ["thread_local!", "static mut", "AtomicBool", "AtomicU8", "AtomicUsize", "unsafe"];
    let found = lines_naming(&rust_files("src/analysis"), &forbidden);
    assert!(found.is_empty(), "analysis is table logic only:\n{}", found.join("\n"));
}

#[test]
fn tables_name_only_the_stores_vocabulary() {
    // A table (and the compiles stage) says what it keeps (`Rows`, `Distinct`, `PerCompile`,
    // `CompileList`, `Records`, `Numbers`, ...) from `crate::store`'s own list; how those are packed, spilled or digested is named in
    // no table. Unit tests of spilling install a spool: only code before a file's tests counts.
    let tables = rust_files("src/analysis");
    let mut found = Vec::new();
    for file in &tables {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (n, line) in code.lines().enumerate() {
            let deep = line.match_indices("store::").any(|(at, _)| {
                let rest = &line[at + "store::".len()..];
                rest.starts_with(|c: char| c.is_ascii_lowercase()) && rest.contains("::")
            });
            let machinery = ["PackedRows", "DecodedBlock", "Interner", "DigestIds", "raw_row", "SmallId", "Spool"];
            if deep || machinery.iter().any(|m| line.contains(m)) {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(tables.len() > 20, "the tables were found");
    assert!(found.is_empty(), "tables name store machinery:\n{}", found.join("\n"));
}

#[test]
fn parse_analysis_and_store_never_name_the_writer() {
    // The writer serializes and compresses what they hand it (`TableSerializer`); they point
    // down, never up.
    let files: Vec<PathBuf> = ["src/parse", "src/analysis", "src/store"].into_iter().flat_map(rust_files).collect();
    let found = lines_naming(&files, &["crate::bundle", "super::bundle"]);
    assert!(found.is_empty(), "a layer below the writer names it:\n{}", found.join("\n"));
}

#[test]
fn the_store_is_handed_to_tables_never_held_by_a_thread() {
    // Each stored value spills to the `Store` its table was made with; the store keeps per
    // thread only zstd's compression contexts, which hold no table's bytes.
    let mut found = Vec::new();
    for file in rust_files("src/store") {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let next = lines.get(n + 1).copied().unwrap_or_default();
            let a_zstd_context = next.contains("static COMPRESSOR") || next.contains("static DECOMPRESSOR");
            if line.contains("thread_local!") && !a_zstd_context {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "the store holds state per thread:\n{}", found.join("\n"));
}

#[test]
fn bundle_never_names_the_sharing_layer() {
    let forbidden = ["crate::publish", "crate::serve", "crate::proxy", "crate::http", "tokio", "object_store"];
    let found = lines_naming(&rust_files("src/bundle"), &forbidden);
    assert!(
        found.is_empty(),
        "the bundle writer depends on no sharing code; the sharing layer calls it (e.g. publish::shards \
         fetches shards, then merges them as local directories):\n{}",
        found.join("\n")
    );
}

/// The scanner finds what it looks for (a check that found nothing proves nothing otherwise).
#[test]
fn the_layer_scanner_finds_a_file_system_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.rs");
    std::fs::write(
        &file,
        "use std::{fs, io};\nfn f() { let _ = fs::read(\"x\"); }\nmod refs { fn g() { refs::h() } }\n",
    )
    .unwrap();
    let found = lines_naming(&[file], &["std::fs", "fs::"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with(":2: fn f() { let _ = fs::read(\"x\"); }"), "{found:?}");
}

/// `cargo tree` of one package's normal dependencies, with the features given.
fn dependency_tree(package: &str, features: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(["tree", "--locked", "--offline", "-e", "normal", "--prefix", "none", "-p", package])
        .args(features)
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The crates only sharing needs (object storage, the async runtime, the HTTP server).
const SHARING_CRATES: &[&str] = &["object_store", "tokio", "hyper", "hyper-util", "futures-util"];

/// The names of the crates in a `cargo tree --prefix none` listing.
fn crate_names(tree: &str) -> Vec<&str> {
    tree.lines().filter_map(|line| line.split_whitespace().next()).collect()
}

#[test]
fn the_core_builds_without_the_sharing_crates() {
    let shipped = dependency_tree("tlparse-build", &[]);
    for name in SHARING_CRATES {
        assert!(crate_names(&shipped).contains(name), "the shipped build shares, through {name}:\n{shipped}");
    }
    for (package, features) in [
        ("tlparse-build", &["--no-default-features"][..]),
        ("tlparse-build", &["--no-default-features", "--features", "jemalloc"][..]),
        ("tlparse-bundle", &[][..]),
        ("tlparse-bundle", &["--all-features"][..]),
    ] {
        let tree = dependency_tree(package, features);
        assert!(crate_names(&tree).contains(&"zstd"), "a real dependency tree of {package}:\n{tree}");
        let names = crate_names(&tree);
        let sharing: Vec<&&str> = SHARING_CRATES.iter().filter(|name| names.contains(name)).collect();
        assert!(sharing.is_empty(), "{package} {features:?} depends on {sharing:?}, which only sharing needs:\n{tree}");
    }
}

/// Built without sharing, the commands that share say why they are missing, and write nothing.
#[cfg(not(feature = "share"))]
#[test]
fn a_build_without_sharing_says_it_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let trace = crate::util::fixture("torch-2.15/graph_breaks");
    for args in [
        &["serve", "bundle", "--port", "0"][..],
        &["publish", "bundle", "s3://bucket/prefix", "--replace"][..],
        &["proxy", "s3://bucket/prefix", "--allow-origin", "*"][..],
        &["merge", "s3://bucket/shard0", "-o", out][..],
        &[trace.as_str(), "-o", out, "--open"][..],
    ] {
        let output = crate::util::run(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("needs sharing") || stderr.contains("need sharing"), "{args:?}: {stderr}");
        assert!(stderr.contains("built without (the cargo feature `share`"), "{args:?}: {stderr}");
        assert!(!Path::new(out).exists(), "{args:?} wrote {out}");
    }
}
