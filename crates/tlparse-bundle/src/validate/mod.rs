//! `validate`: checks a whole bundle (every file against its schema, size and blake3, every blob
//! against its id, every reference between files) and lists every problem found. Reading goes
//! through the hardened [`Bundle`], so a hostile bundle is reported, never followed; memory stays
//! within what [`Limits`] allows, whatever the bundle (indexes, diagnostics, packs and traces are
//! streamed).

mod refs;
mod viewer;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use crate::ids::{BlobId, blob_id_of, hex, parse_blob_id};
use crate::paths;
use crate::reader::{Bundle, Limits, ReadError, clip, read_manifest_value};
use crate::registry::{self, Scope};
use crate::schema::{self, BlobLocation, Diagnostic, IndexRow, RowNumbering};
use crate::source::{BundlePath, ByteSource, Listed, SourceError};

/// Problems kept in the report; past it, only their number.
pub const MAX_PROBLEMS: usize = 1000;
/// Problems reported for one file (an index, the diagnostics) before reading it stops.
pub const MAX_PROBLEMS_PER_FILE: usize = 50;
/// The longest problem message.
pub const MAX_PROBLEM_LEN: usize = 600;

/// Checks a whole bundle; returns every problem found (empty when the bundle is valid). Errs only
/// when there is no bundle to check: no directory, or no `manifest.json` in it, or one that
/// cannot be read. A manifest that is there but wrong is a problem.
pub fn validate<S: ByteSource>(source: S) -> Result<Vec<String>, ReadError> {
    validate_with_limits(source, Limits::default())
}

/// [`validate`] with other limits than the defaults.
pub fn validate_with_limits<S: ByteSource>(source: S, limits: Limits) -> Result<Vec<String>, ReadError> {
    let mut v = Validator::new();
    let manifest_value = match read_manifest_value(&source, &limits) {
        Ok(value) => value,
        Err(e @ ReadError::Source(SourceError::NotFound { .. } | SourceError::Io { .. })) => return Err(e),
        Err(e) => return Ok(vec![clip(e, MAX_PROBLEM_LEN)]),
    };
    v.check(paths::MANIFEST, "", &manifest_value, "schema/manifest.schema.json");
    if !v.problems.is_empty() {
        return Ok(v.finish());
    }
    let bundle = match Bundle::with_manifest(source, limits, manifest_value) {
        Ok(b) => b,
        Err(e) => return Ok(vec![clip(e, MAX_PROBLEM_LEN)]),
    };
    // Walked once: both the format's files and the viewer's are checked against it.
    let listing = match bundle.source().list() {
        Ok(listing) => listing,
        Err(e) => {
            v.problem(e);
            None
        }
    };
    v.files(&bundle, listing.as_deref());
    v.lite_manifest(&bundle);
    v.viewer(&bundle, listing.as_deref());
    let locations = v.blobs(&bundle);
    let compile_ids = v.streams(&bundle, &locations);
    v.cross_rank(&bundle, &locations, &compile_ids);
    v.diagnostics(&bundle, &locations);
    Ok(v.finish())
}

struct Validator {
    schemas: BTreeMap<String, jsonschema::Validator>,
    problems: Vec<String>,
    /// Problems found past [`MAX_PROBLEMS`].
    unlisted: u64,
}

/// The blob index: each blob's location by id, sorted by id (40 bytes a blob).
#[derive(Default)]
pub(crate) struct Locations {
    sorted: Vec<(BlobId, BlobLocation)>,
    /// False when the index could not be read: references to blobs are then not checked (each
    /// would be one more problem saying the same).
    complete: bool,
}

impl Locations {
    /// True when `hash` is not in a blob index that was read whole.
    pub(crate) fn lacks(&self, hash: &str) -> bool {
        self.complete && !self.contains_key(hash)
    }

    /// Where the blob with this id (32 hex digits) is, if the index has it.
    pub(crate) fn get(&self, hash: &str) -> Option<&BlobLocation> {
        let id = parse_blob_id(hash)?;
        self.sorted.binary_search_by(|(i, _)| i.cmp(&id)).ok().map(|at| &self.sorted[at].1)
    }

