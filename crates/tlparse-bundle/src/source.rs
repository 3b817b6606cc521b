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

/// `path` opened for reading only if it is a regular file: never through a symlink in its place
/// (`O_NOFOLLOW`), never waiting on a FIFO or reading a device (`O_NONBLOCK`, then `fstat`);
/// anything else is an `InvalidInput` error. For a file whose bytes are then checked, or that
/// lies at a path already resolved; [`DirSource`] also checks every directory on the way.
pub fn open_regular(path: &Path) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
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

    /// Opens the file at `path` below the root, checked part by part: no part is a symlink, each
    /// parent a directory, the file a regular one of at most `limit` bytes. Each part is looked
    /// at and opened relative to the directory opened before it (`openat`), never through a path
    /// resolved again, so a parent swapped for a symlink between the check and the open leads
    /// nowhere; the opened file must be the very file checked (a FIFO swapped in is not waited on).
    #[cfg(unix)]
    pub fn open_checked(&self, path: &BundlePath, limit: u64) -> Result<fs::File, SourceError> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let refused = |why: &str| SourceError::Refused { path: path.to_string(), why: why.to_string() };
        let io = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::NotFound => SourceError::NotFound { path: path.to_string() },
            _ => SourceError::Io { path: path.to_string(), source: e },
        };
        let changed = |e: std::io::Error| match e.raw_os_error() {
            Some(libc::ELOOP | libc::ENOTDIR | libc::ENOENT) => refused("changed while being opened"),
            _ => io(e),
        };
        let mut dir = fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(&self.root).map_err(io)?;
        let parts: Vec<&str> = path.as_str().split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            let checked = at::lstat(&dir, part).map_err(io)?;
            let kind = checked.st_mode & libc::S_IFMT;
            if kind == libc::S_IFLNK {
                return Err(refused("is or lies under a symlink, which a bundle never holds"));
            }
            if i + 1 < parts.len() {
                if kind != libc::S_IFDIR {
                    return Err(SourceError::NotFound { path: path.to_string() });
                }
                dir = at::open(&dir, part, libc::O_DIRECTORY).map_err(changed)?;
                continue;
            }
            if kind != libc::S_IFREG {
                return Err(refused("is not a regular file"));
            }
            if checked.st_size as u64 > limit {
                return Err(SourceError::TooLarge { path: path.to_string(), limit });
            }
            let file = at::open(&dir, part, libc::O_NONBLOCK).map_err(changed)?;
            let opened = file.metadata().map_err(io)?;
            if !opened.is_file() || (opened.dev(), opened.ino()) != (checked.st_dev as u64, checked.st_ino as u64) {
                return Err(refused("changed while being opened"));
            }
            return Ok(file);
        }
        Err(SourceError::NotFound { path: path.to_string() })
    }

    /// Opens the file at `path` below the root after checking that no part of it is a symlink,
    /// each parent a directory and the file a regular one of at most `limit` bytes.
    #[cfg(not(unix))]
    pub fn open_checked(&self, path: &BundlePath, limit: u64) -> Result<fs::File, SourceError> {
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
            if last && meta.len() > limit {
                return Err(SourceError::TooLarge { path: path.to_string(), limit });
            }
        }
        fs::File::open(&at).map_err(|e| SourceError::Io { path: path.to_string(), source: e })
    }
}

/// `lstat` and `open` of a name inside an open directory (`fstatat`, `openat`), never following
/// a symlink.
#[cfg(unix)]
mod at {
    use std::ffi::CString;
    use std::fs;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd};

    fn c_name(name: &str) -> io::Result<CString> {
        CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }

    /// What `name` in `dir` is, not following it if it is a symlink.
    pub(super) fn lstat(dir: &fs::File, name: &str) -> io::Result<libc::stat> {
        let name = c_name(name)?;
        let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `dir` is open for the call, `name` is NUL-terminated, and `stat` is written
        // whole by a call that returns 0.
        let rc = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), stat.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: written by the call above, which succeeded.
        Ok(unsafe { stat.assume_init() })
    }

    /// `name` in `dir` opened for reading with `flags`, failing (ELOOP) if it is a symlink.
    pub(super) fn open(dir: &fs::File, name: &str, flags: libc::c_int) -> io::Result<fs::File> {
        let name = c_name(name)?;
        let flags = flags | libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: `dir` is open for the call and `name` is NUL-terminated.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and nothing else owns it.
        Ok(unsafe { fs::File::from_raw_fd(fd) })
    }
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

    /// A parent swapped for a symlink to outside the bundle, over and over while a file under
    /// it is read: nothing outside is ever opened (inotify sees every open of the outside twin),
    /// and every read that succeeds gives the bundle's own bytes.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_parent_swapped_for_a_symlink_while_read_opens_nothing_outside() {
        use std::os::unix::ffi::OsStrExt;
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("ok.json"), "outside").unwrap();
        let root = dir.path().join("bundle");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::write(root.join("sub/ok.json"), "inside").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: plain calls on a descriptor this test owns and NUL-terminated paths.
        let watch = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(watch >= 0);
        assert!(unsafe { libc::inotify_add_watch(watch, c(&outside.join("ok.json")).as_ptr(), libc::IN_OPEN) } >= 0);
        let (sub, link) = (c(&root.join("sub")), c(&root.join("link")));
        let stop = AtomicBool::new(false);
        let mut inside = 0;
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: NUL-terminated paths; the exchange is atomic.
                    let rc = unsafe {
                        libc::renameat2(
                            libc::AT_FDCWD,
                            sub.as_ptr(),
                            libc::AT_FDCWD,
                            link.as_ptr(),
                            libc::RENAME_EXCHANGE,
                        )
                    };
                    assert_eq!(rc, 0);
                }
            });
            // Stops the swapping even when an assertion below fails.
            struct Stop<'a>(&'a AtomicBool);
            impl Drop for Stop<'_> {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::Relaxed);
                }
            }
            let _stop = Stop(&stop);
            let source = DirSource::new(&root);
            for _ in 0..20_000 {
                if let Ok(bytes) = source.read(&BundlePath::new("sub/ok.json").unwrap(), 100) {
                    assert_eq!(bytes, b"inside");
                    inside += 1;
                }
            }
        });
        let mut events = [0u8; 4096];
        // SAFETY: reads into a buffer of the length given.
        let read = unsafe { libc::read(watch, events.as_mut_ptr().cast(), events.len()) };
        unsafe { libc::close(watch) };
        assert!(read <= 0, "a file outside the bundle was opened");
        assert!(inside > 0, "no read found the bundle's own file");
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
