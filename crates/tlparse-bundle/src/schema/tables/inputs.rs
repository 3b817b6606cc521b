//! `inputs`: the tensors each compile fakeified (its graph inputs, parameters and buffers), from
//! `describe_tensor`, `describe_storage` and `describe_source` joined.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `tables/<stream>/inputs.json.zst`: one row per tensor a compile described, with its source
/// expressions, metadata and storage. `rows` counts `inputs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Inputs {
    /// One row per (compile id, describer, tensor id), in order of the first entry about it.
    pub inputs: Vec<InputTensor>,
}

/// A size, stride or offset: an integer, or a symbolic expression as logged (e.g. `s0`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Dim {
    /// A concrete value.
    Int(i64),
    /// A symbolic value (torch logs a SymInt's repr).
    Sym(String),
}

/// A tensor one compile turned into a fake tensor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InputTensor {
    /// The compile id as displayed; null outside a compile.
    pub compile_id: Option<String>,
    /// `seq` of the first entry about this tensor in this compile.
    pub seq: u64,
    /// Line of that entry's header in its input file.
    pub line: u64,
    /// `describer_id`: which describer (one per fake-tensor converter) numbered the tensor.
    pub describer_id: u64,
    /// The tensor's id within its describer (`id`).
    pub id: u64,
    /// Source expressions the compile reached the tensor by (`describe_source`), e.g.
    /// `L['x']` or `L['self']._modules['lin']._parameters['weight']`, in log order. Empty when
    /// none was logged (e.g. a view's base).
    pub sources: Vec<String>,
    /// The tensor's description (`describe_tensor`). torch logs it once per describer, so a
    /// later compile reusing the describer shows the earlier description (see its `line`); null
    /// when no description was logged.
    pub tensor: Option<TensorInfo>,
    /// The tensor's storage (`describe_storage`, matched by describer and storage id); null
    /// when the tensor has no storage id.
    pub storage: Option<StorageInfo>,
    /// The symbol each dimension's size became in this compile (`create_symbol` entries whose
    /// source is `<source>.size()[i]` for one of `sources`), null for static dimensions; empty
    /// when no dimension is symbolic.
    pub size_symbols: Vec<Option<String>>,
}

/// A `describe_tensor` entry. torch leaves out fields equal to their defaults; they are filled
/// in here (false, 0, `torch.strided`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TensorInfo {
    /// Line of the `describe_tensor` entry's header.
    pub line: u64,
    /// Compile id (as displayed) of the `describe_tensor` entry; differs from the row's when an
    /// earlier compile described the tensor.
    pub compile_id: Option<String>,
    /// Number of dimensions.
    pub ndim: Option<u64>,
    /// dtype as logged, e.g. `torch.float32`.
    pub dtype: Option<String>,
    /// Device, shortened from its repr: `cpu`, `cuda:0`, `meta` (the repr when it does not
    /// parse).
    pub device: Option<String>,
    /// Sizes, one per dimension; null when not logged.
    pub size: Option<Vec<Dim>>,
    /// Strides, one per dimension; null when not logged (e.g. sparse tensors).
    pub stride: Option<Vec<Dim>>,
    /// Storage offset in elements.
    pub storage_offset: Dim,
    /// Layout, e.g. `torch.strided`.
    pub layout: String,
    /// `requires_grad`.
    pub requires_grad: bool,
    /// `is_leaf` (autograd leaf).
    pub is_leaf: bool,
    /// `is_parameter` (an `nn.Parameter`).
    pub is_parameter: bool,
    /// `is_view`: the tensor is a view of `base`.
    pub is_view: bool,
    /// Id (same describer) of the tensor this one is a view of.
    pub base: Option<u64>,
    /// The other boolean flags that are true, by name as logged (`is_inference`, `is_sparse`,
    /// `is_nested`, `is_functional`, `is_conj`, `is_neg`, `is_traceable_wrapper_subclass`,
    /// ...).
    pub flags: Vec<String>,
    /// Dimensions marked dynamic (`dynamo_dynamic_indices`).
    pub dynamic_dims: Vec<u64>,
    /// `dynamo_hint_overrides`: dimension → size hint, as logged.
    pub hint_overrides: Map<String, Value>,
    /// `creation_meta` of a view, e.g. `CreationMeta.DEFAULT`.
    pub creation_meta: Option<String>,
    /// The `view_func` repr as logged, null when not logged. Torch 2.15 logs it for every tensor,
    /// views or not (`_CustomViewFunc(func=<built-in method _view_func_unsafe of Tensor object at
    /// 0x7f…>)`, an object address that differs from run to run).
    pub view_func: Option<String>,
    /// Every other field logged (e.g. `grad`, `attrs`, `unwrapped`, `bdim`, `sparse_dim`,
    /// `type`, `ctx`), as logged.
    pub other: Map<String, Value>,
}

/// A `describe_storage` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StorageInfo {
    /// Storage id within the describer.
    pub id: u64,
    /// Size in bytes; null when no `describe_storage` entry was logged for the id.
    pub size: Option<Dim>,
    /// Line of the `describe_storage` entry's header; null when none was logged.
    pub line: Option<u64>,
}
