//! `validate`: checks a whole bundle (every file against its schema, size and blake3, every blob
//! against its id, every reference between files) and lists every problem found. Reading goes
//! through the hardened [`Bundle`], so a hostile bundle is reported, never followed.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::ids::{blob_id, hex};
use crate::paths;
use crate::reader::{Bundle, ReadError, blob_bytes, read_manifest_value};
use crate::registry::{self, Scope};
use crate::schema::{self, BlobIndexShard, BlobLocation, Diagnostic, IndexRow, StackTable};
use crate::source::{ByteSource, Listed};

mod refs;

/// Checks a whole bundle; returns every problem found (empty when the bundle is valid). Errs only
/// when the source holds no readable manifest of this format at all.
pub fn validate<S: ByteSource>(source: S) -> Result<Vec<String>, ReadError> {
    let limits = crate::reader::Limits::default();
    let manifest_value = read_manifest_value(&source, &limits)?;
    let mut v = Validator::new();
    v.check(paths::MANIFEST, "", &manifest_value, "schema/manifest.schema.json");
    if !v.problems.is_empty() {
        return Ok(v.problems);
    }
    let bundle = match Bundle::with_limits(source, limits) {
        Ok(b) => b,
        Err(e) => return Ok(vec![e.to_string()]),
    };
    v.files(&bundle);
    let locations = v.blobs(&bundle);
    let compile_ids = v.streams(&bundle, &locations);
    v.cross_rank(&bundle, &locations, &compile_ids);
    v.diagnostics(&bundle, &locations);
    Ok(v.problems)
}

struct Validator {
    schemas: BTreeMap<String, jsonschema::Validator>,
    problems: Vec<String>,
}

impl Validator {
    fn new() -> Validator {
        let schemas = schema::schemas()
            .into_iter()
            .map(|(name, s)| {
                let compiled = jsonschema::validator_for(s.as_value()).expect("our schemas compile");
                (format!("{}/{name}", paths::SCHEMA_DIR), compiled)
            })
            .collect();
        Validator { schemas, problems: Vec::new() }
    }

    fn problem(&mut self, p: impl Into<String>) {
        self.problems.push(p.into());
    }

    /// Checks `value` (from `file`, at `what`) against a schema of this format.
    fn check(&mut self, file: &str, what: &str, value: &Value, schema: &str) {
        let Some(validator) = self.schemas.get(schema) else {
            self.problems.push(format!("{file}{what}: no schema {schema} in this format"));
            return;
        };
        for e in validator.iter_errors(value).take(5) {
            self.problems.push(format!("{file}{what}: {} (at {})", e, e.instance_path()));
        }
    }

    /// Listed files exist with their size, hash and schema; nothing unlisted but the shipped
    /// viewer; no symlinks or special files; schemas as this format writes them.
    fn files<S: ByteSource>(&mut self, bundle: &Bundle<S>) {
        let m = &bundle.manifest;
        let listed: BTreeMap<&str, &schema::FileEntry> = m.files.iter().map(|f| (f.path.as_str(), f)).collect();
        match bundle.source().list() {
            Ok(Some(found)) => {
                for item in found {
                    match item {
                        Listed::File(rel) => {
                            if rel != paths::MANIFEST
                                && !listed.contains_key(rel.as_str())
                                && !paths::is_viewer_path(&rel)
                            {
                                self.problem(format!("{rel}: file is not listed in manifest.json"));
                            }
                        }
                        Listed::Other { path, what } => {
                            self.problem(format!("{path}: is {what}, which a bundle never holds"))
                        }
                    }
                }
            }
            Ok(None) => {}
            Err(e) => self.problem(e.to_string()),
        }
        let ours: BTreeMap<String, Value> =
            schema::schemas().into_iter().map(|(n, s)| (format!("{}/{n}", paths::SCHEMA_DIR), s.to_value())).collect();
        for f in &m.files {
            let bytes = match bundle.read(&f.path) {
                Ok(b) => b,
                Err(e) => {
                    self.problem(e.to_string());
                    continue;
                }
            };
            if bytes.len() as u64 != f.size {
                self.problem(format!("{}: size {} but manifest.json says {}", f.path, bytes.len(), f.size));
            }
            if hex(blake3::hash(&bytes).as_bytes()) != f.blake3 {
                self.problem(format!("{}: blake3 does not match manifest.json", f.path));
            }
            if let Some(expected) = ours.get(&f.path) {
                if serde_json::from_slice::<Value>(&bytes).ok().as_ref() != Some(expected) {
                    self.problem(format!("{}: differs from the format-{} schema", f.path, schema::FORMAT_VERSION));
                }
            }
            if f.schema != paths::schema_for(&f.path) {
                self.problem(format!("{}: schema should be {:?}", f.path, paths::schema_for(&f.path)));
            }
        }
    }

