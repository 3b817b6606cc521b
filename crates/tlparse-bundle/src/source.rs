//! Where a bundle's bytes come from. The reader asks a [`ByteSource`] for files by
//! [`BundlePath`], a path checked to stay inside the bundle; [`DirSource`] reads a local
//! directory (HTTP and object storage come later). A bundle is untrusted input: no source ever
//! opens a path outside its bundle, follows a symlink, or reads more than it was asked to.

use std::fmt;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A file's path inside a bundle: relative, `/`-separated, made of plain names (no empty part,
/// no `.` or `..`, no `\`, `:` or NUL), at most 1024 bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BundlePath(String);

impl BundlePath {
    /// Checks a path taken from a bundle (the manifest, a table).
    pub fn new(path: &str) -> Result<BundlePath, SourceError> {
        let bad =
            |why: &str| Err(SourceError::BadPath { path: path.chars().take(200).collect(), why: why.to_string() });
        if path.is_empty() || path.len() > 1024 {
            return bad("empty or longer than 1024 bytes");
        }
        if path.starts_with('/') {
            return bad("absolute");
        }
        if path.contains(['\\', ':', '\0']) {
            return bad("holds \\, : or NUL");
        }
        for part in path.split('/') {
            match part {
                "" => return bad("has an empty part"),
                "." | ".." => return bad("leaves its directory (. or ..)"),
                _ => {}
            }
        }
        Ok(BundlePath(path.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BundlePath {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a source could not give a file.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path}: path is not allowed in a bundle ({why}); refused, nothing was read")]
    BadPath { path: String, why: String },
    #[error("{path}: missing")]
    NotFound { path: String },
    #[error("{path}: {why}; refused, nothing was read")]
    Refused { path: String, why: String },
    #[error("{path}: larger than {limit} bytes; refused")]
    TooLarge { path: String, limit: u64 },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
}

/// A file found by [`ByteSource::list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed {
    /// A regular file, at this path relative to the bundle root.
    File(String),
    /// Anything else (symlink, FIFO, device, a name that is not UTF-8): never read.
    Other { path: String, what: String },
}

/// The most entries [`DirSource::list`] returns, and the most bytes their names take, so listing a
/// hostile directory stays small (a real bundle has a few thousand files).
pub const MAX_LISTED: usize = 1 << 20;
pub const MAX_LISTED_NAME_BYTES: usize = 64 << 20;

/// Where a bundle's bytes come from. `Send + Sync`, so one bundle can be read from many threads.
pub trait ByteSource: Send + Sync {
    /// The whole file at `path`, refused if it is larger than `limit` bytes.
    fn read(&self, path: &BundlePath, limit: u64) -> Result<Vec<u8>, SourceError>;

    /// The file at `path` as a stream that fails (with [`std::io::ErrorKind::FileTooLarge`]) once
    /// it would give more than `limit` bytes, for files hashed or decompressed without holding
    /// them whole. By default, [`ByteSource::read`] in memory.
    fn open(&self, path: &BundlePath, limit: u64) -> Result<Box<dyn Read + Send + '_>, SourceError> {
        Ok(Box::new(std::io::Cursor::new(self.read(path, limit)?)))
    }

    /// Every entry of the bundle, sorted, or `None` where the source cannot list (HTTP).
    fn list(&self) -> Result<Option<Vec<Listed>>, SourceError>;

    /// What to call the bundle in messages.
    fn describe(&self) -> String;
}

/// A reader that gives at most `limit` bytes of `inner` and fails with
/// [`std::io::ErrorKind::FileTooLarge`] if `inner` has more: a decompressor or a file is never
/// read further than a limit, and a cut is never mistaken for the end.
pub struct Capped<R> {
    inner: R,
    left: u64,
    limit: u64,
}

impl<R: Read> Capped<R> {
    pub fn new(inner: R, limit: u64) -> Capped<R> {
        Capped { inner, left: limit, limit }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(too_large(self.limit)),
            };
        }
        let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// The error [`Capped`] gives past its limit.
pub fn too_large(limit: u64) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::FileTooLarge, format!("more than {limit} bytes"))
}

/// A bundle in a local directory.
#[derive(Debug, Clone)]
pub struct DirSource {
    root: PathBuf,
}

impl DirSource {
    pub fn new(root: &Path) -> DirSource {
        DirSource { root: root.to_owned() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file's local path and metadata, after checking that no part of it below the root is
    /// a symlink and that it is a regular file.
    fn local(&self, path: &BundlePath) -> Result<(PathBuf, fs::Metadata), SourceError> {
        let mut at = self.root.clone();
        let parts: Vec<&str> = path.as_str().split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            let meta = fs::symlink_metadata(&at).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => SourceError::NotFound { path: path.to_string() },
                _ => SourceError::Io { path: path.to_string(), source: e },
            })?;
            let last = i + 1 == parts.len();
            let refused = |why: &str| SourceError::Refused { path: path.to_string(), why: why.to_string() };
            if meta.file_type().is_symlink() {
                return Err(refused("is or lies under a symlink, which a bundle never holds"));
            }
            if !last && !meta.is_dir() {
                return Err(SourceError::NotFound { path: path.to_string() });
            }
            if last && !meta.is_file() {
                return Err(refused("is not a regular file"));
            }
            if last {
                return Ok((at, meta));
            }
        }
        Err(SourceError::NotFound { path: path.to_string() })
    }

    /// Opens the checked file without following a symlink or blocking on a FIFO swapped in
    /// since the check, and makes sure it is the very file that was checked.
    fn open_checked(&self, path: &BundlePath, limit: u64) -> Result<fs::File, SourceError> {
        let (local, checked) = self.local(path)?;
        if checked.len() > limit {
            return Err(SourceError::TooLarge { path: path.to_string(), limit });
        }
        let io = |e| SourceError::Io { path: path.to_string(), source: e };
        let mut options = fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
        let file = options.open(&local).map_err(io)?;
        let opened = file.metadata().map_err(io)?;
        if !opened.is_file() || !same_file(&checked, &opened) {
            return Err(SourceError::Refused { path: path.to_string(), why: "changed while being opened".into() });
        }
        Ok(file)
    }
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    true
}

