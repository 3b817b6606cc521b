//! Compile time by phase: `chromium_event` begin/end pairs (one stack per pid/tid, paired by
//! name), summed per compile id and enclosing phase; and each compile's time in parts (forward,
//! backward, other), which `compile_directory` reports too.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use hashbrown::HashTable;
use indexmap::IndexSet;

use serde::{Deserialize, Serialize, Serializer};

use super::compiles::normalize;
use super::{Compiles, Event, Finish, Observe, Table};
use crate::fast_hash::HashMap;
use crate::parse::display_compile_id;
use crate::schema::CompileId;
use crate::schema::tables::{
    CompileTiming, InstantCount, OuterPhase, Overlap, PhCount, Phase, PhaseTotal, UnmatchedCause, UnmatchedEvent,
    UnmatchedSide,
};
use crate::store::PerCompile;
use crate::store::{CompileIds, CompileList, Store};

/// Microseconds rounded to a nanosecond, so sums print without float noise.
fn us(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A phase node: its compile, and its position among that compile's nodes (creation order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct NodeRef {
    compile: u32,
    local: u32,
}

/// `Node::parent` of a phase outside any other.
const NO_PARENT: NodeRef = NodeRef { compile: u32::MAX, local: u32::MAX };

/// A phase node: one (compile, enclosing node, name). A long log has a hundred thousand, so the
/// indices are u32, and the nodes of compiles no event reached for a while are in the spool
/// ([`PerCompile`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Node {
    /// The enclosing node, or [`NO_PARENT`].
    parent: NodeRef,
    /// Index in `CompileTimeTable::names`.
    name: u32,
    unfinished: u32,
    count: u64,
    total: f64,
    self_time: f64,
    first_ts: f64,
    first_seq: u64,
}

/// Trace event names with a meaning for a compile's time (see `CompileTiming`).
const FRAME: &str = "entire_frame_compile";
const BACKWARD: &str = "entire_backward_compile";
/// The suffix of AOTAutograd's backward compiler phase (`compile_fx.<locals>.bw_compiler`). Inside
/// `entire_backward_compile` it is the lazy backward; inside `entire_frame_compile`, a backward
/// compiled eagerly, within the forward's time.
const BW_COMPILER: &str = "bw_compiler";

/// How many compiles keep an index of their nodes: the latest few used, as a compile's events
/// come together (2 in unit tests, so that their events drop and rebuild it).
const LIVE_COMPILES: usize = if cfg!(test) { 2 } else { 32 };

/// A compile's nodes by (enclosing node, name): their positions in the compile.
type NodeIndex = HashMap<(NodeRef, u32), u32>;

/// An open begin on a thread's stack.
struct Open {
    node: NodeRef,
    name: u32,
    /// The node's compile.
    compile: u32,
    begin: f64,
    seq: u64,
    line: u64,
    /// Time while it was the innermost open phase of its thread.
    self_time: f64,
    /// Since when it has been the innermost one; `None` while a phase is open above it.
    top_since: Option<f64>,
    /// Time while it was the innermost open phase of its name: what it adds to the name's total.
    name_time: f64,
    name_since: Option<f64>,
    /// Time in complete (`X`) events directly inside, which never are on the stack.
    complete_children: f64,
    /// An `entire_frame_compile` ended inside it: it is that frame compile's wrapper (`dynamo`).
    holds_frame: bool,
}

impl Open {
    fn new(node: NodeRef, name: u32, compile: usize, begin: f64, ev: &Event) -> Open {
        Open {
            node,
            name,
            compile: compile as u32,
            begin,
            seq: ev.seq,
            line: ev.line,
            self_time: 0.0,
            top_since: None,
            name_time: 0.0,
            name_since: None,
            complete_children: 0.0,
            holds_frame: false,
        }
    }

    fn stop_top(&mut self, now: f64) {
        if let Some(since) = self.top_since.take() {
            self.self_time += now - since;
        }
    }

    fn stop_name(&mut self, now: f64) {
        if let Some(since) = self.name_since.take() {
            self.name_time += now - since;
        }
    }
}

/// One (pid, tid)'s open phases. The time between two of its begins and ends (by their `ts`)
/// goes to the innermost open phase (self time) and, per name, to the innermost open phase of
/// that name (the name's total): nested phases are not counted twice, however the events
/// interleave. `ts` may go back (a log that replays a segment), so each phase's self time is
/// kept within [0, its duration] when it ends, and within what it adds to its name's total.
struct Thread {
    /// `pid` and `tid` as raw JSON text.
    key: (String, String),
    /// `ts` of the thread's last begin or end.
    clock: f64,
    open: Vec<Open>,
}

impl Thread {
    fn advance(&mut self, ts: f64) {
        self.clock = ts;
    }

    fn push(&mut self, mut open: Open) {
        let now = self.clock;
        if let Some(top) = self.open.last_mut() {
            top.stop_top(now);
        }
        if let Some(same) = self.open.iter_mut().rev().find(|o| o.name == open.name) {
            same.stop_name(now);
        }
        open.top_since = Some(now);
        open.name_since = Some(now);
        self.open.push(open);
    }

    /// Takes the open phase at `at` off the stack, its time settled; the phases below take back
    /// the time it held.
    fn remove(&mut self, at: usize) -> Open {
        let now = self.clock;
        let mut o = self.open.remove(at);
        let held_name = o.name_since.is_some();
        o.stop_top(now);
        o.stop_name(now);
        if at == self.open.len() {
            if let Some(top) = self.open.last_mut() {
                top.top_since = Some(now);
            }
        }
        if held_name {
            if let Some(same) = self.open[..at].iter_mut().rev().find(|b| b.name == o.name) {
                same.name_since = Some(now);
            }
        }
        o
    }
}

