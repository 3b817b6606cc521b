//! Finding the logs to read (a file, or every trace log below a directory) and opening them,
//! decompressing `.gz` / `.zst` transparently. Paths are recorded relative to the trace given.
//! The walk never follows a symlink out of the trace directory, never opens a FIFO or a device,
//! never reads a bundle (the output or another) as input, and one bad entry never stops it.

use std::fs::{self, File, Metadata};
use std::io::{self, BufRead, BufReader, Read, Seek};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use camino::Utf8Path;

use super::file::FileDiagnostic;
use crate::parse::{glog, rank_from_file_name};
use crate::schema::{Diagnostic, DiagnosticKind, InputCompression, Skipped};

use super::BuildError;

/// Decompressed bytes at the start of a file searched for a log header: a rank log that opens
/// with a banner (NCCL, a progress bar, a warning) is still a log, and a big file that is not
/// one is not read whole.
pub const LOG_WINDOW: u64 = 4 << 20;
/// Bytes of each line kept for the header test: a glog prefix and the `{` after it fit easily,
/// and a huge line must not be held whole.
const LINE_PEEK: usize = 4096;
/// The largest window zstd writes (`zstd --long=31`); libzstd's decoder refuses windows over
/// 2^27 unless told otherwise.
const ZSTD_WINDOW_LOG_MAX: u32 = 31;

/// A log file to read.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// Where to open it: the trace given, joined with the path below it (not always UTF-8).
    pub path: PathBuf,
    /// Its path in the bundle: below the trace directory (`/`-separated), or the file name when
    /// the trace given is a file. Never absolute: bundles are shared.
    pub name: String,
    /// Size on disk.
    pub size: u64,
    pub compression: InputCompression,
    pub rank_from_name: Option<u32>,
    /// Device and inode of the file classified, so the file read later is that file.
    pub identity: (u64, u64),
}

/// Why a file or directory was passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    Empty,
    NoHeader,
    /// Opening, reading or decompressing failed before any log header (the error).
    Unreadable(String),
    NotRegular,
    SymlinkOut,
    SymlinkDangling,
    SymlinkLoop,
    SymlinkToDirectory,
    SameFile,
    /// A log whose name is not UTF-8 and, as text, is another log's name.
    NonUtf8Name,
    /// Listing it failed (the error).
    UnreadableDirectory(String),
    OutputDirectory,
    Bundle,
    Staging,
    /// `--latest` chose another log (its name).
    NotNewest(String),
}

impl Skip {
    /// The reason as the manifest groups it (the same for every file skipped alike).
    pub fn reason(&self) -> String {
        match self {
            Skip::Empty => "empty file".into(),
            Skip::NoHeader => format!("not a TORCH_TRACE log (no log header in its first {} MiB)", LOG_WINDOW >> 20),
            Skip::Unreadable(_) => "cannot be read or decompressed".into(),
            Skip::NotRegular => "not a regular file (FIFO, socket or device)".into(),
            Skip::SymlinkOut => "symlink leading out of the trace directory".into(),
            Skip::SymlinkDangling => "dangling symlink".into(),
            Skip::SymlinkLoop => "symlink loop".into(),
            Skip::SymlinkToDirectory => "symlink to a directory (its files are read where it points)".into(),
            Skip::SameFile => "another name (hard link or symlink) of a file read under its own name".into(),
            Skip::NonUtf8Name => "name is not UTF-8, and as text is another log's name".into(),
            Skip::UnreadableDirectory(_) => "directory that cannot be read".into(),
            Skip::OutputDirectory => "the output directory".into(),
            Skip::Bundle => "a tlparse-build bundle".into(),
            Skip::Staging => "a tlparse-build staging or backup directory".into(),
            Skip::NotNewest(chosen) => format!("not the newest log (--latest chose {chosen})"),
        }
    }

    /// The reason with the error behind it, for messages about one file.
    fn describe(&self) -> String {
        match self {
            Skip::Unreadable(error) | Skip::UnreadableDirectory(error) => format!("{}: {error}", self.reason()),
            _ => self.reason(),
        }
    }
}

