//! The bundle's types: every file `tlparse-build` writes is one of these, serialized with serde and
//! described by a JSON Schema generated with schemars (the `///` comments become descriptions).
//!
//! Table types are listed, with their names, in [`crate::registry`].

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod cross_rank;
pub mod tables;

/// The bundle format's name, written in every manifest.
pub const FORMAT_NAME: &str = "tlparse-bundle";
/// The format version this code writes, `"MAJOR.MINOR"` (docs/format.md, Versioning): an
/// additive change (a new optional field, table or enum value a reader may pass over) bumps the
/// minor; a change an older reader would misread bumps the major. Format 1.0 was the first
/// released format; 2.0 stores tables in parts.
pub const FORMAT_VERSION: &str = "2.0";
/// The major of [`FORMAT_VERSION`]: the version of the reader this code is (it reads every bundle
/// whose `min_reader_version` is at most this, ignoring fields it does not know) and the `N` of
/// the repository's `schema/vN/`.
pub const FORMAT_MAJOR: u32 = 2;
/// The oldest reader version that can read what this code writes: the major, since a minor
/// version only adds what an older reader of the same major may pass over.
pub const MIN_READER_VERSION: u32 = FORMAT_MAJOR;

/// `manifest.json`: the entry point of a bundle. A viewer reads it first and learns from it what
/// else exists and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Manifest {
    /// Always `"tlparse-bundle"`.
    pub format: String,
    /// The format version of this bundle, `"MAJOR.MINOR"` (e.g. `"1.0"`); informative: readers
    /// decide by `min_reader_version`.
    #[schemars(regex(pattern = r"^[0-9]+\.[0-9]+$"))]
    pub format_version: String,
    /// The oldest reader version able to read this bundle: the major of `format_version`. A
    /// reader refuses a bundle whose `min_reader_version` is above the major it implements, and
    /// ignores fields it does not know.
    pub min_reader_version: u32,
    /// The program that wrote the bundle.
    pub generator: Generator,
    /// Every log file that was read, in the order they were processed (rank order for rank logs).
    pub inputs: Vec<Input>,
    /// Files found in an input directory that were not read, grouped by reason (sorted by
    /// reason). Only names that look like logs are listed, so a bundle shared publicly does not
    /// reveal the other files of the directory.
    pub skipped: Vec<Skipped>,
    /// The streams of log entries: one per (input file, process, rank). Usually one per rank.
    pub streams: Vec<Stream>,
    /// What differs between the streams: present when there are two streams or more.
    pub cross_rank: Option<cross_rank::CrossRank>,
    /// Totals over all streams.
    pub counts: Counts,
    /// Summary of the problems found while reading the inputs.
    pub diagnostics: DiagnosticsSummary,
    /// Where payload blobs are stored and how to find one by hash.
    pub blobs: BlobStore,
    /// Every file of the bundle except `manifest.json` itself and the shipped viewer's files,
    /// sorted by path.
    pub files: Vec<FileEntry>,
    /// The files of the viewer shipped in the bundle (`index.html` and files under `viewer/`),
    /// sorted by path; null when the bundle ships none (built with `--no-viewer`). A bundle
    /// holds no other file at those paths, and a server shows a viewer file only when its bytes
    /// still have the size and hash listed here: the viewer runs as a page of the bundle's
    /// origin, so a replaced one could run anything there.
    pub viewer: Option<Vec<ViewerFile>>,
}

