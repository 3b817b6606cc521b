//! `rank_differ`: per artifact key, which streams logged the same payload. The expected keys and
//! groups were computed from the raw logs with Python (entries with a payload except
//! `chromium_event` and `str`, keyed by compile id, kind/name and occurrence, payload text
//! compared), and agree with spec §2.

use serde_json::{Value, json};

use super::{Built, built_ranks, ids, own_ids};
use crate::tables::{rows, snapshot};

/// The table with every row's streams named, as a reader expands a row: the largest payload group
/// without `streams` holds the streams that have the key and are in no other group, `missing`
/// left out means the streams of no group, and `compile` gets each stream's own compile id from
/// `compile_alignment`. Checks on the way that each group's `count` and the row's `present`
/// agree with the streams named.
fn expanded(b: &Built) -> Value {
    let mut t = b.cross("rank_differ");
    let alignment = b.cross("compile_alignment");
    let all: Vec<String> = rows(&t, "streams").iter().map(|s| s["stream"].as_str().unwrap().to_string()).collect();
    for a in t["artifacts"].as_array_mut().unwrap() {
        let listed: Vec<String> = rows(a, "groups")
            .iter()
            .flat_map(|g| g["streams"].as_array().into_iter().flatten())
            .map(|s| s.as_str().unwrap().to_string())
            .collect();
        let implied = rows(a, "groups").iter().filter(|g| g.get("streams").is_none()).count();
        let missing: Vec<String> = match a.get("missing") {
            Some(m) => {
                assert_eq!(implied, 1, "a row that lists `missing` leaves its largest group unlisted: {a}");
                ids(m).into_iter().map(String::from).collect()
            }
            None => {
                assert_eq!(implied, 0, "a row without `missing` lists every group: {a}");
                all.iter().filter(|s| !listed.contains(s)).cloned().collect()
            }
        };
        let rest: Vec<String> = all.iter().filter(|s| !listed.contains(s) && !missing.contains(s)).cloned().collect();
        let n = all.len() - missing.len();
        assert_eq!(a["present"], n as u64, "{a}");
        assert!(a.get("missing").is_none() || missing.len() <= n, "the smaller side is listed: {a}");
        let counts: Vec<u64> = rows(a, "groups").iter().map(|g| g["count"].as_u64().unwrap()).collect();
        for g in a["groups"].as_array_mut().unwrap() {
            if g.get("streams").is_none() {
                assert_eq!(counts.iter().max(), Some(&(rest.len() as u64)), "the unlisted group is a largest: {g}");
                g["streams"] = json!(rest);
            }
            assert_eq!(g["count"], g["streams"].as_array().unwrap().len() as u64, "{g}");
            g.as_object_mut().unwrap().remove("count");
        }
        a["missing"] = json!(missing);
        if let Some(i) = a["compile"]["aligned"].as_u64() {
            let present = &alignment["compiles"][i as usize]["present"];
            let compile_ids: Vec<Value> = present
                .as_array()
                .unwrap()
                .iter()
                .map(|p| json!({"stream": p["stream"], "compile_id": p["compile_id"]}))
                .collect();
            a["compile"]["compile_ids"] = json!(compile_ids);
        }
    }
    t
}

/// Whether a row's compile is `cid` on every stream that has it (`None`: outside any compile).
fn is(a: &Value, cid: Option<&str>) -> bool {
    match cid {
        Some(cid) => !a["compile"].is_null() && own_ids(a).iter().all(|(_, id)| *id == cid),
        None => a["compile"].is_null(),
    }
}

/// The row of a key (occurrence 0); the first compile called `cid` on every stream that has it.
fn key<'a>(t: &'a Value, cid: Option<&str>, name: &str) -> &'a Value {
    rows(t, "artifacts")
        .iter()
        .find(|a| is(a, cid) && a["name"] == name && a["occurrence"] == 0)
        .unwrap_or_else(|| panic!("{cid:?} {name}"))
}

/// The row of a key (occurrence 0) of the compile that `stream` calls `cid`.
fn key_on<'a>(t: &'a Value, stream: &str, cid: &str, name: &str) -> &'a Value {
    rows(t, "artifacts")
        .iter()
        .find(|a| {
            !a["compile"].is_null() && own_ids(a).contains(&(stream, cid)) && a["name"] == name && a["occurrence"] == 0
        })
        .unwrap_or_else(|| panic!("{stream} {cid} {name}"))
}

