//! The `parse` mode's work: mutated logs through the parser and every stream's analysis tables
//! in this process (parse, route, make the index row as `bundle/stream.rs` does, show the entry
//! to the tables, finish them into JSON), then, with two streams or more, the cross-rank tables
//! from those tables as `bundle/mod.rs` computes them; under `catch_unwind`. A panic anywhere, on this
//! thread or one the code under test started, is caught by the hook installed here.
//!
//! The bundle writer's own stream writer is left out on purpose: its zstd contexts and files
//! cost forty times what parsing a small log does. The `build` mode runs all of it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

use serde_json::Value;
use tlparse_build::analysis::cross_rank::{self, StreamTables, TableSource};
use tlparse_build::analysis::{Event, StreamAnalysis};
use tlparse_build::bundle::stream::StackInterner;
use tlparse_build::bundle::table_files::{self, TableOptions, TableOutput};
use tlparse_build::parse::{Meta, ParsedLog, RankSlot, Routed, parse_log};
use tlparse_build::schema::cross_rank::RankMember;

thread_local! {
    /// The last panic on this thread: message and location.
    static THIS_THREAD_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Whether this thread is running code under test (whose panics are caught, not printed).
    static CATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The last panic on any thread, for panics on threads the code under test started (which
/// reach this thread only as an error saying that a thread panicked).
static ANY_THREAD_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Installs a panic hook that keeps the message and location of each panic for the report;
/// panics outside [`catch`] (the fuzzer's own) still go to the hook there was before.
pub fn install_panic_hook() {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !CATCHING.with(|c| c.get()) {
            previous(info);
        }
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(a panic without a message)".into());
        let location = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
        let text = format!("panicked at {}:\n{message}", location.as_deref().unwrap_or("(unknown)"));
        THIS_THREAD_PANIC.with(|p| *p.borrow_mut() = Some(text.clone()));
        *ANY_THREAD_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(text);
    }));
}

/// How the code under test ended on one input.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran to the end: the number of streams and entries.
    Done { streams: usize, entries: usize },
    /// It panicked: the hook's text (`panicked at LOCATION:\nMESSAGE`).
    Panicked(String),
    /// It returned an error, which an in-memory log should never cause.
    Failed(String),
    /// Lines of the input are in no entry and no diagnostic (or in two): what and where.
    LostLines(String),
}

/// Runs `f`, turning a panic into its message.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    THIS_THREAD_PANIC.with(|p| p.borrow_mut().take());
    CATCHING.with(|c| c.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    result.map_err(|_| THIS_THREAD_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "panicked".into()))
}

/// Parses each log (with the rank its file name would give) and runs every stream's tables to
/// the end, then, with two streams or more, the cross-rank tables over them all.
pub fn run(files: &[(&[u8], Option<u32>)]) -> Outcome {
    match catch(|| pipeline(files)) {
        Ok(Ok(Err(lost))) => Outcome::LostLines(lost),
        Ok(Ok(Ok((streams, entries)))) => Outcome::Done { streams, entries },
        Ok(Err(e)) if e.to_string().contains("panicked") => Outcome::Panicked(
            ANY_THREAD_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_else(|| e.to_string()),
        ),
        Ok(Err(e)) => Outcome::Failed(e.to_string()),
        Err(panic) => Outcome::Panicked(panic),
    }
}

/// The parse and the tables: the number of streams and entries, or which lines were lost.
type Pipeline = io::Result<Result<(usize, usize), String>>;

fn pipeline(files: &[(&[u8], Option<u32>)]) -> Pipeline {
    let mut compared = Vec::new();
    let mut entries = 0;
    for &(text, file_rank) in files {
        let log = parse_log(text, file_rank)?;
        if let Err(lost) = every_line_accounted_for(&log) {
            return Ok(Err(lost));
        }
        for (key, routed) in log.streams {
            entries += routed.len();
            let mut stream = Stream::default();
            for (seq, entry) in routed.into_iter().enumerate() {
                stream.observe(seq as u64, entry);
            }
            let rank = match key.slot {
                RankSlot::Other(rank) => Some(rank),
                RankSlot::Home => file_rank,
            };
            let stream_id = format!("s{}", compared.len());
            let member = RankMember { stream: stream_id, rank, file_rank, label: String::new() };
            let tables = stream.finish()?.into_iter().map(|(name, zst)| (name, Box::new(zst) as TableSource)).collect();
            compared.push(StreamTables::new(member, tables));
        }
    }
    let streams = compared.len();
    if streams >= 2 {
        cross_rank_tables(compared)?;
    }
    Ok(Ok((streams, entries)))
}