/// `manifest.lite.json.zst`: `manifest.json` without what grows with every file of the bundle
/// and only a checker needs: the file lists (`files`, `viewer`) and the inputs' hashes;
/// zstd-compressed compact JSON. Everything else is as in the manifest, field for field. At 1,000 ranks it is about 2% of the manifest's size (the file list alone holds a
/// 64-digit hash for each of about 20 files a stream), so a viewer reads it first and shows its
/// first page without fetching the manifest; `validate` checks that it is exactly the manifest's.
/// Files are written before it and it before the manifest (and it is removed with the old
/// manifest when a bundle is replaced), so a reader that finds it finds every file it names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LiteManifest {
    /// As in the manifest.
    pub format: String,
    /// As in the manifest.
    #[schemars(regex(pattern = r"^[0-9]+\.[0-9]+$"))]
    pub format_version: String,
    /// As in the manifest.
    pub min_reader_version: u32,
    /// As in the manifest.
    pub generator: Generator,
    /// The manifest's `inputs`, each without its `blake3`.
    pub inputs: Vec<LiteInput>,
    /// As in the manifest.
    pub skipped: Vec<Skipped>,
    /// As in the manifest.
    pub streams: Vec<Stream>,
    /// As in the manifest.
    pub cross_rank: Option<cross_rank::CrossRank>,
    /// As in the manifest.
    pub counts: Counts,
    /// As in the manifest.
    pub diagnostics: DiagnosticsSummary,
    /// As in the manifest.
    pub blobs: BlobStore,
}

/// One of the manifest's `inputs`, without its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LiteInput {
    /// As in the manifest.
    pub path: String,
    /// As in the manifest.
    pub size: u64,
    /// As in the manifest.
    pub compression: InputCompression,
    /// As in the manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_from_name: Option<u32>,
    /// As in the manifest.
    pub lines: u64,
    /// As in the manifest.
    pub streams: Vec<String>,
}

impl From<&Manifest> for LiteManifest {
    fn from(m: &Manifest) -> LiteManifest {
        LiteManifest {
            format: m.format.clone(),
            format_version: m.format_version.clone(),
            min_reader_version: m.min_reader_version,
            generator: m.generator.clone(),
            inputs: m
                .inputs
                .iter()
                .map(|i| LiteInput {
                    path: i.path.clone(),
                    size: i.size,
                    compression: i.compression,
                    rank_from_name: i.rank_from_name,
                    lines: i.lines,
                    streams: i.streams.clone(),
                })
                .collect(),
            skipped: m.skipped.clone(),
            streams: m.streams.clone(),
            cross_rank: m.cross_rank.clone(),
            counts: m.counts.clone(),
            diagnostics: m.diagnostics.clone(),
            blobs: m.blobs.clone(),
        }
    }
}

/// Name and version of the program that wrote a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Generator {
    /// Program name, `tlparse-build`.
    pub name: String,
    /// Program version (semver).
    pub version: String,
}

/// One log file that was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Input {
    /// Path of the file relative to the trace given on the command line: its path below the
    /// trace directory (`/`-separated), or its file name when the trace given was a file. No
    /// absolute path or machine-specific prefix is recorded.
    pub path: String,
    /// Size of the file on disk in bytes (compressed size for `.gz` / `.zst` logs).
    pub size: u64,
    /// blake3 of the file's bytes on disk, 64 lowercase hex digits.
    pub blake3: String,
    /// How the file was compressed on disk.
    pub compression: InputCompression,
    /// Rank parsed from a `dedicated_log_torch_trace_rank_N_*` file name, if the name has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_from_name: Option<u32>,
    /// Number of lines in the (decompressed) file.
    pub lines: u64,
    /// Ids of the streams whose entries came from this file.
    pub streams: Vec<String>,
}

/// Compression of an input log on disk, detected from its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputCompression {
    /// Plain text.
    None,
    /// gzip (`.gz`).
    Gzip,
    /// zstd (`.zst`).
    Zstd,
}

/// The files of an input directory that were not read for one reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Skipped {
    /// Why they were not read, e.g. `not a TORCH_TRACE log (no log header in its first 4 MiB)`,
    /// `symlink leading out of the trace directory`, `not a regular file (FIFO, socket or device)`.
    pub reason: String,
    /// How many files (or directory entries) were skipped for this reason.
    pub count: u64,
    /// Those of them whose names look like logs (`.log`, `.txt`, `.gz`, `.zst`, or a name with
    /// `torch_trace` in it), relative to the trace directory, sorted. Other names are counted,
    /// never written.
    pub paths: Vec<String>,
}

