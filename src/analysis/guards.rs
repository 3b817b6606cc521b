//! Guards and shapes: Dynamo guards (structured and C++ trees), shape guards, specializations,
//! symbols and data-dependent guards, each row tied to its compile id and user location.

use serde::ser::{Error, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::graph_breaks::is_user_file;
use super::{Diagnostics, Event, Finish, Observe, Table};
use crate::fast_hash::HashMap;
use crate::schema::tables::guards::{
    DataDependent, DataDependentKind, DynamoGuard, FrameLocals, GuardTree, GuardsCompile, ShapeGuard, ShapeGuardKind,
    Specialization, SymbolCreated, TreeGuard,
};
use crate::schema::{Frame, StackTable};
use crate::store::{CompileList, Distinct, Numbers, RowList, Rows, Store};

/// Rows are packed as they are observed (user frames resolved then: the stack table only grows),
/// and the summary of each compile id is kept up to date, so nothing is left to compute from
/// the rows at the end.
#[derive(Default)]
pub struct GuardsTable {
    /// The process's string table as seen in `str` entries: `dynamo_guards` payloads carry
    /// stacks whose file names are string-table indices, which the stream's stack table does not
    /// cover.
    strings: HashMap<u64, String>,
    /// One summary per compile id (as displayed) in order of its first row (entries come in
    /// `seq` order).
    compiles: Summaries,
    dynamo_guards: Rows<DynamoGuard>,
    /// [`TreeRow`]s: the trees, their guards as ids in `tree_guards`.
    guard_trees: Rows<GuardTree>,
    /// Each distinct tree guard once, its index its id, known by its line ([`guard_id`]): the
    /// trees of a long log repeat a few hundred distinct guards a hundred thousand times, and a
    /// large model's trees hold thousands of their own.
    tree_guards: Distinct<TreeGuard>,
    shape_guards: Rows<ShapeGuard>,
    specializations: Rows<Specialization>,
    symbols: Rows<SymbolCreated>,
    data_dependent: Rows<DataDependent>,
}

/// A compile's [`GuardsCompile`] as its rows are counted: its id is its key in
/// `GuardsTable::compiles`, and its metrics' counts are read when the table finishes (a long
/// log holds one per compile until then).
#[derive(Default, Serialize, Deserialize)]
struct Tally {
    dynamo_guards: u64,
    tree_guards: u64,
    latency_us: Option<f64>,
    shape_guards: u64,
    specializations: u64,
    backed_symbols: u64,
    unbacked_symbols: u64,
    data_dependent: u64,
}

/// The [`Tally`] of each compile id (as displayed), in order of its first row: the ids, their
/// tallies, and each one's place, known by its id ([`id_key`]). A long log has one per compile.
#[derive(Default)]
struct Summaries {
    ids: Rows<Option<String>>,
    tallies: CompileList<Tally>,
    places: Numbers,
    /// The id summarized last and its place: the rows of one compile come together.
    last: Option<(Option<String>, usize)>,
}

/// What a compile id (as displayed) is known by in [`Numbers`] (`Summaries::places`, the inputs'
/// compiles): a first part of its own tells `None` from any id.
pub fn id_key(id: Option<&str>) -> [&[u8]; 2] {
    match id {
        Some(id) => [b"s", id.as_bytes()],
        None => [b"n", b""],
    }
}

impl Summaries {
    fn new(store: &Store) -> Self {
        Summaries { ids: Rows::new(store), tallies: CompileList::new(store), places: Numbers::new(store), last: None }
    }

    /// The summary of a compile id, created with its first row.
    fn of(&mut self, id: &Option<String>) -> &mut Tally {
        let place = match &self.last {
            Some((last, place)) if last == id => *place,
            _ => self.place_of(id),
        };
        self.tallies.get_mut(place)
    }

    /// The place of a compile id's tally, made if new; the id becomes `last`.
    fn place_of(&mut self, id: &Option<String>) -> usize {
        let key = id_key(id.as_deref());
        let place = self.places.get(&key).map_or_else(
            || {
                self.ids.push(id);
                let place = self.tallies.push(Tally::default());
                self.places.insert(&key, place as u32);
                place
            },
            |place| place as usize,
        );
        self.last = Some((id.clone(), place));
        place
    }
}

/// A [`crate::schema::tables::guards::GuardTree`] with its guards as ids in
/// `GuardsTable::tree_guards`, as it is packed.
#[derive(Serialize)]
struct TreeRow<'a> {
    compile_id: Option<String>,
    seq: u64,
    line: u64,
    blob: &'a str,
    lines: u64,
    latency_us: Option<f64>,
    managers: u64,
    guards: Vec<u32>,
}

