//! `runtime_estimates`: inductor's estimated runtime and output tensor metadata of every scheduled
//! op, per compile id, with a fingerprint of the tensor metadata alone.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/runtime_estimates.json.zst`: one row per `inductor_runtime_and_tensor_meta`
/// artifact (inductor logs one per compiled graph when runtime estimation is on), in log order.
/// `rows` counts `graphs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RuntimeEstimates {
    /// One row per usable artifact, in log order.
    pub graphs: Vec<RuntimeGraph>,
}

/// The estimates of one compiled graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RuntimeGraph {
    /// The compile id as displayed (`[0/1]`); null for an artifact logged outside any compile.
    /// Joins with `compile_directory`, and across streams (never align by row position).
    pub compile_id: Option<String>,
    /// How many earlier artifacts of this kind the same compile id has in the stream (0 for the
    /// first; a compile with forward and backward graphs would have 0 and 1).
    pub occurrence: u32,
    /// `seq` of the artifact's entry in the stream's index.
    pub seq: u64,
    /// Line of the entry's header in its input file.
    pub line: u64,
    /// Blob id of the payload.
    pub blob: String,
    /// Number of ops.
    pub op_count: u64,
    /// Sum of the ops' `estimated_runtime_ns`, in log order (nanoseconds).
    pub total_estimated_runtime_ns: f64,
    /// Hash of the ops' names, types and outputs, without their runtimes: equal fingerprints mean
    /// the same ops with the same output shapes, strides and dtypes, whatever the runtime numbers.
    /// The first 16 bytes of the blake3 hash of the canonical JSON, as 32 lowercase hex digits.
    /// The canonical JSON is the ops array, compact (no whitespace), each op an object with keys in
    /// this order: `name`, `type`, then `outputs` only when the op had an `outputs` array (an
    /// absent or null `outputs` leaves the key out, so it differs from `[]`); each output is
    /// `{"shape":[..],"stride":[..],"dtype":..}` (dtype a string or `null`). Strings are written
    /// as serde_json writes them (UTF-8; only `"`, `\` and control characters escaped), integers
    /// in decimal. Example for one op: `[{"name":"op1","type":"compute","outputs":[{"shape":[2,3],"stride":[3,1],"dtype":"float16"}]}]`.
    pub tensor_meta_fingerprint: String,
    /// The ops in scheduler order, as logged.
    pub ops: Vec<RuntimeOp>,
}

/// One scheduled op (a kernel, an extern call or a collective).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RuntimeOp {
    /// The op: the kernel's Python name (`extern_kernels.mm`,
    /// `torch.ops._c10d_functional.all_reduce_.default`) or the scheduler node's name (`op5`,
    /// `op1_op2_op4` for fused nodes).
    pub name: String,
    /// `compute` or `collective`, as logged (inductor logs `wait_tensor` as `compute`).
    #[serde(rename = "type")]
    pub op_type: String,
    /// Inductor's runtime estimate for the op, in nanoseconds.
    pub estimated_runtime_ns: f64,
    /// The op's output buffers; null when the op had no `outputs` key (or a null one), which is
    /// not the same as `[]` (torch logs `[]` when it could not read the buffers' layouts).
    pub outputs: Option<Vec<TensorMeta>>,
}

/// Layout of one output buffer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TensorMeta {
    /// Sizes (size hints for symbolic sizes); `[]` for collectives' outputs.
    pub shape: Vec<i64>,
    /// Strides, in elements.
    pub stride: Vec<i64>,
    /// The dtype as logged (`float16`); null when unknown (collectives).
    pub dtype: Option<String>,
}