/// A stream: the entries one process wrote into one input file for one rank, in log order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Stream {
    /// Stream id, unique in the bundle: `rank{N}` for a rank (with `-{k}` appended when several
    /// streams share a rank), `log{k}` for streams with no rank. Used in file names.
    pub id: String,
    /// The rank: the first `rank` the process's envelopes name, else the one in the file name;
    /// null when neither exists.
    pub rank: Option<u32>,
    /// Process id from the glog prefix.
    pub pid: u64,
    /// Index into `inputs` of the file the entries came from.
    pub input: usize,
    /// Number of log entries (index rows) in the stream.
    pub entries: u64,
    /// Sum of the payload sizes in bytes of the stream's entries.
    pub payload_bytes: u64,
    /// Glog timestamp of the first entry, as logged (`MMDD HH:MM:SS.ffffff`; glog has no year).
    pub first_timestamp: String,
    /// Glog timestamp of the last entry, as logged.
    pub last_timestamp: String,
    /// Number of entries of each kind (`artifact:NAME` for named kinds such as artifacts).
    pub kinds: BTreeMap<String, u64>,
    /// Number of distinct compile ids seen in the stream.
    pub compile_ids: u64,
    /// Path of the stream's event index (zstd-compressed JSONL of `IndexRow`).
    pub index: String,
    /// Path of the stream's interned stack table (`StackTable`).
    pub stacks: String,
    /// The stream's analysis tables that have at least one row, by table name (e.g.
    /// `compile_directory`). Each file is zstd-compressed JSON following
    /// `schema/tables/<name>.schema.json`.
    pub tables: BTreeMap<String, TableRef>,
    /// Path of a Chrome trace-event file (gzip-compressed JSON, `{"traceEvents": [...]}`) of the
    /// stream's `chromium_event` entries, which Perfetto and chrome://tracing open as is. Null when
    /// the stream logged none.
    pub chrome_trace: Option<String>,
}

/// Where one table is: its parts (docs/format.md, Analysis tables).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TableRef {
    /// Paths of the table's parts, in order, at least one: `tables/<stream>/<name>.json.zst` for
    /// a table in one part, `tables/<stream>/<name>.<k>.json.zst` (k from 0) for several. Each
    /// part is a whole document of the table's schema; each of its top-level lists holds a slice
    /// of the table's list (the list is the slices in part order), and its other members are
    /// the same in every part.
    #[schemars(length(min = 1))]
    pub parts: Vec<String>,
    /// Number of rows in the table (its main list; see each table's description).
    pub rows: u64,
}

/// Totals over the whole bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Counts {
    /// Log entries (index rows) over all streams.
    pub entries: u64,
    /// Input lines over all inputs.
    pub lines: u64,
    /// Input bytes over all inputs, as read (decompressed).
    pub input_bytes: u64,
    /// Payload bytes referenced by index rows, duplicates included.
    pub payload_bytes: u64,
    /// Distinct blobs stored.
    pub unique_blobs: u64,
    /// Bytes of the distinct blobs, uncompressed.
    pub unique_blob_bytes: u64,
    /// Bytes of the compressed packs on disk.
    pub packed_bytes: u64,
    /// Bytes not stored again because identical bytes (a payload of any stream, or the raw text
    /// of a diagnostic) were already stored: payload and raw diagnostic bytes minus
    /// `unique_blob_bytes`.
    pub dedup_saved_bytes: u64,
    /// The part of `dedup_saved_bytes` saved across input files (ranks): what storing each
    /// input's distinct payloads separately would cost, minus `unique_blob_bytes`.
    pub cross_input_saved_bytes: u64,
    /// Bytes of the whole bundle but its two manifests and the viewer: every file `files` lists
    /// except `manifest.lite.json.zst` (index, stacks, tables, traces, packs, blob index,
    /// schemas, diagnostics). `manifest.json` cannot count itself, the lite manifest holds this
    /// count, and the viewer's files are listed apart (`viewer`).
    pub bundle_bytes: u64,
}

/// Problems found while reading; details are in the diagnostics file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DiagnosticsSummary {
    /// Total number of diagnostics.
    pub total: u64,
    /// Number of diagnostics of each kind.
    pub by_kind: BTreeMap<String, u64>,
    /// Path of the diagnostics file (JSONL of `Diagnostic`).
    pub path: String,
}

