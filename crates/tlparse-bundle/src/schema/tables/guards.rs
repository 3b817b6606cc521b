//! `guards`: what each compile guarded on and how shapes became symbolic or specialized.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::schema::Frame;

/// `tables/<stream>/guards.json.zst`: the guards and shape facts of every compile id of the
/// stream, as lists of rows that each name their compile id. `rows` counts the rows of every list
/// except `compiles` (a summary of the others).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Guards {
    /// One summary per compile id that has any row below (or null, for rows logged outside a
    /// compile), in order of first appearance.
    pub compiles: Vec<GuardsCompile>,
    /// Structured Dynamo guards (`dynamo_guards` entries), one row per guard. Only older torch
    /// fills them: torch that logs guard trees leaves this empty. Show a compile's guards from
    /// `guard_trees`, from this list only for a compile without a tree.
    pub dynamo_guards: Vec<DynamoGuard>,
    /// The guards torch installed, as C++ guard trees (`dynamo_cpp_guards_str` entries): one row
    /// per tree, its leaf guards in `guards[]`. The list to show a compile's guards from.
    pub guard_trees: Vec<GuardTree>,
    /// Shape guards added to the shape environment (`guard_added_fast`, and `guard_added` where
    /// logged), in log order.
    pub shape_guards: Vec<ShapeGuard>,
    /// Symbols specialized to a constant (`symbolic_shape_specialization`), in log order.
    pub specializations: Vec<Specialization>,
    /// Symbols created (`create_symbol`, `create_unbacked_symbol`), in log order.
    pub symbols: Vec<SymbolCreated>,
    /// Guards on data-dependent values (`guard_on_data_dependent_error`,
    /// `propagate_real_tensors_provenance`, `propagate_real_tensors`), in log order.
    pub data_dependent: Vec<DataDependent>,
}

/// Counts of one compile id's rows in the lists of this table, and its guard figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GuardsCompile {
    /// The compile id as displayed (`[0/1]`); null for rows logged outside any compile.
    pub compile_id: Option<String>,
    /// `guard_count` from the compile's `compilation_metrics` (all Dynamo guards), when logged.
    pub guard_count: Option<u64>,
    /// `shape_env_guard_count` from `compilation_metrics` (shape guards), when logged.
    pub shape_env_guard_count: Option<u64>,
    /// Rows in `dynamo_guards`.
    pub dynamo_guards: u64,
    /// Leaf guards in the compile's `guard_trees` (all trees together).
    pub tree_guards: u64,
    /// `Guard latency = N us` of the compile's last guard tree, in microseconds, when logged.
    pub latency_us: Option<f64>,
    /// Rows in `shape_guards`.
    pub shape_guards: u64,
    /// Rows in `specializations`.
    pub specializations: u64,
    /// Rows in `symbols` with `unbacked` false.
    pub backed_symbols: u64,
    /// Rows in `symbols` with `unbacked` true.
    pub unbacked_symbols: u64,
    /// Rows in `data_dependent`.
    pub data_dependent: u64,
}

/// One guard of a `dynamo_guards` payload (a JSON list of `{code, stack, user_stack}`). Its
/// stacks live in the payload, not in the stream's stack table: the innermost frames are
/// resolved here, and the whole payload is the blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DynamoGuard {
    /// The compile id as displayed; null outside a compile.
    pub compile_id: Option<String>,
    /// `seq` of the `dynamo_guards` entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// Blob id of the payload (the whole guard list).
    pub blob: String,
    /// Position of this guard in the payload's list, from 0.
    pub index: u64,
    /// The guard's Python code, e.g. `utils_device.CURRENT_DEVICE == None`.
    pub code: String,
    /// Where in the user's code the guard came from: the innermost frame of the guard's
    /// `user_stack` whose file is user code (not under `site-packages`, `dist-packages` or a
    /// `torch` directory, nor the Python standard library), else its innermost frame; null when
    /// the stack is null or empty. File names are resolved through the process's string table
    /// (null when it never defined the index).
    pub user_frame: Option<Frame>,
    /// Innermost frame of the guard's `stack` (where in torch it was created); null when the
    /// stack is null or empty.
    pub frame: Option<Frame>,
}

