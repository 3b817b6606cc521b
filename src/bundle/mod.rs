//! The only code that writes: builds a bundle from TORCH_TRACE logs (blobs, index, tables,
//! manifest), atomically. The strict reader is the format crate's, re-exported as `reader`.

pub mod blobs;
pub mod file;
pub mod inputs;
pub mod interrupt;
pub mod locations;
pub mod merged_trace;
pub mod output;
mod seen;
pub mod shard;
mod store_payloads;
pub mod stream;
pub mod table_files;

pub use tlparse_bundle::{paths, reader};

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::thread::ScopedJoinHandle;

use camino::Utf8PathBuf;
use rayon::prelude::*;

use crate::analysis::StreamFindings;
use crate::analysis::alignment::Alignment;
use crate::analysis::cross_rank::{self, StreamTables, TableSource};
use crate::schema::cross_rank::{CrossRank, RankMember};
use crate::schema::{
    self, BlobStore, Counts, Diagnostic, DiagnosticsSummary, FileEntry, Generator, Input, Manifest, Stream, TableRef,
};
use crate::viewer;
use file::FileResult;

/// Why a build could not be done at all. Problems inside logs are never errors: they become
/// diagnostics in the bundle.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path} is not a TORCH_TRACE log: {reason}")]
    NotATrace { path: Utf8PathBuf, reason: String },
    #[error("no TORCH_TRACE logs found in {path}: {found}")]
    NoLogs { path: Utf8PathBuf, found: String },
    #[error("{0} already exists; pass --overwrite to replace it")]
    OutputExists(Utf8PathBuf),
    #[error("{0} exists and is not a tlparse-build bundle; refusing to delete it")]
    NotABundle(Utf8PathBuf),
    #[error(
        "{0}: not a file of the bundle it is in (its manifest.json does not list it); refusing to replace the \
         bundle: move it out of the way, or build elsewhere"
    )]
    NotInBundle(String),
    #[error("writing {path}: {source}")]
    Write { path: String, source: io::Error },
    #[error("{out}: replacing the old bundle failed ({step}: {source}); {outcome}")]
    Replace { out: String, step: String, source: io::Error, outcome: String },
    #[error(
        "{out}: an earlier build stopped while replacing the bundle, and putting the old bundle back from {backup} \
         failed ({step}: {source})"
    )]
    Recover { out: String, backup: String, step: String, source: io::Error },
    #[error(
        "{out}: the bundle built does not read back ({reason}); it was not installed, and what was at {out} is \
         left as it was"
    )]
    Unreadable { out: String, reason: String },
    #[error("{0}")]
    Usage(String),
}

impl BuildError {
    pub fn io(path: impl std::fmt::Display, source: io::Error) -> Self {
        BuildError::Io { path: path.to_string(), source }
    }
}

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// A log file or a trace directory.
    pub input: Utf8PathBuf,
    /// The bundle directory to create.
    pub output: Utf8PathBuf,
    /// Replace an existing bundle at `output`.
    pub overwrite: bool,
    /// Read only the newest log of a directory.
    pub latest: bool,
    /// Show a progress bar (it stays hidden anyway when stderr is not a terminal).
    pub progress: bool,
    /// Ship the reference viewer in the bundle (`index.html` and `viewer/`).
    pub viewer: bool,
    /// The most bytes of one line or payload held in memory ([`DEFAULT_MAX_LINE`]): a longer
    /// header or stray line becomes a `line_too_long` diagnostic, a longer payload a
    /// `payload_too_large` one; both are streamed to the blob store, never held whole.
    pub max_line: usize,
}

/// The default line limit, 16 MiB: hundreds of times the longest line or payload of the real
/// logs we have seen (90 KB), while a build holds at most a few such records per input at once.
pub const DEFAULT_MAX_LINE: usize = 16 << 20;

/// Builds a bundle and returns its manifest.
pub fn build(options: &BuildOptions) -> Result<Manifest, BuildError> {
    build_with_findings(options).map(|(manifest, _)| manifest)
}

/// What each stream's tables found, by stream id, as a build's closing lines say it.
pub type Findings = BTreeMap<String, StreamFindings>;

