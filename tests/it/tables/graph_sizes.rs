//! Graph sizes per compile.

use tlparse_build::schema::tables::{CompileGraphs, GraphSize, GraphSizes};

use super::{built, snapshot};

fn graph_sizes(rel: &str) -> (GraphSizes, serde_json::Value) {
    let b = built(rel);
    let v = b.table("graph_sizes");
    (serde_json::from_value(v.clone()).unwrap(), v)
}

fn graph<'a>(c: &'a CompileGraphs, name: &str) -> &'a GraphSize {
    c.graphs.iter().find(|g| g.name == name).unwrap_or_else(|| panic!("no graph {name}"))
}

#[test]
fn simple_graph_counts_match_a_hand_count() {
    // Hand count of the simple fixture's dynamo_output_graph: the forward body has `l_x_ = L_x_`
    // and `l_y_ = L_y_` (placeholders renamed, not counted) and 6 nodes: sin, cos, a, mul, relu,
    // sum_1. compilation_metrics says graph_op_count 6, graph_node_count 9 (6 + 2 placeholders
    // + output), graph_input_count 2. aot_inference_graph has the same 6 ops in aten form (its
    // placeholders are parameters, on a multi-line signature). The output code has 123 lines.
    let (t, _) = graph_sizes("torch-2.15/simple");
    assert_eq!(t.compiles.len(), 1);
    let c = &t.compiles[0];
    assert_eq!((c.graph_op_count, c.graph_node_count, c.graph_input_count), (Some(6), Some(9), Some(2)));
    let dynamo = graph(c, "dynamo_output_graph");
    assert_eq!((dynamo.fx_nodes, dynamo.fx_ops, dynamo.bytes, dynamo.lines), (Some(6), Some(6), 757, 16));
    assert_eq!(graph(c, "aot_inference_graph").fx_nodes, Some(6));
    let code = c.graphs.iter().find(|g| g.kind == "inductor_output_code").unwrap();
    assert_eq!((code.fx_nodes, code.lines), (None, 123));
    let names: Vec<&str> = c.graphs.iter().map(|g| g.name.as_str()).collect();
    // The output code (log line 1737) was written to .../4b/c4be3a54mw....py: tlparse names its
    // file after that stem; here the name is the kind, and tlparse's name is kept beside it.
    assert_eq!(names[8], "inductor_output_code");
    assert_eq!(
        code.tlparse_name.as_deref(),
        Some("inductor_output_code_c4be3a54mwtew7xacccetv3taxjob4drz6xjaw4t3sqmkrbxdyzp")
    );
    assert!(c.graphs[..8].iter().all(|g| g.tlparse_name.is_none()), "tlparse names the graphs as we do");
    assert_eq!(
        names[..8],
        [
            "dynamo_output_graph",
            "before_pre_grad_graph",
            "after_pre_grad_graph",
            "aot_inference_graph",
            "before_joint_graph",
            "after_joint_graph",
            "before_post_grad_graph",
            "inductor_post_grad_graph",
        ][..]
    );
}

#[test]
fn get_attr_nodes_count_as_nodes_not_ops() {
    // cache_hit_miss.log (flex attention): the dynamo graph's body has 11 renamed placeholders,
    // 2 get_attr lines (`score_mod_0 = self.score_mod_0`, `mask_fn_0 = self.mask_fn_0`), then
    // flex_attention and 2 getitems; the nested `class score_mod_0` after it is not counted.
    // compilation_metrics: graph_op_count 3.
    let (t, _) = graph_sizes("tlparse-tests/cache_hit_miss.log");
    let c = &t.compiles[0];
    let dynamo = graph(c, "dynamo_output_graph");
    assert_eq!((dynamo.fx_nodes, dynamo.fx_ops), (Some(5), Some(3)));
    assert_eq!(c.graph_op_count, Some(3));
}