/// The stream groups of a row.
fn groups(row: &Value) -> Vec<Vec<&str>> {
    rows(row, "groups").iter().map(|g| ids(&g["streams"])).collect()
}

fn counts(t: &Value) -> [u64; 4] {
    ["keys", "identical", "differs", "same_where_present"].map(|k| t[k].as_u64().unwrap())
}

/// multi_rank_logs: ranks 0 and 2 compiled `fn` (test_misc.py:10755) once, failing, and ranks 1
/// and 3 `kernel` (gen_many_frames.py:6), all under `[0/0]`: aligned by code, no key is on all
/// four ranks (191 keys, 163 "same where present", 28 differ). `fn`'s dynamo_output_graph and
/// dynamo_error are the same on {0,2}; `kernel`'s `[0/0]` dynamo_output_graph is the same on
/// {1,3} (both payloads have md5 has_payload equal in the two logs), fx_graph_cache_hit
/// differs {1} vs {3}; `[0/10]` keys only on rank 1. Compared by compile id, `fn`'s and
/// `kernel`'s graphs were reported as one graph that "differs".
#[test]
fn multi_rank_logs_keys_and_groups() {
    let b = built_ranks("multi_rank_logs");
    let t = expanded(&b);
    assert_eq!(counts(&t), [191, 0, 28, 163]);

    let fn_graph = key_on(&t, "rank0", "[0/0]", "dynamo_output_graph");
    assert_eq!(fn_graph["status"], "same_where_present");
    assert_eq!(groups(fn_graph), [vec!["rank0", "rank2"]]);
    assert_eq!(ids(&fn_graph["missing"]), ["rank1", "rank3"]);
    let graph = key_on(&t, "rank1", "[0/0]", "dynamo_output_graph");
    assert_eq!(graph["status"], "same_where_present");
    assert_eq!(groups(graph), [vec!["rank1", "rank3"]]);
    // The groups' blobs are the streams' own payloads, so a viewer can fetch them.
    let dir: Value = b.bundle.table("rank3", "compile_directory").unwrap().unwrap();
    let logged = dir["compiles"][0]["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "dynamo_output_graph")
        .unwrap()["blob"]
        .clone();
    assert_eq!(graph["groups"][0]["blob"], logged);
    let fn_text = b.bundle.blob(fn_graph["groups"][0]["blob"].as_str().unwrap()).unwrap();
    assert_ne!(fn_text, b.bundle.blob(logged.as_str().unwrap()).unwrap(), "two functions, two graphs");

    let hit = key_on(&t, "rank1", "[0/0]", "fx_graph_cache_hit");
    assert_eq!(groups(hit), [vec!["rank1"], vec!["rank3"]]);
    assert_eq!(ids(&hit["missing"]), ["rank0", "rank2"]);
    let error = key_on(&t, "rank0", "[0/0]", "dynamo_error");
    assert_eq!(error["status"], "same_where_present");
    assert_eq!(groups(error), [vec!["rank0", "rank2"]]);
    assert_eq!(ids(&error["missing"]), ["rank1", "rank3"]);
    for a in rows(&t, "artifacts").iter().filter(|a| is(a, Some("[0/10]"))) {
        assert_eq!(groups(a), [vec!["rank1"]]);
    }
}

/// messy_input: two byte-identical copies of simple.log, so all 9 payload keys are identical.
#[test]
fn identical_copies_are_identical_everywhere() {
    let b = built_ranks("multi_rank_messy_input");
    let t = expanded(&b);
    assert_eq!(counts(&t), [9, 9, 0, 0]);
    assert_eq!(t["with_missing"], 0);
    let kinds: Vec<&str> = rows(&t, "artifacts").iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"inductor_output_code") && kinds.contains(&"dynamo_output_graph"), "{kinds:?}");
}

