//! The few operations `publish` needs of a destination, for a bucket and for a local directory
//! alike: is this file already there, read the manifest, put a file, delete one.
//!
//! Every put streams the bundle's file and hashes it on the way: a file whose bytes are not the
//! ones the manifest lists (changed since the check) is never published.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use camino::Utf8PathBuf;
use futures_util::TryStreamExt;
use object_store::buffered::BufWriter;
use object_store::path::Path as StorePath;
use object_store::{Attribute, Attributes, GetOptions, ObjectStore, ObjectStoreExt};
use tlparse_bundle::source::open_regular;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::PublishError;
use crate::media;

/// One file to publish, as the manifest lists it.
#[derive(Debug, Clone)]
pub struct PlannedFile {
    /// `/`-separated, relative to the bundle root; checked to stay inside it.
    pub path: String,
    pub size: u64,
    /// blake3 of the bytes, 64 hex digits.
    pub blake3: String,
    /// A viewer file: the only kind published with a type a browser runs.
    pub viewer: bool,
}

impl PlannedFile {
    pub fn content_type(&self) -> &'static str {
        if self.viewer { media::content_type(&self.path) } else { media::data_content_type(&self.path) }
    }
}

/// The object metadata key holding a file's blake3, so a later publish can tell the same file
/// from a different one with a HEAD (`x-amz-meta-blake3`, `x-goog-meta-blake3`, `x-ms-meta-blake3`).
const BLAKE3_METADATA: &str = "blake3";
/// What names a temporary file of a directory publish: `.NAME.publish-PID`.
const TEMPORARY_MARK: &str = ".publish-";

