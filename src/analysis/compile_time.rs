//! Compile time by phase: `chromium_event` begin/end pairs (one stack per pid/tid, paired by
//! name), summed per compile id and enclosing phase.

use std::collections::{BTreeMap, HashMap};

use serde::{Serialize, Serializer};

use super::compiles::normalize;
use super::{Diagnostics, Event, Finish, Table};
use crate::parse::display_compile_id;
use crate::schema::CompileId;
use crate::schema::tables::{
    CompileTiming, InstantCount, OuterPhase, PhCount, Phase, PhaseTotal, UnmatchedEvent, UnmatchedSide,
};

/// Microseconds rounded to a nanosecond, so sums print without float noise.
fn us(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// `Node::parent` of a phase outside any other.
const NO_PARENT: u32 = u32::MAX;

/// A phase node: one (compile, enclosing node, name). A long log has a hundred thousand, so the
/// indices are u32.
struct Node {
    compile: u32,
    /// The enclosing node, or [`NO_PARENT`].
    parent: u32,
    /// Index in `CompileTimeTable::names`.
    name: u32,
    unfinished: u32,
    count: u64,
    total: f64,
    self_time: f64,
    first_ts: f64,
    first_seq: u64,
}

/// An open begin on a thread's stack.
struct Open {
    node: usize,
    name: u32,
    begin: f64,
    /// Time in phases nested directly inside.
    children: f64,
    /// A phase of the same name is open below it (its time is already in that one's total).
    same_name_below: bool,
    seq: u64,
    line: u64,
}

#[derive(Default)]
struct CompileState {
    start: Option<f64>,
    end: f64,
    instants: Vec<(String, u64, u64)>,
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
pub struct PackedCompileTime {
    compiles: CompileTimings,
    phases: Vec<PhaseTotal>,
    total_us: f64,
    unmatched: Vec<UnmatchedEvent>,
    events: u64,
    other_events: Vec<PhCount>,
}

/// The finished table's nodes, serialized as the list of [`CompileTiming`].
struct CompileTimings {
    table: CompileTimeTable,
    /// Each compile's nodes in creation order.
    by_compile: Vec<Vec<u32>>,
    /// Each node's position in its compile's list.
    local: Vec<u32>,
    /// Each compile's time in its outermost phases.
    totals: Vec<f64>,
}

impl CompileTimings {
    fn timing(&self, c: usize) -> CompileTiming {
        let t = &self.table;
        let display = |c: u32| t.compiles[c as usize].as_ref().map(display_compile_id);
        let s = &t.states[c];
        let start = s.start.unwrap_or(0.0);
        let phases = self.by_compile[c]
            .iter()
            .map(|&i| {
                let n = &t.nodes[i as usize];
                let parent = t.parent(i as usize).map(|p| (&t.nodes[p], self.local[p]));
                Phase {
                    name: t.names[n.name as usize].clone(),
                    parent: parent.filter(|(p, _)| p.compile == n.compile).map(|(_, local)| local),
                    outer: parent
                        .filter(|(p, _)| p.compile != n.compile)
                        .map(|(p, local)| OuterPhase { compile_id: display(p.compile), phase: local }),
                    count: n.count,
                    unfinished: n.unfinished.into(),
                    total_us: us(n.total),
                    self_us: us(n.self_time),
                    offset_us: us(n.first_ts - s.start.unwrap_or(n.first_ts)),
                    first_seq: n.first_seq,
                }
            })
            .collect();
        CompileTiming {
            compile_id: display(c as u32),
            start_us: start,
            span_us: us(s.end - start),
            total_us: us(self.totals[c]),
            phases,
            instants: s
                .instants
                .iter()
                .map(|(name, count, seq)| InstantCount { name: name.clone(), count: *count, first_seq: *seq })
                .collect(),
        }
    }
}

impl Serialize for CompileTimings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((0..self.by_compile.len()).map(|c| self.timing(c)))
    }
}