/// A begin or end that found no partner.
struct Unmatched {
    side: UnmatchedSide,
    cause: UnmatchedCause,
    name: String,
    compile: Option<CompileId>,
    seq: u64,
    line: u64,
    ts: f64,
}

/// One compile's span and parts. A long log holds one per compile, so what few compiles have
/// (instants, `counted_in`) is kept in the table's maps instead.
#[derive(Default, Clone, Copy, Serialize, Deserialize)]
struct CompileState {
    /// `Start`, and the parts: `Forward`, summed `entire_frame_compile` that ended under this
    /// compile id, `Backward`, `Other`, and `BackwardInForward` (part of `Forward`).
    times: Times,
    end: f64,
}

/// The times of a compile that are null until set.
#[derive(Debug, Clone, Copy)]
enum Time {
    Start,
    Forward,
    Backward,
    Other,
    /// The backward graphs compiled inside the frame compile (part of `Forward`).
    BackwardInForward,
}

/// The [`Time`]s of a compile, a bit each saying which are set: 48 bytes, where five
/// `Option<f64>` take 80.
#[derive(Default, Clone, Copy, Serialize, Deserialize)]
struct Times {
    values: [f64; 5],
    set: u8,
}

impl Times {
    fn get(&self, t: Time) -> Option<f64> {
        (self.set & (1 << t as u8) != 0).then_some(self.values[t as usize])
    }

    fn put(&mut self, t: Time, value: f64) {
        self.values[t as usize] = value;
        self.set |= 1 << t as u8;
    }

    /// Adds to a time that is null until something is added.
    fn add(&mut self, t: Time, dur: f64) {
        self.put(t, self.get(t).unwrap_or(0.0) + dur);
    }

    /// The parts, as reported (rounded).
    fn parts(&self) -> CompileParts {
        CompileParts {
            forward_us: self.get(Time::Forward).map(us),
            backward_us: self.get(Time::Backward).map(us),
            other_us: self.get(Time::Other).map(us),
            backward_in_forward_us: self.get(Time::BackwardInForward).map(us),
        }
    }
}

/// One compile's time in parts (µs), as both `compile_time` and `compile_directory` report it
/// (see `CompileTiming` in the format crate).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompileParts {
    pub forward_us: Option<f64>,
    pub backward_us: Option<f64>,
    pub other_us: Option<f64>,
    /// The backward graphs AOTAutograd compiled inside the frame compile (outermost
    /// `*bw_compiler` phases within `entire_frame_compile`): part of `forward_us`, not added.
    pub backward_in_forward_us: Option<f64>,
}

impl CompileParts {
    /// The compile's time: forward + backward, as torch's `calculate_time_spent` makes its
    /// `total_wall_time` (`other` is not compile work, or not this compile's: see the schema);
    /// `None` when both are.
    pub fn total_us(&self) -> Option<f64> {
        let parts = [self.forward_us, self.backward_us];
        parts.iter().any(Option::is_some).then(|| us(parts.iter().flatten().sum()))
    }
}

/// Each compile's parts as its trace events time them, handed to the tables that report a
/// compile's time (`compile_time`, `compile_directory`) so that they report the same.
#[derive(Default)]
pub struct CompileClock {
    /// The table's compile ids and their index, shared with the table once it has observed
    /// everything (a copy would cost 26 bytes a compile while the tables finish).
    compiles: Arc<CompileIndex>,
    /// Each compile's times, by its index.
    traced: Vec<Times>,
}

/// Compile ids, each once, and the index of each: a table of indexes hashed by the id they point
/// to (a map would hold every id a second time).
#[derive(Default, Clone)]
struct CompileIndex {
    ids: CompileIds,
    index: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl CompileIndex {
    fn get(&self, id: &Option<CompileId>) -> Option<usize> {
        let ids = &self.ids;
        self.index.find(self.hasher.hash_one(id), |&i| ids.get(i as usize) == *id).map(|&i| i as usize)
    }

    /// The index of `id`, and whether it is new.
    fn insert(&mut self, id: Option<CompileId>) -> (usize, bool) {
        if let Some(i) = self.get(&id) {
            return (i, false);
        }
        let i = self.ids.push(id);
        let (ids, hasher) = (&self.ids, &self.hasher);
        self.index.insert_unique(hasher.hash_one(id), i as u32, |&i| hasher.hash_one(ids.get(i as usize)));
        (i, true)
    }

    /// The id at index `i`.
    fn id(&self, i: usize) -> Option<CompileId> {
        self.ids.get(i)
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}

impl CompileClock {
    /// A compile's parts: the forward from its `compilation_metrics` when logged (torch's own
    /// number, which tlparse shows), else from its trace events; the rest from its trace events.
    pub fn parts(&self, compiles: &Compiles, id: Option<&CompileId>) -> CompileParts {
        let at = self.compiles.get(&id.map(normalize));
        let traced = at.map_or_else(CompileParts::default, |at| self.traced[at].parts());
        let logged = id.and_then(|id| compiles.metrics(&compiles.get(id)?)?.frame_compile_us());
        CompileParts { forward_us: logged.map(us).or(traced.forward_us), ..traced }
    }
}

/// Per phase name over the stream.
#[derive(Default, Clone, Copy)]
struct NameTotal {
    count: u64,
    /// Leaving out occurrences nested in one of the same name.
    total: f64,
    self_time: f64,
}

/// [`crate::schema::tables::CompileTime`], each compile's phases made from the nodes as it is
/// serialized (as a whole, they would take more memory than the nodes).
#[derive(Serialize)]
pub struct PackedCompileTime<'a> {
    compiles: CompileTimings<'a>,
    phases: Vec<PhaseTotal>,
    total_us: f64,
    unmatched: Vec<UnmatchedEvent>,
    overlaps: Vec<Overlap>,
    events: u64,
    other_events: Vec<PhCount>,
}

/// The finished table's nodes, serialized as the list of [`CompileTiming`].
struct CompileTimings<'a> {
    table: CompileTimeTable,
    /// What gives each compile's time in parts, read as each is serialized.
    ctx: &'a Finish<'a>,
}

