//! Where a build puts its bundle: a staging directory next to OUT, locked while its build runs
//! (the next build removes those of crashed or killed runs), and the swap that replaces an old
//! bundle at OUT: only the old bundle's own entries, recoverably at every step.
//!
//! The swap, with OUT locked against other builds: the old `manifest.json` goes first into a
//! backup next to OUT (readers see no bundle rather than a mix of two), then the old bundle's
//! other entries; a copy of the new manifest marks that every old entry is in the backup; then
//! the new entries go into OUT, the new manifest last; then the backup is deleted. A failure puts
//! the old bundle back; a crash leaves the backup, which the next build puts back the same way.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use camino::Utf8Path;
use serde_json::Value;
use tlparse_bundle::source::{BundlePath, ByteSource, DirSource};

use super::{BuildError, blobs, interrupt, paths, reader};

/// `.NAME.tlparse-build-PID`, next to OUT: a build's staging directory.
const STAGING_INFIX: &str = ".tlparse-build-";
/// `.NAME.tlparse-build-old-PID`, next to OUT: where a swap keeps the old bundle.
const BACKUP_INFIX: &str = ".tlparse-build-old-";
/// `.NAME.tlparse-build-shards-PID`, next to OUT: the shards a merge downloaded, while it runs.
const DOWNLOADS_INFIX: &str = ".tlparse-build-shards-";
/// In a backup: a copy of the new bundle's manifest, written once every entry of the old bundle
/// is in the backup. From then on what OUT holds under a bundle's names is the new bundle's, and
/// undoing the swap removes it (the files this manifest lists, nothing else).
pub const NEW_MANIFEST: &str = ".new-manifest.json";
/// [`NEW_MANIFEST`] while it is written: it counts only once renamed.
const NEW_MANIFEST_PART: &str = ".new-manifest.json.part";
/// How many times a staging directory is created again when a concurrent clean-up took it for
/// stale between its creation and its lock.
const CREATE_ATTEMPTS: usize = 16;

/// How the swap moves an entry: [`fs::rename`], but for tests, which make each step fail in turn.
pub type Rename<'a> = dyn FnMut(&Path, &Path) -> io::Result<()> + 'a;

/// The names a bundle may hold at its root, taken from where `paths` and the viewer put files.
/// `.nojekyll` is not one: `publish` writes it for GitHub Pages, a build never does, so it stays.
pub fn root_names() -> BTreeSet<String> {
    let stream = "s";
    let format_files = [
        paths::MANIFEST.to_string(),
        paths::MANIFEST_LITE.to_string(),
        paths::DIAGNOSTICS.to_string(),
        format!("{}/x.schema.json", paths::SCHEMA_DIR),
        paths::index(stream),
        paths::stacks(stream),
        paths::table_part(stream, "t", 0, 1),
        paths::chrome_trace(stream),
        paths::blob_index("all"),
        format!("{}/x.zst", blobs::PACKS_DIR),
    ];
    let viewer_files = crate::viewer::FILES.iter().map(|(path, _)| path.to_string());
    format_files.into_iter().chain(viewer_files).map(|p| p.split('/').next().unwrap_or_default().to_string()).collect()
}

/// Where the bundle goes: OUT as the user named it, the directory it resolves to, the directory
/// holding it and its name there.
#[derive(Debug, Clone)]
pub struct Target {
    display: String,
    out: PathBuf,
    parent: PathBuf,
    name: String,
}

