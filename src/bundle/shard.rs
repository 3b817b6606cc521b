//! Shards: one log's part of a bundle, built where the log is (`tlparse-build shard`), and the
//! merge of shards into the bundle that one build of all their logs makes (`tlparse-build merge`).
//!
//! A shard is what a build keeps of one input before it knows the others: each stream's index,
//! stacks, tables and Chrome trace, the input's blob chunks with the blobs each holds, and its
//! diagnostics, described by `shard.json` (written last: a directory without it is not a shard).
//! Stream ids, the blob store's packs (deduplicated across inputs) and the cross-rank tables
//! depend on every input, so the merge makes them, through the very code a one-run build uses
//! ([`super::assemble`]); that is why the merged bundle is byte-identical to a one-run build.
//! Its layout is the compiler's own, not a format: a merge takes only shards of its own version.
//! A merge reads shard directories; the sharing layer (`publish::shards`) downloads shards
//! from a bucket into directories first.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};
use tlparse_bundle::ids::parse_blob_id;
use tlparse_bundle::registry::{self, Scope};
use tlparse_bundle::{BundlePath, ByteSource, DirSource, SourceError};

use super::blobs::{self, Chunk};
use super::file::{self, FileDiagnostic, FileResult, FileStream};
use super::inputs::{self, InputFile};
use super::stream::{AnalysisSummary, StagedTable, StreamSummary};
use super::{BuildError, Parts, Placement, output};
use crate::parse::{RankSlot, StreamKey};
use crate::schema::{DiagnosticKind, InputCompression, Manifest};

/// The file that makes a directory a shard.
pub const SHARD_MANIFEST: &str = "shard.json";
const SHARD_FORMAT: &str = "tlparse-build-shard";
/// The layout of a shard's files; merges also require the same compiler version.
const SHARD_LAYOUT: u32 = 2;
/// The blobs of every chunk, in chunk order: a 16-byte blob id and a little-endian u64 size each.
const SLOTS_FILE: &str = "slots.bin";
const SLOT_BYTES: usize = 24;

/// `shard.json`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardManifest {
    pub format: String,
    pub layout: u32,
    /// The compiler that built the shard (`tlparse-build` and its version).
    pub generator: String,
    pub input: ShardInput,
    pub streams: Vec<ShardStream>,
    pub diagnostics: Vec<ShardDiagnostic>,
    pub chunks: Vec<ShardChunk>,
    /// Every other file of the shard, checked before a merge uses it.
    pub files: Vec<ShardFile>,
}