    pub(crate) fn contains_key(&self, hash: &str) -> bool {
        self.get(hash).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.sorted.len()
    }
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
        Validator { schemas, problems: Vec::new(), unlisted: 0 }
    }

    /// Whether `rel` is the root `.nojekyll` that `publish` writes for GitHub Pages, and empty.
    fn is_empty_nojekyll<S: ByteSource>(&self, bundle: &Bundle<S>, rel: &str) -> bool {
        rel == paths::NOJEKYLL
            && BundlePath::new(rel).ok().and_then(|p| bundle.source().read(&p, 1).ok()).is_some_and(|b| b.is_empty())
    }

    fn problem(&mut self, p: impl std::fmt::Display) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(clip(p, MAX_PROBLEM_LEN));
        } else {
            self.unlisted += 1;
        }
    }

    /// Problems found so far, listed or not.
    fn found(&self) -> u64 {
        self.problems.len() as u64 + self.unlisted
    }

    fn finish(mut self) -> Vec<String> {
        if self.unlisted > 0 {
            self.problems.push(format!("... and {} more problem(s) not listed", self.unlisted));
        }
        self.problems
    }

    /// Checks `value` (from `file`, at `what`) against a schema of this format; reports the first
    /// error (jsonschema collects every error of a document at once, which a hostile document
    /// makes as many as it likes).
    fn check(&mut self, file: &str, what: &str, value: &Value, schema: &str) {
        let Some(validator) = self.schemas.get(schema) else {
            self.problem(format!("{file}{what}: no schema {schema} in this format"));
            return;
        };
        if let Err(e) = validator.validate(value) {
            let at = clip(e.instance_path(), 200);
            self.problem(format!("{file}{what}: does not follow {schema}: {} (at {at})", clip(&e, 300)));
        }
    }

    /// Listed files exist with their size, hash and schema; nothing unlisted under the names a
    /// bundle writes ([`paths::ROOT_NAMES`]) but the shipped viewer, and no GitHub Pages
    /// `.nojekyll` but an empty one (it holds nothing a reader could take for data); no symlinks
    /// or special files anywhere; schemas as this format writes them. Files beside those names
    /// are not the bundle's and are passed over.
    /// `listing` is every entry of the bundle, where the source can list them.
    fn files<S: ByteSource>(&mut self, bundle: &Bundle<S>, listing: Option<&[Listed]>) {
        let m = &bundle.manifest;
        let listed: BTreeSet<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
        for item in listing.unwrap_or_default() {
            match item {
                // Beside the bundle, not in it: never read (a Pages site's CNAME, its .git).
                Listed::File(rel) if !paths::is_under_bundle_names(rel) && rel != paths::NOJEKYLL => {}
                Listed::File(rel) => {
                    let unlisted =
                        rel != paths::MANIFEST && !listed.contains(rel.as_str()) && !paths::is_viewer_path(rel);
                    if unlisted && !self.is_empty_nojekyll(bundle, rel) {
                        self.problem(format!("{rel}: file is not listed in manifest.json"));
                    }
                }
                Listed::Other { path, what } => {
                    self.problem(format!("{path}: is {what}, which a bundle never holds; not followed"))
                }
            }
        }
        let ours: BTreeMap<String, Value> =
            schema::schemas().into_iter().map(|(n, s)| (format!("{}/{n}", paths::SCHEMA_DIR), s.to_value())).collect();
        for f in &m.files {
            self.file(bundle, f, &ours);
        }
    }

    /// `manifest.lite.json.zst`, which every bundle has: exactly the manifest without its file
    /// lists and hashes (`LiteManifest::from`), so that a viewer reading it first reads what the
    /// manifest says.
    fn lite_manifest<S: ByteSource>(&mut self, bundle: &Bundle<S>) {
        if !bundle.manifest.files.iter().any(|f| f.path == paths::MANIFEST_LITE) {
            return self.problem(format!("{}: not listed in manifest.json", paths::MANIFEST_LITE));
        }
        let m = &bundle.manifest;
        match bundle.json_zst::<schema::LiteManifest>(paths::MANIFEST_LITE) {
            Ok(lite) if lite == schema::LiteManifest::from(m) => {}
            Ok(_) => self.problem(format!(
                "{}: differs from manifest.json (it must be the manifest without `files`, `viewer` and the inputs' `blake3`)",
                paths::MANIFEST_LITE
            )),
            Err(e) => self.problem(e),
        }
    }

    /// One listed file: its bytes hashed as they stream by, its schema where it is one of ours.
    fn file<S: ByteSource>(&mut self, bundle: &Bundle<S>, f: &schema::FileEntry, ours: &BTreeMap<String, Value>) {
        match hash_file(bundle, &f.path) {
            Ok((size, blake3)) => {
                if size != f.size {
                    self.problem(format!("{}: size {size} but manifest.json says {}", f.path, f.size));
                }
                if blake3 != f.blake3 {
                    self.problem(format!("{}: blake3 does not match manifest.json", f.path));
                }
            }
            Err(e) => return self.problem(e),
        }
        if let Some(expected) = ours.get(&f.path) {
            let stored = bundle
                .source()
                .read(&BundlePath::new(&f.path).expect("read above"), 1 << 20)
                .ok()
                .and_then(|bytes| crate::reader::parse_json::<Value>(&f.path, &bytes, &bundle.limits).ok());
            if stored.as_ref() != Some(expected) {
                self.problem(format!("{}: differs from the format-{} schema", f.path, schema::FORMAT_VERSION));
            }
        }
        if f.schema != paths::schema_for(&f.path) {
            self.problem(format!("{}: schema should be {:?}", f.path, paths::schema_for(&f.path)));
        }
    }

    /// Shards well formed, every location inside its pack, every blob's hash right. Returns the
    /// blob index.
    fn blobs<S: ByteSource>(&mut self, bundle: &Bundle<S>) -> Locations {
        let locations = self.blob_index(bundle);
        self.packs(bundle, &locations);
        locations
    }

    /// Every shard of the blob index, read into one sorted list; incomplete (and not counted
    /// against the manifest) when a shard could not be read.
    fn blob_index<S: ByteSource>(&mut self, bundle: &Bundle<S>) -> Locations {
        let m = &bundle.manifest;
        let Some(shards) = self.shard_paths(bundle) else { return Locations::default() };
        let (mut found, mut complete) = (Vec::<(BlobId, BlobLocation)>::new(), true);
        for path in &shards {
            complete &= self.shard(bundle, path, &mut found);
            if found.len() as u64 > bundle.limits.blobs {
                self.problem(format!("blobs/index: more than {} blobs; the rest is not read", bundle.limits.blobs));
                complete = false;
                break;
            }
        }
        found.sort_unstable_by_key(|a| a.0);
        let before = found.len();
        found.dedup_by(|a, b| a.0 == b.0);
        if found.len() != before {
            self.problem(format!("blobs/index: {} blob(s) listed in two shards", before - found.len()));
        }
        found.shrink_to_fit();
        let locations = Locations { sorted: found, complete };
        if complete && locations.len() as u64 != m.counts.unique_blobs {
            self.problem(format!(
                "manifest.json: counts.unique_blobs is {}, but the blob index has {} blobs",
                m.counts.unique_blobs,
                locations.len()
            ));
        }
        locations
    }

    /// The path of every shard the manifest's blob store names, each listed and inside the
    /// bundle; `None` (with the problem) when they cannot be named.
    fn shard_paths<S: ByteSource>(&mut self, bundle: &Bundle<S>) -> Option<Vec<String>> {
        let m = &bundle.manifest;
        let prefix_len = m.blobs.index_prefix_len;
        if prefix_len > paths::MAX_SHARD_PREFIX_LEN {
            self.problem(format!(
                "manifest.json: blobs.index_prefix_len {prefix_len} is more than {}",
                paths::MAX_SHARD_PREFIX_LEN
            ));
            return None;
        }
        let template = &m.blobs.index_path;
        if let Err(e) = BundlePath::new(&template.replace("{prefix}", "all")) {
            self.problem(format!("manifest.json: blobs.index_path: {e}"));
            return None;
        }
        if template != paths::BLOB_INDEX_TEMPLATE {
            self.problem(format!(
                "manifest.json: blobs.index_path is {template:?}; this format's is {:?}",
                paths::BLOB_INDEX_TEMPLATE
            ));
            return None;
        }
        let shards: u64 = 1 << (4 * prefix_len);
        let listed: BTreeSet<&str> =
            m.files.iter().map(|f| f.path.as_str()).filter(|p| p.starts_with("blobs/index/")).collect();
        if shards > m.files.len() as u64 {
            self.problem(format!(
                "blobs/index: index_prefix_len {prefix_len} means {shards} shards, manifest.json lists {}",
                listed.len()
            ));
            return None;
        }
        let names: Vec<String> = match prefix_len {
            0 => vec!["all".to_string()],
            n => (0..shards).map(|i| format!("{i:0width$x}", width = n as usize)).collect(),
        };
        let expected: Vec<String> = names.iter().map(|n| paths::blob_index(n)).collect();
        for path in listed.iter().filter(|p| !expected.iter().any(|e| e == *p)) {
            self.problem(format!("{path}: not a shard of this blob index (index_prefix_len {prefix_len})"));
        }
        for path in expected.iter().filter(|p| !listed.contains(p.as_str())) {
            self.problem(format!("{path}: blob-index shard is not listed in manifest.json"));
        }
        Some(expected)
    }

    /// One blob-index shard: valid, every blob in its right shard and inside its pack. False
    /// when it could not be read whole.
    fn shard<S: ByteSource>(
        &mut self,
        bundle: &Bundle<S>,
        path: &str,
        found: &mut Vec<(BlobId, BlobLocation)>,
    ) -> bool {
        let m = &bundle.manifest;
        let value: Value = match bundle.json_zst(path) {
            Ok(v) => v,
            Err(e) => {
                self.problem(e);
                return false;
            }
        };
        self.check(path, "", &value, "schema/blob-index-shard.schema.json");
        let Value::Object(shard) = value else { return false };
        let start = self.found();
        for (hash, loc) in &shard {
            if self.found() - start > MAX_PROBLEMS_PER_FILE as u64 {
                self.problem(format!("{path}: more than {MAX_PROBLEMS_PER_FILE} problems; stopped reading it"));
                return false;
            }
            let (Some(id), Ok(loc)) = (parse_blob_id(hash), BlobLocation::deserialize(loc)) else {
                self.problem(format!("{path}: {:?} is not a blob id with a location", clip(hash, 80)));
                continue;
            };
            if paths::shard_name(hash, m.blobs.index_prefix_len).map(paths::blob_index).as_deref() != Some(path) {
                self.problem(format!("{path}: blob {hash} belongs in another shard"));
            }
            match usize::try_from(loc.pack).ok().and_then(|i| m.blobs.packs.get(i)) {
                None => self.problem(format!("{path}: blob {hash} names pack {} which does not exist", loc.pack)),
                Some(p) if loc.offset.checked_add(loc.size).is_none_or(|end| end > p.raw_size) => {
                    self.problem(format!(
                        "{path}: blob {hash} (offset {}, size {}) lies outside pack {}",
                        loc.offset, loc.size, p.path
                    ))
                }
                Some(_) => {}
            }
            found.push((id, loc));
        }
        true
    }

    /// Each pack holds the blobs the index says, each matching its id; read as a stream.
    fn packs<S: ByteSource>(&mut self, bundle: &Bundle<S>, locations: &Locations) {
        let m = &bundle.manifest;
        // Blobs by pack, then offset: 4 bytes a blob rather than a copy of the index.
        let mut order: Vec<u32> = (0..locations.sorted.len() as u32).collect();
        order.sort_unstable_by_key(|&i| {
            let loc = &locations.sorted[i as usize].1;
            (loc.pack, loc.offset)
        });
        let mut rest = &order[..];
        for (i, pack) in m.blobs.packs.iter().enumerate() {
            let in_pack = rest.partition_point(|&b| locations.sorted[b as usize].1.pack as usize == i);
            let (blobs, after) = rest.split_at(in_pack);
            rest = after;
            if locations.complete && blobs.len() as u64 != pack.blobs {
                self.problem(format!("{}: holds {} blobs, manifest.json says {}", pack.path, blobs.len(), pack.blobs));
            }
            let blobs: Vec<&(BlobId, BlobLocation)> = blobs.iter().map(|&b| &locations.sorted[b as usize]).collect();
            if let Err(e) = self.pack(bundle, i as u32, &blobs) {
                self.problem(e);
            }
        }
    }

    /// Streams one pack through, hashing its blobs (sorted by offset) on the way.
    fn pack<S: ByteSource>(
        &mut self,
        bundle: &Bundle<S>,
        number: u32,
        blobs: &[&(BlobId, BlobLocation)],
    ) -> Result<(), ReadError> {
        let (info, mut data) = bundle.open_pack(number)?;
        let failed = |e| crate::reader::read_failed(&info.path, e, info.raw_size);
        let mut at = 0u64;
        for (id, loc) in blobs {
            let Some(end) = loc.offset.checked_add(loc.size).filter(|&end| end <= info.raw_size) else {
                continue; // reported with its shard
            };
            if loc.size == 0 {
                // An empty blob (a payload of no bytes) holds none of the pack, so it overlaps
                // nothing, wherever it points; its id must be that of no bytes.
                if crate::ids::blob_id(&[]) != *id {
                    self.problem(format!("{}: blob {} does not match its hash", info.path, hex(id)));
                }
                continue;
            }
            if loc.offset < at {
                self.problem(format!("{}: blob {} overlaps the blob before it", info.path, hex(id)));
                continue;
            }
            let skipped =
                std::io::copy(&mut (&mut data).take(loc.offset - at), &mut std::io::sink()).map_err(failed)?;
            let mut hasher = blake3::Hasher::new();
            let hashed = std::io::copy(&mut (&mut data).take(loc.size), &mut hasher).map_err(failed)?;
            at += skipped + hashed;
            if at != end {
                break; // the pack is shorter than declared: reported below
            }
            if blob_id_of(&hasher) != *id {
                self.problem(format!("{}: blob {} does not match its hash", info.path, hex(id)));
            }
        }
        at += std::io::copy(&mut data, &mut std::io::sink()).map_err(failed)?;
        if at != info.raw_size {
            self.problem(format!("{}: decompresses to {at} bytes, manifest.json says {}", info.path, info.raw_size));
        }
        Ok(())
    }

    /// Index rows valid and consistent with the manifest, references resolvable; tables valid,
    /// and every reference in them resolvable. Returns every compile id the streams carry.
    fn streams<S: ByteSource>(&mut self, bundle: &Bundle<S>, locations: &Locations) -> refs::CompileIdSet {
        let m = &bundle.manifest;
        let mut compile_ids = refs::CompileIdSet::default();
        let listed: BTreeSet<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
        let (mut entries, mut all_read) = (0u64, true);
        for s in &m.streams {
            if !listed.contains(s.index.as_str()) || !listed.contains(s.stacks.as_str()) {
                self.problem(format!(
                    "manifest.json: stream {}: its index or stack table is not listed in files",
                    s.id
                ));
                all_read = false;
                continue;
            }
            let (stacks, frames) = self.stack_table(bundle, &s.stacks);
            let mut facts = refs::StreamFacts::new(stacks, frames);
            match self.index(bundle, s, &mut facts, locations) {
                Some(rows) => entries = entries.saturating_add(rows),
                None => all_read = false,
            }
            let within = refs::Within::Stream { id: &s.id, facts: &facts };
            for (name, t) in &s.tables {
                self.table(bundle, &listed, (Scope::Stream, &s.id), name, &t.parts, locations, &within);
            }
            compile_ids.extend(facts.into_compile_ids());
            if let Some(trace) = &s.chrome_trace {
                self.trace(bundle, &listed, trace);
            }
        }
        if all_read && entries != m.counts.entries {
            self.problem(format!(
                "manifest.json: counts.entries is {}, but the streams hold {entries}",
                m.counts.entries
            ));
        }
        compile_ids
    }

    /// A stack table: valid, every frame id it uses exists. Returns how many stacks and frames
    /// it has (all the index rows and tables need of it).
    fn stack_table<S: ByteSource>(&mut self, bundle: &Bundle<S>, path: &str) -> (u64, u64) {
        let value: Value = match bundle.json(path) {
            Ok(value) => value,
            Err(e) => {
                self.problem(e);
                return (0, 0);
            }
        };
        self.check(path, "", &value, "schema/stack-table.schema.json");
        let frames = value["frames"].as_array().map_or(0, Vec::len) as u64;
        let stacks = value["stacks"].as_array().map(Vec::as_slice).unwrap_or_default();
        let frame_ids = stacks.iter().filter_map(Value::as_array).flatten().filter_map(Value::as_u64);
        if let Some(bad) = frame_ids.into_iter().find(|&f| f >= frames) {
            self.problem(format!("{path}: a stack refers to frame {bad}, which does not exist"));
        }
        (stacks.len() as u64, frames)
    }

    /// A stream's index, a row at a time: valid rows, in order, their stacks and payloads there.
    /// Returns the number of rows, `None` when the index could not be read to its end.
    fn index<S: ByteSource>(
        &mut self,
        bundle: &Bundle<S>,
        s: &schema::Stream,
        facts: &mut refs::StreamFacts,
        locations: &Locations,
    ) -> Option<u64> {
        let stacks = facts.stacks();
        let mut rows = match bundle.index_lines::<Value>(s) {
            Ok(rows) => rows,
            Err(e) => {
                self.problem(e);
                return None;
            }
        };
        let (mut payload_bytes, mut n, start) = (0u64, 0u64, self.found());
        let mut numbering = RowNumbering::default();
        while let Some(value) = rows.next() {
            if self.found() - start >= MAX_PROBLEMS_PER_FILE as u64 {
                self.problem(format!("{}: more than {MAX_PROBLEMS_PER_FILE} problems; stopped reading it", s.index));
                return None;
            }
            let value = match value {
                Ok(value) => value,
                Err(e) => {
                    self.problem(e);
                    numbering.skip();
                    continue;
                }
            };
            let at = format!(":{}", rows.line_number());
            self.check(&s.index, &at, &value, "schema/index-row.schema.json");
            let Ok(mut row) = serde_json::from_value::<IndexRow>(value) else {
                numbering.skip();
                continue;
            };
            numbering.fill(&mut row);
            n += 1;
            facts.observe_row(&row);
            if let Some(id) = row.stack.filter(|&id| u64::from(id) >= stacks) {
                self.problem(format!("{}{at}: stack {id} does not exist", s.index));
            }
            if let Some(p) = row.payload {
                payload_bytes = payload_bytes.saturating_add(p.size);
                match locations.get(&p.hash) {
                    None if !locations.complete => {}
                    None => self.problem(format!("{}{at}: payload blob {} is not in the blob index", s.index, p.hash)),
                    Some(l) if l.size != p.size => {
                        self.problem(format!("{}{at}: payload size {} but blob has {}", s.index, p.size, l.size))
                    }
                    Some(_) => {}
                }
            }
        }
        if rows.cut_short() {
            return None;
        }
        if n != s.entries || payload_bytes != s.payload_bytes {
            self.problem(format!(
                "manifest.json: stream {}: index has {n} rows and {payload_bytes} payload bytes, manifest says {} and {}",
                s.id, s.entries, s.payload_bytes
            ));
        }
        Some(n)
    }

    /// A Chrome trace: listed, and a JSON object with a `traceEvents` list (streamed).
    fn trace<S: ByteSource>(&mut self, bundle: &Bundle<S>, listed: &BTreeSet<&str>, path: &str) {
        if !listed.contains(path) {
            return self.problem(format!("{path}: chrome trace is not listed in manifest.json"));
        }
        if let Err(e) = bundle.check_trace(path) {
            self.problem(e);
        }
    }

    /// One table: a table of this format, its parts where they should be, listed, each valid
    /// with every reference in it resolvable, and their members other than lists the same.
    #[allow(clippy::too_many_arguments)]
    fn table<S: ByteSource>(
        &mut self,
        bundle: &Bundle<S>,
        listed: &BTreeSet<&str>,
        (scope, dir): (Scope, &str),
        name: &str,
        parts: &[String],
        locations: &Locations,
        within: &refs::Within,
    ) {
        let Some(info) = registry::find(scope, name) else {
            self.problem(format!("manifest.json: {dir}: table {name} is not a table of this format"));
            return;
        };
        let placed = |(k, path): (usize, &String)| {
            listed.contains(path.as_str()) && *path == paths::table_part(dir, name, k, parts.len())
        };
        if parts.is_empty() || !parts.iter().enumerate().all(placed) {
            self.problem(format!(
                "manifest.json: {dir}: table {name}: its parts {parts:?} are not where they should be"
            ));
            return;
        }
        let mut first_members = None;
        let mut tiling = (scope == Scope::Stream && name == "compile_directory").then(ArtifactTiling::default);
        for path in parts {
            match bundle.json_zst::<Value>(path) {
                Ok(value) => {
                    self.check(path, "", &value, &format!("{}/{}", paths::SCHEMA_DIR, info.schema_file()));
                    if let Some(tiling) = &mut tiling {
                        tiling.add(&value);
                    }
                    for problem in refs::check_table(info, path, &value, locations, within) {
                        self.problem(problem);
                    }
                    let members = members_not_lists(value);
                    match &first_members {
                        None => first_members = Some(members),
                        Some(first) if *first != members => self.problem(format!(
                            "{path}: its members other than lists differ from those of {}, the table's first part",
                            parts[0]
                        )),
                        Some(_) => {}
                    }
                }
                Err(e) => self.problem(e),
            }
        }
        if let Some(problem) = tiling.and_then(|t| t.problem()) {
            self.problem(format!("{}: {problem}", parts[0]));
        }
    }

    /// Cross-rank tables where they should be and valid; the merged traces readable.
    fn cross_rank<S: ByteSource>(
        &mut self,
        bundle: &Bundle<S>,
        locations: &Locations,
        compile_ids: &refs::CompileIdSet,
    ) {
        let m = &bundle.manifest;
        let Some(c) = &m.cross_rank else { return };
        let listed: BTreeSet<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
        let members = c.members.iter().map(|r| r.stream.as_str()).collect();
        let within = refs::Within::CrossRank { members, compile_ids };
        for (name, t) in &c.tables {
            let at = (Scope::CrossRank, paths::CROSS_RANK_DIR);
            self.table(bundle, &listed, at, name, &t.parts, locations, &within);
        }
        for trace in [&c.chrome_trace, &c.runtime_estimates_trace].into_iter().flatten() {
            self.trace(bundle, &listed, trace);
        }
    }

    /// Diagnostics, a line at a time: valid rows, counted right, raw text present.
    fn diagnostics<S: ByteSource>(&mut self, bundle: &Bundle<S>, locations: &Locations) {
        let m = &bundle.manifest;
        let path = &m.diagnostics.path;
        let mut lines = match bundle.jsonl::<Value>(path) {
            Ok(lines) => lines.at_most(m.diagnostics.total),
            Err(e) => return self.problem(e),
        };
        let (mut by_kind, mut total, start) = (BTreeMap::<String, u64>::new(), 0u64, self.found());
        while let Some(value) = lines.next() {
            if self.found() - start >= MAX_PROBLEMS_PER_FILE as u64 {
                return self.problem(format!("{path}: more than {MAX_PROBLEMS_PER_FILE} problems; stopped reading it"));
            }
            total += 1;
            let value = match value {
                Ok(value) => value,
                Err(e) => {
                    self.problem(e);
                    continue;
                }
            };
            let at = format!(":{}", lines.line_number());
            self.check(path, &at, &value, "schema/diagnostic.schema.json");
            let Ok(d) = serde_json::from_value::<Diagnostic>(value) else { continue };
            *by_kind.entry(d.kind.as_str().to_string()).or_default() += 1;
            if d.raw.as_ref().is_some_and(|h| locations.lacks(h)) {
                self.problem(format!("{path}{at}: raw text blob is missing"));
            }
            if d.stream.as_ref().is_some_and(|id| !m.streams.iter().any(|s| &s.id == id)) {
                self.problem(format!("{path}{at}: names an unknown stream"));
            }
        }
        if !lines.cut_short() && (total != m.diagnostics.total || by_kind != m.diagnostics.by_kind) {
            self.problem(format!("{path}: counts do not match manifest.json"));
        }
    }
}

