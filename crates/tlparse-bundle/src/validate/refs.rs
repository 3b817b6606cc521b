//! References from analysis tables to the rest of the bundle (blobs, index rows, stacks, frames,
//! compile ids, streams): which field is which kind of reference ([`REFERENCES`], the one list),
//! what each stream offers to point at ([`StreamFacts`], fed one index row at a time), and the
//! check of every reference of a table against them, guided by the table's own JSON Schema.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// Compile id parts as one compile: an absent `attempt` is attempt 0 (torch logs some entries of
/// a compile, e.g. `compilation_metrics_runtime`, without it; both display as `[0/0]`, and tables
/// list them as one compile).
fn same_attempt(cid: CompileId) -> CompileId {
    CompileId { attempt: cid.attempt.or(Some(0)), ..cid }
}

/// How tables show the compile id of an entry that had none (`[-/-]`, as tlparse shows it).
const NO_COMPILE_ID: &str = "[-/-]";

use serde::Deserialize;
use serde_json::Value;

use super::Locations;
use crate::ids::parse_blob_id;
use crate::registry::{self, Scope, TableInfo};
use crate::schema::{CompileId, IndexRow};

/// What a field of a table refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ref {
    /// A blob id, which must be in the blob index.
    Blob,
    /// A blob id that must also be the payload of the entry at the same object's `seq` (null:
    /// that entry has no payload).
    EntryBlob,
    /// The kind of the entry at the same object's `seq`.
    EntryKind,
    /// A `seq` of the stream's index.
    Seq,
    /// A stack id in the stream's stack table.
    Stack,
    /// A frame id in the stream's stack table.
    Frame,
    /// A compile id as displayed (`[0/1]`): one the stream's index rows carry; in a cross-rank
    /// table, one that some stream's rows carry.
    CompileId,
    /// A `CompileId` object (the parts): one that the index rows carry, as for [`Ref::CompileId`].
    CompileIdParts,
    /// A `frame_id` of some compile id of the stream.
    CompileFrameId,
    /// A stream id, which must be a member of the cross-rank section.
    Stream,
    /// Not checked: a position in another list of the same table, or a field whose name looks
    /// like a reference but that is none (a count, an op name, text).
    NotChecked,
}

