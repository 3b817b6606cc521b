//! The strict reader: opens a bundle through a [`ByteSource`] and reads its manifest, index rows,
//! stacks, tables, traces and blobs back. Every bundle is untrusted: paths are checked to stay
//! inside it, every number taken from it is checked before use, decompression stops at the
//! size the manifest declares and at [`Limits`], and JSON is parsed only when what it would take
//! in memory fits [`Limits::json_memory`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::marker::PhantomData;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ids::{blob_id, hex, is_blob_id};
use crate::paths;
use crate::registry::{Scope, Table};
use crate::schema::{self, BlobIndexShard, BlobLocation, Diagnostic, IndexRow, Manifest, RowNumbering, StackTable};
use crate::source::{BundlePath, ByteSource, Capped, DirSource, SourceError};

/// Why a bundle, or a part of it, could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// The longest message taken from a parser or a schema check: their messages quote the input,
/// which a hostile bundle makes as long as it likes.
pub const MAX_MESSAGE: usize = 400;

pub(crate) fn invalid(path: impl std::fmt::Display, message: impl std::fmt::Display) -> ReadError {
    ReadError::Invalid { path: clip(path, MAX_MESSAGE), message: clip(message, MAX_MESSAGE) }
}

/// `what` displayed, cut after `max` bytes (never formatting the rest).
pub fn clip(what: impl std::fmt::Display, max: usize) -> String {
    struct Bounded(String, usize);
    impl std::fmt::Write for Bounded {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let room = self.1.saturating_sub(self.0.len());
            if s.len() <= room {
                self.0.push_str(s);
                return Ok(());
            }
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            self.0.push_str(&s[..cut]);
            self.0.push_str("...");
            Err(std::fmt::Error)
        }
    }
    let mut out = Bounded(String::new(), max);
    let _cut_short = std::fmt::write(&mut out, format_args!("{what}"));
    out.0
}

/// The most the reader takes from a bundle, whatever its manifest says. A file, a decompressed
/// document or a parse over a limit is an error, never an allocation of that size.
///
/// The defaults keep the heap of [`crate::validate::validate`] under 1 GiB for any bundle. What
/// it holds at once, at most: the compiled schemas (~3 MiB); the typed manifest (about 1.2 times
/// its JSON: 36 MB for a 31 MB manifest of 5,000 streams, so ~40 MiB at [`Limits::manifest`]; the
/// JSON value parsed first, up to [`Limits::json_memory`], is freed before anything else is read);
/// the blob index, 40 bytes a blob ([`Limits::blobs`]: 160 MiB, and
/// as much again while it grows); and one document or line at a time: its bytes
/// ([`Limits::document`], 64 MiB, up to twice that while its buffer grows) and its parsed JSON
/// ([`Limits::json_memory`], 384 MiB). Worst case about 880 MiB. Streams (indexes, diagnostics,
/// packs, traces) are read a line or a block at a time. zstd's own window buffers (at most 2^[`MAX_ZSTD_WINDOW_LOG`] bytes) are allocated
/// by libzstd, outside this count.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// `manifest.json`, as stored (32 MiB: about 7,000 streams, a 4-rank bundle's manifest
    /// holding some 4.6 KB a stream).
    pub manifest: u64,
    /// Any other file, as stored (256 MiB); only [`Bundle::read`] holds one whole.
    pub file: u64,
    /// A JSON document held whole once decompressed: a table, a blob-index shard, a stack
    /// table, a trace read as a value (64 MiB).
    pub document: u64,
    /// One line of an index or of the diagnostics (16 MiB).
    pub line: u64,
    /// Everything decompressed from one file read as a stream, never held whole (an index, the
    /// diagnostics, a trace checked by `validate`): 4 GiB. It bounds time, not memory.
    pub stream: u64,
    /// A decompressed pack (512 MiB): [`Bundle::pack`] holds one; `validate` streams it.
    pub pack: u64,
    /// The most heap a document or a line may take once parsed as a `serde_json::Value`,
    /// estimated before parsing by [`json_memory`] (384 MiB). Real tables take 5 to 20 times
    /// their size; `[0,0,0,...]` takes 72 bytes for every 2.
    pub json_memory: u64,
    /// Blobs in the blob index (4 Mi).
    pub blobs: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            manifest: 32 << 20,
            file: 256 << 20,
            document: 64 << 20,
            line: 16 << 20,
            stream: 4 << 30,
            pack: 512 << 20,
            json_memory: 384 << 20,
            blobs: 4 << 20,
        }
    }
}

/// The largest zstd window the reader accepts (16 MiB). The writer's levels use 4 MiB at most;
/// a frame asking for more is refused rather than allocated.
pub const MAX_ZSTD_WINDOW_LOG: u32 = 24;

/// How deep serde_json nests before refusing (its recursion limit).
pub const MAX_JSON_DEPTH: usize = 128;

