//! Writing one stream's event index (zstd-compressed JSONL, one row per entry) and interning its
//! stacks.

use std::collections::BTreeMap;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use serde_json::Value;

use super::blobs::hex;
use super::table_files::{self, TableOptions, TableOutput};
use crate::analysis::{Event, StreamAnalysis, StreamFindings, TableDiagnostic};
use crate::fast_hash::HashMap;
use crate::parse::json_text::{self, escape_lone_surrogates};
use crate::parse::{Entry, Meta, Routed, StackSlot, display_compile_id};
use crate::schema::{Frame, IndexRow, PayloadFormat, PayloadRef, RowNumbering, StackTable};
use crate::store::Store;

/// Interns frames and stacks: each distinct frame and each distinct stack is stored once.
#[derive(Default)]
pub struct StackInterner {
    table: StackTable,
    frames: HashMap<Frame, u32>,
    stacks: HashMap<Vec<u32>, u32>,
    /// How many frames and stacks [`StackInterner::take_new`] has already handed out.
    handed_out: (usize, usize),
}

impl StackInterner {
    /// The id of a stack, adding it if new. Most frames and stacks were seen before: they are
    /// looked up first, and copied (to be both key and table entry) only when new.
    pub fn intern(&mut self, frames: Vec<Frame>) -> u32 {
        let ids: Vec<u32> = frames.into_iter().map(|f| self.frame_id(f)).collect();
        if let Some(&id) = self.stacks.get(&ids) {
            return id;
        }
        let id = self.table.stacks.len() as u32;
        self.stacks.insert(ids.clone(), id);
        self.table.stacks.push(ids);
        id
    }

    fn frame_id(&mut self, frame: Frame) -> u32 {
        if let Some(&id) = self.frames.get(&frame) {
            return id;
        }
        let id = self.table.frames.len() as u32;
        self.frames.insert(frame.clone(), id);
        self.table.frames.push(frame);
        id
    }

    /// Interns an entry's stacks: the envelope's stack id, and the metadata keys whose stack was
    /// replaced in `meta` by its id. The fuzzer's in-process streams intern through here too.
    pub fn intern_entry(
        &mut self,
        stacks: Vec<(StackSlot, Vec<Frame>)>,
        meta: &mut Meta,
    ) -> (Option<u32>, Vec<String>) {
        let mut envelope_stack = None;
        let mut meta_stacks = Vec::new();
        for (slot, frames) in stacks {
            let id = self.intern(frames);
            match slot {
                StackSlot::Envelope => envelope_stack = Some(id),
                StackSlot::Meta(key) => {
                    if let Meta::Value(v) = meta
                        && let Some(v) = v.get_mut(&key)
                    {
                        *v = Value::from(id);
                        meta_stacks.push(key);
                    }
                }
            }
        }
        (envelope_stack, meta_stacks)
    }

    /// The frames and stacks interned so far.
    pub fn table(&self) -> &StackTable {
        &self.table
    }

    pub fn into_table(self) -> StackTable {
        self.table
    }

    /// The frames and stacks added since the last call (so the analysis thread can keep its copy
    /// of the table in step).
    fn take_new(&mut self) -> StackTable {
        let (frames, stacks) = self.handed_out;
        self.handed_out = (self.table.frames.len(), self.table.stacks.len());
        StackTable { frames: self.table.frames[frames..].to_vec(), stacks: self.table.stacks[stacks..].to_vec() }
    }
}

/// What a stream writer learned, for the manifest.
#[derive(Debug)]
pub struct StreamSummary {
    pub entries: u64,
    pub payload_bytes: u64,
    pub first_timestamp: String,
    pub last_timestamp: String,
    pub kinds: BTreeMap<String, u64>,
    pub index_path: PathBuf,
    pub stacks_path: PathBuf,
    /// What the analysis thread made of the stream.
    pub analysis: AnalysisSummary,
}

/// A table of a stream, serialized and zstd-compressed into a staging file as soon as it is
/// finished (moved into place once stream ids are known), so finished tables take no memory.
#[derive(Debug)]
pub struct StagedTable {
    pub name: &'static str,
    pub rows: u64,
    /// Its parts' files, in order.
    pub parts: Vec<PathBuf>,
}

