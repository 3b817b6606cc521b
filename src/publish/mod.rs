//! `publish`: puts a bundle's files where a browser can read them: a bucket (S3 API, GCS, Azure)
//! or a local directory laid out for GitHub Pages.
//!
//! The order of writes is what keeps readers right. A reader starts from `manifest.json`, so the
//! manifest is written last: until then a reader finds no bundle, never a manifest whose files
//! are missing. Replacing a different bundle deletes the old manifest first (for a while there is
//! no bundle: a wrong answer is worse than none), uploads, writes the new manifest, and only then
//! deletes the old bundle's files the new one does not list. A viewer starts from
//! `manifest.lite.json.zst` instead: it is deleted right after the old manifest and uploaded after
//! every other file, right before the manifest. So at every moment a manifest at the URL lists
//! only files that are there with its bytes; a reader already holding the old manifest may still
//! see a mix (docs/hosting.md says what). After the manifest, every file of a bundle's shape it
//! does not list is deleted: the replaced bundle's and a stopped publish's.
//!
//! Files already there with the same bytes are skipped: publishing again costs a HEAD a file, and
//! the MD5 of the local file where the ETag is one, else reading the object back.

pub mod destination;
pub mod shards;
mod target;

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use futures_util::{StreamExt, TryStreamExt};
use indicatif::{ProgressBar, ProgressStyle};
use tlparse_bundle::DirSource;
use tlparse_bundle::source::BundlePath;

use crate::schema::Manifest;
pub use destination::{Destination, DestinationError, Host};
use target::{PlannedFile, Target};
use tlparse_bundle::paths;

/// The file that tells GitHub Pages to serve every file as it is, not through Jekyll (which
/// would drop files and folders whose names start with `_` or `.`).
pub use paths::NOJEKYLL;

/// What to publish where, and how.
#[derive(Debug, Clone)]
pub struct PublishOptions {
    pub bundle: Utf8PathBuf,
    /// `s3://BUCKET/PREFIX`, `gs://...`, `az://CONTAINER/PREFIX`, `file://DIR` or a directory path.
    pub url: String,
    /// Replace a different bundle found at `url`.
    pub replace: bool,
    /// Files transferred at once.
    pub jobs: usize,
    pub progress: Progress,
}

/// How progress is shown, on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    None,
    /// A progress bar (a terminal).
    Bar,
    /// One line per file written or deleted.
    Lines,
}

/// What a publish did.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Files written (the manifest included), and their bytes.
    pub uploaded: usize,
    pub uploaded_bytes: u64,
    /// Files already there with the same bytes, not written again.
    pub already_there: usize,
    /// Files of a replaced bundle that the new one does not list, deleted.
    pub deleted: usize,
    /// Of `deleted`, the files an earlier publish stopped before its manifest left (listed by no
    /// manifest), which this bundle does not list.
    pub leftovers: usize,
    /// A different bundle was found and replaced.
    pub replaced: bool,
    /// The bundle's viewer is not byte for byte the one this build of tlparse-build ships (an
    /// older or newer version, or another author's): it runs at the destination's origin as is.
    pub foreign_viewer: bool,
    pub elapsed: Duration,
    /// Where the bundle is now.
    pub place: Place,
}

/// Where a published bundle can be opened.
#[derive(Debug, Clone)]
pub enum Place {
    /// A bucket: the folder URL (ending in `/`), which holds the viewer's `index.html`.
    Url(String),
    Dir(Utf8PathBuf),
}

/// Why a bundle was not published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Destination(#[from] DestinationError),
    #[error("{bundle} is not a bundle ({why})")]
    NotABundle { bundle: Utf8PathBuf, why: String },
    #[error(
        "{bundle} does not validate ({count} problem(s), the first: {first}); nothing was published. `tlparse-build validate {bundle}` lists them"
    )]
    Invalid { bundle: Utf8PathBuf, count: usize, first: String },
    #[error(
        "{url} already holds a different bundle; nothing was published. Pass --replace to replace it (its readers see no bundle while the new one uploads)"
    )]
    Different { url: String },
    #[error("{path}: {source}")]
    Store { path: String, source: object_store::Error },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{0} changed since the bundle was checked; nothing more was published")]
    Changed(String),
}

