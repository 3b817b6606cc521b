//! `merge` of shards in a bucket: each shard given as a URL of object storage (`s3://`, `gs://`,
//! `az://`) is downloaded into a directory next to OUT, then every shard is merged as a local
//! directory by [`crate::bundle::shard::merge`], which never reaches a network itself.

use std::fs;
use std::io;
use std::path::Path;

use camino::{Utf8Path, Utf8PathBuf};

use crate::bundle::BuildError;
use crate::bundle::output::Staging;
use crate::bundle::shard::{self, MergeOptions, SHARD_MANIFEST, ShardDir, ShardManifest, refuse};
use crate::schema::Manifest;

/// Files fetched from a bucket at once.
const DOWNLOADS_AT_ONCE: usize = 16;

/// Whether `shard` names a shard in a bucket rather than a directory.
pub fn is_url(shard: &Utf8Path) -> bool {
    ["s3://", "s3a://", "gs://", "az://", "azure://"].iter().any(|p| shard.as_str().starts_with(p))
}

/// Merges `shards` (directories or URLs) into one bundle. OUT is checked before anything is
/// downloaded; the downloads are removed once the merge ends, however it ends.
pub fn merge(shards: &[Utf8PathBuf], options: &MergeOptions) -> Result<Manifest, BuildError> {
    if !shards.iter().any(|s| is_url(s)) {
        let local: Vec<ShardDir> = shards.iter().cloned().map(ShardDir::local).collect();
        return shard::merge(&local, options);
    }
    let target = shard::merge_target(options)?;
    let downloads = Staging::create_for_downloads(&target)?;
    let local = download_all(shards, downloads.path())?;
    shard::merge(&local, options)
}

/// Downloads each shard given as a URL into `downloads` (one directory each, by position); the
/// others stay where they are.
fn download_all(shards: &[Utf8PathBuf], downloads: &Path) -> Result<Vec<ShardDir>, BuildError> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build();
    let runtime = runtime.map_err(|e| BuildError::io("the download runtime", e))?;
    let mut local = Vec::new();
    for (k, given) in shards.iter().enumerate() {
        if !is_url(given) {
            local.push(ShardDir::local(given.clone()));
            continue;
        }
        let into = Utf8PathBuf::from_path_buf(downloads.join(k.to_string()))
            .map_err(|p| BuildError::Usage(format!("{}: not a UTF-8 path", p.display())))?;
        runtime.block_on(download(given, into.as_std_path()))?;
        local.push(ShardDir { local: into, label: given.clone() });
    }
    Ok(local)
}

/// Copies the shard at `url` into `into`: `shard.json`, then every file it lists (paths checked
/// to stay inside the shard; hashes are checked when the merge reads the copy).
async fn download(url: &Utf8Path, into: &Path) -> Result<(), BuildError> {
    use futures_util::{StreamExt, TryStreamExt};
    use object_store::ObjectStoreExt as _;
    let super::Destination::Store { store, prefix, .. } =
        super::destination::open(url.as_str()).map_err(|e| refuse(url, e))?
    else {
        return Err(refuse(url, "not a bucket URL"));
    };
    let key = |path: &str| path.split('/').fold(prefix.clone(), |key, part| key.join(part));
    let get = |path: String| {
        let (store, key) = (store.clone(), key(&path));
        async move {
            let bytes = store.get(&key).await?.bytes().await?;
            Ok::<_, object_store::Error>((path, bytes))
        }
    };
    let missing = |e: object_store::Error| match e {
        object_store::Error::NotFound { .. } => refuse(
            url,
            "not a finished shard (no shard.json: its shard build failed, was stopped, or is still running)",
        ),
        e => refuse(url, e),
    };
    let (_, text) = get(SHARD_MANIFEST.to_string()).await.map_err(missing)?;
    let manifest: ShardManifest =
        serde_json::from_slice(&text).map_err(|e| refuse(url, format_args!("damaged shard: {SHARD_MANIFEST}: {e}")))?;
    let paths: Vec<String> =
        manifest.files.iter().map(|f| f.path.clone()).chain(manifest.chunks.iter().map(|c| c.path.clone())).collect();
    if let Some(path) = paths.iter().find(|p| !shard::is_inside_path(p)) {
        return Err(refuse(url, format_args!("damaged shard: a path outside it ({path:?})")));
    }
    let write = |e: io::Error| BuildError::Write { path: into.display().to_string(), source: e };
    fs::create_dir_all(into).map_err(write)?;
    fs::write(into.join(SHARD_MANIFEST), &text).map_err(write)?;
    let mut fetched = futures_util::stream::iter(paths.into_iter().map(get)).buffer_unordered(DOWNLOADS_AT_ONCE);
    while let Some((path, bytes)) = fetched.try_next().await.map_err(|e| refuse(url, e))? {
        let local = into.join(&path);
        fs::create_dir_all(local.parent().expect("inside the shard")).map_err(write)?;
        fs::write(local, bytes).map_err(write)?;
    }
    Ok(())
}
