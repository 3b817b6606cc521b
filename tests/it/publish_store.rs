//! `publish` to an object store (object_store's in-memory one, behind a wrapper that checks the
//! bucket after every write): what a reader finds at the URL at each moment of a `--replace`,
//! what a stopped publish leaves and who deletes it, and a corrupted object put right again.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use camino::Utf8PathBuf;
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use object_store::memory::InMemory;
use object_store::path::Path as StorePath;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, ObjectStoreExt,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use tlparse_build::publish::{self, Destination, Host, Progress, PublishOptions, Summary};
use tlparse_build::schema::Manifest;

use crate::util::{build, build_to, fixture};

const PREFIX: &str = "runs/a";

/// An in-memory bucket that, after every put and delete, checks what a reader starting at the
/// URL would find, and records what broke it.
#[derive(Clone, Default)]
struct Watched {
    inner: Arc<InMemory>,
    /// Every put and delete, in order (`put PATH`, `delete PATH`).
    log: Arc<Mutex<Vec<String>>>,
    /// Reader-visible states that were wrong, each with the operation that made it.
    broken: Arc<Mutex<Vec<String>>>,
    /// The manifests of the bundles published here: a lite manifest at the URL must be one's.
    bundles: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Watched {
    fn key(path: &str) -> StorePath {
        StorePath::from(format!("{PREFIX}/{path}"))
    }

    async fn bytes(&self, path: &str) -> Option<Vec<u8>> {
        let got = self.inner.get(&Self::key(path)).await.ok()?;
        Some(got.bytes().await.unwrap().to_vec())
    }

    /// The problems a reader would meet now: a manifest (or a lite manifest) at the URL whose
    /// files are not all there with their bytes.
    async fn reader_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(bytes) = self.bytes("manifest.json").await {
            let manifest: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            problems.extend(self.missing_files(&manifest, "manifest.json").await);
        }
        if let Some(lite) = self.bytes("manifest.lite.json.zst").await {
            let hash = blake3::hash(&lite).to_hex().to_string();
            let bundles = self.bundles.lock().unwrap().clone();
            let whose = bundles.iter().find(|m| entries(m).any(|(p, h)| p == "manifest.lite.json.zst" && h == hash));
            match whose {
                Some(manifest) => problems.extend(self.missing_files(manifest, "manifest.lite.json.zst").await),
                None => problems.push("a lite manifest of no bundle published here".into()),
            }
        }
        problems
    }

    async fn missing_files(&self, manifest: &serde_json::Value, by: &str) -> Vec<String> {
        let mut missing = Vec::new();
        for (path, hash) in entries(manifest) {
            match self.bytes(&path).await {
                None => missing.push(format!("{by} lists {path}, gone")),
                Some(b) if blake3::hash(&b).to_hex().as_str() != hash => {
                    missing.push(format!("{by} lists {path}, other bytes"))
                }
                Some(_) => {}
            }
        }
        missing
    }

    async fn after(&self, operation: String) {
        let problems = self.reader_problems().await;
        self.broken.lock().unwrap().extend(problems.into_iter().map(|p| format!("after {operation}: {p}")));
        self.log.lock().unwrap().push(operation);
    }

    fn relative(location: &StorePath) -> String {
        location.as_ref().strip_prefix(&format!("{PREFIX}/")).unwrap_or(location.as_ref()).to_string()
    }

    /// Every object under the bundle's prefix, relative to it.
    async fn paths(&self) -> BTreeSet<String> {
        let listed: Vec<ObjectMeta> = self.inner.list(Some(&StorePath::from(PREFIX))).try_collect().await.unwrap();
        listed.iter().map(|m| Self::relative(&m.location)).collect()
    }
}

/// `(path, blake3)` of every file a manifest lists.
fn entries(manifest: &serde_json::Value) -> impl Iterator<Item = (String, String)> + '_ {
    ["files", "viewer"]
        .into_iter()
        .filter_map(|k| manifest[k].as_array())
        .flatten()
        .map(|f| (f["path"].as_str().unwrap().to_string(), f["blake3"].as_str().unwrap().to_string()))
}

