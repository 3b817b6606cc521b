//! Reading one input file into the staging directory: a reader thread splits records, the rayon
//! pool parses and hashes them in batches, and this thread applies process context in log order
//! and writes index rows and blob chunks.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::mpsc;

use rayon::prelude::*;

use super::blobs::{Chunk, ChunkWriter, Hash};
use super::inputs::{HashingReader, InputFile, open_reader};
use super::stream::{StreamSummary, StreamWriter};
use crate::parse::{Demux, Parsed, RankSlot, RawRecord, Records, StreamKey, parse_record};
use crate::schema::DiagnosticKind;

/// Bytes of records handed to the parser at once: large enough to keep both cores busy, small
/// enough to keep memory flat.
const BATCH_BYTES: usize = 4 << 20;

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
    pub chunks: Vec<Chunk>,
    pub lines: u64,
    pub bytes: u64,
    pub blake3: Hash,
}

/// Reads one input file; `work` is the staging area for its temporary files.
pub fn process_file(
    index: usize,
    input: &InputFile,
    work: &Path,
    progress: &indicatif::ProgressBar,
) -> io::Result<FileResult> {
    let file = std::fs::File::open(&input.path)?;
    let (raw, hasher) = HashingReader::new(file, progress.clone());
    let reader = open_reader(raw, input.compression)?;
    let (tx, rx) = mpsc::sync_channel::<Vec<RawRecord>>(1);
    let reader_thread = std::thread::spawn(move || -> io::Result<(u64, u64)> {
        let mut records = Records::new(reader);
        let mut batch = Vec::new();
        let mut weight = 0;
        while let Some(record) = records.next_record()? {
            weight += record.weight();
            batch.push(record);
            if weight >= BATCH_BYTES {
                weight = 0;
                if tx.send(std::mem::take(&mut batch)).is_err() {
                    break;
                }
            }
        }
        if !batch.is_empty() {
            let _ = tx.send(batch);
        }
        Ok((records.lines_read(), records.bytes_read))
    });

    let mut chunks = ChunkWriter::new(work, &format!("f{index}"));
    let mut demux = Demux::new(input.rank_from_name);
    let mut writers: HashMap<StreamKey, StreamWriter> = HashMap::new();
    let mut order: Vec<StreamKey> = Vec::new();
    let mut diagnostics = Vec::new();
    let mut result: io::Result<()> = Ok(());
    for batch in rx {
        let parsed: Vec<Parsed> = batch.into_par_iter().map(parse_record).collect();
        result = (|| {
            for p in parsed {
                match p {
                    Parsed::Unreadable(u) => {
                        let raw = *blake3::hash(&u.raw).as_bytes();
                        chunks.add(raw, &u.raw)?;
                        diagnostics.push(FileDiagnostic {
                            kind: u.kind,
                            line: u.line,
                            end_line: u.end_line,
                            stream: u.pid.map(|pid| StreamKey { pid, slot: RankSlot::Home }),
                            message: u.message,
                            raw: Some(raw),
                            raw_size: u.raw.len() as u64,
                        });
                    }
                    Parsed::Entry(entry) => {
                        let mut routed = demux.route(*entry);
                        let key = routed.key;
                        for (kind, message) in routed.entry.problems.drain(..) {
                            diagnostics.push(FileDiagnostic {
                                kind,
                                line: routed.entry.line,
                                end_line: routed.entry.end_line,
                                stream: Some(key),
                                message,
                                raw: None,
                                raw_size: 0,
                            });
                        }
                        if let Some(p) = &routed.entry.payload {
                            chunks.add(p.hash, &p.bytes)?;
                        }
                        let writer = match writers.entry(key) {
                            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                            std::collections::hash_map::Entry::Vacant(v) => {
                                order.push(key);
                                v.insert(StreamWriter::create(&work.join(format!("f{index}-s{}", order.len() - 1)))?)
                            }
                        };
                        writer.write(routed)?;
                    }
                }
            }
            Ok(())
        })();
        if result.is_err() {
            break;
        }
    }
    let read = reader_thread.join().map_err(|_| io::Error::other("reader thread panicked"))?;
    result?;
    let (lines, bytes) = read?;

    let mut streams = Vec::new();
    for key in order {
        let summary = writers.remove(&key).expect("writer for every key").finish()?;
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
    let blake3 = *hasher.lock().expect("hasher lock").0.finalize().as_bytes();
    Ok(FileResult { streams, diagnostics, chunks: chunks.finish()?, lines, bytes, blake3 })
}