/// A stream's analysis tables and Chrome trace.
#[derive(Debug, Default)]
pub struct AnalysisSummary {
    /// The stream's analysis tables.
    pub tables: Vec<StagedTable>,
    /// Entries the tables could not use.
    pub table_diagnostics: Vec<TableDiagnostic>,
    /// The Chrome trace file, when the stream logged chromium events.
    pub chrome_trace_path: Option<PathBuf>,
    /// How many distinct compile ids the stream's entries named (counted here, where the
    /// compiles are already filed, rather than in a set of the filing thread's own).
    pub compile_ids: u64,
    /// What the build's closing lines say of the stream's tables.
    pub findings: StreamFindings,
}

/// One entry handed from the filing thread to the analysis thread: its index row, the payload
/// bytes, and the stacks the row's ids may refer to that the analysis has not seen yet.
pub struct Observed {
    row: IndexRow<Meta>,
    end_line: u64,
    header_bytes: u64,
    payload: Option<Vec<u8>>,
    trace: Option<Box<crate::parse::TraceEvent>>,
    new_stacks: StackTable,
}

/// Writes one stream's index rows as they come, in log order.
pub struct StreamWriter {
    out: zstd::Encoder<'static, BufWriter<File>>,
    index_path: PathBuf,
    stacks_path: PathBuf,
    interner: StackInterner,
    line: Vec<u8>,
    /// What the rows written so far imply for the next one (its `line` may be left out).
    numbering: RowNumbering,
    entries: u64,
    payload_bytes: u64,
    first_timestamp: Option<String>,
    last_timestamp: String,
    kinds: BTreeMap<String, u64>,
}

/// Runs one stream's analysis tables and writes its Chrome trace, on the analysis thread (off
/// the filing thread, which would otherwise be the build's bottleneck).
pub struct StreamAnalyzer {
    /// Where the stream's files go (without extension).
    base: PathBuf,
    /// A copy of the filing thread's stack table, extended entry by entry.
    stacks: StackTable,
    analysis: StreamAnalysis,
    /// Header and payload bytes of the entries observed (how big the stream is, for how its
    /// tables finish: [`table_files::finish_tables`]).
    observed_bytes: u64,
    chrome_trace: ChromeTraceWriter,
}

/// Events larger than this get their long arguments elided in the Chrome trace.
const BIG_EVENT: usize = 2048;
/// Longest argument value kept as is in a big event (bytes of JSON).
const BIG_ARG: usize = 256;

/// How a Chrome trace file starts: displayTimeUnit first, as Perfetto's streaming JSON reader
/// wants it early.
pub(super) const TRACE_HEADER: &[u8] = b"{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
/// How a Chrome trace file ends.
const TRACE_FOOTER: &[u8] = b"\n]}\n";
/// gzip level of the Chrome traces.
const TRACE_GZIP_LEVEL: u32 = 6;

/// A gzip-compressed Chrome trace-event file (`{"traceEvents": [...]}`) written one event at a
/// time; Perfetto opens it as is (gzip rather than zstd for that reason). Every trace of a bundle
/// is written with it.
pub struct TraceFileWriter {
    /// Buffered in front of the encoder too: flate2 zero-fills a 32 KiB output buffer on every
    /// write it is given, which for one small write per event cost more than deflate itself.
    out: BufWriter<flate2::write::GzEncoder<BufWriter<File>>>,
    first: bool,
}

impl TraceFileWriter {
    pub fn create(path: &Path) -> io::Result<Self> {
        let file = BufWriter::new(File::create(path)?);
        let gz = flate2::write::GzEncoder::new(file, flate2::Compression::new(TRACE_GZIP_LEVEL));
        let mut out = BufWriter::with_capacity(1 << 17, gz);
        out.write_all(TRACE_HEADER)?;
        Ok(TraceFileWriter { out, first: true })
    }

    /// Appends one event given as JSON text.
    pub fn raw(&mut self, event: &[u8]) -> io::Result<()> {
        self.separate()?;
        self.out.write_all(event)
    }

    /// Appends one event.
    pub fn event(&mut self, event: &impl serde::Serialize) -> io::Result<()> {
        self.separate()?;
        serde_json::to_writer(&mut self.out, event).map_err(io::Error::from)
    }

