//! Cases: what one seed makes. A parse case is one mutated log held in memory; a build case is a
//! trace on disk (one log, or a directory of two to four rank logs, some compressed and then
//! damaged) plus the output directory's setting, written into a scratch directory.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::corpus::{Corpus, Fixture};
use crate::mutate::{Budget, mutate};
use crate::rng::Rng;

/// Mutated logs for the in-process parser: one, or the rank logs of one job (whose streams then
/// go through the cross-rank tables too).
#[derive(Debug)]
pub struct ParseCase {
    pub files: Vec<ParseFile>,
    /// Which fixtures and which mutations.
    pub description: String,
}

/// One log of a parse case.
#[derive(Debug)]
pub struct ParseFile {
    pub text: Vec<u8>,
    /// The rank a file name would give it.
    pub file_rank: Option<u32>,
}

impl ParseCase {
    /// A case: most often a piece of one fixture (whole, when the fixture is tiny), mutated; a
    /// third of the time the first lines of two to four rank logs of one job, some mutated.
    pub fn generate(corpus: &Corpus, seed: u64) -> ParseCase {
        let mut rng = Rng::new(seed);
        match corpus.pick_ranks(&mut rng) {
            Some(ranks) if rng.one_in(3) => Self::ranks(&mut rng, corpus, &ranks),
            _ => Self::single(&mut rng, corpus),
        }
    }

    fn single(rng: &mut Rng, corpus: &Corpus) -> ParseCase {
        let (fixture, donor) = (rng.pick(&corpus.logs), rng.pick(&corpus.logs));
        let (piece, lines) = window(rng, &fixture.bytes);
        let (donor_piece, _) = window(rng, &donor.bytes);
        let (text, names) = mutate(rng, piece, donor_piece, Budget::PARSE);
        let file_rank = rng.one_in(3).then(|| rng.below(4) as u32);
        let description = format!("{} ({lines}) mutated by {} (donor {})", fixture.name, names.join(", "), donor.name);
        ParseCase { files: vec![ParseFile { text, file_rank }], description }
    }

    /// The same number of first lines of each rank log, so that their compiles align.
    fn ranks(rng: &mut Rng, corpus: &Corpus, ranks: &[&Fixture]) -> ParseCase {
        let lines = rng.log_size(20, 1_000);
        let mut files = Vec::new();
        let mut notes = Vec::new();
        for (rank, fixture) in ranks.iter().enumerate() {
            let piece = first_lines(&fixture.bytes, lines);
            let (text, names) = if rng.one_in(4) {
                (piece.to_vec(), vec!["none"])
            } else {
                let donor = corpus.pick(rng);
                let donor = window(rng, &donor.bytes).0;
                mutate(rng, piece, donor, Budget::PARSE)
            };
            notes.push(format!("rank {rank}: {} mutated by {}", fixture.name, names.join(", ")));
            files.push(ParseFile { text, file_rank: Some(rank as u32) });
        }
        ParseCase { files, description: format!("first {lines} lines of each rank; {}", notes.join("; ")) }
    }

    /// Bytes of input, all files together.
    pub fn size(&self) -> usize {
        self.files.iter().map(|f| f.text.len()).sum()
    }

    /// Writes the logs into `dir`: `input.log`, or `rank_N.log` for each rank.
    pub fn save(&self, dir: &Path) -> io::Result<()> {
        if let [file] = self.files.as_slice() {
            return fs::write(dir.join("input.log"), &file.text);
        }
        for (i, file) in self.files.iter().enumerate() {
            fs::write(dir.join(format!("rank_{i}.log")), &file.text)?;
        }
        Ok(())
    }
}

/// The first `lines` lines of a log, to the end of the entry they end in.
fn first_lines(log: &[u8], lines: usize) -> &[u8] {
    let end = log.iter().enumerate().filter(|&(_, &b)| b == b'\n').nth(lines).map_or(log.len(), |(i, _)| i + 1);
    &log[..next_entry(log, end)]
}

/// Bytes of a fixture given to the in-process parser whole; larger ones are cut to a window
/// (now and then given whole up to [`WHOLE_AT_MOST`]).
const WHOLE_UP_TO: usize = 24 << 10;
const WHOLE_AT_MOST: usize = 320 << 10;

