//! Finding the logs to read (a file, or every trace log of a directory) and opening them,
//! decompressing `.gz` / `.zst` transparently.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use camino::{Utf8Path, Utf8PathBuf};

use crate::parse::{glog, rank_from_file_name};
use crate::schema::{InputCompression, Skipped};

use super::BuildError;

/// A log file to read.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// Path as given (joined to the directory given).
    pub path: Utf8PathBuf,
    /// Size on disk.
    pub size: u64,
    pub compression: InputCompression,
    pub rank_from_name: Option<u32>,
}

/// The logs found at a path, and the files passed over.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Logs in processing order: ranked logs by rank, then the others by path.
    pub inputs: Vec<InputFile>,
    /// Files passed over: (path, reason).
    pub skipped: Vec<(String, String)>,
}

impl Discovery {
    /// The skipped files grouped by reason, as the manifest records them.
    pub fn skipped_groups(&self) -> Vec<Skipped> {
        let mut groups: std::collections::BTreeMap<&str, Skipped> = std::collections::BTreeMap::new();
        for (path, reason) in &self.skipped {
            let group =
                groups.entry(reason).or_insert_with(|| Skipped { reason: reason.clone(), count: 0, paths: Vec::new() });
            group.count += 1;
            group.paths.push(path.clone());
        }
        groups.into_values().collect()
    }
}

/// Finds the logs at `path`: the file itself, or every TORCH_TRACE log below a directory
/// (recognised by content: the first line is a glog-prefixed JSON envelope).
pub fn discover(path: &Utf8Path, latest: bool) -> Result<Discovery, BuildError> {
    let meta = std::fs::metadata(path).map_err(|e| BuildError::io(path, e))?;
    let mut found = Discovery::default();
    if meta.is_file() {
        if latest {
            return Err(BuildError::Usage(format!("--latest needs a directory, but {path} is a file")));
        }
        let input =
            classify(path, meta.len()).map_err(|reason| BuildError::NotATrace { path: path.to_owned(), reason })?;
        found.inputs.push(input);
        return Ok(found);
    }
    let mut candidates = Vec::new();
    for item in walkdir::WalkDir::new(path).follow_links(true).sort_by_file_name() {
        let item = item.map_err(|e| BuildError::Io { path: path.to_string(), source: e.into() })?;
        if !item.file_type().is_file() {
            continue;
        }
        let Some(file) = Utf8Path::from_path(item.path()) else {
            found.skipped.push((item.path().to_string_lossy().into_owned(), "file name is not UTF-8".into()));
            continue;
        };
        let size = item.metadata().map(|m| m.len()).unwrap_or(0);
        let modified = item.metadata().ok().and_then(|m| m.modified().ok());
        match classify(file, size) {
            Ok(input) => candidates.push((input, modified)),
            Err(reason) => found.skipped.push((file.to_string(), reason)),
        }
    }
    if latest {
        // The newest log; ties broken by path so the choice is deterministic.
        candidates.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.path.cmp(&a.0.path)));
        if let Some((newest, _)) = candidates.pop() {
            for (other, _) in candidates.drain(..) {
                found
                    .skipped
                    .push((other.path.to_string(), format!("not the newest log (--latest chose {})", newest.path)));
            }
            candidates.push((newest, None));
        }
    }
    found.inputs = candidates.into_iter().map(|(i, _)| i).collect();
    found.inputs.sort_by(|a, b| {
        (a.rank_from_name.is_none(), a.rank_from_name, &a.path).cmp(&(
            b.rank_from_name.is_none(),
            b.rank_from_name,
            &b.path,
        ))
    });
    found.skipped.sort();
    if found.inputs.is_empty() {
        return Err(BuildError::NoLogs { path: path.to_owned(), skipped: found.skipped.len() });
    }
    Ok(found)
}

/// Decides whether a file is a TORCH_TRACE log; `Err` holds the reason it is not.
fn classify(path: &Utf8Path, size: u64) -> Result<InputFile, String> {
    if size == 0 {
        return Err("empty file".into());
    }
    let compression = detect_compression(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut reader = open_decoded(path, compression).map_err(|e| format!("cannot read: {e}"))?;
    let mut line = Vec::new();
    // Only the first line matters; don't read a whole non-log file to find it.
    loop {
        line.clear();
        let n = reader.by_ref().take(1 << 16).read_until(b'\n', &mut line).map_err(|e| format!("cannot read: {e}"))?;
        if n == 0 {
            return Err("no TORCH_TRACE entries (only blank lines)".into());
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    let text = String::from_utf8_lossy(&line);
    let is_log = glog::parse_prefix(text.trim_end()).is_some_and(|p| p.rest.trim_start().starts_with('{'));
    if !is_log {
        return Err("not a TORCH_TRACE log: its first line is not a glog-prefixed JSON entry".into());
    }
    let name = path.file_name().unwrap_or_default();
    Ok(InputFile { path: path.to_owned(), size, compression, rank_from_name: rank_from_file_name(name) })
}

/// Detects gzip and zstd by their magic bytes.
fn detect_compression(path: &Utf8Path) -> io::Result<InputCompression> {
    let mut magic = [0u8; 4];
    let mut file = File::open(path)?;
    let n = file.read(&mut magic)?;
    Ok(match &magic[..n] {
        [0x1f, 0x8b, ..] => InputCompression::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd] => InputCompression::Zstd,
        _ => InputCompression::None,
    })
}

/// Opens a log for reading its decompressed text.
pub fn open_decoded(path: &Utf8Path, compression: InputCompression) -> io::Result<Box<dyn BufRead + Send>> {
    open_reader(File::open(path)?, compression)
}

/// Wraps raw file bytes in the right decoder.
pub fn open_reader<R: Read + Send + 'static>(
    raw: R,
    compression: InputCompression,
) -> io::Result<Box<dyn BufRead + Send>> {
    const BUF: usize = 1 << 20;
    Ok(match compression {
        InputCompression::None => Box::new(BufReader::with_capacity(BUF, raw)),
        InputCompression::Gzip => {
            Box::new(BufReader::with_capacity(BUF, flate2::read::MultiGzDecoder::new(BufReader::new(raw))))
        }
        InputCompression::Zstd => Box::new(BufReader::with_capacity(BUF, zstd::Decoder::new(raw)?)),
    })
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