    fn separate(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.first) { Ok(()) } else { self.out.write_all(b",\n") }
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.out.write_all(TRACE_FOOTER)?;
        self.out.into_inner().map_err(io::IntoInnerError::into_error)?.finish()?.flush()
    }
}

/// Streams `chromium_event` payloads into the stream's Chrome trace, created with its first event.
struct ChromeTraceWriter {
    path: PathBuf,
    out: Option<TraceThread>,
}

/// Bytes of events handed to a trace's gzip thread at once.
const TRACE_BATCH: usize = 1 << 18;

/// A thread that writes a Chrome trace: gzip takes a few percent of a build's CPU time, which the
/// analysis thread (the busiest) need not spend.
struct TraceThread {
    /// The next batch: events back to back, each ending at an offset in `ends`.
    events: Vec<u8>,
    ends: Vec<usize>,
    batches: mpsc::SyncSender<(Vec<u8>, Vec<usize>)>,
    /// `None` once joined (it failed, and its error was returned).
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
}

impl TraceThread {
    fn start(path: PathBuf) -> Self {
        let (batches, received) = mpsc::sync_channel::<(Vec<u8>, Vec<usize>)>(2);
        let thread = std::thread::spawn(move || -> io::Result<()> {
            let mut out = TraceFileWriter::create(&path)?;
            for (events, ends) in received {
                let mut start = 0;
                for end in ends {
                    out.raw(&events[start..end])?;
                    start = end;
                }
            }
            out.finish()
        });
        TraceThread { events: Vec::with_capacity(TRACE_BATCH), ends: Vec::new(), batches, thread: Some(thread) }
    }

    fn add(&mut self, event: &[u8]) -> io::Result<()> {
        self.events.extend_from_slice(event);
        self.ends.push(self.events.len());
        if self.events.len() >= TRACE_BATCH {
            self.send()?;
        }
        Ok(())
    }

    /// Hands the batch to the thread; a closed channel means the thread failed (a write): its
    /// error, at once, so that the build stops rather than read on.
    fn send(&mut self) -> io::Result<()> {
        let events = std::mem::replace(&mut self.events, Vec::with_capacity(TRACE_BATCH));
        if self.batches.send((events, std::mem::take(&mut self.ends))).is_err() {
            return self.join().and(Err(io::Error::other("the Chrome trace's thread stopped")));
        }
        Ok(())
    }

    fn join(&mut self) -> io::Result<()> {
        match self.thread.take() {
            Some(thread) => thread.join().map_err(|_| io::Error::other("trace thread panicked"))?,
            None => Err(io::Error::other("the Chrome trace's thread stopped")),
        }
    }

    fn finish(mut self) -> io::Result<()> {
        if !self.ends.is_empty() {
            self.send()?;
        }
        let (tx, _) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.batches, tx));
        self.join()
    }
}

impl ChromeTraceWriter {
    /// Appends one event; payloads that are not a JSON object are left out of the trace (they
    /// stay in the index and blob store). Big events (torch attaches whole configs and cache
    /// keys to some) have their long `args` values elided: the trace is for the timeline, and
    /// the full event stays in the blob store under `hash`.
    /// `is_json` is the parser's verdict on the payload (it parsed it whole), so it need not be
    /// checked again. Lone surrogate escapes are kept as text, as everywhere in the bundle.
    fn add(&mut self, payload: &[u8], hash: &str, is_json: bool, is_trace_event: bool) -> io::Result<()> {
        if !is_json || payload.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Ok(());
        }
        // The trace is UTF-8 JSON; a payload is bytes as logged, so invalid UTF-8 (which a JSON
        // parser skipping over strings lets through) is replaced, here only: its blob keeps it.
        let payload = match crate::parse::lossy(payload) {
            std::borrow::Cow::Borrowed(text) => escape_lone_surrogates(text.as_bytes()),
            std::borrow::Cow::Owned(text) => {
                std::borrow::Cow::Owned(escape_lone_surrogates(text.as_bytes()).into_owned())
            }
        };
        if !is_trace_event && !readable_whole(&payload) {
            return Ok(());
        }
        let payload = &payload[..];
        let slimmed;
        let payload = if payload.len() <= BIG_EVENT {
            payload
        } else {
            let Some(slim) = slim_event(payload, hash) else {
                return Ok(());
            };
            slimmed = slim;
            &slimmed
        };
        self.out.get_or_insert_with(|| TraceThread::start(self.path.clone())).add(payload)
    }

    fn finish(self) -> io::Result<Option<PathBuf>> {
        match self.out {
            None => Ok(None),
            Some(out) => {
                out.finish()?;
                Ok(Some(self.path))
            }
        }
    }
}

