//! The tensors each compile fakeified: `describe_tensor`, `describe_storage` and
//! `describe_source` joined into one row per (compile id, describer, tensor id).

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::ser::{Error, SerializeSeq, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::guards::{compile_id, id_key, text};
use super::{Event, Finish, MetaMembers, Observe, Table};
use crate::fast_hash::{HashMap, HashSet};
use crate::schema::tables::inputs::{Dim, StorageInfo, TensorInfo};
use crate::store::{Numbers, PerCompile, RowJson, Rows, Store};

/// A row of [`crate::schema::tables::inputs::Inputs`] (it serializes the same), its tensor and
/// storage held as their JSON: a long log describes ten thousand tensors, and rows are packed
/// (and read back, exactly) once their compile is described.
#[derive(Serialize, Deserialize)]
struct Row {
    compile_id: Option<String>,
    seq: u64,
    line: u64,
    describer_id: u64,
    id: u64,
    sources: Vec<String>,
    tensor: Option<Box<RawValue>>,
    storage: Option<Box<RawValue>>,
    size_symbols: Vec<Option<String>>,
}

/// No row, compile or line.
const NONE: u32 = u32::MAX;

/// What is known of one id of a describer: of the tensor with that id, and of the storage with
/// that id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Described {
    /// The compile that made a row for the tensor last, and that row (`NONE`: no row yet).
    row: (u32, u32),
    /// The row holding the tensor's latest description with its storage (`NONE`: none), for
    /// rows of later compiles that only log a source.
    tensor: u32,
    /// The latest `describe_storage` of the storage: its size and line (`None`: none).
    storage: Option<(Option<HeldDim>, u64)>,
}

/// A [`Dim`] as a describer holds it: tagged, as describers long unused are written out with
/// postcard, which reads no untagged enum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum HeldDim {
    Int(i64),
    Sym(String),
}

impl From<Dim> for HeldDim {
    fn from(dim: Dim) -> Self {
        match dim {
            Dim::Int(n) => HeldDim::Int(n),
            Dim::Sym(text) => HeldDim::Sym(text),
        }
    }
}

impl From<HeldDim> for Dim {
    fn from(dim: HeldDim) -> Self {
        match dim {
            HeldDim::Int(n) => Dim::Int(n),
            HeldDim::Sym(text) => Dim::Sym(text),
        }
    }
}

impl Default for Described {
    fn default() -> Self {
        Described { row: (NONE, NONE), tensor: NONE, storage: None }
    }
}

/// The ids of one describer (a fake-tensor mode: torch makes one per compile or so).
#[derive(Default, Serialize, Deserialize)]
struct Describer {
    ids: HashMap<u64, Described>,
}

/// How many describers stay in memory: the latest few, as entries of one compile come together
/// (1 in unit tests, so that they are written out and read back).
const LIVE_DESCRIBERS: usize = if cfg!(test) { 1 } else { 4 };

