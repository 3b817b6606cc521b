//! `compile_ids`: which streams compiled which compile ids.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::StreamGroup;
use crate::schema::CompileId;
use crate::schema::tables::CompileStatus;

/// `tables/cross_rank/compile_ids.json.zst`: every compile id of any stream and the streams that
/// have it, aligned by compile id (never by file order), and the groups of streams that compiled
/// exactly the same set. Ranks that compiled different graphs are the usual cause of
/// collective hangs and timeouts. `rows` counts `compile_ids`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompileIds {
    /// True when the streams did not all compile the same set of compile ids.
    pub diverges: bool,
    /// Groups of streams with identical compile-id sets, the group of the first stream first.
    pub groups: Vec<CompileIdGroup>,
    /// One row per compile id seen in any stream, in compile-id order.
    pub compile_ids: Vec<CompileIdPresence>,
}

/// Streams that compiled the same compile ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompileIdGroup {
    /// The streams.
    #[serde(flatten)]
    pub group: StreamGroup,
    /// Their compile ids, displayed (`[0/1]`), in compile-id order.
    pub compile_ids: Vec<String>,
}

/// One compile id across the streams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompileIdPresence {
    /// The compile id as displayed: `[0/1]`.
    pub compile_id: String,
    /// Its parts.
    pub cid: CompileId,
    /// Streams that have it, with its status there, in `members` order.
    pub present: Vec<StreamStatus>,
    /// Streams that do not have it, in `members` order.
    pub missing: Vec<String>,
    /// True when the streams that have it disagree on its status.
    pub status_differs: bool,
}

/// A compile id's status in one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamStatus {
    /// The stream id.
    pub stream: String,
    /// The compile's status there (as in its `compile_directory`).
    pub status: CompileStatus,
}