/// Whether `path` is a temporary file a directory publish writes before renaming it, left by a
/// publish that was killed.
pub fn is_temporary(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with('.')
        && name
            .rsplit_once(TEMPORARY_MARK)
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Files up to this size go in one PUT; larger ones as a multipart upload of parts this size,
/// so a huge trace or index never needs one request of hundreds of MB (S3 refuses one PUT over
/// 5 GiB), and a failed part is retried alone.
const MULTIPART_PART: usize = 16 << 20;
/// Read size when streaming a file.
const CHUNK: usize = 1 << 20;

/// A destination ready for operations.
#[derive(Clone)]
pub enum Target {
    Store { store: Arc<dyn ObjectStore>, prefix: StorePath },
    Dir(Utf8PathBuf),
}

impl Target {
    fn key(prefix: &StorePath, path: &str) -> StorePath {
        path.split('/').fold(prefix.clone(), |key, part| key.clone().join(part))
    }

    /// Whether `file` (whose bytes are at `source`) is already there with the same bytes and
    /// headers. For a bucket: a HEAD (size, headers, the blake3 stored with it), then the bytes,
    /// by the ETag where it is their MD5 (an S3 API single-part upload), else (or when that MD5
    /// differs) read back and hashed: an object corrupted under its name, even one of the right
    /// size and metadata, is put again. For a directory: the file there, hashed.
    pub async fn has(&self, file: &PlannedFile, source: &Path) -> Result<bool, PublishError> {
        match self {
            Target::Store { store, prefix } => {
                let key = Self::key(prefix, &file.path);
                let options = GetOptions { head: true, ..Default::default() };
                let found = match store.get_opts(&key, options).await {
                    Ok(found) => found,
                    Err(object_store::Error::NotFound { .. }) => return Ok(false),
                    Err(source) => return Err(PublishError::Store { path: file.path.clone(), source }),
                };
                if found.meta.size != file.size || !headers_right(&found.attributes, file) {
                    return Ok(false);
                }
                // An MD5 that differs is not the last word: with SSE-KMS, S3's ETag is no MD5.
                if let Some(md5) = found.meta.e_tag.as_deref().and_then(plain_md5)
                    && local_md5_is(source, file, md5).await?
                {
                    return Ok(true);
                }
                stored_bytes_are(store.as_ref(), &key, file).await
            }
            Target::Dir(dir) => {
                let path = dir.join(&file.path).into_std_path_buf();
                let (dir, file) = (dir.clone(), file.clone());
                blocking(move || {
                    check_no_symlink(dir.as_std_path(), &path)?;
                    Ok(match hash_file(&path, file.size + 1) {
                        Ok((size, hash)) => size == file.size && hash == file.blake3,
                        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
                        Err(e) => return Err(e),
                    })
                })
                .await
                .map_err(|source| PublishError::Io { path: file.path.clone(), source })
            }
        }
    }

    /// The destination's `manifest.json`, if there is one, read up to `limit` bytes (a larger
    /// one is no manifest this tool wrote, and is refused).
    pub async fn read(&self, path: &str, limit: u64) -> Result<Option<Vec<u8>>, PublishError> {
        let too_large = || PublishError::Io { path: path.into(), source: tlparse_bundle::source::too_large(limit) };
        match self {
            Target::Store { store, prefix } => {
                let store_error = |source| PublishError::Store { path: path.into(), source };
                match store.get(&Self::key(prefix, path)).await {
                    Ok(got) if got.meta.size > limit => Err(too_large()),
                    Ok(got) => got.bytes().await.map(|b| Some(b.to_vec())).map_err(store_error),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(store_error(e)),
                }
            }
            Target::Dir(dir) => {
                let (root, full) = (dir.clone(), dir.join(path).into_std_path_buf());
                blocking(move || {
                    check_no_symlink(root.as_std_path(), &full)?;
                    let mut bytes = Vec::new();
                    match open_regular(&full) {
                        Ok(f) => f.take(limit + 1).read_to_end(&mut bytes)?,
                        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                        Err(e) => return Err(e),
                    };
                    Ok(Some(bytes))
                })
                .await
                .map_err(|source| PublishError::Io { path: path.into(), source })
                .and_then(|b| if b.as_ref().is_some_and(|b| b.len() as u64 > limit) { Err(too_large()) } else { Ok(b) })
            }
        }
    }

    /// Puts the bundle file `source` at `file.path`, with its content type and cache control
    /// (and its blake3, in a bucket). A directory gets it atomically: written beside, then renamed.
    pub async fn put(&self, file: &PlannedFile, source: PathBuf) -> Result<(), PublishError> {
        let io_error = |source| PublishError::Io { path: file.path.clone(), source };
        match self {
            Target::Store { store, prefix } => {
                let mut attributes = Attributes::new();
                attributes.insert(Attribute::ContentType, file.content_type().into());
                attributes.insert(Attribute::CacheControl, media::cache_control(&file.path).into());
                attributes.insert(Attribute::Metadata(BLAKE3_METADATA.into()), file.blake3.clone().into());
                let mut writer =
                    BufWriter::with_capacity(Arc::clone(store), Self::key(prefix, &file.path), MULTIPART_PART)
                        .with_attributes(attributes);
                let streamed = stream_into(&mut writer, &source, file).await;
                let store_error = |source| PublishError::Store { path: file.path.clone(), source };
                match streamed {
                    Ok(()) => writer
                        .shutdown()
                        .await
                        .map_err(|e| store_error(object_store::Error::Generic { store: "upload", source: e.into() })),
                    Err(e) => {
                        // Nothing is written until shutdown, but a multipart upload already
                        // started is cancelled rather than left to be billed.
                        let _ = writer.abort().await;
                        Err(e)
                    }
                }
            }
            Target::Dir(dir) => {
                let (dir, file) = (dir.clone(), file.clone());
                blocking(move || write_atomically(dir.as_std_path(), &file, &source)).await.map_err(io_error)
            }
        }
    }

    /// Every file at the destination's root or under one of a bundle's folders, as `/`-separated
    /// paths relative to it: what a bundle may have left there. Nothing else is listed, so a
    /// publish at a bucket's root costs no listing of the other bundles below it, nor a Pages
    /// checkout's `.git`.
    pub async fn list(&self) -> Result<Vec<String>, PublishError> {
        match self {
            Target::Store { store, prefix } => {
                let store_error = |source| PublishError::Store { path: prefix.to_string(), source };
                let mut metas = store.list_with_delimiter(Some(prefix)).await.map_err(store_error)?.objects;
                for folder in bundle_folders() {
                    let under: Vec<_> =
                        store.list(Some(&prefix.clone().join(folder))).try_collect().await.map_err(store_error)?;
                    metas.extend(under);
                }
                let strip = |key: &StorePath| {
                    key.prefix_match(prefix)
                        .map(|parts| parts.map(|p| p.as_ref().to_string()).collect::<Vec<_>>().join("/"))
                };
                Ok(metas.iter().filter_map(|m| strip(&m.location)).collect())
            }
            Target::Dir(dir) => {
                let root = dir.clone().into_std_path_buf();
                blocking(move || list_dir(&root))
                    .await
                    .map_err(|source| PublishError::Io { path: dir.to_string(), source })
            }
        }
    }

    /// Deletes `path` (`/`-separated, checked); a file already gone is no error.
    pub async fn delete(&self, path: &str) -> Result<(), PublishError> {
        match self {
            Target::Store { store, prefix } => match store.delete(&Self::key(prefix, path)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(source) => Err(PublishError::Store { path: path.into(), source }),
            },
            Target::Dir(dir) => {
                let (root, full) = (dir.clone(), dir.join(path).into_std_path_buf());
                blocking(move || {
                    check_no_symlink(root.as_std_path(), &full)?;
                    match std::fs::remove_file(&full) {
                        Ok(()) => remove_empty_parents(root.as_std_path(), &full),
                        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                        Err(e) => Err(e),
                    }
                })
                .await
                .map_err(|source| PublishError::Io { path: path.into(), source })
            }
        }
    }
}

/// The folders a bundle writes at its root (`blobs`, `index`, ...).
fn bundle_folders() -> impl Iterator<Item = &'static str> {
    tlparse_bundle::paths::ROOT_NAMES.into_iter().filter(|name| !name.contains('.'))
}