impl CompileTimings<'_> {
    fn timing(&self, c: usize) -> CompileTiming {
        let t = &self.table;
        let display = |c: u32| t.compiles.id(c as usize).as_ref().map(display_compile_id);
        let s = *t.states.lock().expect("not poisoned").get(c);
        let start = s.times.get(Time::Start);
        let phases = t
            .nodes_of(c)
            .iter()
            .map(|n| {
                let parent = (n.parent != NO_PARENT).then_some(n.parent);
                Phase {
                    name: t.names[n.name as usize].clone(),
                    parent: parent.filter(|p| p.compile == c as u32).map(|p| p.local),
                    outer: parent
                        .filter(|p| p.compile != c as u32)
                        .map(|p| OuterPhase { compile_id: display(p.compile), phase: p.local }),
                    count: n.count,
                    unfinished: n.unfinished.into(),
                    total_us: us(n.total),
                    self_us: us(n.self_time),
                    offset_us: us(n.first_ts - start.unwrap_or(n.first_ts)),
                    first_seq: n.first_seq,
                }
            })
            .collect();
        let parts = self.ctx.clock.parts(self.ctx.compiles, t.compiles.id(c).as_ref());
        let start = start.unwrap_or(0.0);
        CompileTiming {
            compile_id: display(c as u32),
            start_us: start,
            span_us: us(s.end - start),
            forward_us: parts.forward_us,
            backward_us: parts.backward_us,
            backward_in_forward_us: parts.backward_in_forward_us,
            total_us: parts.total_us().unwrap_or(0.0),
            other_us: parts.other_us,
            counted_in: t.counted_in.get(&(c as u32)).copied().and_then(display),
            phases,
            instants: (t.instants.lock().expect("not poisoned").get(c as u32)).map_or_else(Vec::new, |instants| {
                instants
                    .iter()
                    .map(|&(name, count, seq)| InstantCount {
                        name: t.instant_names[name as usize].to_string(),
                        count,
                        first_seq: seq,
                    })
                    .collect()
            }),
        }
    }
}

impl Serialize for CompileTimings<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((0..self.table.compiles.len()).map(|c| self.timing(c)))
    }
}

/// Phases of one name that outlived an enclosing phase of another: (name, outlived) ids, count,
/// and the first one's begin seq and line.
struct OverlapCount {
    names: (u32, u32),
    count: u64,
    first: (u64, u64),
}

#[derive(Default)]
pub struct CompileTimeTable {
    /// Shared with the clock once the table has observed everything.
    compiles: Arc<CompileIndex>,
    /// Each compile's state, by its index: those long past in the spool (locked only to be read
    /// as the table is serialized, which lends it).
    states: Mutex<CompileList<CompileState>>,
    /// Each instant's name (in `instant_names`), count and first `seq`, by compile (a long log's
    /// compiles most have a few: those long past in the spool; locked like `nodes`).
    instants: Mutex<PerCompile<Vec<(u32, u64, u64)>, 4>>,
    /// The compile whose `Forward` counts a compile's `entire_frame_compile`, when another (rare).
    counted_in: HashMap<u32, u32>,
    /// Phase names, interned: events repeat a few dozen names many thousand times.
    names: Vec<String>,
    name_ids: HashMap<String, u32>,
    name_totals: Vec<NameTotal>,
    /// Instant event names, interned: a copy of each in every compile of a long log added up to
    /// megabytes.
    instant_names: IndexSet<Box<str>>,
    /// Each compile's nodes, by compile index; those long past in the spool (locked only to be
    /// read as the table is serialized).
    nodes: Mutex<PerCompile<Vec<Node>>>,
    /// The compiles whose nodes are indexed, least recently used first.
    live: Vec<u32>,
    /// The index of each compile in `live`.
    node_index: HashMap<u32, NodeIndex>,
    /// One per (pid, tid), in order of first appearance (there are few).
    threads: Vec<Thread>,
    total: f64,
    unmatched: Vec<Unmatched>,
    overlaps: Vec<OverlapCount>,
    events: u64,
    other: BTreeMap<Option<String>, u64>,
}

impl CompileTimeTable {
    /// Each compile's parts as the trace events time them, for the tables that report them.
    pub fn clock(&mut self) -> CompileClock {
        let states = self.states();
        let traced = (0..states.len()).map(|c| states.get(c).times).collect();
        CompileClock { compiles: Arc::clone(&self.compiles), traced }
    }

    /// The compiles' states, while the table observes (no lock is taken: it is not lent yet).
    fn states(&mut self) -> &mut CompileList<CompileState> {
        self.states.get_mut().expect("not poisoned")
    }

    fn compile(&mut self, id: Option<CompileId>) -> usize {
        // Not shared while the table observes: the clock is made after.
        let (index, new) = Arc::make_mut(&mut self.compiles).insert(id);
        if new {
            self.states().push(CompileState::default());
        }
        index
    }

