//! Where a bundle keeps its files: every path is relative to the bundle root, `/`-separated.

use crate::registry::{self, Scope};

pub const MANIFEST: &str = "manifest.json";
/// The manifest without its file lists and hashes, zstd-compressed ([`crate::schema::LiteManifest`]):
/// what a viewer reads first.
pub const MANIFEST_LITE: &str = "manifest.lite.json.zst";
pub const DIAGNOSTICS: &str = "diagnostics.jsonl";
pub const SCHEMA_DIR: &str = "schema";
pub const BLOB_INDEX_TEMPLATE: &str = "blobs/index/{prefix}.json.zst";
/// Directory of the cross-rank tables, under `tables/`. Never a stream id (those are `rank{N}`,
/// `rank{N}-{k}` and `log{k}`).
pub const CROSS_RANK_DIR: &str = "cross_rank";
/// The Chrome trace of the runtime estimates, across ranks.
pub const RUNTIME_ESTIMATES_TRACE: &str = "tables/cross_rank/runtime_estimates_trace.json.gz";

/// The empty file that tells GitHub Pages to serve every file as it is (no Jekyll), which
/// `publish` writes at the root of a directory: the one file a bundle may hold unlisted.
pub const NOJEKYLL: &str = ".nojekyll";

/// Every name a bundle writes at its root. Anything else beside them (a Pages directory's
/// `CNAME`, a `.git`) is not part of the bundle: readers never open it, `validate` passes over
/// it, and `--overwrite` leaves it where it is.
pub const ROOT_NAMES: [&str; 10] = [
    "blobs",
    "diagnostics.jsonl",
    "index",
    "index.html",
    "manifest.json",
    "manifest.lite.json.zst",
    "schema",
    "stacks",
    "tables",
    "viewer",
];

/// Whether a path (relative, `/`-separated) lies under one of the [`ROOT_NAMES`].
pub fn is_under_bundle_names(rel: &str) -> bool {
    ROOT_NAMES.contains(&rel.split('/').next().unwrap_or_default())
}

/// The shipped viewer's entry page, at the bundle root.
pub const VIEWER_ENTRY: &str = "index.html";
/// The directory holding the rest of the shipped viewer.
pub const VIEWER_DIR: &str = "viewer";

pub fn index(stream: &str) -> String {
    format!("index/{stream}.jsonl.zst")
}
pub fn stacks(stream: &str) -> String {
    format!("stacks/{stream}.json")
}
/// Part `k` of a table written in `count` parts (`stream` is `cross_rank` for the cross-rank
/// tables).
pub fn table_part(stream: &str, name: &str, k: usize, count: usize) -> String {
    if count == 1 { format!("tables/{stream}/{name}.json.zst") } else { format!("tables/{stream}/{name}.{k}.json.zst") }
}
pub fn chrome_trace(stream: &str) -> String {
    format!("tables/{stream}/chrome_trace.json.gz")
}
pub fn blob_index(shard: &str) -> String {
    BLOB_INDEX_TEMPLATE.replace("{prefix}", shard)
}

/// The longest shard prefix a blob id (32 hex digits) can name.
pub const MAX_SHARD_PREFIX_LEN: u32 = 8;

/// The shard file name part for a blob id (`all` when there is a single shard); `None` when the
/// prefix is longer than [`MAX_SHARD_PREFIX_LEN`] or the id is not hex.
pub fn shard_name(blob_id: &str, prefix_len: u32) -> Option<&str> {
    if prefix_len == 0 {
        return Some("all");
    }
    if prefix_len > MAX_SHARD_PREFIX_LEN {
        return None;
    }
    blob_id.get(..prefix_len as usize).filter(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// True for bundle paths that belong to the shipped viewer rather than to the bundle format.
pub fn is_viewer_path(path: &str) -> bool {
    path == VIEWER_ENTRY || path.strip_prefix(VIEWER_DIR).is_some_and(|rest| rest.starts_with('/'))
}

/// The schema (path in the bundle) of a bundle file, by where it lives.
pub fn schema_for(path: &str) -> Option<String> {
    let fixed = if path.starts_with("index/") && path.ends_with(".jsonl.zst") {
        "schema/index-row.schema.json"
    } else if let Some(rest) = path.strip_prefix("tables/").and_then(|r| r.strip_suffix(".json.zst")) {
        let (dir, name) = rest.rsplit_once('/')?;
        let scope = if dir == CROSS_RANK_DIR { Scope::CrossRank } else { Scope::Stream };
        return registry::find(scope, name).map(|t| format!("{SCHEMA_DIR}/{}", t.schema_file()));
    } else if path.starts_with("stacks/") {
        "schema/stack-table.schema.json"
    } else if path == DIAGNOSTICS {
        "schema/diagnostic.schema.json"
    } else if path.starts_with("blobs/index/") {
        "schema/blob-index-shard.schema.json"
    } else if path == MANIFEST {
        "schema/manifest.schema.json"
    } else if path == MANIFEST_LITE {
        "schema/manifest-lite.schema.json"
    } else {
        return None;
    };
    Some(fixed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_are_checked() {
        let id = "0123456789abcdef0123456789abcdef";
        assert_eq!(shard_name(id, 0), Some("all"));
        assert_eq!(shard_name(id, 2), Some("01"));
        assert_eq!(shard_name(id, 4_000_000_000), None);
        assert_eq!(shard_name("zz", 2), None);
        assert_eq!(shard_name("0", 2), None);
    }

    #[test]
    fn schemas_by_path() {
        assert_eq!(schema_for("tables/rank0/failures.json.zst").as_deref(), Some("schema/tables/failures.schema.json"));
        assert_eq!(
            schema_for("tables/cross_rank/compile_alignment.json.zst").as_deref(),
            Some("schema/cross_rank/compile_alignment.schema.json")
        );
        assert_eq!(schema_for("tables/rank0/compile_alignment.json.zst"), None, "a cross-rank table is not a stream's");
        assert_eq!(schema_for("blobs/packs/x.zst"), None);
    }
}