/// Rows are numbered in order of creation: the first `packed.len()` are in `packed` (unless
/// reopened), the rest in `open`.
#[derive(Default)]
pub struct InputsTable {
    /// Rows of compiles described before the current one.
    packed: Rows<Row>,
    /// Where each compile's rows start in `packed`: (first row, compile), in row order.
    packed_compiles: Vec<(u32, u32)>,
    /// Packed rows an entry changed later (a compile described again after another one).
    reopened: HashMap<usize, Row>,
    /// The rows of the compile being described, after the packed ones.
    open: Vec<Row>,
    /// The compile (in `compile_ids`) of the open rows.
    open_compile: Option<u32>,
    /// Compile ids as displayed, numbered (a long log has one per compile; only their identity
    /// matters here).
    compile_ids: Numbers,
    /// The describers in use (what each described), least recently used first; a large model's
    /// log describes hundreds of thousands of tensors, each describer's only for a while.
    live: Vec<(u64, Describer)>,
    /// The others, set aside when they left `live`, by their number in `describer_ids`: written
    /// out but the one used last (they are read again seldom, and can be large).
    set_aside: PerCompile<Describer, 1>,
    /// The numbers of the describers that were set aside.
    describer_ids: Numbers,
    /// (compile, describer, tensor id) → row, for the rows that are not the latest of their
    /// tensor (`Described::row` has those): a log of many small compiles of one frame has one
    /// per compile and tensor.
    earlier_rows: Numbers,
    /// (compile id, source) → symbol, from `create_symbol` (the first one wins).
    symbols: HashMap<(Option<String>, String), String>,
    /// The compiles (in `compile_ids`) with a symbol in `symbols`.
    symbol_compiles: HashSet<u32>,
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

/// A boolean `is_*` field without a column of its own: listed in `flags` when true.
fn is_flag(key: &str, value: &Value) -> bool {
    key.starts_with("is_") && value.is_boolean() && !KNOWN.contains(&key)
}

fn tensor_info(ev: &Event, meta: &MetaMembers) -> TensorInfo {
    let is_view = meta.flag("is_view");
    let mut flags = Vec::new();
    let mut other = Map::new();
    for (key, value) in meta.each(|key| !KNOWN.contains(&key)) {
        if !is_flag(&key, &value) {
            other.insert(key, value.into_owned());
        } else if value.as_bool() == Some(true) {
            flags.push(key);
        }
    }
    TensorInfo {
        line: ev.line,
        compile_id: compile_id(ev),
        ndim: meta.uint("ndim"),
        dtype: meta.text("dtype"),
        device: meta.text("device").map(|d| short_device(&d)),
        size: dims(meta.get("size").as_deref()),
        stride: dims(meta.get("stride").as_deref()),
        storage_offset: meta.get("storage_offset").as_deref().and_then(dim).unwrap_or(Dim::Int(0)),
        layout: meta.text("layout").unwrap_or_else(|| "torch.strided".to_string()),
        requires_grad: meta.flag("requires_grad"),
        is_leaf: meta.flag("is_leaf"),
        is_parameter: meta.flag("is_parameter"),
        is_view,
        base: meta.uint("base"),
        flags,
        dynamic_dims: meta
            .get("dynamo_dynamic_indices")
            .as_deref()
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default(),
        hint_overrides: meta
            .get("dynamo_hint_overrides")
            .as_deref()
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        creation_meta: meta.text("creation_meta"),
        view_func: meta.text("view_func"),
        other,
    }
}

impl InputsTable {
    /// The number of a compile id in `compile_ids`.
    fn compile(&mut self, compile_id: &Option<String>) -> u32 {
        self.compile_ids.number(&id_key(compile_id.as_deref()))
    }

    /// What a describer described, in memory (the least recently used one set aside if too
    /// many are).
    fn describer(&mut self, describer: u64) -> &mut Describer {
        let at = match self.live.iter().position(|(d, _)| *d == describer) {
            Some(at) => at,
            None => {
                if self.live.len() >= LIVE_DESCRIBERS {
                    let (cold, described) = self.live.remove(0);
                    let number = self.describer_ids.number(&[&cold.to_le_bytes()]);
                    self.set_aside.insert(number, described);
                }
                let number = self.describer_ids.get(&[&describer.to_le_bytes()]);
                let set_aside = number.map(|n| self.take_set_aside(n)).unwrap_or_default();
                self.live.push((describer, set_aside));
                self.live.len() - 1
            }
        };
        let used = self.live.remove(at);
        self.live.push(used);
        &mut self.live.last_mut().expect("just pushed").1
    }

    /// Takes the describer set aside as `number` out of `set_aside`.
    fn take_set_aside(&mut self, number: u32) -> Describer {
        let describer = std::mem::take(self.set_aside.entry(number));
        self.set_aside.remove(number);
        describer
    }

