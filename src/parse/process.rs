//! Process-level context applied to entries in log order: the per-process string table (scoped
//! to one file and one pid, never shared), stacks resolved through it, and the routing of each
//! entry to its stream (process × rank).

use serde_json::Value;

use super::entry::Entry;
use crate::fast_hash::HashMap;
use crate::schema::{DiagnosticKind, Frame};

/// Which stream of a process an entry goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RankSlot {
    /// The process's own rank: the first one its entries name, else the one in the file name
    /// (entries logged before any rank is known belong here too).
    Home,
    /// Entries whose envelope names another rank than the process's own.
    Other(u32),
}

/// Identifies a stream within one input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamKey {
    pub pid: u64,
    pub slot: RankSlot,
}

/// Where in an entry a stack was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StackSlot {
    /// The envelope-level `stack`.
    Envelope,
    /// A top-level field of the metadata.
    Meta(String),
}

/// An entry with its context applied.
#[derive(Debug)]
pub struct Routed {
    pub key: StreamKey,
    /// Boxed as it came from the parser: an entry is some 650 bytes, moved at each hand-over.
    pub entry: Box<Entry>,
    /// Stacks found in the entry, with their frames' files resolved.
    pub stacks: Vec<(StackSlot, Vec<Frame>)>,
}

#[derive(Default)]
struct Process {
    strings: HashMap<u64, String>,
    home_rank: Option<u32>,
}

/// The context of one input file: one string table and home rank per process.
pub struct Demux {
    file_rank: Option<u32>,
    processes: HashMap<u64, Process>,
}

impl Demux {
    pub fn new(file_rank: Option<u32>) -> Self {
        Demux { file_rank, processes: HashMap::default() }
    }

    /// The rank of a process's home stream: the first rank its entries name, else the rank in
    /// the file name (what torch logged wins over what a file was called).
    pub fn home_rank(&self, pid: u64) -> Option<u32> {
        self.processes.get(&pid).and_then(|p| p.home_rank).or(self.file_rank)
    }

    /// Applies the process's context to an entry, in log order.
    pub fn route(&mut self, mut entry: Box<Entry>) -> Routed {
        let file_rank = self.file_rank;
        let process = self.processes.entry(entry.pid).or_default();
        let slot = match (entry.rank, process.home_rank) {
            (None, _) => RankSlot::Home,
            (Some(r), None) => {
                process.home_rank = Some(r);
                if let Some(named) = file_rank.filter(|&n| n != r) {
                    entry.problems.push((
                        DiagnosticKind::RankMismatch,
                        format!("the file name says rank {named} but process {} logs rank {r}; its entries are filed under rank {r}", entry.pid),
                    ));
                }
                RankSlot::Home
            }
            (Some(r), Some(home)) if r == home => RankSlot::Home,
            (Some(r), Some(_)) => RankSlot::Other(r),
        };

        // A string table entry kept as text (too deep to read) already has its diagnostic.
        if entry.kind == "str" && entry.meta_text.is_none() {
            let parsed = match &entry.meta {
                crate::parse::Meta::Value(v) => v.as_array().map(Vec::as_slice),
                crate::parse::Meta::Raw(_) => None,
            };
            match parsed {
                Some([Value::String(s), Value::Number(i)]) if i.is_u64() => {
                    process.strings.insert(i.as_u64().unwrap_or_default(), s.clone());
                }
                _ => entry.problems.push((
                    DiagnosticKind::BadStringTable,
                    format!("str entry {} is not [string, index]", entry.meta.to_value()),
                )),
            }
        }

        let mut stacks = Vec::new();
        let mut unresolved = Vec::new();
        if let Some(stack) = entry.stack.as_ref() {
            if let Some(frames) = resolve_stack(stack, &process.strings, &mut unresolved) {
                stacks.push((StackSlot::Envelope, frames));
            }
        }
        if let crate::parse::Meta::Value(Value::Object(meta)) = &entry.meta {
            for (key, value) in meta {
                let Some(list) = value.as_array() else { continue };
                // An empty list is a stack only where the key names one.
                if (key.ends_with("stack") || !list.is_empty()) && list.iter().all(is_frame) {
                    let frames = resolve_frames(list, &process.strings, &mut unresolved);
                    stacks.push((StackSlot::Meta(key.clone()), frames));
                }
            }
        }
        if !unresolved.is_empty() {
            unresolved.sort_unstable();
            unresolved.dedup();
            entry.problems.push((
                DiagnosticKind::UnresolvedString,
                format!(
                    "stack frames refer to string-table indices never defined by process {}: {unresolved:?}",
                    entry.pid
                ),
            ));
        }
        Routed { key: StreamKey { pid: entry.pid, slot }, entry, stacks }
    }
}

fn is_frame(v: &Value) -> bool {
    v.as_object().is_some_and(|o| has(o, "line") && has(o, "name") && has(o, "filename"))
}

/// An object's member: a frame has four, and comparing their keys costs less than hashing the
/// one looked for (the map's hasher is SipHash), as stacks are thousands of frames.
fn member<'a>(o: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a Value> {
    if o.len() <= 8 { o.iter().find(|(k, _)| *k == key).map(|(_, v)| v) } else { o.get(key) }
}

/// A frame's field, null when it has none (as indexing a `Value` gives).
fn field<'a>(frame: &'a Value, key: &str) -> &'a Value {
    frame.as_object().and_then(|o| member(o, key)).unwrap_or(&Value::Null)
}

fn has(o: &serde_json::Map<String, Value>, key: &str) -> bool {
    member(o, key).is_some()
}

/// Resolves a logged stack (a list of `{line, name, filename, loc?}`); `None` when the value is
/// not a list of frames (then it stays in the metadata as logged).
fn resolve_stack(value: &Value, strings: &HashMap<u64, String>, unresolved: &mut Vec<u64>) -> Option<Vec<Frame>> {
    let list = value.as_array()?;
    list.iter().all(is_frame).then(|| resolve_frames(list, strings, unresolved))
}

/// Resolves a list of frames (each checked by [`is_frame`]).
fn resolve_frames(list: &[Value], strings: &HashMap<u64, String>, unresolved: &mut Vec<u64>) -> Vec<Frame> {
    list.iter()
        .map(|f| {
            let file = match field(f, "filename") {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => {
                    let idx = n.as_u64().unwrap_or(u64::MAX);
                    let s = strings.get(&idx).cloned();
                    if s.is_none() {
                        unresolved.push(idx);
                    }
                    s
                }
                _ => None,
            };
            Frame {
                file,
                line: field(f, "line").as_i64().unwrap_or(-1),
                name: match field(f, "name") {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
                loc: field(f, "loc").as_str().map(str::to_string),
            }
        })
        .collect()
}