/// The blob store: payloads content-addressed by blake3, stored in zstd packs.
///
/// To read a blob with hash `H`: fetch the index shard named by `index_path` with `{prefix}`
/// replaced by the first `index_prefix_len` hex digits of `H` (`all` when that is 0), look up
/// `H` in it (zstd-compressed JSON) to get a `BlobLocation`, fetch `packs[location.pack].path`, zstd-decompress it, and take
/// `location.size` bytes from `location.offset`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BlobStore {
    /// Hash function of blob ids: `blake3-128`, the first 128 bits of the blake3 hash of the
    /// uncompressed bytes, as 32 lowercase hex digits.
    pub hash: String,
    /// Compression of pack files: `zstd` (one frame per pack, with content size and checksum).
    pub compression: String,
    /// Number of leading hex digits of a hash that name its index shard (0 = one shard `all`).
    /// Every shard exists, even when empty.
    pub index_prefix_len: u32,
    /// Path template of the index shards, with `{prefix}` to be replaced.
    pub index_path: String,
    /// The packs, referenced by their position in this list.
    pub packs: Vec<Pack>,
}

/// One pack file: many blobs concatenated and compressed as a single zstd frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Pack {
    /// Path of the pack, `blobs/packs/<blake3 of the compressed file, 32 hex>.zst`.
    pub path: String,
    /// Size of the pack file in bytes (compressed).
    pub size: u64,
    /// Size of the pack once decompressed.
    pub raw_size: u64,
    /// Number of blobs in the pack.
    pub blobs: u64,
}

/// A file of the bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FileEntry {
    /// Path relative to the bundle root, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// blake3 of the file's bytes, 64 lowercase hex digits.
    pub blake3: String,
    /// Path (relative to the bundle root) of the JSON Schema the file's content follows; for
    /// JSONL files, the schema of one line. Null for binary files such as packs.
    pub schema: Option<String>,
}

/// A file of the shipped viewer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ViewerFile {
    /// Path relative to the bundle root, `/`-separated: `index.html` or `viewer/...`.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// blake3 of the file's bytes, 64 lowercase hex digits.
    pub blake3: String,
}

impl ViewerFile {
    /// The entry for a file with these contents.
    pub fn of(path: &str, bytes: &[u8]) -> ViewerFile {
        ViewerFile {
            path: path.to_string(),
            size: bytes.len() as u64,
            blake3: blake3::hash(bytes).to_hex().to_string(),
        }
    }

    /// How `bytes`, read at this path, differ from what the manifest recorded (`None`: they
    /// match).
    pub fn mismatch(&self, bytes: &[u8]) -> Option<String> {
        if bytes.len() as u64 != self.size {
            return Some(format!("size {} but manifest.json says {}", bytes.len(), self.size));
        }
        if blake3::hash(bytes).to_hex().as_str() != self.blake3 {
            return Some("blake3 does not match manifest.json".to_string());
        }
        None
    }
}

