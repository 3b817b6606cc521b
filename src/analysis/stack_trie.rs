//! The stack trie: `dynamo_start` stacks merged into a prefix tree whose leaves are compile ids,
//! and the envelope-level stacks of entries outside any compile.

use super::{Event, Finish, Observe, Table};
use crate::fast_hash::HashMap;
use crate::schema::StackTable;
use crate::schema::tables::{StackTrie, TrieCompile, TrieNode};

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
    type Output<'a> = StackTrie;

    fn observe(&mut self, ev: &Event, _cx: &mut Observe) {
        if let (Some(stack), None) = (ev.stack, ev.compile_id) {
            self.unknown.push((stack, ev.seq));
        }
    }

    fn finish(self, ctx: &Finish) -> Option<(StackTrie, u64)> {
        let mut trie = Trie::default();
        for record in &ctx.compiles.records {
            let Some(stack) = record.start_stack else { continue };
            if let Some(leaf) = trie.insert(user_frames(ctx.stacks, stack)) {
                trie.nodes[leaf as usize]
                    .compiles
                    .push(TrieCompile { compile_id: record.display(), status: record.status() });
            }
        }
        let mut unknown = Trie::default();
        for (stack, seq) in self.unknown {
            if let Some(leaf) = unknown.insert(user_frames(ctx.stacks, stack)) {
                unknown.nodes[leaf as usize].entries.push(seq);
            }
        }
        let rows = (trie.nodes.len() + unknown.nodes.len()) as u64;
        (rows > 0).then(|| {
            let table = StackTrie {
                nodes: trie.nodes,
                roots: trie.roots,
                unknown_nodes: unknown.nodes,
                unknown_roots: unknown.roots,
            };
            (table, rows)
        })
    }
}