#[test]
fn dynamo_graph_ops_equal_graph_op_count_everywhere() {
    // For every compile with both, fx_ops of its dynamo_output_graph equals graph_op_count and
    // fx_nodes + graph_input_count + 1 equals graph_node_count (checked over all fixtures with a
    // python version of the rule; these are the ones with the most compiles).
    for rel in [
        "torch-2.15/graph_breaks",
        "torch-2.15/recompiles",
        "torch-2.15/dynamic_shapes",
        "tlparse-tests/comp_metrics.log",
    ] {
        let (t, _) = graph_sizes(rel);
        let mut checked = 0;
        for c in &t.compiles {
            let Some(ops) = c.graph_op_count else { continue };
            let Some(g) = c.graphs.iter().find(|g| g.kind == "dynamo_output_graph") else { continue };
            assert_eq!(g.fx_ops, Some(ops), "{rel} {:?}", c.compile_id);
            if let (Some(nodes), Some(inputs)) = (c.graph_node_count, c.graph_input_count) {
                assert_eq!(g.fx_nodes.unwrap() + inputs + 1, nodes, "{rel} {:?}", c.compile_id);
            }
            checked += 1;
        }
        assert!(checked > 0, "{rel}");
    }
}

#[test]
fn training_graphs_and_graphs_outside_compiles() {
    // cache_cold trains: [0/0] logs aot_joint_graph, aot_forward_graph and aot_backward_graph.
    // Hand count of the joint graph: 60 assignment lines (permute .. permute_13) in forward's body after the
    // `primals_1, ..., = fx_pytree.tree_flatten_spec(...)` line (not a node line).
    let (t, v) = graph_sizes("torch-2.15/cache_cold");
    let c = t.compiles.iter().find(|c| c.compile_id.as_deref() == Some("[0/0]")).unwrap();
    assert_eq!(graph(c, "aot_joint_graph").fx_nodes, Some(60));
    assert!(graph(c, "aot_forward_graph").fx_nodes.is_some());
    assert!(graph(c, "aot_backward_graph").fx_nodes.is_some());
    snapshot("graph_sizes__cache_cold", &v);

    // aot_inductor compiles outside torch.compile: its graphs (with a `stack`, no compile id)
    // land in the row with a null compile id; the graph_dump C++ code is counted in lines.
    let (t, _) = graph_sizes("torch-2.15/aot_inductor");
    let outside = t.compiles.iter().find(|c| c.compile_id.is_none()).unwrap();
    assert!(outside.graphs.iter().any(|g| g.name == "before_pre_grad_graph" && g.fx_nodes == Some(5)));
    let wrapper = outside.graphs.iter().find(|g| g.name == "inductor_aot_wrapper_code").unwrap();
    assert_eq!((wrapper.kind.as_str(), wrapper.fx_nodes), ("graph_dump", None));
}

#[test]
fn exported_programs_are_counted() {
    // export_dtrace (draft export, file amk0ty5z): the exported_program of [3/0], hand count of
    // its forward body: sum_1, gt, ne, item, sym_ite, ge, _assert_scalar_default, le,
    // _assert_scalar_default_1, eq, sym_not, _assert_scalar_default_2, sub = 13 (the three
    // `_assert_scalar_default*` lines have no type annotation; the `Graph signature:` part after
    // the graph is not counted).
    let b = built("torch-2.15/export_dtrace");
    let programs: Vec<(Option<String>, Option<u64>)> = b
        .bundle
        .manifest
        .streams
        .iter()
        .filter(|s| s.tables.contains_key("graph_sizes"))
        .flat_map(|s| serde_json::from_value::<GraphSizes>(b.table_of(&s.id, "graph_sizes")).unwrap().compiles)
        .flat_map(|c| {
            let id = c.compile_id.clone();
            c.graphs.into_iter().filter(|g| g.kind == "exported_program").map(move |g| (id.clone(), g.fx_nodes))
        })
        .collect();
    assert!(programs.contains(&(Some("[3/0]".to_string()), Some(13))), "{programs:?}");
}