    /// A compile's nodes, to change (read back if they were spooled), indexed; the least recently
    /// used compile's index is dropped if too many are kept.
    fn live_nodes(&mut self, compile: u32) -> &mut Vec<Node> {
        let nodes = self.nodes.get_mut().expect("not poisoned");
        match self.live.iter().position(|&c| c == compile) {
            Some(at) => {
                self.live.remove(at);
            }
            None => {
                if self.live.len() >= LIVE_COMPILES {
                    let cold = self.live.remove(0);
                    self.node_index.remove(&cold);
                }
                let index = nodes.entry(compile).iter().enumerate();
                let index = index.map(|(local, n)| ((n.parent, n.name), local as u32)).collect();
                self.node_index.insert(compile, index);
            }
        }
        self.live.push(compile);
        nodes.entry(compile)
    }

    /// A node, to change.
    fn node_mut(&mut self, node: NodeRef) -> &mut Node {
        &mut self.live_nodes(node.compile)[node.local as usize]
    }

    /// A compile's nodes, to read.
    fn nodes_of(&self, compile: usize) -> Vec<Node> {
        let mut nodes = self.nodes.lock().expect("not poisoned");
        nodes.get(compile as u32).cloned().unwrap_or_default()
    }

    fn name_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.name_ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.name_totals.push(NameTotal::default());
        self.name_ids.insert(name.to_string(), id);
        id
    }

    fn thread_index(&mut self, pid: &str, tid: &str) -> usize {
        match self.threads.iter().position(|t| t.key.0 == pid && t.key.1 == tid) {
            Some(i) => i,
            None => {
                let key = (pid.to_string(), tid.to_string());
                self.threads.push(Thread { key, clock: 0.0, open: Vec::new() });
                self.threads.len() - 1
            }
        }
    }

    fn touch(&mut self, compile: usize, start: f64, end: f64) {
        let s = self.states().get_mut(compile);
        s.times.put(Time::Start, s.times.get(Time::Start).map_or(start, |v| v.min(start)));
        s.end = s.end.max(end);
    }

    fn node(&mut self, compile: usize, parent: Option<NodeRef>, name: u32, ts: f64, seq: u64) -> NodeRef {
        let (compile, parent) = (compile as u32, parent.unwrap_or(NO_PARENT));
        self.live_nodes(compile);
        let local = match self.node_index[&compile].get(&(parent, name)) {
            Some(&local) => local,
            None => {
                let nodes = self.live_nodes(compile);
                nodes.push(Node {
                    parent,
                    name,
                    unfinished: 0,
                    count: 0,
                    total: 0.0,
                    self_time: 0.0,
                    first_ts: ts,
                    first_seq: seq,
                });
                let local = (nodes.len() - 1) as u32;
                self.node_index.get_mut(&compile).expect("indexed above").insert((parent, name), local);
                local
            }
        };
        NodeRef { compile, local }
    }

    /// Books a begin that was never ended.
    fn unfinished(&mut self, open: Open, cause: UnmatchedCause) {
        let n = self.node_mut(open.node);
        n.unfinished += 1;
        let name = n.name;
        let compile = self.compiles.id(open.node.compile as usize);
        let name = self.names[name as usize].clone();
        let (seq, line, ts) = (open.seq, open.line, open.begin);
        self.unmatched.push(Unmatched { side: UnmatchedSide::Begin, cause, name, compile, seq, line, ts });
    }

    /// Counts a phase (its name, begin seq and line) that began inside `outlived` and is still
    /// open after it ended.
    fn overlap(&mut self, (name, seq, line): (u32, u64, u64), outlived: u32) {
        let names = (name, outlived);
        match self.overlaps.iter_mut().find(|o| o.names == names) {
            Some(o) => {
                o.count += 1;
                o.first = o.first.min((seq, line));
            }
            None => self.overlaps.push(OverlapCount { names, count: 1, first: (seq, line) }),
        }
    }

    /// The phases still open above a phase that just ended at `at` of thread `ti`: when it was
    /// the outermost one, those of its own compile are given up (their end was lost: left open,
    /// they would swallow the rest of the log), their self time going back to it, as they are
    /// not timed; the others overlap it and stay open.
    fn settle_above(&mut self, ti: usize, at: usize, ended: &mut Open) {
        for i in (at..self.threads[ti].open.len()).rev() {
            let o = &self.threads[ti].open[i];
            if at == 0 && o.compile == ended.compile {
                let o = self.threads[ti].remove(i);
                ended.self_time += o.self_time;
                self.unfinished(o, UnmatchedCause::Abandoned);
            } else {
                let phase = (o.name, o.seq, o.line);
                self.overlap(phase, ended.name);
            }
        }
    }

    /// An `entire_frame_compile` of `begun` (a compile index) ended under `ended` on thread `ti`:
    /// its time is `ended`'s forward, and the outermost phase it ran in, if it was not the
    /// outermost itself, is its wrapper.
    fn frame_ended(&mut self, ti: usize, begun: usize, ended: usize, dur: f64, outermost: bool) {
        self.states().get_mut(ended).times.add(Time::Forward, dur);
        if begun != ended {
            self.counted_in.insert(begun as u32, ended as u32);
        }
        if let Some(bottom) = self.threads[ti].open.first_mut().filter(|_| !outermost) {
            bottom.holds_frame = true;
        }
    }

    /// Books a `*bw_compiler` phase that ran inside an `entire_frame_compile` (among the `below`
    /// phases still open on thread `ti`) and inside no other backward compile, as its compile's
    /// backward compiled inside the forward.
    fn backward_in_frame(&mut self, ti: usize, below: usize, ended: &Open, dur: f64) {
        if !self.names[ended.name as usize].ends_with(BW_COMPILER) {
            return;
        }
        let names = &self.names;
        let outer = &self.threads[ti].open[..below];
        let in_frame = outer.iter().any(|o| names[o.name as usize] == FRAME);
        let nested =
            outer.iter().any(|o| names[o.name as usize].ends_with(BW_COMPILER) || names[o.name as usize] == BACKWARD);
        if in_frame && !nested {
            self.states().get_mut(ended.compile as usize).times.add(Time::BackwardInForward, dur);
        }
    }

    /// Books the time of an outermost phase to its compile's part.
    fn outermost(&mut self, compile: u32, name: u32, holds_frame: bool, dur: f64) {
        self.total += dur;
        // The field, not `states()`: `names` is read while `times` is held.
        let times = &mut self.states.get_mut().expect("not poisoned").get_mut(compile as usize).times;
        match self.names[name as usize].as_str() {
            _ if holds_frame => {} // the frame compile inside is the forward
            FRAME => {}
            BACKWARD => times.add(Time::Backward, dur),
            _ => times.add(Time::Other, dur),
        }
    }

    /// Books a finished occurrence: its node, its name's totals, and an outermost one's compile.
    fn close(&mut self, open: Open, dur: f64, outermost: bool) {
        let self_time = (open.self_time - open.complete_children).clamp(0.0, dur);
        let n = self.node_mut(open.node);
        n.count += 1;
        n.total += dur;
        n.self_time += self_time;
        let name_time = open.name_time.max(0.0);
        let t = &mut self.name_totals[open.name as usize];
        t.count += 1;
        t.total += name_time;
        t.self_time += self_time.min(name_time);
        if outermost {
            self.outermost(open.compile, open.name, open.holds_frame, dur);
        }
    }

    fn begin(&mut self, ev: &Event, ti: usize, name: &str, ts: f64, id: Option<CompileId>, top: Option<NodeRef>) {
        let c = self.compile(id);
        self.touch(c, ts, ts);
        let name = self.name_id(name);
        let node = self.node(c, top, name, ts, ev.seq);
        let thread = &mut self.threads[ti];
        thread.advance(ts);
        thread.push(Open::new(node, name, c, ts, ev));
    }

    fn end(&mut self, ev: &Event, ti: usize, name: &str, ts: f64, id: Option<CompileId>) {
        let name_id = self.name_ids.get(name).copied();
        let thread = &mut self.threads[ti];
        thread.advance(ts);
        let Some(at) = thread.open.iter().rposition(|o| Some(o.name) == name_id) else {
            let (side, cause) = (UnmatchedSide::End, UnmatchedCause::NoBegin);
            let (seq, line, name) = (ev.seq, ev.line, name.to_string());
            self.unmatched.push(Unmatched { side, cause, name, compile: id, seq, line, ts });
            return;
        };
        let mut open = thread.remove(at);
        let dur = (ts - open.begin).max(0.0);
        self.settle_above(ti, at, &mut open);
        self.touch(open.compile as usize, open.begin, ts);
        self.backward_in_frame(ti, at, &open, dur);
        if self.names[open.name as usize] == FRAME {
            let ended = self.compile(id);
            self.frame_ended(ti, open.compile as usize, ended, dur, at == 0);
        }
        self.close(open, dur, at == 0);
    }

    /// A complete (`X`) event: timed from its `dur`, never on the stack.
    fn complete(&mut self, ev: &Event, ti: usize, name: &str, ts: f64, dur: f64, id: Option<CompileId>) {
        let c = self.compile(id);
        self.touch(c, ts, ts + dur);
        let name = self.name_id(name);
        let top = self.threads[ti].open.last().map(|o| o.node);
        let node = self.node(c, top, name, ts, ev.seq);
        let thread = &mut self.threads[ti];
        let outermost = thread.open.is_empty();
        // All its time is its own, and its name's unless one of that name is open around it.
        let mut occurrence = Open::new(node, name, c, ts, ev);
        occurrence.self_time = dur;
        occurrence.name_time = if thread.open.iter().any(|o| o.name == name) { 0.0 } else { dur };
        if let Some(parent) = thread.open.last_mut() {
            parent.complete_children += dur;
        }
        let depth = self.threads[ti].open.len();
        self.backward_in_frame(ti, depth, &occurrence, dur);
        if self.names[name as usize] == FRAME {
            self.frame_ended(ti, c, c, dur, outermost);
        }
        self.close(occurrence, dur, outermost);
    }

    fn instant(&mut self, ev: &Event, name: &str, ts: f64, id: Option<CompileId>) {
        let c = self.compile(id);
        self.touch(c, ts, ts);
        let name = crate::store::index_in(&mut self.instant_names, name);
        let instants = self.instants.get_mut().expect("not poisoned").entry(c as u32);
        match instants.iter_mut().find(|(n, _, _)| *n == name) {
            Some(entry) => entry.1 += 1,
            None => instants.push((name, 1, ev.seq)),
        }
    }
}