/// A packed [`TreeRow`] read back: its fields as they were written, but the guards.
#[derive(Deserialize)]
struct TreeRowText<'a> {
    #[serde(borrow)]
    compile_id: &'a RawValue,
    #[serde(borrow)]
    seq: &'a RawValue,
    #[serde(borrow)]
    line: &'a RawValue,
    #[serde(borrow)]
    blob: &'a RawValue,
    #[serde(borrow)]
    lines: &'a RawValue,
    #[serde(borrow)]
    latency_us: &'a RawValue,
    #[serde(borrow)]
    managers: &'a RawValue,
    guards: Vec<u32>,
}

/// [`crate::schema::tables::guards::GuardTree`] as serialized, its guards taken from the interned ones.
#[derive(Serialize)]
struct GuardTreeView<'a, 'b> {
    compile_id: &'a RawValue,
    seq: &'a RawValue,
    line: &'a RawValue,
    blob: &'a RawValue,
    lines: &'a RawValue,
    latency_us: &'a RawValue,
    managers: &'a RawValue,
    guards: RowList<'b>,
}

/// The guard trees of the table, serialized as a list of [`crate::schema::tables::guards::GuardTree`].
pub struct GuardTrees {
    trees: Rows<GuardTree>,
    guards: Distinct<TreeGuard>,
}

impl Serialize for GuardTrees {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The trees of a long log share their guards with trees logged long before.
        let guards = self.guards.reader(8);
        let mut seq = serializer.serialize_seq(Some(self.trees.len()))?;
        self.trees.try_for_each_json(|json| {
            let t: TreeRowText = serde_json::from_str(json.text()).map_err(S::Error::custom)?;
            seq.serialize_element(&GuardTreeView {
                compile_id: t.compile_id,
                seq: t.seq,
                line: t.line,
                blob: t.blob,
                lines: t.lines,
                latency_us: t.latency_us,
                managers: t.managers,
                guards: guards.list(&t.guards),
            })
        })?;
        seq.end()
    }
}

/// [`crate::schema::tables::guards::Guards`], serialized from the packed rows.
#[derive(Serialize)]
pub struct PackedGuards {
    compiles: Vec<GuardsCompile>,
    dynamo_guards: Rows<DynamoGuard>,
    guard_trees: GuardTrees,
    shape_guards: Rows<ShapeGuard>,
    specializations: Rows<Specialization>,
    symbols: Rows<SymbolCreated>,
    data_dependent: Rows<DataDependent>,
}

/// A metadata field as text: strings as they are, numbers and booleans written out; null when
/// absent or null.
pub fn text(meta: &Value, key: &str) -> Option<String> {
    value_text(meta.get(key)?)
}

/// A value as [`text`] reads a field: strings as they are, other values written out, null none.
pub fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// A metadata field as an unsigned integer.
pub fn uint(meta: &Value, key: &str) -> Option<u64> {
    meta.get(key)?.as_u64()
}

/// A metadata field that is an object (empty when absent or not an object).
pub fn object(meta: &Value, key: &str) -> Map<String, Value> {
    meta.get(key).and_then(Value::as_object).cloned().unwrap_or_default()
}

/// The `frame_locals` of a guard: `{loc, locals, symbols}`.
pub fn frame_locals(meta: &Value) -> Option<FrameLocals> {
    let v = meta.get("frame_locals").filter(|v| v.is_object())?;
    Some(FrameLocals { loc: text(v, "loc"), locals: object(v, "locals"), symbols: object(v, "symbols") })
}

/// Where in the user's code a user stack points: its innermost frame of user code (a file that
/// [`is_user_file`] accepts: not under `site-packages`, `dist-packages` or a `torch` directory,
/// nor the Python standard library), else its innermost (last logged) frame. Torch's user stack
/// ends in the library call it was made in (`torch/nn/modules/linear.py:134` under the user's
/// `self.fc(x)`), which is not where the user would look.
pub fn innermost(stacks: &StackTable, id: Option<u32>) -> Option<Frame> {
    let frames = stacks.stacks.get(id? as usize)?;
    let frame = |&f: &u32| stacks.frames.get(f as usize);
    let user = frames.iter().rev().filter_map(frame).find(|f| f.file.as_deref().is_some_and(is_user_file));
    user.or_else(|| frames.last().and_then(frame)).cloned()
}

