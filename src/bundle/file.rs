//! Reading one input file into the staging directory: a reader thread splits records, the rayon
//! pool parses and hashes them in batches, a filing thread applies process context in log order
//! and writes index rows and blob chunks, and an analysis thread feeds each entry to its stream's
//! tables and Chrome trace. The four work on different batches at once.

use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use rayon::prelude::*;

use super::blobs::{ChunkWriter, FileChunks, Hash, SpillWriter, SpilledChunks};
use super::inputs::{self, HashingReader, InputFile, open_reader};
use super::output::reading_input;
use super::stream::{AnalysisSummary, Observed, StreamAnalyzer, StreamSummary, StreamWriter};
use super::table_files::{TableCounts, TableOptions};
use crate::fast_hash::HashMap;
use crate::parse::md5_lanes::md5_each;
use crate::parse::{Demux, Parsed, RankSlot, RawRecord, Records, StreamKey, parse_record_with_md5};
use crate::schema::{DiagnosticKind, PayloadFormat};
use crate::store::Store;
use crate::store::packed_rows::Spool;

/// Bytes of records handed to the parser at once: large enough to keep both cores busy, small
/// enough to keep memory flat.
const BATCH_BYTES: usize = 1 << 20;

/// Set when writing failed anywhere in a build (a full disk): every input then stops reading
/// and finishing its tables, so that a build which cannot succeed ends at once.
pub type StopFlag = Arc<AtomicBool>;

/// The error of an input that stopped because another part of the build failed: never the one
/// reported, as the failure that set the flag has its own.
#[derive(Debug)]
struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped: another part of the build failed")
    }
}

impl std::error::Error for Stopped {}

fn stopped() -> io::Error {
    io::Error::other(Stopped)
}

/// Whether `e` is only the echo of a failure elsewhere ([`Stopped`]).
pub fn is_stopped(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Stopped>())
}

/// Fails with [`Stopped`] once `stop` is set.
fn check(stop: &AtomicBool) -> io::Result<()> {
    if stop.load(Ordering::Relaxed) { Err(stopped()) } else { Ok(()) }
}

/// Sets `stop` when `result` is a failure of its own, so that the rest of the build stops.
pub fn stop_on_error<T>(stop: &AtomicBool, result: io::Result<T>) -> io::Result<T> {
    if result.as_ref().is_err_and(|e| !is_stopped(e)) {
        stop.store(true, Ordering::Relaxed);
    }
    result
}

/// The error to report of several: the first that is not an echo of another's.
fn first_failure(errors: impl IntoIterator<Item = io::Error>) -> Option<io::Error> {
    let mut echo = None;
    for e in errors {
        if !is_stopped(&e) {
            return Some(e);
        }
        echo.get_or_insert(e);
    }
    echo
}

/// A diagnostic found in a file, before stream ids exist.
#[derive(Debug)]
pub struct FileDiagnostic {
    pub kind: DiagnosticKind,
    pub line: u64,
    pub end_line: u64,
    pub stream: Option<StreamKey>,
    pub message: String,
    pub raw: Option<Hash>,
    /// Size of the raw text blob, 0 when there is none.
    pub raw_size: u64,
}

/// A stream of this file, finished.
#[derive(Debug)]
pub struct FileStream {
    pub key: StreamKey,
    /// The stream's rank, resolved now that the whole file was read.
    pub rank: Option<u32>,
    pub summary: StreamSummary,
}

/// Everything learned from one file.
#[derive(Debug)]
pub struct FileResult {
    /// Streams in order of first appearance.
    pub streams: Vec<FileStream>,
    pub diagnostics: Vec<FileDiagnostic>,
    pub chunks: FileChunks,
    pub lines: u64,
    pub bytes: u64,
    pub blake3: super::blobs::FileHash,
    /// The bytes of the file `blake3` hashes: its size as read, which for a log still being
    /// written is more than its size when it was found.
    pub raw_bytes: u64,
}