/// One row of a stream's event index (`index/<stream>.jsonl.zst`): one log entry.
///
/// `M` is the type of `meta`: a JSON value when reading; the writer passes raw JSON text through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
#[schemars(rename = "IndexRow")]
pub struct IndexRow<M = serde_json::Value> {
    /// Position of the entry in its stream, from 0. Not stored: it is the row's position in the
    /// index file, which readers number as they read ([`RowNumbering`]).
    #[serde(skip)]
    pub seq: u64,
    /// Line number (from 1) of the entry's header line in its input file. Stored only where the
    /// row before does not imply it (the first row implies line 1; a row implies the line after
    /// its payload: `line + 1 + payload.lines`); readers fill it in ([`RowNumbering`]).
    #[serde(default, skip_serializing_if = "is_implied_line")]
    pub line: u64,
    /// Glog timestamp as logged, `MMDD HH:MM:SS.ffffff` (glog writes no year).
    pub ts: String,
    /// Glog severity letter: `V`, `I`, `W`, `E` or `F`.
    pub level: String,
    /// The source location that logged the entry, `path/file.py:LINE`, as logged.
    pub src: String,
    /// The entry's kind: the envelope's non-structural key, e.g. `dynamo_start`, `artifact`,
    /// `chromium_event`, `str`. Unknown kinds are kept as they are.
    pub kind: String,
    /// The name of a named entry: `artifact`, `graph_dump`, `link`, `dump_file` and
    /// `optimize_ddp_split_child` entries carry one in their metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Compile id as tlparse displays it: `[0/1]`, `[0/1_2]` (attempt 2), `[!0/1/2]` (compiled
    /// autograd id 0); `-` stands for a missing part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compile_id: Option<String>,
    /// The compile id's parts, as logged in the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cid: Option<CompileId>,
    /// The envelope's `rank`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// The kind's metadata, as logged, except that every stack in it (a top-level field holding
    /// a list of frames) is replaced by the integer id of that stack in the stream's stack table.
    pub meta: M,
    /// The top-level `meta` fields that held a stack and now hold its id in the stream's stack
    /// table (e.g. `["stack", "user_stack"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub meta_stacks: Vec<String>,
    /// The metadata's raw JSON text when the bundle does not hold it as JSON: nested deeper than
    /// 100 levels (files holding it nest it deeper, within the 128 levels JSON readers accept) or
    /// holding a number beyond a 64-bit float. `meta` is then null; a `too_deep` or
    /// `out_of_range` diagnostic names the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_text: Option<String>,
    /// Id, in the stream's stack table, of the envelope-level `stack` (logged by entries outside
    /// any compile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<u32>,
    /// Envelope keys that are neither the kind nor structural (e.g. `subgraph_name`), as logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<serde_json::Map<String, serde_json::Value>>,
    /// The entry's payload, if the envelope declared one (`has_payload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<PayloadRef>,
}

/// `line` 0 is how a row in memory says "implied": the writer zeroes an implied line before it
/// serializes the row; a reader fills it back in (no entry is on line 0).
fn is_implied_line(line: &u64) -> bool {
    *line == 0
}

/// Numbers the rows of one index file as they are written or read: the `seq` and `line` a row
/// does not store.
///
/// ```
/// use tlparse_bundle::schema::{IndexRow, RowNumbering};
///
/// let stored = ["{\"line\":4,\"ts\":\"\",\"level\":\"V\",\"src\":\"\",\"kind\":\"str\",\"meta\":{}}",
///               "{\"ts\":\"\",\"level\":\"V\",\"src\":\"\",\"kind\":\"str\",\"meta\":{}}"];
/// let mut numbering = RowNumbering::default();
/// let rows: Vec<IndexRow> = stored.iter().map(|text| {
///     let mut row: IndexRow = serde_json::from_str(text).unwrap();
///     numbering.fill(&mut row);
///     row
/// }).collect();
/// assert_eq!((rows[1].seq, rows[1].line), (1, 5));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RowNumbering {
    seq: u64,
    next_line: u64,
}

impl Default for RowNumbering {
    fn default() -> Self {
        RowNumbering { seq: 0, next_line: 1 }
    }
}

impl RowNumbering {
    /// Reading: gives a row just parsed its `seq` and, unless it stored one, its `line`.
    pub fn fill<M>(&mut self, row: &mut IndexRow<M>) {
        row.seq = self.seq;
        if row.line == 0 {
            row.line = self.next_line;
        }
        self.advance(row);
    }

    /// Writing: whether the row's `line` is implied by the rows before it (and can be left out).
    /// Call [`RowNumbering::advance`] with the row once it is written.
    pub fn implies<M>(&self, row: &IndexRow<M>) -> bool {
        row.line == self.next_line
    }

    /// Reading: moves past a row that could not be read. Its successors keep their `seq`, but
    /// the line it implied is unknown: a successor that stores none gets `line` 0.
    pub fn skip(&mut self) {
        self.seq += 1;
        self.next_line = 0;
    }

    /// Moves past a row, whose `line` is known.
    pub fn advance<M>(&mut self, row: &IndexRow<M>) {
        self.seq += 1;
        let payload_lines = row.payload.as_ref().map_or(0, |p| p.lines);
        self.next_line = match row.line {
            0 => 0,
            line => line.saturating_add(1).saturating_add(payload_lines),
        };
    }
}