/// Builds a bundle and returns its manifest, with what its streams' tables found (gathered as
/// they finished, so nothing is read back).
pub fn build_with_findings(options: &BuildOptions) -> Result<(Manifest, Findings), BuildError> {
    build_with_tables(options, &table_files::TableOptions::default())
}

/// Builds a bundle whose tables are kept and finished as `tables` say.
pub(crate) fn build_with_tables(
    options: &BuildOptions,
    tables: &table_files::TableOptions,
) -> Result<(Manifest, Findings), BuildError> {
    build_checked(options, tables, |_, _, _| Ok(())).map(|(manifest, findings, ())| (manifest, findings))
}

/// Builds a bundle, then reads it with `check` (given its staging directory, its manifest and
/// findings) before it replaces OUT: whatever can fail after the build (reading back what a
/// summary says) fails while the old bundle is still in place, and is then left there. What
/// `check` returns comes back with the manifest.
pub fn build_checked<T>(
    options: &BuildOptions,
    tables: &table_files::TableOptions,
    check: impl FnOnce(&Path, &Manifest, &Findings) -> Result<T, String>,
) -> Result<(Manifest, Findings, T), BuildError> {
    let found = inputs::discover(&options.input, options.latest, &options.output)?;
    let target = output::Target::new(&options.output)?;
    target.clean_stale()?;
    target.check(options.overwrite)?;
    let staging = output::Staging::create(&target)?;
    let root = staging.path();
    let built = build_into(root, &found, options, tables)
        .and_then(|built| {
            if options.viewer {
                write_viewer(root).map_err(|e| BuildError::io(root.display(), e))?;
            }
            Ok(built)
        })
        .map_err(|e| target.name_output(e, root))?;
    let checked = check(root, &built.0, &built.1)
        .map_err(|reason| BuildError::Unreadable { out: options.output.to_string(), reason })?;
    staging.install(&target, options.overwrite)?;
    Ok((built.0, built.1, checked))
}

/// Writes the embedded reference viewer into the bundle; the manifest lists these files under
/// `viewer` (from [`viewer::manifest_entries`]), not under `files`.
fn write_viewer(root: &Path) -> io::Result<()> {
    for (path, bytes) in viewer::FILES {
        let file = root.join(path);
        fs::create_dir_all(file.parent().expect("viewer files are under the root"))?;
        fs::write(file, bytes)?;
    }
    Ok(())
}

/// Makes the directories every bundle (and a build's `.work`) has.
fn make_dirs(root: &Path) -> io::Result<()> {
    for dir in [".work", "index", "stacks", "blobs/index", paths::SCHEMA_DIR] {
        fs::create_dir_all(root.join(dir))?;
    }
    Ok(())
}

fn build_into(
    root: &Path,
    found: &inputs::Discovery,
    options: &BuildOptions,
    tables: &table_files::TableOptions,
) -> Result<(Manifest, Findings), BuildError> {
    let io_err = |e: io::Error| BuildError::io(root.display(), e);
    make_dirs(root).map_err(io_err)?;
    let work = root.join(".work");

    let total: u64 = found.inputs.iter().map(|i| i.size).sum();
    let progress = if options.progress {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} reading logs {bar:30} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .expect("valid template"),
        );
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    // A failed write stops every input (the others would only fill the disk further); the
    // failure reported is the first that was not only stopped by another.
    let stop = file::StopFlag::default();
    let read: Vec<io::Result<FileResult>> = found
        .inputs
        .par_iter()
        .enumerate()
        .map(|(i, input)| {
            let read = file::process_file_with(i, input, &work, &progress, options.max_line, tables.clone(), &stop);
            file::stop_on_error(&stop, read)
        })
        .collect();
    let mut results = Vec::with_capacity(read.len());
    let mut failures = Vec::new();
    for (result, input) in read.into_iter().zip(&found.inputs) {
        match result {
            Ok(result) => results.push(result),
            Err(e) => failures.push((e, input)),
        }
    }
    if !failures.is_empty() {
        let reported = failures.iter().position(|(e, _)| !file::is_stopped(e)).unwrap_or(0);
        let (e, input) = failures.swap_remove(reported);
        return Err(output::file_error(&input.path, root, e));
    }
    progress.finish_and_clear();
    let findings = stream_ids(&results)
        .into_iter()
        .zip(streams_of(&results).map(|s| s.summary.analysis.findings.clone()))
        .collect();
    let parts = Parts {
        inputs: &found.inputs,
        results,
        diagnostics: found.diagnostics.clone(),
        skipped: found.skipped_groups(),
        viewer: options.viewer,
        placement: Placement::Move,
        part_bytes: tables.part_bytes,
    };
    Ok((assemble(root, parts)?, findings))
}

