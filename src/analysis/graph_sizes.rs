//! Graph sizes: FX node counts, lines and bytes of every IR of each compile.

use std::cell::RefCell;

use serde::ser::{Error, SerializeStruct};
use serde::{Serialize, Serializer};

use super::{Event, Finish, Observe, Table};
use crate::schema::tables::GraphSize;
use crate::store::{RowList, Rows, Store};

/// Kinds that are graphs or generated code besides those ending in `_graph`.
const GRAPH_KINDS: [&str; 4] = ["optimize_ddp_split_child", "exported_program", "inductor_output_code", "graph_dump"];

/// FX node counts of a readable GraphModule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FxCount {
    /// Call and `get_attr` nodes.
    pub nodes: u64,
    /// Call nodes.
    pub ops: u64,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The right-hand side of a node line `name = rhs` / `name: "type" = rhs`, without the trailing
/// `;  x = None` deletions; `None` for any other line.
fn assignment_rhs(line: &str) -> Option<&str> {
    let end = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(line.len());
    if end == 0 || !is_identifier(&line[..end]) {
        return None;
    }
    let mut rest = &line[end..];
    if let Some(annotated) = rest.strip_prefix(": \"") {
        let close = annotated.find('"')?;
        rest = &annotated[close + 1..];
    }
    let rhs = rest.strip_prefix(" = ")?;
    Some(rhs.split(';').next().unwrap_or(rhs).trim())
}

/// Counts the nodes of a payload printed by `GraphModule.print_readable` (see `GraphSize::fx_nodes`
/// for the rule); `None` when the payload is not one.
pub fn count_fx_nodes(text: &str) -> Option<FxCount> {
    let mut lines = text.lines();
    let mut header = lines.by_ref().filter(|l| !l.trim().is_empty());
    let mut class = header.next()?;
    if class.trim() == "ExportedProgram:" {
        class = header.next()?;
    }
    let class_trimmed = class.trim();
    if !(class_trimmed.starts_with("class ") && class_trimmed.ends_with("(torch.nn.Module):")) {
        return None;
    }
    let def_indent = indent(class) + 4;
    // `def forward(` directly inside the class; its signature may span lines up to `):` at the
    // def's own indentation.
    let mut def_line = None;
    for line in lines.by_ref() {
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) == def_indent && line.trim_start().starts_with("def forward(") {
            def_line = Some(line);
            break;
        }
        if indent(line) < def_indent {
            return None;
        }
    }
    let def_line = def_line?;
    if !def_line.trim_end().ends_with(':') {
        lines.by_ref().find(|l| indent(l) == def_indent && l.trim_end().ends_with(':'))?;
    }
    let body_indent = def_indent + 4;
    let mut count = FxCount { nodes: 0, ops: 0 };
    for line in lines {
        if line.trim().is_empty() {
            continue;
        }
        let at = indent(line);
        if at < body_indent {
            break;
        }
        if at > body_indent {
            continue;
        }
        let Some(rhs) = assignment_rhs(&line[at..]) else { continue };
        if is_identifier(rhs) {
            continue; // a placeholder renamed: `l_x_ = L_x_`
        }
        count.nodes += 1;
        let get_attr = rhs.strip_prefix("self.").is_some_and(|path| path.split('.').all(is_identifier));
        if !get_attr {
            count.ops += 1;
        }
    }
    Some(count)
}

/// Whether the payload could be a printed GraphModule, from its first bytes (cheap; most
/// artifacts are not).
fn may_be_fx(bytes: &[u8]) -> bool {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(bytes.len());
    let head = &bytes[start..];
    head.starts_with(b"class ") || head.starts_with(b"ExportedProgram:")
}

#[derive(Default)]
pub struct GraphSizesTable {
    /// Every graph's row, in log order.
    rows: Rows<GraphSize>,
    /// Each graph's compile record (`Observe::record`; [`OUTSIDE`] for none) and its row in
    /// `rows`, in log order: 8 bytes a graph, where a list per compile in a map took a hundred.
    graphs: Vec<(u32, u32)>,
}