/// The files at `root`'s top and under its bundle folders, relative, `/`-separated; symlinks are
/// not followed.
fn list_dir(root: &Path) -> io::Result<Vec<String>> {
    let in_scope = |entry: &walkdir::DirEntry| {
        entry.depth() != 1
            || !entry.file_type().is_dir()
            || entry.file_name().to_str().is_some_and(|name| bundle_folders().any(|f| f == name))
    };
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false).into_iter().filter_entry(in_scope) {
        let entry = entry.map_err(io::Error::other)?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(root).map_err(io::Error::other)?;
        if let Some(parts) = rel.iter().map(|p| p.to_str()).collect::<Option<Vec<_>>>() {
            found.push(parts.join("/"));
        }
    }
    Ok(found)
}

/// Whether an object's headers are the ones a put of `file` gives, its blake3 included: an object
/// put by another tool (or an older publish) with a wrong type or cache policy is put again, and
/// so fixed.
fn headers_right(attributes: &Attributes, file: &PlannedFile) -> bool {
    let attribute = |key: Attribute| attributes.get(&key).map(|v| v.as_ref().to_string());
    attribute(Attribute::ContentType).as_deref() == Some(file.content_type())
        && attribute(Attribute::CacheControl).as_deref() == Some(media::cache_control(&file.path))
        && attribute(Attribute::ContentEncoding).is_none()
        && attribute(Attribute::Metadata(BLAKE3_METADATA.into())).as_deref() == Some(file.blake3.as_str())
}

/// The MD5 an ETag holds, when it is one: 32 hex digits, quoted or not (S3 and the servers that
/// speak its API give that for an object put in one request; a multipart ETag ends in `-N`, and
/// GCS's, Azure's and others' are opaque).
fn plain_md5(e_tag: &str) -> Option<String> {
    let hex = e_tag.trim_matches('"');
    (hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| hex.to_ascii_lowercase())
}

/// Whether the MD5 of the bundle file `source` is `md5`: the bucket's bytes checked without
/// reading them back.
async fn local_md5_is(source: &Path, file: &PlannedFile, md5: String) -> Result<bool, PublishError> {
    use md5::Digest;
    let source = source.to_owned();
    let limit = file.size + 1;
    blocking(move || {
        let mut input = open_regular(&source)?.take(limit);
        let mut hasher = md5::Md5::new();
        let mut buffer = vec![0u8; CHUNK];
        loop {
            let read = input.read(&mut buffer)?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
        }
        let hex: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Ok(hex == md5)
    })
    .await
    .map_err(|source| PublishError::Io { path: file.path.clone(), source })
}

