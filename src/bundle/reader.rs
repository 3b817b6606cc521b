//! The strict reader: opens a bundle, reads index rows, stacks and blobs back, and validates a
//! whole bundle (schemas, hashes, and every reference between files).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::blobs::{hex, shard_name};
use super::paths;
use crate::schema::{self, BlobIndexShard, BlobLocation, Diagnostic, IndexRow, Manifest, StackTable};
use crate::viewer;

/// Why a bundle could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

fn invalid(path: impl std::fmt::Display, message: impl Into<String>) -> ReadError {
    ReadError::Invalid { path: path.to_string(), message: message.into() }
}

/// True when `dir` holds a tlparse-build bundle (a manifest naming our format).
pub fn is_bundle(dir: &Path) -> bool {
    fs::read(dir.join(paths::MANIFEST))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| v["format"] == schema::FORMAT_NAME)
}

/// An open bundle.
pub struct Bundle {
    root: PathBuf,
    pub manifest: Manifest,
    shards: RefCell<HashMap<String, BlobIndexShard>>,
    /// The last pack decompressed, as blobs are often read from the same pack in a row.
    pack_cache: RefCell<Option<(u32, std::rc::Rc<Vec<u8>>)>>,
}

impl Bundle {
    /// Opens a bundle, refusing formats this reader does not know.
    pub fn open(root: &Path) -> Result<Bundle, ReadError> {
        let path = root.join(paths::MANIFEST);
        let value: Value = read_json(&path)?;
        if value["format"] != schema::FORMAT_NAME {
            return Err(invalid(path.display(), format!("not a {} manifest", schema::FORMAT_NAME)));
        }
        let min = value["min_reader_version"].as_u64().unwrap_or(u64::MAX);
        if min > u64::from(schema::FORMAT_VERSION) {
            return Err(invalid(
                path.display(),
                format!(
                    "bundle needs a reader of format version {min}; this tlparse-build reads version {}",
                    schema::FORMAT_VERSION
                ),
            ));
        }
        let manifest = serde_json::from_value(value).map_err(|e| invalid(path.display(), e.to_string()))?;
        Ok(Bundle { root: root.to_owned(), manifest, shards: RefCell::default(), pack_cache: RefCell::default() })
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// The index rows of a stream, in order.
    pub fn index_rows(&self, stream: &str) -> Result<Vec<IndexRow>, ReadError> {
        let s = self.stream(stream)?;
        read_jsonl_zst(&self.path(&s.index))
    }

    /// The stack table of a stream.
    pub fn stacks(&self, stream: &str) -> Result<StackTable, ReadError> {
        let s = self.stream(stream)?;
        read_json(&self.path(&s.stacks))
    }

    /// A table of a stream (`None` when the stream has no such table), as the given type, e.g. a
    /// `schema::tables::CompileDirectory` or a `serde_json::Value`.
    pub fn table<T: DeserializeOwned>(&self, stream: &str, name: &str) -> Result<Option<T>, ReadError> {
        let s = self.stream(stream)?;
        match s.tables.get(name) {
            Some(t) => read_json_zst(&self.path(&t.path)).map(Some),
            None => Ok(None),
        }
    }

    /// A cross-rank table (`None` when the bundle has one stream, or the table has no rows).
    pub fn cross_rank_table<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ReadError> {
        match self.manifest.cross_rank.as_ref().and_then(|c| c.tables.get(name)) {
            Some(t) => read_json_zst(&self.path(&t.path)).map(Some),
            None => Ok(None),
        }
    }

    /// The Chrome trace of the runtime estimates across ranks (`None` for a single stream, or when
    /// no stream has runtime estimates).
    pub fn cross_rank_runtime_estimates_trace(&self) -> Result<Option<Value>, ReadError> {
        let Some(path) = self.manifest.cross_rank.as_ref().and_then(|c| c.runtime_estimates_trace.as_ref()) else {
            return Ok(None);
        };
        let path = self.path(path);
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&read_bytes(&path)?[..]), &mut text)
            .map_err(|e| invalid(path.display(), e.to_string()))?;
        serde_json::from_slice(&text).map(Some).map_err(|e| invalid(path.display(), e.to_string()))
    }

    /// The Chrome trace of a stream (`None` when it logged no chromium events).
    pub fn chrome_trace(&self, stream: &str) -> Result<Option<Value>, ReadError> {
        let s = self.stream(stream)?;
        match &s.chrome_trace {
            Some(path) => self.read_trace(path).map(Some),
            None => Ok(None),
        }
    }

    /// The Chrome trace merging every stream's, one process per cross-rank member (`None` for a
    /// single stream, or when no stream logged chromium events).
    pub fn cross_rank_chrome_trace(&self) -> Result<Option<Value>, ReadError> {
        match self.manifest.cross_rank.as_ref().and_then(|c| c.chrome_trace.as_ref()) {
            Some(path) => self.read_trace(path).map(Some),
            None => Ok(None),
        }
    }

    fn read_trace(&self, path: &str) -> Result<Value, ReadError> {
        let path = self.path(path);
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&read_bytes(&path)?[..]), &mut text)
            .map_err(|e| invalid(path.display(), e.to_string()))?;
        serde_json::from_slice(&text).map_err(|e| invalid(path.display(), e.to_string()))
    }

    /// The diagnostics, in input order.
    pub fn diagnostics(&self) -> Result<Vec<Diagnostic>, ReadError> {
        read_jsonl(&self.path(&self.manifest.diagnostics.path))
    }

    fn stream(&self, id: &str) -> Result<&schema::Stream, ReadError> {
        self.manifest
            .streams
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| invalid(self.root.display(), format!("no stream {id:?}")))
    }

    /// Where a blob is stored; `None` if the bundle has no blob with that hash.
    pub fn locate(&self, hash: &str) -> Result<Option<BlobLocation>, ReadError> {
        if hash.len() != 32 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let shard = shard_name(hash, self.manifest.blobs.index_prefix_len).to_string();
        let mut shards = self.shards.borrow_mut();
        if !shards.contains_key(&shard) {
            let path = self.path(&paths::blob_index(&shard));
            let loaded: BlobIndexShard = read_json_zst(&path)?;
            shards.insert(shard.clone(), loaded);
        }
        Ok(shards[&shard].0.get(hash).copied())
    }

    /// A decompressed pack.
    pub fn pack(&self, pack: u32) -> Result<std::rc::Rc<Vec<u8>>, ReadError> {
        if let Some((id, data)) = self.pack_cache.borrow().as_ref() {
            if *id == pack {
                return Ok(data.clone());
            }
        }
        let info = self
            .manifest
            .blobs
            .packs
            .get(pack as usize)
            .ok_or_else(|| invalid("manifest.json", format!("no pack {pack}")))?;
        let path = self.path(&info.path);
        let compressed = fs::read(&path).map_err(|e| ReadError::Io { path: path.display().to_string(), source: e })?;
        let data = zstd::bulk::decompress(&compressed, info.raw_size as usize)
            .map_err(|e| invalid(path.display(), e.to_string()))?;
        let data = std::rc::Rc::new(data);
        *self.pack_cache.borrow_mut() = Some((pack, data.clone()));
        Ok(data)
    }

    /// The bytes of a blob, checked against its hash.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>, ReadError> {
        let loc = self.locate(hash)?.ok_or_else(|| invalid(self.root.display(), format!("no blob {hash}")))?;
        let pack = self.pack(loc.pack)?;
        let bytes = pack
            .get(loc.offset as usize..(loc.offset + loc.size) as usize)
            .ok_or_else(|| {
                invalid(
                    &self.manifest.blobs.packs[loc.pack as usize].path,
                    format!("blob {hash} lies outside the pack"),
                )
            })?
            .to_vec();
        if hex(&crate::parse::blob_id(&bytes)) != hash {
            return Err(invalid(
                &self.manifest.blobs.packs[loc.pack as usize].path,
                format!("blob {hash} does not match its hash"),
            ));
        }
        Ok(bytes)
    }
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    fs::read(path).map_err(|e| ReadError::Io { path: path.display().to_string(), source: e })
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, ReadError> {
    serde_json::from_slice(&read_bytes(path)?).map_err(|e| invalid(path.display(), e.to_string()))
}