/// A run of whole entries of a log: a few lines to a few hundred, from its start (where its
/// string table is) or from anywhere; the whole log when it is small. Keeps in-process cases
/// small (thousands a second) while every fixture's kinds of entries get their turn. Returns
/// the piece and a note of which bytes it is.
pub fn window<'a>(rng: &mut Rng, log: &'a [u8]) -> (&'a [u8], String) {
    if log.len() <= WHOLE_UP_TO || (log.len() <= WHOLE_AT_MOST && rng.one_in(50)) {
        return (log, "whole".into());
    }
    let start = if rng.one_in(3) { 0 } else { next_entry(log, rng.below(log.len())) };
    let mut end = start;
    for _ in 0..rng.log_size(4, 400) {
        match log[end..].iter().position(|&b| b == b'\n') {
            Some(nl) => end += nl + 1,
            None => end = log.len(),
        }
    }
    let end = next_entry(log, end);
    (&log[start..end], format!("bytes {start}..{end}"))
}

/// Where the first entry at or after `at` starts: a line that is not a payload line (or the end).
fn next_entry(log: &[u8], at: usize) -> usize {
    let mut at = at;
    while at < log.len() {
        let line_start = at == 0 || log[at - 1] == b'\n';
        if line_start && log[at] != b'\t' {
            return at;
        }
        at += log[at..].iter().position(|&b| b == b'\n').map_or(log.len() - at, |nl| nl + 1);
    }
    log.len()
}

/// How an input file is stored on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// One input file of a build case.
#[derive(Debug)]
pub struct CaseFile {
    /// File name (in the trace directory, or the trace itself).
    pub name: String,
    /// The bytes on disk.
    pub bytes: Vec<u8>,
    /// How it was made, for reports.
    pub description: String,
}

/// What is at the output path before the build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutSetup {
    /// Nothing: the usual case.
    Fresh,
    /// An empty directory, which a build may fill.
    EmptyDir,
    /// A directory of the user's that is not a bundle, with `--overwrite`: the build must refuse
    /// and delete nothing.
    UserDir,
}

/// A whole-build case.
#[derive(Debug)]
pub struct BuildCase {
    /// Several rank logs in a directory, or one log given as a file.
    pub rank_dir: bool,
    pub files: Vec<CaseFile>,
    pub out: OutSetup,
    pub no_viewer: bool,
    /// The build's stdout is a pipe closed at the other end (`tlparse-build ... | head -1`).
    pub closed_stdout: bool,
}

/// A build case written to disk.
#[derive(Debug)]
pub struct WrittenCase {
    /// The case's scratch directory: everything below it belongs to this case.
    pub dir: PathBuf,
    /// What the build is given: the log file, or the trace directory.
    pub trace: PathBuf,
    /// The input files written (paths), in `files` order.
    pub inputs: Vec<PathBuf>,
    /// The bundle path given with `-o`.
    pub out: PathBuf,
    /// Files of the user's that the build must leave alone, with their contents.
    pub sentinels: Vec<(PathBuf, Vec<u8>)>,
    /// A name in the trace directory that must appear nowhere in the bundle.
    pub private_name: Option<String>,
    pub rank_dir: bool,
    pub out_setup: OutSetup,
    pub no_viewer: bool,
    pub closed_stdout: bool,
}

impl BuildCase {
    pub fn generate(corpus: &Corpus, seed: u64) -> BuildCase {
        let mut rng = Rng::new(seed);
        let rank_dir = rng.one_in(2);
        let fixtures: Vec<&Fixture> = if rank_dir {
            match corpus.pick_ranks(&mut rng) {
                Some(ranks) if !rng.one_in(4) => ranks,
                _ => (0..rng.between(2, 4)).map(|_| corpus.pick(&mut rng)).collect(),
            }
        } else {
            vec![corpus.pick(&mut rng)]
        };
        let repeat_rank = rng.one_in(10);
        let mut files = Vec::new();
        for (i, fixture) in fixtures.iter().enumerate() {
            let rank = if repeat_rank && i > 0 { i - 1 } else { i };
            files.push(make_file(&mut rng, corpus, fixture, rank_dir, rank, i));
        }
        let out = match rng.below(100) {
            0..=84 => OutSetup::Fresh,
            85..=92 => OutSetup::EmptyDir,
            _ => OutSetup::UserDir,
        };
        BuildCase { rank_dir, files, out, no_viewer: rng.one_in(2), closed_stdout: rng.one_in(20) }
    }