/// Bytes of decompressed JSON a streamed read ([`Bundle::json_zst_streamed`]) holds at a time.
const STREAMED_BUFFER: usize = 64 << 10;

/// An upper bound of the heap `bytes` take once parsed as a `serde_json::Value` (this crate
/// builds serde_json with `preserve_order`), found by a scan that allocates only a stack of
/// the open containers. Arrays grow by doubling from 4 elements; objects are index maps (an
/// entry vector that grows the same way, and a hash table of indices); strings take at most
/// their bytes, and their parse a scratch buffer as large. Errs when the JSON nests deeper than
/// serde_json parses.
pub fn json_memory(bytes: &[u8]) -> Result<u64, String> {
    const VALUE: u64 = std::mem::size_of::<Value>() as u64;
    const ENTRY: u64 = VALUE + 32; // hash + String key + value
    struct Open {
        object: bool,
        commas: u64,
        nonempty: bool,
    }
    let cost = |open: &Open| {
        let n = if open.nonempty { open.commas + 1 } else { 0 };
        match (n, open.object) {
            (0, _) => 0,
            (n, false) => VALUE * (2 * n).max(4),
            (n, true) => ENTRY * (2 * n).max(4) + 9 * (4 * n).max(8) + 16,
        }
    };
    let mut stack: Vec<Open> = Vec::new();
    let mut total = 2 * bytes.len() as u64;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' | b'\n' | b'\r' | b':' => {}
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.commas += 1;
                }
            }
            b'[' | b'{' => {
                if let Some(top) = stack.last_mut() {
                    top.nonempty = true;
                }
                if stack.len() >= MAX_JSON_DEPTH {
                    return Err(format!("nested more than {MAX_JSON_DEPTH} levels deep"));
                }
                stack.push(Open { object: bytes[i] == b'{', commas: 0, nonempty: false });
            }
            b']' | b'}' => {
                if let Some(closed) = stack.pop() {
                    total = total.saturating_add(cost(&closed));
                }
            }
            b'"' => {
                if let Some(top) = stack.last_mut() {
                    top.nonempty = true;
                }
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {
                if let Some(top) = stack.last_mut() {
                    top.nonempty = true;
                }
            }
        }
        i += 1;
    }
    // Containers left open: serde_json builds them before it finds the end missing.
    Ok(stack.iter().fold(total, |sum, open| sum.saturating_add(cost(open))))
}

/// Parses untrusted JSON as `T`, refusing it before parsing when, as a `Value`, it would take
/// more than `limits.json_memory` (typed values take less) or nest too deep.
pub fn parse_json<T: DeserializeOwned>(path: &str, bytes: &[u8], limits: &Limits) -> Result<T, ReadError> {
    parse_json_unnamed(bytes, limits).map_err(|why| invalid(path, why))
}

/// [`parse_json`], with the reason of a refusal alone: the caller names the place only when
/// there is an error (an index is millions of lines).
fn parse_json_unnamed<T: DeserializeOwned>(bytes: &[u8], limits: &Limits) -> Result<T, String> {
    let needs = json_memory(bytes).map_err(|why| format!("refused: JSON {why}"))?;
    if needs > limits.json_memory {
        return Err(format!(
            "refused: its JSON would take up to {needs} bytes of memory, over the limit of {}",
            limits.json_memory
        ));
    }
    serde_json::from_slice(bytes).map_err(|e| format!("cannot be parsed: {e}"))
}

/// True when `dir` holds a tlparse-build bundle (a manifest naming our format).
pub fn is_bundle(dir: &Path) -> bool {
    let limits = Limits::default();
    let manifest = BundlePath::new(paths::MANIFEST).expect("a plain name");
    DirSource::new(dir)
        .read(&manifest, limits.manifest)
        .ok()
        .and_then(|bytes| parse_json::<Value>(paths::MANIFEST, &bytes, &limits).ok())
        .is_some_and(|v| v["format"] == schema::FORMAT_NAME)
}

/// An open bundle, read through `S`.
pub struct Bundle<S: ByteSource = DirSource> {
    source: S,
    pub limits: Limits,
    pub manifest: Manifest,
    shards: Mutex<HashMap<String, Arc<BlobIndexShard>>>,
    /// The last pack decompressed, as blobs are often read from the same pack in a row.
    pack_cache: Mutex<Option<(u32, Arc<Vec<u8>>)>>,
}

// A bundle can be opened on one thread and read on others (a server, a parallel merge).
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Bundle<DirSource>>();
};

impl Bundle<DirSource> {
    /// Opens the bundle in a local directory.
    pub fn open(root: &Path) -> Result<Bundle<DirSource>, ReadError> {
        Bundle::from_source(DirSource::new(root))
    }

    pub fn root(&self) -> &Path {
        self.source.root()
    }
}