    /// The row of a tensor in the entry's compile, created if new (with the tensor's latest
    /// description if `described`).
    fn row(&mut self, ev: &Event, describer: u64, id: u64, described: bool) -> usize {
        let compile_id = compile_id(ev);
        let compile = self.compile(&compile_id);
        let known = self.describer(describer).ids.get(&id).cloned().unwrap_or_default();
        if known.row.0 == compile {
            return known.row.1 as usize;
        }
        // A tensor never given a row has no earlier rows either (and most tensors are new).
        if known.row.0 != NONE
            && let Some(index) = self.earlier_rows.get(&[&earlier_row_key(compile, describer, id)])
        {
            return index as usize;
        }
        let (tensor, storage) = match known.tensor {
            index if index != NONE && described => self.description(index as usize),
            _ => (None, None),
        };
        if self.open_compile != Some(compile) {
            if !self.open.is_empty() {
                let first = self.packed.len() as u32;
                let open_compile = self.open_compile.expect("open rows have a compile");
                self.packed_compiles.push((first, open_compile));
            }
            for row in self.open.drain(..) {
                self.packed.push(&row);
            }
            self.open_compile = Some(compile);
        }
        self.open.push(Row {
            compile_id,
            seq: ev.seq,
            line: ev.line,
            describer_id: describer,
            id,
            sources: Vec::new(),
            tensor,
            storage,
            size_symbols: Vec::new(),
        });
        let index = self.packed.len() + self.open.len() - 1;
        if known.row.0 != NONE {
            self.earlier_rows.insert(&[&earlier_row_key(known.row.0, describer, id)], known.row.1);
        }
        self.describer(describer).ids.entry(id).or_default().row = (compile, index as u32);
        index
    }

    /// Row `index`, to change: a packed row is read back and kept typed from then on.
    fn row_mut(&mut self, index: usize) -> &mut Row {
        match index.checked_sub(self.packed.len()) {
            Some(i) => &mut self.open[i],
            None => self.reopened.entry(index).or_insert_with(|| self.packed.get(index as u32)),
        }
    }

    /// The tensor and storage of row `index`.
    fn description(&mut self, index: usize) -> (Option<Box<RawValue>>, Option<Box<RawValue>>) {
        let typed = index.checked_sub(self.packed.len()).map(|i| &self.open[i]).or_else(|| self.reopened.get(&index));
        match typed {
            Some(row) => (row.tensor.clone(), row.storage.clone()),
            None => {
                let row = self.packed.get(index as u32);
                (row.tensor, row.storage)
            }
        }
    }

    fn storage(&mut self, describer: u64, id: u64) -> StorageInfo {
        let known = self.describer(describer).ids.get(&id).and_then(|d| d.storage.as_ref());
        StorageInfo { id, size: known.and_then(|(s, _)| s.clone().map(Dim::from)), line: known.map(|(_, l)| *l) }
    }

    /// The compile of packed row `index`.
    fn packed_compile(&self, index: usize) -> u32 {
        let at = self.packed_compiles.partition_point(|&(first, _)| first as usize <= index);
        self.packed_compiles[at - 1].1
    }
}

/// A value held as its JSON, written into the table as it is.
fn raw_json(value: &impl Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("rows serialize")
}

/// The key of a row in `InputsTable::earlier_rows`: (compile, describer, tensor id).
fn earlier_row_key(compile: u32, describer: u64, id: u64) -> [u8; 20] {
    let mut key = [0; 20];
    key[..4].copy_from_slice(&compile.to_le_bytes());
    key[4..12].copy_from_slice(&describer.to_le_bytes());
    key[12..].copy_from_slice(&id.to_le_bytes());
    key
}

/// The symbol each dimension's size became in the row's compile; empty when none is symbolic.
fn size_symbols(symbols: &HashMap<(Option<String>, String), String>, row: &Row) -> Vec<Option<String>> {
    symbols_of(symbols, &row.compile_id, row.sources.iter().map(String::as_str), row.tensor.as_deref())
}

/// What [`size_symbols`] reads of a packed row, read without building the row: most rows of a
/// compile that made symbols have none, and are written as they were packed.
#[derive(Deserialize)]
struct SymbolKeys<'a> {
    compile_id: Option<String>,
    #[serde(borrow)]
    sources: Vec<Cow<'a, str>>,
    #[serde(borrow)]
    tensor: Option<&'a RawValue>,
}