impl ByteSource for DirSource {
    fn read(&self, path: &BundlePath, limit: u64) -> Result<Vec<u8>, SourceError> {
        let mut bytes = Vec::new();
        self.open(path, limit)?.read_to_end(&mut bytes).map_err(|e| match e.kind() {
            std::io::ErrorKind::FileTooLarge => SourceError::TooLarge { path: path.to_string(), limit },
            _ => SourceError::Io { path: path.to_string(), source: e },
        })?;
        Ok(bytes)
    }

    fn open(&self, path: &BundlePath, limit: u64) -> Result<Box<dyn Read + Send + '_>, SourceError> {
        Ok(Box::new(Capped::new(self.open_checked(path, limit)?, limit)))
    }

    fn list(&self) -> Result<Option<Vec<Listed>>, SourceError> {
        let mut found = Vec::new();
        list_tree(&self.root, &mut found)?;
        found.sort_by(|a, b| listed_path(a).cmp(listed_path(b)));
        Ok(Some(found))
    }

    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}

fn listed_path(l: &Listed) -> &str {
    match l {
        Listed::File(p) | Listed::Other { path: p, .. } => p,
    }
}

/// Walks the tree under `root` without following symlinks, one directory open at a time (a
/// deep hostile tree neither overflows the stack nor runs out of file descriptors), refusing
/// more than [`MAX_LISTED`] entries or [`MAX_LISTED_NAME_BYTES`] of names.
fn list_tree(root: &Path, found: &mut Vec<Listed>) -> Result<(), SourceError> {
    let mut dirs: Vec<String> = vec![String::new()];
    let mut name_bytes = 0usize;
    while let Some(prefix) = dirs.pop() {
        let io = |e| SourceError::Io { path: format!("{prefix}."), source: e };
        let entries: Vec<fs::DirEntry> =
            fs::read_dir(root.join(&prefix)).map_err(io)?.collect::<Result<_, _>>().map_err(io)?;
        for entry in entries {
            let kind = entry.file_type().map_err(io)?;
            let name = entry.file_name();
            name_bytes += name.len() + prefix.len();
            if found.len() + dirs.len() >= MAX_LISTED || name_bytes > MAX_LISTED_NAME_BYTES {
                return Err(SourceError::Refused {
                    path: ".".into(),
                    why: format!("holds more than {MAX_LISTED} entries or {MAX_LISTED_NAME_BYTES} bytes of names"),
                });
            }
            let Ok(name) = name.into_string() else {
                let path = format!("{prefix}{}", entry.file_name().to_string_lossy());
                found.push(Listed::Other { path, what: "a name that is not UTF-8".into() });
                continue;
            };
            let path = format!("{prefix}{name}");
            if kind.is_dir() {
                dirs.push(format!("{path}/"));
            } else if kind.is_file() {
                found.push(Listed::File(path));
            } else {
                let what = if kind.is_symlink() { "a symlink" } else { "not a regular file" };
                found.push(Listed::Other { path, what: what.into() });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_bundle_are_refused() {
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/.", "C:/x", "a\\..\\b", "a\0b"] {
            assert!(BundlePath::new(bad).is_err(), "{bad:?}");
        }
        for good in ["manifest.json", "blobs/packs/ab.zst", "tables/rank0/failures.json.zst", "a..b"] {
            assert_eq!(BundlePath::new(good).unwrap().as_str(), good);
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_and_special_files_are_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("secret");
        fs::write(&outside, "secret").unwrap();
        let root = dir.path().join("bundle");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::write(root.join("sub/ok.json"), "{}").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link.json")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        let source = DirSource::new(&root);
        let read = |p: &str| source.read(&BundlePath::new(p).unwrap(), 100);
        assert_eq!(read("sub/ok.json").unwrap(), b"{}");
        assert!(matches!(read("link.json"), Err(SourceError::Refused { .. })));
        assert!(matches!(read("up/secret"), Err(SourceError::Refused { .. })));
        assert!(matches!(read("sub"), Err(SourceError::Refused { .. })));
        assert!(matches!(read("nope"), Err(SourceError::NotFound { .. })));
        assert!(matches!(source.read(&BundlePath::new("sub/ok.json").unwrap(), 1), Err(SourceError::TooLarge { .. })));
        let listed = source.list().unwrap().unwrap();
        assert_eq!(
            listed,
            vec![
                Listed::Other { path: "link.json".into(), what: "a symlink".into() },
                Listed::File("sub/ok.json".into()),
                Listed::Other { path: "up".into(), what: "a symlink".into() },
            ]
        );
    }
}