impl Target {
    /// The target `output`; creates the directory that will hold it.
    pub fn new(output: &Utf8Path) -> Result<Target, BuildError> {
        let given = output.as_std_path();
        // `.` or `..` has no name of its own; the directory it resolves to has one.
        let out = match given.file_name() {
            Some(_) => given.to_owned(),
            None => fs::canonicalize(given).map_err(|e| BuildError::io(output, e))?,
        };
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(|e| BuildError::io(parent.display(), e))?;
        let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "bundle".into());
        Ok(Target { display: output.to_string(), out, parent, name })
    }

    fn staging_path(&self) -> PathBuf {
        self.parent.join(format!(".{}{STAGING_INFIX}{}", self.name, std::process::id()))
    }

    fn downloads_path(&self) -> PathBuf {
        self.parent.join(format!(".{}{DOWNLOADS_INFIX}{}", self.name, std::process::id()))
    }

    fn backup_path(&self) -> PathBuf {
        self.parent.join(format!(".{}{BACKUP_INFIX}{}", self.name, std::process::id()))
    }

    /// Refuses, before anything is built, to replace what should not be: anything without
    /// `--overwrite`, a directory that is not a bundle, a bundle holding a file it never wrote.
    pub fn check(&self, overwrite: bool) -> Result<(), BuildError> {
        let Ok(meta) = fs::symlink_metadata(&self.out) else { return Ok(()) };
        if meta.is_dir() && is_empty_dir(&self.out) {
            return Ok(());
        }
        if !overwrite {
            return Err(BuildError::OutputExists(self.display.as_str().into()));
        }
        if !meta.is_dir() {
            return Err(BuildError::NotABundle(self.display.as_str().into()));
        }
        self.own_entries().map(drop)
    }

    /// The entries of the bundle at OUT, manifest excepted: those under a bundle's names, each
    /// file of which its manifest lists. Anything else under those names is refused, by path.
    fn own_entries(&self) -> Result<Vec<String>, BuildError> {
        let not_a_bundle = || BuildError::NotABundle(self.display.as_str().into());
        let manifest = DirSource::new(&self.out)
            .read(&BundlePath::new(paths::MANIFEST).expect("a plain name"), reader::Limits::default().manifest)
            .map_err(|_| not_a_bundle())?;
        let listed = listed_files(&manifest).ok_or_else(not_a_bundle)?;
        entries_listed_in(&self.out, &listed).map_err(|path| BuildError::NotInBundle(self.named(&path)))
    }

    /// `path`, a path under OUT, as the user would name it: under OUT as they gave it.
    fn named(&self, path: &Path) -> String {
        match path.strip_prefix(&self.out) {
            Ok(rest) if rest.as_os_str().is_empty() => self.display.clone(),
            Ok(rest) => Path::new(&self.display).join(rest).display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// Names OUT, not the staging directory, in an error of writing the bundle: OUT is the path
    /// the user gave, and the staging directory is gone by the time the error is read.
    pub fn name_output(&self, error: BuildError, staging: &Path) -> BuildError {
        let BuildError::Io { path, source } = error else { return error };
        match Path::new(&path).strip_prefix(staging) {
            Ok(rest) => BuildError::Write { path: self.named(&self.out.join(rest)), source },
            Err(_) => BuildError::Io { path, source },
        }
    }

    /// Removes what crashed or killed builds into OUT left next to it (whatever their pid: a
    /// directory whose lock nobody holds is abandoned). The backup of a swap that stopped
    /// half-way is put back at OUT first, if OUT lost its manifest to it.
    pub fn clean_stale(&self) -> Result<(), BuildError> {
        let Ok(entries) = fs::read_dir(&self.parent) else { return Ok(()) };
        let mut found: Vec<(Leftover, PathBuf)> =
            entries.flatten().filter_map(|e| Some((self.leftover(e.file_name().to_str()?)?, e.path()))).collect();
        // Backups first, while nothing else is removed from around OUT.
        found.sort();
        for (kind, path) in found {
            let Some(_lock) = lock_if_abandoned(&path) else { continue };
            match kind {
                Leftover::Backup => self.recover(&path)?,
                // Best effort: one left behind is removed by the next build.
                Leftover::Staging => drop(fs::remove_dir_all(&path)),
            }
        }
        Ok(())
    }

    /// What the entry `name` next to OUT is, if a build into OUT made it.
    fn leftover(&self, name: &str) -> Option<Leftover> {
        let rest = name.strip_prefix('.')?.strip_prefix(self.name.as_str())?;
        let is_pid = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if rest.strip_prefix(BACKUP_INFIX).is_some_and(is_pid) {
            Some(Leftover::Backup)
        } else if [STAGING_INFIX, DOWNLOADS_INFIX].iter().any(|infix| rest.strip_prefix(infix).is_some_and(is_pid)) {
            Some(Leftover::Staging)
        } else {
            None
        }
    }

    /// An abandoned backup (locked by this process now): put back at OUT when OUT has no
    /// manifest and the backup has the old one (the swap stopped half-way), deleted otherwise
    /// (the swap finished, or never moved anything).
    fn recover(&self, backup: &Path) -> Result<(), BuildError> {
        let has_manifest = |dir: &Path| fs::symlink_metadata(dir.join(paths::MANIFEST)).is_ok();
        if has_manifest(&self.out) || !has_manifest(backup) {
            drop(fs::remove_dir_all(backup));
            return Ok(());
        }
        if fs::symlink_metadata(&self.out).is_err() {
            fs::create_dir(&self.out).map_err(|e| BuildError::io(&self.display, e))?;
        }
        // A build replacing OUT at this moment runs its own clean-up first; leave the backup to it.
        let out = open_dir(&self.out).map_err(|e| BuildError::io(&self.display, e))?;
        if !try_lock(&out).map_err(|e| BuildError::io(&self.display, e))? {
            return Ok(());
        }
        restore(backup, &self.out, &mut |from, to| fs::rename(from, to)).map_err(|failed| BuildError::Recover {
            out: self.display.clone(),
            backup: backup.display().to_string(),
            step: failed.step,
            source: failed.source,
        })
    }
}

/// What a build into OUT leaves next to it; backups sort first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Leftover {
    Backup,
    Staging,
}

