//! Collectives: schedules, calls in the output code, parity and unmatched waits.

use serde_json::Value;

use super::{built, built_dir, rows, snapshot};
use crate::util::build;

const AR: &str = "torch.ops._c10d_functional.all_reduce_.default";
const AG: &str = "torch.ops._c10d_functional.all_gather_into_tensor.default";
const RS: &str = "torch.ops._c10d_functional.reduce_scatter_tensor.default";
const WAIT: &str = "torch.ops._c10d_functional.wait_tensor.default";

fn compile<'a>(t: &'a Value, id: &str) -> &'a Value {
    rows(t, "compiles").iter().find(|c| c["compile_id"] == id).unwrap_or_else(|| panic!("no row {id}"))
}

fn ids(t: &Value) -> Vec<&str> {
    rows(t, "compiles").iter().map(|c| c["compile_id"].as_str().unwrap()).collect()
}

/// The ops of a compile's only schedule.
fn schedule(c: &Value) -> Vec<&str> {
    let schedules = c["schedules"].as_array().unwrap();
    assert_eq!(schedules.len(), 1);
    schedules[0]["ops"].as_array().unwrap().iter().map(|o| o.as_str().unwrap()).collect()
}

/// (op, handle, payload line) of every call in a compile's output code.
fn calls(c: &Value) -> Vec<(&str, &str, u64)> {
    c["code"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| o["calls"].as_array().unwrap())
        .map(|k| (k["op"].as_str().unwrap(), k["handle"].as_str().unwrap(), k["line"].as_u64().unwrap()))
        .collect()
}