/// The frame of a payload's user stack that [`innermost`] picks: the innermost of user code,
/// else the last.
fn user_or_innermost(frames: Vec<Frame>) -> Option<Frame> {
    let user = frames.iter().rposition(|f| f.file.as_deref().is_some_and(is_user_file));
    let at = user.unwrap_or(frames.len().checked_sub(1)?);
    frames.into_iter().nth(at)
}

/// The compile id of an entry, as displayed.
pub fn compile_id(ev: &Event) -> Option<String> {
    ev.display_id.map(str::to_string)
}

impl GuardsTable {
    fn observe_dynamo_guards(&mut self, ev: &Event, diags: &mut Diagnostics) {
        let Some(payload) = ev.payload else {
            diags.unusable(Self::NAME, ev, "no payload");
            return;
        };
        let Some(list) = ev.payload_json().and_then(Value::as_array) else {
            diags.unusable(Self::NAME, ev, "payload is not a JSON list");
            return;
        };
        for (index, guard) in list.iter().enumerate() {
            let Some(code) = guard.get("code").and_then(Value::as_str) else {
                diags.unusable(Self::NAME, ev, format!("guard {index} has no code"));
                continue;
            };
            let row = DynamoGuard {
                compile_id: compile_id(ev),
                seq: ev.seq,
                line: ev.line,
                blob: payload.hash.to_string(),
                index: index as u64,
                code: code.to_string(),
                user_frame: self.payload_frames(guard.get("user_stack")).and_then(user_or_innermost),
                frame: self.payload_frames(guard.get("stack")).and_then(|frames| frames.into_iter().last()),
            };
            self.summary(&row.compile_id).dynamo_guards += 1;
            self.dynamo_guards.push(&row);
        }
    }

    /// The frames of a stack logged inside a payload (`{line, name, filename}` with `filename` a
    /// string-table index), outermost first.
    fn payload_frames(&self, stack: Option<&Value>) -> Option<Vec<Frame>> {
        Some(stack?.as_array()?.iter().filter_map(|f| self.payload_frame(f)).collect())
    }