impl fmt::Display for Watched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Watched({})", self.inner)
    }
}

impl fmt::Debug for Watched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[async_trait]
impl ObjectStore for Watched {
    async fn put_opts(
        &self,
        location: &StorePath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let result = self.inner.put_opts(location, payload, opts).await?;
        self.after(format!("put {}", Self::relative(location))).await;
        Ok(result)
    }

    async fn put_multipart_opts(
        &self,
        location: &StorePath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        // No file of the fixtures' bundles is large enough to be sent in parts.
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &StorePath, options: GetOptions) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<StorePath>>,
    ) -> BoxStream<'static, object_store::Result<StorePath>> {
        let watched = self.clone();
        locations
            .and_then(move |location| {
                let watched = watched.clone();
                async move {
                    watched.inner.delete(&location).await?;
                    watched.after(format!("delete {}", Self::relative(&location))).await;
                    Ok(location)
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&StorePath>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&StorePath>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &StorePath, to: &StorePath, options: CopyOptions) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// Publishes `bundle` into the watched bucket, one file at a time (so that each check sees the
/// bucket between two writes).
fn publish_into(bucket: &Watched, bundle: &Path, replace: bool) -> Summary {
    let manifest = std::fs::read(bundle.join("manifest.json")).unwrap();
    bucket.bundles.lock().unwrap().push(serde_json::from_slice(&manifest).unwrap());
    let options = PublishOptions {
        bundle: Utf8PathBuf::from_path_buf(bundle.to_owned()).unwrap(),
        url: format!("memory:///{PREFIX}"),
        replace,
        jobs: 1,
        progress: Progress::None,
    };
    let destination = Destination::Store {
        store: Arc::new(bucket.clone()),
        prefix: StorePath::from(PREFIX),
        host: Host::S3 { bucket: "b".into(), region: "us-east-1".into(), endpoint: None },
    };
    publish::publish_to(&options, destination).unwrap_or_else(|e| panic!("publishing {}: {e}", bundle.display()))
}

/// What a bundle puts at the URL: its files, its viewer and its manifest.
fn published_paths(manifest: &Manifest) -> BTreeSet<String> {
    let files = manifest.files.iter().map(|f| f.path.clone());
    let viewer = manifest.viewer.iter().flatten().map(|f| f.path.clone());
    files.chain(viewer).chain(["manifest.json".to_string()]).collect()
}

/// Two bundles built side by side: (dir, ranks, its manifest, simple, its manifest).
fn two_bundles() -> (tempfile::TempDir, std::path::PathBuf, Manifest, std::path::PathBuf, Manifest) {
    let (dir, ranks, ranks_manifest) = build(&fixture("torch-2.15/ranks_shifted"));
    let simple = dir.path().join("simple");
    let simple_manifest = build_to(&fixture("torch-2.15/simple"), &simple);
    (dir, ranks, ranks_manifest, simple, simple_manifest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replace_never_leaves_a_manifest_at_the_url_whose_files_are_not_all_there() {
    let (_dir, ranks, ranks_manifest, simple, simple_manifest) = two_bundles();
    let bucket = Watched::default();
    let first = {
        let (bucket, ranks) = (bucket.clone(), ranks.clone());
        tokio::task::spawn_blocking(move || publish_into(&bucket, &ranks, false)).await.unwrap()
    };
    assert_eq!(first.uploaded, published_paths(&ranks_manifest).len());
    let replaced = {
        let (bucket, simple) = (bucket.clone(), simple.clone());
        tokio::task::spawn_blocking(move || publish_into(&bucket, &simple, true)).await.unwrap()
    };
    assert!(replaced.replaced);
    let broken = bucket.broken.lock().unwrap().clone();
    assert!(broken.is_empty(), "{} wrong state(s), the first: {:?}", broken.len(), broken.first());
    assert_eq!(bucket.paths().await, published_paths(&simple_manifest));
    // The old bundle's files went only once the new manifest was in place.
    let log = bucket.log.lock().unwrap().clone();
    let switch = log.iter().rposition(|op| op == "put manifest.json").unwrap();
    let old_only = published_paths(&ranks_manifest).difference(&published_paths(&simple_manifest)).count();
    assert_eq!(replaced.deleted, old_only);
    assert_eq!(log[switch + 1..].len(), old_only, "{:?}", &log[switch + 1..]);
    assert!(log[switch + 1..].iter().all(|op| op.starts_with("delete ")), "{log:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_publish_s_files_are_deleted_by_the_next_one_without_replace() {
    let (_dir, ranks, ranks_manifest, simple, simple_manifest) = two_bundles();
    let bucket = Watched::default();
    // What a publish of ranks stopped before its manifest leaves: some of its files.
    let stopped: Vec<String> = published_paths(&ranks_manifest)
        .into_iter()
        .filter(|p| p != "manifest.json" && !published_paths(&simple_manifest).contains(p))
        .collect();
    assert!(stopped.iter().any(|p| p.starts_with("blobs/packs/")), "{stopped:?}");
    for path in &stopped {
        bucket.inner.put(&Watched::key(path), std::fs::read(ranks.join(path)).unwrap().into()).await.unwrap();
    }
    // Objects no bundle writes, beside and under the prefix: never touched.
    let unrelated = ["CNAME", "notes/blobs.txt", "blobs/README.md", "tables/notes.txt"];
    for path in unrelated {
        bucket.inner.put(&Watched::key(path), "keep me".into()).await.unwrap();
    }
    let elsewhere = StorePath::from(format!("runs/b/{}", stopped[0]));
    bucket.inner.put(&elsewhere, "another prefix".into()).await.unwrap();

    let summary = {
        let bucket = bucket.clone();
        tokio::task::spawn_blocking(move || publish_into(&bucket, &simple, false)).await.unwrap()
    };
    assert_eq!((summary.deleted, summary.leftovers), (stopped.len(), stopped.len()));
    let mut expected = published_paths(&simple_manifest);
    expected.extend(unrelated.iter().map(|p| p.to_string()));
    assert_eq!(bucket.paths().await, expected);
    assert!(bucket.inner.head(&elsewhere).await.is_ok(), "an object of another prefix was deleted");
    let broken = bucket.broken.lock().unwrap().clone();
    assert!(broken.is_empty(), "{broken:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_republish_puts_a_corrupted_object_right() {
    let (_dir, bundle, manifest) = build(&fixture("torch-2.15/simple"));
    let bucket = Watched::default();
    let publish_again = || {
        let (bucket, bundle) = (bucket.clone(), bundle.clone());
        tokio::task::spawn_blocking(move || publish_into(&bucket, &bundle, false))
    };
    publish_again().await.unwrap();
    // A pack and the index, each with one bit flipped: same size, headers and metadata.
    let index = manifest.files.iter().find(|f| f.path.starts_with("index/")).unwrap().path.clone();
    let corrupted = [manifest.blobs.packs[0].path.clone(), index];
    for path in &corrupted {
        let key = Watched::key(path);
        let got = bucket.inner.get(&key).await.unwrap();
        let attributes = got.attributes.clone();
        let mut bytes = got.bytes().await.unwrap().to_vec();
        bytes[0] ^= 1;
        bucket.inner.put_opts(&key, bytes.into(), attributes.into()).await.unwrap();
    }
    let again = publish_again().await.unwrap();
    assert_eq!(again.uploaded, corrupted.len(), "the corrupted objects were not put again");
    for path in &corrupted {
        assert_eq!(bucket.bytes(path).await.unwrap(), std::fs::read(bundle.join(path)).unwrap(), "{path}");
    }
}

#[test]
fn every_file_a_real_bundle_writes_has_a_bundle_s_shape() {
    // Shapes decide what a publish may delete as a leftover: a file of a real bundle outside
    // them would be left behind for good.
    let (_dir, _bundle, manifest) = build(&fixture("torch-2.15/ranks_shifted"));
    for path in published_paths(&manifest).iter().filter(|p| *p != "manifest.json") {
        assert!(publish::is_bundle_shaped(path), "{path}");
    }
}
