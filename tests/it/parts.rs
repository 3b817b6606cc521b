//! Tables in parts: a bundle built with small parts (`--table-part-bytes`) validates, and every
//! table read back joined (whole, as a view, part by part) is the table of the same trace built
//! with the default part size.

use std::path::Path;

use serde_json::Value;
use tlparse_build::bundle::reader::Bundle;

use crate::util::{assert_valid, fixture, run};

/// Builds `input` into `out` through the CLI, with `extra` arguments; checks it validates.
fn build_cli(input: &str, out: &Path, extra: &[&str]) -> Bundle<tlparse_bundle::DirSource> {
    let mut args = vec![input, "-o", out.to_str().unwrap(), "--overwrite", "-q"];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "building {input}: {}", String::from_utf8_lossy(&o.stderr));
    assert_valid(out);
    Bundle::open(out).unwrap()
}

/// The trace built twice, with 2,000-byte parts and with the default; each checked table of
/// `small` equals `whole`'s, read whole, as a view and part by part. Returns how many tables
/// `small` stores in more than one part.
fn assert_same_tables(input: &str) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let whole = build_cli(input, &dir.path().join("whole"), &[]);
    let small = build_cli(input, &dir.path().join("small"), &["--table-part-bytes", "2000"]);
    let mut cut = 0;
    for (s, w) in small.manifest.streams.iter().zip(&whole.manifest.streams) {
        assert_eq!(s.id, w.id);
        assert_eq!(s.tables.keys().collect::<Vec<_>>(), w.tables.keys().collect::<Vec<_>>(), "{input} {}", s.id);
        for (name, table) in &s.tables {
            assert_eq!(table.rows, w.tables[name].rows, "{input} {} {name}: rows", s.id);
            assert_eq!(w.tables[name].parts.len(), 1, "{input} {} {name}: the default cuts no fixture table", s.id);
            cut += usize::from(table.parts.len() > 1);
            let expected: Value = whole.table(&s.id, name).unwrap().unwrap();
            let joined: Value = small.table(&s.id, name).unwrap().unwrap();
            assert_eq!(joined, expected, "{input} {} {name}: read whole", s.id);
            let viewed: Value = small.table_view(&s.id, name).unwrap().unwrap();
            assert_eq!(viewed, expected, "{input} {} {name}: read as a view", s.id);
            let parts: Vec<Value> = small.table_parts(&s.id, name).unwrap().unwrap().map(Result::unwrap).collect();
            assert_eq!(parts.len(), table.parts.len());
            assert_eq!(join(parts), expected, "{input} {} {name}: its parts joined by hand", s.id);
        }
    }
    let tables = |b: &Bundle<_>| b.manifest.cross_rank.as_ref().map(|c| c.tables.clone()).unwrap_or_default();
    let (small_cross, whole_cross) = (tables(&small), tables(&whole));
    assert_eq!(small_cross.keys().collect::<Vec<_>>(), whole_cross.keys().collect::<Vec<_>>(), "{input}");
    for (name, table) in &small_cross {
        cut += usize::from(table.parts.len() > 1);
        let expected: Value = whole.cross_rank_table(name).unwrap().unwrap();
        assert_eq!(small.cross_rank_table::<Value>(name).unwrap().unwrap(), expected, "{input} cross-rank {name}");
        let parts: Vec<Value> = small.cross_rank_table_parts(name).unwrap().unwrap().map(Result::unwrap).collect();
        assert_eq!(join(parts), expected, "{input} cross-rank {name}: its parts joined by hand");
    }
    cut
}

/// Parts joined as docs/format.md says a reader joins them: the first part, each top-level list
/// extended by the same list of every later part, in order; the other members as in each part.
fn join(parts: Vec<Value>) -> Value {
    let mut parts = parts.into_iter();
    let mut joined = parts.next().expect("a table has a part");
    for part in parts {
        for (key, value) in part.as_object().unwrap() {
            match (joined.get_mut(key), value) {
                (Some(Value::Array(list)), Value::Array(more)) => list.extend(more.iter().cloned()),
                (Some(kept), other) => {
                    assert_eq!(kept, other, "{key}: a member that is not a list differs between parts")
                }
                (None, _) => panic!("{key}: in a later part, not in the first"),
            }
        }
    }
    joined
}

#[test]
fn small_parts_read_back_as_the_tables_of_one_part() {
    // One rank with restarts, breaks and many artifacts; eight ranks with cross-rank tables.
    let single = assert_same_tables(fixture("torch-2.15/graph_breaks").as_str());
    assert!(single >= 3, "graph_breaks: {single} tables cut; 2,000-byte parts should cut several");
    let ranks = assert_same_tables(fixture("tlparse-tests/multi_rank_runtime").as_str());
    assert!(ranks >= 3, "multi_rank_runtime: {ranks} tables cut");
}

#[test]
fn compile_directory_parts_tile_the_artifacts_of_each_compile() {
    let dir = tempfile::tempdir().unwrap();
    let b =
        build_cli(fixture("torch-2.15/graph_breaks").as_str(), &dir.path().join("b"), &["--table-part-bytes", "2000"]);
    let parts: Vec<Value> = b.table_parts("log0", "compile_directory").unwrap().unwrap().map(Result::unwrap).collect();
    assert!(parts.len() > 2, "compile_directory in {} parts", parts.len());
    let artifacts: Vec<&Value> = parts.iter().flat_map(|p| p["artifacts"].as_array().unwrap()).collect();
    let mut next = 0;
    for row in parts.iter().flat_map(|p| p["compiles"].as_array().unwrap()) {
        let (first, count) =
            (row["first_artifact"].as_u64().unwrap() as usize, row["artifact_count"].as_u64().unwrap() as usize);
        assert_eq!(first, next, "{}: its artifacts follow the previous compile's", row["compile_id"]);
        assert!(
            artifacts[first..first + count].iter().all(|a| a["compile_id"] == row["compile_id"]),
            "{}",
            row["compile_id"]
        );
        next = first + count;
    }
    assert_eq!(next, artifacts.len(), "every artifact belongs to a compile row");
    // Each part is well under twice the part size: the cut is by rows, never inside one.
    for (k, part) in parts.iter().enumerate() {
        assert!(serde_json::to_vec(part).unwrap().len() < 4000, "part {k}");
    }
}
