//! `validate` on a real multi-rank bundle whose cross-rank table was edited and resealed (as an
//! attacker would): stream ids that are not members and compile ids no stream carries are
//! reported, by the library and by `tlparse-build validate` (exit 1).

use std::path::Path;

use serde_json::{Value, json};

use crate::util::{assert_valid, build, fixture, run};

const ALIGNMENT: &str = "tables/cross_rank/compile_alignment.json.zst";

/// Rewrites the zstd JSON file `rel` of `bundle` after `edit`, then sets every listed file's size
/// and blake3 in the manifest to its current bytes.
fn tamper_and_reseal(bundle: &Path, rel: &str, edit: impl FnOnce(&mut Value)) {
    let path = bundle.join(rel);
    let mut table: Value =
        serde_json::from_slice(&zstd::decode_all(std::fs::read(&path).unwrap().as_slice()).unwrap()).unwrap();
    edit(&mut table);
    std::fs::write(&path, zstd::encode_all(serde_json::to_vec(&table).unwrap().as_slice(), 3).unwrap()).unwrap();
    let manifest_path = bundle.join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    for f in manifest["files"].as_array_mut().unwrap() {
        let bytes = std::fs::read(bundle.join(f["path"].as_str().unwrap())).unwrap();
        f["size"] = bytes.len().into();
        f["blake3"] = blake3::hash(&bytes).to_hex().to_string().into();
    }
    std::fs::write(manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

#[test]
fn cross_rank_streams_that_are_not_members_and_unknown_compile_ids_are_reported() {
    let (_dir, bundle, _) = build(&fixture("tlparse-tests/multi_rank_logs"));
    tamper_and_reseal(&bundle, ALIGNMENT, |_| {});
    assert_valid(&bundle); // resealing alone changes nothing

    tamper_and_reseal(&bundle, ALIGNMENT, |t| {
        t["groups"][0]["group"]["streams"][0] = json!("rank99");
        t["compiles"][0]["present"][0]["compile_id"] = json!("[99/99]");
    });
    let problems = tlparse_bundle::validate::validate(tlparse_bundle::DirSource::new(&bundle)).unwrap();
    assert_eq!(
        problems,
        [
            format!(
                "{ALIGNMENT}#/groups/0/group/streams/0: points at stream \"rank99\", which is not a cross-rank member"
            ),
            format!(
                "{ALIGNMENT}#/compiles/0/present/0/compile_id: points at compile id [99/99], which no index row of any stream carries"
            ),
        ]
    );

    let out = run(&["validate", bundle.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("stream \"rank99\", which is not a cross-rank member"), "{stdout}");
}
