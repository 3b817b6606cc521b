//! The stack trie: `dynamo_start` stacks merged into a prefix tree whose leaves are compile ids,
//! and the envelope-level stacks of entries outside any compile.

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::{Compiles, Event, Finish, Observe, Table};
use crate::fast_hash::HashMap;
use crate::parse::display_compile_id;
use crate::schema::StackTable;
use crate::schema::tables::{CompileStatus, TrieCompile, TrieNode};

#[derive(Default)]
pub struct StackTrieTable {
    /// (stack id, seq) of entries with an envelope stack and no compile id.
    unknown: Vec<(u32, u64)>,
}

/// A trie under construction: nodes plus a (parent, frame) → node lookup.
#[derive(Default)]
struct Trie {
    nodes: Vec<TrieNode>,
    roots: Vec<u32>,
    lookup: HashMap<(Option<u32>, u32), u32>,
}

impl Trie {
    /// The node at the end of `frames`, created as needed.
    fn insert(&mut self, frames: &[u32]) -> Option<u32> {
        let mut parent = None;
        for &frame in frames {
            let node = match self.lookup.get(&(parent, frame)) {
                Some(&n) => n,
                None => {
                    let n = self.nodes.len() as u32;
                    self.nodes.push(TrieNode {
                        frame,
                        parent,
                        children: Vec::new(),
                        compiles: Vec::new(),
                        entries: Vec::new(),
                        total: 0,
                    });
                    match parent {
                        Some(p) => self.nodes[p as usize].children.push(n),
                        None => self.roots.push(n),
                    }
                    self.lookup.insert((parent, frame), n);
                    n
                }
            };
            self.nodes[node as usize].total += 1;
            parent = Some(node);
        }
        parent
    }
}

/// A stack's frames without the trailing frames of Dynamo's own `convert_frame.py` (older torch
/// versions log `catch_errors` / `_convert_frame` / `__call__` there), as tlparse drops them.
pub(crate) fn user_frames(stacks: &StackTable, stack: u32) -> &[u32] {
    let Some(frames) = stacks.stacks.get(stack as usize) else { return &[] };
    let mut end = frames.len();
    while end > 0 {
        let file = stacks.frames.get(frames[end - 1] as usize).and_then(|f| f.file.as_deref()).unwrap_or("");
        if !file.ends_with("_dynamo/convert_frame.py") {
            break;
        }
        end -= 1;
    }
    &frames[..end]
}

impl Table for StackTrieTable {
    type Format = crate::schema::tables::StackTrie;
    type Output<'a> = StackTrieView<'a>;

    fn observe(&mut self, ev: &Event, _cx: &mut Observe) {
        if let (Some(stack), None) = (ev.stack, ev.compile_id) {
            self.unknown.push((stack, ev.seq));
        }
    }

    fn finish<'a>(self, ctx: &'a Finish) -> Option<(StackTrieView<'a>, u64)> {
        let mut trie = Trie::default();
        let mut leaves = Vec::new();
        for (index, record) in ctx.compiles.records.iter().enumerate() {
            let Some(stack) = record.start_stack else { continue };
            if let Some(leaf) = trie.insert(user_frames(ctx.stacks, stack)) {
                leaves.push((leaf, index as u32, record.status()));
            }
        }
        // By record within a node, which is log order; in place, where a stable sort would
        // take a buffer of half the leaves.
        leaves.sort_unstable_by_key(|&(leaf, index, _)| (leaf, index));
        let mut unknown = Trie::default();
        for (stack, seq) in self.unknown {
            if let Some(leaf) = unknown.insert(user_frames(ctx.stacks, stack)) {
                unknown.nodes[leaf as usize].entries.push(seq);
            }
        }
        let rows = (trie.nodes.len() + unknown.nodes.len()) as u64;
        (rows > 0).then_some((StackTrieView { compiles: ctx.compiles, trie, leaves, unknown }, rows))
    }
}

/// [`crate::schema::tables::StackTrie`], each node's compiles listed as they are written: a node holds its compiles
/// as record indices until then (one stack can start a million compiles).
pub struct StackTrieView<'a> {
    compiles: &'a Compiles,
    /// The compile trie, its nodes' `compiles` left empty.
    trie: Trie,
    /// (node, record index, status) of every compile at the end of a stack, by node, then in
    /// log order.
    leaves: Vec<(u32, u32, CompileStatus)>,
    unknown: Trie,
}

impl Serialize for StackTrieView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("StackTrie", 4)?;
        s.serialize_field("nodes", &Nodes(self))?;
        s.serialize_field("roots", &self.trie.roots)?;
        s.serialize_field("unknown_nodes", &self.unknown.nodes)?;
        s.serialize_field("unknown_roots", &self.unknown.roots)?;
        s.end()
    }
}

/// The compile trie's nodes, each with its compiles.
struct Nodes<'a>(&'a StackTrieView<'a>);

impl Serialize for Nodes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let view = self.0;
        serializer.collect_seq(view.trie.nodes.iter().enumerate().map(|(n, node)| {
            let from = view.leaves.partition_point(|&(leaf, _, _)| leaf < n as u32);
            let to = from + view.leaves[from..].partition_point(|&(leaf, _, _)| leaf == n as u32);
            NodeView { node, compiles: NodeCompiles(view.compiles, &view.leaves[from..to]) }
        }))
    }
}

/// A compile trie node as [`TrieNode`] serializes, with its compiles.
struct NodeView<'a> {
    node: &'a TrieNode,
    compiles: NodeCompiles<'a>,
}

impl Serialize for NodeView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let n = self.node;
        let mut s = serializer.serialize_struct("TrieNode", 5)?;
        s.serialize_field("frame", &n.frame)?;
        s.serialize_field("parent", &n.parent)?;
        s.serialize_field("children", &n.children)?;
        s.serialize_field("compiles", &self.compiles)?;
        s.serialize_field("total", &n.total)?;
        s.end()
    }
}

/// The compiles at one node.
struct NodeCompiles<'a>(&'a Compiles, &'a [(u32, u32, CompileStatus)]);

impl Serialize for NodeCompiles<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.1.iter().map(|&(_, index, status)| TrieCompile {
            compile_id: display_compile_id(&self.0.records.id(index as usize)),
            status,
        }))
    }
}
