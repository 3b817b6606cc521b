//! The tensors each compile fakeified: `describe_tensor`, `describe_storage` and
//! `describe_source` joined into one row per (compile id, describer, tensor id).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::guards::{compile_id, text, uint};
use super::{Diagnostics, Event, Finish, Table};
use crate::schema::tables::inputs::{Dim, InputTensor, Inputs, StorageInfo, TensorInfo};

/// (describer id, tensor or storage id).
type DescKey = (u64, u64);

#[derive(Default)]
pub struct InputsTable {
    rows: Vec<InputTensor>,
    /// (compile id, describer, tensor id) → index in `rows`.
    row_of: HashMap<(Option<String>, u64, u64), usize>,
    /// The latest description of each tensor with its storage, for rows of later compiles that
    /// only log a source.
    tensors: HashMap<DescKey, (TensorInfo, Option<StorageInfo>)>,
    /// The latest `describe_storage` of each storage: (size, line).
    storages: HashMap<DescKey, (Option<Dim>, u64)>,
    /// (compile id, source) → symbol, from `create_symbol` (the first one wins).
    symbols: HashMap<(Option<String>, String), String>,
}

/// Fields of `describe_tensor` that have their own column (or are the row's key).
const KNOWN: &[&str] = &[
    "id",
    "describer_id",
    "ndim",
    "dtype",
    "device",
    "size",
    "stride",
    "storage_offset",
    "storage",
    "layout",
    "requires_grad",
    "is_leaf",
    "is_parameter",
    "is_view",
    "base",
    "dynamo_dynamic_indices",
    "dynamo_hint_overrides",
    "creation_meta",
    "view_func",
    // Always null when logged (torch never writes their values).
    "data",
    "autograd_meta_from",
];

fn dim(v: &Value) -> Option<Dim> {
    match v {
        Value::Number(n) => n.as_i64().map(Dim::Int).or_else(|| Some(Dim::Sym(n.to_string()))),
        Value::String(s) => Some(Dim::Sym(s.clone())),
        _ => None,
    }
}

fn dims(v: Option<&Value>) -> Option<Vec<Dim>> {
    v?.as_array().map(|items| items.iter().map(|i| dim(i).unwrap_or_else(|| Dim::Sym(i.to_string()))).collect())
}

/// `device(type='cuda', index=0)` → `cuda:0`, `device(type='cpu')` → `cpu`; other text as is.
pub fn short_device(repr: &str) -> String {
    let parse = || {
        let inner = repr.strip_prefix("device(")?.strip_suffix(')')?;
        let mut kind = None;
        let mut index = None;
        for part in inner.split(',') {
            let (key, value) = part.trim().split_once('=')?;
            let value = value.trim().trim_matches('\'');
            match key.trim() {
                "type" => kind = Some(value),
                "index" => index = Some(value),
                _ => return None,
            }
        }
        Some(match index {
            Some(i) => format!("{}:{i}", kind?),
            None => kind?.to_string(),
        })
    };
    parse().unwrap_or_else(|| repr.to_string())
}