/// Every reference field: `(type, field, what it refers to)`, where `type` is the Rust type (the
/// schema's `$defs` name, or the table's type for its top level) and `*` stands for every type
/// that is not listed with that field. A test walks every table schema of the registry and fails
/// on a field that looks like a reference and is not classified here, and on one whose JSON type
/// does not fit its kind.
pub(crate) const REFERENCES: &[(&str, &str, Ref)] = &[
    // Names that mean the same thing wherever they appear.
    ("*", "blob", Ref::Blob),
    ("*", "seq", Ref::Seq),
    ("*", "first_seq", Ref::Seq),
    ("*", "last_seq", Ref::Seq),
    ("*", "stack", Ref::Stack),
    ("*", "user_stack", Ref::Stack),
    ("*", "compile_id", Ref::CompileId),
    ("*", "compile_ids", Ref::CompileId),
    ("*", "cid", Ref::CompileIdParts),
    ("*", "stream", Ref::Stream),
    ("*", "streams", Ref::Stream),
    ("*", "missing", Ref::Stream),
    ("*", "fastest", Ref::Stream),
    ("*", "slowest", Ref::Stream),
    ("*", "no_data", Ref::Stream),
    ("CompileSchedules", "cache_hit", Ref::Stream),
    ("RecompileStep", "reasons_logged_on", Ref::CompileId),
    // Stream tables: blobs that are the payload of the row's own entry.
    ("ArtifactRef", "blob", Ref::EntryBlob),
    ("ArtifactRef", "kind", Ref::EntryKind),
    ("CompileArtifact", "blob", Ref::EntryBlob),
    ("CompileArtifact", "kind", Ref::EntryKind),
    ("CacheLookup", "blob", Ref::EntryBlob),
    ("Schedule", "blob", Ref::EntryBlob),
    ("OutputCode", "blob", Ref::EntryBlob),
    ("GraphSize", "blob", Ref::EntryBlob),
    ("DynamoGuard", "blob", Ref::EntryBlob),
    ("GuardTree", "blob", Ref::EntryBlob),
    ("KernelStackTraces", "blob", Ref::EntryBlob),
    ("RuntimeGraph", "blob", Ref::EntryBlob),
    ("ExecutionRecording", "blob", Ref::EntryBlob),
    // Stream tables: references whose name does not say so.
    ("Failure", "error_blob", Ref::Blob),
    ("GraphBreakGroup", "example_blob", Ref::Blob),
    ("ArtifactChange", "before", Ref::Blob),
    ("ArtifactChange", "after", Ref::Blob),
    ("TrieNode", "entries", Ref::Seq),
    ("TrieNode", "frame", Ref::Frame),
    ("CompileEntry", "restarted_as", Ref::CompileId),
    ("CompileEntry", "graph_compiles", Ref::CompileId),
    ("Changes", "previous", Ref::CompileId),
    ("CollectivesSummary", "parity_mismatches", Ref::CompileId),
    ("RecompiledFrame", "frame_id", Ref::CompileFrameId),
    // The search table lists the stream's compile ids once; its terms refer to them by position.
    ("Search", "compiles", Ref::CompileId),
    ("SearchTerm", "compiles", Ref::NotChecked),
    // Cross-rank tables: stream lists.
    ("CompileOutcomes", "no_lookups", Ref::Stream),
    ("CompileSchedules", "no_schedule", Ref::Stream),
    ("CompileSchedules", "parity_mismatches", Ref::Stream),
    ("CompileSpread", "untimed", Ref::Stream),
    ("PartialCode", "not_compiled_by", Ref::Stream),
    ("GraphRuntimes", "compiled_without_estimate", Ref::Stream),
    ("GraphTensorMeta", "compiled_without_artifact", Ref::Stream),
    ("ArtifactComparison", "missing_on_cache_hit", Ref::Stream),
    // Counts, op names and text that look like references.
    ("StreamOrder", "unknown_compile_ids", Ref::NotChecked),
    ("StreamDiffer", "missing", Ref::NotChecked),
    ("CompileId", "frame_id", Ref::NotChecked), // the parts are checked together, as `cid`
    ("CompileId", "frame_compile_id", Ref::NotChecked),
    // An aligned compile's streams and their compile ids (objects whose `stream` and `compile_id`
    // are checked as everywhere); frame ids of several streams.
    ("AlignedCompileRef", "compile_ids", Ref::NotChecked),
    ("AlignmentKey", "frame", Ref::NotChecked), // which frame of a code (0, 1, ...), not a frame id
    // A frame compile of unknown code, `[2/0]` for all its attempts: a key, so no row need carry it.
    ("AlignmentKey", "compile_id", Ref::NotChecked),
    ("StreamCompile", "restart_reasons", Ref::NotChecked), // text
    ("ArtifactFindings", "described", Ref::NotChecked),    // text
    ("FrameIdShift", "frame_id", Ref::NotChecked),
    ("FrameIdShift", "usual_frame_id", Ref::NotChecked),
    ("PartialCode", "later_frame_id_shift", Ref::NotChecked),
    ("AlignedCompile", "compile_id_differs", Ref::NotChecked),
    ("StreamAlignment", "missing", Ref::NotChecked),          // a count
    ("StreamFindings", "recompiled_frames", Ref::NotChecked), // a count
    // A frame id of the row's stream (a cross-rank table's checks know no stream's frame ids).
    ("RecompileStorm", "frame_id", Ref::NotChecked),
    // Labels of aligned compiles (`compile_alignment`'s `label`), not compile ids.
    ("CollectiveSchedules", "shared_compiles", Ref::NotChecked),
    ("RuntimeEstimations", "differing_compiles", Ref::NotChecked),
    ("Parity", "same_sequence", Ref::NotChecked),
    ("Failure", "user_frame", Ref::NotChecked), // `file:line` text
    ("TreeGuard", "framework_location", Ref::NotChecked),
    ("ScheduleVariant", "schedules", Ref::NotChecked), // op names
    ("ScheduleVariant", "lacks", Ref::NotChecked),
    ("ScheduleVariant", "extra", Ref::NotChecked),
    ("ParityMismatch", "only_in_schedule", Ref::NotChecked),
    ("ParityMismatch", "only_in_code", Ref::NotChecked),
    // Compile ids for `recorded`, inductor graph names for `legacy`: not one kind.
    ("OrderGroup", "recordings", Ref::NotChecked),
    // Compile ids that a payload may name with no index row carrying them (a trace event's
    // `args.compile_id`, a recorded run): nothing to check them against.
    ("CompileTiming", "compile_id", Ref::NotChecked),
    ("CompileTiming", "counted_in", Ref::NotChecked),
    ("OuterPhase", "compile_id", Ref::NotChecked),
    ("UnmatchedEvent", "compile_id", Ref::NotChecked),
    ("GraphRun", "compile_id", Ref::NotChecked),
];

