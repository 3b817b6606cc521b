//! `log_volume`: which kinds, artifact names and logging call sites the log's bytes come from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tables/<stream>/log_volume.json.zst`: the stream's entries and bytes grouped three ways (by
/// kind, by artifact name, by logging call site), each list sorted by `log_bytes` descending, ties
/// by `key`. `rows` counts `by_kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LogVolume {
    /// Every entry of the stream.
    pub total: Volume,
    /// By entry kind (`chromium_event`, `artifact`, `inductor_output_code`, ...).
    pub by_kind: Vec<VolumeRow>,
    /// By the `name` of named kinds (`artifact`, `graph_dump`, `link`, `dump_file`,
    /// `optimize_ddp_split_child`); entries of other kinds are not in this list.
    pub by_name: Vec<VolumeRow>,
    /// By the logging call site in the glog prefix, `path/file.py:LINE` (for
    /// `trace_structured_artifact` entries this is the wrapper's own line).
    pub by_source: Vec<VolumeRow>,
}

/// Sizes of a group of entries. Bytes are counted as in the log: header lines without their line
/// ending; payloads as stored (lines joined with `\n`, without the leading tab).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Volume {
    /// Entries.
    pub entries: u64,
    /// Entries that have a payload.
    pub payload_entries: u64,
    /// Bytes of the header lines (glog prefix and JSON envelope).
    pub header_bytes: u64,
    /// Bytes of the payloads.
    pub payload_bytes: u64,
    /// Payload lines.
    pub payload_lines: u64,
    /// Bytes the entries take in the log file with `\n` line endings: each header plus its `\n`,
    /// each payload line plus its leading tab and `\n`. For a log of only readable entries with
    /// `\n` endings, the total is the file's size.
    pub log_bytes: u64,
}

/// One group of entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct VolumeRow {
    /// The kind, the name, or the `file:line` call site.
    pub key: String,
    /// In `by_name`: the kind the name belongs to (the key is `(kind, name)`); null elsewhere.
    pub kind: Option<String>,
    /// Entries.
    pub entries: u64,
    /// Entries that have a payload.
    pub payload_entries: u64,
    /// Bytes of the header lines.
    pub header_bytes: u64,
    /// Bytes of the payloads.
    pub payload_bytes: u64,
    /// Payload lines.
    pub payload_lines: u64,
    /// Bytes in the log file, as in `Volume`.
    pub log_bytes: u64,
}