/// The log a shard was built from.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardInput {
    /// Its path in the bundle (`inputs[].path`): its file name, or `--name`.
    pub name: String,
    pub size: u64,
    pub blake3: String,
    pub compression: InputCompression,
    pub rank_from_name: Option<u32>,
    pub lines: u64,
    pub bytes: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardStream {
    pub pid: u64,
    /// The rank the stream's entries named when not their process's own (`RankSlot::Other`).
    pub other_rank: Option<u32>,
    pub rank: Option<u32>,
    pub entries: u64,
    pub payload_bytes: u64,
    pub first_timestamp: String,
    pub last_timestamp: String,
    pub kinds: BTreeMap<String, u64>,
    pub compile_ids: u64,
    pub index: String,
    pub stacks: String,
    pub tables: Vec<ShardTable>,
    pub chrome_trace: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardTable {
    pub name: String,
    pub rows: u64,
    /// Its parts' files, in order.
    pub parts: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardDiagnostic {
    pub kind: DiagnosticKind,
    pub line: u64,
    pub end_line: u64,
    /// The stream's position in `streams`.
    pub stream: Option<usize>,
    pub message: String,
    pub raw: Option<String>,
    pub raw_size: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardChunk {
    pub path: String,
    pub size: u64,
    pub raw_size: u64,
    pub blake3: String,
    /// How many blobs it holds (their ids and sizes are in `slots.bin`).
    pub blobs: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardFile {
    pub path: String,
    pub size: u64,
    pub blake3: String,
}

/// What to build a shard of.
#[derive(Debug, Clone)]
pub struct ShardOptions {
    /// One log file.
    pub log: Utf8PathBuf,
    /// The shard directory to create.
    pub output: Utf8PathBuf,
    /// The log's path in the merged bundle, when not its file name: its path below the trace
    /// directory a one-run build would read (e.g. `host3/rank17.log`).
    pub name: Option<String>,
    pub overwrite: bool,
    pub max_line: usize,
}

/// Builds one log's shard; the directory appears whole or not at all.
pub fn build_shard(options: &ShardOptions) -> Result<ShardManifest, BuildError> {
    let found = inputs::discover(&options.log, false, &options.output)?;
    let mut input = found.inputs.into_iter().next().expect("a file is one input");
    if let Some(name) = &options.name {
        check_name(name)?;
        input.rank_from_name = crate::parse::rank_from_file_name(name.rsplit('/').next().unwrap_or(name));
        input.name = name.clone();
    }
    let out = options.output.as_std_path();
    if out.exists() && !(options.overwrite && out.join(SHARD_MANIFEST).is_file()) {
        return Err(if out.join(SHARD_MANIFEST).is_file() {
            BuildError::OutputExists(options.output.clone())
        } else {
            BuildError::Usage(format!("{}: exists and is not a shard; refusing to replace it", options.output))
        });
    }
    let staging = ShardStaging::create(out)?;
    let manifest = write_shard(&staging.path, &input, options.max_line)?;
    staging.install(out)?;
    Ok(manifest)
}

/// A path that stays inside a shard (or a log's name in the bundle): relative, `/`-separated,
/// no `.` or `..` part.
pub fn is_inside_path(path: &str) -> bool {
    !(path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path.split('/').any(|part| part.is_empty() || part == "." || part == ".."))
}

/// A name for the bundle: see [`is_inside_path`].
fn check_name(name: &str) -> Result<(), BuildError> {
    if !is_inside_path(name) {
        return Err(BuildError::Usage(format!(
            "--name {name:?}: give the log's path below the trace directory, relative, with `/` between parts"
        )));
    }
    Ok(())
}

/// Reads the log into `dir` and writes the files that describe it, `shard.json` last.
fn write_shard(dir: &Path, input: &InputFile, max_line: usize) -> Result<ShardManifest, BuildError> {
    let io_err = |e: io::Error| BuildError::io(dir.display(), e);
    let result = file::process_file(0, input, dir, &indicatif::ProgressBar::hidden(), max_line)
        .map_err(|e| output::file_error(&input.path, dir, e))?;
    let relative = |p: &Path| -> String {
        p.strip_prefix(dir).expect("the shard's files are in it").to_string_lossy().into_owned()
    };
    let FileResult { streams, diagnostics, chunks, lines, bytes, blake3, raw_bytes } = result;
    fs::create_dir_all(dir.join("tables")).map_err(io_err)?;
    let mut files = Vec::new();
    let mut shard_streams = Vec::new();
    for (k, s) in streams.iter().enumerate() {
        let mut tables = Vec::new();
        for t in &s.summary.analysis.tables {
            let mut parts = Vec::new();
            for (j, staged) in t.parts.iter().enumerate() {
                let path = format!("tables/s{k}-{}.{j}.json.zst", t.name);
                fs::rename(staged, dir.join(&path)).map_err(io_err)?;
                parts.push(path);
            }
            tables.push(ShardTable { name: t.name.to_string(), rows: t.rows, parts });
        }
        let summary = &s.summary;
        shard_streams.push(ShardStream {
            pid: s.key.pid,
            other_rank: match s.key.slot {
                RankSlot::Home => None,
                RankSlot::Other(r) => Some(r),
            },
            rank: s.rank,
            entries: summary.entries,
            payload_bytes: summary.payload_bytes,
            first_timestamp: summary.first_timestamp.clone(),
            last_timestamp: summary.last_timestamp.clone(),
            kinds: summary.kinds.clone(),
            compile_ids: summary.analysis.compile_ids,
            index: relative(&summary.index_path),
            stacks: relative(&summary.stacks_path),
            tables,
            chrome_trace: summary.analysis.chrome_trace_path.as_deref().map(relative),
        });
    }
    let mut slots = io::BufWriter::new(fs::File::create(dir.join(SLOTS_FILE)).map_err(io_err)?);
    let mut shard_chunks = Vec::new();
    chunks
        .for_each(|c| {
            for slot in &c.slots {
                slots.write_all(&slot.hash)?;
                slots.write_all(&slot.size.to_le_bytes())?;
            }
            shard_chunks.push(ShardChunk {
                path: relative(&c.path),
                size: c.size,
                raw_size: c.raw_size,
                blake3: blobs::hex(&c.file_hash),
                blobs: c.slots.len() as u64,
            });
            Ok(())
        })
        .map_err(io_err)?;
    slots.into_inner().map_err(|e| io_err(e.into_error()))?.sync_all().map_err(io_err)?;
    for s in &shard_streams {
        let paths = [&s.index, &s.stacks].into_iter().chain(s.tables.iter().flat_map(|t| &t.parts));
        for path in paths.chain(&s.chrome_trace) {
            files.push(describe(dir, path).map_err(io_err)?);
        }
    }
    files.push(describe(dir, SLOTS_FILE).map_err(io_err)?);
    let position = |key: StreamKey| streams.iter().position(|s| s.key == key);
    let manifest = ShardManifest {
        format: SHARD_FORMAT.into(),
        layout: SHARD_LAYOUT,
        generator: generator(),
        input: ShardInput {
            name: input.name.clone(),
            size: raw_bytes,
            blake3: blobs::hex(&blake3),
            compression: input.compression,
            rank_from_name: input.rank_from_name,
            lines,
            bytes,
        },
        diagnostics: diagnostics
            .into_iter()
            .map(|d| ShardDiagnostic {
                kind: d.kind,
                line: d.line,
                end_line: d.end_line,
                stream: d.stream.and_then(position),
                message: d.message,
                raw: d.raw.map(|h| blobs::hex(&h)),
                raw_size: d.raw_size,
            })
            .collect(),
        streams: shard_streams,
        chunks: shard_chunks,
        files,
    };
    super::write_json(&dir.join(SHARD_MANIFEST), &manifest, true).map_err(io_err)?;
    Ok(manifest)
}

fn generator() -> String {
    format!("{} {}", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
}

/// A file of the shard with its size and blake3.
fn describe(dir: &Path, path: &str) -> io::Result<ShardFile> {
    let (size, hash) = hash_file(&dir.join(path))?;
    Ok(ShardFile { path: path.to_string(), size, blake3: blobs::hex(&hash) })
}

fn hash_file(path: &Path) -> io::Result<(u64, [u8; 32])> {
    let mut hasher = blake3::Hasher::new();
    let size = io::copy(&mut fs::File::open(path)?, &mut hasher)?;
    Ok((size, *hasher.finalize().as_bytes()))
}

/// A shard being written: `.NAME.tlparse-shard-PID` next to it, removed unless installed.
struct ShardStaging {
    path: PathBuf,
    installed: bool,
}

impl ShardStaging {
    fn create(out: &Path) -> Result<ShardStaging, BuildError> {
        let name =
            out.file_name().ok_or_else(|| BuildError::Usage(format!("{}: not a directory name", out.display())))?;
        let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let path = parent.join(format!(".{}.tlparse-shard-{}", name.to_string_lossy(), std::process::id()));
        if path.exists() {
            fs::remove_dir_all(&path).map_err(|e| BuildError::io(path.display(), e))?;
        }
        fs::create_dir_all(&path).map_err(|e| BuildError::Write { path: path.display().to_string(), source: e })?;
        super::interrupt::remove_on_signal(&path);
        Ok(ShardStaging { path, installed: false })
    }

    /// Puts the shard at `out`, replacing an old shard there (checked by the caller).
    fn install(mut self, out: &Path) -> Result<(), BuildError> {
        let write = |e: io::Error| BuildError::Write { path: out.display().to_string(), source: e };
        // A SIGINT or SIGTERM waits for the shard to be in place.
        let mut removed_on_signal = super::interrupt::hold_signals();
        removed_on_signal.retain(|d| *d != self.path);
        if out.exists() {
            let old = self.path.with_extension("old");
            fs::rename(out, &old).map_err(write)?;
            fs::rename(&self.path, out).map_err(write)?;
            fs::remove_dir_all(&old).map_err(write)?;
        } else {
            fs::rename(&self.path, out).map_err(write)?;
        }
        self.installed = true;
        Ok(())
    }
}

impl Drop for ShardStaging {
    fn drop(&mut self) {
        if !self.installed {
            let _ = fs::remove_dir_all(&self.path);
            super::interrupt::keep_on_signal(&self.path);
        }
    }
}

/// A shard to merge: the directory its files are read from, and what errors call it (the
/// directory as given, or the URL the sharing layer downloaded it from).
#[derive(Debug, Clone)]
pub struct ShardDir {
    pub local: Utf8PathBuf,
    pub label: Utf8PathBuf,
}

impl ShardDir {
    /// A shard directory named as it is.
    pub fn local(dir: Utf8PathBuf) -> ShardDir {
        ShardDir { label: dir.clone(), local: dir }
    }
}

/// Where to merge shards to, and how.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    pub output: Utf8PathBuf,
    pub overwrite: bool,
    pub viewer: bool,
    /// Ranks 0..N must all be there: a shard missing from the list is an error, not a smaller job.
    pub expect_ranks: Option<u32>,
}

/// Why a merge refuses its shards.
pub fn refuse(shard: &Utf8Path, why: impl std::fmt::Display) -> BuildError {
    BuildError::Usage(format!("{shard}: {why}; nothing was written"))
}

/// Merges shard directories into one bundle, equal to a one-run build of their logs (the
/// manifest included); written whole or not at all.
pub fn merge(shards: &[ShardDir], options: &MergeOptions) -> Result<Manifest, BuildError> {
    if shards.is_empty() {
        return Err(BuildError::Usage("merge: no shards given".into()));
    }
    let target = merge_target(options)?;
    let staging = output::Staging::create(&target)?;
    let root = staging.path();
    super::make_dirs(root).map_err(|e| target.name_output(BuildError::io(root.display(), e), root))?;
    let mut loaded = load_on_every_core(shards, &root.join(".work")).map_err(|e| target.name_output(e, root))?;
    // The order a one-run build reads a trace directory in: ranked logs by rank, then by name.
    loaded.sort_by(|a, b| {
        let key = |s: &Loaded| (s.input.rank_from_name.is_none(), s.input.rank_from_name, s.input.name.clone());
        key(a).cmp(&key(b))
    });
    for pair in loaded.windows(2) {
        if pair[0].input.name == pair[1].input.name {
            return Err(refuse(
                &pair[1].dir,
                format_args!(
                    "the same log name {:?} as shard {}: give each log its own --name",
                    pair[1].input.name, pair[0].dir
                ),
            ));
        }
    }
    if let Some(n) = options.expect_ranks {
        check_ranks(&loaded, n)?;
    }
    // A damaged file is found in the shard or in the copy of it the merge checked.
    let labels: Vec<(PathBuf, Utf8PathBuf)> =
        loaded.iter().flat_map(|s| [(s.local.clone(), s.dir.clone()), (s.staged.clone(), s.dir.clone())]).collect();
    let inputs: Vec<InputFile> = loaded.iter().map(|s| s.input.clone()).collect();
    let results = loaded.into_iter().map(|s| s.result).collect();
    let parts = Parts {
        inputs: &inputs,
        results,
        diagnostics: Vec::new(),
        skipped: Vec::new(),
        viewer: options.viewer,
        placement: Placement::Copy,
        part_bytes: tlparse_bundle::parts::PART_BYTES,
    };
    let manifest = super::assemble(root, parts)
        .and_then(|manifest| {
            if options.viewer {
                super::write_viewer(root).map_err(|e| BuildError::io(root.display(), e))?;
            }
            Ok(manifest)
        })
        .map_err(|e| blame_shard(e, &labels).unwrap_or_else(|e| target.name_output(e, root)))?;
    staging.install(&target, options.overwrite)?;
    Ok(manifest)
}

/// OUT of a merge, checked before anything is read (or downloaded: the sharing layer calls this
/// first): stale staging directories removed, an existing bundle replaced only with
/// `--overwrite`.
pub fn merge_target(options: &MergeOptions) -> Result<output::Target, BuildError> {
    let target = output::Target::new(&options.output)?;
    target.clean_stale()?;
    target.check(options.overwrite)?;
    Ok(target)
}

/// A damaged file found while the bundle was assembled (a chunk, a table, a trace) is the
/// shard's fault, not OUT's: the error names the shard as given (`labels`: each shard's local
/// directory and its name).
fn blame_shard(error: BuildError, labels: &[(PathBuf, Utf8PathBuf)]) -> Result<BuildError, BuildError> {
    let BuildError::Io { source, .. } = &error else { return Err(error) };
    let Some(blobs::DamagedFile { path, why }) = source.get_ref().and_then(|e| e.downcast_ref()) else {
        return Err(error);
    };
    let Some((dir, label)) = labels.iter().find(|(dir, _)| path.starts_with(dir)) else { return Err(error) };
    let file = path.strip_prefix(dir).expect("found by prefix").display();
    Ok(refuse(label, format_args!("damaged shard: {file} {why}")))
}

/// Loads local shards on rayon's pool (hashing their files is most of a merge's first seconds),
/// each shard's files copied under `work` (`shard-N`). Results keep their shards' order, so the
/// error reported is the first in shard order, as one at a time.
fn load_on_every_core(shards: &[ShardDir], work: &Path) -> Result<Vec<Loaded>, BuildError> {
    use rayon::prelude::*;
    let results: Vec<Result<Loaded, BuildError>> = shards
        .par_iter()
        .enumerate()
        .map(|(i, shard)| load(&shard.local, &shard.label, &work.join(format!("shard-{i}"))))
        .collect();
    results.into_iter().collect()
}

/// With `--expect-ranks N`: every rank below N is some shard's (in its log's name or its
/// entries), and none is above.
fn check_ranks(loaded: &[Loaded], n: u32) -> Result<(), BuildError> {
    // A log's rank is in its name, or only in its entries; a copied log's entries may name
    // another rank than its name does.
    let ranks: std::collections::BTreeSet<u32> = loaded
        .iter()
        .flat_map(|s| s.result.streams.iter().filter_map(|st| st.rank).chain(s.input.rank_from_name))
        .collect();
    let missing: Vec<String> = (0..n).filter(|r| !ranks.contains(r)).map(|r| r.to_string()).collect();
    let extra: Vec<String> = ranks.range(n..).map(|r| r.to_string()).collect();
    if missing.is_empty() && extra.is_empty() {
        return Ok(());
    }
    let mut why = Vec::new();
    if !missing.is_empty() {
        why.push(format!("no shard has rank {}", abbreviate(&missing)));
    }
    if !extra.is_empty() {
        why.push(format!("rank {} is beyond --expect-ranks {n}", abbreviate(&extra)));
    }
    Err(BuildError::Usage(format!("merge: {}; nothing was written", why.join("; "))))
}

fn abbreviate(list: &[String]) -> String {
    if list.len() <= 10 {
        return list.join(", ");
    }
    format!("{} and {} more", list[..10].join(", "), list.len() - 10)
}

/// A shard read back, as a one-run build's reading of its input would have left it.
struct Loaded {
    /// The shard as given: its directory or URL.
    dir: Utf8PathBuf,
    /// Where its files are read.
    local: PathBuf,
    /// Where the merge keeps its copy of the shard's files but the chunks.
    staged: PathBuf,
    input: InputFile,
    result: FileResult,
}

/// Reads a shard's description and checks every file but the chunks (checked as they are
/// copied), copying each into `staged` as it is hashed: the merge reads only those copies, so a
/// shard changed after its check (a parent swapped for a symlink, a FIFO swapped in) changes
/// nothing it reads. Errors name the shard as given (`label`: its directory, or the URL it was
/// downloaded from).
fn load(local: &Utf8Path, label: &Utf8Path, staged: &Path) -> Result<Loaded, BuildError> {
    let root = local.as_std_path();
    let dir = label;
    let source = DirSource::new(root);
    let text = read_shard_manifest(&source, dir)?;
    let manifest: ShardManifest =
        serde_json::from_slice(&text).map_err(|e| refuse(dir, format_args!("damaged shard: {SHARD_MANIFEST}: {e}")))?;
    if manifest.format != SHARD_FORMAT || manifest.layout != SHARD_LAYOUT || manifest.generator != generator() {
        return Err(refuse(
            dir,
            format_args!(
                "built by {} (layout {}); this is {}: shards are merged by the version that built them",
                manifest.generator,
                manifest.layout,
                generator()
            ),
        ));
    }
    let mut checked = BTreeMap::new();
    for f in &manifest.files {
        inside(local, dir, &f.path)?;
        let copy = staged.join(&f.path);
        let (size, hash) = stage_shard_file(&source, &f.path, &copy, dir)?;
        if size != f.size || blobs::hex(&hash) != f.blake3 {
            return Err(refuse(dir, format_args!("damaged shard: {} does not match its size and blake3", f.path)));
        }
        checked.insert(f.path.as_str(), copy);
    }
    let file = |path: &str| -> Result<PathBuf, BuildError> {
        checked
            .get(path)
            .cloned()
            .ok_or_else(|| refuse(dir, format_args!("damaged shard: {path} is not among its files")))
    };
    let slots_path = file(SLOTS_FILE)?;
    check_slots(&slots_path, &manifest).map_err(|e| refuse(dir, e))?;
    let mut chunks = Vec::new();
    for c in &manifest.chunks {
        let path = inside(local, dir, &c.path)?;
        // Hashed as they are copied; a symlink or a FIFO in their place is refused before.
        let regular = BundlePath::new(&c.path).and_then(|p| source.open(&p, u64::MAX));
        regular.map_err(|e| refuse(dir, format_args!("damaged shard: {e}")))?;
        chunks.push(Chunk {
            path,
            file_hash: parse_hash(&c.blake3)
                .ok_or_else(|| refuse(dir, format_args!("damaged shard: chunk {}", c.path)))?,
            size: c.size,
            raw_size: c.raw_size,
            slots: Vec::new(),
            blobs: u32::try_from(c.blobs).map_err(|_| refuse(dir, format_args!("damaged shard: chunk {}", c.path)))?,
        });
    }
    let chunks = blobs::FileChunks::in_slot_file(chunks, slots_path);
    let mut streams = Vec::new();
    for s in &manifest.streams {
        let mut tables = Vec::new();
        for t in &s.tables {
            let info = registry::find(Scope::Stream, &t.name)
                .ok_or_else(|| refuse(dir, format_args!("damaged shard: unknown table {:?}", t.name)))?;
            if t.parts.is_empty() {
                return Err(refuse(dir, format_args!("damaged shard: table {:?} has no parts", t.name)));
            }
            let parts = t.parts.iter().map(|p| file(p)).collect::<Result<_, _>>()?;
            // Tables the cross-rank tables read are checked as they read them.
            tables.push(StagedTable { name: info.name, rows: t.rows, parts });
        }
        let chrome_trace_path = s.chrome_trace.as_deref().map(file).transpose()?;
        let key = StreamKey {
            pid: s.pid,
            slot: match s.other_rank {
                None => RankSlot::Home,
                Some(r) => RankSlot::Other(r),
            },
        };
        let index_path = file(&s.index)?;
        check_entries(&index_path, s).map_err(|why| refuse(dir, format_args!("damaged shard: {}: {why}", s.index)))?;
        let summary = StreamSummary {
            entries: s.entries,
            payload_bytes: s.payload_bytes,
            first_timestamp: s.first_timestamp.clone(),
            last_timestamp: s.last_timestamp.clone(),
            kinds: s.kinds.clone(),
            index_path,
            stacks_path: file(&s.stacks)?,
            analysis: AnalysisSummary {
                tables,
                table_diagnostics: Vec::new(),
                chrome_trace_path,
                compile_ids: s.compile_ids,
                // A merge prints no findings.
                findings: Default::default(),
            },
        };
        streams.push(FileStream { key, rank: s.rank, summary });
    }
    let mut diagnostics = Vec::new();
    for d in manifest.diagnostics {
        let stream = match d.stream {
            Some(k) => {
                Some(streams.get(k).map(|s| s.key).ok_or_else(|| refuse(dir, "damaged shard: a diagnostic's stream"))?)
            }
            None => None,
        };
        let raw = match &d.raw {
            Some(hex) => Some(parse_blob_id(hex).ok_or_else(|| refuse(dir, "damaged shard: a diagnostic's raw blob"))?),
            None => None,
        };
        diagnostics.push(FileDiagnostic {
            kind: d.kind,
            line: d.line,
            end_line: d.end_line,
            stream,
            message: d.message,
            raw,
            raw_size: d.raw_size,
        });
    }
    let i = &manifest.input;
    let blake3 = parse_hash(&i.blake3).ok_or_else(|| refuse(dir, "damaged shard: the input's blake3"))?;
    let input = InputFile {
        path: label.to_owned().into(),
        name: i.name.clone(),
        size: i.size,
        compression: i.compression,
        rank_from_name: i.rank_from_name,
        identity: (0, 0),
    };
    if !is_inside_path(&input.name) {
        return Err(refuse(dir, format_args!("damaged shard: input name {:?}", i.name)));
    }
    let result = FileResult { streams, diagnostics, chunks, lines: i.lines, bytes: i.bytes, blake3, raw_bytes: i.size };
    Ok(Loaded { dir: dir.to_owned(), local: root.to_owned(), staged: staged.to_owned(), input, result })
}

/// `shard.json`, read only as a regular file inside the shard (never through a symlink, never
/// blocking on a FIFO or a device).
fn read_shard_manifest(source: &DirSource, dir: &Utf8Path) -> Result<Vec<u8>, BuildError> {
    let root = source.root();
    match source.read(&BundlePath::new(SHARD_MANIFEST).expect("a plain name"), u64::MAX) {
        Ok(text) => Ok(text),
        Err(SourceError::NotFound { .. }) => {
            let why = if root.is_dir() {
                "not a finished shard (no shard.json: its shard build failed, was stopped, or is still running)"
            } else {
                "no such shard directory"
            };
            Err(refuse(dir, why))
        }
        Err(SourceError::Io { source, .. }) => Err(BuildError::io(dir.join(SHARD_MANIFEST), source)),
        Err(e) => Err(refuse(dir, format_args!("damaged shard: {e}"))),
    }
}

/// Copies a shard's file (`rel`, opened only as a regular file inside the shard) to `to`;
/// returns the size and blake3 of the copy. A file the shard cannot give refuses the shard
/// (`dir`); a failed write is the output's error.
fn stage_shard_file(source: &DirSource, rel: &str, to: &Path, dir: &Utf8Path) -> Result<(u64, [u8; 32]), BuildError> {
    let damaged = |e: SourceError| refuse(dir, format_args!("damaged shard: {e}"));
    let mut from = BundlePath::new(rel).and_then(|p| source.open_checked(&p, u64::MAX)).map_err(damaged)?;
    let written = |e| BuildError::io(to.display(), e);
    fs::create_dir_all(to.parent().expect("a file under the staging directory")).map_err(written)?;
    // File to file, so the kernel copies (copy_file_range); the copy is then hashed.
    io::copy(&mut from, &mut fs::File::create(to).map_err(written)?).map_err(written)?;
    hash_file(to).map_err(written)
}

/// Checks a stream's index holds the `entries` its `shard.json` declares (they go into the
/// merged manifest as they are), counting its rows up to one past them.
fn check_entries(index: &Path, stream: &ShardStream) -> Result<(), String> {
    let rows = count_rows(index, stream.entries).map_err(|e| format!("cannot be read: {e}"))?;
    match rows.cmp(&stream.entries) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Greater => {
            Err(format!("holds more rows than the {} entries shard.json declares", stream.entries))
        }
        std::cmp::Ordering::Less => {
            Err(format!("holds {rows} rows, fewer than the {} entries shard.json declares", stream.entries))
        }
    }
}

/// The lines of a zstd file, counted until there are more than `most`.
fn count_rows(path: &Path, most: u64) -> io::Result<u64> {
    use std::io::Read;
    let mut decoder = zstd::stream::read::Decoder::new(fs::File::open(path)?)?;
    decoder.window_log_max(tlparse_bundle::reader::MAX_ZSTD_WINDOW_LOG)?;
    let (mut rows, mut buffer) = (0u64, vec![0u8; 1 << 16]);
    while rows <= most {
        let read = decoder.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        rows += buffer[..read].iter().filter(|&&b| b == b'\n').count() as u64;
    }
    Ok(rows)
}

/// A path the shard named `label` lists, kept inside its local copy `dir`.
fn inside(dir: &Utf8Path, label: &Utf8Path, path: &str) -> Result<PathBuf, BuildError> {
    if !is_inside_path(path) {
        return Err(refuse(label, format_args!("damaged shard: a path outside it ({path:?})")));
    }
    Ok(dir.as_std_path().join(path))
}

/// Checks `slots.bin` holds exactly the slots the chunks list (its bytes were checked against
/// the shard's blake3 already; the chunks read their slots from it in order).
fn check_slots(path: &Path, manifest: &ShardManifest) -> Result<(), String> {
    let expected: u64 = manifest.chunks.iter().map(|c| c.blobs).sum();
    let size = fs::metadata(path).map_err(|e| format!("{SLOTS_FILE}: {e}"))?.len();
    if size != expected.saturating_mul(SLOT_BYTES as u64) {
        return Err(format!("damaged shard: {SLOTS_FILE} does not hold the {expected} blobs its chunks list"));
    }
    Ok(())
}

/// A blake3 hash written as 64 lowercase hex digits.
fn parse_hash(hex: &str) -> Option<[u8; 32]> {
    let (high, low) = (parse_blob_id(hex.get(..32)?)?, parse_blob_id(hex.get(32..)?)?);
    let mut out = [0u8; 32];
    out[..16].copy_from_slice(&high);
    out[16..].copy_from_slice(&low);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Once a shard is checked, the merge reads its own copies of the shard's files (all but the
    /// chunks, which are checked against their hash as they are copied): a shard changed after
    /// its check (a parent swapped for a symlink out of it, a file for a FIFO, here the whole
    /// shard gone) changes nothing the merge reads.
    #[test]
    fn a_merge_reads_the_copies_it_checked_not_the_shard() {
        let tmp = tempfile::tempdir().unwrap();
        let shard = Utf8PathBuf::from_path_buf(tmp.path().join("shard")).unwrap();
        let log =
            Utf8PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures-repo/tlparse-tests/comp_metrics.log"));
        let options = ShardOptions { log, output: shard.clone(), name: None, overwrite: false, max_line: 1 << 20 };
        let written = build_shard(&options).unwrap();
        let before: BTreeMap<&str, Vec<u8>> =
            written.files.iter().map(|f| (f.path.as_str(), fs::read(shard.join(&f.path)).unwrap())).collect();
        let staged = tmp.path().join("work/shard-0");
        let loaded = load(&shard, &shard, &staged).unwrap();
        fs::remove_dir_all(&shard).unwrap();
        let read: Vec<&PathBuf> = loaded_files(&loaded).collect();
        assert!(read.len() >= 3, "index, stacks and tables at least: {read:?}");
        for path in read {
            let rel = path.strip_prefix(&staged).expect("a copy the merge made").to_str().unwrap();
            assert_eq!(fs::read(path).unwrap(), before[rel], "{rel}");
        }
    }

    /// Every file of a loaded shard the merge reads but its chunks.
    fn loaded_files(loaded: &Loaded) -> impl Iterator<Item = &PathBuf> {
        loaded.result.streams.iter().flat_map(|s| {
            let a = &s.summary.analysis;
            [&s.summary.index_path, &s.summary.stacks_path]
                .into_iter()
                .chain(a.tables.iter().flat_map(|t| t.parts.iter()))
                .chain(a.chrome_trace_path.iter())
        })
    }
}