/// A file's size and blake3 (hex), hashed as it streams by.
fn hash_file<S: ByteSource>(bundle: &Bundle<S>, path: &str) -> Result<(u64, String), ReadError> {
    let mut file = bundle.open_file(path)?;
    let mut hasher = blake3::Hasher::new();
    let size = std::io::copy(&mut file, &mut hasher).map_err(|e| match e.kind() {
        std::io::ErrorKind::FileTooLarge => {
            crate::reader::invalid(path, format!("larger than {} bytes; refused", bundle.limits.file))
        }
        _ => crate::reader::invalid(path, format!("cannot be read: {e}")),
    })?;
    Ok((size, hex(hasher.finalize().as_bytes())))
}

/// A table part's top-level members that are not lists: what every part of a table repeats.
fn members_not_lists(value: Value) -> Value {
    match value {
        Value::Object(mut members) => {
            members.retain(|_, v| !v.is_array());
            Value::Object(members)
        }
        other => other,
    }
}

/// How a compile_directory's rows and its `artifacts` list fit, read part by part: each row's
/// `first_artifact` is the sum of the counts before it, and its `artifact_count` artifacts all
/// name its compile id. Held as the rows' (id, first, count) and the list's runs of one id.
#[derive(Default)]
struct ArtifactTiling {
    rows: Vec<(String, Option<u64>, Option<u64>)>,
    runs: Vec<(String, u64)>,
}

