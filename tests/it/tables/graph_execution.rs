//! Graph execution order per stream: `graph_execution` recordings and the legacy
//! `inductor_graph_execution` sequence.

use md5::Digest;
use tlparse_build::bundle::reader::Bundle;
use tlparse_build::schema::DiagnosticKind;
use tlparse_build::schema::tables::GraphExecution;

use super::runtime_estimates::stream_of_file;
use super::{Built, built, snapshot};

fn execution(b: &Built, stream: &str) -> GraphExecution {
    serde_json::from_value(b.table_of(stream, "graph_execution")).unwrap()
}

fn has_table_of(b: &Built, stream: &str) -> bool {
    b.bundle
        .manifest
        .streams
        .iter()
        .find(|s| s.id == stream)
        .expect("the stream")
        .tables
        .contains_key("graph_execution")
}

fn rows_of(b: &Built, stream: &str) -> u64 {
    b.bundle.manifest.streams.iter().find(|s| s.id == stream).unwrap().tables["graph_execution"].rows
}

/// The compile ids of a recording, in order.
fn order(t: &GraphExecution, recording: usize) -> Vec<&str> {
    t.recordings[recording].order.iter().map(|r| r.compile_id.as_deref().unwrap_or("?")).collect()
}

#[test]
fn graph_exec_order_ranks_ran_the_same_graphs_in_another_order() {
    // By hand: rank_0 line 7483 and rank_1 line 7484 each hold one `graph_execution` artifact
    // (envelope `stack`, no compile id) whose `graph_execution_order` lists `{"compile_id": ..}`
    // items: rank 0 `0/1 0/0 0/1 0/0 0/1 0/0` (its first two swapped by hand, md5 mismatch),
    // rank 1 `0/0 0/1 0/1 0/0 0/1 0/0`. Same multiset, positions 0 and 1 differ.
    let b = built("tlparse-tests/graph_exec_order");
    let (s0, s1) = (stream_of_file(&b, 0), stream_of_file(&b, 1));
    let (r0, r1) = (execution(&b, &s0), execution(&b, &s1));
    assert_eq!((r0.recordings.len(), r1.recordings.len()), (1, 1));
    assert_eq!(order(&r0, 0), ["[0/1]", "[0/0]", "[0/1]", "[0/0]", "[0/1]", "[0/0]"]);
    assert_eq!(order(&r1, 0), ["[0/0]", "[0/1]", "[0/1]", "[0/0]", "[0/1]", "[0/0]"]);
    assert_eq!(r0.recordings[0].order[0].logged.as_deref(), Some("0/1"));
    assert_eq!((r0.recordings[0].line, r1.recordings[0].line), (7483, 7484));
    assert!(r0.recordings[0].stack.is_some(), "the envelope stack of the recording");
    assert_ne!(r0.recordings[0].blob, r1.recordings[0].blob);
    assert!(r0.legacy.is_empty() && r0.legacy_note.is_none());
    assert_eq!((rows_of(&b, &s0), rows_of(&b, &s1)), (6, 6));
    // The compile ids join with compile_directory.
    let directory = b.table_of(&s0, "compile_directory");
    let known: Vec<&str> =
        directory["compiles"].as_array().unwrap().iter().map(|c| c["compile_id"].as_str().unwrap()).collect();
    assert!(order(&r0, 0).iter().all(|id| known.contains(id)), "{known:?}");
    snapshot("graph_execution__graph_exec_order_rank0", &b.table_of(&s0, "graph_execution"));
}