/// The sequential state of reading one file.
struct FileState<'a> {
    index: usize,
    work: &'a Path,
    chunks: ChunkWriter,
    demux: Demux,
    /// Each stream's position in `order` and its writer.
    writers: HashMap<StreamKey, (usize, StreamWriter)>,
    /// Stream keys in order of first appearance.
    order: Vec<StreamKey>,
    diagnostics: Vec<FileDiagnostic>,
    /// This batch's entries for the analysis thread, with their stream's position in `order`.
    observed: Vec<(usize, Observed)>,
    /// Blobs the record reader streamed to chunks of their own, waiting to be filed.
    spilled: SpilledChunks,
}

/// Where the temporary files of the `stream`th stream of the `file`th input go (without
/// extension; renamed once stream ids are known).
fn stream_base(work: &Path, file: usize, stream: usize) -> PathBuf {
    work.join(format!("f{file}-s{stream}"))
}

/// Where the analysis tables of one file keep what they hold until they are written: a file of
/// the staging directory, unlinked as soon as it is open (so it never outlives the build).
struct FileSpool {
    file: std::fs::File,
    end: std::sync::atomic::AtomicU64,
    /// Where its writes are counted.
    counts: Arc<TableCounts>,
    /// The first write that failed: the tables then hold their bytes in memory, but the build
    /// fails at once rather than go on without its disk.
    failure: Mutex<Option<io::Error>>,
    stop: StopFlag,
}

impl FileSpool {
    fn create(path: &Path, counts: Arc<TableCounts>, stop: StopFlag) -> io::Result<FileSpool> {
        let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(path)?;
        std::fs::remove_file(path)?;
        Ok(FileSpool::over(file, counts, stop))
    }

    fn over(file: std::fs::File, counts: Arc<TableCounts>, stop: StopFlag) -> FileSpool {
        let end = std::sync::atomic::AtomicU64::new(0);
        FileSpool { file, end, counts, failure: Mutex::new(None), stop }
    }