/// A `dynamo_cpp_guards_str` entry: the C++ guard-manager tree installed for a compiled frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GuardTree {
    /// The compile id as displayed; null outside a compile.
    pub compile_id: Option<String>,
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// Blob id of the payload: the tree as text (`TREE_GUARD_MANAGER:` then `+- ` lines).
    pub blob: String,
    /// Lines of the payload.
    pub lines: u64,
    /// The `Guard latency = N us` figure: time to run the guards once, in microseconds; null
    /// when the tree does not state it (older logs).
    pub latency_us: Option<f64>,
    /// Nodes of the tree that only hold other nodes (`RootGuardManager`, `GuardManager`,
    /// `DictGuardManager`, `KeyValueManager`, `KeyManager`, `ValueManager`, ...).
    pub managers: u64,
    /// The leaf guards, in tree order (depth first, as printed).
    pub guards: Vec<TreeGuard>,
}

/// One leaf guard line of a C++ guard tree, e.g.
/// `| | +- TYPE_MATCH: ___check_type_id(L['x'], 9419...)  # n = x.shape[0]  # f.py:15 in f`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TreeGuard {
    /// Nesting depth as printed (the number of `| ` before `+- `): guards of the root manager
    /// are at 1, and shape guards (`LAMBDA_GUARD`) printed after the root's subtree at 0.
    pub depth: u64,
    /// The guard type as printed: `TENSOR_MATCH`, `TYPE_MATCH`, `ID_MATCH`, `LAMBDA_GUARD`
    /// (shape guards), `DIMENSION_DYNAMIC_MARKING_GUARD`, `NO_TENSOR_ALIASING`, ...
    pub kind: String,
    /// `source=` of the nearest enclosing manager (the value guarded, e.g. `L['x']`); null
    /// directly under the root.
    pub source: Option<String>,
    /// The guard's check, e.g. `___check_type_id(L['x'], 94197043380640)`; empty when the line
    /// has none (e.g. a repeated `NO_TENSOR_ALIASING`).
    pub code: String,
    /// The comment's text before its location: usually the user source line that caused the
    /// guard, e.g. `n = x.shape[0]` (its own `  # ` comments kept), sometimes a note such as
    /// `(unknown source ..., please file a bug)`.
    pub user_code: Option<String>,
    /// The code location in the comment, `file.py:LINE in function` (user code when there is
    /// user code, else where torch installed the guard).
    pub location: Option<String>,
    /// The parenthesised framework location at the end of the comment, e.g.
    /// `_subclasses/fake_impls.py:1519 in _compute_slice_index`.
    pub framework_location: Option<String>,
}

/// Which entry kind logged a shape guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShapeGuardKind {
    /// `guard_added_fast`: the default, logged for every shape guard.
    GuardAddedFast,
    /// `guard_added`: the slow path with provenance, logged under `TORCH_DTRACE` or
    /// `draft_export` (the same guard usually also has a `guard_added_fast` row).
    GuardAdded,
}

/// A shape guard, e.g. `Eq(Mod(s17, 4), 0)` or `s77 > 4`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ShapeGuard {
    /// The compile id as displayed; null outside a compile.
    pub compile_id: Option<String>,
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// Which entry kind logged it.
    pub kind: ShapeGuardKind,
    /// The guard expression (sympy), e.g. `Eq(s77, 6)`.
    pub expr: Option<String>,
    /// `prefix` of `guard_added` (`eval` when a guard was evaluated); null for
    /// `guard_added_fast`.
    pub prefix: Option<String>,
    /// `expr_node_id` of `guard_added`: the id of the expression's node (see `export_report`'s
    /// provenance).
    pub expr_node_id: Option<u64>,
    /// Id, in the stream's stack table, of the user stack; null when not logged.
    pub user_stack: Option<u32>,
    /// Id, in the stream's stack table, of the framework stack; null when not logged.
    pub stack: Option<u32>,
    /// Where in the user's code the guard came from: the innermost frame of the user stack whose
    /// file is user code (not under `site-packages`, `dist-packages` or a `torch` directory, nor
    /// the Python standard library), else its innermost frame; null when the user stack is
    /// missing or empty.
    pub user_frame: Option<Frame>,
    /// `symbol_to_sources` of `guard_added`: symbol → source expression, as logged.
    pub symbol_to_sources: Map<String, Value>,
    /// `frame_locals` of `guard_added`, when logged.
    pub frame_locals: Option<FrameLocals>,
}

