//! `validate` checks every reference a table holds: copies of the committed bundle whose tables
//! (re-compressed, manifest resealed, as an attacker would) point at a missing blob, another
//! entry's blob, an unknown compile id, a seq past the end, a missing stack or frame.

#![cfg(feature = "validate")]

mod common;

use std::path::Path;

use serde_json::{Value, json};
use tlparse_bundle::DirSource;
use tlparse_bundle::validate::validate;

const DIRECTORY: &str = "tables/log0/compile_directory.json.zst";

/// Rewrites the zstd JSON table `rel` of `bundle` after `edit`, and reseals the manifest.
fn tamper_table(bundle: &Path, rel: &str, edit: impl FnOnce(&mut Value)) {
    let path = bundle.join(rel);
    let bytes = zstd::decode_all(std::fs::read(&path).unwrap().as_slice()).unwrap();
    let mut table: Value = serde_json::from_slice(&bytes).unwrap();
    edit(&mut table);
    std::fs::write(&path, zstd::encode_all(serde_json::to_vec(&table).unwrap().as_slice(), 3).unwrap()).unwrap();
    common::edit_manifest(bundle, true, |_| {});
}

/// The problems `validate` finds in a copy of the committed bundle whose table `rel` was edited.
fn problems_after(rel: &str, edit: impl FnOnce(&mut Value)) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let bundle = common::copy_bundle(dir.path());
    tamper_table(&bundle, rel, edit);
    validate(DirSource::new(&bundle)).unwrap()
}

/// Asserts that `problems` is exactly one problem, which contains every one of `parts`.
fn assert_one_problem(problems: &[String], parts: &[&str]) {
    assert_eq!(problems.len(), 1, "{problems:#?}");
    for part in parts {
        assert!(problems[0].contains(part), "{:?} lacks {part:?}", problems[0]);
    }
}

#[test]
fn the_untampered_bundle_and_a_resealed_unchanged_table_are_valid() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = common::copy_bundle(dir.path());
    assert_eq!(validate(DirSource::new(&bundle)).unwrap(), Vec::<String>::new());
    tamper_table(&bundle, DIRECTORY, |_| {});
    assert_eq!(validate(DirSource::new(&bundle)).unwrap(), Vec::<String>::new());
}

#[test]
fn an_artifact_blob_that_is_in_no_pack_is_reported() {
    let problems = problems_after(DIRECTORY, |t| {
        t["artifacts"][0]["blob"] = json!("0123456789abcdef0123456789abcdef");
    });
    assert_one_problem(
        &problems,
        &[
            "tables/log0/compile_directory.json.zst#/artifacts/0/blob",
            "blob 0123456789abcdef0123456789abcdef, which is not in the blob index",
        ],
    );
}

#[test]
fn an_artifact_blob_of_another_entry_is_reported() {
    let problems = problems_after(DIRECTORY, |t| {
        let artifacts = &mut t["artifacts"];
        artifacts[0]["blob"] = artifacts[1]["blob"].clone();
    });
    assert_one_problem(&problems, &["#/artifacts/0/blob", "which is not the payload of entry 24"]);
}

#[test]
fn a_null_artifact_blob_for_an_entry_with_a_payload_is_reported() {
    let problems = problems_after(DIRECTORY, |t| t["artifacts"][0]["blob"] = Value::Null);
    assert_one_problem(&problems, &["#/artifacts/0/blob", "no blob, but entry 24 has a payload"]);
}

#[test]
fn an_artifact_kind_that_is_not_its_entry_s_is_reported() {
    let problems = problems_after(DIRECTORY, |t| t["artifacts"][0]["kind"] = json!("artifact"));
    assert_one_problem(&problems, &["#/artifacts/0/kind", "kind \"artifact\", which is not the kind of entry 24"]);
}