/// The record of a graph logged outside any compile: after every record.
const OUTSIDE: u32 = u32::MAX;

/// [`crate::schema::tables::GraphSizes`], each compile's row made as it is serialized, its
/// graphs' rows passed through as they were pushed. Made all at once, with their compile ids, the rows took
/// 1.5 MiB on the 1 GB compiles-shape bench log (massif), near the build's highest RSS.
pub struct GraphSizesView<'a> {
    ctx: &'a Finish<'a>,
    /// The compile record of each graph (see [`GraphSizesTable::graphs`]), by record, the graphs
    /// of one in log order; [`OUTSIDE`] last.
    records: Vec<u32>,
    /// Each graph's row in `rows`, in the order of `records`.
    at: Vec<u32>,
    rows: Rows<GraphSize>,
}

/// [`crate::schema::tables::CompileGraphs`] as serialized.
#[derive(Serialize)]
struct CompileGraphsView<'a> {
    compile_id: Option<String>,
    graph_op_count: Option<u64>,
    graph_node_count: Option<u64>,
    graph_input_count: Option<u64>,
    graphs: RowList<'a>,
}

/// A compile's FX counts from its `compilation_metrics`: ops, nodes and inputs.
type GraphCounts = (Option<u64>, Option<u64>, Option<u64>);

impl GraphSizesView<'_> {
    /// The range of `at` holding the graphs of `record` (empty if it has none).
    fn graphs_of(&self, record: u32) -> std::ops::Range<usize> {
        let start = self.records.partition_point(|&r| r < record);
        start..start + self.records[start..].partition_point(|&r| r == record)
    }

    /// The FX counts of compile `record`'s metrics (read again for each pass: they are small).
    fn counts(&self, record: usize) -> GraphCounts {
        let compiles = self.ctx.compiles;
        let metrics = compiles.metrics(&compiles.records.get(record));
        metrics.map_or((None, None, None), |m| (m.graph_op_count, m.graph_node_count, m.graph_input_count))
    }

    /// The records that have a row, in order, each with its counts and graphs: those with graphs
    /// or any count, then graphs logged outside any compile (record [`OUTSIDE`]).
    fn compiles(&self) -> impl Iterator<Item = (u32, GraphCounts, std::ops::Range<usize>)> + '_ {
        let records = (0..self.ctx.compiles.records.len()).map(|record| (record as u32, self.counts(record)));
        let outside = std::iter::once((OUTSIDE, (None, None, None)));
        records.chain(outside).filter_map(|(record, counts)| {
            let graphs = self.graphs_of(record);
            let row = !graphs.is_empty() || counts != (None, None, None);
            row.then_some((record, counts, graphs))
        })
    }
}

impl Serialize for GraphSizesView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rows = self.rows.reader(4);
        let compiles = self.compiles().map(|(record, (ops, nodes, inputs), graphs)| CompileGraphsView {
            compile_id: (record != OUTSIDE)
                .then(|| crate::parse::display_compile_id(&self.ctx.compiles.records.id(record as usize))),
            graph_op_count: ops,
            graph_node_count: nodes,
            graph_input_count: inputs,
            graphs: rows.list(&self.at[graphs]),
        });
        let mut table = serializer.serialize_struct("GraphSizes", 1)?;
        table.serialize_field("compiles", &Seq(RefCell::new(Some(compiles))))?;
        table.end()
    }
}

/// The items of an iterator, serialized as a list (once).
struct Seq<I>(RefCell<Option<I>>);

impl<I: Iterator<Item = T>, T: Serialize> Serialize for Seq<I> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let items = self.0.borrow_mut().take().ok_or_else(|| S::Error::custom("serialized twice"))?;
        serializer.collect_seq(items)
    }
}

