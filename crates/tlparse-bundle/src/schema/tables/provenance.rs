//! `provenance`: Inductor provenance tracking, the line maps between the pre-grad graph, the
//! post-grad graph and the generated code of each compile, and the kernels' stack traces.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ArtifactRef;
use crate::schema::CompileId;

/// `tables/<stream>/provenance.json.zst`: for each compile id that logged provenance node
/// mappings (`inductor_provenance_tracking_node_mappings`), every graph Inductor compiled in it
/// (a training compile has a forward and a backward), each with the code panes tlparse's
/// `provenance_tracking_<dir>.html` shows and the line maps between them; and the kernels' stack
/// traces (`inductor_provenance_tracking_kernel_stack_traces`). `rows` counts `compiles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Provenance {
    /// One row per compile id with node mappings, in order of the compile id's first provenance
    /// artifact in the stream.
    pub compiles: Vec<ProvenanceCompile>,
    /// One row per kernel of each `inductor_provenance_tracking_kernel_stack_traces` artifact, in
    /// log order, then in the payload's kernel order.
    pub kernel_stack_traces: Vec<KernelStackTraces>,
}

/// The provenance of one compile id: its pre-grad graph and every graph Inductor compiled from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProvenanceCompile {
    /// The compile id as displayed (`[0/0]`); null for entries logged without a compile id (AOT
    /// Inductor logs, for instance).
    pub compile_id: Option<String>,
    /// Its parts; null without a compile id.
    pub cid: Option<CompileId>,
    /// tlparse's directory name for the compile id (`-_0_0_0`; `-_-_-_-` without one).
    pub dir: String,
    /// The pre-grad graph (Dynamo's graph, before AOTAutograd; the same for every graph of the
    /// compile): the last `before_pre_grad_graph` artifact of the compile, else the last
    /// `inductor_pre_grad_graph`. Null when neither was logged.
    pub pre_grad: Option<ProvenancePane>,
    /// Every graph with node mappings, in log order (see [`ProvenanceGraph`] for how entries are
    /// grouped into graphs).
    pub graphs: Vec<ProvenanceGraph>,
}

/// One graph Inductor compiled (the forward, the backward, or an inference graph): its post-grad
/// graph, generated code and node mappings. The compile's post-grad graphs, output code and node
/// mappings are grouped in log order: an entry joins the current graph unless that graph already
/// has an entry of its kind (post-grad graph, Python code, C++ code, node mappings), in which case
/// it starts the next graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProvenanceGraph {
    /// Which graph it is, from the `# AOT ID: ['<n>_<graph>']` line torch writes atop the graph's
    /// Python output code; null when the graph has no Python code with that line (AOT Inductor's
    /// C++ code has none) or the line names another kind.
    pub graph: Option<GraphRole>,
    /// The AOT ID as logged (`0_forward`); null likewise.
    pub aot_id: Option<String>,
    /// The post-grad graph: the `after_post_grad_graph`, else the `inductor_post_grad_graph`, of
    /// the graph.
    pub post_grad: Option<ProvenancePane>,
    /// The generated Python wrapper code: the graph's `inductor_output_code` (JIT compiles).
    pub python_code: Option<ProvenancePane>,
    /// The generated C++ wrapper code: the graph's `inductor_aot_wrapper_code` `graph_dump` (AOT
    /// Inductor).
    pub cpp_code: Option<ProvenancePane>,
    /// The `inductor_provenance_tracking_node_mappings` artifact the maps come from.
    pub node_mappings: ArtifactRef,
    /// The line maps, exactly as tlparse embeds them in its page (`lineMappings`), computed with
    /// the compile's pre-grad graph and this graph's panes.
    pub line_mappings: LineMappings,
    /// The node mappings as logged: `preToPost` / `postToPre` (FX node name → node names),
    /// `cppCodeToPost` (kernel name, possibly with a `:N` debug handle → post-grad node names),
    /// `postToCppCode`, and `version` when logged. Despite their names, the kernel maps serve the
    /// Python code too. A backward's are often only `{"version": 2.0}`.
    pub raw_node_mappings: Value,
}

/// Which graph of a compile Inductor compiled (a provenance graph's, an artifact's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GraphRole {
    /// The forward graph of a training compile (AOT ID `<n>_forward`).
    Forward,
    /// The backward graph of a training compile (`<n>_backward`), often compiled lazily, at the
    /// first backward call, after the compile's own metrics.
    Backward,
    /// The graph of a compile without autograd (`<n>_inference`).
    Inference,
}

/// One code pane: an artifact and where its lines are in the maps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProvenancePane {
    /// The artifact (its blob holds the text).
    pub artifact: ArtifactRef,
    /// What to add to a line number of the maps to get the 1-based line of the blob. 0 for the
    /// graphs. For the C++ code, the number of empty lines the payload starts with (tlparse drops
    /// them before numbering). For the Python code, that plus the position of the first
    /// `# AOT ID:` line, which tlparse numbers 1.
    pub line_offset: u64,
}

/// Line number → line numbers, all 1-based in the panes' numbering (see
/// [`ProvenancePane::line_offset`]). Keys are decimal strings in JSON, in numeric order; each list
/// is in tlparse's order and may repeat a line.
pub type LineMap = BTreeMap<u64, Vec<u64>>;

/// tlparse's `lineMappings`: which lines of one pane correspond to a line of another.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct LineMappings {
    /// Pre-grad graph line → post-grad graph lines.
    pub pre_to_post: LineMap,
    /// Post-grad graph line → pre-grad graph lines.
    pub post_to_pre: LineMap,
    /// Python code line (a kernel's call) → post-grad graph lines.
    pub py_code_to_post: LineMap,
    /// Post-grad graph line → Python code lines.
    pub post_to_py_code: LineMap,
    /// C++ code line (a kernel's call) → post-grad graph lines.
    pub cpp_code_to_post: LineMap,
    /// Post-grad graph line → C++ code lines.
    pub post_to_cpp_code: LineMap,
}

/// The user stack traces of one generated kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct KernelStackTraces {
    /// The compile id as displayed; null without one.
    pub compile_id: Option<String>,
    /// tlparse's directory name for the compile id.
    pub dir: String,
    /// `seq` of the `inductor_provenance_tracking_kernel_stack_traces` entry.
    pub seq: u64,
    /// Blob id of its payload.
    pub blob: String,
    /// The kernel's name as logged, with its `:N` debug handle when there is one.
    pub kernel: String,
    /// Its stack traces, as tlparse's readable page shows them: a literal `\n` (backslash, n) in
    /// the logged string becomes a newline, and trailing newlines are dropped.
    pub traces: Vec<String>,
}