    /// Shards well formed, every location inside its pack, every blob's hash right. Returns the
    /// blob index.
    fn blobs<S: ByteSource>(&mut self, bundle: &Bundle<S>) -> HashMap<String, BlobLocation> {
        let m = &bundle.manifest;
        let mut locations: HashMap<String, BlobLocation> = HashMap::new();
        let prefix_len = m.blobs.index_prefix_len;
        if prefix_len > paths::MAX_SHARD_PREFIX_LEN {
            self.problem(format!(
                "manifest.json: blobs.index_prefix_len {prefix_len} is more than {}",
                paths::MAX_SHARD_PREFIX_LEN
            ));
            return locations;
        }
        let shard_files: Vec<&schema::FileEntry> =
            m.files.iter().filter(|f| f.path.starts_with("blobs/index/")).collect();
        let expected_shards = if prefix_len == 0 { 1 } else { 1usize << (4 * prefix_len) };
        if shard_files.len() != expected_shards {
            self.problem(format!(
                "blobs/index: {} shards, but index_prefix_len {prefix_len} means {expected_shards}",
                shard_files.len()
            ));
        }
        for f in shard_files {
            let value: Value = match bundle.json_zst(&f.path) {
                Ok(v) => v,
                Err(e) => {
                    self.problem(e.to_string());
                    continue;
                }
            };
            self.check(&f.path, "", &value, "schema/blob-index-shard.schema.json");
            let Ok(shard) = serde_json::from_value::<BlobIndexShard>(value) else { continue };
            for (hash, loc) in shard.0 {
                if paths::shard_name(&hash, prefix_len).map(paths::blob_index) != Some(f.path.clone()) {
                    self.problem(format!("{}: blob {hash} belongs in another shard", f.path));
                }
                match m.blobs.packs.get(loc.pack as usize) {
                    None => {
                        self.problem(format!("{}: blob {hash} names pack {} which does not exist", f.path, loc.pack))
                    }
                    Some(p) if loc.offset.checked_add(loc.size).is_none_or(|end| end > p.raw_size) => {
                        self.problem(format!("{}: blob {hash} lies outside pack {}", f.path, p.path))
                    }
                    Some(_) => {}
                }
                locations.insert(hash, loc);
            }
        }
        if locations.len() as u64 != m.counts.unique_blobs {
            self.problem(format!(
                "blob index has {} blobs, manifest counts {}",
                locations.len(),
                m.counts.unique_blobs
            ));
        }
        let mut by_pack: BTreeMap<u32, Vec<(&String, &BlobLocation)>> = BTreeMap::new();
        for (h, l) in &locations {
            by_pack.entry(l.pack).or_default().push((h, l));
        }
        for (i, pack) in m.blobs.packs.iter().enumerate() {
            let blobs = by_pack.remove(&(i as u32)).unwrap_or_default();
            if blobs.len() as u64 != pack.blobs {
                self.problem(format!("{}: holds {} blobs, manifest says {}", pack.path, blobs.len(), pack.blobs));
            }
            let data = match bundle.pack(i as u32) {
                Ok(d) => d,
                Err(e) => {
                    self.problem(e.to_string());
                    continue;
                }
            };
            for (hash, loc) in blobs {
                match blob_bytes(&data, loc) {
                    Some(bytes) if &hex(&blob_id(bytes)) == hash => {}
                    Some(_) => self.problem(format!("{}: blob {hash} does not match its hash", pack.path)),
                    None => {} // reported with the shard
                }
            }
        }
        locations
    }

