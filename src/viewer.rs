//! The reference viewer (`viewers/reference-html/` plus its WebAssembly zstd decoder), embedded
//! at compile time by build.rs so that every bundle can ship it: `index.html` at the bundle root,
//! everything else under `viewer/`. Data only; [`crate::bundle`] writes it.

/// Every file of the viewer as (path relative to the bundle root, contents), sorted by path.
pub static FILES: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/viewer_files.rs"));

/// The viewer's entry page, at the bundle root.
pub const ENTRY: &str = "index.html";

/// The directory holding the rest of the viewer.
pub const DIR: &str = "viewer";

/// True for bundle paths that belong to the shipped viewer rather than to the bundle format
/// (they are not listed in the manifest).
pub fn is_viewer_path(path: &str) -> bool {
    path == ENTRY || path.strip_prefix(DIR).is_some_and(|rest| rest.starts_with('/'))
}