/// Whether JSON readers can read an event the parser did not read as a trace event (which it
/// does only with events they read whole): one nested too deep or holding a number beyond a
/// float is left out of the trace (the parser reported it; its blob keeps it), so that reading
/// the trace back, to merge it or to view it, never fails.
fn readable_whole(event: &[u8]) -> bool {
    json_text::check(event).is_ok()
}

/// A big event with each `args` value longer than [`BIG_ARG`] replaced by a note naming the blob
/// that keeps it. Members are copied as logged, not re-serialized: torch's big events are
/// megabytes of JSON, and building values of them cost more than the rest of the trace.
/// `None` when the payload is not a JSON object.
fn slim_event(payload: &[u8], hash: &str) -> Option<Vec<u8>> {
    // One pass reads the event and its `args` object together; an event whose `args` is no
    // object (or that one pass cannot read) is read member by member, `args` a second time.
    let members = match serde_json::from_slice::<EventMembers>(payload) {
        Ok(EventMembers(members)) => members,
        Err(_) => two_pass_members(payload)?,
    };
    let mut out = Vec::with_capacity(2 * BIG_EVENT);
    out.push(b'{');
    for (i, (key, value)) in members.iter().enumerate() {
        start_member(&mut out, i, key)?;
        let args = match value {
            Member::Raw(raw) => {
                out.extend_from_slice(raw.get().as_bytes());
                continue;
            }
            Member::Args(crate::parse::Fields(args)) => args,
        };
        out.push(b'{');
        for (j, (name, arg)) in args.iter().enumerate() {
            start_member(&mut out, j, name)?;
            if longer_than(arg.get(), BIG_ARG) {
                let size = arg.get().len();
                serde_json::to_writer(&mut out, &format!("[{size} bytes elided; the full event is blob {hash}]"))
                    .ok()?;
            } else {
                out.extend_from_slice(arg.get().as_bytes());
            }
        }
        out.push(b'}');
    }
    out.push(b'}');
    Some(out)
}

