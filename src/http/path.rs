//! Request paths, decoded and normalized once for every handler.
//!
//! The normalized path starts with exactly one `/` (so `//evil.example/x` can never become a
//! protocol-relative URL in a redirect), has no empty, `.` or `..` segment, and keeps a trailing
//! `/` when the request had one.

use percent_encoding::percent_decode_str;

/// Why a path is refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum BadPath {
    /// Not `/`-rooted, not UTF-8 once decoded, or holding a NUL or backslash.
    Malformed,
    /// A `..` segment: no handler is asked to serve a path that climbs.
    Climbs,
}

impl BadPath {
    pub(crate) fn status(&self) -> u16 {
        match self {
            BadPath::Malformed => 400,
            BadPath::Climbs => 403,
        }
    }

    pub(crate) fn reason(&self) -> &'static str {
        match self {
            BadPath::Malformed => "refused: malformed path\n",
            BadPath::Climbs => "refused: `..` in the path\n",
        }
    }
}

/// The percent-decoded, normalized form of a request target's path (`raw` has no query).
/// `%2F` decodes to a separator like `/`, so `..%2F` is a `..` segment too.
pub(crate) fn normalize(raw: &str) -> Result<String, BadPath> {
    let rest = raw.strip_prefix('/').ok_or(BadPath::Malformed)?;
    let decoded = percent_decode_str(rest).decode_utf8().map_err(|_| BadPath::Malformed)?;
    if decoded.contains(['\0', '\\']) {
        return Err(BadPath::Malformed);
    }
    let mut segments = Vec::new();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(BadPath::Climbs),
            name => segments.push(name),
        }
    }
    let mut path = format!("/{}", segments.join("/"));
    if !segments.is_empty() && (decoded.ends_with('/') || decoded.ends_with("/.")) {
        path.push('/');
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_decoded_and_start_with_one_slash() {
        for (raw, expected) in [
            ("/", "/"),
            ("/manifest.json", "/manifest.json"),
            ("/viewer", "/viewer"),
            ("/viewer/", "/viewer/"),
            ("//viewer", "/viewer"),
            ("//evil.example/x", "/evil.example/x"),
            ("///a//b/./c/", "/a/b/c/"),
            ("/viewer/%61pp.js", "/viewer/app.js"),
            ("/viewer%2Fapp.js", "/viewer/app.js"),
            ("/%C3%BC", "/ü"),
        ] {
            assert_eq!(normalize(raw).as_deref(), Ok(expected), "{raw}");
        }
        for climb in ["/..", "/../x", "/a/%2e%2e/x", "/a/..%2Fx", "/%2E%2E"] {
            assert_eq!(normalize(climb), Err(BadPath::Climbs), "{climb}");
        }
        for bad in ["", "*", "x", "/%ff", "/a%00b", "/a%5Cb", "/a\\b"] {
            assert_eq!(normalize(bad), Err(BadPath::Malformed), "{bad}");
        }
    }
}
