//! The cross-rank tables on the multi-rank fixtures: whole-table snapshots plus the divergences
//! tlparse reports, cross-checked by hand against the raw logs (each test says what was checked;
//! the expected findings were computed with a separate Python reader of the logs).

mod cache_divergence;
mod chrome_trace;
mod collective_schedules;
mod compile_alignment;
mod compile_time_imbalance;
mod edited;
mod execution_order;
mod members;
mod rank_differ;
mod rank_findings;
mod runtime_estimates_trace;
mod runtime_estimations;
mod tensor_meta;

use serde_json::Value;

use crate::tables::{Built, built};

/// Builds a multi-rank fixture directory of `tlparse-tests/`.
pub fn built_ranks(dir: &str) -> Built {
    built(&format!("tlparse-tests/{dir}"))
}

impl Built {
    /// A cross-rank table, which must exist.
    pub fn cross(&self, name: &str) -> Value {
        self.bundle.cross_rank_table(name).unwrap().unwrap_or_else(|| panic!("no cross-rank table {name}"))
    }
}

/// The stream ids of a group or list, as strings.
pub fn ids(list: &Value) -> Vec<&str> {
    list.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect()
}

/// The label of a row's aligned compile (`compile.label`).
pub fn label(row: &Value) -> &str {
    row["compile"]["label"].as_str().unwrap_or_else(|| panic!("row without an aligned compile: {row}"))
}

/// Each stream's own compile id of a row's aligned compile, as `(stream, compile id)`.
pub fn own_ids(row: &Value) -> Vec<(&str, &str)> {
    row["compile"]["compile_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["stream"].as_str().unwrap(), c["compile_id"].as_str().unwrap()))
        .collect()
}

/// The compile id every stream gives a row's aligned compile (panics if they differ: in the
/// tlparse-tests fixtures no rank's frame ids are shifted).
pub fn same_id(row: &Value) -> &str {
    let own = own_ids(row);
    assert!(own.iter().all(|(_, id)| *id == own[0].1), "ids differ across streams: {own:?}");
    own[0].1
}
