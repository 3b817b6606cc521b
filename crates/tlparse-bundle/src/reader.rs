//! The strict reader: opens a bundle through a [`ByteSource`] and reads its manifest, index rows,
//! stacks, tables, traces and blobs back. Every bundle is untrusted: paths are checked to stay
//! inside it, every number taken from it is checked before use, and decompression stops at the
//! size the manifest declares and at [`Limits`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ids::{blob_id, hex, is_blob_id};
use crate::paths;
use crate::registry::{Scope, Table};
use crate::schema::{self, BlobIndexShard, BlobLocation, Diagnostic, IndexRow, Manifest, StackTable};
use crate::source::{BundlePath, ByteSource, DirSource, SourceError};

/// Why a bundle, or a part of it, could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

pub(crate) fn invalid(path: impl std::fmt::Display, message: impl Into<String>) -> ReadError {
    ReadError::Invalid { path: path.to_string(), message: message.into() }
}

/// The most the reader takes from a bundle, whatever its manifest says. A file or a
/// decompressed document over a limit is an error, never an allocation of that size.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The manifest, the largest JSON a bundle starts with.
    pub manifest: u64,
    /// Any other file, as stored.
    pub file: u64,
    /// A decompressed JSON document (a table, a blob-index shard, a trace).
    pub document: u64,
    /// One decompressed line of an index or of the diagnostics.
    pub line: u64,
    /// A decompressed pack.
    pub pack: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { manifest: 64 << 20, file: 1 << 30, document: 256 << 20, line: 64 << 20, pack: 512 << 20 }
    }
}

/// True when `dir` holds a tlparse-build bundle (a manifest naming our format).
pub fn is_bundle(dir: &Path) -> bool {
    let source = DirSource::new(dir);
    let manifest = BundlePath::new(paths::MANIFEST).expect("a plain name");
    source
        .read(&manifest, Limits::default().manifest)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
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
        let value: Value = read_manifest_value(&source, &limits)?;
        let manifest = serde_json::from_value(value).map_err(|e| invalid(paths::MANIFEST, e.to_string()))?;
        Ok(Bundle { source, limits, manifest, shards: Mutex::default(), pack_cache: Mutex::default() })
    }

    pub fn source(&self) -> &S {
        &self.source
    }

    /// The bytes of a bundle file, as stored.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, ReadError> {
        Ok(self.source.read(&BundlePath::new(path)?, self.limits.file)?)
    }

    /// A zstd-compressed file, decompressed; at most `limit` bytes.
    pub fn read_zst(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        decompress_zstd(path, &self.read(path)?, limit)
    }

    /// A gzip-compressed file, decompressed; at most `limit` bytes.
    pub fn read_gz(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let compressed = self.read(path)?;
        read_bounded(path, flate2::read::GzDecoder::new(&compressed[..]), limit)
    }

    /// The index rows of a stream, in order.
    pub fn index_rows(&self, stream: &str) -> Result<Vec<IndexRow>, ReadError> {
        let s = self.stream(stream)?;
        self.jsonl_zst(&s.index)
    }

    /// Each line of a zstd-compressed JSONL file, parsed, in order.
    pub fn jsonl_zst<T: DeserializeOwned>(&self, path: &str) -> Result<Vec<T>, ReadError> {
        let compressed = self.read(path)?;
        let decoder = zstd::stream::read::Decoder::new(&compressed[..]).map_err(|e| invalid(path, e.to_string()))?;
        parse_lines(path, BufReader::new(decoder), self.limits.line)
    }

    /// Each line of a plain JSONL file, parsed, in order.
    pub fn jsonl<T: DeserializeOwned>(&self, path: &str) -> Result<Vec<T>, ReadError> {
        parse_lines(path, &self.read(path)?[..], self.limits.line)
    }

    /// A plain JSON file.
    pub fn json<T: DeserializeOwned>(&self, path: &str) -> Result<T, ReadError> {
        serde_json::from_slice(&self.read(path)?).map_err(|e| invalid(path, e.to_string()))
    }

    /// A zstd-compressed JSON file.
    pub fn json_zst<T: DeserializeOwned>(&self, path: &str) -> Result<T, ReadError> {
        serde_json::from_slice(&self.read_zst(path, self.limits.document)?).map_err(|e| invalid(path, e.to_string()))
    }

    /// The stack table of a stream.
    pub fn stacks(&self, stream: &str) -> Result<StackTable, ReadError> {
        let s = self.stream(stream)?;
        self.json(&s.stacks)
    }

    /// A table of a stream (`None` when the stream has no such table), as the given type, e.g. a
    /// `schema::tables::CompileDirectory` or a `serde_json::Value`.
    pub fn table<T: DeserializeOwned>(&self, stream: &str, name: &str) -> Result<Option<T>, ReadError> {
        let s = self.stream(stream)?;
        match s.tables.get(name) {
            Some(t) => self.json_zst(&t.path).map(Some),
            None => Ok(None),
        }
    }

    /// A stream's table, typed by the registry: `bundle.stream_table::<Failures>("rank0")`.
    pub fn stream_table<T: Table>(&self, stream: &str) -> Result<Option<T>, ReadError> {
        debug_assert_eq!(T::SCOPE, Scope::Stream);
        self.table(stream, T::NAME)
    }

    /// A cross-rank table (`None` when the bundle has one stream, or the table has no rows).
    pub fn cross_rank_table<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ReadError> {
        match self.manifest.cross_rank.as_ref().and_then(|c| c.tables.get(name)) {
            Some(t) => self.json_zst(&t.path).map(Some),
            None => Ok(None),
        }
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
        serde_json::from_slice(&self.read_gz(path, self.limits.document)?).map_err(|e| invalid(path, e.to_string()))
    }

    /// The diagnostics, in input order.
    pub fn diagnostics(&self) -> Result<Vec<Diagnostic>, ReadError> {
        self.jsonl(&self.manifest.diagnostics.path)
    }

    fn stream(&self, id: &str) -> Result<&schema::Stream, ReadError> {
        self.manifest
            .streams
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| invalid(self.source.describe(), format!("no stream {id:?}")))
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

    /// A decompressed pack, checked to be exactly the size the manifest declares.
    pub fn pack(&self, pack: u32) -> Result<Arc<Vec<u8>>, ReadError> {
        if let Some((id, data)) = self.pack_cache.lock().expect("not poisoned").as_ref() {
            if *id == pack {
                return Ok(data.clone());
            }
        }
        let info = self
            .manifest
            .blobs
            .packs
            .get(pack as usize)
            .ok_or_else(|| invalid(paths::MANIFEST, format!("no pack {pack}")))?;
        if info.raw_size > self.limits.pack {
            return Err(invalid(&info.path, format!("declares {} bytes, over the reader's limit", info.raw_size)));
        }
        let data = self.read_zst(&info.path, info.raw_size)?;
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

    /// The bytes of a blob, checked against its hash.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>, ReadError> {
        let loc = self.locate(hash)?.ok_or_else(|| invalid(self.source.describe(), format!("no blob {hash}")))?;
        let pack = self.pack(loc.pack)?;
        let pack_path = &self.manifest.blobs.packs[loc.pack as usize].path;
        let bytes = blob_bytes(&pack, &loc)
            .ok_or_else(|| invalid(pack_path, format!("blob {hash} lies outside the pack")))?
            .to_vec();
        if hex(&blob_id(&bytes)) != hash {
            return Err(invalid(pack_path, format!("blob {hash} does not match its hash")));
        }
        Ok(bytes)
    }
}

