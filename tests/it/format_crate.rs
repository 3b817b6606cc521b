//! The bundle committed in the format crate (`crates/tlparse-bundle/tests/bundles/simple`, which
//! its doctest and its own tests read without the compiler) is exactly what the compiler builds
//! today from `fixtures-repo/tlparse-tests/simple.log` with `--no-viewer`. `scripts/regenerate`
//! rewrites it.

use std::path::Path;

use crate::util::{fixture, read_tree, run};

#[test]
fn the_format_crates_test_bundle_is_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("simple");
    let built = run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", out.to_str().unwrap(), "--no-viewer", "-q"]);
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/tlparse-bundle/tests/bundles/simple");
    let (fresh, committed) = (read_tree(&out), read_tree(&committed));
    let names = |t: &std::collections::BTreeMap<String, Vec<u8>>| t.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&committed), names(&fresh), "file list differs: run scripts/regenerate");
    for (name, bytes) in &fresh {
        assert!(committed[name] == *bytes, "{name} differs from a fresh build: run scripts/regenerate");
    }
}