/// The cross-rank tables, as the bundle writer computes them from the streams' tables.
fn cross_rank_tables(mut compared: Vec<StreamTables>) -> io::Result<()> {
    let mut members: Vec<RankMember> = compared.iter().map(|s| s.member.clone()).collect();
    cross_rank::labels(&mut members);
    for (s, m) in compared.iter_mut().zip(members) {
        s.member.label = m.label;
    }
    let alignment = cross_rank::align(&compared);
    let mut compressor = table_files::TableCompressor::plain(TableOptions::default().part_bytes);
    cross_rank::build(&compared, &alignment, &cross_rank::NoPayloads, &mut compressor)
        .iter()
        .try_for_each(|t| t.parts.iter().try_for_each(|part| table_json(t.name, part).map(drop)))
}

/// A finished table (zstd-compressed JSON) decompressed, checked to be JSON.
fn table_json(table: &str, compressed: &[u8]) -> io::Result<Vec<u8>> {
    let json = zstd::decode_all(compressed).map_err(|e| io::Error::other(format!("table {table} is not zstd: {e}")))?;
    serde_json::from_slice::<serde::de::IgnoredAny>(&json)
        .map_err(|e| io::Error::other(format!("table {table} is not JSON: {e}")))?;
    Ok(json)
}

/// "Nothing is dropped": each line read is in exactly one entry (its header or payload) or one
/// diagnostic of unreadable lines, in order.
fn every_line_accounted_for(log: &ParsedLog) -> Result<(), String> {
    let mut spans: Vec<(u64, u64)> = log.unreadable.iter().map(|u| (u.line, u.end_line)).collect();
    spans.extend(log.streams.values().flatten().map(|r| (r.entry.line, r.entry.end_line)));
    spans.sort_unstable();
    let mut next = 1;
    for (line, end_line) in spans {
        if line != next || end_line < line {
            return Err(format!("lines {line}..={end_line} follow line {}", next - 1));
        }
        next = end_line + 1;
    }
    if next != log.lines + 1 {
        return Err(format!("{} lines read, {} accounted for", log.lines, next - 1));
    }
    Ok(())
}

/// One stream's stack table and tables, fed as the bundle writer feeds them.
#[derive(Default)]
struct Stream {
    interner: StackInterner,
    analysis: StreamAnalysis,
}

impl Stream {
    /// Makes the entry's index row (stacks interned and the row made by the writer's own
    /// `intern_entry` and `index_row`) and shows it to every table.
    fn observe(&mut self, seq: u64, routed: Routed) {
        let Routed { mut entry, stacks, .. } = routed;
        let mut meta = std::mem::replace(&mut entry.meta, Meta::Value(Value::Null));
        let (envelope_stack, meta_stacks) = self.interner.intern_entry(stacks, &mut meta);
        let row = tlparse_build::bundle::stream::index_row(seq, &mut entry, meta, envelope_stack, meta_stacks);
        let payload = entry.payload.take();
        let bytes = payload.as_ref().map(|p| p.bytes.as_slice());
        let trace = payload.as_ref().and_then(|p| p.trace.as_deref());
        let ev = Event::new(&row, entry.end_line, entry.header_bytes, bytes, trace, self.interner.table());
        self.analysis.observe(&ev);
    }

    /// Finishes every table; each part must come out as JSON. Returns their parts by name,
    /// compressed as written.
    fn finish(self) -> io::Result<BTreeMap<&'static str, Vec<Vec<u8>>>> {
        let mut tables = BTreeMap::new();
        let mut keep = |table: TableOutput| {
            // Checked to be JSON, kept compressed as the bundle writer hands tables over.
            for part in &table.parts {
                table_json(table.name, part)?;
            }
            tables.insert(table.name, table.parts);
            Ok::<_, io::Error>(())
        };
        // As a small stream's: on this thread.
        let options = TableOptions::default();
        self.analysis.finish(self.interner.table(), |jobs| table_files::finish_tables(jobs, 0, &options, &mut keep))?;
        Ok(tables)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlparse_build::parse::Unreadable;
    use tlparse_build::schema::DiagnosticKind;

    fn unreadable(line: u64, end_line: u64) -> Unreadable {
        Unreadable {
            kind: DiagnosticKind::BadPrefix,
            line,
            end_line,
            pid: None,
            message: String::new(),
            raw: Vec::new(),
            spilled: None,
        }
    }

    #[test]
    fn a_line_in_nothing_or_in_two_things_is_lost() {
        let log = |spans: &[(u64, u64)], lines| ParsedLog {
            unreadable: spans.iter().map(|&(a, b)| unreadable(a, b)).collect(),
            lines,
            ..ParsedLog::default()
        };
        assert_eq!(every_line_accounted_for(&log(&[(1, 2), (3, 3)], 3)), Ok(()));
        assert!(every_line_accounted_for(&log(&[(1, 1), (3, 3)], 3)).is_err());
        assert!(every_line_accounted_for(&log(&[(1, 2), (2, 3)], 3)).is_err());
        assert!(every_line_accounted_for(&log(&[(1, 2)], 3)).is_err());
        assert_eq!(every_line_accounted_for(&log(&[], 0)), Ok(()));
    }
}