impl Table for CompileTimeTable {
    type Format = crate::schema::tables::CompileTime;
    type Output<'a> = PackedCompileTime<'a>;

    fn new(store: &Store) -> Self {
        CompileTimeTable {
            states: Mutex::new(CompileList::new(store)),
            instants: Mutex::new(PerCompile::new(store)),
            nodes: Mutex::new(PerCompile::new(store)),
            ..CompileTimeTable::default()
        }
    }

    fn observe(&mut self, ev: &Event, cx: &mut Observe) {
        let diags = &mut *cx.diags;
        if ev.kind != "chromium_event" {
            return;
        }
        if ev.payload.is_none() {
            return;
        }
        let Some(te) = ev.trace_event() else {
            diags.unusable(Self::NAME, ev, "payload is not a trace-event JSON object");
            return;
        };
        let (Some(name), Some(ts)) = (te.name.as_deref(), te.ts) else {
            diags.unusable(Self::NAME, ev, "trace event has no name or ts");
            return;
        };
        self.events += 1;
        let ti =
            self.thread_index(te.pid.as_deref().map_or("", |r| r.get()), te.tid.as_deref().map_or("", |r| r.get()));
        let top = self.threads[ti].open.last().map(|o| o.node);
        // The envelope's id has the attempt; `args.compile_id` does not. Events with neither
        // belong to the phase they run inside.
        let id = ev
            .compile_id
            .map(normalize)
            .or_else(|| super::trace_event::compile_id(te))
            .or_else(|| top.and_then(|n| self.compiles.id(n.compile as usize)));
        match te.ph.as_deref() {
            Some("B") => self.begin(ev, ti, name, ts, id, top),
            Some("E") => self.end(ev, ti, name, ts, id),
            Some("X") => self.complete(ev, ti, name, ts, te.dur.unwrap_or(0.0).max(0.0), id),
            Some("i" | "I" | "n") => self.instant(ev, name, ts, id),
            other => *self.other.entry(other.map(str::to_string)).or_default() += 1,
        }
    }

