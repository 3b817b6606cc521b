//! tlparse's draft-export report (`tlparse -e`): guards evaluated, data-dependent errors and fake
//! kernel problems, each with the symbolic provenance of its expression.

use serde_json::Value;

use super::guards::{compile_id, frame_locals, innermost, object, text, uint};
use super::{Event, Finish, Observe, Table};
use crate::fast_hash::{HashMap, HashSet};
use crate::schema::tables::ArtifactRef;
use crate::schema::tables::export_report::{
    ExportFailure, ExportFailureType, ExportReport, ProvenanceNode, ProvenanceNodeKind, ProvenanceStep,
};
use crate::store::{RowReader, Rows, Store};

#[derive(Default)]
pub struct ExportReportTable {
    /// Whether the stream has any export-trace entry.
    seen: bool,
    failures: Vec<ExportFailure>,
    /// Every provenance node logged, in log order (a later entry with the same id replaces an
    /// earlier one for later failures, as in tlparse): a long log creates an expression in most
    /// compiles, and only those a failure refers to are read back, when the table finishes.
    nodes: Rows<ProvenanceNode>,
    /// Each node's argument ids, back to back, which the provenance walks: node `n`'s are
    /// `argument_ids[argument_ends[n - 1]..argument_ends[n]]`.
    argument_ids: Vec<u64>,
    argument_ends: Vec<u32>,
    /// Node id → index in `nodes` of its latest entry.
    latest: HashMap<u64, u32>,
    skipped_guards: u64,
}

/// The ids of a JSON list of node ids (other items are skipped: constants have no id).
fn ids(v: Option<&Value>) -> Vec<u64> {
    v.and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default()
}

impl ExportReportTable {
    /// The provenance tree of a node as it stands now: depth-first, arguments in order, each id
    /// visited once (tlparse's cycle protection), iteratively so deep chains cannot overflow.
    /// Steps point at indices in `nodes` (renumbered in `finish`).
    fn provenance(&self, root: u64) -> Vec<ProvenanceStep> {
        let mut steps = Vec::new();
        let mut visited = HashSet::default();
        let mut todo = vec![(root, 0u64)];
        while let Some((id, depth)) = todo.pop() {
            if !visited.insert(id) {
                continue;
            }
            let node = self.latest.get(&id).copied();
            steps.push(ProvenanceStep { depth, id, node: node.map(u64::from) });
            if let Some(n) = node {
                todo.extend(self.arguments(n).iter().rev().map(|&arg| (arg, depth + 1)));
            }
        }
        steps
    }

    /// The argument ids of node `n`.
    fn arguments(&self, n: u32) -> &[u64] {
        let start = n.checked_sub(1).map_or(0, |before| self.argument_ends[before as usize] as usize);
        &self.argument_ids[start..self.argument_ends[n as usize] as usize]
    }

    fn add_node(&mut self, node: ProvenanceNode) {
        self.argument_ids.extend_from_slice(&node.argument_ids);
        self.argument_ends.push(self.argument_ids.len() as u32);
        self.latest.insert(node.id, self.nodes.push(&node));
    }

    fn failure(&mut self, ev: &Event, failure_type: ExportFailureType) {
        let meta = ev.meta();
        let expr = text(meta, "expr");
        let result = text(meta, "result");
        let op = text(meta, "op");
        let reason = text(meta, "reason");
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".to_string());
        let (title, summary) = match failure_type {
            ExportFailureType::GuardEvaluated => (
                "Guard Evaluated",
                format!(
                    "When exporting, the following guard was evaluated `{}`. This might've resulted in a constraint violation error.",
                    shown(&expr)
                ),
            ),
            ExportFailureType::DataDependentError => (
                "Data Dependent Error",
                format!(
                    "When exporting, we were unable to figure out if the expression `{}` always holds. As a result, it was specialized to evaluate to `{}`, and asserts were inserted into the graph.",
                    shown(&expr),
                    shown(&result)
                ),
            ),
            ExportFailureType::MissingFakeKernel => {
                ("Missing Fake Kernel", format!("`torch.ops.{}` is missing a fake kernel implementation", shown(&op)))
            }
            ExportFailureType::MismatchedFakeKernel => (
                "Mismatched Fake Kernel",
                format!(
                    "`torch.ops.{}` has a fake kernel implementation, but it has incorrect behavior, based on the real kernel. The reason for the mismatch is: {}",
                    shown(&op),
                    shown(&reason)
                ),
            ),
        };
        let expr_node_id = uint(meta, "expr_node_id");
        let provenance = expr_node_id.map(|root| self.provenance(root)).unwrap_or_default();
        self.failures.push(ExportFailure {
            compile_id: compile_id(ev),
            seq: ev.seq,
            line: ev.line,
            failure_type,
            title: title.to_string(),
            summary,
            expr,
            result,
            op,
            reason,
            expr_node_id,
            user_stack: ev.meta_stack("user_stack"),
            stack: ev.meta_stack("stack"),
            user_frame: None,
            symbol_to_sources: object(meta, "symbol_to_sources"),
            frame_locals: frame_locals(meta),
            provenance,
        });
    }
}