/// How the blob chunks each input's reading made get into the bundle: moved, when this build
/// made them in its `.work`; copied from shards, which stay as they were (each checked against
/// its hash as it is copied or read). Every other file (index, stacks, tables, Chrome trace) is
/// the build's own, in its `.work` (a merge's copies of its shards' files), and is moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Move,
    Copy,
}

/// Moves every `(from, to)` into place.
fn move_all(files: &[(PathBuf, PathBuf)]) -> io::Result<()> {
    files.iter().try_for_each(|(from, to)| fs::rename(from, to))
}

/// What every input's reading gave, in input order: the rest of a bundle is made from this
/// alone, whether the inputs were read by this build or by shard builds elsewhere.
struct Parts<'a> {
    inputs: &'a [inputs::InputFile],
    results: Vec<FileResult>,
    /// Logs lost whole (`unreadable_log`).
    diagnostics: Vec<Diagnostic>,
    skipped: Vec<schema::Skipped>,
    viewer: bool,
    placement: Placement,
    /// Bytes of JSON in a part of a cross-rank table ([`table_files::TableOptions::part_bytes`]).
    part_bytes: u64,
}

/// Makes the bundle under `root` from its inputs' parts: stream ids, the blob store (deduplicated
/// across inputs, in input order), the cross-rank tables (from the streams' tables), diagnostics,
/// schemas and the manifest.
fn assemble(root: &Path, parts: Parts) -> Result<Manifest, BuildError> {
    // The schemas owe nothing to the inputs: generating them is a fixed cost of every build, at
    // its end where one core works alone, so they are written meanwhile.
    std::thread::scope(|scope| {
        let schemas = scope.spawn(|| write_schemas(root));
        let ids = stream_ids(&parts.results);
        // Cross-rank tables need every stream's tables; a single stream has nothing to compare.
        let members = (ids.len() >= 2).then(|| members(&ids, &parts));
        // The merged Chrome trace (gunzip and gzip of every stream's trace, the most of a
        // merge's work) reads only the streams' traces: it is written while the rest is done.
        let merged_trace = members.clone().map(|members| {
            let traces: Vec<Option<PathBuf>> =
                streams_of(&parts.results).map(|s| s.summary.analysis.chrome_trace_path.clone()).collect();
            scope.spawn(move || write_merged_trace(root, &members, &traces))
        });
        let cross_rank = members.zip(merged_trace);
        assemble_parts(root, parts, ids, schemas, cross_rank)
    })
}

fn streams_of(results: &[FileResult]) -> impl Iterator<Item = &file::FileStream> {
    results.iter().flat_map(|f| &f.streams)
}

/// Each stream's id, in stream order: `rank{N}` (suffixed `-{k}` when several streams share a
/// rank), `log{k}` else.
fn stream_ids(results: &[FileResult]) -> Vec<String> {
    let mut per_rank: BTreeMap<u32, usize> = BTreeMap::new();
    for r in streams_of(results).filter_map(|s| s.rank) {
        *per_rank.entry(r).or_default() += 1;
    }
    let mut seen_rank: BTreeMap<u32, usize> = BTreeMap::new();
    let mut unranked = 0;
    let id = |s: &file::FileStream| match s.rank {
        Some(r) if per_rank[&r] == 1 => format!("rank{r}"),
        Some(r) => {
            let k = seen_rank.entry(r).or_default();
            *k += 1;
            format!("rank{r}-{}", *k - 1)
        }
        None => {
            unranked += 1;
            format!("log{}", unranked - 1)
        }
    };
    streams_of(results).map(id).collect()
}

/// The streams as members of the cross-rank tables, labelled.
fn members(ids: &[String], parts: &Parts) -> Vec<RankMember> {
    let file_ranks =
        parts.results.iter().zip(parts.inputs).flat_map(|(f, i)| f.streams.iter().map(|_| i.rank_from_name));
    let mut members: Vec<RankMember> = streams_of(&parts.results)
        .zip(file_ranks)
        .zip(ids)
        .map(|((s, file_rank), id)| RankMember { stream: id.clone(), rank: s.rank, file_rank, label: String::new() })
        .collect();
    cross_rank::labels(&mut members);
    members
}