/// The bytes of a blob in its decompressed pack; `None` when the location lies outside it
/// (overflowing offsets included).
pub fn blob_bytes<'a>(pack: &'a [u8], loc: &BlobLocation) -> Option<&'a [u8]> {
    let start = usize::try_from(loc.offset).ok()?;
    let end = start.checked_add(usize::try_from(loc.size).ok()?)?;
    pack.get(start..end)
}

/// The manifest as JSON, checked to name this format and a reader version this code knows.
pub fn read_manifest_value(source: &impl ByteSource, limits: &Limits) -> Result<Value, ReadError> {
    let bytes = source.read(&BundlePath::new(paths::MANIFEST).expect("a plain name"), limits.manifest)?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| invalid(paths::MANIFEST, e.to_string()))?;
    if value["format"] != schema::FORMAT_NAME {
        return Err(invalid(paths::MANIFEST, format!("not a {} manifest", schema::FORMAT_NAME)));
    }
    let min = value["min_reader_version"].as_u64().unwrap_or(u64::MAX);
    if min > u64::from(schema::FORMAT_VERSION) {
        return Err(invalid(
            paths::MANIFEST,
            format!(
                "bundle needs a reader of format version {min}; this reader reads version {}",
                schema::FORMAT_VERSION
            ),
        ));
    }
    Ok(value)
}

/// Decompresses zstd data, refusing more than `limit` bytes of output.
pub fn decompress_zstd(path: &str, compressed: &[u8], limit: u64) -> Result<Vec<u8>, ReadError> {
    let decoder = zstd::stream::read::Decoder::new(compressed).map_err(|e| invalid(path, e.to_string()))?;
    read_bounded(path, decoder, limit)
}

fn read_bounded(path: &str, reader: impl Read, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    reader.take(limit.saturating_add(1)).read_to_end(&mut out).map_err(|e| invalid(path, e.to_string()))?;
    if out.len() as u64 > limit {
        return Err(invalid(path, format!("decompresses to more than {limit} bytes")));
    }
    Ok(out)
}

/// Parses JSON lines, refusing a line longer than `max_line` bytes.
fn parse_lines<T: DeserializeOwned>(path: &str, mut reader: impl BufRead, max_line: u64) -> Result<Vec<T>, ReadError> {
    let mut out = Vec::new();
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        let read = (&mut reader)
            .take(max_line.saturating_add(1))
            .read_until(b'\n', &mut line)
            .map_err(|e| invalid(format!("{path}:{number}"), e.to_string()))?;
        if read == 0 {
            break;
        }
        if line.last() != Some(&b'\n') && line.len() as u64 > max_line {
            return Err(invalid(format!("{path}:{number}"), format!("line longer than {max_line} bytes")));
        }
        out.push(serde_json::from_slice(&line).map_err(|e| invalid(format!("{path}:{number}"), e.to_string()))?);
    }
    Ok(out)
}