/// A file or directory passed over.
#[derive(Debug, Clone)]
pub struct SkippedFile {
    /// Relative to the trace given (with U+FFFD for bytes of a name that are not UTF-8); `None`
    /// when unknown.
    pub path: Option<String>,
    pub skip: Skip,
}

/// The logs found at a path, and what was passed over.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Logs in processing order: ranked logs by rank, then the others by path.
    pub inputs: Vec<InputFile>,
    /// Files and directories passed over, by path.
    pub skipped: Vec<SkippedFile>,
    /// `unreadable_log` diagnostics: logs of the job that could not be read (also in `skipped`).
    pub diagnostics: Vec<Diagnostic>,
}

impl Discovery {
    /// The skipped files grouped by reason, as the manifest records them: counted, and named
    /// only when the name looks like a log (the rest may be anyone's private files).
    pub fn skipped_groups(&self) -> Vec<Skipped> {
        let mut groups: std::collections::BTreeMap<String, Skipped> = std::collections::BTreeMap::new();
        for skipped in &self.skipped {
            let reason = skipped.skip.reason();
            let group = groups.entry(reason.clone()).or_insert_with(|| Skipped { reason, count: 0, paths: Vec::new() });
            group.count += 1;
            if let Some(path) = skipped.path.as_ref().filter(|p| looks_like_log(p)) {
                group.paths.push(path.clone());
            }
        }
        groups.into_values().collect()
    }

    /// What was found instead of logs, for the error when there is no log at all.
    fn nothing_found(&self) -> String {
        if self.skipped.is_empty() {
            return "it holds no files".into();
        }
        let groups: Vec<String> = self.skipped_groups().iter().map(|g| format!("{}: {}", g.reason, g.count)).collect();
        let mut text = format!("skipped {}: {}", self.skipped.len(), groups.join("; "));
        for d in &self.diagnostics {
            text.push_str(&format!("; {}: {}", d.file, d.message));
        }
        text
    }
}

/// Whether a name looks like a log file: such names are listed among the skipped files, others
/// only counted.
pub fn looks_like_log(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.contains("torch_trace") || [".log", ".txt", ".gz", ".zst"].iter().any(|ext| name.ends_with(ext))
}

/// Finds the logs at `path`: the file itself, or every TORCH_TRACE log below a directory
/// (recognised by content: a log header within its first [`LOG_WINDOW`] bytes). `output` is
/// never read as input.
pub fn discover(path: &Utf8Path, latest: bool, output: &Utf8Path) -> Result<Discovery, BuildError> {
    let meta = fs::metadata(path).map_err(|e| BuildError::io(path, e))?;
    if meta.is_file() {
        if latest {
            return Err(BuildError::Usage(format!("--latest needs a directory, but {path} is a file")));
        }
        let input = read_trace_file(path)?;
        return Ok(Discovery { inputs: vec![input], ..Discovery::default() });
    }
    if !meta.is_dir() {
        let reason = "not a regular file or directory (a FIFO, socket or device)".into();
        return Err(BuildError::NotATrace { path: path.to_owned(), reason });
    }
    let output = fs::metadata(output).ok().map(|m| identity(&m));
    let walk = walk(path, output).map_err(|e| BuildError::io(path, e))?;
    let found = walk.into_discovery(latest);
    if found.inputs.is_empty() {
        return Err(BuildError::NoLogs { path: path.to_owned(), found: found.nothing_found() });
    }
    Ok(found)
}

/// The trace given as a file: a log, or an error saying why not.
fn read_trace_file(path: &Utf8Path) -> Result<InputFile, BuildError> {
    let name = path.file_name().unwrap_or(path.as_str()).to_string();
    let (file, meta) = open_nonblocking(path.as_std_path(), true).map_err(|e| BuildError::io(path, e))?;
    classify(file, &meta, path.as_std_path().to_owned(), name)
        .map_err(|skip| BuildError::NotATrace { path: path.to_owned(), reason: skip.describe() })
}

/// A log found by the walk.
struct Candidate {
    input: InputFile,
    modified: Option<SystemTime>,
    /// Found through a symlink: the file's own name is preferred.
    via_symlink: bool,
}