/// The staging directory of this build, locked while it lives. Dropped before the bundle is in
/// place (the build failed, or panicked: the profile unwinds), it is removed.
pub struct Staging {
    /// `None` once the directory became OUT.
    dir: Option<PathBuf>,
    /// Held until the directory is removed (fields drop after [`Drop::drop`]).
    _lock: File,
}

impl Staging {
    /// Creates and locks this build's staging directory next to OUT.
    pub fn create(target: &Target) -> Result<Staging, BuildError> {
        let dir = target.staging_path();
        let lock =
            create_locked_dir(&dir).map_err(|e| BuildError::Write { path: dir.display().to_string(), source: e })?;
        interrupt::remove_on_signal(&dir);
        Ok(Staging { dir: Some(dir), _lock: lock })
    }

    /// Creates and locks a directory next to OUT for the shards a merge downloads before it
    /// merges them: never installed, so removed when dropped (or by the next build, if killed).
    pub fn create_for_downloads(target: &Target) -> Result<Staging, BuildError> {
        let dir = target.downloads_path();
        let lock =
            create_locked_dir(&dir).map_err(|e| BuildError::Write { path: dir.display().to_string(), source: e })?;
        interrupt::remove_on_signal(&dir);
        Ok(Staging { dir: Some(dir), _lock: lock })
    }

    pub fn path(&self) -> &Path {
        self.dir.as_deref().expect("in place only once installed")
    }

    /// Puts the finished bundle at OUT: one rename when OUT is absent or an empty directory,
    /// else (with `overwrite`) the swap. A SIGINT or SIGTERM meanwhile waits for it to end.
    pub fn install(mut self, target: &Target, overwrite: bool) -> Result<(), BuildError> {
        let dir = self.path().to_owned();
        let mut removed_on_signal = interrupt::hold_signals();
        if is_vacant(&target.out) {
            match fs::rename(&dir, &target.out) {
                Ok(()) => {
                    removed_on_signal.retain(|d| *d != dir);
                    self.dir = None;
                    return Ok(());
                }
                // Another build put something there meanwhile: replace it as any other.
                Err(_) if !is_vacant(&target.out) => {}
                Err(e) => return Err(BuildError::Write { path: target.display.clone(), source: e }),
            }
        }
        if !overwrite {
            return Err(BuildError::OutputExists(target.display.as_str().into()));
        }
        swap(&dir, target, &mut |from, to| fs::rename(from, to))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            // Nothing to report it to; an abandoned one is removed by the next build.
            drop(fs::remove_dir_all(dir));
            interrupt::keep_on_signal(dir);
        }
    }
}

/// Replaces the bundle at OUT with the one in `staged`, moving entries with `rename`; OUT's
/// other entries stay. On failure the old bundle is put back and the error names the step.
pub fn swap(staged: &Path, target: &Target, rename: &mut Rename) -> Result<(), BuildError> {
    let io_error = |e| BuildError::io(&target.display, e);
    let out = open_dir(&target.out).map_err(io_error)?;
    lock(&out).map_err(io_error)?;
    // Checked again under the lock: OUT may have changed while the bundle was built.
    let old = target.own_entries()?;
    let new = staged_entries(staged)?;
    let backup = target.backup_path();
    let _backup_lock =
        create_locked_dir(&backup).map_err(|e| BuildError::Write { path: backup.display().to_string(), source: e })?;
    let Err(failed) = move_in(staged, &target.out, &backup, &old, &new, rename) else {
        // Left behind, it is deleted by the next build (OUT has its manifest).
        drop(fs::remove_dir_all(&backup));
        return Ok(());
    };
    let outcome = match restore(&backup, &target.out, rename) {
        Ok(()) => "the old bundle is back in place".to_string(),
        Err(again) => format!(
            "putting the old bundle back failed too ({}: {}); it is kept in {}, and the next build into {} puts it back",
            again.step,
            again.source,
            backup.display(),
            target.display
        ),
    };
    Err(BuildError::Replace { out: target.display.clone(), step: failed.step, source: failed.source, outcome })
}