    /// The first failed write's error, if one failed.
    fn failed(&self) -> io::Result<()> {
        match self.failure.lock().expect("spool failure lock").take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Spool for FileSpool {
    fn put(&self, bytes: &[u8]) -> io::Result<u64> {
        TableCounts::add(&self.counts.spool_writes);
        let at = self.end.fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
        if let Err(e) = self.file.write_all_at(bytes, at) {
            let kept = io::Error::new(e.kind(), e.to_string());
            self.failure.lock().expect("spool failure lock").get_or_insert(kept);
            self.stop.store(true, Ordering::Relaxed);
            return Err(e);
        }
        Ok(at)
    }

    fn get(&self, at: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut bytes = vec![0; len];
        self.file.read_exact_at(&mut bytes, at)?;
        Ok(bytes)
    }
}

/// The analysis thread of one file: its streams' [`StreamAnalyzer`]s, created as streams appear.
fn analyze(
    work: PathBuf,
    file: usize,
    batches: Batches,
    options: TableOptions,
    stop: StopFlag,
) -> io::Result<Vec<AnalysisSummary>> {
    // Without a spool (it could not be made), tables hold their bytes in memory.
    let spool_path = work.join(format!("f{file}-spool"));
    let spool = options.spool.then(|| FileSpool::create(&spool_path, options.counts.clone(), stop.clone()));
    let spool = spool.and_then(Result::ok).map(Arc::new);
    let store = spool.clone().map_or_else(Store::default, |s| Store::spilling_to(s as Arc<dyn Spool>));
    let spool_failed = || spool.as_ref().map_or(Ok(()), |s| s.failed());
    let go_on = || spool_failed().and_then(|()| check(&stop));
    let analyzed = analyze_batches(&work, file, batches, &options, &store, &go_on);
    // A write that failed while the tables finished.
    let analyzed = spool_failed().and(analyzed);
    stop_on_error(&stop, analyzed)
}

/// The batches of observed entries the analysis thread receives, and where it hands each batch's
/// emptied buffer back to the filing thread (a batch's buffer is megabytes: a fresh one each time
/// was faulted in page by page, a fifth of a build's page faults).
struct Batches {
    full: mpsc::Receiver<Vec<(usize, Observed)>>,
    emptied: mpsc::SyncSender<Vec<(usize, Observed)>>,
}

/// Observes each batch, then finishes the tables; `go_on` says, before each batch and before
/// the tables finish, whether the build may go on (no write failed).
fn analyze_batches(
    work: &Path,
    file: usize,
    batches: Batches,
    options: &TableOptions,
    store: &Store,
    go_on: &dyn Fn() -> io::Result<()>,
) -> io::Result<Vec<AnalysisSummary>> {
    let mut analyzers: Vec<StreamAnalyzer> = Vec::new();
    for mut batch in batches.full {
        go_on()?;
        for &mut (stream, ref mut observed) in batch.iter_mut() {
            if stream == analyzers.len() {
                analyzers.push(StreamAnalyzer::new(&stream_base(work, file, stream), store));
            }
            analyzers[stream].observe(observed)?;
        }
        batch.clear();
        // Full (the filing thread has one in hand already) or closed: let it go.
        let _ = batches.emptied.try_send(batch);
    }
    go_on()?;
    analyzers.into_iter().map(|analyzer| analyzer.finish(options)).collect()
}

/// Payload bytes hashed together at least, when a batch's payloads are hashed in parts.
const MD5_PART_BYTES: usize = 256 << 10;

/// The md5 of each record's held payload (`None` for a record without one), for the checks
/// against `has_payload`. The batch is cut into parts of about equal payload bytes, one for
/// each pool thread, and each part's payloads are hashed side by side in SIMD lanes: the more
/// payloads a part has, the busier the lanes (on the 150 MB bench logs, hashing a log's payloads
/// in groups of 512 KiB took a quarter of the time of hashing them one by one; in groups of
/// 256 KiB, 40% to 45%).
fn held_payload_md5s(batch: &[RawRecord]) -> Vec<Option<[u8; 16]>> {
    let held = RawRecord::held_payload;
    let total: usize = batch.iter().filter_map(held).map(<[u8]>::len).sum();
    let parts = rayon::current_num_threads().min(total / MD5_PART_BYTES).max(1);
    let mut cuts = vec![0];
    let mut bytes = 0;
    for (at, record) in batch.iter().enumerate() {
        bytes += held(record).map_or(0, <[u8]>::len);
        if cuts.len() < parts && bytes * parts >= total * cuts.len() {
            cuts.push(at + 1);
        }
    }
    cuts.push(batch.len());
    cuts.par_windows(2)
        .flat_map_iter(|cut| {
            let part = &batch[cut[0]..cut[1]];
            let mut md5s = md5_each(&part.iter().filter_map(held).collect::<Vec<_>>()).into_iter();
            part.iter().map(move |record| held(record).and_then(|_| md5s.next()))
        })
        .collect()
}

/// Which pack class a payload goes to: like with like compresses best.
fn blob_class(kind: &str, format: PayloadFormat) -> usize {
    match (kind, format) {
        ("chromium_event", _) => 0,
        (_, PayloadFormat::Python) => 1,
        (_, PayloadFormat::Json) => 2,
        (_, PayloadFormat::Text) => 3,
    }
}

/// Class of the raw text of unreadable lines.
const RAW_CLASS: usize = 4;

impl FileState<'_> {
    /// Files a blob the record reader streamed to a chunk of its own (finished before the
    /// record was sent, so it is there).
    fn file_spilled(&mut self, spilled: &crate::parse::Spilled) -> io::Result<()> {
        let chunk = self.spilled.lock().expect("spilled chunks lock").remove(&spilled.token);
        let chunk = chunk.ok_or_else(|| io::Error::other("a streamed blob's chunk is missing"))?;
        self.chunks.add_spilled(chunk)
    }

    /// Stores the raw bytes of a header line that is not UTF-8 (the row holds it with U+FFFD):
    /// their blob id and size, for its `invalid_utf8` diagnostic.
    fn store_raw_header(&mut self, entry: &mut crate::parse::Entry) -> io::Result<Option<(Hash, u64)>> {
        let Some(bytes) = entry.raw_header.take() else { return Ok(None) };
        let hash = crate::parse::blob_id(&bytes);
        self.chunks.add(RAW_CLASS, hash, &bytes)?;
        Ok(Some((hash, bytes.len() as u64)))
    }

    /// Files parsed records in log order: context, diagnostics, blobs, index rows.
    fn file(&mut self, parsed: Vec<Parsed>) -> io::Result<()> {
        self.observed.reserve(parsed.len());
        for p in parsed {
            match p {
                Parsed::Unreadable(u) => {
                    let mut raw = None;
                    if let Some(spilled) = &u.spilled {
                        self.file_spilled(spilled)?;
                        raw = Some((spilled.id, spilled.stored));
                    }
                    if !u.raw.is_empty() || raw.is_none() {
                        let id = crate::parse::blob_id(&u.raw);
                        self.chunks.add(RAW_CLASS, id, &u.raw)?;
                        raw = Some((id, u.raw.len() as u64));
                    }
                    let (raw, raw_size) = raw.expect("set above");
                    self.diagnostics.push(FileDiagnostic {
                        kind: u.kind,
                        line: u.line,
                        end_line: u.end_line,
                        stream: u.pid.map(|pid| StreamKey { pid, slot: RankSlot::Home }),
                        message: u.message,
                        raw: Some(raw),
                        raw_size,
                    });
                }
                Parsed::Entry(entry) => {
                    let mut routed = self.demux.route(entry);
                    let key = routed.key;
                    let raw_header = self.store_raw_header(&mut routed.entry)?;
                    for (kind, message) in routed.entry.problems.drain(..) {
                        let raw = raw_header.filter(|_| kind == DiagnosticKind::InvalidUtf8);
                        self.diagnostics.push(FileDiagnostic {
                            kind,
                            line: routed.entry.line,
                            end_line: if raw.is_some() { routed.entry.line } else { routed.entry.end_line },
                            stream: Some(key),
                            message,
                            raw: raw.map(|(hash, _)| hash),
                            raw_size: raw.map_or(0, |(_, size)| size),
                        });
                    }
                    match &routed.entry.payload {
                        Some(p) if p.spilled.is_some() => self.file_spilled(p.spilled.as_ref().expect("matched"))?,
                        Some(p) => self.chunks.add(blob_class(&routed.entry.kind, p.format), p.hash, &p.bytes)?,
                        None => {}
                    }
                    let (stream, writer) = match self.writers.entry(key) {
                        std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                        std::collections::hash_map::Entry::Vacant(v) => {
                            let stream = self.order.len();
                            self.order.push(key);
                            v.insert((stream, StreamWriter::create(&stream_base(self.work, self.index, stream))?))
                        }
                    };
                    self.observed.push((*stream, writer.write(routed)?));
                }
            }
        }
        Ok(())
    }
}

/// The input's reader, its errors marked as errors of reading the input (the reader thread also
/// writes: the chunks of blobs too long to hold).
struct MarkedReads<R>(R);

impl<R: io::Read> io::Read for MarkedReads<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(reading_input)
    }
}