/// A file passed over by the walk, with what `--latest` needs to know of it.
struct Passed {
    skipped: SkippedFile,
    modified: Option<SystemTime>,
}

/// What the walk of a trace directory found.
#[derive(Default)]
struct Walk {
    candidates: Vec<Candidate>,
    passed: Vec<Passed>,
}

/// Walks a trace directory in file-name order. Directory symlinks are never descended: a target
/// inside the trace directory is walked under its own name anyway, and one outside is not ours
/// to read; so no loop is possible. Errors on one entry skip that entry. A name that is not
/// UTF-8 is read all the same, recorded with U+FFFD for its other bytes.
fn walk(root: &Utf8Path, output: Option<(u64, u64)>) -> io::Result<Walk> {
    let canonical_root = fs::canonicalize(root)?;
    let mut found = Walk::default();
    let mut entries = walkdir::WalkDir::new(root).sort_by_file_name().into_iter();
    while let Some(item) = entries.next() {
        let entry = match item {
            Ok(entry) => entry,
            Err(e) => {
                let path = e.path().map(|p| relative_name(root, p));
                found.pass(path, Skip::UnreadableDirectory(e.to_string()), None);
                continue;
            }
        };
        let name = relative_name(root, entry.path());
        let kind = entry.file_type();
        // The root is a directory (checked), though its entry is a symlink when TRACE is one.
        if kind.is_dir() || entry.depth() == 0 {
            if let Some(skip) = excluded_directory(&entry, output) {
                entries.skip_current_dir();
                found.pass(Some(name), skip, None);
            }
            continue;
        }
        let target = if kind.is_file() {
            Ok(entry.path().to_owned())
        } else if kind.is_symlink() {
            symlink_target(entry.path(), &canonical_root)
        } else {
            Err(Skip::NotRegular)
        };
        found.consider(entry.path().to_owned(), name, target, kind.is_symlink());
    }
    Ok(found)
}

impl Walk {
    fn pass(&mut self, path: Option<String>, skip: Skip, modified: Option<SystemTime>) {
        self.passed.push(Passed { skipped: SkippedFile { path, skip }, modified });
    }

    /// Classifies a file found at `path` whose bytes are at `target` (itself, or where its
    /// symlink resolved).
    fn consider(&mut self, path: PathBuf, name: String, target: Result<std::path::PathBuf, Skip>, via_symlink: bool) {
        let opened = target.and_then(|t| open_nonblocking(&t, false).map_err(|e| Skip::Unreadable(e.to_string())));
        let (file, meta) = match opened {
            Ok(opened) => opened,
            Err(skip) => return self.pass(Some(name), skip, None),
        };
        let modified = meta.modified().ok();
        match classify(file, &meta, path, name.clone()) {
            Ok(input) => self.candidates.push(Candidate { input, modified, via_symlink }),
            Err(skip) => self.pass(Some(name), skip, modified),
        }
    }

    /// Settles what the walk found: one name per file, the newest log alone with `--latest`,
    /// logs in rank order, and the lost logs as diagnostics.
    fn into_discovery(mut self, latest: bool) -> Discovery {
        self.drop_second_names();
        self.drop_clashing_names();
        let mut newest_time = None;
        if latest {
            self.keep_newest();
            newest_time = self.candidates.first().and_then(|c| c.modified);
        }
        let mut found = Discovery::default();
        for passed in self.passed {
            // With --latest, a lost log older than the one chosen would not have been read.
            let older = latest && passed.modified.is_some_and(|m| newest_time.is_some_and(|n| m < n));
            if !older {
                found.diagnostics.extend(lost_log(&passed.skipped));
            }
            found.skipped.push(passed.skipped);
        }
        found.inputs = self.candidates.into_iter().map(|c| c.input).collect();
        found.inputs.sort_by(|a, b| {
            (a.rank_from_name.is_none(), a.rank_from_name, &a.name).cmp(&(
                b.rank_from_name.is_none(),
                b.rank_from_name,
                &b.name,
            ))
        });
        found.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        found.diagnostics.sort_by(|a, b| a.file.cmp(&b.file));
        found
    }