/// [`size_symbols`] of a packed row.
fn packed_size_symbols(symbols: &HashMap<(Option<String>, String), String>, json: RowJson) -> Vec<Option<String>> {
    let keys: SymbolKeys = serde_json::from_str(json.text()).expect("packed rows read back");
    symbols_of(symbols, &keys.compile_id, keys.sources.iter().map(|s| s.as_ref()), keys.tensor)
}

/// The symbol each dimension of `tensor` became in the compile, from its sources.
fn symbols_of<'s>(
    symbols: &HashMap<(Option<String>, String), String>,
    compile_id: &Option<String>,
    sources: impl Iterator<Item = &'s str> + Clone,
    tensor: Option<&RawValue>,
) -> Vec<Option<String>> {
    #[derive(Deserialize)]
    struct Sizes {
        size: Option<Vec<IgnoredAny>>,
    }
    let ndim = tensor
        .map_or(0, |t| serde_json::from_str::<Sizes>(t.get()).expect("tensors read back").size.map_or(0, |s| s.len()));
    let per_dim: Vec<Option<String>> = (0..ndim)
        .map(|i| {
            sources
                .clone()
                .find_map(|source| symbols.get(&(compile_id.clone(), format!("{source}.size()[{i}]"))).cloned())
        })
        .collect();
    if per_dim.iter().any(Option::is_some) { per_dim } else { Vec::new() }
}

/// The finished table: serializes as [`crate::schema::tables::inputs::Inputs`], each packed row
/// read back with its size symbols as it is written.
pub struct PackedInputs(InputsTable);

impl Serialize for PackedInputs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut table = serializer.serialize_struct("Inputs", 1)?;
        table.serialize_field("inputs", &CompletedRows(&self.0))?;
        table.end()
    }
}

struct CompletedRows<'a>(&'a InputsTable);

impl Serialize for CompletedRows<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut seq = serializer.serialize_seq(Some(t.packed.len() + t.open.len()))?;
        let mut index = 0;
        t.packed.try_for_each_json(|json| {
            match t.reopened.get(&index) {
                Some(row) => seq.serialize_element(row)?,
                // Packed with no size symbols, which only a compile that created symbols has, and
                // few of its rows.
                None if !t.symbol_compiles.contains(&t.packed_compile(index))
                    || packed_size_symbols(&t.symbols, json).is_empty() =>
                {
                    seq.serialize_element(&json.raw())?
                }
                None => {
                    let mut row: Row = serde_json::from_str(json.text()).map_err(S::Error::custom)?;
                    row.size_symbols = size_symbols(&t.symbols, &row);
                    seq.serialize_element(&row)?;
                }
            }
            index += 1;
            Ok(())
        })?;
        for row in &t.open {
            seq.serialize_element(row)?;
        }
        seq.end()
    }
}

impl Table for InputsTable {
    type Format = crate::schema::tables::Inputs;
    type Output<'a> = PackedInputs;

    fn new(store: &Store) -> Self {
        InputsTable {
            packed: Rows::new(store),
            compile_ids: Numbers::new(store),
            set_aside: PerCompile::new(store),
            describer_ids: Numbers::new(store),
            earlier_rows: Numbers::new(store),
            ..InputsTable::default()
        }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        if ev.kind == "create_symbol" {
            if let (Some(source), Some(symbol)) = (text(ev.meta(), "source"), text(ev.meta(), "symbol")) {
                let compile_id = compile_id(ev);
                let compile = self.compile(&compile_id);
                self.symbol_compiles.insert(compile);
                self.symbols.entry((compile_id, source)).or_insert(symbol);
            }
            return;
        }
        if !matches!(ev.kind, "describe_tensor" | "describe_storage" | "describe_source") {
            return;
        }
        let meta = ev.meta_members();
        let (Some(describer), Some(id)) = (meta.uint("describer_id"), meta.uint("id")) else {
            diags.unusable(Self::NAME, ev, "no describer_id or id");
            return;
        };
        match ev.kind {
            "describe_storage" => {
                let storage = Some((meta.get("size").as_deref().and_then(dim).map(HeldDim::from), ev.line));
                self.describer(describer).ids.entry(id).or_default().storage = storage;
            }
            "describe_tensor" => {
                let tensor = raw_json(&tensor_info(ev, &meta));
                let storage = meta.uint("storage").map(|s| raw_json(&self.storage(describer, s)));
                let index = self.row(ev, describer, id, false);
                let row = self.row_mut(index);
                row.tensor = Some(tensor);
                row.storage = storage;
                self.describer(describer).ids.entry(id).or_default().tensor = index as u32;
            }
            _ => {
                let Some(source) = meta.text("source") else {
                    diags.unusable(Self::NAME, ev, "no source");
                    return;
                };
                let index = self.row(ev, describer, id, true);
                self.row_mut(index).sources.push(source);
            }
        }
    }