impl<R: io::BufRead> io::BufRead for MarkedReads<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.0.fill_buf().map_err(reading_input)
    }
    fn consume(&mut self, amount: usize) {
        self.0.consume(amount)
    }
}

/// Where the filing thread sends each batch of observed entries, and gets emptied buffers back.
struct ToAnalysis {
    full: mpsc::SyncSender<Vec<(usize, Observed)>>,
    emptied: mpsc::Receiver<Vec<(usize, Observed)>>,
}

/// What the filing thread made of a file.
struct Filed {
    chunks: FileChunks,
    demux: Demux,
    order: Vec<StreamKey>,
    diagnostics: Vec<FileDiagnostic>,
    summaries: Vec<StreamSummary>,
}

/// The filing thread: files each parsed batch in log order and hands its entries to the
/// analysis thread. Then it seals the last chunks and finishes the index files while the
/// analysis thread finishes its tables: the two overlap, and the chunk writer's buffers and
/// the index encoders are freed before the tables' finishing peaks.
fn file_batches(
    mut state: FileState<'_>,
    parsed: mpsc::Receiver<Vec<Parsed>>,
    to: ToAnalysis,
    stop: &AtomicBool,
) -> io::Result<Filed> {
    for batch in parsed {
        check(stop)?;
        state.file(batch)?;
        let emptied = to.emptied.try_recv().unwrap_or_default();
        // A closed channel means the analysis thread failed: its error is reported by the caller.
        if to.full.send(std::mem::replace(&mut state.observed, emptied)).is_err() {
            break;
        }
    }
    drop(to);
    let FileState { chunks, demux, mut writers, order, diagnostics, .. } = state;
    let chunks = chunks.finish()?;
    let summaries: io::Result<Vec<StreamSummary>> =
        order.iter().map(|key| writers.remove(key).expect("writer for every key").1.finish()).collect();
    Ok(Filed { chunks, demux, order, diagnostics, summaries: summaries? })
}