/// The environment variables that hold secrets object_store reads (or an identifier that goes
/// with one): their values never appear in a message.
const CREDENTIAL_VARIABLES: [&str; 10] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_ACCESS_KEY",
    "AZURE_STORAGE_SAS_KEY",
    "AZURE_STORAGE_TOKEN",
    "AZURE_CLIENT_SECRET",
    "AZURE_FEDERATED_TOKEN",
];

/// `message` with the value of every credential variable set replaced by `[redacted]`. A server's
/// error body may quote what it was sent (AWS's SignatureDoesNotMatch quotes the access key id),
/// and object_store passes it on.
pub fn redact_credentials(message: &str) -> String {
    let secrets = CREDENTIAL_VARIABLES.iter().filter_map(|name| std::env::var(name).ok());
    redact(message, secrets)
}

fn redact(message: &str, secrets: impl Iterator<Item = String>) -> String {
    // Short values (an empty or placeholder one) would redact ordinary words.
    let redacted =
        secrets.filter(|s| s.len() >= 8).fold(message.to_string(), |m, secret| m.replace(&secret, "[redacted]"));
    redact_user_info(&redacted)
}

/// `message` with the user info of every URL in it (`scheme://user:password@host`) replaced by
/// `[redacted]`: an endpoint given as `AWS_ENDPOINT_URL=http://user:password@host` is quoted
/// whole in object_store's errors.
fn redact_user_info(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find("://") {
        let (before, after) = rest.split_at(start + 3);
        out.push_str(before);
        let authority_end = after.find(|c: char| matches!(c, '/' | '?' | '#' | ')' | '"' | '\'') || c.is_whitespace());
        let authority = &after[..authority_end.unwrap_or(after.len())];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str("[redacted]");
                rest = &after[at..];
            }
            None => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// What the destination held before this publish.
enum Found {
    /// No manifest: nothing, or the files of a publish that was stopped before its manifest.
    Nothing,
    /// This very manifest, byte for byte.
    Same,
    /// Another manifest; the paths it lists (its own excluded).
    Different(BTreeSet<String>),
}

/// Checks and publishes a bundle; blocks until done.
pub fn publish(options: &PublishOptions) -> Result<Summary, PublishError> {
    let started = Instant::now();
    let (manifest, manifest_bytes) = checked_bundle(options)?;
    publish_checked(options, destination::open(&options.url)?, &manifest, &manifest_bytes, started)
}

/// Checks and publishes a bundle to `destination`, already open (`options.url` only names it in
/// messages): what [`publish`] does once it has opened the URL; blocks until done.
pub fn publish_to(options: &PublishOptions, destination: Destination) -> Result<Summary, PublishError> {
    let started = Instant::now();
    let (manifest, manifest_bytes) = checked_bundle(options)?;
    publish_checked(options, destination, &manifest, &manifest_bytes, started)
}

/// The bundle's manifest, parsed and as bytes, once the whole bundle validates.
fn checked_bundle(options: &PublishOptions) -> Result<(Manifest, Vec<u8>), PublishError> {
    let checking = spinner(options, format!("checking {}", options.bundle));
    let manifest_bytes = checked_manifest(&options.bundle);
    checking.finish_and_clear();
    let manifest_bytes = manifest_bytes?;
    let manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| PublishError::NotABundle { bundle: options.bundle.clone(), why: e.to_string() })?;
    Ok((manifest, manifest_bytes))
}

fn publish_checked(
    options: &PublishOptions,
    destination: Destination,
    manifest: &Manifest,
    manifest_bytes: &[u8],
    started: Instant,
) -> Result<Summary, PublishError> {
    let (target, place) = match destination {
        Destination::Store { store, prefix, host } => {
            let url = host.folder_url(&prefix);
            (Target::Store { store, prefix }, Place::Url(url))
        }
        Destination::Dir(dir) => (Target::Dir(dir.clone()), Place::Dir(dir)),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|source| PublishError::Io { path: "tokio runtime".into(), source })?;
    let mut summary = runtime.block_on(run(options, &target, manifest, manifest_bytes))?;
    summary.elapsed = started.elapsed();
    summary.foreign_viewer = manifest.viewer.as_ref().is_some_and(|v| *v != crate::viewer::manifest_entries());
    summary.place = place;
    Ok(summary)
}