    /// A line per file saying how it was made.
    pub fn description(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| format!("{}: {}", f.name, f.description)).collect();
        format!(
            "{}; output {:?}{}{}\n{}",
            if self.rank_dir { "rank directory" } else { "single log" },
            self.out,
            if self.no_viewer { ", --no-viewer" } else { "" },
            if self.closed_stdout { ", stdout a closed pipe" } else { "" },
            files.join("\n")
        )
    }

    /// Writes the case under `dir` (which must not exist yet).
    pub fn write(&self, dir: &Path) -> io::Result<WrittenCase> {
        let trace_dir = dir.join("trace");
        let out_parent = dir.join("out");
        fs::create_dir_all(&trace_dir)?;
        fs::create_dir_all(&out_parent)?;
        let mut inputs = Vec::new();
        for file in &self.files {
            let path = trace_dir.join(&file.name);
            fs::write(&path, &file.bytes)?;
            inputs.push(path);
        }
        let mut sentinels = vec![(out_parent.join("keep.txt"), b"the user's file next to the bundle\n".to_vec())];
        let private_name = self.rank_dir.then(|| "private-notes.md".to_string());
        if let Some(name) = &private_name {
            sentinels.push((trace_dir.join(name), b"not a log, and nobody's business\n".to_vec()));
        }
        let out = out_parent.join("bundle");
        match self.out {
            OutSetup::Fresh => {}
            OutSetup::EmptyDir => fs::create_dir(&out)?,
            OutSetup::UserDir => {
                fs::create_dir(&out)?;
                sentinels.push((out.join("thesis.tex"), b"\\documentclass{article}\n".to_vec()));
            }
        }
        for (path, bytes) in &sentinels {
            fs::write(path, bytes)?;
        }
        let trace = if self.rank_dir { trace_dir } else { inputs[0].clone() };
        Ok(WrittenCase {
            dir: dir.to_owned(),
            trace,
            inputs,
            out,
            sentinels,
            private_name,
            rank_dir: self.rank_dir,
            out_setup: self.out,
            no_viewer: self.no_viewer,
            closed_stdout: self.closed_stdout,
        })
    }

    /// Bytes on disk, all files together.
    pub fn size(&self) -> usize {
        self.files.iter().map(|f| f.bytes.len()).sum()
    }
}

/// One input: a mutated fixture (or, rarely, a decompression bomb), maybe compressed, maybe
/// damaged after compression.
fn make_file(rng: &mut Rng, corpus: &Corpus, fixture: &Fixture, rank_dir: bool, rank: usize, i: usize) -> CaseFile {
    if rng.one_in(400) {
        return bomb(rng, rank_dir, rank, i);
    }
    let donor = corpus.pick(rng);
    // A few files go in untouched, so that a damaged rank sits among healthy ones.
    let (text, names) = if rank_dir && rng.one_in(4) {
        (fixture.bytes.to_vec(), vec!["none"])
    } else {
        mutate(rng, &fixture.bytes, &donor.bytes, Budget::BUILD)
    };
    let compression = match rng.below(100) {
        0..=69 => Compression::None,
        70..=84 => Compression::Gzip,
        _ => Compression::Zstd,
    };
    let (bytes, damage) = compress(rng, &text, compression);
    let name = file_name(rng, rank_dir, rank, i, compression);
    let description = format!("{} mutated by {}; {compression:?}{damage}", fixture.name, names.join(", "));
    CaseFile { name, bytes, description }
}

fn file_name(rng: &mut Rng, rank_dir: bool, rank: usize, i: usize, compression: Compression) -> String {
    // The extension usually says the compression; the reader goes by the magic bytes anyway.
    let ext = match compression {
        Compression::Gzip if !rng.one_in(5) => ".log.gz",
        Compression::Zstd if !rng.one_in(5) => ".log.zst",
        _ => ".log",
    };
    if rank_dir || rng.one_in(3) {
        format!("dedicated_log_torch_trace_rank_{rank}_f{i}{ext}")
    } else {
        format!("trace{ext}")
    }
}