    /// One frame of a stack logged inside a payload.
    fn payload_frame(&self, frame: &Value) -> Option<Frame> {
        let file = match frame.get("filename")? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => n.as_u64().and_then(|i| self.strings.get(&i).cloned()),
            _ => None,
        };
        Some(Frame {
            file,
            line: frame.get("line").and_then(Value::as_i64).unwrap_or(-1),
            name: text(frame, "name").unwrap_or_default(),
            loc: text(frame, "loc"),
        })
    }

    fn observe_meta(&mut self, ev: &Event, diags: &mut Diagnostics) {
        let meta = ev.meta();
        if !meta.is_object() {
            diags.unusable(Self::NAME, ev, "metadata is not an object");
            return;
        }
        let compile_id = compile_id(ev);
        let summary = self.summary(&compile_id);
        let (seq, line) = (ev.seq, ev.line);
        let user_stack = ev.meta_stack("user_stack");
        let stack = ev.meta_stack("stack");
        let user_frame = innermost(ev.stacks, user_stack);
        match ev.kind {
            "guard_added_fast" | "guard_added" => {
                summary.shape_guards += 1;
                self.shape_guards.push(&ShapeGuard {
                    compile_id,
                    seq,
                    line,
                    kind: if ev.kind == "guard_added" {
                        ShapeGuardKind::GuardAdded
                    } else {
                        ShapeGuardKind::GuardAddedFast
                    },
                    expr: text(meta, "expr"),
                    prefix: text(meta, "prefix"),
                    expr_node_id: uint(meta, "expr_node_id"),
                    user_stack,
                    stack,
                    user_frame,
                    symbol_to_sources: object(meta, "symbol_to_sources"),
                    frame_locals: frame_locals(meta),
                });
            }
            "symbolic_shape_specialization" => {
                summary.specializations += 1;
                self.specializations.push(&Specialization {
                    compile_id,
                    seq,
                    line,
                    symbol: text(meta, "symbol"),
                    sources: super::compiles::strings(meta.get("sources")),
                    value: text(meta, "value"),
                    reason: text(meta, "reason"),
                    user_stack,
                    stack,
                    user_frame,
                });
            }
            "create_symbol" | "create_unbacked_symbol" => {
                let unbacked = ev.kind == "create_unbacked_symbol";
                if unbacked {
                    summary.unbacked_symbols += 1;
                } else {
                    summary.backed_symbols += 1;
                }
                self.symbols.push(&SymbolCreated {
                    compile_id,
                    seq,
                    line,
                    symbol: text(meta, "symbol"),
                    unbacked,
                    hint: text(meta, "val"),
                    range: text(meta, "vr"),
                    source: text(meta, "source"),
                    node_id: uint(meta, "node_id"),
                    user_stack,
                    stack,
                    user_frame,
                });
            }
            _ => {
                summary.data_dependent += 1;
                let kind = match ev.kind {
                    "guard_on_data_dependent_error" => DataDependentKind::GuardOnDataDependentError,
                    "propagate_real_tensors_provenance" => DataDependentKind::PropagateRealTensorsProvenance,
                    _ => DataDependentKind::PropagateRealTensors,
                };
                self.data_dependent.push(&DataDependent {
                    compile_id,
                    seq,
                    line,
                    kind,
                    expr: text(meta, "expr"),
                    unhinted_expr: text(meta, "unhinted_expr"),
                    result: text(meta, "result"),
                    expr_id: uint(meta, "expr_id").or_else(|| uint(meta, "expr_node_id")),
                    user_stack,
                    stack,
                    user_frame,
                    frame_locals: frame_locals(meta),
                });
            }
        }
    }

    fn observe_tree(&mut self, ev: &Event, diags: &mut Diagnostics) {
        let (Some(payload), Some(text)) = (ev.payload, ev.payload_text()) else {
            diags.unusable(Self::NAME, ev, "no payload");
            return;
        };
        let mut guards = Vec::new();
        let tree_guards = &mut self.tree_guards;
        let (managers, latency_us) = walk_tree(&text, |depth, source, body| {
            guards.push(guard_id(tree_guards, depth, source, body));
        });
        let latency_us = diags.number(ev, "Guard latency", latency_us);
        let compile_id = compile_id(ev);
        let summary = self.summary(&compile_id);
        summary.tree_guards += guards.len() as u64;
        if latency_us.is_some() {
            summary.latency_us = latency_us;
        }
        self.guard_trees.push_view(&TreeRow {
            compile_id,
            seq: ev.seq,
            line: ev.line,
            blob: payload.hash,
            lines: payload.lines,
            latency_us,
            managers,
            guards,
        });
    }

    /// The summary of a compile id, created with its first row.
    fn summary(&mut self, id: &Option<String>) -> &mut Tally {
        self.compiles.of(id)
    }

    /// The summaries as rows, with the counts of each compile's metrics: those of the last
    /// record displayed as its id.
    fn compile_rows(mut summaries: Summaries, ctx: &Finish) -> Vec<GuardsCompile> {
        let mut record_of: Vec<Option<usize>> = vec![None; summaries.tallies.len()];
        for (index, r) in ctx.compiles.records.iter().enumerate() {
            if let Some(place) = summaries.places.get(&id_key(Some(&r.display()))) {
                record_of[place as usize] = Some(index);
            }
        }
        let mut compile_ids: Vec<Option<String>> = Vec::with_capacity(summaries.tallies.len());
        summaries.ids.for_each("compile ids", |id| compile_ids.push(id));
        compile_ids
            .into_iter()
            .zip(summaries.tallies.into_records())
            .zip(record_of)
            .map(|((compile_id, t), record)| {
                let m = record.and_then(|r| ctx.compiles.metrics(&ctx.compiles.records.get(r)));
                GuardsCompile {
                    compile_id,
                    guard_count: m.as_ref().and_then(|m| m.guard_count),
                    shape_env_guard_count: m.as_ref().and_then(|m| m.shape_env_guard_count),
                    dynamo_guards: t.dynamo_guards,
                    tree_guards: t.tree_guards,
                    latency_us: t.latency_us,
                    shape_guards: t.shape_guards,
                    specializations: t.specializations,
                    backed_symbols: t.backed_symbols,
                    unbacked_symbols: t.unbacked_symbols,
                    data_dependent: t.data_dependent,
                }
            })
            .collect()
    }
}

impl Table for GuardsTable {
    type Format = crate::schema::tables::Guards;
    type Output<'a> = PackedGuards;