impl<S: ByteSource> Bundle<S> {
    /// Opens a bundle, refusing formats this reader does not know.
    pub fn from_source(source: S) -> Result<Bundle<S>, ReadError> {
        Bundle::with_limits(source, Limits::default())
    }

    pub fn with_limits(source: S, limits: Limits) -> Result<Bundle<S>, ReadError> {
        let value = read_manifest_value(&source, &limits)?;
        Bundle::with_manifest(source, limits, value)
    }

    /// A bundle whose manifest was already read (by [`read_manifest_value`]).
    pub fn with_manifest(source: S, limits: Limits, manifest: Value) -> Result<Bundle<S>, ReadError> {
        let manifest = serde_json::from_value(manifest).map_err(|e| invalid(paths::MANIFEST, e))?;
        Ok(Bundle { source, limits, manifest, shards: Mutex::default(), pack_cache: Mutex::default() })
    }

    pub fn source(&self) -> &S {
        &self.source
    }

    /// The bytes of a bundle file, as stored (at most [`Limits::file`]).
    pub fn read(&self, path: &str) -> Result<Vec<u8>, ReadError> {
        Ok(self.source.read(&BundlePath::new(path)?, self.limits.file)?)
    }

    /// A bundle file as a stream of its bytes as stored (at most [`Limits::file`]).
    pub fn open_file(&self, path: &str) -> Result<Box<dyn Read + Send + '_>, ReadError> {
        Ok(self.source.open(&BundlePath::new(path)?, self.limits.file)?)
    }

    /// A zstd-compressed file as a stream of its decompressed bytes, failing past `limit`.
    pub fn open_zst(&self, path: &str, limit: u64) -> Result<impl Read + '_, ReadError> {
        let mut decoder = zstd::stream::read::Decoder::new(self.open_file(path)?).map_err(|e| invalid(path, e))?;
        decoder.window_log_max(MAX_ZSTD_WINDOW_LOG).map_err(|e| invalid(path, e))?;
        Ok(Capped::new(decoder, limit))
    }

    /// A gzip-compressed file as a stream of its decompressed bytes, failing past `limit`.
    pub fn open_gz(&self, path: &str, limit: u64) -> Result<impl Read + '_, ReadError> {
        Ok(Capped::new(flate2::read::GzDecoder::new(self.open_file(path)?), limit))
    }

    /// A zstd-compressed file, decompressed; at most `limit` bytes.
    pub fn read_zst(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        read_all(path, self.open_zst(path, limit)?, limit)
    }

    /// A gzip-compressed file, decompressed; at most `limit` bytes.
    pub fn read_gz(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        read_all(path, self.open_gz(path, limit)?, limit)
    }

    /// The index rows of a stream, in order, all in memory: see [`Bundle::index_rows_iter`] for
    /// a big bundle.
    pub fn index_rows(&self, stream: &str) -> Result<Vec<IndexRow>, ReadError> {
        self.index_rows_iter(stream)?.collect()
    }

    /// The index rows of a stream, one at a time, each with its `seq` and `line` filled in.
    pub fn index_rows_iter(&self, stream: &str) -> Result<IndexRows<'_>, ReadError> {
        let s = self.stream(stream)?;
        Ok(IndexRows { lines: self.index_lines(s)?, numbering: RowNumbering::default() })
    }

    /// The lines of a stream's index, refused past the `entries` the manifest declares: an
    /// index that inflates far beyond them is stopped there, not read to [`Limits::stream`].
    pub fn index_lines<T: DeserializeOwned>(&self, s: &schema::Stream) -> Result<JsonLines<'_, T>, ReadError> {
        Ok(self.jsonl_zst(&s.index)?.at_most(s.entries))
    }

    /// Each line of a zstd-compressed JSONL file, parsed, one at a time.
    pub fn jsonl_zst<T: DeserializeOwned>(&self, path: &str) -> Result<JsonLines<'_, T>, ReadError> {
        let lines = BufReader::new(self.open_zst(path, self.limits.stream)?);
        Ok(JsonLines::new(path, Box::new(lines), self.limits))
    }

    /// Each line of a plain JSONL file, parsed, one at a time.
    pub fn jsonl<T: DeserializeOwned>(&self, path: &str) -> Result<JsonLines<'_, T>, ReadError> {
        let lines = BufReader::new(self.open_file(path)?);
        Ok(JsonLines::new(path, Box::new(lines), self.limits))
    }

    /// A plain JSON file (at most [`Limits::document`]).
    pub fn json<T: DeserializeOwned>(&self, path: &str) -> Result<T, ReadError> {
        let bytes = self.source.read(&BundlePath::new(path)?, self.limits.document)?;
        parse_json(path, &bytes, &self.limits)
    }

    /// A zstd-compressed JSON file.
    pub fn json_zst<T: DeserializeOwned>(&self, path: &str) -> Result<T, ReadError> {
        parse_json(path, &self.read_zst(path, self.limits.document)?, &self.limits)
    }

    /// The stack table of a stream.
    pub fn stacks(&self, stream: &str) -> Result<StackTable, ReadError> {
        let s = self.stream(stream)?;
        self.json(&s.stacks)
    }

    /// A table of a stream (`None` when the stream has no such table), as the given type, e.g. a
    /// `schema::tables::CompileDirectory` or a `serde_json::Value`: its parts read as the one
    /// document they were cut from. Held whole, so refused past [`Limits::json_memory`]: walk a
    /// bigger one with [`Bundle::table_parts`] or read it through [`Bundle::table_view`].
    pub fn table<T: DeserializeOwned>(&self, stream: &str, name: &str) -> Result<Option<T>, ReadError> {
        let s = self.stream(stream)?;
        s.tables.get(name).map(|t| self.whole_table(t)).transpose()
    }

    /// A table's parts, one at a time, in order, each a whole document of the table's schema
    /// (see [`crate::parts`]): how a reader walks a table of any size holding one part.
    pub fn table_parts<T: DeserializeOwned>(
        &self,
        stream: &str,
        name: &str,
    ) -> Result<Option<impl Iterator<Item = Result<T, ReadError>> + '_>, ReadError> {
        let s = self.stream(stream)?;
        Ok(s.tables.get(name).map(|t| t.parts.iter().map(|part| self.json_zst(part))))
    }

    /// A table of a stream read through a view: parsed as it is decompressed, never held whole,
    /// so memory is only what `T` keeps. A view names the few fields it needs (the others are
    /// skipped unparsed): one that counts rows keeps nothing per row, one that keeps a short
    /// field of each keeps that; read as its full type, a long log's table takes several times
    /// its JSON. `None` when the stream has no such table.
    pub fn table_view<T: DeserializeOwned>(&self, stream: &str, name: &str) -> Result<Option<T>, ReadError> {
        let s = self.stream(stream)?;
        s.tables.get(name).map(|t| self.joined_view(t)).transpose()
    }

    /// A table whole: each part checked to fit [`Limits::json_memory`] together, then parsed as
    /// one document.
    fn whole_table<T: DeserializeOwned>(&self, table: &schema::TableRef) -> Result<T, ReadError> {
        let [part] = &table.parts[..] else {
            let mut need = 0u64;
            for part in &table.parts {
                let bytes = self.read_zst(part, self.limits.document)?;
                need = need.saturating_add(json_memory(&bytes).map_err(|why| invalid(part, why))?);
                if need > self.limits.json_memory {
                    return Err(invalid(
                        part,
                        format!(
                            "refused: the table's parts would take more than the limit of {} bytes of memory read whole; read them one at a time",
                            self.limits.json_memory
                        ),
                    ));
                }
            }
            return self.joined_view(table);
        };
        self.json_zst(part)
    }

    /// A table's parts parsed as the one document they were cut from, as they are decompressed.
    fn joined_view<T: DeserializeOwned>(&self, table: &schema::TableRef) -> Result<T, ReadError> {
        let first = table.parts.first().ok_or_else(|| invalid("manifest.json", "a table with no parts"))?;
        if table.parts.len() == 1 {
            return self.json_zst_streamed(first);
        }
        let open = |k: usize| self.open_zst(&table.parts[k], self.limits.document).map_err(std::io::Error::other);
        let joined = crate::parts::Joined::new(open, table.parts.len())
            .map_err(|e| read_failed(first, e, self.limits.document))?;
        let reader = BufReader::with_capacity(STREAMED_BUFFER, Capped::new(joined, self.limits.stream));
        let mut json = serde_json::Deserializer::from_reader(reader);
        let parsed = T::deserialize(&mut json).and_then(|value| json.end().map(|()| value));
        parsed.map_err(|e| match e.io_error_kind() {
            Some(kind) => read_failed(first, std::io::Error::new(kind, e), self.limits.stream),
            None => invalid(first, format!("its parts cannot be parsed as one table: {e}")),
        })
    }

    /// A zstd-compressed JSON document parsed as it is decompressed (see [`Bundle::table_view`]):
    /// never held whole, so read up to [`Limits::stream`] rather than [`Limits::document`].
    pub fn json_zst_streamed<T: DeserializeOwned>(&self, path: &str) -> Result<T, ReadError> {
        let limit = self.limits.stream;
        let reader = BufReader::with_capacity(STREAMED_BUFFER, self.open_zst(path, limit)?);
        let mut json = serde_json::Deserializer::from_reader(reader);
        let parsed = T::deserialize(&mut json).and_then(|value| json.end().map(|()| value));
        parsed.map_err(|e| match e.io_error_kind() {
            Some(kind) => read_failed(path, std::io::Error::new(kind, e), limit),
            None => invalid(path, format!("cannot be parsed: {e}")),
        })
    }

    /// A stream's table, typed by the registry: `bundle.stream_table::<Failures>("rank0")`.
    pub fn stream_table<T: Table>(&self, stream: &str) -> Result<Option<T>, ReadError> {
        debug_assert_eq!(T::SCOPE, Scope::Stream);
        self.table(stream, T::NAME)
    }

    /// A cross-rank table (`None` when the bundle has one stream, or the table has no rows).
    pub fn cross_rank_table<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ReadError> {
        let table = self.manifest.cross_rank.as_ref().and_then(|c| c.tables.get(name));
        table.map(|t| self.whole_table(t)).transpose()
    }

    /// A cross-rank table's parts, one at a time, in order (see [`Bundle::table_parts`]).
    pub fn cross_rank_table_parts<T: DeserializeOwned>(
        &self,
        name: &str,
    ) -> Result<Option<impl Iterator<Item = Result<T, ReadError>> + '_>, ReadError> {
        let table = self.manifest.cross_rank.as_ref().and_then(|c| c.tables.get(name));
        Ok(table.map(|t| t.parts.iter().map(|part| self.json_zst(part))))
    }

    /// A cross-rank table, typed by the registry: `bundle.cross_rank::<CompileIds>()`.
    pub fn cross_rank<T: Table>(&self) -> Result<Option<T>, ReadError> {
        debug_assert_eq!(T::SCOPE, Scope::CrossRank);
        self.cross_rank_table(T::NAME)
    }

    /// The Chrome trace of the runtime estimates across ranks (`None` for a single stream, or when
    /// no stream has runtime estimates).
    pub fn cross_rank_runtime_estimates_trace(&self) -> Result<Option<Value>, ReadError> {
        match self.manifest.cross_rank.as_ref().and_then(|c| c.runtime_estimates_trace.as_ref()) {
            Some(path) => self.trace(path).map(Some),
            None => Ok(None),
        }
    }

    /// The Chrome trace of a stream (`None` when it logged no chromium events).
    pub fn chrome_trace(&self, stream: &str) -> Result<Option<Value>, ReadError> {
        match &self.stream(stream)?.chrome_trace {
            Some(path) => self.trace(path).map(Some),
            None => Ok(None),
        }
    }

    /// The Chrome trace merging every stream's, one process per cross-rank member (`None` for a
    /// single stream, or when no stream logged chromium events).
    pub fn cross_rank_chrome_trace(&self) -> Result<Option<Value>, ReadError> {
        match self.manifest.cross_rank.as_ref().and_then(|c| c.chrome_trace.as_ref()) {
            Some(path) => self.trace(path).map(Some),
            None => Ok(None),
        }
    }

    fn trace(&self, path: &str) -> Result<Value, ReadError> {
        parse_json(path, &self.read_gz(path, self.limits.document)?, &self.limits)
    }

    /// Checks that a gzip Chrome trace is a JSON object with a `traceEvents` list, streaming it
    /// (nothing of it is kept, so its size bounds only the time taken).
    pub fn check_trace(&self, path: &str) -> Result<(), ReadError> {
        #[derive(serde::Deserialize)]
        struct Trace {
            #[serde(rename = "traceEvents")]
            _events: Vec<serde::de::IgnoredAny>, // zero-sized: never allocates
        }
        let reader = BufReader::new(self.open_gz(path, self.limits.stream)?);
        serde_json::from_reader::<_, Trace>(reader)
            .map(drop)
            .map_err(|e| invalid(path, format!("not a Chrome trace: {e}")))
    }

    /// The diagnostics, in input order, all in memory: see [`Bundle::diagnostics_iter`].
    pub fn diagnostics(&self) -> Result<Vec<Diagnostic>, ReadError> {
        self.diagnostics_iter()?.collect()
    }

    /// The diagnostics, one at a time.
    pub fn diagnostics_iter(&self) -> Result<JsonLines<'_, Diagnostic>, ReadError> {
        Ok(self.jsonl(&self.manifest.diagnostics.path)?.at_most(self.manifest.diagnostics.total))
    }

    fn stream(&self, id: &str) -> Result<&schema::Stream, ReadError> {
        self.manifest
            .streams
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| invalid(paths::MANIFEST, format!("no stream {id:?}")))
    }

    /// The blob-index shard that holds `hash`, loaded once.
    fn shard_for(&self, hash: &str) -> Result<Arc<BlobIndexShard>, ReadError> {
        let prefix_len = self.manifest.blobs.index_prefix_len;
        let shard = paths::shard_name(hash, prefix_len).ok_or_else(|| {
            invalid(paths::MANIFEST, format!("blobs.index_prefix_len {prefix_len} is more than a blob id can name"))
        })?;
        if let Some(loaded) = self.shards.lock().expect("not poisoned").get(shard) {
            return Ok(loaded.clone());
        }
        let path = self.manifest.blobs.index_path.replace("{prefix}", shard);
        let loaded: Arc<BlobIndexShard> = Arc::new(self.json_zst(&path)?);
        self.shards.lock().expect("not poisoned").insert(shard.to_string(), loaded.clone());
        Ok(loaded)
    }

    /// Where a blob is stored; `None` if the bundle has no blob with that hash.
    pub fn locate(&self, hash: &str) -> Result<Option<BlobLocation>, ReadError> {
        if !is_blob_id(hash) {
            return Ok(None);
        }
        Ok(self.shard_for(hash)?.0.get(hash).copied())
    }

    /// A pack's manifest entry, and its declared size checked against [`Limits::pack`].
    fn pack_info(&self, pack: u32) -> Result<&schema::Pack, ReadError> {
        let info = usize::try_from(pack)
            .ok()
            .and_then(|i| self.manifest.blobs.packs.get(i))
            .ok_or_else(|| invalid(paths::MANIFEST, format!("no pack {pack}")))?;
        if info.raw_size > self.limits.pack {
            return Err(invalid(
                &info.path,
                format!(
                    "manifest.json declares {} bytes decompressed, over the limit of {}",
                    info.raw_size, self.limits.pack
                ),
            ));
        }
        Ok(info)
    }

    /// A pack as a stream of its decompressed bytes, which fails past the size the manifest
    /// declares (and [`Limits::pack`]). The caller checks that it gives exactly that size.
    pub fn open_pack(&self, pack: u32) -> Result<(&schema::Pack, impl Read + '_), ReadError> {
        let info = self.pack_info(pack)?;
        Ok((info, self.open_zst(&info.path, info.raw_size)?))
    }

    /// A decompressed pack, checked to be exactly the size the manifest declares.
    pub fn pack(&self, pack: u32) -> Result<Arc<Vec<u8>>, ReadError> {
        if let Some((id, data)) = self.pack_cache.lock().expect("not poisoned").as_ref() {
            if *id == pack {
                return Ok(data.clone());
            }
        }
        let (info, reader) = self.open_pack(pack)?;
        let data = read_all(&info.path, reader, info.raw_size)?;
        if data.len() as u64 != info.raw_size {
            return Err(invalid(
                &info.path,
                format!("decompresses to {} bytes, manifest.json says {}", data.len(), info.raw_size),
            ));
        }
        let data = Arc::new(data);
        *self.pack_cache.lock().expect("not poisoned") = Some((pack, data.clone()));
        Ok(data)
    }

    /// The bytes of a blob, checked against its hash: the payload exactly as logged (torch writes
    /// UTF-8 text, but nothing checks it: `String::from_utf8_lossy` to show it).
    ///
    /// The pack is decompressed as a stream and only up to the blob's end, then dropped (a blob
    /// early in a pack costs a fraction of the pack); when [`Bundle::pack`] last decompressed
    /// that pack whole, the blob is cut from it instead.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>, ReadError> {
        let loc = self.locate(hash)?.ok_or_else(|| invalid(self.source.describe(), format!("no blob {hash}")))?;
        let pack_path = &self.pack_info(loc.pack)?.path;
        let outside = || invalid(pack_path, format!("blob {hash} lies outside the pack"));
        let cached = match self.pack_cache.lock().expect("not poisoned").as_ref() {
            Some((id, data)) if *id == loc.pack => Some(data.clone()),
            _ => None,
        };
        let bytes = match cached {
            Some(pack) => blob_bytes(&pack, &loc).ok_or_else(outside)?.to_vec(),
            None => self.blob_streamed(hash, &loc)?,
        };
        if hex(&blob_id(&bytes)) != hash {
            return Err(invalid(pack_path, format!("blob {hash} does not match its hash")));
        }
        Ok(bytes)
    }

    /// The `loc.size` bytes at `loc.offset` of a pack, decompressing it only that far.
    fn blob_streamed(&self, hash: &str, loc: &BlobLocation) -> Result<Vec<u8>, ReadError> {
        let (info, mut reader) = self.open_pack(loc.pack)?;
        let outside = || invalid(&info.path, format!("blob {hash} lies outside the pack"));
        loc.offset.checked_add(loc.size).filter(|&end| end <= info.raw_size).ok_or_else(outside)?;
        let failed = |e| read_failed(&info.path, e, info.raw_size);
        let skipped = std::io::copy(&mut (&mut reader).take(loc.offset), &mut std::io::sink()).map_err(failed)?;
        let mut bytes = Vec::new();
        reader.take(loc.size).read_to_end(&mut bytes).map_err(failed)?;
        if skipped != loc.offset || bytes.len() as u64 != loc.size {
            return Err(invalid(
                &info.path,
                format!(
                    "ends before blob {hash} does (at {} of {} bytes manifest.json declares)",
                    skipped + bytes.len() as u64,
                    info.raw_size
                ),
            ));
        }
        Ok(bytes)
    }

    /// Where the payload of artifact `name` of a compile is, found through the stream's
    /// `compile_directory` table (the event index is not read). `compile_id` is written as
    /// displayed (`[0/1]`, `[0/1_2]`, `[!0/1/2]`) or without its brackets (`0/1`); `name` is the
    /// artifact's `name` in the table (`inductor_output_code`, `dynamo_output_graph`,
    /// `fx_graph_runnable`, ...) or its `tlparse_name`. `None` when the stream has no such
    /// compile or the compile no such artifact; when it logged several, the first (in log
    /// order) with a payload. An unknown stream is an error.
    pub fn artifact_ref(
        &self,
        stream: &str,
        compile_id: &str,
        name: &str,
    ) -> Result<Option<schema::tables::ArtifactRef>, ReadError> {
        /// A part of the compile directory, read for its artifacts alone.
        #[derive(serde::Deserialize)]
        struct Artifacts {
            artifacts: Vec<schema::tables::CompileArtifact>,
        }
        let wanted = crate::ids::displayed_compile_id(compile_id);
        let named = |a: &schema::tables::ArtifactRef| a.name == name || a.tlparse_name.as_deref() == Some(name);
        let Some(parts) = self.table_parts::<Artifacts>(stream, <schema::tables::CompileDirectory as Table>::NAME)?
        else {
            return Ok(None);
        };
        // A part at a time: the first with a payload, else the first without.
        let mut without_payload = None;
        for part in parts {
            for a in part?.artifacts {
                if a.compile_id != wanted || !named(&a.artifact) {
                    continue;
                }
                if a.artifact.blob.is_some() {
                    return Ok(Some(a.artifact));
                }
                without_payload.get_or_insert(a.artifact);
            }
        }
        Ok(without_payload)
    }

    /// The payload of artifact `name` of compile `compile_id` in `stream` (see
    /// [`Bundle::artifact_ref`] for how it is found), read with [`Bundle::blob`]: three files
    /// (the compile directory, one blob-index shard, the start of one pack). `None` when there
    /// is no such artifact, or it was logged without a payload (a link, or `no_payload`).
    ///
    /// ```
    /// # let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bundles/simple");
    /// let bundle = tlparse_bundle::Bundle::open(&root)?;
    /// let code = bundle.artifact("log0", "[0/0]", "inductor_output_code")?.expect("logged");
    /// assert!(String::from_utf8_lossy(&code).contains("def call(args)"));
    /// # Ok::<(), tlparse_bundle::ReadError>(())
    /// ```
    pub fn artifact(&self, stream: &str, compile_id: &str, name: &str) -> Result<Option<Vec<u8>>, ReadError> {
        match self.artifact_ref(stream, compile_id, name)?.and_then(|a| a.blob) {
            Some(blob) => self.blob(&blob).map(Some),
            None => Ok(None),
        }
    }
}

