//! The Chrome trace of the runtime estimates: one process per stream, one thread per graph.

use std::collections::BTreeMap;

use camino::Utf8PathBuf;
use serde_json::Value;
use tlparse_build::bundle::reader::Bundle;

use super::{built_ranks, ids};
use crate::tables::rows;
use crate::util::{build, fixture};

fn events(trace: &Value) -> &Vec<Value> {
    trace["traceEvents"].as_array().expect("a traceEvents list")
}

/// `X` events per pid.
fn op_events_per_pid(trace: &Value) -> BTreeMap<u64, usize> {
    let mut per_pid = BTreeMap::new();
    for e in events(trace).iter().filter(|e| e["ph"] == "X") {
        *per_pid.entry(e["pid"].as_u64().unwrap()).or_default() += 1;
    }
    per_pid
}

/// multi_rank_runtime: op counts per artifact (python on the raw logs) are 6 for `[0/0]` and 11
/// for the others; files 0-3 have 4 artifacts (39 ops), file 4 three (33), files 5 and 6 two
/// (17): 223 events, tlparse's count too. Files 1, 5 and 6 all say rank 1 in their envelopes but
/// get their own process (pid = member index, named by label).
#[test]
fn multi_rank_runtime_one_process_per_stream() {
    let b = built_ranks("multi_rank_runtime");
    let c = b.bundle.manifest.cross_rank.as_ref().unwrap();
    assert_eq!(c.runtime_estimates_trace.as_deref(), Some("tables/cross_rank/runtime_estimates_trace.json.gz"));
    let trace = b.bundle.cross_rank_runtime_estimates_trace().unwrap().expect("a trace");
    assert_eq!(trace["displayTimeUnit"], "ms");
    let per_pid = op_events_per_pid(&trace);
    assert_eq!(per_pid, BTreeMap::from([(0, 39), (1, 39), (2, 39), (3, 39), (4, 33), (5, 17), (6, 17)]));

    let metadata = |name: &str| -> Vec<(u64, u64, String)> {
        events(&trace)
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == name)
            .map(|e| (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap(), e["args"]["name"].to_string()))
            .collect()
    };
    let processes: Vec<String> = metadata("process_name").into_iter().map(|(_, _, n)| n).collect();
    let labels: Vec<String> = c.members.iter().map(|m| format!("{:?}", m.label)).collect();
    assert_eq!(processes, labels);
    assert_eq!(processes[5], "\"rank 5\"");
    // One thread per compile id, the same tid in every process.
    let threads = metadata("thread_name");
    assert_eq!(threads.len(), 4 + 4 + 4 + 4 + 3 + 2 + 2);
    for (_, tid, name) in &threads {
        let expected = ["\"[0/0]\"", "\"[0/1]\"", "\"[0/2]\"", "\"[0/3]\""][*tid as usize - 1];
        assert_eq!(name, expected);
    }

    // File 0's [0/0]: 6 ops laid end to end from 0; the first is the mm of 6885841.870239033 ns
    // (log line 1686's payload), so the second starts at 6885.841870239033 µs.
    let ops: Vec<&Value> = events(&trace).iter().filter(|e| e["ph"] == "X" && e["pid"] == 0 && e["tid"] == 1).collect();
    assert_eq!(ops.len(), 6);
    assert_eq!(ops[0]["name"], "extern_kernels.mm");
    assert_eq!(ops[0]["ts"], 0.0);
    assert_eq!(ops[0]["dur"], 6885841.870239033 / 1000.0);
    assert_eq!(ops[1]["ts"], 6885841.870239033 / 1000.0);
    // The wait_tensor's 0 ns stays 0 (tlparse inflates it to 1 µs).
    assert_eq!(ops[3]["name"], "torch.ops._c10d_functional.wait_tensor.default");
    assert_eq!(ops[3]["dur"], 0.0);
    let end = ops[5]["ts"].as_f64().unwrap() + ops[5]["dur"].as_f64().unwrap();
    assert!((end * 1000.0 - 13806088.656527853).abs() < 1e-3, "the graph ends at its total");
}

/// A stream without estimates keeps its process (named, no ops) and is "no data" in the tables:
/// multi_rank_runtime's file 0 next to multi_rank_logs' file 1 (no runtime artifact). File 1
/// compiled `kernel` (gen_many_frames.py:6) as `[0/0]`..`[0/14]`, another function than file 0's
/// `inner` (external_utils.py:66) under the same ids: aligned by code, it did not compile file
/// 0's graphs at all (missing), rather than compiling them without an estimate.
#[test]
fn a_stream_without_estimates_is_no_data() {
    let input = tempfile::tempdir().unwrap();
    for (from, to) in [
        (
            "tlparse-tests/multi_rank_runtime/dedicated_log_torch_trace_rank_0.log",
            "dedicated_log_torch_trace_rank_0.log",
        ),
        ("tlparse-tests/multi_rank_logs/dedicated_log_torch_trace_rank_1.log", "dedicated_log_torch_trace_rank_1.log"),
    ] {
        std::fs::copy(fixture(from), input.path().join(to)).unwrap();
    }
    let (_out, path, manifest) = build(&Utf8PathBuf::from_path_buf(input.path().to_owned()).unwrap());
    let streams: Vec<&str> = manifest.streams.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(streams, ["rank0", "rank1"]);
    let bundle = Bundle::open(&path).unwrap();

    let t: Value = bundle.cross_rank_table("runtime_estimations").unwrap().unwrap();
    assert_eq!(ids(&t["no_data"]), ["rank1"]);
    let groups: Vec<Vec<&str>> = rows(&t, "groups").iter().map(|g| ids(&g["streams"])).collect();
    assert_eq!(groups, [vec!["rank0"]]);
    for g in rows(&t, "graphs") {
        assert_eq!(ids(&g["missing"]), ["rank1"]);
        assert_eq!(ids(&g["compiled_without_estimate"]), Vec::<&str>::new());
        assert_eq!(g["differs"], false, "one stream cannot differ from itself");
    }

    let t: Value = bundle.cross_rank_table("tensor_meta").unwrap().unwrap();
    assert_eq!(ids(&t["no_data"]), ["rank1"]);
    assert_eq!(t["diverges"], false);

    let trace = bundle.cross_rank_runtime_estimates_trace().unwrap().unwrap();
    assert_eq!(op_events_per_pid(&trace), BTreeMap::from([(0, 39)]));
    let named: Vec<u64> =
        events(&trace).iter().filter(|e| e["name"] == "process_name").map(|e| e["pid"].as_u64().unwrap()).collect();
    assert_eq!(named, [0, 1]);
}