    /// Keeps one name per file (hard links, symlinks inside the trace directory): its own name
    /// over a symlink's, then the first in path order. Reading it twice would duplicate a rank.
    fn drop_second_names(&mut self) {
        let key = |c: &Candidate| (c.input.identity, c.via_symlink, c.input.name.clone());
        self.candidates.sort_by_key(key);
        let mut kept: Vec<Candidate> = Vec::with_capacity(self.candidates.len());
        for candidate in self.candidates.drain(..) {
            if kept.last().is_some_and(|k| k.input.identity == candidate.input.identity) {
                let skipped = SkippedFile { path: Some(candidate.input.name), skip: Skip::SameFile };
                self.passed.push(Passed { skipped, modified: None });
            } else {
                kept.push(candidate);
            }
        }
        self.candidates = kept;
    }

    /// Keeps one log per name in the bundle: a name that is not UTF-8 reads, as text, like any
    /// other with the same bytes replaced (or with U+FFFD itself). A UTF-8 name is kept over one
    /// that is not, then the first in path order; the others are lost logs.
    fn drop_clashing_names(&mut self) {
        let lossy = |c: &Candidate| c.input.path.to_str().is_none();
        self.candidates
            .sort_by(|a, b| (&a.input.name, lossy(a), &a.input.path).cmp(&(&b.input.name, lossy(b), &b.input.path)));
        let mut kept: Vec<Candidate> = Vec::with_capacity(self.candidates.len());
        for candidate in self.candidates.drain(..) {
            if kept.last().is_some_and(|k| k.input.name == candidate.input.name) {
                let skipped = SkippedFile { path: Some(candidate.input.name), skip: Skip::NonUtf8Name };
                self.passed.push(Passed { skipped, modified: candidate.modified });
            } else {
                kept.push(candidate);
            }
        }
        self.candidates = kept;
    }

    /// With `--latest`: the newest log alone (ties broken by name, so the choice is
    /// deterministic); the others are skipped.
    fn keep_newest(&mut self) {
        self.candidates.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.input.name.cmp(&b.input.name)));
        let others = self.candidates.split_off(self.candidates.len().min(1));
        let Some(newest) = self.candidates.first().map(|c| c.input.name.clone()) else { return };
        for other in others {
            self.pass(Some(other.input.name), Skip::NotNewest(newest.clone()), None);
        }
    }
}

/// The `unreadable_log` diagnostic of a skipped file that may have been a log of the job: one
/// named like a trace log (whatever kept it from being read), any file or directory that could
/// not be read (what it held is unknown), a log whose name clashed with another's. A rank may be
/// missing from the bundle, so `--strict` must fail.
fn lost_log(skipped: &SkippedFile) -> Option<Diagnostic> {
    let path = skipped.path.clone().unwrap_or_else(|| ".".into());
    let file_name = path.rsplit('/').next().unwrap_or(&path);
    const A_LOG: (&str, &str) = ("a trace log", "what it holds is missing");
    let (lost, file, (what, missing)) = match &skipped.skip {
        // A file not named like a log is named by its directory (its own name stays private).
        Skip::Unreadable(_) if !looks_like_log(file_name) => {
            (true, parent_name(&path), ("a file in this directory", "if it was a log, what it holds is missing"))
        }
        Skip::Unreadable(_) | Skip::NonUtf8Name => (true, path.clone(), A_LOG),
        Skip::UnreadableDirectory(_) => (true, path.clone(), ("a directory of the trace", "any log in it is missing")),
        // Read under another name or not wanted; or, for a directory link, read where it points.
        Skip::SameFile | Skip::NotNewest(_) | Skip::SymlinkToDirectory => (false, path.clone(), A_LOG),
        Skip::OutputDirectory | Skip::Bundle | Skip::Staging => (false, path.clone(), A_LOG),
        _ => (file_name.to_ascii_lowercase().contains("torch_trace"), path.clone(), A_LOG),
    };
    lost.then(|| Diagnostic {
        kind: DiagnosticKind::UnreadableLog,
        file,
        line: 0,
        end_line: 0,
        stream: None,
        message: format!("{what} was not read ({}): {missing}", skipped.skip.describe()),
        raw: None,
    })
}