/// The bytes of a blob in its decompressed pack; `None` when the location lies outside it
/// (overflowing offsets included).
fn blob_bytes<'a>(pack: &'a [u8], loc: &BlobLocation) -> Option<&'a [u8]> {
    let start = usize::try_from(loc.offset).ok()?;
    let end = start.checked_add(usize::try_from(loc.size).ok()?)?;
    pack.get(start..end)
}

/// The manifest as JSON, checked to name this format and a reader version this code knows.
/// A [`ReadError::Source`] means there is no manifest to read (or it is refused); a
/// [`ReadError::Invalid`] names what is wrong with its content.
pub fn read_manifest_value(source: &impl ByteSource, limits: &Limits) -> Result<Value, ReadError> {
    let bytes = source.read(&BundlePath::new(paths::MANIFEST).expect("a plain name"), limits.manifest)?;
    let value: Value = parse_json(paths::MANIFEST, &bytes, limits)?;
    if value["format"] != schema::FORMAT_NAME {
        return Err(invalid(
            paths::MANIFEST,
            format!("not a {} manifest (its format is {})", schema::FORMAT_NAME, clip(&value["format"], 80)),
        ));
    }
    let min = value["min_reader_version"].as_u64().unwrap_or(u64::MAX);
    if min > u64::from(schema::FORMAT_MAJOR) {
        return Err(invalid(
            paths::MANIFEST,
            format!(
                "bundle needs a reader of version {}; this reader is version {} (format {})",
                clip(&value["min_reader_version"], 40),
                schema::FORMAT_MAJOR,
                schema::FORMAT_VERSION
            ),
        ));
    }
    if min < u64::from(schema::FORMAT_MAJOR) {
        // An older major's files are laid out otherwise (format 1 tables are one document at
        // `path`): this crate's types are the current major's.
        return Err(invalid(
            paths::MANIFEST,
            format!(
                "bundle of format {}, which this reader (format {}) does not read: rebuild it with this tlparse-build",
                clip(&value["format_version"], 40),
                schema::FORMAT_VERSION
            ),
        ));
    }
    Ok(value)
}

