//! `validate`'s check of the shipped viewer: the files the manifest lists under `viewer` are there
//! byte for byte, and nothing else sits at `index.html` or under `viewer/`. The viewer runs as a
//! page of the bundle's origin, so a replaced or added viewer file is as dangerous as it gets.

use std::collections::BTreeMap;

use super::Validator;
use crate::paths;
use crate::reader::Bundle;
use crate::schema::ViewerFile;
use crate::source::{BundlePath, ByteSource, Listed};

impl Validator {
    /// Listed viewer files are viewer paths, present and unchanged; no unlisted file at a viewer
    /// path; no viewer path among the format's `files`.
    /// `listing` is every entry of the bundle, where the source can list them.
    pub(super) fn viewer<S: ByteSource>(&mut self, bundle: &Bundle<S>, listing: Option<&[Listed]>) {
        let m = &bundle.manifest;
        for f in m.files.iter().filter(|f| paths::is_viewer_path(&f.path)) {
            self.problem(format!(
                "manifest.json: files lists {}, a viewer path; viewer files belong in `viewer`",
                f.path
            ));
        }
        let listed = self.viewer_listing(m.viewer.as_deref().unwrap_or_default());
        for entry in listed.values() {
            self.viewer_file(bundle, entry);
        }
        self.unlisted_viewer_files(listing.unwrap_or_default(), &listed, m.viewer.is_none());
    }

    /// The manifest's viewer entries by path, after reporting the ones that are no viewer path
    /// or are listed twice.
    fn viewer_listing<'m>(&mut self, entries: &'m [ViewerFile]) -> BTreeMap<&'m str, &'m ViewerFile> {
        let mut listed = BTreeMap::new();
        for entry in entries {
            if !paths::is_viewer_path(&entry.path) || BundlePath::new(&entry.path).is_err() {
                self.problem(format!("manifest.json: viewer lists {:?}, which is not a viewer path", entry.path));
            } else if listed.insert(entry.path.as_str(), entry).is_some() {
                self.problem(format!("manifest.json: viewer lists {} twice", entry.path));
            }
        }
        listed
    }

    /// One listed viewer file: present, with the recorded size and blake3.
    fn viewer_file<S: ByteSource>(&mut self, bundle: &Bundle<S>, entry: &ViewerFile) {
        match bundle.read(&entry.path) {
            Ok(bytes) => {
                if let Some(mismatch) = entry.mismatch(&bytes) {
                    self.problem(format!("{}: viewer file changed since the build: {mismatch}", entry.path));
                }
            }
            Err(e) => self.problem(format!("viewer file listed in manifest.json: {e}")),
        }
    }

    /// Files at viewer paths that the manifest does not list (where the source can list files).
    fn unlisted_viewer_files(&mut self, listing: &[Listed], listed: &BTreeMap<&str, &ViewerFile>, no_viewer: bool) {
        let why = if no_viewer { "the bundle ships no viewer (`viewer` is null)" } else { "not listed under `viewer`" };
        for item in listing {
            if let Listed::File(path) = item {
                if paths::is_viewer_path(path) && !listed.contains_key(path.as_str()) {
                    self.problem(format!("{path}: viewer file is not listed in manifest.json: {why}"));
                }
            }
        }
    }
}
