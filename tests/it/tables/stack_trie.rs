//! The stack trie.

use super::{built, rows, snapshot};

#[test]
fn every_dynamo_start_ends_in_a_leaf_with_its_status() {
    // The graph_breaks fixture logs 17 dynamo_start entries (one per frame compile: 16 frames,
    // frame 6 twice); all start at graph_breaks.py:69 `<module>` (`out = cm(x)`), so the trie has
    // one root whose `total` is 17.
    let b = built("torch-2.15/graph_breaks");
    let t = b.table("stack_trie");
    let stacks = b.bundle.stacks(&b.only_stream()).unwrap();
    let nodes = rows(&t, "nodes");
    let roots = t["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 1);
    let root = &nodes[roots[0].as_u64().unwrap() as usize];
    assert_eq!(root["total"], 17);
    let frame = &stacks.frames[root["frame"].as_u64().unwrap() as usize];
    assert_eq!((frame.name.as_str(), frame.line), ("<module>", 69));
    assert!(frame.file.as_deref().unwrap().ends_with("graph_breaks.py"));
    let leaves: Vec<(&str, &str)> = nodes
        .iter()
        .flat_map(|n| n["compiles"].as_array().unwrap())
        .map(|c| (c["compile_id"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(leaves.len(), 17);
    assert!(leaves.contains(&("[0/0]", "restarted")));
    assert!(leaves.contains(&("[6/1]", "ok")));
    // Parents and children agree.
    for (i, n) in nodes.iter().enumerate() {
        for c in n["children"].as_array().unwrap() {
            assert_eq!(nodes[c.as_u64().unwrap() as usize]["parent"], i);
        }
    }
    snapshot("stack_trie__graph_breaks", &t);
}

#[test]
fn failed_compiles_are_red_leaves() {
    // comp_failure.log: one compile, [0/0], which failed.
    let b = built("tlparse-tests/comp_failure.log");
    let t = b.table("stack_trie");
    let leaves: Vec<&serde_json::Value> =
        rows(&t, "nodes").iter().flat_map(|n| n["compiles"].as_array().unwrap()).collect();
    assert_eq!(leaves.len(), 1);
    assert_eq!(leaves[0]["compile_id"], "[0/0]");
    assert_eq!(leaves[0]["status"], "failed");
}