/// The manifest's bytes, once the whole bundle validates (and the manifest did not change while
/// it was being checked).
fn checked_manifest(bundle: &Utf8Path) -> Result<Vec<u8>, PublishError> {
    let not_a_bundle = |why: String| PublishError::NotABundle { bundle: bundle.to_owned(), why };
    let read =
        || std::fs::read(bundle.join(paths::MANIFEST)).map_err(|e| not_a_bundle(format!("{}: {e}", paths::MANIFEST)));
    let before = read()?;
    let problems = tlparse_bundle::validate::validate(DirSource::new(bundle.as_std_path()))
        .map_err(|e| not_a_bundle(e.to_string()))?;
    if let Some(first) = problems.first() {
        return Err(PublishError::Invalid { bundle: bundle.to_owned(), count: problems.len(), first: first.clone() });
    }
    if read()? != before {
        return Err(PublishError::Changed(paths::MANIFEST.into()));
    }
    Ok(before)
}

/// Every file to publish but the manifest: the format's files, then the viewer's.
fn planned_files(manifest: &Manifest) -> Vec<PlannedFile> {
    let data = manifest.files.iter().map(|f| PlannedFile {
        path: f.path.clone(),
        size: f.size,
        blake3: f.blake3.clone(),
        viewer: false,
    });
    let viewer = manifest.viewer.iter().flatten().map(|f| PlannedFile {
        path: f.path.clone(),
        size: f.size,
        blake3: f.blake3.clone(),
        viewer: true,
    });
    data.chain(viewer).collect()
}

async fn run(
    options: &PublishOptions,
    target: &Target,
    manifest: &Manifest,
    manifest_bytes: &[u8],
) -> Result<Summary, PublishError> {
    let found = inspect(target, manifest_bytes).await?;
    let mut summary = Summary {
        uploaded: 0,
        uploaded_bytes: 0,
        already_there: 0,
        deleted: 0,
        leftovers: 0,
        replaced: matches!(found, Found::Different(_)),
        foreign_viewer: false,
        elapsed: Duration::ZERO,
        place: Place::Url(String::new()),
    };
    if let Found::Different(_) = found {
        if !options.replace {
            return Err(PublishError::Different { url: options.url.clone() });
        }
        // First, so that no reader ever gets the old manifest with some of the new files.
        target.delete(paths::MANIFEST).await?;
        note(options, &format!("deleted {} (the old bundle's)", paths::MANIFEST));
    }
    if !matches!(found, Found::Same) {
        // Next, the lite manifest a viewer reads first (the old bundle's, or one a stopped
        // publish left): until the new one is written, last but the manifest, a viewer finds no
        // bundle, never a lite manifest whose files are missing or another bundle's.
        target.delete(paths::MANIFEST_LITE).await?;
    }
    let mut files = planned_files(manifest);
    files.sort_by_key(|f| f.path == paths::MANIFEST_LITE); // stable: the lite manifest last
    let lite = files.iter().position(|f| f.path == paths::MANIFEST_LITE).unwrap_or(files.len());
    upload_files(options, target, &files[..lite], &mut summary).await?;
    upload_files(options, target, &files[lite..], &mut summary).await?;
    if let Target::Dir(dir) = target {
        write_nojekyll(dir)?;
    }
    // Last: from now on readers see the new bundle, whole.
    if matches!(found, Found::Same) {
        summary.already_there += 1;
    } else {
        write_manifest(options, target, manifest_bytes, &mut summary).await?;
    }
    clean_up(options, target, found, &files, &mut summary).await?;
    Ok(summary)
}

/// What the destination holds now, told by its manifest.
async fn inspect(target: &Target, manifest_bytes: &[u8]) -> Result<Found, PublishError> {
    let limit = tlparse_bundle::reader::Limits::default().manifest;
    Ok(match target.read(paths::MANIFEST, limit).await? {
        None => Found::Nothing,
        Some(bytes) if bytes == manifest_bytes => Found::Same,
        Some(bytes) => Found::Different(listed_paths(&bytes)),
    })
}

/// Every file but the manifest, `options.jobs` at a time, skipping those already there.
async fn upload_files(
    options: &PublishOptions,
    target: &Target,
    files: &[PlannedFile],
    summary: &mut Summary,
) -> Result<(), PublishError> {
    let progress = progress_bar(options, files.iter().map(|f| f.size).sum());
    let outcomes: Vec<(bool, u64)> = futures_util::stream::iter(files)
        .map(|file| publish_file(options, target, file, &progress))
        .buffer_unordered(options.jobs.max(1))
        .try_collect()
        .await?;
    progress.finish_and_clear();
    for (uploaded, size) in outcomes {
        if uploaded {
            summary.uploaded += 1;
            summary.uploaded_bytes += size;
        } else {
            summary.already_there += 1;
        }
    }
    Ok(())
}