/// Whether the object at `key` holds `file`'s bytes, read back and hashed.
async fn stored_bytes_are(store: &dyn ObjectStore, key: &StorePath, file: &PlannedFile) -> Result<bool, PublishError> {
    let store_error = |source| PublishError::Store { path: file.path.clone(), source };
    let mut stream = match store.get_opts(key, GetOptions::default()).await {
        Ok(got) => got.into_stream(),
        Err(object_store::Error::NotFound { .. }) => return Ok(false),
        Err(e) => return Err(store_error(e)),
    };
    let mut hasher = blake3::Hasher::new();
    let mut size = 0u64;
    while let Some(chunk) = stream.try_next().await.map_err(store_error)? {
        size += chunk.len() as u64;
        if size > file.size {
            return Ok(false);
        }
        hasher.update(&chunk);
    }
    Ok(size == file.size && hasher.finalize().to_hex().as_str() == file.blake3)
}

/// Streams `source` into `writer`, checking size and blake3 against `file` before it is finished.
async fn stream_into(writer: &mut BufWriter, source: &Path, file: &PlannedFile) -> Result<(), PublishError> {
    let io_error = |source| PublishError::Io { path: file.path.clone(), source };
    let mut input = tokio::fs::File::from_std(open_regular(source).map_err(io_error)?);
    let mut hasher = blake3::Hasher::new();
    let mut size = 0u64;
    loop {
        let mut chunk = Vec::with_capacity(CHUNK);
        let read = (&mut input).take(CHUNK as u64).read_to_end(&mut chunk).await.map_err(io_error)?;
        if read == 0 {
            break;
        }
        size += read as u64;
        if size > file.size {
            break;
        }
        hasher.update(&chunk);
        writer
            .put(Bytes::from(chunk))
            .await
            .map_err(|source| PublishError::Store { path: file.path.clone(), source })?;
    }
    check_same(file, size, &hasher)
}

fn check_same(file: &PlannedFile, size: u64, hasher: &blake3::Hasher) -> Result<(), PublishError> {
    let hash = hasher.finalize().to_hex();
    if size != file.size || hash.as_str() != file.blake3 {
        return Err(PublishError::Changed(file.path.clone()));
    }
    Ok(())
}