/// multi_rank_runtime: 81 keys, 6 of them the legacy `inductor_graph_execution` artifacts with no
/// compile id (files 5 and 6 only). Only 6 keys are identical on all 7 files:
/// inductor_collective_schedule, inductor_provenance_tracking_node_mappings and
/// aot_forward_graph_fw_metadata, each of `[0/0]` and `[0/1]`. A typical graph splits {0},
/// {1,2,3,4}, {5,6}, and rank 0 vs rank 1 differ only in the device (`cuda:0` vs `cuda:1`).
#[test]
fn multi_rank_runtime_keys_and_groups() {
    let b = built_ranks("multi_rank_runtime");
    let t = expanded(&b);
    assert_eq!(t["keys"], 81);
    let identical: Vec<(&str, &str)> = rows(&t, "artifacts")
        .iter()
        .filter(|a| a["status"] == "identical")
        .map(|a| (own_ids(a)[0].1, a["name"].as_str().unwrap()))
        .collect();
    let mut expected = Vec::new();
    for cid in ["[0/0]", "[0/1]"] {
        for name in [
            "aot_forward_graph_fw_metadata",
            "inductor_collective_schedule",
            "inductor_provenance_tracking_node_mappings",
        ] {
            expected.push((cid, name));
        }
    }
    let mut sorted = identical.clone();
    sorted.sort();
    assert_eq!(sorted, expected);

    let graph = key(&t, Some("[0/0]"), "dynamo_output_graph");
    assert_eq!(groups(graph), [vec!["rank0"], vec!["rank1-0", "rank2", "rank3", "rank4"], vec!["rank1-1", "rank1-2"]]);
    let text =
        |i: usize| String::from_utf8(b.bundle.blob(graph["groups"][i]["blob"].as_str().unwrap()).unwrap()).unwrap();
    assert_ne!(text(0), text(1));
    assert_eq!(text(0).replace("cuda:0", "cuda:1"), text(1));

    let meta = key(&t, Some("[0/0]"), "inductor_runtime_and_tensor_meta");
    assert_eq!(
        groups(meta),
        [vec!["rank0"], vec!["rank1-0"], vec!["rank2"], vec!["rank3"], vec!["rank1-1", "rank1-2"]]
    );
    assert_eq!(ids(&meta["missing"]), ["rank4"]);
    let config = key(&t, Some("[0/0]"), "torch._functorch.config");
    assert_eq!(groups(config), [vec!["rank0", "rank1-0", "rank2", "rank3", "rank4"], vec!["rank1-1", "rank1-2"]]);
    for a in rows(&t, "artifacts").iter().filter(|a| is(a, Some("[0/2]")) || is(a, Some("[0/3]"))) {
        assert_eq!(ids(&a["missing"]), ["rank1-1", "rank1-2"], "{} {}", a["compile"]["label"], a["name"]);
    }
    let legacy: Vec<&Value> = rows(&t, "artifacts").iter().filter(|a| is(a, None)).collect();
    assert_eq!(legacy.len(), 6);
    for (i, a) in legacy.iter().enumerate() {
        assert_eq!(
            (a["name"].as_str().unwrap(), a["occurrence"].as_u64().unwrap()),
            ("inductor_graph_execution", i as u64)
        );
        assert_eq!(groups(a), [vec!["rank1-1", "rank1-2"]]);
    }
    // Files 5 and 6 are byte copies: neither is ever alone.
    let alone: Vec<u64> = rows(&t, "streams").iter().map(|s| s["alone"].as_u64().unwrap()).collect();
    assert_eq!(&alone[5..], [0, 0]);
}

/// multi_rank_schedule: 28 keys, 17 identical on the 3 files; the other 11 split {0,2} vs {1}:
/// five graphs/metadata of each compile id and file 1's edited `[0/0]` schedule. The output code
/// and the Dynamo graph are identical on all three.
#[test]
fn multi_rank_schedule_file_1_differs() {
    let b = built_ranks("multi_rank_schedule");
    let t = expanded(&b);
    snapshot("cross_rank_rank_differ__multi_rank_schedule", &b.cross("rank_differ"));
    assert_eq!(counts(&t), [28, 17, 11, 0]);
    let mut differing: Vec<(&str, &str)> = rows(&t, "artifacts")
        .iter()
        .filter(|a| a["status"] == "differs")
        .map(|a| {
            assert_eq!(groups(a), [vec!["rank0-0", "rank0-2"], vec!["rank0-1"]]);
            (own_ids(a)[0].1, a["name"].as_str().unwrap())
        })
        .collect();
    differing.sort();
    let mut expected = vec![("[0/0]", "inductor_collective_schedule")];
    for cid in ["[0/0]", "[1/0]"] {
        for name in [
            "after_pre_grad_graph",
            "before_pre_grad_graph",
            "dynamo_cpp_guards_str",
            "fx_graph_runnable",
            "inductor_post_to_pre_grad_nodes",
        ] {
            expected.push((cid, name));
        }
    }
    expected.sort();
    assert_eq!(differing, expected);
    for name in ["inductor_output_code", "dynamo_output_graph"] {
        assert_eq!(key(&t, Some("[0/0]"), name)["status"], "identical", "{name}");
    }
}