/// A step of the swap that failed.
#[derive(Debug)]
struct Failed {
    step: String,
    source: io::Error,
}

/// Moves the old bundle into `backup` and the new one into `out`, manifests first and last.
fn move_in(
    staged: &Path,
    out: &Path,
    backup: &Path,
    old: &[String],
    new: &[String],
    rename: &mut Rename,
) -> Result<(), Failed> {
    move_entry(rename, &out.join(paths::MANIFEST), &backup.join(paths::MANIFEST))?;
    for name in lite_first(old) {
        move_entry(rename, &out.join(name), &backup.join(name))?;
    }
    let part = backup.join(NEW_MANIFEST_PART);
    fs::copy(staged.join(paths::MANIFEST), &part)
        .map_err(|source| Failed { step: format!("writing {}", part.display()), source })?;
    move_entry(rename, &part, &backup.join(NEW_MANIFEST))?;
    for name in lite_last(new) {
        move_entry(rename, &staged.join(name), &out.join(name))?;
    }
    move_entry(rename, &staged.join(paths::MANIFEST), &out.join(paths::MANIFEST))
}

/// Puts the old bundle in `backup` back at `out`, removing first what OUT holds of the new one
/// (the files [`NEW_MANIFEST`] lists), the manifest last; then deletes the backup.
fn restore(backup: &Path, out: &Path, rename: &mut Rename) -> Result<(), Failed> {
    // The old manifest moves first: a backup without it holds nothing of the old bundle.
    if fs::symlink_metadata(backup.join(paths::MANIFEST)).is_err() {
        drop(fs::remove_dir_all(backup));
        return Ok(());
    }
    let new_manifest = backup.join(NEW_MANIFEST);
    if fs::symlink_metadata(&new_manifest).is_ok() {
        remove_new_entries(out, &new_manifest)?;
    }
    let skip = [paths::MANIFEST, NEW_MANIFEST, NEW_MANIFEST_PART];
    let failed = |step: String| move |source| Failed { step, source };
    let mut names: Vec<_> = fs::read_dir(backup)
        .and_then(|d| d.map(|e| e.map(|e| e.file_name())).collect::<io::Result<_>>())
        .map_err(failed(format!("reading {}", backup.display())))?;
    names.sort();
    names.retain(|n| !skip.iter().any(|s| n.as_os_str() == *s));
    // The lite manifest last, as in a swap.
    let (lite, rest): (Vec<_>, Vec<_>) = names.into_iter().partition(|n| n.as_os_str() == paths::MANIFEST_LITE);
    for name in rest.iter().chain(&lite) {
        move_entry(rename, &backup.join(name), &out.join(name))?;
    }
    move_entry(rename, &backup.join(paths::MANIFEST), &out.join(paths::MANIFEST))?;
    // Only the new manifest's copy is left; if it stays, the next build deletes it.
    drop(fs::remove_dir_all(backup));
    Ok(())
}

/// Removes the entries of the new bundle from `out`, refusing any holding a file that
/// `new_manifest` does not list (then it is not the new bundle's).
fn remove_new_entries(out: &Path, new_manifest: &Path) -> Result<(), Failed> {
    let failed = |step: String| move |source| Failed { step, source };
    let limit = reader::Limits::default().manifest;
    let mut bytes = Vec::new();
    File::open(new_manifest)
        .and_then(|f| f.take(limit).read_to_end(&mut bytes))
        .map_err(failed(format!("reading {}", new_manifest.display())))?;
    let unreadable = || io::Error::new(io::ErrorKind::InvalidData, "not a bundle manifest");
    let listed =
        listed_files(&bytes).ok_or_else(unreadable).map_err(failed(format!("reading {}", new_manifest.display())))?;
    let names = entries_listed_in(out, &listed).map_err(|path| Failed {
        step: format!("removing the new bundle's {}", path.display()),
        source: io::Error::new(io::ErrorKind::AlreadyExists, "a file neither bundle lists"),
    })?;
    for name in lite_first(&names) {
        let path = out.join(name);
        let removed = if fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(failed(format!("removing {}", path.display())))?;
    }
    Ok(())
}