/// Writes the merged Chrome trace from the streams' traces where they were written (a shard's
/// files, a build's work directory); its path, `None` when no stream has a trace.
fn write_merged_trace(root: &Path, members: &[RankMember], traces: &[Option<PathBuf>]) -> io::Result<Option<String>> {
    if traces.iter().any(Option::is_some) {
        fs::create_dir_all(root.join("tables").join(schema::cross_rank::DIR))?;
    }
    let merged = paths::chrome_trace(schema::cross_rank::DIR);
    Ok(merged_trace::merge(&root.join(&merged), members, traces)?.then_some(merged))
}

/// Writes the bundle's JSON Schemas under `schema/`.
fn write_schemas(root: &Path) -> io::Result<()> {
    for (name, schema) in schema::schemas() {
        let path = root.join(paths::SCHEMA_DIR).join(name);
        fs::create_dir_all(path.parent().expect("schema files are in schema/"))?;
        write_json(&path, &schema, true)?;
    }
    Ok(())
}

/// [`assemble`], given the thread writing the schemas (joined before the files are listed).
fn assemble_parts(
    root: &Path,
    parts: Parts,
    ids: Vec<String>,
    schemas: ScopedJoinHandle<'_, io::Result<()>>,
    cross_rank: Option<(Vec<RankMember>, MergedTrace<'_>)>,
) -> Result<Manifest, BuildError> {
    let io_err = |e: io::Error| BuildError::io(root.display(), e);
    let Parts { inputs: found_inputs, results, diagnostics: lost, skipped, viewer, placement, part_bytes } = parts;
    let work = root.join(".work");

    let compare = cross_rank.is_some();
    let mut stream_ids = ids.into_iter();
    // Each compared stream's tables, where they are placed: read once they are.
    let mut compared_tables: Vec<BTreeMap<&'static str, TableSource>> = Vec::new();
    // Where each compared stream's tables were read from: a damaged one is named by it.
    let mut table_sources: Vec<BTreeMap<&'static str, PathBuf>> = Vec::new();
    let mut streams = Vec::new();
    let mut manifest_inputs = Vec::new();
    // Logs lost whole come first; then each input's, in input order.
    let mut diagnostics = lost;
    let mut chunks = Vec::new();
    // Each stream's files (index, stacks, tables, trace) and where they go in the bundle.
    let mut to_place: Vec<(PathBuf, PathBuf)> = Vec::new();
    // The streams' traces, when the merged trace is reading them: placed once it is written.
    let mut traces_to_place: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut raw_bytes = 0;
    let mut counts = Counts {
        entries: 0,
        lines: 0,
        input_bytes: 0,
        payload_bytes: 0,
        unique_blobs: 0,
        unique_blob_bytes: 0,
        packed_bytes: 0,
        dedup_saved_bytes: 0,
        cross_input_saved_bytes: 0,
        bundle_bytes: 0,
    };
    // Each input's distinct blob bytes (its chunks hold each of its blobs once).
    let per_input_unique: u64 = results.iter().map(|f| f.chunks.raw_bytes()).sum();
    for (input_idx, (input, result)) in found_inputs.iter().zip(results).enumerate() {
        let mut ids = BTreeMap::new();
        let mut input_streams = Vec::new();
        for s in result.streams {
            let id = stream_ids.next().expect("an id per stream");
            to_place.push((s.summary.index_path.clone(), root.join(paths::index(&id))));
            to_place.push((s.summary.stacks_path.clone(), root.join(paths::stacks(&id))));
            let mut tables = BTreeMap::new();
            if !s.summary.analysis.tables.is_empty() || s.summary.analysis.chrome_trace_path.is_some() {
                fs::create_dir_all(root.join("tables").join(&id)).map_err(io_err)?;
            }
            let mut member_tables = BTreeMap::new();
            let mut sources = BTreeMap::new();
            for t in &s.summary.analysis.tables {
                let count = t.parts.len();
                let parts: Vec<String> = (0..count).map(|k| paths::table_part(&id, t.name, k, count)).collect();
                let placed: Vec<PathBuf> = parts.iter().map(|p| root.join(p)).collect();
                if compare && cross_rank::READS.contains(&t.name) {
                    // Read where it is placed, one stream's at a time, and checked as it is
                    // parsed (a shard's may be damaged).
                    member_tables.insert(t.name, Box::new(PlacedTable(placed.clone())) as TableSource);
                    sources.insert(t.name, t.parts[0].clone());
                }
                to_place.extend(t.parts.iter().cloned().zip(placed));
                tables.insert(t.name.to_string(), TableRef { parts, rows: t.rows });
            }
            if compare {
                compared_tables.push(member_tables);
                table_sources.push(sources);
            }
            let chrome_trace = match &s.summary.analysis.chrome_trace_path {
                Some(p) => {
                    let path = paths::chrome_trace(&id);
                    let place = if compare { &mut traces_to_place } else { &mut to_place };
                    place.push((p.clone(), root.join(&path)));
                    Some(path)
                }
                None => None,
            };
            counts.entries += s.summary.entries;
            counts.payload_bytes += s.summary.payload_bytes;
            ids.insert(s.key, id.clone());
            input_streams.push(id.clone());
            streams.push(Stream {
                index: paths::index(&id),
                stacks: paths::stacks(&id),
                id,
                rank: s.rank,
                pid: s.key.pid,
                input: input_idx,
                entries: s.summary.entries,
                payload_bytes: s.summary.payload_bytes,
                first_timestamp: s.summary.first_timestamp,
                last_timestamp: s.summary.last_timestamp,
                kinds: s.summary.kinds,
                compile_ids: s.summary.analysis.compile_ids,
                tables,
                chrome_trace,
            });
        }
        for d in result.diagnostics {
            raw_bytes += d.raw_size;
            diagnostics.push(Diagnostic {
                kind: d.kind,
                file: input.name.clone(),
                line: d.line,
                end_line: d.end_line,
                stream: d.stream.and_then(|k| ids.get(&k).cloned()),
                message: d.message,
                raw: d.raw.map(|h| blobs::hex(&h)),
            });
        }
        counts.lines += result.lines;
        counts.input_bytes += result.bytes;
        chunks.push(result.chunks);
        manifest_inputs.push(Input {
            path: input.name.clone(),
            size: result.raw_bytes,
            blake3: blobs::hex(&result.blake3),
            compression: input.compression,
            rank_from_name: input.rank_from_name,
            lines: result.lines,
            streams: input_streams,
        });
    }

    move_all(&to_place).map_err(io_err)?;
    let store = blobs::assemble(root, &work, chunks, placement).map_err(io_err)?;
    let prefix_len = blobs::shard_prefix_len(store.locations.len());
    blobs::write_shards(root, &store, prefix_len, paths::blob_index).map_err(io_err)?;
    counts.unique_blobs = store.locations.len() as u64;
    counts.unique_blob_bytes = store.locations.blob_bytes();
    counts.packed_bytes = store.packs.iter().map(|p| p.size).sum();
    counts.dedup_saved_bytes = (counts.payload_bytes + raw_bytes).saturating_sub(counts.unique_blob_bytes);
    counts.cross_input_saved_bytes = per_input_unique.saturating_sub(counts.unique_blob_bytes);
    let cross_rank = match cross_rank {
        Some((members, merged_trace)) => {
            let trace = Some((merged_trace, traces_to_place.as_slice()));
            let members_tables = members.iter().cloned().zip(compared_tables);
            let compared = members_tables.map(|(member, tables)| StreamTables::new(member, tables)).collect();
            let payloads = store_payloads::StorePayloads::new(root, &store);
            Some(
                write_cross_rank(root, compared, members, &table_sources, trace, &payloads, part_bytes)
                    .map_err(io_err)?,
            )
        }
        None => None,
    };

    let mut by_kind = BTreeMap::new();
    for d in &diagnostics {
        *by_kind.entry(d.kind.as_str().to_string()).or_default() += 1;
    }
    let mut jsonl = Vec::new();
    for d in &diagnostics {
        serde_json::to_writer(&mut jsonl, d).map_err(|e| io_err(e.into()))?;
        jsonl.push(b'\n');
    }
    fs::write(root.join(paths::DIAGNOSTICS), jsonl).map_err(io_err)?;
    schemas.join().map_err(|_| io_err(io::Error::other("the schema thread panicked")))?.map_err(io_err)?;
    fs::remove_dir_all(&work).map_err(io_err)?;

    let mut manifest = Manifest {
        format: schema::FORMAT_NAME.into(),
        format_version: schema::FORMAT_VERSION.into(),
        min_reader_version: schema::MIN_READER_VERSION,
        generator: Generator { name: env!("CARGO_PKG_NAME").into(), version: env!("CARGO_PKG_VERSION").into() },
        inputs: manifest_inputs,
        skipped,
        streams,
        cross_rank,
        counts,
        diagnostics: DiagnosticsSummary { total: diagnostics.len() as u64, by_kind, path: paths::DIAGNOSTICS.into() },
        blobs: BlobStore {
            hash: "blake3-128".into(),
            compression: "zstd".into(),
            index_prefix_len: prefix_len,
            index_path: paths::BLOB_INDEX_TEMPLATE.into(),
            packs: store.packs,
        },
        files: Vec::new(),
        viewer: viewer.then(viewer::manifest_entries),
    };
    // Listed before the lite manifest is written, so that it can hold the bundle's size.
    let mut files = list_files(root).map_err(io_err)?;
    manifest.counts.bundle_bytes = files.iter().map(|f| f.size).sum();
    write_lite_manifest(root, &manifest).map_err(io_err)?;
    files.push(file_entry(root, paths::MANIFEST_LITE.to_string()).map_err(io_err)?);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    manifest.files = files;
    write_json(&root.join(paths::MANIFEST), &manifest, true).map_err(io_err)?;
    Ok(manifest)
}

/// A stream's table for the cross-rank tables: its parts' files where they were placed, read at
/// each parse.
struct PlacedTable(Vec<PathBuf>);

impl cross_rank::TableBytes for PlacedTable {
    fn parts(&self) -> usize {
        self.0.len()
    }

    fn part(&self, k: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        fs::read(self.0.get(k)?).ok().map(std::borrow::Cow::Owned)
    }
}

/// The thread writing the merged Chrome trace ([`write_merged_trace`]).
type MergedTrace<'scope> = ScopedJoinHandle<'scope, io::Result<Option<String>>>;

/// The merged trace being written, with the streams' traces it reads (staged, then final path),
/// moved into place once it is done.
type TraceToPlace<'scope, 'p> = (MergedTrace<'scope>, &'p [(PathBuf, PathBuf)]);

/// Computes and writes the cross-rank tables of the compared streams (`members`, labelled), then
/// waits for the merged trace and moves the streams' traces it read into place (`trace`);
/// `payloads` reads the blob store, assembled by then. A table that does not read back is an
/// error naming its file (`table_sources`: each stream's, by name).
fn write_cross_rank(
    root: &Path,
    compared: Vec<StreamTables>,
    members: Vec<RankMember>,
    table_sources: &[BTreeMap<&'static str, PathBuf>],
    trace: Option<TraceToPlace<'_, '_>>,
    payloads: &dyn cross_rank::PayloadReader,
    part_bytes: u64,
) -> io::Result<CrossRank> {
    let alignment = cross_rank::align(&compared);
    let mut compressor = table_files::TableCompressor::plain(part_bytes);
    let outputs = cross_rank::build(&compared, &alignment, payloads, &mut compressor);
    let runtime_estimates_trace = write_runtime_estimates_trace(root, &compared, &alignment)?;
    for (stream, sources) in compared.iter().zip(table_sources) {
        if let Some(name) = stream.damaged() {
            return Err(blobs::DamagedFile::error(&sources[name], format!("does not read back as a {name} table")));
        }
    }
    drop(compared);
    let cross_rank_dir = root.join("tables").join(schema::cross_rank::DIR);
    if !outputs.is_empty() {
        fs::create_dir_all(&cross_rank_dir)?;
    }
    let mut tables = BTreeMap::new();
    for t in outputs {
        t.check_readable()?;
        let count = t.parts.len();
        let mut parts = Vec::new();
        for (k, json) in t.parts.iter().enumerate() {
            let path = paths::table_part(schema::cross_rank::DIR, t.name, k, count);
            fs::write(root.join(&path), json)?;
            parts.push(path);
        }
        tables.insert(t.name.to_string(), TableRef { parts, rows: t.rows });
    }
    let mut chrome_trace = None;
    if let Some((thread, traces)) = trace {
        chrome_trace = thread.join().map_err(|_| io::Error::other("the merged-trace thread panicked"))??;
        move_all(traces)?;
    }
    Ok(CrossRank { members, tables, chrome_trace, runtime_estimates_trace })
}

/// Writes the Chrome trace of the runtime estimates (gzip, like the streams' traces, so Perfetto
/// opens it as is), one member's events at a time; `None` when no stream has estimates.
fn write_runtime_estimates_trace(
    root: &Path,
    compared: &[StreamTables],
    alignment: &Alignment,
) -> io::Result<Option<String>> {
    let Some(trace) = cross_rank::runtime_estimates_trace::RuntimeEstimatesTrace::new(compared, alignment) else {
        return Ok(None);
    };
    let path = paths::RUNTIME_ESTIMATES_TRACE;
    fs::create_dir_all(root.join("tables").join(schema::cross_rank::DIR))?;
    let mut out = stream::TraceFileWriter::create(&root.join(path))?;
    for (i, stream) in compared.iter().enumerate() {
        for event in trace.member_events(i, stream) {
            out.event(&event)?;
        }
    }
    out.finish()?;
    Ok(Some(path.to_string()))
}

/// zstd level of the lite manifest: a viewer's first fetch, so as small as zstd makes it while
/// that is cheap, up to [`LITE_MANIFEST_SMALL`] bytes of JSON (a few dozen streams).
const LITE_MANIFEST_ZSTD_LEVEL: i32 = 19;
/// Above this, the lite manifest is compressed at zstd's default level. Measured on 1,000 ranks'
/// (2.55 MB of JSON): 31.9 KB against level 19's 27.9 KB, in milliseconds against 0.85 s, a
/// tenth of the merge then.
const LITE_MANIFEST_SMALL: usize = 64 << 10;

/// Writes `manifest.lite.json.zst`, the manifest without its file lists and hashes (`manifest`'s
/// `files` are not listed yet: the lite manifest is one of them).
fn write_lite_manifest(root: &Path, manifest: &Manifest) -> io::Result<()> {
    let json = serde_json::to_vec(&schema::LiteManifest::from(manifest))?;
    // In one call, so that zstd sizes its tables to the input: a small bundle's lite manifest
    // costs kilobytes to compress, not level 19's full tables (about 90 MB).
    let level =
        if json.len() <= LITE_MANIFEST_SMALL { LITE_MANIFEST_ZSTD_LEVEL } else { zstd::DEFAULT_COMPRESSION_LEVEL };
    fs::write(root.join(paths::MANIFEST_LITE), zstd::bulk::compress(&json, level)?)
}

/// Writes JSON: pretty for files people read (manifest, schemas), compact for data.
pub fn write_json(path: &Path, value: &impl serde::Serialize, pretty: bool) -> io::Result<()> {
    let mut bytes = if pretty { serde_json::to_vec_pretty(value)? } else { serde_json::to_vec(value)? };
    bytes.push(b'\n');
    fs::write(path, bytes)
}

/// Every file under `root` except the two manifests, sorted, with size and hash.
fn list_files(root: &Path) -> io::Result<Vec<FileEntry>> {
    let mut files = Vec::new();
    for item in walkdir::WalkDir::new(root).sort_by_file_name() {
        let item = item.map_err(io::Error::from)?;
        if !item.file_type().is_file() {
            continue;
        }
        let rel = item.path().strip_prefix(root).expect("under root");
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        if rel == paths::MANIFEST || rel == paths::MANIFEST_LITE {
            continue;
        }
        files.push(file_entry(root, rel)?);
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The manifest's entry of the file at `rel` under `root`: size and hash.
fn file_entry(root: &Path, rel: String) -> io::Result<FileEntry> {
    // Streamed: an index can be large, and memory must not grow with the log.
    let mut hasher = blake3::Hasher::new();
    let size = io::copy(&mut fs::File::open(root.join(&rel))?, &mut hasher)?;
    Ok(FileEntry { schema: paths::schema_for(&rel), path: rel, size, blake3: blobs::hex(hasher.finalize().as_bytes()) })
}