fn read_json_zst<T: DeserializeOwned>(path: &Path) -> Result<T, ReadError> {
    let bytes = zstd::decode_all(&read_bytes(path)?[..]).map_err(|e| invalid(path.display(), e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| invalid(path.display(), e.to_string()))
}

fn parse_lines<T: DeserializeOwned>(path: &Path, reader: impl BufRead) -> Result<Vec<T>, ReadError> {
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| ReadError::Io { path: path.display().to_string(), source: e })?;
        out.push(
            serde_json::from_str(&line).map_err(|e| invalid(format!("{}:{}", path.display(), i + 1), e.to_string()))?,
        );
    }
    Ok(out)
}

fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, ReadError> {
    parse_lines(path, BufReader::new(&read_bytes(path)?[..]))
}

fn read_jsonl_zst<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, ReadError> {
    let bytes = read_bytes(path)?;
    let decoder = zstd::Decoder::new(&bytes[..]).map_err(|e| invalid(path.display(), e.to_string()))?;
    parse_lines(path, BufReader::new(decoder))
}

/// Checks a whole bundle; returns every problem found (empty when the bundle is valid).
pub fn validate(root: &Path) -> Result<Vec<String>, ReadError> {
    let mut problems = Vec::new();
    let validators: BTreeMap<String, jsonschema::Validator> = schema::schemas()
        .into_iter()
        .map(|(name, s)| {
            (
                format!("{}/{name}", paths::SCHEMA_DIR),
                jsonschema::validator_for(s.as_value()).expect("our schemas compile"),
            )
        })
        .collect();
    let check = |file: &str, what: &str, value: &Value, schema: &str, problems: &mut Vec<String>| {
        for e in validators[schema].iter_errors(value).take(5) {
            problems.push(format!("{file}{what}: {} (at {})", e, e.instance_path()));
        }
    };

    let manifest_value: Value = read_json(&root.join(paths::MANIFEST))?;
    check(paths::MANIFEST, "", &manifest_value, "schema/manifest.schema.json", &mut problems);
    if !problems.is_empty() {
        return Ok(problems);
    }
    let bundle = Bundle::open(root)?;
    let m = &bundle.manifest;

    // Files: listed ones exist with their size and hash; nothing unlisted (but the shipped
    // viewer, which is not part of the format); schemas as written.
    let listed: BTreeMap<&str, &schema::FileEntry> = m.files.iter().map(|f| (f.path.as_str(), f)).collect();
    for item in walkdir::WalkDir::new(root).sort_by_file_name() {
        let item = item.map_err(|e| ReadError::Io { path: root.display().to_string(), source: e.into() })?;
        if item.file_type().is_file() {
            let rel = item.path().strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/");
            if rel != paths::MANIFEST && !listed.contains_key(rel.as_str()) && !viewer::is_viewer_path(&rel) {
                problems.push(format!("{rel}: file is not listed in manifest.json"));
            }
        }
    }
    let ours: BTreeMap<String, Value> =
        schema::schemas().into_iter().map(|(n, s)| (format!("{}/{n}", paths::SCHEMA_DIR), s.to_value())).collect();
    for f in &m.files {
        let Ok(bytes) = fs::read(root.join(&f.path)) else {
            problems.push(format!("{}: listed in manifest.json but missing", f.path));
            continue;
        };
        if bytes.len() as u64 != f.size {
            problems.push(format!("{}: size {} but manifest.json says {}", f.path, bytes.len(), f.size));
        }
        if hex(blake3::hash(&bytes).as_bytes()) != f.blake3 {
            problems.push(format!("{}: blake3 does not match manifest.json", f.path));
        }
        if let Some(expected) = ours.get(&f.path) {
            if serde_json::from_slice::<Value>(&bytes).ok().as_ref() != Some(expected) {
                problems.push(format!("{}: differs from the format-{} schema", f.path, schema::FORMAT_VERSION));
            }
        }
        if f.schema != super::schema_for(&f.path) {
            problems.push(format!("{}: schema should be {:?}", f.path, super::schema_for(&f.path)));
        }
    }

    // Blob index: shards well formed, every location inside its pack, every blob's hash right.
    let mut locations: HashMap<String, BlobLocation> = HashMap::new();
    let shard_files: Vec<&schema::FileEntry> = m.files.iter().filter(|f| f.path.starts_with("blobs/index/")).collect();
    let expected_shards = if m.blobs.index_prefix_len == 0 { 1 } else { 1usize << (4 * m.blobs.index_prefix_len) };
    if shard_files.len() != expected_shards {
        problems.push(format!(
            "blobs/index: {} shards, but index_prefix_len {} means {expected_shards}",
            shard_files.len(),
            m.blobs.index_prefix_len
        ));
    }
    for f in shard_files {
        let value: Value = read_json_zst(&root.join(&f.path))?;
        check(&f.path, "", &value, "schema/blob-index-shard.schema.json", &mut problems);
        let shard: BlobIndexShard = serde_json::from_value(value).map_err(|e| invalid(&f.path, e.to_string()))?;
        for (hash, loc) in shard.0 {
            if paths::blob_index(shard_name(&hash, m.blobs.index_prefix_len)) != f.path {
                problems.push(format!("{}: blob {hash} belongs in another shard", f.path));
            }
            match m.blobs.packs.get(loc.pack as usize) {
                None => problems.push(format!("{}: blob {hash} names pack {} which does not exist", f.path, loc.pack)),
                Some(p) if loc.offset + loc.size > p.raw_size => {
                    problems.push(format!("{}: blob {hash} lies outside pack {}", f.path, p.path))
                }
                Some(_) => {}
            }
            locations.insert(hash, loc);
        }
    }
    if locations.len() as u64 != m.counts.unique_blobs {
        problems.push(format!("blob index has {} blobs, manifest counts {}", locations.len(), m.counts.unique_blobs));
    }
    let mut by_pack: BTreeMap<u32, Vec<(&String, &BlobLocation)>> = BTreeMap::new();
    for (h, l) in &locations {
        by_pack.entry(l.pack).or_default().push((h, l));
    }
    for (i, pack) in m.blobs.packs.iter().enumerate() {
        let blobs = by_pack.remove(&(i as u32)).unwrap_or_default();
        if blobs.len() as u64 != pack.blobs {
            problems.push(format!("{}: holds {} blobs, manifest says {}", pack.path, blobs.len(), pack.blobs));
        }
        let data = match bundle.pack(i as u32) {
            Ok(d) => d,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        if data.len() as u64 != pack.raw_size {
            problems.push(format!(
                "{}: decompresses to {} bytes, manifest says {}",
                pack.path,
                data.len(),
                pack.raw_size
            ));
            continue;
        }
        for (hash, loc) in blobs {
            let bytes = &data[loc.offset as usize..(loc.offset + loc.size) as usize];
            if &hex(&crate::parse::blob_id(bytes)) != hash {
                problems.push(format!("{}: blob {hash} does not match its hash", pack.path));
            }
        }
    }

    // Streams: index rows valid and consistent with the manifest, references resolvable.
    let mut entries = 0;
    for s in &m.streams {
        if !listed.contains_key(s.index.as_str()) || !listed.contains_key(s.stacks.as_str()) {
            problems.push(format!("stream {}: its index or stack table is not listed in manifest.json", s.id));
            continue;
        }
        let stacks_value: Value = read_json(&root.join(&s.stacks))?;
        check(&s.stacks, "", &stacks_value, "schema/stack-table.schema.json", &mut problems);
        let stacks: StackTable = serde_json::from_value(stacks_value).map_err(|e| invalid(&s.stacks, e.to_string()))?;
        if let Some(bad) = stacks.stacks.iter().flatten().find(|&&f| f as usize >= stacks.frames.len()) {
            problems.push(format!("{}: a stack refers to frame {bad}, which does not exist", s.stacks));
        }
        let rows: Vec<Value> = read_jsonl_zst(&root.join(&s.index))?;
        let (mut payload_bytes, mut n) = (0, 0u64);
        for (i, value) in rows.into_iter().enumerate() {
            let at = format!(":{}", i + 1);
            check(&s.index, &at, &value, "schema/index-row.schema.json", &mut problems);
            let Ok(row) = serde_json::from_value::<IndexRow>(value) else { continue };
            if row.seq != n {
                problems.push(format!("{}{at}: seq {} out of order", s.index, row.seq));
            }
            n += 1;
            if row.stack.is_some_and(|id| id as usize >= stacks.stacks.len()) {
                problems.push(format!("{}{at}: stack {} does not exist", s.index, row.stack.unwrap_or_default()));
            }
            if let Some(p) = row.payload {
                payload_bytes += p.size;
                match locations.get(&p.hash) {
                    None => problems.push(format!("{}{at}: payload blob {} is not in the blob index", s.index, p.hash)),
                    Some(l) if l.size != p.size => {
                        problems.push(format!("{}{at}: payload size {} but blob has {}", s.index, p.size, l.size))
                    }
                    Some(_) => {}
                }
            }
        }
        if n != s.entries || payload_bytes != s.payload_bytes {
            problems.push(format!(
                "stream {}: index has {n} rows and {payload_bytes} payload bytes, manifest says {} and {}",
                s.id, s.entries, s.payload_bytes
            ));
        }
        entries += n;

        for (name, t) in &s.tables {
            if !listed.contains_key(t.path.as_str()) || t.path != paths::table(&s.id, name) {
                problems.push(format!("stream {}: table {name} at {} is not where it should be", s.id, t.path));
                continue;
            }
            let value: Value = read_json_zst(&root.join(&t.path))?;
            check(&t.path, "", &value, &format!("schema/tables/{name}.schema.json"), &mut problems);
        }
        if s.chrome_trace.is_some() {
            match bundle.chrome_trace(&s.id) {
                Ok(Some(trace)) if trace["traceEvents"].is_array() => {}
                Ok(_) => problems.push(format!("stream {}: chrome trace has no traceEvents list", s.id)),
                Err(e) => problems.push(e.to_string()),
            }
        }
    }
    // Cross-rank tables: where they should be and valid; the merged trace readable.
    if let Some(c) = &m.cross_rank {
        for (name, t) in &c.tables {
            if !schema::cross_rank::NAMES.contains(&name.as_str()) {
                problems.push(format!("cross-rank table {name} is not a table of this format"));
                continue;
            }
            if !listed.contains_key(t.path.as_str()) || t.path != paths::table(schema::cross_rank::DIR, name) {
                problems.push(format!("cross-rank table {name} at {} is not where it should be", t.path));
                continue;
            }
            let value: Value = read_json_zst(&root.join(&t.path))?;
            check(&t.path, "", &value, &format!("schema/cross_rank/{name}.schema.json"), &mut problems);
        }
        if c.chrome_trace.is_some() {
            match bundle.cross_rank_chrome_trace() {
                Ok(Some(trace)) if trace["traceEvents"].is_array() => {}
                Ok(_) => problems.push("the cross-rank chrome trace has no traceEvents list".to_string()),
                Err(e) => problems.push(e.to_string()),
            }
        }
        if c.runtime_estimates_trace.is_some() {
            match bundle.cross_rank_runtime_estimates_trace() {
                Ok(Some(trace)) if trace["traceEvents"].is_array() => {}
                Ok(_) => problems.push("the runtime estimates trace has no traceEvents list".to_string()),
                Err(e) => problems.push(e.to_string()),
            }
        }
    }
    if entries != m.counts.entries {
        problems.push(format!("streams hold {entries} entries, manifest counts {}", m.counts.entries));
    }

    // Diagnostics: valid rows, counted right, raw text present.
    let diag_path = root.join(&m.diagnostics.path);
    let diags: Vec<Value> = read_jsonl(&diag_path)?;
    let mut by_kind: BTreeMap<String, u64> = BTreeMap::new();
    for (i, value) in diags.iter().enumerate() {
        check(&m.diagnostics.path, &format!(":{}", i + 1), value, "schema/diagnostic.schema.json", &mut problems);
        if let Ok(d) = serde_json::from_value::<Diagnostic>(value.clone()) {
            *by_kind.entry(d.kind.as_str().to_string()).or_default() += 1;
            if d.raw.as_ref().is_some_and(|h| !locations.contains_key(h)) {
                problems.push(format!("{}:{}: raw text blob is missing", m.diagnostics.path, i + 1));
            }
            if d.stream.as_ref().is_some_and(|id| !m.streams.iter().any(|s| &s.id == id)) {
                problems.push(format!("{}:{}: names an unknown stream", m.diagnostics.path, i + 1));
            }
        }
    }
    if diags.len() as u64 != m.diagnostics.total || by_kind != m.diagnostics.by_kind {
        problems.push(format!("{}: counts do not match manifest.json", m.diagnostics.path));
    }
    Ok(problems)
}
