//! The reference viewer (`viewers/reference-html/`), embedded
//! at compile time by build.rs so that every bundle can ship it: `index.html` at the bundle root,
//! everything else under `viewer/`. [`crate::bundle`] writes it and lists it in the manifest.

/// Every file of the viewer as (path relative to the bundle root, contents), sorted by path.
pub static FILES: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/viewer_files.rs"));

/// The viewer's entry page, at the bundle root.
pub const ENTRY: &str = tlparse_bundle::paths::VIEWER_ENTRY;

/// The directory holding the rest of the viewer.
pub const DIR: &str = tlparse_bundle::paths::VIEWER_DIR;

pub use tlparse_bundle::paths::is_viewer_path;

/// The manifest's `viewer` list: every embedded file with its size and blake3, sorted by path.
pub fn manifest_entries() -> Vec<tlparse_bundle::schema::ViewerFile> {
    FILES.iter().map(|(path, bytes)| tlparse_bundle::schema::ViewerFile::of(path, bytes)).collect()
}