/// What `field` of `type_name` refers to, if anything.
pub(crate) fn classify(type_name: &str, field: &str) -> Option<Ref> {
    let exact = REFERENCES.iter().find(|(t, f, _)| *t == type_name && *f == field);
    let any = || REFERENCES.iter().find(|(t, f, _)| *t == "*" && *f == field);
    exact.or_else(any).map(|&(_, _, r)| r)
}

/// Compile ids carried by index rows: as displayed, and their parts.
#[derive(Debug, Default)]
pub(crate) struct CompileIdSet {
    displayed: HashSet<String>,
    parts: HashSet<CompileId>,
}

impl CompileIdSet {
    fn observe(&mut self, row: &IndexRow) {
        if let Some(id) = &row.compile_id {
            if !self.displayed.contains(id) {
                self.displayed.insert(id.clone());
            }
        }
        if let Some(cid) = row.cid {
            self.parts.insert(same_attempt(cid));
        }
    }

    /// Adds every compile id of `other` (for the cross-rank tables, which may name any stream's).
    pub(crate) fn extend(&mut self, other: CompileIdSet) {
        self.displayed.extend(other.displayed);
        self.parts.extend(other.parts);
    }
}

/// What the tables of one stream may point at, collected one index row at a time. Per row it
/// keeps only 8 bytes (interned kind and payload), so it never holds the rows themselves.
#[derive(Debug, Default)]
pub(crate) struct StreamFacts {
    stacks: usize,
    frames: usize,
    compile_ids: CompileIdSet,
    kinds: HashMap<String, u32>,
    payloads: HashMap<u128, u32>,
    /// Per row in seq order: its kind and its payload (`NO_PAYLOAD` without one).
    rows: Vec<(u32, u32)>,
    /// Set when more distinct kinds or payloads came than a u32 numbers: entry checks are skipped.
    overflowed: bool,
}

const NO_PAYLOAD: u32 = u32::MAX;

impl StreamFacts {
    /// Facts of a stream whose stack table holds `stacks` stacks of `frames` frames; rows follow
    /// through [`Self::observe_row`].
    pub(crate) fn new(stacks: u64, frames: u64) -> StreamFacts {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        StreamFacts { stacks: count(stacks), frames: count(frames), ..StreamFacts::default() }
    }

    /// How many stacks the stream's stack table holds.
    pub(crate) fn stacks(&self) -> u64 {
        self.stacks as u64
    }

    /// Takes in the next index row of the stream (rows come in seq order).
    pub(crate) fn observe_row(&mut self, row: &IndexRow) {
        self.compile_ids.observe(row);
        let kind = intern(&mut self.kinds, row.kind.as_str(), |k| k.to_string());
        let payload = match &row.payload {
            Some(p) => blob_key(&p.hash).and_then(|key| intern(&mut self.payloads, &key, |k| *k)),
            None => Some(NO_PAYLOAD),
        };
        match (kind, payload) {
            (Some(kind), Some(payload)) => self.rows.push((kind, payload)),
            _ => self.overflowed = true,
        }
    }

    /// The stream's compile ids, for the cross-rank tables.
    pub(crate) fn into_compile_ids(self) -> CompileIdSet {
        self.compile_ids
    }

    fn entries(&self) -> usize {
        self.rows.len()
    }

    fn row(&self, seq: u64) -> Option<(u32, u32)> {
        if self.overflowed {
            return None;
        }
        usize::try_from(seq).ok().and_then(|i| self.rows.get(i)).copied()
    }
}

/// The number `map` gives `key`, giving it the next one if it has none; None past u32 numbers
/// (`NO_PAYLOAD` is never given).
fn intern<K: std::hash::Hash + Eq + ?Sized, O: std::hash::Hash + Eq + std::borrow::Borrow<K>>(
    map: &mut HashMap<O, u32>,
    key: &K,
    to_owned: impl FnOnce(&K) -> O,
) -> Option<u32> {
    if let Some(&n) = map.get(key) {
        return Some(n);
    }
    let n = u32::try_from(map.len()).ok().filter(|&n| n != NO_PAYLOAD)?;
    map.insert(to_owned(key), n);
    Some(n)
}