/// The user frame's locals at a guard (`frame_locals` of `guard_added` and
/// `propagate_real_tensors_provenance`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FrameLocals {
    /// The user source line, e.g. `return x.reshape(2, 3) * 2`.
    pub loc: Option<String>,
    /// Local name → rendered value(s), as logged (a string, or a list of strings in newer
    /// logs), e.g. `"Tensor(shape: torch.Size([s77]), stride: (1,), storage_offset: 0)"`.
    pub locals: Map<String, Value>,
    /// Symbol → source expression, as logged, e.g. `s77` → `L['x'].size()[0]`.
    pub symbols: Map<String, Value>,
}

/// A symbol replaced by a constant, e.g. `s77` = `7` because its range was refined to a
/// singleton.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Specialization {
    /// The compile id as displayed; null outside a compile.
    pub compile_id: Option<String>,
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// The symbol, e.g. `s77`.
    pub symbol: Option<String>,
    /// The sources the symbol stands for, e.g. `L['x'].size()[0]`.
    pub sources: Vec<String>,
    /// The constant it was specialized to, as logged (a string).
    pub value: Option<String>,
    /// Why, e.g. `range_refined_to_singleton`.
    pub reason: Option<String>,
    /// Id, in the stream's stack table, of the user stack; null when not logged.
    pub user_stack: Option<u32>,
    /// Id, in the stream's stack table, of the framework stack; null when not logged.
    pub stack: Option<u32>,
    /// The innermost frame of the user stack whose file is user code (not under
    /// `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
    /// library), else its innermost frame; null when the user stack is missing or empty.
    pub user_frame: Option<Frame>,
}

/// A symbol created for a dynamic size or value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SymbolCreated {
    /// The compile id as displayed; null outside a compile.
    pub compile_id: Option<String>,
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// The symbol, e.g. `s77` (backed) or `u0` (unbacked).
    pub symbol: Option<String>,
    /// True for `create_unbacked_symbol` (a data-dependent value with no hint, e.g. from
    /// `.item()` or `nonzero()`), false for `create_symbol`.
    pub unbacked: bool,
    /// The example value the symbol was created from (`val`, a string; backed symbols only).
    pub hint: Option<String>,
    /// The value range (`vr`), e.g. `[2, int_oo]`.
    pub range: Option<String>,
    /// The source expression (`source`, backed symbols only), e.g. `L['x'].size()[0]`.
    pub source: Option<String>,
    /// `node_id` of an unbacked symbol (the key expressions refer to it by).
    pub node_id: Option<u64>,
    /// Id, in the stream's stack table, of the user stack; null when not logged.
    pub user_stack: Option<u32>,
    /// Id, in the stream's stack table, of the framework stack; null when not logged.
    pub stack: Option<u32>,
    /// The innermost frame of the user stack whose file is user code (not under
    /// `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
    /// library), else its innermost frame; null when the user stack is missing or empty.
    pub user_frame: Option<Frame>,
}

/// Which entry kind logged a data-dependent guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DataDependentKind {
    /// `guard_on_data_dependent_error`: a guard on an unbacked value raised
    /// `GuardOnDataDependentSymNode` (logged under `TORCH_DTRACE`).
    GuardOnDataDependentError,
    /// `propagate_real_tensors_provenance`: the guard was decided from real tensor values
    /// instead (draft export), with provenance.
    PropagateRealTensorsProvenance,
    /// `propagate_real_tensors`: the same decision, without provenance.
    PropagateRealTensors,
}

/// A guard on a data-dependent (unbacked) expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DataDependent {
    /// The compile id as displayed; null outside a compile.
    pub compile_id: Option<String>,
    /// `seq` of the entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// Which entry kind logged it.
    pub kind: DataDependentKind,
    /// The expression guarded on, e.g. `Eq(u0, 1)`.
    pub expr: Option<String>,
    /// `unhinted_expr` (`guard_on_data_dependent_error` only).
    pub unhinted_expr: Option<String>,
    /// The value it was decided to (`result`, e.g. `False`); null for errors.
    pub result: Option<String>,
    /// The expression's node id (`expr_id` or `expr_node_id`).
    pub expr_id: Option<u64>,
    /// Id, in the stream's stack table, of the user stack; null when not logged.
    pub user_stack: Option<u32>,
    /// Id, in the stream's stack table, of the framework stack; null when not logged.
    pub stack: Option<u32>,
    /// The innermost frame of the user stack whose file is user code (not under
    /// `site-packages`, `dist-packages` or a `torch` directory, nor the Python standard
    /// library), else its innermost frame; null when the user stack is missing or empty.
    pub user_frame: Option<Frame>,
    /// `frame_locals`, when logged.
    pub frame_locals: Option<FrameLocals>,
}