/// Reads a capped stream to its end (growing with what arrives, never preallocating a declared
/// size).
fn read_all(path: &str, mut reader: impl Read, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    reader.read_to_end(&mut out).map_err(|e| read_failed(path, e, limit))?;
    Ok(out)
}

/// A read error of a capped stream, as a message.
pub(crate) fn read_failed(path: &str, e: std::io::Error, limit: u64) -> ReadError {
    match e.kind() {
        std::io::ErrorKind::FileTooLarge => invalid(path, format!("decompresses to more than {limit} bytes; refused")),
        _ => invalid(path, format!("cannot be read: {e}")),
    }
}

/// The lines of a JSONL file, each parsed as `T` (an error names `path:line`). Lines longer
/// than [`Limits::line`], or whose JSON would take more than [`Limits::json_memory`], are
/// errors; after an error reading (not parsing) the file, the iteration ends.
pub struct JsonLines<'a, T> {
    path: String,
    reader: Box<dyn BufRead + 'a>,
    limits: Limits,
    /// The most lines the manifest declares the file has; one more is an error that ends it.
    max_lines: u64,
    number: u64,
    line: Vec<u8>,
    done: bool,
    cut_short: bool,
    _rows: PhantomData<fn() -> T>,
}

impl<'a, T: DeserializeOwned> JsonLines<'a, T> {
    pub fn new(path: &str, reader: Box<dyn BufRead + 'a>, limits: Limits) -> JsonLines<'a, T> {
        JsonLines {
            path: path.to_string(),
            reader,
            limits,
            max_lines: u64::MAX,
            number: 0,
            line: Vec::new(),
            done: false,
            cut_short: false,
            _rows: PhantomData,
        }
    }

    /// Ends the file with an error at its line `lines + 1`, if it has one: the count its
    /// manifest declares bounds the time a file that inflates to [`Limits::stream`] takes.
    pub fn at_most(mut self, lines: u64) -> JsonLines<'a, T> {
        self.max_lines = lines;
        self
    }

