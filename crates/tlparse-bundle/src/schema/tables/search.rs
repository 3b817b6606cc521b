//! `search`: the names and texts a viewer's global search looks in, deduplicated.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/search.json.zst`: every distinct searchable name or text of the stream (the
/// compiled functions and their files, artifact names, graph-break reasons, guards, failure and
/// restart reasons) with the compiles it appears in. A viewer loads it on its first search only.
/// The full text of artifacts is not here: search it in the packs, mapping each blob to its
/// compile and name through `compile_directory`. `rows` counts `terms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Search {
    /// Compile ids as displayed (`[0/1]`), in order of first appearance; `terms[].compiles`
    /// refers to them by position (so a term seen in every compile costs a few bytes each).
    pub compiles: Vec<String>,
    /// Distinct (kind, text) pairs, grouped by kind in the order of [`SearchKind`], each group in
    /// order of first appearance.
    pub terms: Vec<SearchTerm>,
}

/// What a search term is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    /// The name of a compiled function (`compile_directory`'s `code.name`).
    Function,
    /// The file of a compiled function (`compile_directory`'s `code.filename`).
    File,
    /// An artifact name (`compile_directory`'s `artifacts[].name`).
    Artifact,
    /// A graph break's short reason (`graph_breaks`' `reason`).
    GraphBreak,
    /// A guard: a C++ guard tree's check, a structured Dynamo guard's code, or a shape guard's
    /// expression (`guards`' `guard_trees[].guards[].code`, `dynamo_guards[].code`,
    /// `shape_guards[].expr`).
    Guard,
    /// A failure: `failure_type: reason` of a failed compile (`failures`).
    Failure,
    /// A restart reason (`failures` rows of kind `restart`).
    Restart,
}

/// One distinct searchable text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SearchTerm {
    /// What the text is, which says where a viewer shows it.
    pub kind: SearchKind,
    /// The text as logged (a guard or reason may be long: it is kept whole, so a search finds
    /// any part of it).
    pub text: String,
    /// Positions in `compiles` of the compiles it appears in, ascending, each once; empty for a
    /// term logged outside any compile.
    pub compiles: Vec<u32>,
}
