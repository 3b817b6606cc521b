//! `export_report`: tlparse's `-e` draft-export report (failures and their symbolic
//! provenance), for logs made under `TORCH_DTRACE` or `torch.export.draft_export`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ArtifactRef;
use super::guards::FrameLocals;
use crate::schema::Frame;

/// `tables/<stream>/export_report.json.zst`: the export issues of the stream as tlparse `-e`
/// reports them, with the expression nodes their provenance refers to and the exported
/// programs. Written for streams with any export-trace entry (`exported_program`, `export`,
/// `guard_added`, `propagate_real_tensors_provenance`, `missing_fake_kernel`,
/// `mismatched_fake_kernel`, `expression_created`). `rows` counts `failures`; none means
/// tlparse's "no issues".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExportReport {
    /// The issues, in log order.
    pub failures: Vec<ExportFailure>,
    /// The expression nodes referred to by the failures' provenance, in order of first
    /// reference.
    pub nodes: Vec<ProvenanceNode>,
    /// Every `exported_program` artifact, in log order (tlparse links the first).
    pub exported_programs: Vec<ArtifactRef>,
    /// `guard_added` entries that are not failures because their `prefix` is not `eval`.
    pub skipped_guards: u64,
}

/// The kind of an export issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExportFailureType {
    /// A `guard_added` entry with `prefix` `eval` (tlparse: "Guard Evaluated").
    GuardEvaluated,
    /// A `propagate_real_tensors_provenance` entry (tlparse: "Data Dependent Error").
    DataDependentError,
    /// A `missing_fake_kernel` entry (tlparse: "Missing Fake Kernel").
    MissingFakeKernel,
    /// A `mismatched_fake_kernel` entry (tlparse: "Mismatched Fake Kernel").
    MismatchedFakeKernel,
}

/// One export issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ExportFailure {
    /// The compile id as displayed; null outside a compile (older export logs).
    pub compile_id: Option<String>,
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// The kind of issue.
    pub failure_type: ExportFailureType,
    /// tlparse's name for the kind, e.g. `Guard Evaluated`.
    pub title: String,
    /// tlparse's explanation as plain text (code in backquotes), e.g. ``When exporting, the
    /// following guard was evaluated `Eq(s77, 6)`. This might've resulted in a constraint
    /// violation error.``
    pub summary: String,
    /// The guard expression (guards and data-dependent errors).
    pub expr: Option<String>,
    /// The value a data-dependent expression was specialized to (`result`).
    pub result: Option<String>,
    /// The operator (fake-kernel issues), e.g. `mylib.foo.default`.
    pub op: Option<String>,
    /// Why the fake kernel mismatched (`mismatched_fake_kernel`).
    pub reason: Option<String>,
    /// `expr_node_id`: the node the provenance starts from.
    pub expr_node_id: Option<u64>,
    /// Id, in the stream's stack table, of the user stack; null when not logged.
    pub user_stack: Option<u32>,
    /// Id, in the stream's stack table, of the framework stack; null when not logged.
    pub stack: Option<u32>,
    /// The innermost frame of the user stack whose file is user code (not under
    /// `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
    /// library), else its innermost frame; null when the user stack is missing or empty.
    pub user_frame: Option<Frame>,
    /// `symbol_to_sources`: symbol → source expression, as logged.
    pub symbol_to_sources: Map<String, Value>,
    /// `frame_locals`, when logged.
    pub frame_locals: Option<FrameLocals>,
    /// How the expression was built: its node, then each argument's node, depth first, as
    /// tlparse's provenance tree (each node shown once). Built from the `expression_created`
    /// and `create_unbacked_symbol` entries logged before the issue. Empty without
    /// `expr_node_id`.
    pub provenance: Vec<ProvenanceStep>,
}

/// One line of a provenance tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProvenanceStep {
    /// Depth in the tree: 0 for the expression itself, 1 for its arguments, ...
    pub depth: u64,
    /// The node's id (`result_id` / `node_id` as logged).
    pub id: u64,
    /// Index of the node in `nodes`; null when no entry created that id before the issue
    /// (e.g. a backed symbol such as `s0`). tlparse leaves such nodes out.
    pub node: Option<u64>,
}

/// How a provenance node was logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProvenanceNodeKind {
    /// An `expression_created` entry: a symbolic operation's result.
    Expression,
    /// A `create_unbacked_symbol` entry: a leaf.
    UnbackedSymbol,
}

/// A node of a provenance tree: a symbolic expression and how it was computed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ProvenanceNode {
    /// The node id (`result_id` or `node_id`).
    pub id: u64,
    /// How it was logged.
    pub kind: ProvenanceNodeKind,
    /// The compile id as displayed; null outside a compile.
    pub compile_id: Option<String>,
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// The expression (`result`), or the symbol of an unbacked symbol, e.g. `-u0`.
    pub result: Option<String>,
    /// The operation, e.g. `int_floordiv`; null for unbacked symbols.
    pub method: Option<String>,
    /// The operation's arguments as text, e.g. `["-u0", "3"]`.
    pub arguments: Vec<String>,
    /// Node ids of the symbolic arguments (constants have none).
    pub argument_ids: Vec<u64>,
    /// Id, in the stream's stack table, of the user stack; null when not logged.
    pub user_stack: Option<u32>,
    /// Id, in the stream's stack table, of the framework stack; null when not logged.
    pub stack: Option<u32>,
    /// The innermost frame of the user stack whose file is user code (not under
    /// `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
    /// library), else its innermost frame; null when the user stack is missing or empty.
    pub user_frame: Option<Frame>,
}
