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
    #[error("{path}: path is not allowed in a bundle ({why})")]
    BadPath { path: String, why: String },
    #[error("{path}: missing")]
    NotFound { path: String },
    #[error("{path}: {why}")]
    Refused { path: String, why: String },
    #[error("{path}: larger than {limit} bytes")]
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

/// Where a bundle's bytes come from. `Send + Sync`, so one bundle can be read from many threads.
pub trait ByteSource: Send + Sync {
    /// The whole file at `path`, refused if it is larger than `limit` bytes.
    fn read(&self, path: &BundlePath, limit: u64) -> Result<Vec<u8>, SourceError>;

    /// Every entry of the bundle, sorted, or `None` where the source cannot list (HTTP).
    fn list(&self) -> Result<Option<Vec<Listed>>, SourceError>;

    /// What to call the bundle in messages.
    fn describe(&self) -> String;
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

    /// The file's local path, after checking that no part of it below the root is a symlink
    /// and that it is a regular file.
    fn local(&self, path: &BundlePath) -> Result<PathBuf, SourceError> {
        let mut at = self.root.clone();
        let parts: Vec<&str> = path.as_str().split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            let meta = fs::symlink_metadata(&at).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => SourceError::NotFound { path: path.to_string() },
                _ => SourceError::Io { path: path.to_string(), source: e },
            })?;
            let last = i + 1 == parts.len();
            let refused = |why: &str| Err(SourceError::Refused { path: path.to_string(), why: why.to_string() });
            if meta.file_type().is_symlink() {
                return refused("is or lies under a symlink, which a bundle never holds");
            }
            if !last && !meta.is_dir() {
                return Err(SourceError::NotFound { path: path.to_string() });
            }
            if last && !meta.is_file() {
                return refused("is not a regular file");
            }
        }
        Ok(at)
    }
}

impl ByteSource for DirSource {
    fn read(&self, path: &BundlePath, limit: u64) -> Result<Vec<u8>, SourceError> {
        let local = self.local(path)?;
        let io = |e| SourceError::Io { path: path.to_string(), source: e };
        let file = fs::File::open(&local).map_err(io)?;
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() as u64 > limit {
            return Err(SourceError::TooLarge { path: path.to_string(), limit });
        }
        Ok(bytes)
    }

    fn list(&self) -> Result<Option<Vec<Listed>>, SourceError> {
        let mut found = Vec::new();
        list_dir(&self.root, "", &mut found)?;
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

/// Walks `dir` without following symlinks.
fn list_dir(dir: &Path, prefix: &str, found: &mut Vec<Listed>) -> Result<(), SourceError> {
    let io = |e| SourceError::Io { path: format!("{prefix}."), source: e };
    for entry in fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let kind = entry.file_type().map_err(io)?;
        let Ok(name) = entry.file_name().into_string() else {
            let path = format!("{prefix}{}", entry.file_name().to_string_lossy());
            found.push(Listed::Other { path, what: "a name that is not UTF-8".into() });
            continue;
        };
        let path = format!("{prefix}{name}");
        if kind.is_dir() {
            list_dir(&entry.path(), &format!("{path}/"), found)?;
        } else if kind.is_file() {
            found.push(Listed::File(path));
        } else {
            let what = if kind.is_symlink() { "a symlink" } else { "not a regular file" };
            found.push(Listed::Other { path, what: what.into() });
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