/// Compresses `text`, then now and then cuts or corrupts the result; returns the bytes and a
/// note of the damage.
fn compress(rng: &mut Rng, text: &[u8], compression: Compression) -> (Vec<u8>, String) {
    let bytes = match compression {
        Compression::None => return (text.to_vec(), String::new()),
        Compression::Gzip => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(text).expect("in memory");
            gz.finish().expect("in memory")
        }
        Compression::Zstd => zstd::bulk::compress(text, 1).expect("in memory"),
    };
    damage(rng, bytes)
}

fn damage(rng: &mut Rng, mut bytes: Vec<u8>) -> (Vec<u8>, String) {
    match rng.below(10) {
        0..=4 => (bytes, String::new()),
        5..=6 => {
            let at = rng.below(bytes.len());
            bytes.truncate(at);
            (bytes, format!(", truncated at byte {at}"))
        }
        7..=8 => {
            // Past the header when there is one; a file of a few bytes is all header.
            let at = rng.between(bytes.len().min(20).min(bytes.len() - 1), bytes.len() - 1);
            let end = (at + 16).min(bytes.len());
            for b in &mut bytes[at..end] {
                *b ^= 0x5a;
            }
            (bytes, format!(", corrupted at byte {at}"))
        }
        _ => {
            bytes.extend_from_slice(b"trailing garbage\n");
            (bytes, ", with trailing garbage".to_string())
        }
    }
}

/// A small `.zst` that inflates to one header and a single line of hundreds of MB: the log
/// that made the old builds run out of memory.
fn bomb(rng: &mut Rng, rank_dir: bool, rank: usize, i: usize) -> CaseFile {
    let size = rng.between(300, 500) << 20;
    let mut enc = zstd::Encoder::new(Vec::new(), 1).expect("in memory");
    enc.write_all(b"V1120 23:44:52.007000 4242 torch/_logging/structured.py:28] {\"str\": [\"a.py\", 0]}\n")
        .expect("in memory");
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..size >> 20 {
        enc.write_all(&chunk).expect("in memory");
    }
    let bytes = enc.finish().expect("in memory");
    let name = file_name(rng, rank_dir, rank, i, Compression::Zstd);
    CaseFile { name, bytes, description: format!("zstd bomb: a header, then one line of {} MiB", size >> 20) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn corpus() -> Corpus {
        let log = b"V0101 00:00:00.000000 1 a.py:1] {\"str\": [\"a.py\", 0]}\nV0101 00:00:00.000000 1 a.py:2] {\"chromium_event\": {}, \"has_payload\": \"00000000000000000000000000000000\"}\n\t{\"ts\": 1}\n";
        Corpus::of(vec![Fixture { name: "a.log".into(), bytes: Arc::new(log.to_vec()) }])
    }

    #[test]
    fn a_seed_makes_the_same_case() {
        let corpus = corpus();
        for seed in 0..50 {
            let (a, b) = (BuildCase::generate(&corpus, seed), BuildCase::generate(&corpus, seed));
            assert_eq!(a.description(), b.description());
            assert!(a.files.iter().zip(&b.files).all(|(x, y)| x.bytes == y.bytes && x.name == y.name));
            let texts = |c: ParseCase| c.files.into_iter().map(|f| f.text).collect::<Vec<_>>();
            assert_eq!(texts(ParseCase::generate(&corpus, seed)), texts(ParseCase::generate(&corpus, seed)));
        }
    }

    /// An empty or tiny text compresses to fewer bytes than the header that damage spares
    /// (seen in CI: `below(0)` while generating a build case).
    #[test]
    fn tiny_compressed_files_can_be_damaged() {
        let mut rng = Rng::new(1);
        for text in [&b""[..], b"V", b"V0101 00:00:00"] {
            for compression in [Compression::Gzip, Compression::Zstd] {
                for _ in 0..200 {
                    let (bytes, _) = compress(&mut rng, text, compression);
                    assert!(bytes.len() <= 64, "{compression:?} of {} bytes", text.len());
                }
            }
        }
    }

    #[test]
    fn compressed_files_decompress_unless_damaged() {
        let mut rng = Rng::new(9);
        let text = b"hello\n".repeat(1000);
        for _ in 0..40 {
            let (bytes, damage) = compress(&mut rng, &text, Compression::Zstd);
            if damage.is_empty() {
                assert_eq!(zstd::decode_all(bytes.as_slice()).unwrap(), text);
            } else {
                assert_ne!(zstd::decode_all(bytes.as_slice()).ok(), Some(text.clone()), "{damage}");
            }
        }
    }
}