#[derive(Default)]
pub struct CompileTimeTable {
    compiles: Vec<Option<CompileId>>,
    compile_index: HashMap<Option<CompileId>, usize>,
    states: Vec<CompileState>,
    /// Phase names, interned: events repeat a few dozen names many thousand times.
    names: Vec<String>,
    name_ids: HashMap<String, u32>,
    name_totals: Vec<NameTotal>,
    nodes: Vec<Node>,
    /// (compile, parent, name) → node.
    node_index: HashMap<(u32, u32, u32), u32>,
    /// One stack per (pid, tid) as raw JSON text, in order of first appearance (there are few).
    stacks: Vec<((String, String), Vec<Open>)>,
    total: f64,
    unmatched: Vec<(UnmatchedSide, String, Option<CompileId>, u64, u64, f64)>,
    events: u64,
    other: BTreeMap<Option<String>, u64>,
}

impl CompileTimeTable {
    fn compile(&mut self, id: Option<CompileId>) -> usize {
        *self.compile_index.entry(id).or_insert_with(|| {
            self.compiles.push(id);
            self.states.push(CompileState::default());
            self.compiles.len() - 1
        })
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

    fn stack_index(&mut self, pid: &str, tid: &str) -> usize {
        match self.stacks.iter().position(|((p, t), _)| p == pid && t == tid) {
            Some(i) => i,
            None => {
                self.stacks.push(((pid.to_string(), tid.to_string()), Vec::new()));
                self.stacks.len() - 1
            }
        }
    }

    fn touch(&mut self, compile: usize, start: f64, end: f64) {
        let s = &mut self.states[compile];
        s.start = Some(s.start.map_or(start, |v| v.min(start)));
        s.end = s.end.max(end);
    }

    fn node(&mut self, compile: usize, parent: Option<usize>, name: u32, ts: f64, seq: u64) -> usize {
        let (compile, parent) = (compile as u32, parent.map_or(NO_PARENT, |p| p as u32));
        let nodes = &mut self.nodes;
        *self.node_index.entry((compile, parent, name)).or_insert_with(|| {
            nodes.push(Node {
                compile,
                parent,
                name,
                unfinished: 0,
                count: 0,
                total: 0.0,
                self_time: 0.0,
                first_ts: ts,
                first_seq: seq,
            });
            (nodes.len() - 1) as u32
        }) as usize
    }

    /// The enclosing node of a node.
    fn parent(&self, node: usize) -> Option<usize> {
        let parent = self.nodes[node].parent;
        (parent != NO_PARENT).then_some(parent as usize)
    }

    /// Books a begin that was never ended.
    fn unfinished(&mut self, open: Open) {
        let n = &mut self.nodes[open.node];
        n.unfinished += 1;
        let id = self.compiles[n.compile as usize];
        let name = self.names[n.name as usize].clone();
        self.unmatched.push((UnmatchedSide::Begin, name, id, open.seq, open.line, open.begin));
    }

    /// Books a finished occurrence of `node`.
    fn close(&mut self, node: usize, dur: f64, children: f64, outermost: bool, same_name_below: bool) {
        let n = &mut self.nodes[node];
        n.count += 1;
        n.total += dur;
        n.self_time += dur - children;
        let t = &mut self.name_totals[n.name as usize];
        t.count += 1;
        if !same_name_below {
            t.total += dur;
        }
        t.self_time += dur - children;
        if outermost {
            self.total += dur;
        }
    }
}

impl Table for CompileTimeTable {
    type Format = crate::schema::tables::CompileTime;
    type Output<'a> = PackedCompileTime;

