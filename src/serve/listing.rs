//! Which files `serve` hands out: `manifest.json`, the files its `files` lists and the viewer
//! files its `viewer` lists, each at a path the format gives a bundle file (under one of
//! [`paths::ROOT_NAMES`]). Nothing else in the folder goes out: a Pages site's `.git` and `CNAME`
//! stay private, and so does anything a hostile manifest names outside the bundle's own names.
//!
//! The manifest is re-read when it changes on disk (a rebuild while serving), and only then.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use tlparse_bundle::paths;
use tlparse_bundle::schema::ViewerFile;
use tlparse_bundle::source::{BundlePath, ByteSource, DirSource};

/// What a manifest lets out.
#[derive(Debug, Default)]
pub(super) struct Listing {
    /// Bundle files, `manifest.json` included.
    files: HashSet<String>,
    /// Viewer files, with the size and blake3 their bytes must have.
    viewer: HashMap<String, ViewerFile>,
}

/// What a path is to the manifest.
#[derive(Debug, PartialEq)]
pub(super) enum Listed<'a> {
    File,
    Viewer(&'a ViewerFile),
    Unlisted,
}

impl Listing {
    /// The listing of the manifest in `root`, or why there is none.
    pub(super) fn read(root: &Path) -> Result<Listing, String> {
        #[derive(serde::Deserialize)]
        struct Lists {
            format: String,
            files: Vec<PathOnly>,
            #[serde(default)]
            viewer: Option<Vec<ViewerFile>>,
        }
        #[derive(serde::Deserialize)]
        struct PathOnly {
            path: String,
        }
        let manifest = BundlePath::new(paths::MANIFEST).map_err(|e| e.to_string())?;
        let limit = tlparse_bundle::reader::Limits::default().manifest;
        let bytes = DirSource::new(root).read(&manifest, limit).map_err(|e| e.to_string())?;
        let lists: Lists = serde_json::from_slice(&bytes).map_err(|e| format!("manifest.json: {e}"))?;
        if lists.format != "tlparse-bundle" {
            return Err("manifest.json is not a tlparse-bundle manifest".into());
        }
        let is_bundle_path = |path: &str| BundlePath::new(path).is_ok() && paths::is_under_bundle_names(path);
        let mut files: HashSet<String> = lists
            .files
            .into_iter()
            .map(|file| file.path)
            .filter(|path| is_bundle_path(path) && !paths::is_viewer_path(path))
            .collect();
        files.insert(paths::MANIFEST.to_string());
        let viewer = (lists.viewer.into_iter().flatten())
            .filter(|file| is_bundle_path(&file.path) && paths::is_viewer_path(&file.path))
            .map(|file| (file.path.clone(), file))
            .collect();
        Ok(Listing { files, viewer })
    }

    /// What `rel` (a bundle path) is to the manifest.
    pub(super) fn get(&self, rel: &str) -> Listed<'_> {
        match self.viewer.get(rel) {
            Some(entry) => Listed::Viewer(entry),
            None if self.files.contains(rel) => Listed::File,
            None => Listed::Unlisted,
        }
    }

    /// Whether the manifest lists a viewer (its entry page).
    pub(super) fn has_viewer(&self) -> bool {
        self.viewer.contains_key(paths::VIEWER_ENTRY)
    }
}

/// The listing of the manifest now in a bundle directory, kept until the manifest changes.
pub(super) struct Listings {
    root: PathBuf,
    current: Mutex<Option<(Stamp, Arc<Listing>)>>,
}

/// What tells one manifest file from the next: a rebuild swaps in a new file.
type Stamp = (u64, Option<SystemTime>, u64);

impl Listings {
    pub(super) fn new(root: PathBuf, first: Listing) -> Listings {
        let current = stamp(&root).map(|stamp| (stamp, Arc::new(first)));
        Listings { root, current: Mutex::new(current) }
    }

    /// The listing of the manifest on disk now (a blocking call: it reads the disk).
    pub(super) fn current(&self) -> Result<Arc<Listing>, String> {
        let stamp = stamp(&self.root).ok_or("no manifest.json")?;
        let mut current = self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, listing)) = current.as_ref().filter(|(seen, _)| *seen == stamp) {
            return Ok(Arc::clone(listing));
        }
        let listing = Arc::new(Listing::read(&self.root)?);
        *current = Some((stamp, Arc::clone(&listing)));
        Ok(listing)
    }
}

fn stamp(root: &Path) -> Option<Stamp> {
    let metadata = std::fs::metadata(root.join(paths::MANIFEST)).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
    #[cfg(not(unix))]
    let inode = 0;
    Some((metadata.len(), metadata.modified().ok(), inode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_manifest_files_and_viewer_but_nothing_outside_the_bundle_names() {
        let dir = tempfile::tempdir().unwrap();
        let viewer = |path: &str| serde_json::json!({"path": path, "size": 0, "blake3": "00"});
        let manifest = serde_json::json!({
            "format": "tlparse-bundle",
            "files": [{"path": "index/rank0.jsonl.zst"}, {"path": ".git/config"}, {"path": "CNAME"},
                      {"path": "tables/../.git/config"}, {"path": "viewer/app.js"}],
            "viewer": [viewer("index.html"), viewer("viewer/app.js"), viewer("tables/x.json.zst")],
        });
        std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
        let listing = Listing::read(dir.path()).unwrap();
        assert_eq!(listing.get("index/rank0.jsonl.zst"), Listed::File);
        assert_eq!(listing.get("manifest.json"), Listed::File);
        assert!(matches!(listing.get("viewer/app.js"), Listed::Viewer(_)));
        assert!(listing.has_viewer());
        for unlisted in [".git/config", "CNAME", "tables/../.git/config", "tables/x.json.zst", "index/rank1.jsonl.zst"]
        {
            assert_eq!(listing.get(unlisted), Listed::Unlisted, "{unlisted}");
        }
        std::fs::write(dir.path().join("manifest.json"), r#"{"format": "other", "files": []}"#).unwrap();
        assert!(Listing::read(dir.path()).unwrap_err().contains("not a tlparse-bundle manifest"));
    }
}
