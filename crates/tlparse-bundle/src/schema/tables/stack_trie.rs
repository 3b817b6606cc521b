//! `stack_trie`: the `dynamo_start` stacks as a prefix tree whose leaves are compile ids.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CompileStatus;

/// `tables/<stream>/stack_trie.json.zst`: the user-code stacks that triggered compiles, merged
/// into a prefix tree (tlparse's "Stack trie"), and the envelope-level stacks of entries logged
/// outside any compile (tlparse's "Unknown stacks"). Frames are ids into the stream's stack
/// table (`stacks/<stream>.json`), which holds each frame once. `rows` counts the nodes of both
/// trees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StackTrie {
    /// Every node of the compile trie; `roots` and `children` refer to positions in this list.
    /// A node's position is always greater than its parent's.
    pub nodes: Vec<TrieNode>,
    /// The top-level nodes (outermost frames), in order of first appearance.
    pub roots: Vec<u32>,
    /// The trie of envelope-level stacks (entries logged with a `stack` and no compile id);
    /// its leaves list entry `seq`s instead of compile ids.
    pub unknown_nodes: Vec<TrieNode>,
    /// The top-level nodes of the unknown-stacks trie.
    pub unknown_roots: Vec<u32>,
}

/// One frame in the trie: the path from a root to it is a call stack prefix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrieNode {
    /// Frame id in the stream's stack table (`frames[frame]`: file, line, function, source line).
    pub frame: u32,
    /// Position of the parent node; null for a root.
    pub parent: Option<u32>,
    /// Child nodes, in order of first appearance (so roughly chronological).
    pub children: Vec<u32>,
    /// Compiles whose stack ends at this frame, in log order.
    pub compiles: Vec<TrieCompile>,
    /// For the unknown-stacks trie: `seq`s of the entries whose stack ends here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<u64>,
    /// Number of compiles (or entries) at or below this node.
    pub total: u64,
}

/// A compile id at the end of a stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrieCompile {
    /// The compile id as displayed, `[0/1]`.
    pub compile_id: String,
    /// Its status (the colour tlparse gives it).
    pub status: CompileStatus,
}
