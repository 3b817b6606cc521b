//! What a bundle file is, for the web: its `Content-Type` and `Cache-Control`, by path. One table,
//! shared by every server and publisher of bundles, so they all agree.
//!
//! Compressed files keep their own type and never get a `Content-Encoding`: the viewer
//! decompresses `.zst` and `.gz` itself, and a `Content-Encoding: gzip` would make a host (GCS)
//! decompress on the fly, or a browser hand the viewer bytes already decompressed, which it
//! cannot read.

/// The content type of a bundle or viewer file, by extension (case-insensitive).
pub fn content_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "jsonl" => "application/jsonl",
        "txt" => "text/plain; charset=utf-8",
        "md" => "text/markdown; charset=utf-8",
        // WebAssembly.instantiateStreaming refuses any other type.
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "zst" => "application/zstd",
        "gz" => "application/gzip",
        _ => "application/octet-stream",
    }
}

/// The content type of a file that is not the viewer's: never one a browser runs (HTML,
/// JavaScript, SVG), since only the checked viewer may run as a page of the bundle's origin. The
/// format's own files are JSON or compressed, and keep their type.
pub fn data_content_type(path: &str) -> &'static str {
    match content_type(path) {
        "text/html; charset=utf-8" | "text/javascript; charset=utf-8" | "image/svg+xml" => "text/plain; charset=utf-8",
        other => other,
    }
}

/// `Cache-Control` of a file named by its own hash: its bytes can never change under that name.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of every other file: cache, but ask the host before each use. A bundle is
/// read as one whole: a table or index cached for minutes while the manifest is replaced would
/// give a viewer the new manifest with the old bundle's table (or the reverse), two bundles mixed
/// into one wrong answer. Revalidating costs a 304 round trip; the packs, the bulk of the bytes,
/// are immutable and cost nothing.
pub const REVALIDATE: &str = "no-cache";

/// The `Cache-Control` of a bundle file: [`IMMUTABLE`] for the hash-named packs
/// (`blobs/packs/<32 hex>.zst`), [`REVALIDATE`] for everything else.
pub fn cache_control(path: &str) -> &'static str {
    if is_hash_named(path) { IMMUTABLE } else { REVALIDATE }
}

/// Whether `path` is a pack, `blobs/packs/<32 lowercase hex digits>.zst`: named by the blake3 of
/// its bytes, so the name and size tell it apart from any other file.
pub fn is_hash_named(path: &str) -> bool {
    pack_hash(path).is_some()
}

/// The 32 hex digits (the blake3-128 of its bytes) of a pack path, `blobs/packs/<hex>.zst`.
pub fn pack_hash(path: &str) -> Option<&str> {
    let hex = path.strip_prefix("blobs/packs/")?.strip_suffix(".zst")?;
    (hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))).then_some(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_by_extension() {
        for (name, expected) in [
            ("index.html", "text/html; charset=utf-8"),
            ("viewer/app.mjs", "text/javascript; charset=utf-8"),
            ("viewer/fzstd.js", "text/javascript; charset=utf-8"),
            ("viewer/STYLE.CSS", "text/css; charset=utf-8"),
            ("manifest.json", "application/json"),
            ("diagnostics.jsonl", "application/jsonl"),
            ("tables/log0/failures.json.zst", "application/zstd"),
            ("traces/log0.json.gz", "application/gzip"),
            ("LICENSE", "application/octet-stream"),
            ("viewer.d/noextension", "application/octet-stream"),
        ] {
            assert_eq!(content_type(name), expected, "{name}");
        }
    }

    #[test]
    fn data_files_never_get_a_type_a_browser_runs() {
        for name in ["index.html", "tables/x.js", "a.mjs", "pic.svg"] {
            assert_eq!(data_content_type(name), "text/plain; charset=utf-8", "{name}");
        }
        assert_eq!(data_content_type("manifest.json"), "application/json");
        assert_eq!(data_content_type("blobs/packs/0123456789abcdef0123456789abcdef.zst"), "application/zstd");
    }

    #[test]
    fn only_hash_named_packs_are_immutable() {
        assert_eq!(cache_control("blobs/packs/0123456789abcdef0123456789abcdef.zst"), IMMUTABLE);
        for name in [
            "manifest.json",
            "index.html",
            "blobs/index/all.json.zst",
            "blobs/packs/0123456789ABCDEF0123456789ABCDEF.zst",
            "blobs/packs/0123456789abcdef.zst",
            "x/blobs/packs/0123456789abcdef0123456789abcdef.zst",
            "blobs/packs/0123456789abcdef0123456789abcdef.zst.tmp",
        ] {
            assert_eq!(cache_control(name), REVALIDATE, "{name}");
        }
    }
}