    /// True when reading stopped at an error before the end of the file.
    pub fn cut_short(&self) -> bool {
        self.cut_short
    }

    /// The number (from 1) of the line last returned.
    pub fn line_number(&self) -> u64 {
        self.number
    }

    fn next_line(&mut self) -> Result<bool, ReadError> {
        self.line.clear();
        if self.number >= self.max_lines && !self.at_end()? {
            return Err(invalid(
                self.at(self.number + 1),
                format!("more lines than the {} manifest.json declares; the rest is not read", self.max_lines),
            ));
        }
        let max = self.limits.line;
        let read = (&mut self.reader).take(max.saturating_add(1)).read_until(b'\n', &mut self.line);
        let read = read.map_err(|e| read_failed(&self.at(self.number + 1), e, self.limits.stream))?;
        if read == 0 {
            return Ok(false);
        }
        self.number += 1;
        if self.line.last() != Some(&b'\n') && self.line.len() as u64 > max {
            return Err(invalid(self.at(self.number), format!("line longer than {max} bytes; refused")));
        }
        Ok(true)
    }

    fn at_end(&mut self) -> Result<bool, ReadError> {
        match self.reader.fill_buf() {
            Ok(rest) => Ok(rest.is_empty()),
            Err(e) => Err(read_failed(&self.at(self.number + 1), e, self.limits.stream)),
        }
    }

