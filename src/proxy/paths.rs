//! Which request paths the proxy forwards: bundle files only, by the shapes the format gives
//! them, optionally under a few sub-prefix segments (one proxy, many bundles), every segment
//! from a small safe character set. Everything else is refused before the upstream is asked.

/// Most segments a sub-prefix may have (`/team/job-1/attempt-2/manifest.json` has 3).
pub const MAX_PREFIX_SEGMENTS: usize = 8;
/// Longest segment accepted: bundle names are short; long ones are only ever probes.
pub const MAX_SEGMENT_LEN: usize = 128;
/// Longest request path accepted.
pub const MAX_PATH_LEN: usize = 1024;

/// A request path the proxy forwards: its upstream key (the path without the leading `/`) and
/// what kind of bundle file it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFile {
    /// `/`-separated, relative to the upstream's prefix, e.g. `job-1/blobs/packs/<hex>.zst`.
    pub key: String,
    /// The bundle's root: the sub-prefix before the bundle file's path (`job-1`; empty for none).
    pub root: String,
    /// The path within the bundle, as its manifest lists it (`blobs/packs/<hex>.zst`).
    pub rel: String,
    /// Set for `blobs/packs/<32 hex>.zst`: the file's name is its content's blake3-128, so it
    /// never changes and can be cached and checked.
    pub pack_hash: Option<String>,
}

impl BundleFile {
    /// The key's last segment, which decides the content type.
    pub fn file_name(&self) -> &str {
        self.key.rsplit('/').next().unwrap_or_default()
    }
}

/// Why a path was refused (the proxy answers 404 for all of them, the reason goes in the body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not `/` then segments, or too long.
    Malformed,
    /// An empty segment (`//`, a trailing `/`: a directory listing), `.` or `..`.
    DirectoryOrDots,
    /// A character outside `[A-Za-z0-9._-]` (percent-escapes included), or a segment that starts
    /// with `.`.
    UnsafeCharacter,
    /// Safe, but not shaped like a bundle file.
    NotABundleFile,
}

impl Refused {
    pub fn reason(self) -> &'static str {
        match self {
            Refused::Malformed => "not a bundle file path",
            Refused::DirectoryOrDots => "no directory listings, `.` or `..`",
            Refused::UnsafeCharacter => "path segments may hold only A-Z a-z 0-9 . _ - and not start with .",
            Refused::NotABundleFile => "not a bundle file (manifest.json, index/, tables/, blobs/, ...)",
        }
    }
}

/// The bundle file a request target (`/path`, with an optional `?query` that is ignored) names.
pub fn bundle_file(target: &str) -> Result<BundleFile, Refused> {
    let path = target.split_once('?').map_or(target, |(path, _)| path);
    if path.len() > MAX_PATH_LEN {
        return Err(Refused::Malformed);
    }
    let Some(relative) = path.strip_prefix('/') else {
        return Err(Refused::Malformed);
    };
    let segments: Vec<&str> = relative.split('/').collect();
    for segment in &segments {
        check_segment(segment)?;
    }
    // The bundle part starts after the sub-prefix: the first split where the rest has a bundle
    // file's shape wins (the shapes never end in one another, so it is the only one that matters
    // for the content type and the pack check).
    let max_start = segments.len().saturating_sub(1).min(MAX_PREFIX_SEGMENTS);
    let start = (0..=max_start).find(|&start| is_bundle_shape(&segments[start..])).ok_or(Refused::NotABundleFile)?;
    let rel = segments[start..].join("/");
    let pack_hash = crate::media::pack_hash(&rel).map(str::to_owned);
    Ok(BundleFile { key: relative.to_owned(), root: segments[..start].join("/"), rel, pack_hash })
}

fn check_segment(segment: &str) -> Result<(), Refused> {
    match segment {
        "" | "." | ".." => return Err(Refused::DirectoryOrDots),
        _ => {}
    }
    let safe = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    // No leading dot: no `.git`, `.env` or other hidden files of whatever the upstream holds.
    if segment.len() > MAX_SEGMENT_LEN || segment.starts_with('.') || !segment.bytes().all(safe) {
        return Err(Refused::UnsafeCharacter);
    }
    Ok(())
}