    fn finish(mut self, _ctx: &Finish) -> Option<(PackedInputs, u64)> {
        let rows = self.packed.len() + self.open.len();
        if rows == 0 {
            return None;
        }
        // Typed rows get their size symbols here, packed ones as they are written.
        for row in self.open.iter_mut().chain(self.reopened.values_mut()) {
            row.size_symbols = size_symbols(&self.symbols, row);
        }
        Some((PackedInputs(self), rows as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Describers set aside are written out with postcard (see [`HeldDim`]) and read back.
    #[test]
    fn a_describer_set_aside_reads_back_as_it_was() {
        let mut d = Describer::default();
        d.ids.insert(0, Described::default());
        d.ids.insert(7, Described { row: (3, 41), tensor: 41, storage: Some((Some(HeldDim::Int(-5)), 12)) });
        d.ids.insert(u64::MAX, Described { row: (NONE, NONE), tensor: NONE, storage: Some((None, 1)) });
        let sym = Some(HeldDim::from(Dim::Sym("s0*4 é".into())));
        d.ids.insert(9, Described { row: (0, 0), tensor: 2, storage: Some((sym, 99)) });
        let read: Describer = postcard::from_bytes(&postcard::to_allocvec(&d).unwrap()).unwrap();
        assert_eq!(read.ids, d.ids);
    }

    /// Twelve compiles each describe tensor 0 of describer 0, then the first compile logs a
    /// source for it: the source joins the first compile's row (found among the earlier rows,
    /// spilled to the spool after 7 in tests) instead of making a thirteenth row.
    #[test]
    fn an_earlier_compile_finds_its_row_again_after_it_is_spooled() {
        use crate::parse::Meta;
        use crate::schema::tables::inputs::Inputs;
        use crate::store::packed_rows::tests::test_store;
        for spooled in [false, true] {
            let (store, spool) = test_store(spooled);
            let (mut table, mut diags, stacks) =
                (InputsTable::new(&store), super::super::Diagnostics::default(), crate::schema::StackTable::default());
            let entries = (0..12).map(|c| (c, "describe_tensor")).chain([(0, "describe_source")]);
            for (seq, (compile, kind)) in entries.enumerate() {
                let meta = serde_json::json!({"describer_id": 0, "id": 0, "ndim": 1, "source": "L['x']"});
                let row = crate::schema::IndexRow {
                    compile_id: Some(format!("[0/{compile}]")),
                    meta: Meta::Value(meta),
                    ..super::super::test_row(seq as u64, kind)
                };
                table.observe(
                    &Event::new(&row, row.line, 0, None, None, &stacks),
                    &mut Observe { diags: &mut diags, record: None },
                );
            }
            assert_eq!(!spool.is_empty(), spooled, "earlier rows were spooled");
            let (inputs, rows): (Inputs, _) = super::super::finish_alone(table).expect("rows");
            assert_eq!(rows, 12, "spooled: {spooled}");
            let first = &inputs.inputs[0];
            assert_eq!(
                (first.compile_id.as_deref(), first.sources.as_slice()),
                (Some("[0/0]"), &["L['x']".to_string()][..])
            );
            assert!(inputs.inputs[1..].iter().all(|r| r.sources.is_empty()), "spooled: {spooled}");
        }
    }
}
