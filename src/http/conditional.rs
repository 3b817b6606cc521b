//! Conditional and partial `GET`s of a file whose length and entity tag are known, answered as
//! static servers answer them: `If-None-Match` naming the tag gets a 304, one `Range: bytes=`
//! range a 206 (or a 416 when it starts past the end). Several ranges in one request get the
//! whole file, which HTTP allows and no viewer minds; so does an `If-Range` naming another tag.

use hyper::header::{self, HeaderMap, HeaderValue};

use super::{Body, Response, StatusCode, full};

/// How to answer a request for a file.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// 200 with the whole file.
    Whole,
    /// 304: the client holds these bytes already.
    NotModified,
    /// 206 with `len` bytes from `start`.
    Part { start: u64, len: u64 },
    /// 416: the range lies past the end.
    Unsatisfiable,
}

/// How to answer `headers`' request for a file of `len` bytes tagged `etag` (quoted, e.g. `"abc"`).
pub fn plan(headers: &HeaderMap, etag: &str, len: u64) -> Answer {
    if let Some(tags) = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) {
        // A GET's If-None-Match compares weakly: `W/"x"` matches `"x"`.
        let matches = tags.split(',').map(str::trim).any(|tag| tag == "*" || tag.trim_start_matches("W/") == etag);
        if matches {
            return Answer::NotModified;
        }
    }
    let Some(range) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return Answer::Whole;
    };
    // If-Range compares strongly: an old tag, or a date, gets the whole file.
    if headers.get(header::IF_RANGE).is_some_and(|tag| tag.as_bytes() != etag.as_bytes()) {
        return Answer::Whole;
    }
    match single_range(range, len) {
        Some(Some((start, end))) => Answer::Part { start, len: end - start + 1 },
        Some(None) => Answer::Unsatisfiable,
        None => Answer::Whole,
    }
}

/// The inclusive byte range that `value` asks of a file of `len` bytes: `None` to ignore it (not
/// one well-formed bytes range), `Some(None)` when it is unsatisfiable.
fn single_range(value: &str, len: u64) -> Option<Option<(u64, u64)>> {
    let spec = value.trim().strip_prefix("bytes=")?.trim();
    if spec.contains(',') {
        return None;
    }
    let (first, last) = spec.split_once('-')?;
    let number = |text: &str| -> Option<u64> {
        let text = text.trim();
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
    };
    if first.trim().is_empty() {
        // The last `suffix` bytes.
        let suffix = number(last)?;
        return Some((suffix > 0 && len > 0).then(|| (len - suffix.min(len), len - 1)));
    }
    let start = number(first)?;
    let end = match last.trim() {
        "" => u64::MAX,
        _ => number(last)?,
    };
    if end < start {
        return None;
    }
    Some((start < len).then(|| (start, end.min(len - 1))))
}

/// Headers every file answer carries: its tag, and that ranges are served.
pub fn add_file_headers(headers: &mut HeaderMap, etag: &str) {
    if let Ok(value) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
}

/// A 304 for a file tagged `etag`.
pub fn not_modified(etag: &str) -> Response<Body> {
    let mut response = Response::new(full(bytes::Bytes::new()));
    *response.status_mut() = StatusCode::NOT_MODIFIED;
    add_file_headers(response.headers_mut(), etag);
    response
}

/// A 416 for a file of `len` bytes.
pub fn unsatisfiable(len: u64) -> Response<Body> {
    let mut response = super::text(416, "refused: the range lies past the end of the file\n");
    if let Ok(value) = HeaderValue::from_str(&format!("bytes */{len}")) {
        response.headers_mut().insert(header::CONTENT_RANGE, value);
    }
    response
}

/// Makes `response` (whose body holds `part` bytes from `start`) a 206 of a file of `len` bytes.
pub fn mark_partial(response: &mut Response<Body>, start: u64, part: u64, len: u64) {
    *response.status_mut() = StatusCode::PARTIAL_CONTENT;
    let range = format!("bytes {start}-{}/{len}", start + part - 1);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_RANGE, HeaderValue::from_str(&range).expect("digits and ASCII"));
    headers.insert(header::CONTENT_LENGTH, part.into());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        pairs.iter().map(|(name, value)| (header::HeaderName::from_static(name), value.parse().unwrap())).collect()
    }

    #[test]
    fn ranges_as_static_servers_read_them() {
        let plan_of = |range: &str| plan(&headers(&[("range", range)]), "\"t\"", 100);
        assert_eq!(plan_of("bytes=0-9"), Answer::Part { start: 0, len: 10 });
        assert_eq!(plan_of("bytes=90-"), Answer::Part { start: 90, len: 10 });
        assert_eq!(plan_of("bytes=90-500"), Answer::Part { start: 90, len: 10 });
        assert_eq!(plan_of("bytes=-5"), Answer::Part { start: 95, len: 5 });
        assert_eq!(plan_of("bytes=-500"), Answer::Part { start: 0, len: 100 });
        assert_eq!(plan_of("bytes=100-"), Answer::Unsatisfiable);
        assert_eq!(plan_of("bytes=-0"), Answer::Unsatisfiable);
        for ignored in ["bytes=0-1,5-6", "bytes=9-1", "items=0-1", "bytes=a-b", "bytes=-", "bytes=+1-2"] {
            assert_eq!(plan_of(ignored), Answer::Whole, "{ignored}");
        }
        let stale = headers(&[("range", "bytes=0-9"), ("if-range", "\"old\"")]);
        assert_eq!(plan(&stale, "\"t\"", 100), Answer::Whole);
        let fresh = headers(&[("range", "bytes=0-9"), ("if-range", "\"t\"")]);
        assert_eq!(plan(&fresh, "\"t\"", 100), Answer::Part { start: 0, len: 10 });
        assert_eq!(plan(&headers(&[("range", "bytes=0-")]), "\"t\"", 0), Answer::Unsatisfiable);
    }

    #[test]
    fn if_none_match_names_the_tag() {
        let plan_of = |tags: &str| plan(&headers(&[("if-none-match", tags), ("range", "bytes=0-1")]), "\"t\"", 9);
        for matching in ["\"t\"", "W/\"t\"", "\"x\", \"t\"", "*"] {
            assert_eq!(plan_of(matching), Answer::NotModified, "{matching}");
        }
        assert_eq!(plan_of("\"x\""), Answer::Part { start: 0, len: 2 }, "another tag: the range");
    }
}