/// `names` with the lite manifest first: it leaves OUT right after the manifest, before any file
/// it names (a viewer reads it instead of the manifest).
fn lite_first(names: &[String]) -> impl Iterator<Item = &String> {
    let lite = |n: &&String| n.as_str() == paths::MANIFEST_LITE;
    names.iter().filter(lite).chain(names.iter().filter(move |n| !lite(n)))
}

/// `names` with the lite manifest last: it comes into OUT after every file it names, right
/// before the manifest.
fn lite_last(names: &[String]) -> impl Iterator<Item = &String> {
    let lite = |n: &&String| n.as_str() == paths::MANIFEST_LITE;
    names.iter().filter(move |n| !lite(n)).chain(names.iter().filter(lite))
}

/// Moves `from` to `to`, which must not exist: a rename would replace a file there silently.
fn move_entry(rename: &mut Rename, from: &Path, to: &Path) -> Result<(), Failed> {
    let step = || format!("moving {} to {}", from.display(), to.display());
    if fs::symlink_metadata(to).is_ok() {
        return Err(Failed { step: step(), source: io::Error::from(io::ErrorKind::AlreadyExists) });
    }
    rename(from, to).map_err(|source| Failed { step: step(), source })
}

/// Every file path a manifest (`files` and `viewer`) lists, or `None` when `bytes` is not a
/// manifest of this format (of any version).
fn listed_files(bytes: &[u8]) -> Option<BTreeSet<String>> {
    let manifest: Value = reader::parse_json(paths::MANIFEST, bytes, &reader::Limits::default()).ok()?;
    if manifest["format"] != tlparse_bundle::schema::FORMAT_NAME {
        return None;
    }
    let lists = ["files", "viewer"].into_iter().filter_map(|key| manifest[key].as_array());
    Some(lists.flatten().filter_map(|f| f["path"].as_str()).map(str::to_owned).collect())
}

/// The entries of `dir` under a bundle's names, the manifest excepted, if every file in them
/// is in `listed`; else the first path that is not (a file unlisted, a symlink, a device...).
fn entries_listed_in(dir: &Path, listed: &BTreeSet<String>) -> Result<Vec<String>, PathBuf> {
    let mut found = Vec::new();
    for name in root_names().into_iter().filter(|n| n != paths::MANIFEST) {
        let entry = dir.join(&name);
        if fs::symlink_metadata(&entry).is_err() {
            continue;
        }
        for item in walkdir::WalkDir::new(&entry).sort_by_file_name() {
            let item = item.map_err(|e| e.path().unwrap_or(&entry).to_owned())?;
            if item.file_type().is_dir() {
                continue;
            }
            let rel = item.path().strip_prefix(dir).ok().and_then(Path::to_str).map(|r| r.replace('\\', "/"));
            let is_listed = item.file_type().is_file() && rel.is_some_and(|r| listed.contains(&r));
            if !is_listed {
                return Err(item.path().to_owned());
            }
        }
        found.push(name);
    }
    Ok(found)
}

/// The entries of a staged bundle but its manifest; each must be under a bundle's name, so that
/// the next `--overwrite` knows it for the bundle's.
fn staged_entries(staged: &Path) -> Result<Vec<String>, BuildError> {
    let io_error = |e| BuildError::io(staged.display(), e);
    let names = root_names();
    let mut found = Vec::new();
    for entry in fs::read_dir(staged).map_err(io_error)? {
        let name = entry.map_err(io_error)?.file_name().to_string_lossy().into_owned();
        if !names.contains(&name) {
            let why = io::Error::other(format!("{name} is not a name a bundle writes (a bug of tlparse-build)"));
            return Err(BuildError::io(staged.display(), why));
        }
        if name != paths::MANIFEST {
            found.push(name);
        }
    }
    found.sort();
    Ok(found)
}

fn is_empty_dir(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none())
}