impl Table for GraphSizesTable {
    type Format = crate::schema::tables::GraphSizes;
    type Output<'a> = GraphSizesView<'a>;

    fn new(store: &Store) -> Self {
        GraphSizesTable { rows: Rows::new(store), ..GraphSizesTable::default() }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let Some(payload) = ev.payload else { return };
        let graph_kind = ev.kind.ends_with("_graph") || GRAPH_KINDS.contains(&ev.kind);
        let named_graph = ev.kind == "artifact" && ev.name.is_some_and(|n| n.ends_with("_graph"));
        let fx = if may_be_fx(payload.bytes) { count_fx_nodes(&crate::parse::lossy(payload.bytes)) } else { None };
        let fx_artifact = ev.kind == "artifact" && fx.is_some();
        if !(graph_kind || named_graph || fx_artifact) {
            return;
        }
        let names = ev.names();
        let row = self.rows.push(&GraphSize {
            name: names.name,
            tlparse_name: names.tlparse_name,
            kind: ev.kind.to_string(),
            seq: ev.seq,
            blob: payload.hash.to_string(),
            bytes: payload.bytes.len() as u64,
            lines: payload.lines,
            fx_nodes: fx.map(|c| c.nodes),
            fx_ops: fx.map(|c| c.ops),
        });
        self.graphs.push((cx.record.unwrap_or(OUTSIDE), row));
    }

    fn finish<'a>(mut self, ctx: &'a Finish) -> Option<(GraphSizesView<'a>, u64)> {
        // By record, each record's graphs in log order (the sort is stable).
        self.graphs.sort_by_key(|&(record, _)| record);
        let (records, at) = self.graphs.into_iter().unzip();
        let view = GraphSizesView { ctx, records, at, rows: self.rows };
        let rows = view.compiles().count() as u64;
        (rows > 0).then_some((view, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_nodes_of_a_dynamo_graph_without_renamed_placeholders() {
        let g = "class GraphModule(torch.nn.Module):\n    def forward(self, L_x_: \"f32[8]\"):\n        l_x_ = L_x_\n        \n         # File: a.py:5 in f, code: y = x.sin()\n        sin: \"f32[8]\" = torch.sin(l_x_);  l_x_ = None\n        w = self.w\n        add: \"f32[8]\" = sin + w;  sin = w = None\n        return (add,)\n        \n    class sub(torch.nn.Module):\n        def forward(self, a):\n            b = a + 1\n            return b\n";
        assert_eq!(count_fx_nodes(g), Some(FxCount { nodes: 3, ops: 2 }));
    }

    #[test]
    fn multi_line_signatures_and_exported_programs_are_read() {
        let joint = "class inner_f(torch.nn.Module):\n    def forward(\n        self,\n        primals,\n    ):\n        primals_1: \"f32[4]\"  # PlainAOTInput(idx=0)\n        primals_1, = fx_pytree.tree_flatten_spec([primals], self._in_spec)\n        mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(primals_1, 2)\n        return pytree.tree_unflatten([mul], self._out_spec)\n";
        assert_eq!(count_fx_nodes(joint), Some(FxCount { nodes: 1, ops: 1 }));
        let ep = "ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        def forward(self, x: \"f32[4]\"):\n            relu: \"f32[4]\" = torch.ops.aten.relu.default(x);  x = None\n            return (relu,)\n    \nGraph signature:\n    x: USER_INPUT\n";
        assert_eq!(count_fx_nodes(ep), Some(FxCount { nodes: 1, ops: 1 }));
    }

    #[test]
    fn other_payloads_are_not_graphs() {
        assert_eq!(count_fx_nodes("# AOT ID: ['0_inference']\nfrom ctypes import c_void_p\n"), None);
        assert_eq!(count_fx_nodes("class Foo:\n    pass\n"), None);
        assert_eq!(count_fx_nodes(""), None);
    }
}