/// The directory of a path below the trace (`.` for the trace itself).
fn parent_name(path: &str) -> String {
    path.rsplit_once('/').map_or(".", |(dir, _)| dir).to_string()
}

/// The path of `path` below `root`, `/`-separated (`.` for the root itself), with U+FFFD for
/// bytes that are not UTF-8.
fn relative_name(root: &Utf8Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
    if rel.is_empty() { ".".into() } else { rel.into_owned() }
}

/// Why a directory of the walk is not descended, if it is not: the output directory, a bundle
/// (its packs hold log lines, but they are not a log), or our own staging and backup directories.
fn excluded_directory(entry: &walkdir::DirEntry, output: Option<(u64, u64)>) -> Option<Skip> {
    if output.is_some() && entry.metadata().ok().map(|m| identity(&m)) == output {
        return Some(Skip::OutputDirectory);
    }
    let name = entry.file_name().to_string_lossy();
    if entry.depth() > 0 && name.starts_with('.') && name.contains(".tlparse-build-") {
        return Some(Skip::Staging);
    }
    super::reader::is_bundle(entry.path()).then_some(Skip::Bundle)
}

/// Where a symlink of the walk leads, if it is a regular file inside the trace directory.
fn symlink_target(link: &Path, canonical_root: &Path) -> Result<std::path::PathBuf, Skip> {
    let target = fs::canonicalize(link).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => Skip::SymlinkLoop,
        Some(libc::ENOENT) => Skip::SymlinkDangling,
        _ => Skip::Unreadable(e.to_string()),
    })?;
    if !target.starts_with(canonical_root) {
        return Err(Skip::SymlinkOut);
    }
    let meta = fs::metadata(&target).map_err(|e| Skip::Unreadable(e.to_string()))?;
    if meta.is_dir() {
        Err(Skip::SymlinkToDirectory)
    } else if !meta.is_file() {
        Err(Skip::NotRegular)
    } else {
        Ok(target)
    }
}