    fn finish<'a>(mut self, ctx: &'a Finish) -> Option<(PackedCompileTime<'a>, u64)> {
        if self.events == 0 {
            return None;
        }
        // Begins still open at the end of the log.
        for thread in std::mem::take(&mut self.threads) {
            for o in thread.open {
                self.unfinished(o, UnmatchedCause::OpenAtEnd);
            }
        }
        self.node_index = HashMap::default();
        let phases = self.phase_totals();
        let unmatched = self.unmatched_rows();
        let overlaps = self.overlap_rows();
        let rows = self.compiles.len() as u64;
        let (total_us, events) = (us(self.total), self.events);
        let other_events =
            std::mem::take(&mut self.other).into_iter().map(|(ph, count)| PhCount { ph, count }).collect();
        Some((
            PackedCompileTime {
                compiles: CompileTimings { table: self, ctx },
                phases,
                total_us,
                unmatched,
                overlaps,
                events,
                other_events,
            },
            rows,
        ))
    }
}

impl CompileTimeTable {
    /// Every phase name over the stream, by total time descending, ties by name.
    fn phase_totals(&self) -> Vec<PhaseTotal> {
        // How many compiles have a phase of each name.
        let mut phase_compiles = vec![0u64; self.names.len()];
        let mut counted_for = vec![usize::MAX; self.names.len()];
        for c in 0..self.compiles.len() {
            for n in self.nodes_of(c).iter() {
                let name = n.name as usize;
                if counted_for[name] != c {
                    counted_for[name] = c;
                    phase_compiles[name] += 1;
                }
            }
        }
        let mut phase_totals: Vec<PhaseTotal> = self
            .names
            .iter()
            .zip(&self.name_totals)
            .zip(&phase_compiles)
            .filter(|((_, t), _)| t.count > 0)
            .map(|((name, t), &compiles)| PhaseTotal {
                name: name.clone(),
                count: t.count,
                total_us: us(t.total),
                self_us: us(t.self_time),
                compiles,
            })
            .collect();
        phase_totals.sort_by(|a, b| b.total_us.total_cmp(&a.total_us).then_with(|| a.name.cmp(&b.name)));
        phase_totals
    }

    /// The unpaired events, in log order.
    fn unmatched_rows(&mut self) -> Vec<UnmatchedEvent> {
        let mut unmatched = std::mem::take(&mut self.unmatched);
        unmatched.sort_by_key(|u| u.seq);
        unmatched
            .into_iter()
            .map(|u| UnmatchedEvent {
                side: u.side,
                cause: u.cause,
                name: u.name,
                compile_id: u.compile.as_ref().map(display_compile_id),
                seq: u.seq,
                line: u.line,
                ts_us: u.ts,
            })
            .collect()
    }