    /// Index rows valid and consistent with the manifest, references resolvable; tables valid.
    fn streams<S: ByteSource>(
        &mut self,
        bundle: &Bundle<S>,
        locations: &HashMap<String, BlobLocation>,
    ) -> refs::CompileIdSet {
        let m = &bundle.manifest;
        let mut compile_ids = refs::CompileIdSet::default();
        let listed: BTreeMap<&str, &schema::FileEntry> = m.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut entries = 0;
        for s in &m.streams {
            if !listed.contains_key(s.index.as_str()) || !listed.contains_key(s.stacks.as_str()) {
                self.problem(format!("stream {}: its index or stack table is not listed in manifest.json", s.id));
                continue;
            }
            let stacks = match bundle.json::<Value>(&s.stacks) {
                Ok(value) => {
                    self.check(&s.stacks, "", &value, "schema/stack-table.schema.json");
                    serde_json::from_value::<StackTable>(value).unwrap_or_default()
                }
                Err(e) => {
                    self.problem(e.to_string());
                    StackTable::default()
                }
            };
            if let Some(bad) = stacks.stacks.iter().flatten().find(|&&f| f as usize >= stacks.frames.len()) {
                self.problem(format!("{}: a stack refers to frame {bad}, which does not exist", s.stacks));
            }
            let mut facts = refs::StreamFacts::new(&stacks);
            let rows: Vec<Value> = match bundle.jsonl_zst(&s.index) {
                Ok(rows) => rows,
                Err(e) => {
                    self.problem(e.to_string());
                    continue;
                }
            };
            let (mut payload_bytes, mut n) = (0u64, 0u64);
            for (i, value) in rows.into_iter().enumerate() {
                let at = format!(":{}", i + 1);
                self.check(&s.index, &at, &value, "schema/index-row.schema.json");
                let Ok(row) = serde_json::from_value::<IndexRow>(value) else { continue };
                if row.seq != n {
                    self.problem(format!("{}{at}: seq {} out of order", s.index, row.seq));
                }
                n += 1;
                facts.observe_row(&row);
                if let Some(id) = row.stack.filter(|&id| id as usize >= stacks.stacks.len()) {
                    self.problem(format!("{}{at}: stack {id} does not exist", s.index));
                }
                if let Some(p) = row.payload {
                    payload_bytes = payload_bytes.saturating_add(p.size);
                    match locations.get(&p.hash) {
                        None => {
                            self.problem(format!("{}{at}: payload blob {} is not in the blob index", s.index, p.hash))
                        }
                        Some(l) if l.size != p.size => {
                            self.problem(format!("{}{at}: payload size {} but blob has {}", s.index, p.size, l.size))
                        }
                        Some(_) => {}
                    }
                }
            }
            if n != s.entries || payload_bytes != s.payload_bytes {
                self.problem(format!(
                    "stream {}: index has {n} rows and {payload_bytes} payload bytes, manifest says {} and {}",
                    s.id, s.entries, s.payload_bytes
                ));
            }
            entries += n;
            let within = refs::Within::Stream { id: &s.id, facts: &facts };
            for (name, t) in &s.tables {
                self.table(bundle, &listed, (Scope::Stream, &s.id), name, &t.path, locations, &within);
            }
            compile_ids.extend(facts.into_compile_ids());
            if s.chrome_trace.is_some() {
                match bundle.chrome_trace(&s.id) {
                    Ok(Some(trace)) if trace["traceEvents"].is_array() => {}
                    Ok(_) => self.problem(format!("stream {}: chrome trace has no traceEvents list", s.id)),
                    Err(e) => self.problem(e.to_string()),
                }
            }
        }
        if entries != m.counts.entries {
            self.problem(format!("streams hold {entries} entries, manifest counts {}", m.counts.entries));
        }
        compile_ids
    }