    fn new(store: &Store) -> Self {
        GuardsTable {
            compiles: Summaries::new(store),
            dynamo_guards: Rows::new(store),
            guard_trees: Rows::new(store),
            tree_guards: Distinct::new(store),
            shape_guards: Rows::new(store),
            specializations: Rows::new(store),
            symbols: Rows::new(store),
            data_dependent: Rows::new(store),
            ..GuardsTable::default()
        }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        match ev.kind {
            "str" => {
                if let Some([Value::String(s), Value::Number(i)]) = ev.meta().as_array().map(Vec::as_slice) {
                    if let Some(i) = i.as_u64() {
                        self.strings.insert(i, s.clone());
                    }
                }
            }
            "dynamo_guards" => self.observe_dynamo_guards(ev, diags),
            "dynamo_cpp_guards_str" => self.observe_tree(ev, diags),
            "guard_added_fast"
            | "guard_added"
            | "symbolic_shape_specialization"
            | "create_symbol"
            | "create_unbacked_symbol"
            | "guard_on_data_dependent_error"
            | "propagate_real_tensors_provenance"
            | "propagate_real_tensors" => self.observe_meta(ev, diags),
            _ => {}
        }
    }

    fn finish(self, ctx: &Finish) -> Option<(PackedGuards, u64)> {
        let rows = self.dynamo_guards.len()
            + self.guard_trees.len()
            + self.shape_guards.len()
            + self.specializations.len()
            + self.symbols.len()
            + self.data_dependent.len();
        if rows == 0 {
            return None;
        }
        let compiles = Self::compile_rows(self.compiles, ctx);
        let table = PackedGuards {
            compiles,
            dynamo_guards: self.dynamo_guards,
            guard_trees: GuardTrees { trees: self.guard_trees, guards: self.tree_guards },
            shape_guards: self.shape_guards,
            specializations: self.specializations,
            symbols: self.symbols,
            data_dependent: self.data_dependent,
        };
        Some((table, rows as u64))
    }
}

/// Reads a C++ guard tree: the number of manager nodes, the leaf guards, and the
/// `Guard latency = N us` figure.
pub fn parse_tree(text: &str) -> (u64, Vec<TreeGuard>, Option<f64>) {
    let mut guards = Vec::new();
    let (managers, latency) = walk_tree(text, |depth, source, body| guards.push(tree_guard(depth, source, body)));
    (managers, guards, latency)
}

/// Walks a C++ guard tree: calls `guard` with each leaf guard's depth, the source of its nearest
/// enclosing manager that has one, and its line after `+- ` (what [`tree_guard`] reads); returns
/// the number of manager nodes and the `Guard latency = N us` figure.
pub fn walk_tree<'a>(text: &'a str, mut guard: impl FnMut(u64, Option<&'a str>, &'a str)) -> (u64, Option<f64>) {
    let mut managers = 0;
    let mut latency = None;
    // Enclosing managers: (depth, source).
    let mut open: Vec<(u64, Option<&str>)> = Vec::new();
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(rest) = line.strip_prefix("Guard latency = ") {
            latency = rest.trim_end_matches("us").trim().parse().ok();
            continue;
        }
        let Some(at) = line.find("+- ") else { continue };
        let (indent, body) = (&line[..at], &line[at + 3..]);
        if !indent.bytes().all(|c| c == b'|' || c == b' ') {
            continue;
        }
        let depth = indent.bytes().filter(|&c| c == b'|').count() as u64;
        let (kind, rest) = split_kind(body);
        while open.last().is_some_and(|(d, _)| *d >= depth) {
            open.pop();
        }
        if kind.ends_with("Manager") {
            managers += 1;
            open.push((depth, manager_source(rest)));
            continue;
        }
        let source = open.iter().rev().find_map(|(_, s)| *s);
        guard(depth, source, body);
    }
    (managers, latency)
}

/// A guard line after `+- `: its kind, and the rest after the colon.
fn split_kind(body: &str) -> (&str, &str) {
    let kind_len = body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(body.len());
    let (kind, rest) = body.split_at(kind_len);
    (kind, rest.strip_prefix(':').unwrap_or(rest).trim_start())
}