/// Reads one input file; `work` is the staging area for its temporary files.
pub fn process_file(
    index: usize,
    input: &InputFile,
    work: &Path,
    progress: &indicatif::ProgressBar,
    max_line: usize,
) -> io::Result<FileResult> {
    process_file_with(index, input, work, progress, max_line, TableOptions::default(), &StopFlag::default())
}

/// Reads one input file, its tables kept and finished as `tables` say.
pub fn process_file_with(
    index: usize,
    input: &InputFile,
    work: &Path,
    progress: &indicatif::ProgressBar,
    max_line: usize,
    tables: TableOptions,
    stop: &StopFlag,
) -> io::Result<FileResult> {
    check(stop)?;
    // Errors of reading the input are marked as such: every other error is the output's.
    let file = inputs::open_input(input).map_err(reading_input)?;
    let (raw, hasher) = HashingReader::new(file, progress.clone());
    let (reader, read_stop) = open_reader(raw, input.compression).map_err(reading_input)?;
    let reader = MarkedReads(reader);
    let (tx, rx) = mpsc::sync_channel::<Vec<RawRecord>>(1);
    let (spill, spilled) = SpillWriter::new(work, &format!("f{index}"));
    let reader_stop = stop.clone();
    let reader_thread = std::thread::spawn(move || -> io::Result<(u64, u64)> {
        stop_on_error(&reader_stop, read_records(reader, max_line, spill, &tx, &reader_stop))
    });
    fn read_records(
        reader: MarkedReads<Box<dyn io::BufRead + Send>>,
        max_line: usize,
        spill: SpillWriter,
        tx: &mpsc::SyncSender<Vec<RawRecord>>,
        stop: &AtomicBool,
    ) -> io::Result<(u64, u64)> {
        let mut records = Records::with_spill(reader, max_line, Box::new(spill));
        let mut batch = Vec::new();
        let mut weight = 0;
        while let Some(record) = records.next_record()? {
            weight += record.weight();
            batch.push(record);
            if weight >= BATCH_BYTES {
                weight = 0;
                check(stop)?;
                if tx.send(std::mem::take(&mut batch)).is_err() {
                    break;
                }
            }
        }
        if !batch.is_empty() {
            let _ = tx.send(batch);
        }
        Ok((records.lines_read(), records.bytes_read))
    }

    let (analysis_tx, analysis_rx) = mpsc::sync_channel::<Vec<(usize, Observed)>>(1);
    let (emptied_tx, emptied_rx) = mpsc::sync_channel::<Vec<(usize, Observed)>>(1);
    let analysis_work = work.to_path_buf();
    let batches = Batches { full: analysis_rx, emptied: emptied_tx };
    let analysis_stop = stop.clone();
    let analysis_thread = std::thread::spawn(move || analyze(analysis_work, index, batches, tables, analysis_stop));

    let state = FileState {
        index,
        work,
        chunks: ChunkWriter::new(work, &format!("f{index}")),
        demux: Demux::new(input.rank_from_name),
        writers: HashMap::default(),
        order: Vec::new(),
        diagnostics: Vec::new(),
        observed: Vec::new(),
        spilled,
    };
    let to_analysis = ToAnalysis { full: analysis_tx, emptied: emptied_rx };
    // The pool parses batch k+1 while the filing thread files batch k in log order and the
    // analysis thread observes batch k-1. Each hands its batch on as soon as it is done with
    // it, so that no stage waits on another's whole batch with its core idle. The parsed batch
    // is handed over directly, not queued: a queue would hold another batch in memory for no
    // more speed. This (pool) thread may wait for the filing thread
    // because that thread never waits for the pool (several files are read at once, each from
    // a pool thread: pool work behind a waiting pool thread could never run).
    let (parsed_tx, parsed_rx) = mpsc::sync_channel::<Vec<Parsed>>(0);
    let filed = std::thread::scope(|scope| {
        let filing = scope.spawn(move || stop_on_error(stop, file_batches(state, parsed_rx, to_analysis, stop)));
        for batch in rx {
            let md5s = held_payload_md5s(&batch);
            let parsed = batch
                .into_par_iter()
                .zip(md5s)
                .map(|(record, md5)| parse_record_with_md5(record, md5))
                .collect::<Vec<Parsed>>();
            // A closed channel means the filing thread failed: its error is reported below.
            if parsed_tx.send(parsed).is_err() {
                break;
            }
        }
        drop(parsed_tx);
        filing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    let read = reader_thread.join().map_err(|_| io::Error::other("reader thread panicked"))?;
    let analyzed = analysis_thread.join().map_err(|_| io::Error::other("analysis thread panicked"))?;
    // Read errors come marked by `MarkedReads`; the reader's other errors are the spill's writes.
    // Of the threads' errors, the one that stopped the others is reported.
    let (filed, analyzed, (lines, bytes)) = match (filed, analyzed, read) {
        (Ok(filed), Ok(analyzed), Ok(read)) => (filed, analyzed, read),
        (filed, analyzed, read) => {
            let errors = [filed.err(), analyzed.err(), read.err()].into_iter().flatten();
            return Err(first_failure(errors).expect("one failed"));
        }
    };
    let Filed { chunks, demux, order, mut diagnostics, summaries } = filed;
    let mut analyzed = analyzed.into_iter();
    // A truncated or corrupt input: what was read before the error is kept, and said so.
    if let Some(error) = read_stop.get() {
        diagnostics.push(inputs::truncated_input(lines, error));
        inputs::hash_unread_rest(input, &hasher);
    }

    let mut streams = Vec::new();
    for (key, mut summary) in order.into_iter().zip(summaries) {
        summary.analysis = analyzed.next().unwrap_or_default();
        for d in summary.analysis.table_diagnostics.drain(..) {
            diagnostics.push(FileDiagnostic {
                kind: d.kind,
                line: d.line,
                end_line: d.end_line,
                stream: Some(key),
                message: d.message,
                raw: None,
                raw_size: 0,
            });
        }
        let rank = match key.slot {
            RankSlot::Home => demux.home_rank(key.pid),
            RankSlot::Other(r) => Some(r),
        };
        streams.push(FileStream { key, rank, summary });
    }
    // Diagnostics of unreadable lines name a process's home stream; drop the name if that
    // process has no entries at all.
    for d in &mut diagnostics {
        if d.stream.is_some_and(|k| !streams.iter().any(|s| s.key == k)) {
            d.stream = None;
        }
    }
    // Log order, whichever step found the problem.
    diagnostics.sort_by_key(|d| d.line);
    let (blake3, raw_bytes) = {
        let hashed = hasher.lock().expect("hasher lock");
        (*hashed.0.finalize().as_bytes(), hashed.1)
    };
    Ok(FileResult { streams, diagnostics, chunks, lines, bytes, blake3, raw_bytes })
}