fn flag(meta: &Value, key: &str) -> bool {
    meta.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// A boolean `is_*` field without a column of its own: listed in `flags` when true.
fn is_flag(key: &str, value: &Value) -> bool {
    key.starts_with("is_") && value.is_boolean() && !KNOWN.contains(&key)
}

fn tensor_info(ev: &Event, meta: &Value) -> TensorInfo {
    let is_view = flag(meta, "is_view");
    let object = meta.as_object();
    let fields = || object.into_iter().flatten();
    let flags = fields().filter(|(k, v)| is_flag(k, v) && v.as_bool() == Some(true)).map(|(k, _)| k.clone()).collect();
    let other: Map<String, Value> = fields()
        .filter(|(k, v)| !KNOWN.contains(&k.as_str()) && !is_flag(k, v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    TensorInfo {
        line: ev.line,
        compile_id: compile_id(ev),
        ndim: uint(meta, "ndim"),
        dtype: text(meta, "dtype"),
        device: text(meta, "device").map(|d| short_device(&d)),
        size: dims(meta.get("size")),
        stride: dims(meta.get("stride")),
        storage_offset: meta.get("storage_offset").and_then(dim).unwrap_or(Dim::Int(0)),
        layout: text(meta, "layout").unwrap_or_else(|| "torch.strided".to_string()),
        requires_grad: flag(meta, "requires_grad"),
        is_leaf: flag(meta, "is_leaf"),
        is_parameter: flag(meta, "is_parameter"),
        is_view,
        base: uint(meta, "base"),
        flags,
        dynamic_dims: meta
            .get("dynamo_dynamic_indices")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default(),
        hint_overrides: meta.get("dynamo_hint_overrides").and_then(Value::as_object).cloned().unwrap_or_default(),
        creation_meta: text(meta, "creation_meta"),
        view_func: if is_view { text(meta, "view_func") } else { None },
        other,
    }
}

impl InputsTable {
    /// The row of a tensor in the entry's compile, created if new.
    fn row(&mut self, ev: &Event, describer: u64, id: u64) -> &mut InputTensor {
        let key = (compile_id(ev), describer, id);
        let index = match self.row_of.get(&key) {
            Some(&i) => i,
            None => {
                let (tensor, storage) = self.tensors.get(&(describer, id)).cloned().unzip();
                self.rows.push(InputTensor {
                    compile_id: key.0.clone(),
                    seq: ev.seq,
                    line: ev.line,
                    describer_id: describer,
                    id,
                    sources: Vec::new(),
                    tensor,
                    storage: storage.flatten(),
                    size_symbols: Vec::new(),
                });
                self.row_of.insert(key, self.rows.len() - 1);
                self.rows.len() - 1
            }
        };
        &mut self.rows[index]
    }

    fn storage(&self, describer: u64, id: u64) -> StorageInfo {
        let known = self.storages.get(&(describer, id));
        StorageInfo { id, size: known.and_then(|(s, _)| s.clone()), line: known.map(|(_, l)| *l) }
    }
}

impl Table for InputsTable {
    const NAME: &'static str = "inputs";
    type Output<'a> = Inputs;

    fn observe(&mut self, ev: &Event, diags: &mut Diagnostics) {
        if ev.kind == "create_symbol" {
            if let (Some(source), Some(symbol)) = (text(ev.meta(), "source"), text(ev.meta(), "symbol")) {
                self.symbols.entry((compile_id(ev), source)).or_insert(symbol);
            }
            return;
        }
        if !matches!(ev.kind, "describe_tensor" | "describe_storage" | "describe_source") {
            return;
        }
        let meta = ev.meta();
        let (Some(describer), Some(id)) = (uint(meta, "describer_id"), uint(meta, "id")) else {
            diags.unusable(Self::NAME, ev, "no describer_id or id");
            return;
        };
        match ev.kind {
            "describe_storage" => {
                self.storages.insert((describer, id), (meta.get("size").and_then(dim), ev.line));
            }
            "describe_tensor" => {
                let info = tensor_info(ev, meta);
                let storage = uint(meta, "storage").map(|s| self.storage(describer, s));
                self.tensors.insert((describer, id), (info.clone(), storage.clone()));
                let row = self.row(ev, describer, id);
                row.tensor = Some(info);
                row.storage = storage;
            }
            _ => {
                let Some(source) = text(meta, "source") else {
                    diags.unusable(Self::NAME, ev, "no source");
                    return;
                };
                let row = self.row(ev, describer, id);
                row.sources.push(source);
            }
        }
    }

    fn finish(mut self, _ctx: &Finish) -> Option<(Inputs, u64)> {
        if self.rows.is_empty() {
            return None;
        }
        for row in &mut self.rows {
            let ndim = row.tensor.as_ref().and_then(|t| t.size.as_ref()).map_or(0, Vec::len);
            let per_dim: Vec<Option<String>> = (0..ndim)
                .map(|i| {
                    row.sources.iter().find_map(|source| {
                        self.symbols.get(&(row.compile_id.clone(), format!("{source}.size()[{i}]"))).cloned()
                    })
                })
                .collect();
            if per_dim.iter().any(Option::is_some) {
                row.size_symbols = per_dim;
            }
        }
        let rows = self.rows.len() as u64;
        Some((Inputs { inputs: self.rows }, rows))
    }
}