/// The id of a tree guard in `guards`, added if new; known by all its row is read from.
fn guard_id(guards: &mut Distinct<TreeGuard>, depth: u64, source: Option<&str>, body: &str) -> u32 {
    let (tag, source_text): (&[u8], &str) = match source {
        Some(s) => (b"s", s),
        None => (b"-", ""),
    };
    let key: [&[u8]; 4] = [&depth.to_le_bytes(), tag, source_text.as_bytes(), body.as_bytes()];
    guards.id_by(&key, || tree_guard(depth, source, body))
}

/// The check of a leaf guard whose line after `+- ` is `body` (its row's `code`).
pub fn tree_guard_code(body: &str) -> &str {
    let rest = split_kind(body).1;
    match rest.find("  #") {
        Some(at) => rest[..at].trim_end(),
        None => rest.trim_end(),
    }
}

/// The row of a leaf guard: `body` is its line after `+- `, `source` its enclosing manager's.
fn tree_guard(depth: u64, source: Option<&str>, body: &str) -> TreeGuard {
    let (kind, rest) = split_kind(body);
    // `code  # user code  # file.py:12 in f (framework.py:3 in g)`; the user code may be
    // empty (`code  #   # <string>:1 in <lambda>`) or hold `  # ` itself.
    let (code, segments) = match rest.find("  #") {
        Some(at) => (rest[..at].trim_end(), rest[at..].split("  #").map(str::trim).filter(|s| !s.is_empty()).collect()),
        None => (rest.trim_end(), Vec::new()),
    };
    let (user_code, location, framework_location) = parse_comment(&segments);
    TreeGuard {
        depth,
        kind: kind.to_string(),
        source: source.map(str::to_string),
        code: code.to_string(),
        user_code,
        location,
        framework_location,
    }
}

/// `source=` of a manager line (`GuardManager: source=L['x'], accessed_by=...`).
fn manager_source(rest: &str) -> Option<&str> {
    let at = rest.find("source=")?;
    let source = &rest[at + "source=".len()..];
    let end = source.find(", accessed_by=").unwrap_or(source.len());
    Some(source[..end].trim())
}

/// Splits the `  # `-separated parts of a guard comment into the user code, the location and
/// the framework location.
fn parse_comment(segments: &[&str]) -> (Option<String>, Option<String>, Option<String>) {
    let mut framework = None;
    let (code_segments, location) = match segments.iter().rposition(|s| location_prefix(s).is_some()) {
        Some(i) => {
            let (loc, remainder) = location_prefix(segments[i]).unwrap_or_default();
            framework = parenthesised_location(remainder);
            (&segments[..i], Some(loc))
        }
        None => match segments.split_last() {
            Some((last, before)) if parenthesised_location(last).is_some() => {
                framework = parenthesised_location(last);
                (before, None)
            }
            _ => (segments, None),
        },
    };
    let user_code = code_segments.join("  # ");
    ((!user_code.is_empty()).then_some(user_code), location, framework)
}

/// `file.py:LINE in function` at the start of `s`, and what follows it.
fn location_prefix(s: &str) -> Option<(String, &str)> {
    let (file_line, after) = s.split_once(" in ")?;
    let (file, line) = file_line.rsplit_once(':')?;
    if file.is_empty()
        || file.starts_with('(')
        || file.contains(' ')
        || line.is_empty()
        || !line.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let function_len = after.find(' ').unwrap_or(after.len());
    if function_len == 0 {
        return None;
    }
    Some((format!("{file_line} in {}", &after[..function_len]), after[function_len..].trim()))
}