/// The parts of a compile id. Null parts were absent in the envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CompileId {
    /// `compiled_autograd_id`: set for compiles inside compiled autograd.
    pub compiled_autograd_id: Option<u64>,
    /// `frame_id`: which Python frame Dynamo compiled.
    pub frame_id: Option<u64>,
    /// `frame_compile_id`: how many times that frame was compiled before (recompiles).
    pub frame_compile_id: Option<u64>,
    /// `attempt`: restarts of the analysis of one compile (after a graph break).
    pub attempt: Option<u64>,
}

/// A reference from an index row to its payload blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PayloadRef {
    /// The blob id: the first 128 bits of the blake3 hash of the payload bytes, as 32 lowercase
    /// hex digits (blake3 is an extendable-output hash; this is its 16-byte output).
    pub hash: String,
    /// Payload size in bytes (the payload lines without their leading tab, joined with `\n`).
    pub size: u64,
    /// Number of payload lines.
    pub lines: u64,
    /// Detected format of the payload.
    pub format: PayloadFormat,
    /// True when the payload's md5 differs from the envelope's `has_payload` (the payload is
    /// kept as read; a diagnostic names the line).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub md5_mismatch: bool,
}

/// What a payload contains, detected from the entry's kind and the payload's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PayloadFormat {
    /// Valid JSON.
    Json,
    /// Python source: FX graphs, generated code, runnable repros.
    Python,
    /// Anything else.
    Text,
}

/// `stacks/<stream>.json`: the stream's stacks, frames interned once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StackTable {
    /// Distinct frames; stacks refer to them by position.
    pub frames: Vec<Frame>,
    /// Distinct stacks, each a list of frame ids, outermost call first (as logged). Index rows
    /// refer to stacks by position.
    pub stacks: Vec<Vec<u32>>,
}

/// One frame of a logged Python stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Frame {
    /// File name, resolved through the process's string table. Null when the log referenced a
    /// string-table index it never defined (a diagnostic names the line).
    pub file: Option<String>,
    /// Line number in the file.
    pub line: i64,
    /// Function name.
    pub name: String,
    /// The source line, when the log has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loc: Option<String>,
}

/// One line of `diagnostics.jsonl`: a problem found in an input. Nothing is dropped: the raw
/// text of unreadable lines is stored as a blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Diagnostic {
    /// What went wrong.
    pub kind: DiagnosticKind,
    /// Path of the input file, as in `inputs[].path` (or, for `unreadable_log`, as in
    /// `skipped[].paths`).
    pub file: String,
    /// First line (from 1) concerned; 0 for a problem with the whole file (`unreadable_log`).
    pub line: u64,
    /// Last line concerned (equal to `line` for a single line).
    pub end_line: u64,
    /// The stream the entry belongs to, when it could be read far enough to know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Human-readable explanation.
    pub message: String,
    /// Blob id of a blob holding the raw bytes of the lines concerned (for lines that could not
    /// be read, or were read with a loss: a header line that is not UTF-8, a line too long).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