/// A member of an event as [`slim_event`] copies it: as logged, or, for an `args` object, member
/// by member.
enum Member<'a> {
    Raw(&'a serde_json::value::RawValue),
    Args(crate::parse::Fields<'a>),
}

/// An event's members in order, its `args` read as an object: fails when `args` is not one.
struct EventMembers<'a>(Vec<(std::borrow::Cow<'a, str>, Member<'a>)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for EventMembers<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = EventMembers<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<EventMembers<'a>, A::Error> {
                let mut members = Vec::new();
                while let Some(crate::parse::Key(key)) = map.next_key::<crate::parse::Key<'de>>()? {
                    let value =
                        if key == "args" { Member::Args(map.next_value()?) } else { Member::Raw(map.next_value()?) };
                    members.push((key, value));
                }
                Ok(EventMembers(members))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// An event's members read as raw text, then an `args` that is an object read again as one.
fn two_pass_members(payload: &[u8]) -> Option<Vec<(std::borrow::Cow<'_, str>, Member<'_>)>> {
    let crate::parse::Fields(members) = serde_json::from_slice(payload).ok()?;
    let members = members.into_iter().map(|(key, value)| {
        let args = (key == "args").then(|| serde_json::from_str::<crate::parse::Fields>(value.get()).ok()).flatten();
        (key, args.map_or(Member::Raw(value), Member::Args))
    });
    Some(members.collect())
}

/// Writes the separator (after the first), the key and the colon of the `i`th member of an object.
fn start_member(out: &mut Vec<u8>, i: usize, key: &str) -> Option<()> {
    if i > 0 {
        out.push(b',');
    }
    serde_json::to_writer(&mut *out, key).ok()?;
    out.push(b':');
    Some(())
}

/// Whether JSON text is longer than `limit` bytes without the whitespace between its tokens
/// (payloads are logged indented): what "bytes of JSON" means for [`BIG_ARG`]. Stops reading
/// at the limit, as the values it is asked about can be megabytes long.
fn longer_than(json: &str, limit: usize) -> bool {
    if json.len() <= limit {
        return false;
    }
    let (mut len, mut in_string, mut escaped) = (0, false, false);
    for &b in json.as_bytes() {
        if in_string {
            len += 1;
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !b.is_ascii_whitespace() {
            len += 1;
            in_string = b == b'"';
        }
        if len > limit {
            return true;
        }
    }
    false
}

/// zstd level of the index streams: level 2 (zstd's fast strategy) suits rows of JSON: less CPU
/// than level 3 for about the same size, where level 1 is much larger (docs/perf-notes.md).
const INDEX_ZSTD_LEVEL: i32 = 2;

impl StreamWriter {
    /// A writer whose files are `{base}.jsonl.zst` and `{base}.stacks.json` (renamed later, once
    /// stream ids are known).
    pub fn create(base: &Path) -> io::Result<Self> {
        let index_path = base.with_extension("jsonl.zst");
        let stacks_path = base.with_extension("stacks.json");
        let file = BufWriter::with_capacity(1 << 16, File::create(&index_path)?);
        Ok(StreamWriter {
            out: {
                let mut enc = zstd::Encoder::new(file, INDEX_ZSTD_LEVEL)?;
                enc.include_checksum(true)?;
                enc
            },
            index_path,
            stacks_path,
            interner: StackInterner::default(),
            line: Vec::with_capacity(1024),
            numbering: RowNumbering::default(),
            entries: 0,
            payload_bytes: 0,
            first_timestamp: None,
            last_timestamp: String::new(),
            kinds: BTreeMap::new(),
        })
    }

    /// Appends one entry's row; returns what the entry's analysis needs.
    pub fn write(&mut self, routed: Routed) -> io::Result<Observed> {
        let Routed { mut entry, stacks, .. } = routed;
        let header_bytes = entry.header_bytes;
        let mut meta = std::mem::replace(&mut entry.meta, Meta::Value(Value::Null));
        let (envelope_stack, meta_stacks) = self.interner.intern_entry(stacks, &mut meta);
        self.count_kind(&entry.kind, entry.name.as_deref());
        if self.first_timestamp.is_none() {
            self.first_timestamp = Some(entry.timestamp.clone());
        }
        self.last_timestamp.clone_from(&entry.timestamp);
        self.payload_bytes += entry.payload.as_ref().map_or(0, |p| p.size());
        let mut row = index_row(self.entries, &mut entry, meta, envelope_stack, meta_stacks);
        self.write_row(&mut row)?;
        self.entries += 1;
        Ok(Observed {
            row,
            end_line: entry.end_line,
            header_bytes,
            trace: entry.payload.as_mut().and_then(|p| p.trace.take()),
            // A payload too long to hold was streamed to the blob store: the tables never see it.
            payload: entry.payload.filter(|p| p.spilled.is_none()).map(|p| p.bytes),
            new_stacks: self.interner.take_new(),
        })
    }

    /// Counts an entry of a kind (`artifact:NAME` for named kinds); a new string only for a kind
    /// not seen before.
    fn count_kind(&mut self, kind: &str, name: Option<&str>) {
        let key = match name {
            Some(name) => std::borrow::Cow::Owned(format!("{kind}:{name}")),
            None => std::borrow::Cow::Borrowed(kind),
        };
        match self.kinds.get_mut(&*key) {
            Some(count) => *count += 1,
            None => {
                self.kinds.insert(key.into_owned(), 1);
            }
        }
    }

    /// Appends a row to the index, its `line` left out where the rows before imply it (0 stands
    /// for "implied" while it is serialized; the row comes back as it went in).
    fn write_row(&mut self, row: &mut IndexRow<Meta>) -> io::Result<()> {
        let line = row.line;
        if self.numbering.implies(row) {
            row.line = 0;
        }
        self.line.clear();
        let written = serde_json::to_writer(&mut self.line, &*row);
        row.line = line;
        written?;
        self.line.push(b'\n');
        self.numbering.advance(row);
        self.out.write_all(&self.line)
    }

    /// Finishes the index file and writes the stack table; the summary's `analysis` is left for
    /// the stream's [`StreamAnalyzer`] to fill in.
    pub fn finish(self) -> io::Result<StreamSummary> {
        self.out.finish()?.flush()?;
        let table = self.interner.into_table();
        std::fs::write(&self.stacks_path, serde_json::to_vec(&table)?)?;
        Ok(StreamSummary {
            entries: self.entries,
            payload_bytes: self.payload_bytes,
            first_timestamp: self.first_timestamp.unwrap_or_default(),
            last_timestamp: self.last_timestamp,
            kinds: self.kinds,
            index_path: self.index_path,
            stacks_path: self.stacks_path,
            analysis: AnalysisSummary::default(),
        })
    }
}

/// An entry's index row, once its stacks are interned (`meta` holding their ids, `stack`,
/// `meta_stacks`). The one definition of a row: the fuzzer's in-process streams make theirs here
/// too. Takes the entry's text fields; its payload and line numbers stay.
pub fn index_row(
    seq: u64,
    entry: &mut Entry,
    meta: Meta,
    stack: Option<u32>,
    meta_stacks: Vec<String>,
) -> IndexRow<Meta> {
    IndexRow {
        seq,
        line: entry.line,
        ts: std::mem::take(&mut entry.timestamp),
        level: entry.level.to_string(),
        src: std::mem::take(&mut entry.source),
        kind: std::mem::take(&mut entry.kind),
        name: entry.name.take(),
        compile_id: entry.compile_id.as_ref().map(display_compile_id),
        cid: entry.compile_id,
        rank: entry.rank,
        meta,
        stack,
        meta_stacks,
        meta_text: entry.meta_text.take(),
        extra: (!entry.extra.is_empty()).then(|| std::mem::take(&mut entry.extra)),
        payload: entry.payload.as_ref().map(|p| PayloadRef {
            hash: hex(&p.hash),
            size: p.size(),
            lines: p.lines,
            format: p.format,
            md5_mismatch: p.md5_mismatch,
        }),
    }
}

impl StreamAnalyzer {
    /// An analyzer whose Chrome trace goes to `{base}.trace.json.gz` (renamed later), its
    /// tables spilling to `store`.
    pub fn new(base: &Path, store: &Store) -> Self {
        StreamAnalyzer {
            base: base.to_path_buf(),
            stacks: StackTable::default(),
            analysis: StreamAnalysis::new(store),
            observed_bytes: 0,
            chrome_trace: ChromeTraceWriter { path: base.with_extension("trace.json.gz"), out: None },
        }
    }

    /// Shows one entry to every table, and adds it to the Chrome trace if it is a trace event.
    ///
    /// Takes the entry in its batch, where it stays (an `Observed` is some 580 bytes, which
    /// moving out cost a copy or two per entry); what it holds that is big is freed here.
    pub fn observe(&mut self, observed: &mut Observed) -> io::Result<()> {
        let new_stacks = std::mem::take(&mut observed.new_stacks);
        self.stacks.frames.extend(new_stacks.frames);
        self.stacks.stacks.extend(new_stacks.stacks);
        let (payload, trace) = (observed.payload.take(), observed.trace.take());
        let row = &observed.row;
        let ev = Event::new(
            row,
            observed.end_line,
            observed.header_bytes,
            payload.as_deref(),
            trace.as_deref(),
            &self.stacks,
        );
        self.analysis.observe(&ev);
        self.observed_bytes += observed.header_bytes + row.payload.as_ref().map_or(0, |p| p.size);
        if row.kind == "chromium_event" {
            if let (Some(bytes), Some(p)) = (payload.as_deref(), &row.payload) {
                self.chrome_trace.add(bytes, &p.hash, p.format == PayloadFormat::Json, trace.is_some())?;
            }
        }
        observed.row.meta = Meta::Value(Value::Null);
        Ok(())
    }

    /// Finishes every table (serialized and compressed, to `{base}.{table}.{k}.json.zst`) and the
    /// Chrome trace.
    pub fn finish(self, options: &TableOptions) -> io::Result<AnalysisSummary> {
        let mut tables = Vec::new();
        let mut findings = StreamFindings::default();
        let base = self.base;
        let compile_ids = self.analysis.compile_ids();
        let observed_bytes = self.observed_bytes;
        let mut stage = |t: TableOutput| -> io::Result<()> {
            t.check_readable()?;
            let mut parts = Vec::new();
            for (k, json) in t.parts.iter().enumerate() {
                let path = base.with_extension(format!("{}.{k}.json.zst", t.name));
                std::fs::write(&path, json)?;
                parts.push(path);
            }
            tables.push(StagedTable { name: t.name, rows: t.rows, parts });
            if let Some(finding) = t.finding {
                findings.add(finding);
            }
            Ok(())
        };
        let table_diagnostics = self
            .analysis
            .finish(&self.stacks, |jobs| table_files::finish_tables(jobs, observed_bytes, options, &mut stage))?;
        // Tables finish on two threads, in no fixed order.
        tables.sort_by_key(|t| crate::analysis::TABLE_NAMES.iter().position(|name| *name == t.name));
        let chrome_trace_path = self.chrome_trace.finish()?;
        Ok(AnalysisSummary { tables, table_diagnostics, chrome_trace_path, compile_ids, findings })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::table_files::{FinishThreads, TableCounts};

    /// Every file under `root`, by path relative to it, with its bytes.
    fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut found = BTreeMap::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    found.insert(path.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
                }
            }
        }
        found
    }

    /// Builds `input` with its streams' tables kept and finished as `tables` say.
    fn build_with(input: &Path, tables: &TableOptions, out: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let options = crate::bundle::BuildOptions {
            input: camino::Utf8PathBuf::from_path_buf(input.to_path_buf()).unwrap(),
            output: camino::Utf8PathBuf::from_path_buf(out.to_path_buf()).unwrap(),
            overwrite: false,
            latest: false,
            progress: false,
            viewer: false,
            max_line: crate::bundle::DEFAULT_MAX_LINE,
        };
        crate::bundle::build_with_tables(&options, tables).unwrap();
        files(out)
    }

    /// Options finishing every stream's tables on `threads`, spooled or not; with counts of
    /// their own.
    fn finishing_on(threads: FinishThreads, spool: bool) -> TableOptions {
        TableOptions { finish_threads: Some(threads), spool, ..TableOptions::default() }
    }

    /// Only streams of 32 MiB or more finish their tables on two threads, so no fixture would:
    /// here every stream does, and the bundle must be the one a single thread writes, file for
    /// file. The fixtures: tlparse's largest test log (one stream, 20 tables with rows) and the
    /// four-rank torch 2.15 trace `ranks_shifted` (the cross-rank tables read the ranks' tables).
    #[test]
    fn tables_finished_on_two_threads_are_the_bytes_one_thread_writes() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures-repo");
        for input in [fixtures.join("tlparse-tests/cache_hit_miss.log"), fixtures.join("torch-2.15/ranks_shifted")] {
            let dir = tempfile::tempdir().unwrap();
            let (on_one, on_two) = (finishing_on(FinishThreads::One, true), finishing_on(FinishThreads::Two, true));
            let one = build_with(&input, &on_one, &dir.path().join("one"));
            let two = build_with(&input, &on_two, &dir.path().join("two"));
            assert_eq!(TableCounts::get(&on_one.counts.on_second_thread), 0, "{}", input.display());
            let on_second = TableCounts::get(&on_two.counts.on_second_thread);
            assert!(on_second > 0, "{}: no table finished on the second thread", input.display());
            assert!(one.keys().any(|p| p.starts_with("tables")), "{}: no tables", input.display());
            assert_eq!(one.keys().collect::<Vec<_>>(), two.keys().collect::<Vec<_>>(), "{}", input.display());
            for (path, bytes) in &one {
                assert!(two[path] == *bytes, "{}: {} differs", input.display(), path.display());
            }
        }
    }

    /// In unit tests the tables' per-compile state spills after a few compiles (a `PerCompile`
    /// keeps 2 values, a `CompileList` 2 pages of 4, ...), so a fixture's compiles go to the spool
    /// and come back from it many times; the bundle must be the one a build holding everything in
    /// memory writes, file for file. The fixtures between them fill every table that spills:
    /// collectives (`collectives_parity`), recompiles and guards (`recompiles`, `graph_breaks`),
    /// cache outcomes (`cache_hit_miss`), provenance, compile time, inputs and search.
    #[test]
    fn tables_spilled_to_the_spool_are_the_bytes_held_in_memory() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures-repo");
        let inputs = [
            "tlparse-tests/cache_hit_miss.log",
            "tlparse-tests/collectives_parity",
            "tlparse-tests/inductor_provenance_jit_log.txt",
            "torch-2.15/recompiles",
            "torch-2.15/graph_breaks",
            "torch-2.15/dynamic_shapes",
        ];
        for input in inputs.map(|i| fixtures.join(i)) {
            let dir = tempfile::tempdir().unwrap();
            let (in_memory, in_spool) =
                (finishing_on(FinishThreads::One, false), finishing_on(FinishThreads::One, true));
            let memory = build_with(&input, &in_memory, &dir.path().join("memory"));
            let spooled = build_with(&input, &in_spool, &dir.path().join("spooled"));
            assert_eq!(TableCounts::get(&in_memory.counts.spool_writes), 0, "{}", input.display());
            let spilled = TableCounts::get(&in_spool.counts.spool_writes);
            assert!(spilled > 10, "{}: {spilled} writes to the spool", input.display());
            assert!(memory.keys().any(|p| p.starts_with("tables")), "{}: no tables", input.display());
            assert_eq!(memory.keys().collect::<Vec<_>>(), spooled.keys().collect::<Vec<_>>(), "{}", input.display());
            for (path, bytes) in &memory {
                assert!(spooled[path] == *bytes, "{}: {} differs", input.display(), path.display());
            }
        }
    }

    #[test]
    fn argument_size_ignores_indentation_but_not_string_contents() {
        let indented = "{\n\t\"a\": [\n\t\t1,\n\t\t2\n\t]\n}";
        assert!(!longer_than(indented, 13)); // {"a":[1,2]} is 11 bytes
        assert!(longer_than(indented, 10));
        assert!(longer_than(r#""a  b""#, 5)); // spaces inside a string count
        assert!(!longer_than(r#""a\" b" "#, 7)); // an escaped quote does not end the string
        assert!(longer_than(r#""a\" b" "#, 6));
    }

    #[test]
    fn big_events_keep_their_members_and_elide_long_arguments() {
        let long = "x".repeat(300);
        let payload = format!(
            "{{\n\t\"name\": \"n\",\n\t\"args\": {{\"short\": [1, 2], \"long\": \"{long}\"}},\n\t\"ph\": \"B\"\n}}"
        );
        let slim: Value = serde_json::from_slice(&slim_event(payload.as_bytes(), "abc").unwrap()).unwrap();
        assert_eq!(slim["name"], "n");
        assert_eq!(slim["ph"], "B");
        assert_eq!(slim["args"]["short"], serde_json::json!([1, 2]));
        assert_eq!(slim["args"]["long"], "[302 bytes elided; the full event is blob abc]");
        assert!(slim_event(b"[1]", "abc").is_none());
    }

    #[test]
    fn big_events_read_in_one_pass_or_two_slim_alike() {
        let long = "y".repeat(300);
        // Escaped keys, a duplicate `args`, and `args` that are no object (read in two passes).
        let events = [
            format!(r#"{{"n\u0061me": "n", "args": {{"k\"ey": "{long}", "s": 1}}, "args": {{"t": 2}}}}"#),
            format!(r#"{{"name": "n", "args": ["{long}"], "pad": "{long}"}}"#),
            format!(r#"{{"name": "n", "args": "{long}", "more": {{"args": "{long}"}}}}"#),
        ];
        for event in &events {
            let slim: Value = serde_json::from_slice(&slim_event(event.as_bytes(), "abc").unwrap()).unwrap();
            assert_eq!(slim["name"], "n", "{event}");
        }
        assert!(serde_json::from_slice::<EventMembers>(events[0].as_bytes()).is_ok());
        assert!(serde_json::from_slice::<EventMembers>(events[1].as_bytes()).is_err());
        let slim = String::from_utf8(slim_event(events[0].as_bytes(), "abc").unwrap()).unwrap();
        let elided = "[302 bytes elided; the full event is blob abc]";
        assert_eq!(slim, format!(r#"{{"name":"n","args":{{"k\"ey":"{elided}","s":1}},"args":{{"t":2}}}}"#));
        let slim: Value = serde_json::from_slice(&slim_event(events[1].as_bytes(), "abc").unwrap()).unwrap();
        assert_eq!(slim["args"][0], long.as_str());
        assert_eq!(slim["pad"], long.as_str());
    }
}
