//! The merged Chrome trace: every stream's trace events, one process per member.

use std::collections::BTreeMap;

use serde_json::Value;

use super::built_ranks;
use crate::tables::Built;

/// A metadata event's `(pid, name, args)`.
type Metadata = (u64, String, Value);

/// The merged trace's events that are not process metadata, counted per pid; and the metadata
/// events in order.
fn split(trace: &Value) -> (BTreeMap<u64, usize>, Vec<Metadata>) {
    let mut counts = BTreeMap::new();
    let mut meta = Vec::new();
    for e in trace["traceEvents"].as_array().unwrap() {
        let pid = e["pid"].as_u64().unwrap();
        if e["ph"] == "M" {
            meta.push((pid, e["name"].as_str().unwrap().to_string(), e["args"].clone()));
        } else {
            *counts.entry(pid).or_default() += 1;
        }
    }
    (counts, meta)
}

fn merged(b: &Built) -> Value {
    b.bundle.cross_rank_chrome_trace().unwrap().expect("a merged trace")
}

/// multi_rank_logs logs 6, 544, 6 and 179 `chromium_event`s (grep -c per file), all with
/// `"pid": 0`. tlparse's own test expects pids {0,2,3} only because another test truncates
/// rank_1 in place; on the pristine fixture all four ranks are there.
#[test]
fn multi_rank_logs_has_one_process_per_rank() {
    let b = built_ranks("multi_rank_logs");
    assert_eq!(
        b.bundle.manifest.cross_rank.as_ref().unwrap().chrome_trace.as_deref(),
        Some("tables/cross_rank/chrome_trace.json.gz")
    );
    let trace = merged(&b);
    assert_eq!(trace["displayTimeUnit"], "ms");
    let (counts, meta) = split(&trace);
    assert_eq!(counts, BTreeMap::from([(0, 6), (1, 544), (2, 6), (3, 179)]));

    let members = &b.bundle.manifest.cross_rank.as_ref().unwrap().members;
    let mut expected = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let i = i as u64;
        expected.push((i, "process_name".to_string(), serde_json::json!({"name": m.label})));
        expected.push((i, "process_sort_index".to_string(), serde_json::json!({"sort_index": i})));
    }
    assert_eq!(meta, expected);
    assert_eq!(members[3].label, "rank 3");

    // Each process holds its stream's events, in order, unchanged but for the pid.
    for (i, m) in members.iter().enumerate() {
        let own = b.bundle.chrome_trace(&m.stream).unwrap().unwrap();
        let own = own["traceEvents"].as_array().unwrap();
        let moved: Vec<&Value> =
            trace["traceEvents"].as_array().unwrap().iter().filter(|e| e["pid"] == i && e["ph"] != "M").collect();
        assert_eq!(moved.len(), own.len(), "{}", m.stream);
        for (a, e) in moved.iter().zip(own) {
            let mut e = e.clone();
            e["pid"] = i.into();
            assert_eq!(*a, &e);
        }
    }
}

/// multi_rank_runtime: 350 events in each of files 0-4 and 150 in files 5 and 6 (grep). Files 1,
/// 5 and 6 all say `"rank": 1`; each still gets its own process, named by its file rank.
#[test]
fn streams_sharing_a_rank_stay_apart() {
    let b = built_ranks("multi_rank_runtime");
    let (counts, meta) = split(&merged(&b));
    assert_eq!(counts, BTreeMap::from([(0, 350), (1, 350), (2, 350), (3, 350), (4, 350), (5, 150), (6, 150)]));
    let names: Vec<&str> =
        meta.iter().filter(|(_, n, _)| n == "process_name").map(|(_, _, a)| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["rank 0", "rank 1", "rank 2", "rank 3", "rank 4", "rank 5", "rank 6"]);
}

/// A single log has no merged trace (it has its own).
#[test]
fn one_stream_has_no_merged_trace() {
    let b = crate::tables::built("tlparse-tests/multi_rank_messy_input/dedicated_log_torch_trace_rank_0.log");
    assert!(b.bundle.cross_rank_chrome_trace().unwrap().is_none());
    assert!(b.bundle.chrome_trace(&b.only_stream()).unwrap().is_some());
}