    /// `path:line`, for messages.
    fn at(&self, line: u64) -> String {
        format!("{}:{line}", self.path)
    }
}

/// A stream's index rows as stored, numbered as they are read: the `seq` and `line` the file
/// leaves out are filled in ([`RowNumbering`]).
pub struct IndexRows<'a> {
    lines: JsonLines<'a, IndexRow>,
    numbering: RowNumbering,
}

impl IndexRows<'_> {
    /// True when reading stopped at an error before the end of the file.
    pub fn cut_short(&self) -> bool {
        self.lines.cut_short()
    }
}

impl Iterator for IndexRows<'_> {
    type Item = Result<IndexRow, ReadError>;

    fn next(&mut self) -> Option<Result<IndexRow, ReadError>> {
        let read = self.lines.next()?;
        Some(match read {
            Ok(mut row) => {
                self.numbering.fill(&mut row);
                Ok(row)
            }
            Err(e) => {
                self.numbering.skip();
                Err(e)
            }
        })
    }
}

impl<T: DeserializeOwned> Iterator for JsonLines<'_, T> {
    type Item = Result<T, ReadError>;

    fn next(&mut self) -> Option<Result<T, ReadError>> {
        if self.done {
            return None;
        }
        match self.next_line() {
            Ok(true) => {
                Some(parse_json_unnamed(&self.line, &self.limits).map_err(|why| invalid(self.at(self.number), why)))
            }
            Ok(false) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.cut_short = true;
                Some(Err(e))
            }
        }
    }
}