/// A blob id as a number, when it is one (32 lowercase hex digits).
fn blob_key(id: &str) -> Option<u128> {
    parse_blob_id(id).map(u128::from_be_bytes)
}

/// What the references of one table are checked against, besides the blob index.
pub(crate) enum Within<'a> {
    /// A table of the stream `id`.
    Stream { id: &'a str, facts: &'a StreamFacts },
    /// A cross-rank table.
    CrossRank { members: HashSet<&'a str>, compile_ids: &'a CompileIdSet },
}

/// Problems listed per file before the rest are only counted.
const PROBLEMS_SHOWN_PER_FILE: usize = 20;

/// Checks every reference of `value`, the table `info` read from `file`; returns the problems.
pub(crate) fn check_table(
    info: &TableInfo,
    file: &str,
    value: &Value,
    blobs: &Locations,
    within: &Within,
) -> Vec<String> {
    let Some(plan) = plans().get(&(info.scope == Scope::CrossRank, info.name)) else { return Vec::new() };
    let mut checker = Checker { plan, blobs, within, file, path: Vec::new(), found: 0, problems: Vec::new() };
    checker.walk(value, &Node::Type(plan.root.clone()), None, None);
    if checker.found > PROBLEMS_SHOWN_PER_FILE {
        let more = checker.found - PROBLEMS_SHOWN_PER_FILE;
        checker.problems.push(format!("{file}: {more} more bad references not listed"));
    }
    checker.problems
}

/// The shape of a table, from its JSON Schema, with each field's reference kind resolved.
struct Plan {
    root: String,
    types: HashMap<String, HashMap<String, Field>>,
}

struct Field {
    refers_to: Option<Ref>,
    node: Node,
}

/// One schema node, reduced to what walking a value needs.
#[derive(Debug, Clone)]
enum Node {
    /// An object type with fields (named as in `$defs`).
    Type(String),
    /// A list of the inner node.
    List(Box<Node>),
    /// An object with arbitrary keys and values of the inner node.
    Map(Box<Node>),
    /// A value that holds no fields (string, number, enum, free JSON).
    Leaf,
}

/// The plans of every table of the registry, keyed by (is cross-rank, name); built once.
fn plans() -> &'static HashMap<(bool, &'static str), Plan> {
    static PLANS: OnceLock<HashMap<(bool, &'static str), Plan>> = OnceLock::new();
    PLANS.get_or_init(|| {
        registry::TABLES.iter().map(|t| ((t.scope == Scope::CrossRank, t.name), plan_of(&table_schema(t)))).collect()
    })
}

/// A table's JSON Schema, as the bundle's `schema/` directory has it.
pub(crate) fn table_schema(info: &TableInfo) -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    info.schema(generator).to_value()
}

fn plan_of(schema: &Value) -> Plan {
    let root = schema["title"].as_str().unwrap_or_default().to_string();
    let mut types = HashMap::new();
    let defs = schema["$defs"].as_object().into_iter().flatten();
    for (name, def) in std::iter::once((&root, schema)).chain(defs) {
        if let Some(props) = def["properties"].as_object() {
            let fields = props
                .iter()
                .map(|(f, s)| (f.clone(), Field { refers_to: classify(name, f), node: node_of(s) }))
                .collect();
            types.insert(name.clone(), fields);
        }
    }
    Plan { root, types }
}

/// The node of a schema: `$ref`, `anyOf`/`oneOf` with null (an `Option`), arrays, maps.
fn node_of(schema: &Value) -> Node {
    if let Some(r) = schema["$ref"].as_str() {
        return Node::Type(r.rsplit('/').next().unwrap_or_default().to_string());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alternatives) = schema[key].as_array() {
            let structured: Vec<Node> = alternatives.iter().map(node_of).filter(|n| !matches!(n, Node::Leaf)).collect();
            // Our schemas have at most one structured alternative (the `Some` of an `Option`).
            return structured.into_iter().next().unwrap_or(Node::Leaf);
        }
    }
    if let Some(items) = schema.get("items") {
        return Node::List(Box::new(node_of(items)));
    }
    let map_values = schema["additionalProperties"]
        .as_object()
        .map(|_| &schema["additionalProperties"])
        .or_else(|| schema["patternProperties"].as_object().and_then(|p| p.values().next()));
    match map_values {
        Some(values) => Node::Map(Box::new(node_of(values))),
        None => Node::Leaf,
    }
}