/// Whether `parts` (a path relative to a bundle root, already checked segment by segment) is
/// where the format puts a file (docs/format.md, "Layout").
fn is_bundle_shape(parts: &[&str]) -> bool {
    match parts {
        ["manifest.json" | "manifest.lite.json.zst" | "index.html" | "diagnostics.jsonl"] => true,
        ["viewer", rest @ ..] => !rest.is_empty() && rest.len() <= 3,
        ["index", name] => stem(name, ".jsonl.zst"),
        ["stacks", name] => stem(name, ".json"),
        ["tables", _stream, name] => stem(name, ".json.zst") || stem(name, ".json.gz"),
        ["schema", name] | ["schema", _, name] => stem(name, ".schema.json"),
        ["blobs", "index", name] => stem(name, ".json.zst"),
        ["blobs", "packs", _] => crate::media::pack_hash(&parts.join("/")).is_some(),
        _ => false,
    }
}

/// `name` is a non-empty stem followed by `suffix`.
fn stem(name: &str, suffix: &str) -> bool {
    name.strip_suffix(suffix).is_some_and(|stem| !stem.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PACK: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn bundle_files_at_the_root_and_under_prefixes() {
        for path in [
            "manifest.json",
            "index.html",
            "diagnostics.jsonl",
            "viewer/app.js",
            "viewer/pages/compile.js",
            "index/rank0.jsonl.zst",
            "stacks/rank1-2.json",
            "tables/rank0/compile_directory.json.zst",
            "tables/rank0/chrome_trace.json.gz",
            "tables/cross_rank/runtime_estimates_trace.json.gz",
            "schema/manifest.schema.json",
            "schema/tables/guards.schema.json",
            "blobs/index/all.json.zst",
            "blobs/index/3f.json.zst",
        ] {
            for prefix in ["", "job-1/", "team/job_1/run.2/"] {
                let target = format!("/{prefix}{path}");
                let file = bundle_file(&target).unwrap_or_else(|e| panic!("{target}: {e:?}"));
                assert_eq!(file.key, format!("{prefix}{path}"));
                assert_eq!((file.root.as_str(), file.rel.as_str()), (prefix.trim_end_matches('/'), path));
                assert_eq!(file.pack_hash, None, "{target}");
            }
        }
        let pack = bundle_file(&format!("/job-1/blobs/packs/{PACK}.zst?x=1")).unwrap();
        assert_eq!(pack.key, format!("job-1/blobs/packs/{PACK}.zst"));
        assert_eq!(pack.pack_hash.as_deref(), Some(PACK));
        assert_eq!(pack.file_name(), format!("{PACK}.zst"));
    }

    #[test]
    fn refuses_listings_dots_escapes_and_other_files() {
        use Refused::*;
        for (target, why) in [
            ("", Malformed),
            ("manifest.json", Malformed),
            ("/", DirectoryOrDots),
            ("/job-1/", DirectoryOrDots),
            ("//manifest.json", DirectoryOrDots),
            ("/job-1//manifest.json", DirectoryOrDots),
            ("/../manifest.json", DirectoryOrDots),
            ("/job/./manifest.json", DirectoryOrDots),
            ("/%2e%2e/manifest.json", UnsafeCharacter),
            ("/job%2Fx/manifest.json", UnsafeCharacter),
            ("/.git/manifest.json", UnsafeCharacter),
            ("/job 1/manifest.json", UnsafeCharacter),
            ("/job\\1/manifest.json", UnsafeCharacter),
            ("/job:1/manifest.json", UnsafeCharacter),
            ("/jöb/manifest.json", UnsafeCharacter),
            ("/secret.txt", NotABundleFile),
            ("/job-1", NotABundleFile),
            ("/viewer", NotABundleFile),
            ("/index/rank0.jsonl", NotABundleFile),
            ("/index/.jsonl.zst", UnsafeCharacter),
            ("/tables/rank0/x.json", NotABundleFile),
            ("/blobs/packs/0123.zst", NotABundleFile),
            ("/blobs/packs/0123456789ABCDEF0123456789ABCDEF.zst", NotABundleFile),
            ("/a/b/c/d/e/f/g/h/i/manifest.json", NotABundleFile),
        ] {
            assert_eq!(bundle_file(target), Err(why), "{target:?}");
        }
        assert_eq!(bundle_file(&format!("/{}", "a/".repeat(600))), Err(Malformed));
        assert_eq!(bundle_file(&format!("/{}/manifest.json", "a".repeat(200))), Err(UnsafeCharacter));
        assert!(bundle_file("/a/b/c/d/e/f/g/h/manifest.json").is_ok(), "8 prefix segments are allowed");
    }
}