async fn write_manifest(
    options: &PublishOptions,
    target: &Target,
    manifest_bytes: &[u8],
    summary: &mut Summary,
) -> Result<(), PublishError> {
    let manifest_file = PlannedFile {
        path: paths::MANIFEST.into(),
        size: manifest_bytes.len() as u64,
        blake3: blake3::hash(manifest_bytes).to_hex().to_string(),
        viewer: false,
    };
    target.put(&manifest_file, options.bundle.join(paths::MANIFEST).into_std_path_buf()).await?;
    note(options, &format!("uploaded {}", paths::MANIFEST));
    summary.uploaded += 1;
    summary.uploaded_bytes += manifest_file.size;
    Ok(())
}

/// After the manifest: deletes every file of a bundle's shape that the bundle now at the URL
/// does not list: the replaced bundle's, and those an earlier publish stopped before its manifest
/// left (with or without --replace: the manifest now there says they are no bundle's, and kept
/// they would stay for good, as no later publish would know them either).
async fn clean_up(
    options: &PublishOptions,
    target: &Target,
    found: Found,
    files: &[PlannedFile],
    summary: &mut Summary,
) -> Result<(), PublishError> {
    let new: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let old: BTreeSet<String> = match found {
        Found::Different(old) => old.into_iter().filter(|p| !new.contains(p.as_str())).collect(),
        Found::Same | Found::Nothing => BTreeSet::new(),
    };
    let left: BTreeSet<String> = leftovers(target, &new).await?.into_iter().filter(|p| !old.contains(p)).collect();
    let stale: Vec<&String> = old.iter().chain(&left).collect();
    futures_util::stream::iter(stale.iter())
        .map(|path| async move {
            target.delete(path).await?;
            note(options, &format!("deleted {path}"));
            Ok::<(), PublishError>(())
        })
        .buffer_unordered(options.jobs.max(1))
        .try_collect::<Vec<()>>()
        .await?;
    summary.deleted = stale.len();
    summary.leftovers = left.len();
    Ok(())
}

/// The files at the destination that look like a bundle's (the format's folders and names,
/// `index.html`, `diagnostics.jsonl`) and that `new` does not list: left by a publish stopped
/// before its manifest, the first or a `--replace` one. Nothing else is ever touched: a Pages
/// site's `CNAME` or README, another prefix's objects.
async fn leftovers(target: &Target, new: &BTreeSet<&str>) -> Result<Vec<String>, PublishError> {
    let found = target.list().await?;
    let mut stale = Vec::new();
    let ours = |p: &String| is_bundle_shaped(p) || target::is_temporary(p);
    for path in found.into_iter().filter(|p| ours(p) && !new.contains(p.as_str())) {
        if target::is_temporary(&path) {
            // Ours, unmistakably, and never part of a bundle: deleted, and not counted.
            target.delete(&path).await?;
        } else {
            stale.push(path);
        }
    }
    Ok(stale)
}

/// Whether `path` is where a bundle (of any format version) keeps a file: a root name of
/// [`paths::ROOT_NAMES`] but the manifest (the one file a publish writes itself), or a folder of
/// them holding a file of the kinds the format writes there (`.zst`, `.gz`, `.json`, `.jsonl`),
/// or anything under `viewer/`.
pub fn is_bundle_shaped(path: &str) -> bool {
    const DATA_FOLDERS: [&str; 4] = ["index", "stacks", "blobs", "tables"];
    const DATA_SUFFIXES: [&str; 4] = [".zst", ".gz", ".json", ".jsonl"];
    if BundlePath::new(path).is_err() {
        return false;
    }
    match path.split_once('/') {
        Some((paths::VIEWER_DIR, _)) => true,
        Some((paths::SCHEMA_DIR, name)) => name.ends_with(".json"),
        Some((folder, name)) => DATA_FOLDERS.contains(&folder) && DATA_SUFFIXES.iter().any(|s| name.ends_with(s)),
        None => [paths::VIEWER_ENTRY, paths::DIAGNOSTICS, paths::MANIFEST_LITE].contains(&path),
    }
}