#[test]
fn multi_rank_runtime_legacy_sequence_only_on_files_5_and_6() {
    // By hand: files 5 and 6 (byte-identical, another run) log six `inductor_graph_execution`
    // artifacts, payload `{"graph": "graph_N"}`, at lines 3294, 7174, 7178, 7182, 7186, 7190:
    // graph_0, graph_1, graph_1, graph_0, graph_1, graph_0. Files 0-4 log no execution order.
    let b = built("tlparse-tests/multi_rank_runtime");
    for file in 0..5 {
        assert!(!has_table_of(&b, &stream_of_file(&b, file)), "file {file}");
    }
    for file in [5, 6] {
        let stream = stream_of_file(&b, file);
        let t = execution(&b, &stream);
        assert!(t.recordings.is_empty());
        let seq: Vec<(u64, &str)> = t.legacy.iter().map(|l| (l.line, l.graph.as_str())).collect();
        assert_eq!(
            seq,
            [
                (3294, "graph_0"),
                (7174, "graph_1"),
                (7178, "graph_1"),
                (7182, "graph_0"),
                (7186, "graph_1"),
                (7190, "graph_0")
            ]
        );
        assert!(t.legacy.iter().all(|l| l.stack.is_some()));
        assert!(t.legacy_note.as_deref().unwrap().contains("not map"));
        assert_eq!(rows_of(&b, &stream), 6);
    }
    snapshot("graph_execution__multi_rank_runtime_file5", &b.table_of(&stream_of_file(&b, 5), "graph_execution"));
}

#[test]
fn absent_without_execution_artifacts() {
    // grep: no graph_execution / inductor_graph_execution in collectives_parity or multi_rank_schedule.
    for fixture in ["tlparse-tests/collectives_parity", "tlparse-tests/multi_rank_schedule"] {
        let b = built(fixture);
        for s in &b.bundle.manifest.streams {
            assert!(!has_table_of(&b, &s.id), "{fixture} {}", s.id);
        }
    }
}

/// An artifact with no compile id and a correct md5, as torch logs execution order.
fn execution_artifact(name: &str, payload: &str) -> String {
    let md5: String = md5::Md5::digest(payload.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "V0101 00:00:00.000000 7 torch/_inductor/debug.py:1] {{\"artifact\": {{\"name\": \"{name}\", \"encoding\": \"json\"}}, \"has_payload\": \"{md5}\"}}\n\t{payload}\n"
    )
}

#[test]
fn null_and_none_ids_keep_their_place_and_malformed_payloads_are_diagnosed() {
    let log = [
        execution_artifact(
            "graph_execution",
            r#"{"graph_execution_order": [{"compile_id": "0/0"}, {"compile_id": null}, {"compile_id": "None"}, "1/0", {"compile_id": "0/0_1"}, 3]}"#,
        ),
        execution_artifact("graph_execution", r#"{"graph_execution_order": []}"#),
        execution_artifact("graph_execution", r#"{"order": []}"#),
        execution_artifact("inductor_graph_execution", r#"{"graph": "graph_0"}"#),
        execution_artifact("inductor_graph_execution", r#"{"graph": 0}"#),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("order.log");
    std::fs::write(&path, log).unwrap();
    let (out_dir, out, _) = crate::util::build(&camino::Utf8PathBuf::from_path_buf(path).unwrap());
    let b = Built { _dir: out_dir, bundle: Bundle::open(&out).unwrap() };
    let t: GraphExecution = serde_json::from_value(b.table("graph_execution")).unwrap();
    assert_eq!(t.recordings.len(), 2, "an empty recording is still a recording");
    let shown: Vec<(Option<&str>, Option<&str>)> =
        t.recordings[0].order.iter().map(|r| (r.compile_id.as_deref(), r.logged.as_deref())).collect();
    assert_eq!(
        shown,
        [
            (Some("[0/0]"), Some("0/0")),
            (None, None),
            (None, Some("None")),
            (Some("[1/0]"), Some("1/0")),
            (Some("[0/0_1]"), Some("0/0_1")),
            (None, Some("3")),
        ]
    );
    assert!(t.recordings[1].order.is_empty());
    assert_eq!(t.legacy.iter().map(|l| l.graph.as_str()).collect::<Vec<_>>(), ["graph_0"]);
    assert_eq!(b.bundle.manifest.streams[0].tables["graph_execution"].rows, 7);
    let unusable: Vec<u64> = b
        .bundle
        .diagnostics()
        .unwrap()
        .iter()
        .filter(|d| d.kind == DiagnosticKind::UnusableEntry && d.message.starts_with("graph_execution"))
        .map(|d| d.line)
        .collect();
    assert_eq!(unusable, [5, 9]);
}