impl ArtifactTiling {
    fn add(&mut self, part: &Value) {
        for row in part["compiles"].as_array().into_iter().flatten() {
            let id = row["compile_id"].as_str().unwrap_or_default().to_owned();
            self.rows.push((id, row["first_artifact"].as_u64(), row["artifact_count"].as_u64()));
        }
        for artifact in part["artifacts"].as_array().into_iter().flatten() {
            let id = artifact["compile_id"].as_str().unwrap_or_default();
            match self.runs.last_mut() {
                Some((last, n)) if last == id => *n += 1,
                _ => self.runs.push((id.to_owned(), 1)),
            }
        }
    }

    /// The first place where rows and artifacts do not fit, if any. Two rows may show the same
    /// compile id (ids that differ only where the display has `-`), so each row takes its count
    /// of artifacts from the runs, wherever a run starts or ends.
    fn problem(&self) -> Option<String> {
        let mut next = 0u64;
        let mut runs = self.runs.iter().map(|(id, n)| (id.as_str(), *n));
        let mut current: Option<(&str, u64)> = None;
        for (id, first, count) in &self.rows {
            let (Some(first), Some(count)) = (*first, *count) else { continue }; // the schema check reports it
            let id = clip(id, 80);
            if first != next {
                return Some(format!("compile {id}: first_artifact {first}, but the compiles before it have {next}"));
            }
            let mut need = count;
            while need > 0 {
                let Some((of, left)) = current.take().or_else(|| runs.next()) else {
                    return Some(format!("compile {id}: artifact_count {count} runs past the end of artifacts"));
                };
                if of != id.as_str() {
                    let at = next + (count - need);
                    return Some(format!("compile {id}: artifact {at} is of compile {}", clip(of, 80)));
                }
                let took = left.min(need);
                need -= took;
                current = (left > took).then_some((of, left - took));
            }
            next += count;
        }
        current
            .or_else(|| runs.next())
            .map(|(of, _)| format!("artifacts {next}.. are of compile {}, which no row counts", clip(of, 80)))
    }
}