/// Opens a file to read without blocking, should it be (or have become) a FIFO, and without
/// following a symlink in its last component unless `follow`.
fn open_nonblocking(path: &Path, follow: bool) -> io::Result<(File, Metadata)> {
    let mut options = fs::OpenOptions::new();
    let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
    options.read(true).custom_flags(libc::O_NONBLOCK | nofollow);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// Opens an input found by [`discover`] for reading, checking it is still the file classified
/// (a FIFO or another file swapped in since is refused, never read).
pub fn open_input(input: &InputFile) -> io::Result<File> {
    let (file, meta) = open_nonblocking(&input.path, true)?;
    if !meta.is_file() || identity(&meta) != input.identity {
        return Err(io::Error::other("the file changed since it was found"));
    }
    Ok(file)
}

fn identity(meta: &Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

/// Decides whether an opened file is a TORCH_TRACE log; `Err` says why it is not.
fn classify(mut file: File, meta: &Metadata, path: PathBuf, name: String) -> Result<InputFile, Skip> {
    if !meta.is_file() {
        return Err(Skip::NotRegular);
    }
    if meta.len() == 0 {
        return Err(Skip::Empty);
    }
    let unreadable = |e: io::Error| Skip::Unreadable(e.to_string());
    let compression = detect_compression(&mut file).map_err(unreadable)?;
    let (mut reader, stop) = open_reader_buffered(file, compression, PEEK_BUFFER).map_err(unreadable)?;
    if !find_header(&mut reader).map_err(unreadable)? {
        return Err(match stop.get() {
            Some(error) => Skip::Unreadable(error.clone()),
            None => Skip::NoHeader,
        });
    }
    let file_name = name.rsplit('/').next().unwrap_or(&name);
    let rank_from_name = rank_from_file_name(file_name);
    Ok(InputFile { path, name, size: meta.len(), compression, rank_from_name, identity: identity(meta) })
}

/// Whether a log header (a glog prefix, then a JSON object) starts a line within the first
/// [`LOG_WINDOW`] bytes. Only the first [`LINE_PEEK`] bytes of each line are kept.
fn find_header(reader: &mut impl BufRead) -> io::Result<bool> {
    let mut budget = LOG_WINDOW;
    let mut line = Vec::with_capacity(LINE_PEEK);
    while budget > 0 {
        line.clear();
        let read = read_line_start(reader, &mut line, budget)?;
        if read == 0 {
            return Ok(false);
        }
        budget -= read;
        let text = String::from_utf8_lossy(&line);
        if glog::parse_prefix(text.trim_end()).is_some_and(|p| p.rest.trim_start().starts_with('{')) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Reads one line (at most `budget` bytes of it), keeping its first [`LINE_PEEK`] bytes in
/// `start`; returns the bytes read.
fn read_line_start(reader: &mut impl BufRead, start: &mut Vec<u8>, budget: u64) -> io::Result<u64> {
    let mut read = 0;
    while read < budget {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let allowed = buf.len().min(usize::try_from(budget - read).unwrap_or(usize::MAX));
        let (take, done) = match memchr::memchr(b'\n', &buf[..allowed]) {
            Some(i) => (i + 1, true),
            None => (allowed, false),
        };
        let keep = take.min(LINE_PEEK - start.len().min(LINE_PEEK));
        start.extend_from_slice(&buf[..keep]);
        reader.consume(take);
        read += take as u64;
        if done {
            break;
        }
    }
    Ok(read)
}

/// Detects gzip and zstd by their magic bytes, and rewinds.
fn detect_compression(file: &mut File) -> io::Result<InputCompression> {
    let mut magic = Vec::with_capacity(4);
    file.by_ref().take(4).read_to_end(&mut magic)?;
    file.rewind()?;
    Ok(match magic[..] {
        [0x1f, 0x8b, ..] => InputCompression::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd] => InputCompression::Zstd,
        _ => InputCompression::None,
    })
}

/// The first read or decompression error of an input: the text ended there.
pub type ReadStop = Arc<OnceLock<String>>;

/// The most decompressed bytes asked of a decoder at once. A decoder drops what it decoded in
/// the call that fails (flate2 does), so this bounds the text lost before a corrupt spot.
pub const DECODE_STEP: usize = 8 << 10;

/// The buffer a log is read through: large reads keep the kernel's per-call cost small.
const READ_BUFFER: usize = 1 << 20;
/// The buffer a file's start is classified through. A log's header is on its first line, and a
/// buffer as large as [`READ_BUFFER`] read (and faulted in) a megabyte of every input before
/// its build began: a millisecond or more on the one thread then running, and a gigabyte read
/// twice for a thousand ranks.
const PEEK_BUFFER: usize = 64 << 10;

/// Wraps raw file bytes in the right decoder. A read or decompression error ends the text
/// where it happened (what was decoded before it, a partial last line too, is read as usual)
/// and is kept in the [`ReadStop`]: a killed job's truncated `.gz` still gives what it holds.
pub fn open_reader<R: Read + Send + 'static>(
    raw: R,
    compression: InputCompression,
) -> io::Result<(Box<dyn BufRead + Send>, ReadStop)> {
    open_reader_buffered(raw, compression, READ_BUFFER)
}

/// [`open_reader`] with a buffer of `capacity` bytes.
fn open_reader_buffered<R: Read + Send + 'static>(
    raw: R,
    compression: InputCompression,
    capacity: usize,
) -> io::Result<(Box<dyn BufRead + Send>, ReadStop)> {
    let (decoded, step): (Box<dyn Read + Send>, usize) = match compression {
        InputCompression::None => (Box::new(raw), capacity),
        InputCompression::Gzip => (Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(raw))), DECODE_STEP),
        InputCompression::Zstd => {
            let mut decoder = zstd::Decoder::new(raw)?;
            decoder.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
            (Box::new(decoder), DECODE_STEP)
        }
    };
    let stop = ReadStop::default();
    let reader = StopAtError { inner: decoded, step, stop: stop.clone() };
    Ok((Box::new(BufReader::with_capacity(capacity, reader)), stop))
}

/// A reader that reports its inner reader's first error as the end of input, and keeps it. It
/// fills the buffer it is given in steps of at most `step` bytes.
struct StopAtError<R> {
    inner: R,
    step: usize,
    stop: ReadStop,
}