/// graph_exec_order: 38 keys, 11 identical, 27 differ {0} vs {1} (the device string in every
/// graph, code and cache artifact, the edited `[0/1]` schedule, and the `graph_execution` logged
/// outside any compile).
#[test]
fn graph_exec_order_two_ranks() {
    let b = built_ranks("graph_exec_order");
    let t = expanded(&b);
    assert_eq!(counts(&t), [38, 11, 27, 0]);
    assert_eq!(groups(key(&t, Some("[0/1]"), "inductor_collective_schedule")), [vec!["rank0"], vec!["rank1"]]);
    assert_eq!(key(&t, Some("[0/0]"), "inductor_collective_schedule")["status"], "identical");
    assert_eq!(key(&t, Some("[0/0]"), "inductor_runtime_and_tensor_meta")["status"], "identical");
    let execution = key(&t, None, "graph_execution");
    assert_eq!(execution["status"], "differs");
    // Output code is keyed by kind: its logged name carries the code's hash, which differs here.
    let code = key(&t, Some("[0/0]"), "inductor_output_code");
    assert_eq!(groups(code), [vec!["rank0"], vec!["rank1"]]);
    assert_eq!(t["with_missing"], 0);
}

/// Checked by hand against the raw logs of torch-2.15/ranks_shifted (their `has_payload` md5s):
/// `forward`'s `dynamo_output_graph` is 035289c8… on ranks 0, 1 and 3 as `[0/0]` (line 120 of
/// each) and on rank 2 as `[1/0]` (line 3590): one payload on all four ranks, so the row lists
/// no stream at all (one group of 4, unlisted; `missing` empty). Rank 1 alone recompiled
/// `forward` (`[0/1]`, line 16666, d3124297…): one rank of four has it, so the row lists that
/// rank and leaves the three that lack it implied (no `missing`).
#[test]
fn rows_name_only_the_streams_outside_the_largest_side() {
    let (b, streams) = crate::tables::built_dir("torch-2.15/ranks_shifted");
    let full = expanded(&b);
    let raw = b.cross("rank_differ");
    let raw_row = |row: &Value| {
        let i = rows(&full, "artifacts").iter().position(|a| std::ptr::eq(a, row)).unwrap();
        rows(&raw, "artifacts")[i].clone()
    };
    let forward = raw_row(key_on(&full, &streams[&2], "[1/0]", "dynamo_output_graph"));
    assert_eq!(own_ids(key_on(&full, &streams[&2], "[1/0]", "dynamo_output_graph")).len(), 4);
    assert_eq!(forward["status"], "identical");
    assert_eq!(forward["present"], 4);
    assert_eq!(forward["missing"], json!([]));
    let group = &forward["groups"][0];
    assert_eq!((forward["groups"].as_array().unwrap().len(), &group["count"]), (1, &json!(4)));
    assert!(group.get("streams").is_none(), "{group}");
    assert_eq!(b.bundle.blob(group["blob"].as_str().unwrap()).unwrap().len() as u64, group["size"]);

    let recompile = raw_row(key_on(&full, &streams[&1], "[0/1]", "dynamo_output_graph"));
    assert_eq!(recompile["status"], "same_where_present");
    assert_eq!(recompile["present"], 1);
    assert!(recompile.get("missing").is_none(), "{recompile}");
    assert_eq!(recompile["groups"].as_array().unwrap().len(), 1);
    assert_eq!(recompile["groups"][0]["count"], 1);
    assert_eq!(ids(&recompile["groups"][0]["streams"]), [streams[&1].as_str()]);
    // Its compile is named by index and label; each rank's own id is in compile_alignment.
    assert_eq!(recompile["compile"].as_object().unwrap().len(), 2, "{}", recompile["compile"]);
}
