//! fixtures-repo is what its manifest says: every listed file has its size and blake3, and every
//! file under the trace directories is listed (logs are never edited silently).

use std::collections::BTreeSet;

#[test]
fn fixtures_repo_files_match_their_manifest() {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read("fixtures-repo/manifest.json").unwrap()).unwrap();
    let mut listed = BTreeSet::new();
    for trace in manifest["traces"].as_array().unwrap() {
        for f in trace["files"].as_array().unwrap() {
            let path = format!("fixtures-repo/{}", f["path"].as_str().unwrap());
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            assert_eq!(bytes.len() as u64, f["size"].as_u64().unwrap(), "{path}: size");
            assert_eq!(blake3::hash(&bytes).to_hex().as_str(), f["blake3"].as_str().unwrap(), "{path}: blake3");
            listed.insert(path);
        }
    }
    let logs: BTreeSet<String> = walkdir::WalkDir::new("fixtures-repo")
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().to_string_lossy().into_owned())
        .filter(|p| {
            p.ends_with(".log")
                || p.ends_with("_log.txt")
                || p.ends_with("_log_old.txt")
                || p.contains("multi_rank_messy_input/")
        })
        .collect();
    let unlisted: Vec<&String> = logs.difference(&listed).collect();
    assert!(unlisted.is_empty(), "logs not in fixtures-repo/manifest.json: {unlisted:?}");
}