/// The location in `(file.py:LINE in function)`.
fn parenthesised_location(s: &str) -> Option<String> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    location_prefix(inner).filter(|(_, rest)| rest.is_empty()).map(|(loc, _)| loc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_lines_are_split_into_kind_source_code_and_locations() {
        let text = "\nTREE_GUARD_MANAGER:\n+- RootGuardManager\n\
            | +- DEFAULT_DEVICE: utils_device.CURRENT_DEVICE == None                           # _dynamo/output_graph.py:1222 in init_ambient_guards\n\
            | +- GuardManager: source=L['x'], accessed_by=FrameLocalsGuardAccessor(key='x', framelocals_idx=0), type=<class 'torch.Tensor'>\n\
            | | +- TYPE_MATCH: ___check_type_id(L['x'], 94197043380640), type=<class 'torch.Tensor'>  # n = x.shape[0]  # gen/f.py:15 in f (HINT: type Tensor)\n\
            | | +- NO_TENSOR_ALIASING\n\
            | | +- ID_MATCH: ___check_obj_id(G['g'], 1407), type=<class 'tuple'>  #   # <string>:1 in <lambda>\n\
            +- LAMBDA_GUARD: 5 <= L['x'].size()[0]  # if n > 4:  # symbolic guard on s0  # gen/f.py:16 in f (_dynamo/variables/tensor.py:3083 in evaluate_expr)\n\
            +- LAMBDA_GUARD: (L['y'].size()[0] // 4) != 1  # (_prims_common/__init__.py:285 in check_contiguous_sizes_strides)\n\
            \nGuard latency = 72.97 us";
        let (managers, mut guards, latency) = parse_tree(text);
        assert_eq!(managers, 2);
        assert_eq!(latency, Some(72.97));
        assert_eq!(guards.len(), 6);
        assert_eq!(guards[0].kind, "DEFAULT_DEVICE");
        assert_eq!(guards[0].depth, 1);
        assert_eq!(guards[0].source, None);
        assert_eq!(guards[0].code, "utils_device.CURRENT_DEVICE == None");
        assert_eq!(guards[0].user_code, None);
        assert_eq!(guards[0].location.as_deref(), Some("_dynamo/output_graph.py:1222 in init_ambient_guards"));
        assert_eq!(guards[1].source.as_deref(), Some("L['x']"));
        assert_eq!(guards[1].user_code.as_deref(), Some("n = x.shape[0]"));
        assert_eq!(guards[1].location.as_deref(), Some("gen/f.py:15 in f"));
        assert_eq!(guards[1].framework_location, None);
        assert_eq!((guards[2].kind.as_str(), guards[2].code.as_str()), ("NO_TENSOR_ALIASING", ""));
        let lambda = guards.remove(3);
        assert_eq!((lambda.user_code, lambda.location.as_deref()), (None, Some("<string>:1 in <lambda>")));
        assert_eq!(guards[3].depth, 0);
        assert_eq!(guards[3].source, None);
        assert_eq!(guards[3].user_code.as_deref(), Some("if n > 4:  # symbolic guard on s0"));
        assert_eq!(guards[3].framework_location.as_deref(), Some("_dynamo/variables/tensor.py:3083 in evaluate_expr"));
        assert_eq!(guards[4].user_code, None);
        assert_eq!(guards[4].location, None);
        assert_eq!(
            guards[4].framework_location.as_deref(),
            Some("_prims_common/__init__.py:285 in check_contiguous_sizes_strides")
        );
    }

    /// Twenty compiles log shape guards, then compiles 0, 3 and 19 log more (and `None`, a
    /// row outside any compile): each compile's summary counts its own rows, in order of its
    /// first row, whether the summaries long past were written to the spool or not (in tests a
    /// page holds 4 and 2 pages stay in memory).
    #[test]
    fn summaries_count_each_compiles_rows_once_spooled() {
        use crate::parse::Meta;
        use crate::schema::tables::Guards;
        use crate::store::packed_rows::tests::test_store;
        let compiles: Vec<Option<u32>> = (0..20).map(Some).chain([Some(0), Some(3), None, Some(19), Some(3)]).collect();
        for spooled in [false, true] {
            let (store, spool) = test_store(spooled);
            let (mut table, mut diags, stacks) =
                (GuardsTable::new(&store), Diagnostics::default(), StackTable::default());
            for (seq, compile) in compiles.iter().enumerate() {
                let row = crate::schema::IndexRow {
                    compile_id: compile.map(|c| format!("[0/{c}]")),
                    meta: Meta::Value(serde_json::json!({"expr": "Eq(s0, 3)"})),
                    ..super::super::test_row(seq as u64, "guard_added")
                };
                table.observe(
                    &Event::new(&row, row.line, 0, None, None, &stacks),
                    &mut Observe { diags: &mut diags, record: None },
                );
            }
            assert_eq!(spooled, !spool.is_empty());
            let (guards, _): (Guards, _) = super::super::finish_alone(table).expect("rows");
            let got: Vec<(Option<String>, u64)> =
                guards.compiles.iter().map(|c| (c.compile_id.clone(), c.shape_guards)).collect();
            let mut want: Vec<(Option<String>, u64)> = (0..20).map(|c| (Some(format!("[0/{c}]")), 1)).collect();
            for c in [0, 3, 19, 3] {
                want[c].1 += 1;
            }
            want.push((None, 1));
            assert_eq!(got, want, "spooled: {spooled}");
        }
    }
}
