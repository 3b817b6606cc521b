//! The versioning rule of docs/format.md as this reader applies it: a bundle asking for a newer
//! reader (`min_reader_version` above the major it implements) is refused with a message naming
//! both versions; a bundle of a newer minor of the same major, with fields this reader does not
//! know, is read, its unknown fields ignored.

mod common;

use serde_json::json;
use tlparse_bundle::reader::Bundle;
use tlparse_bundle::schema::tables::compile_summary::CompileSummary;
use tlparse_bundle::schema::{FORMAT_MAJOR, FORMAT_VERSION, MIN_READER_VERSION};

#[test]
fn this_code_writes_format_major_dot_minor_and_reads_its_major() {
    assert_eq!(FORMAT_VERSION.split_once('.').map(|(major, _)| major), Some(FORMAT_MAJOR.to_string().as_str()));
    assert_eq!(MIN_READER_VERSION, FORMAT_MAJOR);
    let bundle = Bundle::open(&common::committed_bundle()).unwrap();
    assert_eq!(bundle.manifest.format_version, FORMAT_VERSION);
    assert_eq!(bundle.manifest.min_reader_version, FORMAT_MAJOR);
}

#[test]
fn a_bundle_needing_the_next_major_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = common::copy_bundle(dir.path());
    common::edit_manifest(&root, false, |m| {
        m["format_version"] = json!(format!("{}.0", FORMAT_MAJOR + 1));
        m["min_reader_version"] = json!(FORMAT_MAJOR + 1);
    });
    let err = Bundle::open(&root).err().expect("refused").to_string();
    let expected = format!("needs a reader of version {}; this reader is version {FORMAT_MAJOR}", FORMAT_MAJOR + 1);
    assert!(err.contains(&expected), "{err}");
}

#[test]
fn a_newer_minor_with_unknown_fields_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = common::copy_bundle(dir.path());
    common::edit_manifest(&root, false, |m| {
        m["format_version"] = json!(format!("{FORMAT_MAJOR}.7"));
        m["min_reader_version"] = json!(FORMAT_MAJOR);
        m["a_field_of_format_1_7"] = json!({"x": 1});
        m["streams"][0]["another_new_field"] = json!([1, 2]);
    });
    let summary_path = root.join("tables/log0/compile_summary.json.zst");
    let mut summary: serde_json::Value =
        serde_json::from_slice(&zstd::decode_all(&std::fs::read(&summary_path).unwrap()[..]).unwrap()).unwrap();
    summary["a_new_count"] = json!(3);
    std::fs::write(&summary_path, zstd::encode_all(&serde_json::to_vec(&summary).unwrap()[..], 3).unwrap()).unwrap();

    let bundle = Bundle::open(&root).unwrap();
    assert_eq!(bundle.manifest.format_version, format!("{FORMAT_MAJOR}.7"));
    assert_eq!(bundle.manifest.streams[0].id, "log0");
    let read: CompileSummary = bundle.table("log0", "compile_summary").unwrap().expect("listed");
    let original: CompileSummary =
        Bundle::open(&common::committed_bundle()).unwrap().table("log0", "compile_summary").unwrap().expect("listed");
    assert_eq!(read, original, "the unknown field is ignored, the known ones read");
}