#[test]
fn compile_rows_that_do_not_tile_the_artifacts_are_reported() {
    // simple.log: one compile, [0/0], which logs all 9 artifacts.
    let problems = problems_after(DIRECTORY, |t| t["compiles"][0]["artifact_count"] = json!(10));
    assert_one_problem(
        &problems,
        &["compile_directory.json.zst: compile [0/0]: artifact_count 10 runs past the end of artifacts"],
    );
    let problems = problems_after(DIRECTORY, |t| t["compiles"][0]["first_artifact"] = json!(1));
    assert_one_problem(&problems, &["compile [0/0]: first_artifact 1, but the compiles before it have 0"]);
    let problems = problems_after(DIRECTORY, |t| t["compiles"][0]["artifact_count"] = json!(0));
    assert_one_problem(&problems, &["artifacts 0.. are of compile [0/0], which no row counts"]);
    // Two rows may show the same id (ids differing only where the display has `-`): each takes
    // its count from the one run of that id.
    let problems = problems_after(DIRECTORY, |t| {
        let mut second = t["compiles"][0].clone();
        second["first_artifact"] = json!(4);
        second["artifact_count"] = json!(5);
        t["compiles"][0]["artifact_count"] = json!(4);
        t["compiles"].as_array_mut().unwrap().push(second);
    });
    assert!(!problems.iter().any(|p| p.contains("artifact")), "{problems:#?}");
}

#[test]
fn a_compile_id_no_index_row_carries_is_reported() {
    let problems = problems_after(DIRECTORY, |t| t["compiles"][0]["compile_id"] = json!("[99/99]"));
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems[0].contains("#/compiles/0/compile_id")
            && problems[0].contains("compile id [99/99], which no index row of stream log0"),
        "{}",
        problems[0]
    );
    // Its artifacts name [0/0], so they do not fit the row of another id.
    assert!(problems[1].ends_with("compile [99/99]: artifact 0 is of compile [0/0]"), "{}", problems[1]);
}

#[test]
fn compile_id_parts_no_index_row_carries_are_reported() {
    let problems = problems_after(DIRECTORY, |t| t["compiles"][0]["cid"]["frame_id"] = json!(99));
    assert_one_problem(&problems, &["#/compiles/0/cid", "compile id parts"]);
}

#[test]
fn a_seq_past_the_end_of_the_index_is_reported() {
    let problems = problems_after(DIRECTORY, |t| t["compiles"][0]["last_seq"] = json!(76));
    assert_one_problem(
        &problems,
        &["#/compiles/0/last_seq", "seq 76, past the end of index of stream log0 (76 entries)"],
    );
}

#[test]
fn a_stack_id_the_stack_table_lacks_is_reported() {
    let problems = problems_after(DIRECTORY, |t| t["compiles"][0]["stack"] = json!(4_000_000_000u32));
    assert_one_problem(&problems, &["#/compiles/0/stack", "stack 4000000000, which stream log0's stack table lacks"]);
}

#[test]
fn a_frame_id_the_stack_table_lacks_is_reported() {
    let problems = problems_after("tables/log0/stack_trie.json.zst", |t| t["nodes"][0]["frame"] = json!(12345));
    assert_one_problem(&problems, &["stack_trie.json.zst#/nodes/0/frame", "frame 12345"]);
}

#[test]
fn many_bad_references_in_one_file_are_listed_up_to_twenty_then_counted() {
    let problems = problems_after(DIRECTORY, |t| {
        let mut artifact = t["artifacts"][0].clone();
        artifact.as_object_mut().unwrap().remove("compile_id");
        artifact["blob"] = json!("0".repeat(32));
        t["unattributed"] = Value::Array(vec![artifact; 1000]);
    });
    assert_eq!(problems.len(), 21, "{problems:#?}");
    assert!(problems[19].contains("#/unattributed/19/blob"), "{}", problems[19]);
    assert_eq!(problems[20], "tables/log0/compile_directory.json.zst: 980 more bad references not listed");
}