/// Kinds of diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    /// Lines that are neither a glog-prefixed header nor a payload line of one.
    BadPrefix,
    /// A header whose envelope is not a JSON object.
    BadJson,
    /// A payload whose md5 does not match the envelope's `has_payload`.
    Md5Mismatch,
    /// A `has_payload` value that is not 32 hex digits.
    BadMd5,
    /// Payload lines with no `has_payload` in their header; they are kept as the payload.
    UndeclaredPayload,
    /// A `str` entry that is not `[string, index]`.
    BadStringTable,
    /// A stack frame whose file refers to a string-table index the process never defined.
    UnresolvedString,
    /// Bytes that are not valid UTF-8 in a header line. They are replaced by U+FFFD in the
    /// index; the line's raw bytes are in `raw`.
    InvalidUtf8,
    /// A log whose file name names another rank than its entries do (the entries win).
    RankMismatch,
    /// An entry an analysis table could not use (metadata or payload of an unexpected shape).
    /// The entry stays in the index; the table is written without it.
    UnusableEntry,
    /// A header or stray line over the line limit (`--max-line-mb`), not parsed; bytes in `raw`.
    /// They are streamed to the blob store, never held in memory (at most 512 MiB stored).
    LineTooLong,
    /// A payload over the line limit: stored, md5-checked, not analysed. It is streamed to the
    /// blob store as it is read (at most 512 MiB stored); the tables do not read it.
    PayloadTooLarge,
    /// The input ended in a read or decompression error; what came before is kept. A truncated
    /// or corrupt `.gz` or `.zst`, or an I/O error; `line` is the last line read.
    TruncatedInput,
    /// A time, duration, size or count not finite or beyond ±2^53 (e.g. 1e308): ignored. Also a
    /// number beyond a 64-bit float (1e400) in metadata, a context value or a trace event, kept
    /// as text as for `too_deep`. Also a `rank` or compile-id part that is not an integer of
    /// its range (-1, 2^32 for a rank, 1.5, 2^64): not used as one, kept as extra context as
    /// logged (as text where a number would round it).
    OutOfRange,
    /// JSON nested deeper than 100 levels, kept as text. Metadata goes to the row's `meta_text`,
    /// a context value becomes a string of its text, a trace event is left out of the Chrome
    /// trace (its blob keeps it).
    TooDeep,
    /// A file that is a trace log of the job but could not be read at all: a rank is missing.
    /// Named `dedicated_log_torch_trace*`, or holding log headers; or any file or directory of
    /// the trace that could not be read (it may have held ranks; a file not named like a log is
    /// named by its directory). `line` is 0, and the file is also counted in `skipped`.
    UnreadableLog,
}

impl DiagnosticKind {
    /// The snake_case name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticKind::BadPrefix => "bad_prefix",
            DiagnosticKind::BadJson => "bad_json",
            DiagnosticKind::Md5Mismatch => "md5_mismatch",
            DiagnosticKind::BadMd5 => "bad_md5",
            DiagnosticKind::UndeclaredPayload => "undeclared_payload",
            DiagnosticKind::BadStringTable => "bad_string_table",
            DiagnosticKind::UnresolvedString => "unresolved_string",
            DiagnosticKind::InvalidUtf8 => "invalid_utf8",
            DiagnosticKind::RankMismatch => "rank_mismatch",
            DiagnosticKind::UnusableEntry => "unusable_entry",
            DiagnosticKind::LineTooLong => "line_too_long",
            DiagnosticKind::PayloadTooLarge => "payload_too_large",
            DiagnosticKind::TruncatedInput => "truncated_input",
            DiagnosticKind::OutOfRange => "out_of_range",
            DiagnosticKind::TooDeep => "too_deep",
            DiagnosticKind::UnreadableLog => "unreadable_log",
        }
    }
}

/// `blobs/index/<prefix>.json.zst` (zstd-compressed JSON): one shard of the blob index, mapping each blob id (32 hex
/// digits) that starts with the shard's prefix to its location.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct BlobIndexShard(pub BTreeMap<String, BlobLocation>);

/// Where a blob is: a byte range of a decompressed pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BlobLocation {
    /// Position of the pack in `manifest.blobs.packs`.
    pub pack: u32,
    /// Offset of the blob in the decompressed pack.
    pub offset: u64,
    /// Size of the blob in bytes.
    pub size: u64,
}

/// The bundle files that have a schema, with the file name of their schema in `schema/v<N>/` and
/// in the bundle's `schema/` directory.
pub fn schemas() -> Vec<(String, schemars::Schema)> {
    let generator = || schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    let mut list = vec![
        ("manifest.schema.json".to_string(), generator().into_root_schema_for::<Manifest>()),
        ("manifest-lite.schema.json".to_string(), generator().into_root_schema_for::<LiteManifest>()),
        ("index-row.schema.json".to_string(), generator().into_root_schema_for::<IndexRow>()),
        ("stack-table.schema.json".to_string(), generator().into_root_schema_for::<StackTable>()),
        ("diagnostic.schema.json".to_string(), generator().into_root_schema_for::<Diagnostic>()),
        ("blob-index-shard.schema.json".to_string(), generator().into_root_schema_for::<BlobIndexShard>()),
    ];
    list.extend(crate::registry::TABLES.iter().map(|t| (t.schema_file(), t.schema(generator()))));
    list
}
