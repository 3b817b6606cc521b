//! `graph_sizes`: how big each IR of each compile is (Dynamo graph, AOT graphs, pre/post-grad
//! graphs, output code), so size changes along the pipeline and across recompiles show at a glance.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/graph_sizes.json.zst`: per compile id, every graph or generated-code entry in
/// log order with its size. `rows` counts `compiles`.
///
/// An entry is a graph when its kind is `dynamo_output_graph`, `aot_forward_graph`,
/// `aot_backward_graph`, `aot_joint_graph`, `aot_inference_graph`, `inductor_pre_grad_graph`,
/// `inductor_post_grad_graph`, `compiled_autograd_graph`, `optimize_ddp_split_graph` (any kind
/// ending in `_graph`), `optimize_ddp_split_child`, `exported_program`, `inductor_output_code` or
/// `graph_dump`; or when it is an `artifact` whose name ends in `_graph` or whose payload is a
/// readable FX GraphModule (`before_pre_grad_graph`, `after_post_grad_graph`,
/// `before_recompile_pre_grad`, ...). Entries without a payload are left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphSizes {
    /// One row per compile id with graphs or graph counts in its `compilation_metrics`, in order of
    /// first appearance in the stream; then, if any, a row with a null `compile_id` for graphs
    /// logged outside any compile.
    pub compiles: Vec<CompileGraphs>,
}

/// The graphs of one compile id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileGraphs {
    /// The compile id as displayed (`[0/1]`); null for graphs outside any compile.
    pub compile_id: Option<String>,
    /// `graph_op_count` from the compile's `compilation_metrics` (call nodes of the Dynamo graph),
    /// when logged.
    pub graph_op_count: Option<u64>,
    /// `graph_node_count` from `compilation_metrics` (all nodes of the Dynamo graph, with
    /// placeholders and the output), when logged.
    pub graph_node_count: Option<u64>,
    /// `graph_input_count` from `compilation_metrics`, when logged.
    pub graph_input_count: Option<u64>,
    /// The compile's graphs, in log order.
    pub graphs: Vec<GraphSize>,
}

/// The size of one graph or generated-code entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GraphSize {
    /// What to call it, as in `compile_directory` artifacts ([`super::ArtifactRef::name`]): the
    /// artifact / graph_dump name, else the kind.
    pub name: String,
    /// tlparse's name for it where that differs ([`super::ArtifactRef::tlparse_name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlparse_name: Option<String>,
    /// The entry's kind.
    pub kind: String,
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Blob id of the payload.
    pub blob: String,
    /// Payload size in bytes.
    pub bytes: u64,
    /// Payload lines.
    pub lines: u64,
    /// For a readable FX GraphModule (`class X(torch.nn.Module):` then `def forward(...)`, as
    /// `print_readable` writes it; `ExportedProgram:` may come first): the number of FX nodes of
    /// the top-level graph other than placeholders and the output. Counted as the lines of the
    /// top-level `forward` body of the form `name = ...` or `name: "type" = ...`, leaving out
    /// `name = other_name` (a placeholder renamed, as Dynamo graphs print their inputs). Nested
    /// submodule classes (e.g. a `cond` branch or a flex-attention `score_mod`) are not counted.
    /// Null for payloads that are not readable FX graphs (output code, C++).
    pub fx_nodes: Option<u64>,
    /// Of `fx_nodes`, the call nodes: those whose right-hand side is not a `self.` attribute
    /// (a `get_attr`). On a `dynamo_output_graph` this equals `compilation_metrics`'
    /// `graph_op_count`. Null when `fx_nodes` is.
    pub fx_ops: Option<u64>,
}