    /// The overlaps, in order of first occurrence.
    fn overlap_rows(&mut self) -> Vec<Overlap> {
        let mut overlaps = std::mem::take(&mut self.overlaps);
        overlaps.sort_by_key(|o| o.first);
        let name = |id: u32| self.names[id as usize].clone();
        overlaps
            .into_iter()
            .map(|o| Overlap {
                name: name(o.names.0),
                outlived: name(o.names.1),
                count: o.count,
                first_seq: o.first.0,
                first_line: o.first.1,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::parse::parse_trace_event;
    use crate::schema::tables::CompileTime;
    use crate::schema::{IndexRow, PayloadFormat, PayloadRef, StackTable};

    /// One trace event as a test writes it: `ph`, name, thread, compile id, `ts`, `dur`.
    type Ev = (&'static str, &'static str, u8, Option<u64>, f64, f64);

    /// Runs the table over the events (each its own `chromium_event` entry, its compile id in
    /// `args`) and reads the finished table back as a viewer would.
    fn run(events: &[Ev]) -> CompileTime {
        run_in(events, &Store::default())
    }

    /// [`run`], the table spilling to `store`.
    fn run_in(events: &[Ev], store: &Store) -> CompileTime {
        let mut table = CompileTimeTable::new(store);
        let mut diags = super::super::Diagnostics::default();
        let stacks = StackTable::default();
        for (seq, &(ph, name, tid, frame, ts, dur)) in events.iter().enumerate() {
            let cid = frame.map_or("None".to_string(), |f| format!("{f}/0"));
            let json = format!(
                r#"{{"name": "{name}", "ph": "{ph}", "ts": {ts}, "dur": {dur}, "pid": 0, "tid": {tid}, "args": {{"compile_id": "{cid}"}}}}"#
            );
            let te = parse_trace_event(json.as_bytes()).unwrap();
            let payload = PayloadRef {
                hash: "0".repeat(32),
                size: 0,
                lines: 1,
                format: PayloadFormat::Json,
                md5_mismatch: false,
            };
            let row = IndexRow { payload: Some(payload), ..super::super::test_row(seq as u64, "chromium_event") };
            table.observe(
                &Event::new(&row, row.line, 0, Some(json.as_bytes()), Some(&te), &stacks),
                &mut Observe { diags: &mut diags, record: None },
            );
        }
        let (compiles, clock) = (Compiles::default(), table.clock());
        let ctx = Finish { stacks: &stacks, compiles: &compiles, clock: &clock };
        let (packed, _) = table.finish(&ctx).expect("events were read");
        serde_json::from_value(serde_json::to_value(&packed).unwrap()).unwrap()
    }

    /// What must hold whatever the events: self time within the total, per phase and per name,
    /// and each compile's total the sum of its parts.
    fn check_invariants(t: &CompileTime) -> Result<(), TestCaseError> {
        for c in &t.compiles {
            for p in &c.phases {
                prop_assert!(p.self_us >= 0.0 && p.self_us <= p.total_us, "{:?} {p:?}", c.compile_id);
            }
            let parts = [c.forward_us, c.backward_us].iter().flatten().sum::<f64>();
            prop_assert!((c.total_us - parts).abs() < 1e-3, "{c:?}");
        }
        for p in &t.phases {
            prop_assert!(p.self_us >= 0.0 && p.self_us <= p.total_us, "{p:?}");
        }
        Ok(())
    }

    fn event() -> impl Strategy<Value = (&'static str, &'static str, u8, Option<u64>, f64, f64)> {
        let ph = prop_oneof![3 => Just("B"), 3 => Just("E"), 1 => Just("X")];
        let name = prop_oneof![Just("a"), Just("b"), Just(FRAME), Just(BACKWARD)];
        (ph, name, 0u8..2, proptest::option::of(0u64..2), -20.0..100.0f64, 0.0..50.0f64)
    }

    #[test]
    fn small_ids_read_back_as_pushed() {
        let id = |ca, frame, compile, attempt| {
            Some(CompileId { compiled_autograd_id: ca, frame_id: frame, frame_compile_id: compile, attempt })
        };
        let big = u64::from(u32::MAX);
        let ids = [
            None,
            id(None, None, None, None),
            id(None, Some(0), Some(0), Some(0)),
            id(Some(3), Some(1), Some(2), None),
            id(None, Some(big - 3), Some(0), Some(0)),
            // Too large for a word each: kept whole.
            id(None, Some(big - 2), Some(0), Some(0)),
            id(Some(u64::MAX), None, None, None),
            id(None, Some(7), Some(big), Some(u64::MAX - 1)),
        ];
        let mut index = CompileIndex::default();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(index.insert(*id), (i, true));
        }
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(index.id(i), *id);
            assert_eq!(index.insert(*id), (i, false));
        }
        assert_eq!(index.ids.kept_whole(), 3);
    }

    proptest! {
        /// Any interleaving of begins, ends and complete events on two threads, `ts` sometimes
        /// going back: self time never exceeds the time it is part of.
        #[test]
        fn self_time_never_exceeds_total(steps in proptest::collection::vec(event(), 1..60)) {
            let mut ts = 0.0;
            let events: Vec<Ev> = steps
                .into_iter()
                .map(|(ph, name, tid, frame, dt, dur)| {
                    ts += dt;
                    (ph, name, tid, frame, ts, dur)
                })
                .collect();
            check_invariants(&run(&events))?;
        }

        /// With `ts` in log order and every phase ended (in any order, so phases overlap), each
        /// moment counts in at most one compile: the compiles' totals and other times add up to
        /// no more than the time in outermost phases.
        #[test]
        fn compile_totals_add_up_to_at_most_the_stream_total(steps in proptest::collection::vec(event(), 1..60)) {
            let mut ts = 0.0;
            let mut open: [Vec<(&'static str, Option<u64>)>; 2] = [Vec::new(), Vec::new()];
            let mut events: Vec<Ev> = Vec::new();
            for (ph, name, tid, frame, dt, dur) in steps {
                ts += dt.abs();
                let stack = &mut open[tid as usize];
                // A frame compile inside another counts in both (as in their metrics): not here.
                if name == FRAME && stack.iter().any(|(n, _)| *n == FRAME) {
                    continue;
                }
                match ph {
                    "B" => stack.push((name, frame)),
                    // An end of one of the thread's open phases, picked by `dur`.
                    "E" if !stack.is_empty() => {
                        let (name, frame) = stack.remove(dur as usize % stack.len());
                        events.push(("E", name, tid, frame, ts, 0.0));
                        continue;
                    }
                    "E" => continue,
                    _ => {}
                }
                events.push((ph, name, tid, frame, ts, dur.min(dt.abs())));
            }
            for (tid, stack) in open.iter_mut().enumerate() {
                while let Some((name, frame)) = stack.pop() {
                    ts += 1.0;
                    events.push(("E", name, tid as u8, frame, ts, 0.0));
                }
            }
            prop_assume!(!events.is_empty());
            let t = run(&events);
            check_invariants(&t)?;
            // Only an outermost phase ending first leaves phases unpaired (given up, then their end).
            prop_assert!(t.unmatched.iter().all(|u| u.cause != UnmatchedCause::OpenAtEnd), "{:?}", t.unmatched);
            let sum: f64 = t.compiles.iter().map(|c| c.total_us + c.other_us.unwrap_or(0.0)).sum();
            // Every part, total and the stream total are rounded to the nanosecond (0.001 µs).
            let rounding = 2e-3 * (t.compiles.len() + 1) as f64;
            prop_assert!(sum <= t.total_us + rounding, "{sum} > {}", t.total_us);
        }

        /// Thirty compiles' events interleaved: the table is the same whether what it holds of
        /// compiles long past (states, 4 a page and 2 pages in memory in tests; frozen nodes)
        /// went to the spool or stayed in memory.
        #[test]
        fn a_spooled_table_is_the_table_in_memory(steps in proptest::collection::vec((event(), 0u64..30), 1..120)) {
            use crate::store::packed_rows::tests::test_store;
            let mut ts = 0.0;
            let events: Vec<Ev> = steps
                .into_iter()
                .map(|((ph, name, tid, _, dt, dur), frame)| {
                    ts += dt.abs();
                    (ph, name, tid, Some(frame), ts, dur)
                })
                .collect();
            let in_memory = serde_json::to_value(run(&events)).unwrap();
            let (store, spool) = test_store(true);
            let spooled = serde_json::to_value(run_in(&events, &store));
            prop_assert_eq!(in_memory, spooled.unwrap());
            prop_assert!(events.len() < 40 || !spool.is_empty(), "a long run spills");
        }
    }

    #[test]
    fn interleaved_phases_pair_by_name_and_split_their_time() {
        // torch 2.15 logs a compile worker's compile_file on the main thread's tid while the main
        // thread waits in async_compile.wait (ranks_shifted rank 0, lines 4656-4716): a, then b
        // inside it, then c inside b; c ends, a ends (b outlives it), b ends.
        let t = run(&[
            ("B", "load", 0, Some(0), 0.0, 0.0),
            ("B", "compile_file", 0, Some(0), 10.0, 0.0),
            ("B", "async_compile.wait", 0, Some(0), 20.0, 0.0),
            ("B", "compile_file", 0, Some(0), 30.0, 0.0),
            ("E", "compile_file", 0, Some(0), 80.0, 0.0),
            ("E", "compile_file", 0, Some(0), 90.0, 0.0),
            ("E", "async_compile.wait", 0, Some(0), 95.0, 0.0),
            ("E", "load", 0, Some(0), 100.0, 0.0),
        ]);
        assert!(t.unmatched.is_empty(), "{:?}", t.unmatched);
        assert_eq!(t.overlaps.len(), 1);
        assert_eq!(
            (t.overlaps[0].name.as_str(), t.overlaps[0].outlived.as_str()),
            ("async_compile.wait", "compile_file")
        );
        let phase = |name: &str, parent: Option<u32>| {
            let p = t.compiles[0].phases.iter().find(|p| p.name == name && p.parent == parent).unwrap();
            (p.total_us, p.self_us)
        };
        // Self time: load 0-10 and 95-100; compile_file 10-20; wait 20-30 and 80-95; the inner
        // compile_file 30-80.
        assert_eq!(phase("load", None), (100.0, 15.0));
        assert_eq!(phase("compile_file", Some(0)), (80.0, 10.0));
        assert_eq!(phase("async_compile.wait", Some(1)), (75.0, 25.0));
        assert_eq!(phase("compile_file", Some(2)), (50.0, 50.0));
        // compile_file was open 10-90: its name's total counts the nested one once.
        let name = t.phases.iter().find(|p| p.name == "compile_file").unwrap();
        assert_eq!((name.count, name.total_us, name.self_us), (2, 80.0, 60.0));
    }

    #[test]
    fn a_compile_is_its_frame_compile_plus_its_backward() {
        // [0/0]'s dynamo wraps its entire_frame_compile; its backward is compiled later, at the
        // first backward call; [1/0]'s autotuning runs at its first run.
        let t = run(&[
            ("B", "dynamo", 0, Some(0), 0.0, 0.0),
            ("B", FRAME, 0, Some(0), 1.0, 0.0),
            ("E", FRAME, 0, Some(0), 9.0, 0.0),
            ("E", "dynamo", 0, Some(0), 10.0, 0.0),
            ("B", BACKWARD, 0, Some(0), 20.0, 0.0),
            ("B", "inductor_compile", 0, Some(0), 21.0, 0.0),
            ("E", "inductor_compile", 0, Some(0), 24.0, 0.0),
            ("E", BACKWARD, 0, Some(0), 25.0, 0.0),
            ("X", "benchmark_all_configs", 0, Some(1), 30.0, 2.0),
        ]);
        let c = |i: usize| {
            let c = &t.compiles[i];
            (c.forward_us, c.backward_us, c.other_us, c.total_us)
        };
        assert_eq!(c(0), (Some(8.0), Some(5.0), None, 13.0));
        assert_eq!(c(1), (None, None, Some(2.0), 0.0));
        assert_eq!(t.total_us, 10.0 + 5.0 + 2.0);
    }
}