/// OUT can be taken by one rename: absent, or an empty directory.
fn is_vacant(out: &Path) -> bool {
    match fs::symlink_metadata(out) {
        Ok(meta) => meta.is_dir() && is_empty_dir(out),
        Err(_) => true,
    }
}

/// Opens a directory to lock it; a symlink is not followed.
fn open_dir(path: &Path) -> io::Result<File> {
    fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(path)
}

/// `flock(2)` on `dir`, retried when a signal interrupts it. (std's `File::lock` needs Rust
/// 1.89; this crate builds with 1.85.) The lock goes with the open directory, not its name, and
/// dies with the process, however it ends.
fn flock(dir: &File, operation: libc::c_int) -> io::Result<()> {
    loop {
        // SAFETY: flock reads only the descriptor, which `dir` keeps open.
        if unsafe { libc::flock(dir.as_raw_fd(), operation) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn lock(dir: &File) -> io::Result<()> {
    flock(dir, libc::LOCK_EX)
}

/// Takes the lock unless another open directory holds it (`Ok(false)`).
fn try_lock(dir: &File) -> io::Result<bool> {
    match flock(dir, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether `path` still names the directory `dir` has open.
fn names_dir(path: &Path, dir: &File) -> bool {
    match (fs::symlink_metadata(path), dir.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Creates the directory `path` and locks it. Between the two a concurrent clean-up may take it
/// for abandoned and remove it; then it is created again.
fn create_locked_dir(path: &Path) -> io::Result<File> {
    for _ in 0..CREATE_ATTEMPTS {
        fs::create_dir(path)?;
        let dir = match open_dir(path) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        lock(&dir)?;
        if names_dir(path, &dir) {
            return Ok(dir);
        }
    }
    Err(io::Error::other("removed by concurrent builds each time it was created"))
}

/// Locks the directory at `path` if no running build holds it, and it is still there.
fn lock_if_abandoned(path: &Path) -> Option<File> {
    let dir = open_dir(path).ok()?;
    (try_lock(&dir).ok()? && names_dir(path, &dir)).then_some(dir)
}

/// An error of reading an input, marked so that [`file_error`] tells it from the build's writes
/// when both come back from reading a file as `io::Error`.
#[derive(Debug)]
struct ReadingInput(io::Error);

impl std::fmt::Display for ReadingInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ReadingInput {}

/// Marks an error as one of reading the input (opening, reading, decompressing it).
pub fn reading_input(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), ReadingInput(e))
}

/// The error of reading the input `input` into `staging`: it names the input when reading
/// failed, the staging directory otherwise (which [`Target::name_output`] names as OUT): a full
/// disk is the output's problem, not the log's.
pub fn file_error(input: &Path, staging: &Path, e: io::Error) -> BuildError {
    if e.get_ref().is_some_and(|inner| inner.is::<ReadingInput>()) {
        let inner = e.into_inner().and_then(|b| b.downcast::<ReadingInput>().ok()).expect("checked just above");
        return BuildError::io(input.display(), inner.0);
    }
    BuildError::io(staging.display(), e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_of_reading_name_the_input_and_the_others_the_output() {
        let staging = Path::new("/x/.b.tlparse-build-1");
        let read = file_error(Path::new("log.txt"), staging, reading_input(io::Error::other("truncated gzip")));
        assert_eq!(read.to_string(), "log.txt: truncated gzip");
        let written = file_error(Path::new("log.txt"), staging, io::Error::from_raw_os_error(libc::EFBIG));
        let target = Target { display: "b".into(), out: "/x/b".into(), parent: "/x".into(), name: "b".into() };
        let named = target.name_output(written, staging);
        assert!(named.to_string().starts_with("writing b: File too large"), "{named}");
    }

    #[test]
    fn leftovers_are_recognised_by_their_exact_names() {
        let target = Target { display: "b".into(), out: "/x/b".into(), parent: "/x".into(), name: "b".into() };
        assert_eq!(target.leftover(".b.tlparse-build-12"), Some(Leftover::Staging));
        assert_eq!(target.leftover(".b.tlparse-build-old-12"), Some(Leftover::Backup));
        for other in
            [".bb.tlparse-build-12", ".b.tlparse-build-", ".b.tlparse-build-12x", ".b.tlparse-build-old-x", "b"]
        {
            assert_eq!(target.leftover(other), None, "{other}");
        }
    }
}