/// Writes `source` to `dir/file.path` through a temporary file in the same directory, renamed
/// into place once complete and checked, so a reader sees the old file or the new, never a part.
fn write_atomically(dir: &Path, file: &PlannedFile, source: &Path) -> io::Result<()> {
    let target = dir.join(&file.path);
    let parent = target.parent().expect("a bundle path has a parent under dir");
    create_dirs(dir, parent)?;
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temp = parent.join(format!(".{name}{TEMPORARY_MARK}{}", std::process::id()));
    let result = copy_checked(source, &temp, file).and_then(|()| std::fs::rename(&temp, &target));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn copy_checked(source: &Path, temp: &Path, file: &PlannedFile) -> io::Result<()> {
    let mut input = open_regular(source)?.take(file.size + 1);
    let mut output = std::fs::OpenOptions::new().write(true).create_new(true).open(temp)?;
    let mut hasher = blake3::Hasher::new();
    let mut buffer = vec![0u8; CHUNK];
    let mut size = 0u64;
    loop {
        let read = input.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        output.write_all(&buffer[..read])?;
        size += read as u64;
    }
    output.sync_all()?;
    check_same(file, size, &hasher).map_err(io::Error::other)
}

/// Creates `parent` and the directories above it, up to `root`, refusing any symlink on the way:
/// a link in the destination could send a write, or a delete, outside it.
fn create_dirs(root: &Path, parent: &Path) -> io::Result<()> {
    check_no_symlink(root, parent)?;
    std::fs::create_dir_all(parent)?;
    check_no_symlink(root, parent)
}

/// Fails if `path`, or any directory between `root` and it, is a symlink.
fn check_no_symlink(root: &Path, path: &Path) -> io::Result<()> {
    let rel = path.strip_prefix(root).map_err(io::Error::other)?;
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(io::Error::other(format!("{} is a symlink; refusing to follow it", at.display())));
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Removes the directories above a deleted file that it left empty, up to `root` (excluded).
fn remove_empty_parents(root: &Path, file: &Path) -> io::Result<()> {
    let mut dir = file.parent();
    while let Some(d) = dir.filter(|d| *d != root && d.starts_with(root)) {
        if std::fs::remove_dir(d).is_err() {
            break; // not empty: done
        }
        dir = d.parent();
    }
    Ok(())
}

/// Size and blake3 of a file, reading at most `limit` bytes.
fn hash_file(path: &Path, limit: u64) -> io::Result<(u64, String)> {
    let mut hasher = blake3::Hasher::new();
    let size = io::copy(&mut open_regular(path)?.take(limit), &mut hasher)?;
    Ok((size, hasher.finalize().to_hex().to_string()))
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> io::Result<T> + Send + 'static) -> io::Result<T> {
    tokio::task::spawn_blocking(f).await.map_err(io::Error::other)?
}

#[cfg(test)]
mod tests {
    use object_store::memory::InMemory;

    /// A FIFO or a device where a bundle file was is refused at once, not waited on or read.
    #[test]
    fn a_fifo_or_a_device_in_place_of_a_file_is_refused_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pack.zst");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for path in [fifo, PathBuf::from("/dev/zero")] {
            let (sent, opened) = std::sync::mpsc::channel();
            let at = path.clone();
            std::thread::spawn(move || sent.send(open_regular(&at).map(drop)));
            let opened = opened.recv_timeout(std::time::Duration::from_secs(5));
            let refused = opened.unwrap_or_else(|_| panic!("{}: waited on", path.display()));
            assert_eq!(refused.unwrap_err().kind(), io::ErrorKind::InvalidInput, "{}", path.display());
        }
    }

    use super::*;

    /// `size` bytes that do not repeat, as a file in `dir`, and its entry.
    fn file(dir: &Path, path: &str, size: usize) -> (PathBuf, PlannedFile) {
        let mut bytes = vec![0u8; size];
        blake3::Hasher::new().update(path.as_bytes()).finalize_xof().fill(&mut bytes);
        let local = dir.join("source");
        std::fs::write(&local, &bytes).unwrap();
        let entry = PlannedFile {
            path: path.into(),
            size: size as u64,
            blake3: blake3::hash(&bytes).to_hex().to_string(),
            viewer: false,
        };
        (local, entry)
    }

    fn memory_target() -> (Arc<InMemory>, Target) {
        let store = Arc::new(InMemory::new());
        let target = Target::Store { store: store.clone(), prefix: StorePath::from("runs/a") };
        (store, target)
    }

    #[tokio::test]
    async fn a_file_larger_than_a_part_goes_up_whole_with_its_headers_and_is_then_found() {
        let dir = tempfile::tempdir().unwrap();
        // Two full parts and a piece: a multipart upload.
        let (local, entry) = file(dir.path(), "tables/cross_rank/chrome_trace.json.gz", 2 * MULTIPART_PART + 12345);
        let (store, target) = memory_target();
        assert!(!target.has(&entry, &local).await.unwrap());
        target.put(&entry, local.clone()).await.unwrap();
        let key = StorePath::from("runs/a/tables/cross_rank/chrome_trace.json.gz");
        let got = store.get(&key).await.unwrap();
        let attributes = got.attributes.clone();
        assert_eq!(got.bytes().await.unwrap().as_ref(), std::fs::read(&local).unwrap());
        assert_eq!(attributes.get(&Attribute::ContentType).map(|v| v.as_ref()), Some("application/gzip"));
        assert_eq!(attributes.get(&Attribute::CacheControl).map(|v| v.as_ref()), Some(media::REVALIDATE));
        assert!(target.has(&entry, &local).await.unwrap(), "the same file is not found on a second look");
        let other = PlannedFile { blake3: "0".repeat(64), ..entry.clone() };
        assert!(!target.has(&other, &local).await.unwrap(), "a file of the same size and another hash passes for it");
        let mut wrong_type = Attributes::new();
        wrong_type.insert(Attribute::ContentType, "application/octet-stream".into());
        wrong_type.insert(Attribute::CacheControl, media::REVALIDATE.into());
        wrong_type.insert(Attribute::Metadata(BLAKE3_METADATA.into()), entry.blake3.clone().into());
        let bytes = std::fs::read(&local).unwrap();
        store.put_opts(&key, bytes.into(), wrong_type.into()).await.unwrap();
        assert!(!target.has(&entry, &local).await.unwrap(), "an object with the wrong content type is not put again");
    }

    #[tokio::test]
    async fn an_object_corrupted_under_its_name_is_not_taken_for_the_file() {
        let dir = tempfile::tempdir().unwrap();
        // A pack (named by its hash, so its name once sufficed) and a table.
        for path in ["blobs/packs/0123456789abcdef0123456789abcdef.zst", "tables/rank0/failures.json.zst"] {
            let (local, entry) = file(dir.path(), path, 5000);
            let (store, target) = memory_target();
            target.put(&entry, local.clone()).await.unwrap();
            let key = Target::key(&StorePath::from("runs/a"), path);
            let got = store.get(&key).await.unwrap();
            let attributes = got.attributes.clone();
            let mut bytes = got.bytes().await.unwrap().to_vec();
            bytes[2500] ^= 1;
            // Same size, same headers and metadata: only the bytes tell.
            store.put_opts(&key, bytes.into(), attributes.into()).await.unwrap();
            assert!(!target.has(&entry, &local).await.unwrap(), "{path}: a corrupted object passes for the file");
            target.put(&entry, local.clone()).await.unwrap();
            assert!(target.has(&entry, &local).await.unwrap(), "{path}: the repaired object is not found");
        }
    }

    #[test]
    fn only_a_plain_md5_etag_is_taken_for_the_bytes_md5() {
        assert_eq!(
            plain_md5("\"9E107D9D372BB6826BD81D3542A419D6\"").as_deref(),
            Some("9e107d9d372bb6826bd81d3542a419d6")
        );
        assert_eq!(plain_md5("9e107d9d372bb6826bd81d3542a419d6").as_deref(), Some("9e107d9d372bb6826bd81d3542a419d6"));
        for opaque in ["\"9e107d9d372bb6826bd81d3542a419d6-3\"", "\"0x8DC5A1B2C3D4E5F\"", "\"7\"", "CJjC3aLw/IkDEAE="] {
            assert_eq!(plain_md5(opaque), None, "{opaque}");
        }
    }

    #[tokio::test]
    async fn an_etag_md5_is_checked_against_the_bundle_file() {
        use md5::Digest;
        let dir = tempfile::tempdir().unwrap();
        let (local, entry) = file(dir.path(), "index/rank0.jsonl.zst", 3000);
        let md5: String = md5::Md5::digest(std::fs::read(&local).unwrap()).iter().map(|b| format!("{b:02x}")).collect();
        assert!(local_md5_is(&local, &entry, md5.clone()).await.unwrap());
        let other = if md5.starts_with('0') { md5.replacen('0', "1", 1) } else { format!("0{}", &md5[1..]) };
        assert!(!local_md5_is(&local, &entry, other).await.unwrap());
    }

    #[tokio::test]
    async fn only_the_root_and_a_bundle_s_folders_are_listed() {
        let (store, target) = memory_target();
        for key in ["runs/a/CNAME", "runs/a/.x.publish-1", "runs/a/blobs/packs/x.zst", "runs/a/older/blobs/y.zst"] {
            store.put(&StorePath::from(key), "x".into()).await.unwrap();
        }
        store.put(&StorePath::from("runs/ab/blobs/z.zst"), "x".into()).await.unwrap();
        let mut listed = target.list().await.unwrap();
        listed.sort();
        assert_eq!(listed, [".x.publish-1", "CNAME", "blobs/packs/x.zst"]);

        let dir = tempfile::tempdir().unwrap();
        for path in ["CNAME", ".git/objects/ab/cd", "older/blobs/y.zst", "blobs/packs/x.zst", "viewer/app.js"] {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, "x").unwrap();
        }
        let target = Target::Dir(Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap());
        let mut listed = target.list().await.unwrap();
        listed.sort();
        assert_eq!(listed, ["CNAME", "blobs/packs/x.zst", "viewer/app.js"]);
    }

    #[tokio::test]
    async fn a_file_changed_since_the_check_is_never_published() {
        let dir = tempfile::tempdir().unwrap();
        for size in [1000, 2 * MULTIPART_PART + 1] {
            let (local, entry) = file(dir.path(), "index/rank0.jsonl.zst", size);
            let mut changed = std::fs::read(&local).unwrap();
            changed[size / 2] ^= 1;
            std::fs::write(&local, changed).unwrap();
            let (store, target) = memory_target();
            let err = target.put(&entry, local).await.unwrap_err();
            assert!(matches!(err, PublishError::Changed(ref p) if p == "index/rank0.jsonl.zst"), "{err}");
            let listed: Vec<_> = store.list(None).try_collect().await.unwrap();
            assert!(listed.is_empty(), "{size} bytes: {listed:?}");
        }
    }
}