/// Publishes one file unless it is already there; `(uploaded, size)`.
async fn publish_file(
    options: &PublishOptions,
    target: &Target,
    file: &PlannedFile,
    progress: &ProgressBar,
) -> Result<(bool, u64), PublishError> {
    let source = options.bundle.join(&file.path).into_std_path_buf();
    let there = target.has(file, &source).await?;
    if !there {
        target.put(file, source).await?;
        note(options, &format!("uploaded {}", file.path));
    }
    progress.inc(file.size);
    Ok((!there, file.size))
}

/// The paths a manifest found at the destination lists (`files` and `viewer`), read leniently (it
/// may be of another format version) and each checked to stay inside the bundle: they are about
/// to be deleted, and that manifest is not ours.
fn listed_paths(manifest: &[u8]) -> BTreeSet<String> {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(manifest) else {
        return BTreeSet::new();
    };
    ["files", "viewer"]
        .iter()
        .filter_map(|key| value.get(key).and_then(|v| v.as_array()))
        .flatten()
        .filter_map(|entry| entry.get("path").and_then(|p| p.as_str()))
        .filter(|path| *path != paths::MANIFEST && BundlePath::new(path).is_ok())
        .map(str::to_string)
        .collect()
}

fn write_nojekyll(dir: &Utf8Path) -> Result<(), PublishError> {
    let path = dir.join(NOJEKYLL);
    let error = |source| PublishError::Io { path: NOJEKYLL.into(), source };
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() => Ok(()),
        // Never written through: a link could point anywhere.
        Ok(_) => Err(error(std::io::Error::other("there, and not a plain file"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::OpenOptions::new().write(true).create_new(true).open(&path).map(drop).map_err(error)
        }
        Err(e) => Err(error(e)),
    }
}

fn progress_bar(options: &PublishOptions, total: u64) -> ProgressBar {
    if options.progress != Progress::Bar {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let style =
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {msg}").expect("a valid template");
    bar.set_style(style);
    bar
}

/// A spinner with a message while something long runs (validating a big bundle takes seconds).
fn spinner(options: &PublishOptions, message: String) -> ProgressBar {
    if options.progress != Progress::Bar {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner().with_message(message);
    spinner.enable_steady_tick(Duration::from_millis(120));
    spinner
}

fn note(options: &PublishOptions, line: &str) {
    if options.progress == Progress::Lines {
        eprintln!("{line}");
    }
}

/// The progress a command line gets by default: a bar on a terminal, nothing otherwise.
pub fn default_progress(quiet: bool) -> Progress {
    if !quiet && std::io::stderr().is_terminal() { Progress::Bar } else { Progress::None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted_from_messages() {
        let message = "403: <AWSAccessKeyId>AKIAEXAMPLEKEY01</AWSAccessKeyId> signed with sekrit/value+1";
        let secrets = ["AKIAEXAMPLEKEY01".to_string(), "sekrit/value+1".to_string(), "short".to_string()];
        assert_eq!(
            redact(message, secrets.into_iter()),
            "403: <AWSAccessKeyId>[redacted]</AWSAccessKeyId> signed with [redacted]"
        );
        let endpoint = "GET http://admin:hunter2secret@127.0.0.1:9/b/manifest.json (see https://docs.example/x@y)";
        assert_eq!(
            redact(endpoint, std::iter::empty()),
            "GET http://[redacted]@127.0.0.1:9/b/manifest.json (see https://docs.example/x@y)"
        );
        assert_eq!(redact("s3://bucket/p and http://u@h", std::iter::empty()), "s3://bucket/p and http://[redacted]@h");
    }

    #[test]
    fn only_a_bundle_s_paths_count_as_leftovers() {
        for path in [
            "index.html",
            "diagnostics.jsonl",
            "manifest.lite.json.zst",
            "blobs/packs/x.zst",
            "viewer/app.js",
            "index/rank0.jsonl.zst",
            "stacks/rank0.json",
            "tables/cross_rank/chrome_trace.json.gz",
            "schema/tables/failures.schema.json",
        ] {
            assert!(is_bundle_shaped(path), "{path}");
        }
        for path in [
            "CNAME",
            "README.md",
            "manifest.json",
            "other/index.html",
            "../blobs/x",
            "docs/blobs/x",
            "blobs/notes.txt",
            "tables/README.md",
            "schema/x.png",
        ] {
            assert!(!is_bundle_shaped(path), "{path}");
        }
    }
}