/// A step of the JSON pointer to the value being checked.
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

struct Checker<'a, 'v> {
    plan: &'a Plan,
    blobs: &'a Locations,
    within: &'a Within<'a>,
    file: &'a str,
    path: Vec<Step<'v>>,
    found: usize,
    problems: Vec<String>,
}

impl<'v> Checker<'_, 'v> {
    /// Walks `value`, shaped as `node`; `refers_to` is the kind of the field it is in (applied to
    /// the values, not to objects, which have their own fields); `entry` is the `seq` of the
    /// object the field belongs to.
    fn walk(&mut self, value: &'v Value, node: &Node, refers_to: Option<Ref>, entry: Option<u64>) {
        match (node, value) {
            (Node::Type(_), Value::Object(_)) if refers_to == Some(Ref::CompileIdParts) => {
                self.check(value, Ref::CompileIdParts, entry)
            }
            (Node::Type(name), Value::Object(fields)) => self.walk_object(name, fields),
            (Node::List(inner), Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Step::Index(i));
                    self.walk(item, inner, refers_to, entry);
                    self.path.pop();
                }
            }
            (Node::Map(inner), Value::Object(fields)) => {
                for (key, item) in fields {
                    self.path.push(Step::Key(key));
                    self.walk(item, inner, refers_to, entry);
                    self.path.pop();
                }
            }
            (_, Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Step::Index(i));
                    self.walk(item, &Node::Leaf, refers_to, entry);
                    self.path.pop();
                }
            }
            (_, Value::Object(_)) => {} // free JSON, or a shape the schema check reports
            (_, _) => {
                if let Some(r) = refers_to {
                    self.check(value, r, entry)
                }
            }
        }
    }

    fn walk_object(&mut self, type_name: &str, fields: &'v serde_json::Map<String, Value>) {
        let Some(plan) = self.plan.types.get(type_name) else { return };
        let seq_field = plan.get("seq").filter(|f| f.refers_to == Some(Ref::Seq));
        let entry = seq_field.and(fields.get("seq")).and_then(Value::as_u64);
        for (key, item) in fields {
            let Some(field) = plan.get(key) else { continue };
            self.path.push(Step::Key(key));
            self.walk(item, &field.node, field.refers_to, entry);
            self.path.pop();
        }
    }

    /// Checks one value that refers to something as `r`.
    fn check(&mut self, value: &Value, r: Ref, entry: Option<u64>) {
        if let Some(problem) = self.problem_with(value, r, entry) {
            self.report(problem);
        }
    }

    fn problem_with(&self, value: &Value, r: Ref, entry: Option<u64>) -> Option<String> {
        match (r, value) {
            (Ref::EntryBlob, _) => self.entry_blob(value, entry),
            (Ref::Blob, Value::String(id)) => self.blob(id),
            (Ref::EntryKind, Value::String(kind)) => self.entry_kind(kind, entry),
            (Ref::Seq | Ref::Stack | Ref::Frame | Ref::CompileFrameId, Value::Number(n)) => self.number(r, n.as_u64()),
            (Ref::CompileId, Value::String(id)) => self.compile_id(id),
            (Ref::CompileIdParts, _) => self.compile_id_parts(value),
            (Ref::Stream, Value::String(id)) => self.stream(id),
            _ => None, // null, or a type the schema check reports
        }
    }

    fn blob(&self, id: &str) -> Option<String> {
        self.blobs.lacks(id).then(|| format!("blob {id}, which is not in the blob index"))
    }

    /// The payload blob of the entry at `entry`: in the index, and that entry's (null: it has none).
    fn entry_blob(&self, value: &Value, entry: Option<u64>) -> Option<String> {
        let id = value.as_str();
        if let Some(problem) = id.and_then(|id| self.blob(id)) {
            return Some(problem);
        }
        let (Within::Stream { facts, .. }, Some(seq)) = (self.within, entry) else { return None };
        let (_, payload) = facts.row(seq)?;
        // A blob that is no payload of the stream gets no number, so it matches no row.
        let named = id.map(|id| blob_key(id).and_then(|key| facts.payloads.get(&key).copied()));
        let expected = named.unwrap_or(Some(NO_PAYLOAD));
        match (expected == Some(payload), id) {
            (true, _) => None,
            (false, Some(id)) => Some(format!("blob {id}, which is not the payload of entry {seq}")),
            (false, None) => Some(format!("no blob, but entry {seq} has a payload")),
        }
    }

    fn entry_kind(&self, kind: &str, entry: Option<u64>) -> Option<String> {
        let Within::Stream { facts, .. } = self.within else { return None };
        let seq = entry?;
        let (row_kind, _) = facts.row(seq)?;
        (facts.kinds.get(kind) != Some(&row_kind))
            .then(|| format!("kind {kind:?}, which is not the kind of entry {seq}"))
    }

    /// A seq, stack, frame or frame id of the stream.
    fn number(&self, r: Ref, n: Option<u64>) -> Option<String> {
        let Within::Stream { id, facts } = self.within else { return None };
        let n = n?; // negative or fractional: the schema check reports it
        let below = |len: usize| usize::try_from(n).is_ok_and(|n| n < len);
        match r {
            Ref::Seq if !below(facts.entries()) => {
                Some(format!("seq {n}, past the end of index of stream {id} ({} entries)", facts.entries()))
            }
            Ref::Stack if !below(facts.stacks) => {
                Some(format!("stack {n}, which stream {id}'s stack table lacks ({} stacks)", facts.stacks))
            }
            Ref::Frame if !below(facts.frames) => {
                Some(format!("frame {n}, which stream {id}'s stack table lacks ({} frames)", facts.frames))
            }
            Ref::CompileFrameId if !facts.compile_ids.parts.iter().any(|c| c.frame_id == Some(n)) => {
                Some(format!("frame_id {n}, which no compile id of stream {id} has"))
            }
            _ => None,
        }
    }

    fn compile_ids(&self) -> (&CompileIdSet, String) {
        match self.within {
            Within::Stream { id, facts } => (&facts.compile_ids, format!("stream {id}")),
            Within::CrossRank { compile_ids, .. } => (compile_ids, "any stream".to_string()),
        }
    }

    fn compile_id(&self, displayed: &str) -> Option<String> {
        // The documented stand-in of a row whose entry had no compile id (failures,
        // graph_breaks): it names no compile, so there is nothing to find.
        if displayed == NO_COMPILE_ID {
            return None;
        }
        let (set, whose) = self.compile_ids();
        (!set.displayed.contains(displayed))
            .then(|| format!("compile id {displayed}, which no index row of {whose} carries"))
    }

    fn compile_id_parts(&self, value: &Value) -> Option<String> {
        let cid = CompileId::deserialize(value).ok()?;
        let (set, whose) = self.compile_ids();
        (!set.parts.contains(&same_attempt(cid)))
            .then(|| format!("compile id parts {value}, which no index row of {whose} carries"))
    }

    fn stream(&self, id: &str) -> Option<String> {
        let Within::CrossRank { members, .. } = self.within else { return None };
        (!members.contains(id)).then(|| format!("stream {id:?}, which is not a cross-rank member"))
    }

    /// Adds a problem at the current place, or only counts it past the first few of the file.
    fn report(&mut self, what: String) {
        self.found += 1;
        if self.found <= PROBLEMS_SHOWN_PER_FILE {
            let pointer = self.pointer();
            self.problems.push(format!("{}#{pointer}: points at {what}", self.file));
        }
    }

    /// The JSON pointer (RFC 6901) of the current place.
    fn pointer(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            out.push('/');
            match step {
                Step::Key(k) => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
                Step::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Field names and description phrases that say a field refers to something.
    const NAMES: &[&str] = &["blob", "seq", "stack", "frame", "compile_id", "cid", "stream"];
    const PHRASES: &[&str] = &["blob id", "`seq`", "stack table", "stream id", "`members` order", "as displayed"];

    /// What a field holds once lists and nulls are looked through.
    #[derive(Debug, PartialEq)]
    enum Holds {
        /// Objects of a type with fields, walked into.
        Objects,
        /// `CompileId` objects.
        CompileIds,
        /// JSON values of this type (`string`, `integer`, ...), `in_list` when in an array.
        Values { json_type: String, in_list: bool },
    }

    fn holds(schema: &Value, defs: &Value, in_list: bool) -> Holds {
        if let Some(r) = schema["$ref"].as_str() {
            let name = r.rsplit('/').next().unwrap_or_default();
            return match &defs[name] {
                _ if name == "CompileId" => Holds::CompileIds,
                def if def.get("properties").is_some() => Holds::Objects,
                def => holds(def, defs, in_list),
            };
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(alternatives) = schema[key].as_array() {
                let not_null = alternatives.iter().find(|a| a["type"] != "null");
                return not_null
                    .map_or(Holds::Values { json_type: "null".into(), in_list }, |a| holds(a, defs, in_list));
            }
        }
        if let Some(items) = schema.get("items") {
            return holds(items, defs, true);
        }
        let json_type = match &schema["type"] {
            Value::String(t) => t.clone(),
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("any").into(),
            _ if schema.get("const").is_some() => "string".into(),
            _ => "any".into(),
        };
        Holds::Values { json_type, in_list }
    }

    /// Every (table, type, field, description, what it holds) of every table schema.
    fn every_field() -> Vec<(&'static TableInfo, String, String, String, Holds)> {
        let mut out = Vec::new();
        for info in registry::TABLES {
            let schema = table_schema(info);
            let root = schema["title"].as_str().unwrap_or_default().to_string();
            let defs = schema["$defs"].as_object().into_iter().flatten().map(|(n, d)| (n.clone(), d));
            for (type_name, def) in std::iter::once((root, &schema)).chain(defs) {
                for (field, s) in def["properties"].as_object().into_iter().flatten() {
                    let description = s["description"].as_str().unwrap_or_default().to_lowercase();
                    let held = holds(s, &schema["$defs"], false);
                    out.push((info, type_name.clone(), field.clone(), description, held));
                }
            }
        }
        out
    }

    fn looks_like_a_reference(info: &TableInfo, field: &str, description: &str, held: &Holds) -> bool {
        match held {
            Holds::Objects => false, // its own fields are checked
            Holds::CompileIds => true,
            Holds::Values { json_type, in_list } => {
                NAMES.iter().any(|n| field.contains(n))
                    || PHRASES.iter().any(|p| description.contains(p))
                    // Cross-rank tables list streams and compile ids in string lists.
                    || (info.scope == Scope::CrossRank && *in_list && json_type == "string")
            }
        }
    }

    #[test]
    fn every_field_that_looks_like_a_reference_is_classified() {
        let unclassified: Vec<String> = every_field()
            .into_iter()
            .filter(|(info, t, f, d, held)| looks_like_a_reference(info, f, d, held) && classify(t, f).is_none())
            .map(|(info, t, f, d, _)| format!("{} {t}.{f}: {d}", info.name))
            .collect();
        assert!(
            unclassified.is_empty(),
            "these fields look like references: say what each refers to (or NotChecked) in REFERENCES, \
             src/validate/refs.rs:\n{}",
            unclassified.join("\n")
        );
    }

    #[test]
    fn every_classified_field_holds_what_its_kind_needs() {
        let mut wrong = Vec::new();
        for (info, t, f, _, held) in every_field() {
            let Some(r) = classify(&t, &f) else { continue };
            let fits = match (&held, r) {
                (_, Ref::NotChecked) | (Holds::Objects, _) => true, // objects: their fields are checked
                (Holds::CompileIds, r) => r == Ref::CompileIdParts,
                (Holds::Values { json_type, .. }, Ref::Seq | Ref::Stack | Ref::Frame | Ref::CompileFrameId) => {
                    json_type == "integer"
                }
                (Holds::Values { json_type, .. }, _) => json_type == "string",
            };
            if !fits {
                wrong.push(format!("{} {t}.{f} holds {held:?}, not a {r:?}", info.name));
            }
        }
        assert!(wrong.is_empty(), "classified with the wrong kind in REFERENCES:\n{}", wrong.join("\n"));
    }

    #[test]
    fn every_listed_field_exists_once() {
        let fields = every_field();
        for (i, (t, f, _)) in REFERENCES.iter().enumerate() {
            let exists = fields.iter().any(|(_, ft, ff, _, _)| (*t == "*" || ft == t) && ff == f);
            assert!(exists, "REFERENCES lists {t}.{f}, which no table has");
            assert!(!REFERENCES[..i].iter().any(|(t2, f2, _)| t2 == t && f2 == f), "{t}.{f} listed twice");
        }
    }

    #[test]
    fn blob_keys_accept_only_lowercase_hex_ids() {
        assert_eq!(blob_key("000000000000000000000000000000ff"), Some(255));
        assert_eq!(blob_key("000000000000000000000000000000FF"), None);
        assert_eq!(blob_key("+00000000000000000000000000000ff"), None);
        assert_eq!(blob_key("ff"), None);
    }
}