impl Table for ExportReportTable {
    type Format = crate::schema::tables::ExportReport;
    type Output<'a> = ExportReport;

    fn new(store: &Store) -> Self {
        ExportReportTable { nodes: Rows::new(store), ..ExportReportTable::default() }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        let kinds = [
            "exported_program",
            "export",
            "guard_added",
            "propagate_real_tensors_provenance",
            "missing_fake_kernel",
            "mismatched_fake_kernel",
            "expression_created",
        ];
        if kinds.contains(&ev.kind) {
            self.seen = true;
        }
        let needs_meta = matches!(
            ev.kind,
            "guard_added"
                | "propagate_real_tensors_provenance"
                | "missing_fake_kernel"
                | "mismatched_fake_kernel"
                | "expression_created"
                | "create_unbacked_symbol"
        );
        // Only these kinds are read below: parsing every entry's metadata here took 6% of a
        // tensor-heavy build.
        if !needs_meta {
            return;
        }
        let meta = ev.meta();
        if !meta.is_object() {
            diags.unusable(Self::NAME, ev, "metadata is not an object");
            return;
        }
        match ev.kind {
            "guard_added" => {
                if text(meta, "prefix").as_deref() == Some("eval") {
                    self.failure(ev, ExportFailureType::GuardEvaluated);
                } else {
                    self.skipped_guards += 1;
                }
            }
            "propagate_real_tensors_provenance" => self.failure(ev, ExportFailureType::DataDependentError),
            "missing_fake_kernel" => self.failure(ev, ExportFailureType::MissingFakeKernel),
            "mismatched_fake_kernel" => self.failure(ev, ExportFailureType::MismatchedFakeKernel),
            "expression_created" | "create_unbacked_symbol" => {
                let unbacked = ev.kind == "create_unbacked_symbol";
                let Some(id) = uint(meta, if unbacked { "node_id" } else { "result_id" }) else {
                    diags.unusable(Self::NAME, ev, if unbacked { "no node_id" } else { "no result_id" });
                    return;
                };
                let node = ProvenanceNode {
                    id,
                    kind: if unbacked { ProvenanceNodeKind::UnbackedSymbol } else { ProvenanceNodeKind::Expression },
                    compile_id: compile_id(ev),
                    seq: ev.seq,
                    line: ev.line,
                    result: text(meta, if unbacked { "symbol" } else { "result" }),
                    method: text(meta, "method"),
                    arguments: super::compiles::strings(meta.get("arguments")),
                    argument_ids: ids(meta.get("argument_ids")),
                    user_stack: ev.meta_stack("user_stack"),
                    stack: ev.meta_stack("stack"),
                    user_frame: None,
                };
                self.add_node(node);
            }
            _ => {}
        }
    }

    fn finish(mut self, ctx: &Finish) -> Option<(ExportReport, u64)> {
        if !self.seen {
            return None;
        }
        let stacks = ctx.stacks;
        // Keep only the nodes some failure refers to, numbered in order of first reference.
        let mut renumber: HashMap<u64, u64> = HashMap::default();
        let mut nodes = Vec::new();
        let logged: RowReader<ProvenanceNode> = self.nodes.reader(1);
        let mut failures = std::mem::take(&mut self.failures);
        for f in &mut failures {
            f.user_frame = innermost(stacks, f.user_stack);
            for step in &mut f.provenance {
                step.node = step.node.map(|old| {
                    *renumber.entry(old).or_insert_with(|| {
                        let mut node = logged.get(old as u32, "provenance nodes");
                        node.user_frame = innermost(stacks, node.user_stack);
                        nodes.push(node);
                        nodes.len() as u64 - 1
                    })
                });
            }
        }
        let mut exported_programs: Vec<ArtifactRef> = ctx
            .compiles
            .records
            .iter()
            .flat_map(|r| ctx.compiles.artifact_chunks(&r))
            .flat_map(|chunk| chunk.into_owned())
            .chain(ctx.compiles.unattributed.iter().cloned())
            .filter(|a| ctx.compiles.kind(a) == "exported_program")
            .map(|a| ctx.compiles.artifact_ref(&a))
            .collect();
        exported_programs.sort_by_key(|a| a.seq);
        let rows = failures.len() as u64;
        Some((ExportReport { failures, nodes, exported_programs, skipped_guards: self.skipped_guards }, rows))
    }
}
