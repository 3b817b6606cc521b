//! Which objects the proxy serves: only files a bundle's manifest lists. A request names a bundle
//! root (the sub-prefix before the bundle file's path); the proxy reads that root's
//! `manifest.json`, and serves a path under it only when the manifest is a tlparse bundle's and
//! lists the path (in `files` or `viewer`, or the manifest itself). An object that merely has a
//! bundle file's name (`private/config/manifest.json`, `other-app/index.html`) is refused.
//!
//! Listings are kept a few seconds, for a bounded number of roots: a viewer opening a bundle asks
//! for many of its files at once, and a bundle republished meanwhile is seen again soon after
//! (at once for a path the old listing lacked).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tlparse_bundle::paths;

/// How long a listing is used before the manifest is read again.
const FRESH_FOR: Duration = Duration::from_secs(5);
/// How old a listing must be before a path it lacks makes the proxy read the manifest again
/// (a bundle just republished), so that probes of unlisted paths cannot flood the upstream.
const RECHECK_AFTER: Duration = Duration::from_secs(1);
/// Bundle roots whose listings are kept.
const MAX_ROOTS: usize = 256;

/// The paths one bundle's manifest lets out.
#[derive(Debug)]
pub struct Listing {
    paths: HashSet<String>,
}

impl Listing {
    /// The listing of manifest bytes, or why they are not a tlparse bundle's manifest.
    pub fn parse(manifest: &[u8]) -> Result<Listing, &'static str> {
        #[derive(serde::Deserialize)]
        struct Lists {
            format: String,
            files: Vec<PathOnly>,
            #[serde(default)]
            viewer: Option<Vec<PathOnly>>,
        }
        #[derive(serde::Deserialize)]
        struct PathOnly {
            path: String,
        }
        let lists: Lists = serde_json::from_slice(manifest).map_err(|_| "not a bundle's manifest")?;
        if lists.format != "tlparse-bundle" {
            return Err("not a bundle's manifest");
        }
        let paths = (lists.files.into_iter().chain(lists.viewer.into_iter().flatten()))
            .map(|file| file.path)
            .chain([paths::MANIFEST.to_string()])
            .collect();
        Ok(Listing { paths })
    }

    pub fn lists(&self, rel: &str) -> bool {
        self.paths.contains(rel)
    }
}

/// What is known of a bundle root: its listing, or that it holds no bundle.
#[derive(Clone)]
pub enum Known {
    Bundle(Arc<Listing>),
    NoBundle,
}

/// Listings by bundle root, each with when it was read.
#[derive(Default)]
pub struct Listings {
    roots: Mutex<HashMap<String, (Instant, Known)>>,
}

impl Listings {
    /// What is known of `root`, if read recently enough for a request of `rel`.
    pub fn fresh(&self, root: &str, rel: &str) -> Option<Known> {
        let roots = self.roots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (read_at, known) = roots.get(root)?;
        let age = read_at.elapsed();
        let listed = matches!(known, Known::Bundle(listing) if listing.lists(rel));
        (age < FRESH_FOR && (listed || age < RECHECK_AFTER)).then(|| known.clone())
    }

    /// Records what `manifest` (the bytes of `root`'s manifest, or `None` when there is none)
    /// says about `root`, and returns it.
    pub fn record(&self, root: &str, manifest: Option<&Bytes>) -> Known {
        let known = match manifest.map(|bytes| Listing::parse(bytes)) {
            Some(Ok(listing)) => Known::Bundle(Arc::new(listing)),
            _ => Known::NoBundle,
        };
        let mut roots = self.roots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if roots.len() >= MAX_ROOTS && !roots.contains_key(root) {
            let oldest = roots.iter().min_by_key(|(_, (read_at, _))| *read_at).map(|(root, _)| root.clone());
            roots.remove(&oldest.expect("full, so not empty"));
        }
        roots.insert(root.to_owned(), (Instant::now(), known.clone()));
        known
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bundle_manifest_lists_and_only_its_paths() {
        let manifest = br#"{"format": "tlparse-bundle", "files": [{"path": "index/rank0.jsonl.zst"}],
                            "viewer": [{"path": "index.html"}]}"#;
        let listing = Listing::parse(manifest).unwrap();
        for listed in ["index/rank0.jsonl.zst", "index.html", "manifest.json"] {
            assert!(listing.lists(listed), "{listed}");
        }
        assert!(!listing.lists("index/rank1.jsonl.zst"));
        for other in [&br#"{"format": "other", "files": []}"#[..], b"{}", b"<html>", b"[]"] {
            assert!(Listing::parse(other).is_err());
        }
        let listings = Listings::default();
        assert!(listings.fresh("job", "index.html").is_none());
        listings.record("job", Some(&Bytes::from_static(manifest)));
        assert!(matches!(listings.fresh("job", "index.html"), Some(Known::Bundle(_))));
        listings.record("private/config", Some(&Bytes::from_static(b"{\"a\": 1}")));
        assert!(matches!(listings.fresh("private/config", "manifest.json"), Some(Known::NoBundle)));
    }
}