fn unmatched(c: &Value) -> Vec<(&str, &str, u64)> {
    c["unmatched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["op"].as_str().unwrap(), k["handle"].as_str().unwrap(), k["line"].as_u64().unwrap()))
        .collect()
}

fn clean(c: &Value) -> bool {
    let p = &c["parity"];
    p["matches"] == true
        && p["same_sequence"] == true
        && p["tlparse_offset"] == 0
        && p["tlparse_missing_waits"] == 0
        && c["unmatched"].as_array().unwrap().is_empty()
        && c["unmatched_waits"].as_array().unwrap().is_empty()
}

#[test]
fn collectives_parity_finds_the_removed_waits() {
    // Checked by hand (python over the raw log, payload lines 1-based): the [0/0] output code
    // (header line 1340) calls all_reduce_(buf1) at line 141 and has no wait at all; the [0/1] one
    // (line 4968) calls all_reduce_(buf4) at 250, buf11 = all_gather_into_tensor at 262 and
    // buf12 = reduce_scatter_tensor at 267, and its three waits are commented out
    // (`#torch.ops._c10d_functional.wait_tensor.default(buf4)` at 252, buf11 at 271, buf12 at
    // 274); `assert_size_stride(buf11, ..., 'torch.ops..all_gather_into_tensor.default')` at 263
    // is a string. [0/2] and [0/3] keep their waits (252, 271, 274). The schedules were not
    // edited: [0/0] [all_reduce_, wait], the others the 6-op sequence.
    let b = built("tlparse-tests/collectives_parity");
    let t = b.table_of("rank0", "collectives");
    assert_eq!(ids(&t), ["[0/0]", "[0/1]", "[0/2]", "[0/3]"]);

    let c00 = compile(&t, "[0/0]");
    assert_eq!(unmatched(c00), [(AR, "buf1", 141)]);
    assert_eq!(calls(c00), [(AR, "buf1", 141)]);
    assert_eq!(schedule(c00), [AR, WAIT]);
    let c01 = compile(&t, "[0/1]");
    assert_eq!(unmatched(c01), [(AR, "buf4", 250), (AG, "buf11", 262), (RS, "buf12", 267)]);
    assert_eq!(calls(c01).len(), 3, "the commented-out waits and the assert strings are not calls");
    for id in ["[0/2]", "[0/3]"] {
        let c = compile(&t, id);
        assert_eq!(
            calls(c),
            [
                (AR, "buf4", 250),
                (WAIT, "buf4", 252),
                (AG, "buf11", 262),
                (RS, "buf12", 267),
                (WAIT, "buf11", 271),
                (WAIT, "buf12", 274)
            ]
        );
        assert!(clean(c), "{id}");
    }

    // tlparse's test_collectives_parity_detects_mismatch: offset 0 for both, missing_waits 1 and 3.
    assert_eq!(
        (c00["parity"]["tlparse_offset"].as_u64(), c00["parity"]["tlparse_missing_waits"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(
        (c01["parity"]["tlparse_offset"].as_u64(), c01["parity"]["tlparse_missing_waits"].as_u64()),
        (Some(0), Some(3))
    );
    // Ours also says the schedule's waits are missing from the code.
    assert_eq!(c01["parity"]["only_in_schedule"], serde_json::json!([WAIT]));
    assert_eq!(c01["parity"]["matches"], false);

    let s = &t["summary"];
    assert_eq!(s["with_schedule"], 4);
    assert_eq!(s["parity_checked"], 4);
    assert_eq!(s["parity_mismatches"], serde_json::json!(["[0/0]", "[0/1]"]));
    assert_eq!(s["unmatched_collectives"], 4);
    assert_eq!(s["unmatched_waits"], 0);
    snapshot("collectives__collectives_parity", &t);
}

#[test]
fn multi_rank_runtime_schedules_agree_with_their_code_on_every_stream() {
    // Checked by hand: every file has one schedule and one output code per compile id; rank_0's
    // [0/1] schedule (line 5490) is [all_reduce_, wait_tensor, all_gather_into_tensor,
    // reduce_scatter_tensor, wait_tensor, wait_tensor] and its code (line 4969) calls them in
    // that order, each collective waited for. Files 0-4 have [0/0]..[0/3], files 5 and 6 (whose
    // envelopes say rank 1) [0/0] and [0/1], with the same schedules.
    let (b, streams) = built_dir("tlparse-tests/multi_rank_runtime");
    assert_eq!(streams.len(), 7);
    let t0 = b.table_of(&streams[&0], "collectives");
    let c01 = compile(&t0, "[0/1]");
    assert_eq!(schedule(c01), [AR, WAIT, AG, RS, WAIT, WAIT]);
    assert_eq!(c01["parity"]["ops"].as_array().unwrap().len(), 4);
    assert!(c01["parity"]["ops"].as_array().unwrap().iter().all(|k| k["matches"] == true));
    for (file_rank, stream) in &streams {
        let t = b.table_of(stream, "collectives");
        let expected: &[&str] =
            if *file_rank >= 5 { &["[0/0]", "[0/1]"] } else { &["[0/0]", "[0/1]", "[0/2]", "[0/3]"] };
        assert_eq!(ids(&t), expected, "file rank {file_rank}");
        assert_eq!(schedule(compile(&t, "[0/0]")), [AR, WAIT]);
        for c in rows(&t, "compiles") {
            assert!(clean(c), "file rank {file_rank} {}", c["compile_id"]);
            if c["compile_id"] != "[0/0]" {
                assert_eq!(schedule(c), [AR, WAIT, AG, RS, WAIT, WAIT]);
            }
        }
        assert_eq!(t["summary"]["parity_mismatches"], serde_json::json!([]));
    }
    snapshot("collectives__multi_rank_runtime_rank0", &t0);
}

#[test]
fn multi_rank_schedule_rank_1_code_has_a_reduce_scatter_its_schedule_lacks() {
    // Checked by hand: file rank 1's [0/0] schedule (line 1081, edited) is [all_reduce_,
    // wait_tensor, all_gather_into_tensor, wait_tensor], while its output code (line 810) calls
    // all_reduce_(buf0) at 91, wait(buf0) 93, buf5 = all_gather 95, buf6 = reduce_scatter 99,
    // wait(buf5) 103, wait(buf6) 106. Files 0 and 2 have the 6-op schedule; [1/0] is
    // [all_reduce_, wait_tensor] everywhere.
    let (b, streams) = built_dir("tlparse-tests/multi_rank_schedule");
    let t1 = b.table_of(&streams[&1], "collectives");
    let c = compile(&t1, "[0/0]");
    assert_eq!(schedule(c), [AR, WAIT, AG, WAIT]);
    assert_eq!(
        calls(c),
        [
            (AR, "buf0", 91),
            (WAIT, "buf0", 93),
            (AG, "buf5", 95),
            (RS, "buf6", 99),
            (WAIT, "buf5", 103),
            (WAIT, "buf6", 106)
        ]
    );
    let p = &c["parity"];
    assert_eq!(p["only_in_code"], serde_json::json!([RS]));
    assert_eq!(p["only_in_schedule"], serde_json::json!([]));
    assert_eq!(p["matches"], false);
    // tlparse would report offset 1, missing_waits 0 (spec §2.4).
    assert_eq!((p["tlparse_offset"].as_u64(), p["tlparse_missing_waits"].as_u64()), (Some(1), Some(0)));
    assert!(c["unmatched"].as_array().unwrap().is_empty());
    assert!(clean(compile(&t1, "[1/0]")));
    assert_eq!(t1["summary"]["parity_mismatches"], serde_json::json!(["[0/0]"]));
    for file_rank in [0, 2] {
        let t = b.table_of(&streams[&file_rank], "collectives");
        assert_eq!(schedule(compile(&t, "[0/0]")), [AR, WAIT, AG, RS, WAIT, WAIT]);
        assert!(rows(&t, "compiles").iter().all(clean), "file rank {file_rank}");
    }
    snapshot("collectives__multi_rank_schedule_rank1", &t1);
}

#[test]
fn graph_exec_order_rank_0_schedule_lacks_the_reduce_scatter() {
    // Checked by hand: rank_0's [0/1] schedule (line 5795, edited) has 5 ops, no
    // reduce_scatter_tensor; its code (line 5036) calls buf12 = reduce_scatter_tensor at 280.
    // rank_1's schedule has the 6 ops; both [0/0] are [all_reduce_, wait_tensor].
    let (b, streams) = built_dir("tlparse-tests/graph_exec_order");
    let t0 = b.table_of(&streams[&0], "collectives");
    let c = compile(&t0, "[0/1]");
    assert_eq!(schedule(c), [AR, WAIT, AG, WAIT, WAIT]);
    assert!(calls(c).contains(&(RS, "buf12", 280)));
    assert_eq!(c["parity"]["only_in_code"], serde_json::json!([RS]));
    assert_eq!(c["parity"]["tlparse_offset"], 1);
    assert!(c["unmatched"].as_array().unwrap().is_empty());
    assert!(clean(compile(&t0, "[0/0]")));
    let t1 = b.table_of(&streams[&1], "collectives");
    assert!(rows(&t1, "compiles").iter().all(clean));
}

#[test]
fn streams_without_collectives_have_no_table() {
    // multi_rank_logs and the torch-2.15 traces contain no `c10d_functional` text and no
    // schedule artifact.
    let (b, streams) = built_dir("tlparse-tests/multi_rank_logs");
    for stream in streams.values() {
        assert!(b.bundle.table::<Value>(stream, "collectives").unwrap().is_none(), "{stream}");
    }
    assert!(!built("torch-2.15/graph_breaks").has_table("collectives"));
}

#[test]
fn null_schedule_elements_are_kept() {
    // torch logs `list[str | None]`; tlparse's `Vec<String>` aborts on a null. Replace the
    // reduce_scatter of collectives_parity's [0/2] schedule with null (the md5 then mismatches,
    // the entry is still used).
    let log =
        std::fs::read_to_string("fixtures-repo/tlparse-tests/collectives_parity/dedicated_log_torch_trace_rank_0.log")
            .unwrap();
    let mut lines: Vec<&str> = log.split('\n').collect();
    // Header at line 9413; the payload's lines follow: `[`, all_reduce_, wait, all_gather, reduce_scatter.
    assert!(lines[9412].contains("inductor_collective_schedule"));
    assert_eq!(lines[9417], format!("\t\"{RS}\","));
    lines[9417] = "\tnull,";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edited.log");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let (_out_dir, out, _) = build(&camino::Utf8PathBuf::from_path_buf(path).unwrap());
    let bundle = tlparse_build::bundle::reader::Bundle::open(&out).unwrap();
    let stream = &bundle.manifest.streams[0].id;
    let t: Value = bundle.table(stream, "collectives").unwrap().unwrap();
    let c = compile(&t, "[0/2]");
    assert_eq!(c["schedules"][0]["ops"], serde_json::json!([AR, WAIT, AG, null, WAIT, WAIT]));
    let p = &c["parity"];
    assert_eq!(p["unnamed_in_schedule"], 1);
    assert_eq!(p["only_in_code"], serde_json::json!([RS]));
    assert_eq!(p["matches"], false);
}
