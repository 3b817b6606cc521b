//! `Bundle::table_view`: a table parsed as it is decompressed, through a view of the fields a
//! reader needs. It reads what `Bundle::table` reads, a big table costs the view's memory and not
//! the table's, and a damaged or endless table is an error naming its file.

mod common;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tlparse_bundle::reader::Bundle;

#[global_allocator]
static ALLOC: common::Counting = common::Counting;

/// A view of a compile directory: each compile's status, the rest skipped.
#[derive(Deserialize)]
struct Statuses {
    compiles: Vec<Status>,
}

#[derive(Deserialize)]
struct Status {
    status: String,
}

#[test]
fn a_view_reads_what_the_whole_table_reads() {
    let b = Bundle::open(&common::committed_bundle()).unwrap();
    let stream = &b.manifest.streams[0];
    assert!(stream.tables.len() >= 10, "the committed bundle has its tables");
    for name in stream.tables.keys() {
        let whole: Value = b.table(&stream.id, name).unwrap().unwrap();
        let streamed: Value = b.table_view(&stream.id, name).unwrap().unwrap();
        assert_eq!(streamed, whole, "{name}");
    }
    // A view keeps only its fields: simple.log's one compile, which compiled.
    let view: Statuses = b.table_view(&stream.id, "compile_directory").unwrap().unwrap();
    assert_eq!(view.compiles.iter().map(|c| c.status.as_str()).collect::<Vec<_>>(), ["ok"]);
    assert!(b.table_view::<Value>(&stream.id, "no_such_table").unwrap().is_none());
}

/// A compile directory of `n` compiles, each holding 2 KB of text the view skips.
fn big_directory(n: usize) -> Vec<u8> {
    let text = "x".repeat(2000);
    let compiles: Vec<Value> =
        (0..n).map(|i| json!({"compile_id": format!("[{i}/0]"), "status": "ok", "co_filename": text})).collect();
    zstd::encode_all(&serde_json::to_vec(&json!({"compiles": compiles})).unwrap()[..], 3).unwrap()
}

#[test]
fn a_view_of_a_big_table_takes_the_views_memory_not_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = common::copy_bundle(dir.path());
    let b = Bundle::open(&bundle).unwrap();
    let stream = b.manifest.streams[0].id.clone();
    let path = b.manifest.streams[0].tables["compile_directory"].parts[0].clone();
    std::fs::write(bundle.join(&path), big_directory(20_000)).unwrap();

    // 40 MB of JSON: a view of one short field of each row holds 20,000 short strings.
    let (view, peak) = common::measure(|| b.table_view::<Statuses>(&stream, "compile_directory").unwrap().unwrap());
    assert_eq!(view.compiles.len(), 20_000);
    assert!(view.compiles.iter().all(|c| c.status == "ok"));
    assert!(peak < 4 << 20, "a view of 40 MB of JSON took {peak} bytes of heap");
    drop(view);
    // The same table read whole takes the JSON and more: the bound above can fail.
    let (whole, peak) = common::measure(|| b.table::<Value>(&stream, "compile_directory").unwrap().unwrap());
    assert_eq!(whole["compiles"].as_array().unwrap().len(), 20_000);
    assert!(peak > 40 << 20, "the whole table took only {peak} bytes");
}

#[test]
fn a_damaged_or_endless_table_read_through_a_view_is_an_error_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = common::copy_bundle(dir.path());
    let mut b = Bundle::open(&bundle).unwrap();
    let stream = b.manifest.streams[0].id.clone();
    let path = b.manifest.streams[0].tables["compile_directory"].parts[0].clone();
    let read = |b: &Bundle| b.table_view::<IgnoredAny>(&stream, "compile_directory").unwrap_err().to_string();

    // Cut short, then followed by more than one document.
    let json = zstd::decode_all(&std::fs::read(bundle.join(&path)).unwrap()[..]).unwrap();
    std::fs::write(bundle.join(&path), zstd::encode_all(&json[..json.len() / 2], 3).unwrap()).unwrap();
    let cut = read(&b);
    assert!(cut.contains(&path) && cut.contains("cannot be parsed"), "{cut}");
    std::fs::write(bundle.join(&path), zstd::encode_all(&[&json[..], b" {}"].concat()[..], 3).unwrap()).unwrap();
    let trailing = read(&b);
    assert!(trailing.contains(&path) && trailing.contains("trailing"), "{trailing}");
    // Not zstd at all.
    std::fs::write(bundle.join(&path), b"{\"compiles\": []}").unwrap();
    assert!(read(&b).contains(&path));
    // Longer than a stream may decompress to: refused, however little the view keeps.
    std::fs::write(bundle.join(&path), big_directory(1_000)).unwrap();
    b.limits.stream = 1 << 20;
    let endless = read(&b);
    assert!(endless.contains(&path) && endless.contains("decompresses to more than"), "{endless}");
}
