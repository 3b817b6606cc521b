//! The analysis tables on real fixtures: a whole-table insta snapshot per table and fixture, plus
//! facts cross-checked by hand against the raw log (each test says what was checked).

mod cache_outcomes;
mod chrome_trace;
mod collectives;
mod compilation_metrics;
mod compile_directory;
mod compile_summary;
mod compile_time;
mod export_report;
mod failures;
mod graph_breaks;
mod graph_execution;
mod graph_sizes;
mod guards;
mod hints;
mod inputs;
mod log_volume;
mod provenance;
mod recompiles;
mod runnables;
mod runtime_estimates;
mod search;
mod stack_trie;

use serde_json::Value;
use tlparse_build::bundle::reader::Bundle;

use crate::util::{build, fixture};

/// A built fixture, kept alive while its tables are read.
pub struct Built {
    _dir: tempfile::TempDir,
    pub bundle: Bundle,
}

/// Builds a fixture (validated against every schema) and opens it.
pub fn built(rel: &str) -> Built {
    let (dir, out, _) = build(&fixture(rel));
    Built { bundle: Bundle::open(&out).unwrap(), _dir: dir }
}

impl Built {
    /// The id of the only stream (panics if there are several).
    pub fn only_stream(&self) -> String {
        let streams = &self.bundle.manifest.streams;
        assert_eq!(streams.len(), 1, "expected one stream");
        streams[0].id.clone()
    }

    /// A table of the only stream, which must exist.
    pub fn table(&self, name: &str) -> Value {
        self.table_of(&self.only_stream(), name)
    }

    /// A table of a stream, which must exist.
    pub fn table_of(&self, stream: &str, name: &str) -> Value {
        self.bundle.table(stream, name).unwrap().unwrap_or_else(|| panic!("stream {stream} has no table {name}"))
    }

    /// Whether the only stream has the table.
    pub fn has_table(&self, name: &str) -> bool {
        self.bundle.manifest.streams[0].tables.contains_key(name)
    }
}

/// Snapshots a whole table as pretty JSON.
pub fn snapshot(snapshot_name: &str, table: &Value) {
    insta::assert_snapshot!(snapshot_name.to_string(), serde_json::to_string_pretty(table).unwrap());
}

/// The rows of a list field, as objects.
pub fn rows<'a>(table: &'a Value, field: &str) -> &'a Vec<Value> {
    table[field].as_array().unwrap_or_else(|| panic!("table has no list {field}"))
}

/// A compile_directory row's artifacts: its `first_artifact`, `artifact_count` slice of the
/// table's `artifacts` list, each checked to name the row's compile id.
pub fn artifacts_of<'a>(directory: &'a Value, compile: &Value) -> &'a [Value] {
    let first = compile["first_artifact"].as_u64().unwrap() as usize;
    let count = compile["artifact_count"].as_u64().unwrap() as usize;
    let slice = &rows(directory, "artifacts")[first..first + count];
    assert!(slice.iter().all(|a| a["compile_id"] == compile["compile_id"]), "{}", compile["compile_id"]);
    slice
}

/// Builds a directory of rank logs (validated) and returns it with the stream id of each file,
/// by the rank in its file name (each file must make one stream).
pub fn built_dir(rel: &str) -> (Built, std::collections::BTreeMap<u32, String>) {
    let b = built(rel);
    let streams = b
        .bundle
        .manifest
        .inputs
        .iter()
        .map(|input| {
            assert_eq!(input.streams.len(), 1, "{} makes several streams", input.path);
            (input.rank_from_name.expect("a rank log"), input.streams[0].clone())
        })
        .collect();
    (b, streams)
}