impl<R: Read> Read for StopAtError<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() && self.stop.get().is_none() {
            let end = buf.len().min(filled + self.step);
            match self.inner.read(&mut buf[filled..end]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = self.stop.set(e.to_string());
                }
            }
        }
        Ok(filled)
    }
}

/// The diagnostic of an input whose text ended at a read or decompression error.
pub fn truncated_input(lines: u64, error: &str) -> FileDiagnostic {
    FileDiagnostic {
        kind: DiagnosticKind::TruncatedInput,
        line: lines,
        end_line: lines,
        stream: None,
        message: format!("the input ends with an error after line {lines}: {error}; every line before it is kept"),
        raw: None,
        raw_size: 0,
    }
}

/// Hashes the bytes a read error left unread, so an input's hash is still its whole file's
/// (a corrupt `.gz` stops the decoder before the end). Best effort: a file that cannot be read
/// again keeps the hash of what was read.
pub fn hash_unread_rest(input: &InputFile, hasher: &Mutex<(blake3::Hasher, u64)>) {
    let mut h = hasher.lock().expect("hasher lock");
    let Ok(mut file) = open_input(input) else { return };
    if file.seek(io::SeekFrom::Start(h.1)).is_err() {
        return;
    }
    if let Ok(n) = io::copy(&mut file, &mut h.0) {
        h.1 += n;
    }
}

/// A reader that hashes and counts the raw bytes passing through it, and reports progress.
pub struct HashingReader<R> {
    inner: R,
    hasher: std::sync::Arc<std::sync::Mutex<(blake3::Hasher, u64)>>,
    progress: indicatif::ProgressBar,
}

impl<R> HashingReader<R> {
    pub fn new(
        inner: R,
        progress: indicatif::ProgressBar,
    ) -> (Self, std::sync::Arc<std::sync::Mutex<(blake3::Hasher, u64)>>) {
        let hasher = std::sync::Arc::new(std::sync::Mutex::new((blake3::Hasher::new(), 0)));
        (HashingReader { inner, hasher: hasher.clone(), progress }, hasher)
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut h = self.hasher.lock().expect("hasher lock");
        h.0.update(&buf[..n]);
        h.1 += n as u64;
        self.progress.inc(n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that gives `good` then fails.
    struct FailsAfter(&'static [u8]);

    impl Read for FailsAfter {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::other("disk on fire"));
            }
            let n = buf.len().min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_read_error_ends_the_text_after_what_was_read_and_is_kept() {
        let (mut reader, stop) = open_reader(FailsAfter(b"line 1\npartial"), InputCompression::None).unwrap();
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        assert_eq!(text, "line 1\npartial");
        assert_eq!(stop.get().map(String::as_str), Some("disk on fire"));
    }

    #[test]
    fn a_header_is_found_after_a_banner_but_not_past_the_window() {
        let header = "V1206 15:18:15.925000 1 torch/a.py:1] {\"str\": [\"x\", 0]}\n";
        let banner = "NCCL INFO Bootstrap\nLoading checkpoint shards: 100%|##########| 2/2\n";
        assert!(find_header(&mut format!("{banner}{header}").as_bytes()).unwrap());
        // A glog line of plain logging is not a trace header.
        assert!(!find_header(&mut "I1206 15:18:15.925000 1 a.py:1] hello\n".as_bytes()).unwrap());
        // One line longer than the window, then a header: not looked for past the window, and
        // the long line is never held (only LINE_PEEK bytes of it are kept).
        let long = format!("{}\n{header}", "x".repeat(LOG_WINDOW as usize));
        assert!(!find_header(&mut long.as_bytes()).unwrap());
        let just_inside = format!("{}\n{header}", "x".repeat(LOG_WINDOW as usize - header.len() - 1));
        assert!(find_header(&mut just_inside.as_bytes()).unwrap());
    }

    #[test]
    fn only_log_like_names_are_listed() {
        for name in ["a/rank0.log", "x.txt", "x.LOG.GZ", "y.zst", "d/dedicated_log_torch_trace_abc"] {
            assert!(looks_like_log(name), "{name}");
        }
        for name in [".env", "id_rsa", "notes.docx", "log/secret", "manifest.json"] {
            assert!(!looks_like_log(name), "{name}");
        }
    }
}