    /// One table: a table of this format, where it should be, listed, valid, and every reference
    /// in it resolvable.
    #[allow(clippy::too_many_arguments)]
    fn table<S: ByteSource>(
        &mut self,
        bundle: &Bundle<S>,
        listed: &BTreeMap<&str, &schema::FileEntry>,
        (scope, dir): (Scope, &str),
        name: &str,
        path: &str,
        locations: &HashMap<String, BlobLocation>,
        within: &refs::Within,
    ) {
        let Some(info) = registry::find(scope, name) else {
            self.problem(format!("{dir}: table {name} is not a table of this format"));
            return;
        };
        if !listed.contains_key(path) || path != paths::table(dir, name) {
            self.problem(format!("{dir}: table {name} at {path} is not where it should be"));
            return;
        }
        match bundle.json_zst::<Value>(path) {
            Ok(value) => {
                self.check(path, "", &value, &format!("{}/{}", paths::SCHEMA_DIR, info.schema_file()));
                refs::check_table(info, path, &value, locations, within, &mut self.problems);
            }
            Err(e) => self.problem(e.to_string()),
        }
    }

    /// Cross-rank tables where they should be and valid; the merged traces readable.
    fn cross_rank<S: ByteSource>(
        &mut self,
        bundle: &Bundle<S>,
        locations: &HashMap<String, BlobLocation>,
        compile_ids: &refs::CompileIdSet,
    ) {
        let m = &bundle.manifest;
        let Some(c) = &m.cross_rank else { return };
        let listed: BTreeMap<&str, &schema::FileEntry> = m.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let members = c.members.iter().map(|r| r.stream.as_str()).collect();
        let within = refs::Within::CrossRank { members, compile_ids };
        for (name, t) in &c.tables {
            let at = (Scope::CrossRank, paths::CROSS_RANK_DIR);
            self.table(bundle, &listed, at, name, &t.path, locations, &within);
        }
        if c.chrome_trace.is_some() {
            match bundle.cross_rank_chrome_trace() {
                Ok(Some(trace)) if trace["traceEvents"].is_array() => {}
                Ok(_) => self.problem("the cross-rank chrome trace has no traceEvents list"),
                Err(e) => self.problem(e.to_string()),
            }
        }
        if c.runtime_estimates_trace.is_some() {
            match bundle.cross_rank_runtime_estimates_trace() {
                Ok(Some(trace)) if trace["traceEvents"].is_array() => {}
                Ok(_) => self.problem("the runtime estimates trace has no traceEvents list"),
                Err(e) => self.problem(e.to_string()),
            }
        }
    }

    /// Diagnostics: valid rows, counted right, raw text present.
    fn diagnostics<S: ByteSource>(&mut self, bundle: &Bundle<S>, locations: &HashMap<String, BlobLocation>) {
        let m = &bundle.manifest;
        let diags: Vec<Value> = match bundle.jsonl(&m.diagnostics.path) {
            Ok(d) => d,
            Err(e) => {
                self.problem(e.to_string());
                return;
            }
        };
        let mut by_kind: BTreeMap<String, u64> = BTreeMap::new();
        for (i, value) in diags.iter().enumerate() {
            let at = format!(":{}", i + 1);
            self.check(&m.diagnostics.path, &at, value, "schema/diagnostic.schema.json");
            if let Ok(d) = serde_json::from_value::<Diagnostic>(value.clone()) {
                *by_kind.entry(d.kind.as_str().to_string()).or_default() += 1;
                if d.raw.as_ref().is_some_and(|h| !locations.contains_key(h)) {
                    self.problem(format!("{}{at}: raw text blob is missing", m.diagnostics.path));
                }
                if d.stream.as_ref().is_some_and(|id| !m.streams.iter().any(|s| &s.id == id)) {
                    self.problem(format!("{}{at}: names an unknown stream", m.diagnostics.path));
                }
            }
        }
        if diags.len() as u64 != m.diagnostics.total || by_kind != m.diagnostics.by_kind {
            self.problem(format!("{}: counts do not match manifest.json", m.diagnostics.path));
        }
    }
}
