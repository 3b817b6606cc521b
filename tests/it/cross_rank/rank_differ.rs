//! `rank_differ`: per artifact key, which streams logged the same payload. The expected keys and
//! groups were computed from the raw logs with Python (entries with a payload except
//! `chromium_event` and `str`, keyed by compile id, kind/name and occurrence, payload text
//! compared), and agree with spec §2.

use serde_json::{Value, json};

use super::{Built, built_ranks, ids, label, own_ids};
use crate::tables::{artifacts_of, rows, snapshot};

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

fn counts(t: &Value) -> [u64; 5] {
    ["keys", "identical", "differs", "same_up_to_ids", "same_where_present"].map(|k| t[k].as_u64().unwrap())
}

/// multi_rank_logs: ranks 0 and 2 compiled `fn` (test_misc.py:10755) once, failing, and ranks 1
/// and 3 `kernel` (gen_many_frames.py:6), all under `[0/0]`: aligned by code, no key is on all
/// four ranks (191 keys, 163 "same where present", 28 differ). `fn`'s dynamo_output_graph and
/// dynamo_error are the same on {0,2}; `kernel`'s `[0/0]` dynamo_output_graph is the same on
/// {1,3} (both payloads have md5 has_payload equal in the two logs), fx_graph_cache_hit
/// differs {1} vs {3} byte for byte; `[0/10]` keys only on rank 1. Compared by compile id, `fn`'s
/// and `kernel`'s graphs were reported as one graph that "differs". The 28 keys whose bytes
/// differ differ only in ids: `# graph id: 6195391888` vs `6274882448` in the pre-grad graphs,
/// `Guard latency = 15.88 us` vs `17.38 us`, and so on (diffed by hand), so all 28 are
/// `same_up_to_ids`.
#[test]
fn multi_rank_logs_keys_and_groups() {
    let b = built_ranks("multi_rank_logs");
    let t = expanded(&b);
    assert_eq!(counts(&t), [191, 0, 0, 28, 163]);

    let fn_graph = key_on(&t, "rank0", "[0/0]", "dynamo_output_graph");
    assert_eq!(fn_graph["status"], "same_where_present");
    assert_eq!(groups(fn_graph), [vec!["rank0", "rank2"]]);
    assert_eq!(ids(&fn_graph["missing"]), ["rank1", "rank3"]);
    let graph = key_on(&t, "rank1", "[0/0]", "dynamo_output_graph");
    assert_eq!(graph["status"], "same_where_present");
    assert_eq!(groups(graph), [vec!["rank1", "rank3"]]);
    // The groups' blobs are the streams' own payloads, so a viewer can fetch them.
    let dir: Value = b.bundle.table("rank3", "compile_directory").unwrap().unwrap();
    let logged =
        artifacts_of(&dir, &dir["compiles"][0]).iter().find(|a| a["kind"] == "dynamo_output_graph").unwrap()["blob"]
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
    assert_eq!(counts(&t), [9, 9, 0, 0, 0]);
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

/// multi_rank_schedule: 28 keys, 17 identical on the 3 files; the other 11 split {0,2} vs {1}
/// byte for byte: five graphs/metadata of each compile id and file 1's edited `[0/0]` schedule.
/// The ten graphs/metadata differ only in ids (diffed by hand: `# graph id: 6079333840` vs
/// `6114394640`, `"graph_id"`s, `___check_obj_id(G['torch'], 4344900688)` vs `4322782208`,
/// `TORCHINDUCTOR_CACHE_DIR` `/tmp/torchinductor_cache/tmp_bqurvut` vs another temp name): only
/// the edited schedule really differs. The output code and the Dynamo graph are identical.
#[test]
fn multi_rank_schedule_file_1_differs() {
    let b = built_ranks("multi_rank_schedule");
    let t = expanded(&b);
    snapshot("cross_rank_rank_differ__multi_rank_schedule", &b.cross("rank_differ"));
    assert_eq!(counts(&t), [28, 17, 1, 10, 0]);
    let differs: Vec<(&str, &str)> = rows(&t, "artifacts")
        .iter()
        .filter(|a| a["status"] == "differs")
        .map(|a| (own_ids(a)[0].1, a["name"].as_str().unwrap()))
        .collect();
    assert_eq!(differs, [("[0/0]", "inductor_collective_schedule")]);
    // rank_1's log, line 1086 (payload line 5): `wait_tensor.default` where rank_0's and rank_2's
    // line 1086 have `reduce_scatter_tensor.default,`.
    let schedule = key(&t, Some("[0/0]"), "inductor_collective_schedule");
    assert_eq!(schedule["difference"]["line"], 5);
    assert_eq!(schedule["difference"]["text"], "\"torch.ops._c10d_functional.wait_tensor.default\"");
    assert_eq!(schedule["difference"]["usual"], "\"torch.ops._c10d_functional.reduce_scatter_tensor.default\",");
    let mut differing: Vec<(&str, &str)> = rows(&t, "artifacts")
        .iter()
        .filter(|a| a["status"] == "differs" || a["status"] == "same_up_to_ids")
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

/// graph_exec_order: 38 keys, 11 identical, 27 differ {0} vs {1} byte for byte (the device
/// string in every graph, code and cache artifact, the edited `[0/1]` schedule, and the
/// `graph_execution` logged outside any compile). Three differ only in ids (diffed by hand):
/// both `triton_kernel_info` (`"compile_time_us": 281016` vs `297203`) and the recompile reason
/// (`___check_obj_id(fn, 139870659812992)` vs `139696444471168`). `graph_execution` still
/// differs: its compile ids are the order the graphs ran in (0/1, 0/0, ... vs 0/0, 0/1, ...).
#[test]
fn graph_exec_order_two_ranks() {
    let b = built_ranks("graph_exec_order");
    let t = expanded(&b);
    assert_eq!(counts(&t), [38, 11, 24, 3, 0]);
    assert_eq!(groups(key(&t, Some("[0/1]"), "inductor_collective_schedule")), [vec!["rank0"], vec!["rank1"]]);
    assert_eq!(key(&t, Some("[0/0]"), "inductor_collective_schedule")["status"], "identical");
    assert_eq!(key(&t, Some("[0/0]"), "inductor_runtime_and_tensor_meta")["status"], "identical");
    let execution = key(&t, None, "graph_execution");
    assert_eq!(execution["status"], "differs");
    assert_eq!(execution["difference"]["line"], 4, "{execution}");
    // Two groups of one: the first (rank 0) is the usual one, rank 1 the odd one.
    assert_eq!(execution["difference"]["text"], "\"compile_id\": \"0/0\"");
    assert_eq!(execution["difference"]["usual"], "\"compile_id\": \"0/1\"");
    assert_eq!(key(&t, Some("[0/0]"), "triton_kernel_info")["status"], "same_up_to_ids");
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

/// The issue's own measure of noise, applied to what the table reports: every `differs` row's
/// groups are fetched and masked again here with the simplest rule (digit runs of 7 or more and
/// `0x` hex addresses), and they must still differ: no reported difference disappears once ids
/// and addresses are masked. `rows` are the table's artifacts.
fn assert_no_difference_is_only_ids(b: &Built, t: &Value) {
    let mask = |bytes: Vec<u8>| {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_digit() {
                let mut run = c.to_string();
                while let Some(d) = chars.next_if(|d| d.is_ascii_digit()) {
                    run.push(d);
                }
                let hex = run == "0" && chars.peek() == Some(&'x');
                if hex {
                    chars.next();
                    while chars.next_if(|d| d.is_ascii_hexdigit()).is_some() {}
                    out.push_str("0x#");
                } else {
                    out.push_str(if run.len() >= 7 { "#" } else { &run });
                }
            } else {
                out.push(c);
            }
        }
        out
    };
    for a in rows(t, "artifacts").iter().filter(|a| a["status"] == "differs") {
        let texts: std::collections::BTreeSet<String> =
            rows(a, "groups").iter().map(|g| mask(b.bundle.blob(g["blob"].as_str().unwrap()).unwrap())).collect();
        assert!(texts.len() > 1, "a `differs` row whose payloads differ only in ids: {a}");
    }
}

/// torch-2.15/ranks_shifted, paired by position and compared byte for byte (the table before
/// keys had a graph), reported 33 keys that differ; 13 of them were equal once digit runs of 7+
/// and hex addresses were masked (counted by hand with a Python reader of the bundle: guards'
/// `___check_obj_id(G['torch'], 139958002446672)` on rank 0 vs `140088525910512`, the pre-grad
/// graphs' ids). The rest were compile ids (rank 2's `"compile_id": "1/0"` where the others log
/// `"0/0"`: its frame ids are shifted), output code's `# AOT ID: ['1_backward']` vs `['0_backward']`,
/// `Guard latency = 310.97 us` vs `166.68 us`, `__builtins_dict___4` vs `___2`, the rank in
/// `setup_fake_process_groups`, and rank 2's backward post-grad graph compared with the others'
/// forward. Now: nothing differs, 31 keys are the same up to ids.
///
/// The FX cache hit: rank 2 logged `fx_graph_cache_hit` for `forward`'s forward graph (its log,
/// line 5292, inside `fw_compiler_base`) and no `before_post_grad_graph` for it, where rank 0
/// logged one at line 993 (forward) and line 3790 (backward); rank 2's backward one is at line
/// 6507. Paired by position, rank 2's backward graph was "occurrence 0" and compared with rank
/// 0's forward. Paired by identity, the forward key is missing on rank 2 (a cache hit), and the
/// backward key is identical on all four ranks.
#[test]
fn ranks_shifted_reports_no_difference_of_ids_and_no_pairing_by_position() {
    let (b, streams) = crate::tables::built_dir("torch-2.15/ranks_shifted");
    let t = expanded(&b);
    assert_eq!(counts(&t), [114, 43, 0, 31, 40]);
    assert_no_difference_is_only_ids(&b, &t);
    let rank2 = streams[&2].as_str();
    let post_grad = |graph: &str| {
        rows(&t, "artifacts")
            .iter()
            .find(|a| {
                label(a) == "forward (ranks_shifted.py:20)"
                    && a["name"] == "before_post_grad_graph"
                    && a["graph"] == graph
            })
            .unwrap_or_else(|| panic!("{graph}"))
    };
    let forward = post_grad("forward");
    assert_eq!(forward["status"], "same_where_present");
    assert_eq!(ids(&forward["missing"]), [rank2]);
    assert_eq!(ids(&forward["missing_on_cache_hit"]), [rank2]);
    let backward = post_grad("backward");
    assert_eq!(backward["status"], "identical", "{backward}");
    assert_eq!(backward["present"], 4);
    // The cache hit logged the forward's post-grad graph under a kind of its own (line 4463): it
    // is paired with the others' by name, and is the same graph.
    let logged = rows(&t, "artifacts")
        .iter()
        .find(|a| {
            label(a) == "forward (ranks_shifted.py:20)"
                && a["name"] == "inductor_post_grad_graph"
                && a["graph"] == "forward"
        })
        .unwrap();
    assert_eq!(logged["status"], "identical", "{logged}");
    let findings = b.cross("rank_findings");
    assert_eq!(findings["artifacts"]["differ"], 0);
    assert_eq!(findings["artifacts"]["same_up_to_ids"], 31);
    assert_eq!(
        findings["artifacts"]["described"][0],
        "rank 2 logged no `before_post_grad_graph` (forward) of `forward (ranks_shifted.py:20)`: FX graph cache hit"
    );
}

/// tlparse-tests/multi_rank_runtime: 61 keys differed byte for byte; 7 of them were equal once
/// digit runs of 7+ and hex addresses were masked (counted by hand: `inductor_post_to_pre_grad_nodes`
/// of `[0/0]`..`[0/3]`, and the `recompile_reasons` of `[0/1]`..`[0/3]`, whose guards name object
/// ids). With the whole rule 9 are the same up to ids (also the `triton_kernel_info` of `[0/2]` and `[0/3]`: measured
/// `compile_time_us`), and 52 differ: rank 0's `cuda:0` against `cuda:1` elsewhere, and what
/// hashes it (cache keys). The finding says so in words.
#[test]
fn multi_rank_runtime_differences_are_devices_not_ids() {
    let b = built_ranks("multi_rank_runtime");
    let t = expanded(&b);
    assert_eq!(counts(&t), [81, 6, 52, 9, 14]);
    assert_no_difference_is_only_ids(&b, &t);
    let graph = key(&t, Some("[0/0]"), "dynamo_output_graph");
    assert_eq!(graph["difference"]["variant"], 0);
    assert_eq!(graph["difference"]["line"], 2);
    let text = graph["difference"]["text"].as_str().unwrap();
    let usual = graph["difference"]["usual"].as_str().unwrap();
    assert!(
        text.contains("cuda:0") && usual.contains("cuda:1") && text.replace("cuda:0", "cuda:1") == usual,
        "{graph}"
    );
    let findings = b.cross("rank_findings");
    let first = findings["artifacts"]["described"][0].as_str().unwrap();
    assert!(
        first.starts_with("rank 0's `dynamo_output_graph` of `inner (external_utils.py:66)` differs at line 2: `"),
        "{first}"
    );
}

/// torch-2.15/ranks_cache: rank 3 alone started with a warm cache, so `forward` `[0/0]` is an
/// AOTAutograd cache hit there: its log loads both graphs inside one
/// `AOTAutogradCache.inductor_load` span (B at line 419, E at 947) with no
/// `fw_compiler_base`/`bw_compiler` span, one graph after the other, each load ending with its
/// `fx_graph_cache_hit`: lines 527 `fx_graph_runnable` (empty: md5 d41d8cd9…), 529
/// `inductor_post_grad_graph` (an entry of its own kind), 540 output code `# AOT ID:
/// ['0_forward']` (line 541), 656-657 provenance, 658 `fx_graph_cache_hit` (its key fml3svrm…,
/// the forward's FX key on every rank); then 732, 734, 754 (`# AOT ID: ['0_backward']`, line
/// 755), 943-944, 945. So the first load is the forward's and the second the backward's, and
/// `compile_directory` says so (the rule of `GraphSpans`).
///
/// Paired by identity: rank 3's post-grad graphs are rank 0's (529's md5 e7852c53… is rank 0's
/// line 1436 forward, 734's 186b0bed… its line 4290 backward), so `inductor_post_grad_graph`
/// forward and backward are identical on all four ranks. Rank 3 logged no
/// `before_post_grad_graph` and no `fx_graph_cache_miss` for `[0/0]` (its only ones, lines 2023
/// and 3717, are `[1/0]`'s), where rank 0 logged them at lines 993/2624 (forward) and 3838/5535
/// (backward): missing on rank 3, on an FX cache hit. Its `fx_graph_runnable`s are empty where
/// rank 0's (lines 878, 3715) hold the runnable (3164 bytes from line 879, the same size on ranks
/// 1 and 2): a real difference, said as such.
#[test]
fn ranks_cache_pairs_the_cache_hit_ranks_graphs_by_role() {
    let (b, streams) = crate::tables::built_dir("torch-2.15/ranks_cache");
    let rank3 = streams[&3].as_str();
    let dir: Value = b.bundle.table(rank3, "compile_directory").unwrap().unwrap();
    let roles: Vec<(u64, &str, &str)> = artifacts_of(&dir, &dir["compiles"][0])
        .iter()
        .filter(|a| (527..=945).contains(&a["line"].as_u64().unwrap()))
        .map(|a| (a["line"].as_u64().unwrap(), a["name"].as_str().unwrap(), a["graph"].as_str().unwrap_or("-")))
        .collect();
    let loaded = |graph| move |(line, name): (u64, &'static str)| (line, name, graph);
    let names = ["fx_graph_runnable", "inductor_post_grad_graph", "inductor_output_code"];
    let tail = ["inductor_provenance_tracking_node_mappings", "inductor_provenance_tracking_kernel_stack_traces"];
    let mut expected: Vec<(u64, &str, &str)> = Vec::new();
    for (lines, graph) in [([527, 529, 540, 656, 657, 658], "forward"), ([732, 734, 754, 943, 944, 945], "backward")] {
        let all = names.iter().chain(&tail).chain(&["fx_graph_cache_hit"]).copied();
        expected.extend(lines.into_iter().zip(all).map(loaded(graph)));
    }
    assert_eq!(roles, expected);

    let t = expanded(&b);
    assert_no_difference_is_only_ids(&b, &t);
    let forward = |name: &str, graph: &str| {
        rows(&t, "artifacts")
            .iter()
            .find(|a| label(a) == "forward (ranks_cache.py:28)" && a["name"] == name && a["graph"] == graph)
            .unwrap_or_else(|| panic!("{name} {graph}"))
    };
    for graph in ["forward", "backward"] {
        let post_grad = forward("inductor_post_grad_graph", graph);
        assert_eq!((&post_grad["status"], &post_grad["present"]), (&json!("identical"), &json!(4)), "{post_grad}");
        for name in ["before_post_grad_graph", "fx_graph_cache_miss"] {
            let row = forward(name, graph);
            assert_eq!(ids(&row["missing"]), [rank3], "{row}");
            assert_eq!(ids(&row["missing_on_cache_hit"]), [rank3], "{row}");
        }
        let runnable = forward("fx_graph_runnable", graph);
        assert_eq!(runnable["status"], "differs", "{runnable}");
        let odd: Vec<&Value> = rows(runnable, "groups").iter().filter(|g| g["variant"] != 0).collect();
        assert_eq!((odd.len(), &odd[0]["size"]), (1, &json!(0)), "{runnable}");
        assert_eq!(ids(&odd[0]["streams"]), [rank3]);
        let hit = forward("fx_graph_cache_hit", graph);
        assert_eq!(groups(hit), [vec![rank3]]);
    }
    // No key of rank 3's cache hit is left without its graph.
    let unpaired = rows(&t, "artifacts")
        .iter()
        .filter(|a| a["name"].as_str().unwrap().ends_with("post_grad_graph") && a["graph"].is_null())
        .count();
    assert_eq!(unpaired, 0);
    assert_eq!(forward("inductor_output_code", "forward")["present"], 4);
    let findings = b.cross("rank_findings");
    assert_eq!(findings["artifacts"]["missing_on_cache_hit"], 4);
    let described: Vec<&str> = rows(&findings["artifacts"], "described").iter().map(|d| d.as_str().unwrap()).collect();
    assert!(
        described.contains(
            &"rank 3's `fx_graph_runnable` (forward) of `forward (ranks_cache.py:28)` is empty where the others logged \
              3164 bytes"
        ),
        "{described:?}"
    );
    assert!(described.contains(
        &"rank 3 logged no `before_post_grad_graph` (backward) of `forward (ranks_cache.py:28)`: FX graph cache hit"
    ));
}