    fn observe(&mut self, ev: &Event, diags: &mut Diagnostics) {
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
        let si = self.stack_index(te.pid.as_deref().map_or("", |r| r.get()), te.tid.as_deref().map_or("", |r| r.get()));
        let top = self.stacks[si].1.last().map(|o| o.node);
        // The envelope's id has the attempt; `args.compile_id` does not. Events with neither
        // belong to the phase they run inside.
        let id = ev
            .compile_id
            .map(normalize)
            .or_else(|| super::trace_event::compile_id(te))
            .or_else(|| top.and_then(|n| self.compiles[self.nodes[n].compile as usize]));
        match te.ph.as_deref() {
            Some("B") => {
                let c = self.compile(id);
                self.touch(c, ts, ts);
                let name = self.name_id(name);
                let node = self.node(c, top, name, ts, ev.seq);
                let stack = &mut self.stacks[si].1;
                let same_name_below = stack.iter().any(|o| o.name == name);
                stack.push(Open { node, name, begin: ts, children: 0.0, same_name_below, seq: ev.seq, line: ev.line });
            }
            Some("E") => {
                let name_id = self.name_ids.get(name).copied();
                let stack = &mut self.stacks[si].1;
                let Some(at) = stack.iter().rposition(|o| Some(o.name) == name_id) else {
                    self.unmatched.push((UnmatchedSide::End, name.to_string(), id, ev.seq, ev.line, ts));
                    return;
                };
                // Begins above the match were never ended: report them, don't time them.
                let mut popped: Vec<Open> = stack.drain(at..).collect();
                let open = popped.remove(0);
                let outermost = stack.is_empty();
                let dur = (ts - open.begin).max(0.0);
                if let Some(parent) = stack.last_mut() {
                    parent.children += dur;
                }
                for o in popped {
                    self.unfinished(o);
                }
                let compile = self.nodes[open.node].compile as usize;
                self.touch(compile, open.begin, ts);
                self.close(open.node, dur, open.children, outermost, open.same_name_below);
            }
            Some("X") => {
                let c = self.compile(id);
                let dur = te.dur.unwrap_or(0.0).max(0.0);
                self.touch(c, ts, ts + dur);
                let name = self.name_id(name);
                let node = self.node(c, top, name, ts, ev.seq);
                let stack = &mut self.stacks[si].1;
                let outermost = stack.is_empty();
                let same_name_below = stack.iter().any(|o| o.name == name);
                if let Some(parent) = stack.last_mut() {
                    parent.children += dur;
                }
                self.close(node, dur, 0.0, outermost, same_name_below);
            }
            Some("i" | "I" | "n") => {
                let c = self.compile(id);
                self.touch(c, ts, ts);
                let instants = &mut self.states[c].instants;
                match instants.iter_mut().find(|(n, _, _)| n == name) {
                    Some(entry) => entry.1 += 1,
                    None => instants.push((name.to_string(), 1, ev.seq)),
                }
            }
            other => *self.other.entry(other.map(str::to_string)).or_default() += 1,
        }
    }

    fn finish(mut self, _ctx: &Finish) -> Option<(PackedCompileTime, u64)> {
        if self.events == 0 {
            return None;
        }
        // Begins still open at the end of the log.
        for (_, stack) in std::mem::take(&mut self.stacks) {
            for o in stack {
                self.unfinished(o);
            }
        }
        self.unmatched.sort_by_key(|u| u.3);
        self.node_index = HashMap::new();

        // Each compile's nodes in order of first begin (creation order), and each node's
        // position there.
        let mut by_compile: Vec<Vec<u32>> = vec![Vec::new(); self.compiles.len()];
        let mut local = vec![0u32; self.nodes.len()];
        let mut totals = vec![0.0; self.compiles.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            let list = &mut by_compile[n.compile as usize];
            local[i] = list.len() as u32;
            list.push(i as u32);
            if self.parent(i).is_none_or(|p| self.nodes[p].compile != n.compile) {
                totals[n.compile as usize] += n.total;
            }
        }
        // How many compiles have a phase of each name.
        let mut phase_compiles = vec![0u64; self.names.len()];
        let mut counted_for = vec![usize::MAX; self.names.len()];
        for (c, list) in by_compile.iter().enumerate() {
            for &i in list {
                let name = self.nodes[i as usize].name as usize;
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

        let unmatched = std::mem::take(&mut self.unmatched)
            .into_iter()
            .map(|(side, name, c, seq, line, ts)| UnmatchedEvent {
                side,
                name,
                compile_id: c.as_ref().map(display_compile_id),
                seq,
                line,
                ts_us: ts,
            })
            .collect();
        let rows = self.compiles.len() as u64;
        let (total_us, events) = (us(self.total), self.events);
        let other_events =
            std::mem::take(&mut self.other).into_iter().map(|(ph, count)| PhCount { ph, count }).collect();
        Some((
            PackedCompileTime {
                compiles: CompileTimings { table: self, by_compile, local, totals },
                phases: phase_totals,
                total_us,
                unmatched,
                events,
                other_events,
            },
            rows,
        ))
    }
}
