//! Who may talk to the server: the `Host` check that defeats DNS rebinding, and the origin
//! allowlist behind CORS.
//!
//! A trace holds the model's code, so a page may read what the server sends only when it is the
//! server's own origin or one the user named. The `Host` header proves the browser thinks it is
//! talking to this server by a loopback name (or a name the operator gave), not to an attacker's
//! domain that was re-pointed at 127.0.0.1.

use hyper::HeaderMap;
use hyper::header::{self, HeaderValue};

/// The methods a cross-origin page may use.
const ALLOWED_METHODS: &str = "GET, HEAD";
/// The request headers a cross-origin page may send: those a reader of a static bundle needs.
const ALLOWED_REQUEST_HEADERS: &str = "Range, If-None-Match, If-Modified-Since, If-Range, Authorization";
/// The response headers a cross-origin page may read besides the CORS-safelisted ones.
const EXPOSED_HEADERS: &str = "Content-Length, Content-Range, ETag, Accept-Ranges, Content-Type, WWW-Authenticate";
/// How long a browser may cache a preflight answer: long enough that a viewer loading a bundle
/// preflights once, short enough that a changed allowlist takes effect soon.
const PREFLIGHT_MAX_AGE_SECONDS: &str = "600";

/// Which pages may talk to the server.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// Host names (`name` or `name:port`, as the `Host` header carries them) accepted besides the
    /// loopback ones: for a server reached through a name, e.g. behind a reverse proxy.
    pub extra_hosts: Vec<String>,
    /// The other origins whose pages may read responses.
    pub origins: AllowedOrigins,
}

/// The origins allowed to read responses cross-origin: exact `scheme://host[:port]` matches, or
/// every origin when `*` was given literally.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedOrigins {
    any: bool,
    exact: Vec<String>,
}

impl AllowedOrigins {
    /// Parses command-line origins: `*`, or `http(s)://host[:port]` with at most a trailing `/`.
    /// Each is normalized as a browser serializes an `Origin` (lower case, no default port).
    pub fn parse<S: AsRef<str>>(origins: &[S]) -> Result<AllowedOrigins, String> {
        let mut allowed = AllowedOrigins::default();
        for origin in origins {
            let origin = origin.as_ref();
            if origin == "*" {
                allowed.any = true;
            } else {
                let normalized = normalize_origin(origin)?;
                if !allowed.exact.contains(&normalized) {
                    allowed.exact.push(normalized);
                }
            }
        }
        Ok(allowed)
    }

    /// Whether no origin besides the server's own is allowed.
    pub fn is_empty(&self) -> bool {
        !self.any && self.exact.is_empty()
    }

    /// Whether `*` was given: every origin may read, and is told so with `*`.
    pub fn allows_any(&self) -> bool {
        self.any
    }

    /// Whether a page of `origin` (an `Origin` header's value) may read responses.
    pub fn allows(&self, origin: &str) -> bool {
        self.any || self.exact.iter().any(|allowed| allowed == origin)
    }

    /// The allowed origins as given after normalization (`*` first when given).
    pub fn to_strings(&self) -> Vec<String> {
        self.any.then(|| "*".to_string()).into_iter().chain(self.exact.iter().cloned()).collect()
    }
}

/// `origin` as a browser serializes it, or why it is not an origin.
fn normalize_origin(origin: &str) -> Result<String, String> {
    let why = |reason: &str| {
        format!("{origin:?} is not an origin ({reason}); give scheme://host[:port], e.g. https://example.github.io")
    };
    let (scheme, rest) = origin.split_once("://").ok_or_else(|| why("no scheme://"))?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => return Err(why("the scheme must be http or https")),
    };
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains(['/', '?', '#', '@']) {
        return Err(why("an origin has no path, query, fragment or user"));
    }
    let (host, port) = split_host_port(authority).ok_or_else(|| why("bad host or port"))?;
    let host = host.to_ascii_lowercase();
    match port {
        Some(port) if port != default_port => Ok(format!("{scheme}://{host}:{port}")),
        _ => Ok(format!("{scheme}://{host}")),
    }
}

/// `host[:port]` split and checked: a DNS name or IPv4 address, or a bracketed IPv6 address;
/// the port, when there, 1 to 65535 in plain digits.
fn split_host_port(authority: &str) -> Option<(&str, Option<&str>)> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        let inner = &host[1..host.len() - 1];
        if inner.is_empty() || !inner.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.') {
            return None;
        }
        match rest {
            "" => (host, None),
            _ => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let name_ok = host.starts_with('[')
        || (!host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-'));
    let port_ok = port.is_none_or(|p| {
        !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|n| n > 0)
    });
    (name_ok && port_ok).then_some((host, port))
}

/// Why a request is refused before any handler sees it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No `Host` header, or an empty one: nothing proves which server the client means.
    NoHost,
    /// More than one `Host` header.
    ManyHosts,
    /// A `Host` that is not this server's: a DNS-rebinding page, or a misdirected client.
    ForeignHost(String),
    /// An `Origin` that is neither the server's own nor allowed.
    ForeignOrigin(String),
}

impl Refusal {
    pub(crate) fn status(&self) -> u16 {
        match self {
            Refusal::NoHost | Refusal::ManyHosts => 400,
            Refusal::ForeignHost(_) => 421,
            Refusal::ForeignOrigin(_) => 403,
        }
    }

    /// A plain-text reason. Header values are attacker-chosen: shown escaped and cut short.
    pub(crate) fn reason(&self) -> String {
        match self {
            Refusal::NoHost => "refused: no Host header, or an empty one\n".to_string(),
            Refusal::ManyHosts => "refused: more than one Host header\n".to_string(),
            Refusal::ForeignHost(host) => {
                format!("refused: Host {} is not this server; use its 127.0.0.1 URL\n", quoted(host))
            }
            Refusal::ForeignOrigin(origin) => format!(
                "refused: pages of origin {} may not read this server (see serve --allow-origin)\n",
                quoted(origin)
            ),
        }
    }
}

/// A header value for a message: debug-escaped, at most 100 characters.
fn quoted(value: &str) -> String {
    let short: String = value.chars().take(100).collect();
    format!("{short:?}")
}

/// What the access check concluded about an acceptable request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reader {
    /// No `Origin`, or the server's own: answered without CORS headers.
    SameOrigin,
    /// An allowed other origin: answered with CORS headers for it.
    CrossOrigin(String),
}

impl Access {
    /// Checks `Host` (and the authority of an absolute-form target) against this server on
    /// `port`, then `Origin` against the server's own and the allowlist.
    pub(crate) fn check(&self, port: u16, authority: Option<&str>, headers: &HeaderMap) -> Result<Reader, Refusal> {
        let mut hosts = headers.get_all(header::HOST).iter();
        let host = hosts.next().ok_or(Refusal::NoHost)?;
        // Two Hosts name two servers: which one a proxy in front read is anyone's guess.
        if hosts.next().is_some() {
            return Err(Refusal::ManyHosts);
        }
        if host.is_empty() {
            return Err(Refusal::NoHost);
        }
        let host = host.to_str().map_err(|_| Refusal::ForeignHost(String::from_utf8_lossy(host.as_bytes()).into()))?;
        let host = host.to_ascii_lowercase();
        if !self.is_own_host(port, &host) {
            return Err(Refusal::ForeignHost(host));
        }
        if let Some(authority) = authority.map(str::to_ascii_lowercase) {
            if !self.is_own_host(port, &authority) {
                return Err(Refusal::ForeignHost(authority));
            }
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(Reader::SameOrigin);
        };
        let origin = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        // The scheme a page of this server has: plain HTTP on loopback, possibly HTTPS behind a
        // name (TLS ends at the reverse proxy in front).
        let own =
            origin == format!("http://{host}") || (origin == format!("https://{host}") && self.is_extra_host(&host));
        if own {
            Ok(Reader::SameOrigin)
        } else if self.origins.allows(&origin) {
            Ok(Reader::CrossOrigin(origin))
        } else {
            Err(Refusal::ForeignOrigin(origin))
        }
    }

    fn is_own_host(&self, port: u16, host: &str) -> bool {
        let loopback = ["127.0.0.1", "localhost", "[::1]"];
        let matches_loopback = loopback.iter().any(|name| {
            host.strip_prefix(name).is_some_and(|rest| rest == format!(":{port}") || (rest.is_empty() && port == 80))
        });
        matches_loopback || self.is_extra_host(host)
    }

    fn is_extra_host(&self, host: &str) -> bool {
        self.extra_hosts.iter().any(|extra| extra.eq_ignore_ascii_case(host))
    }
}

/// Adds to a response the headers every answer carries, and CORS for an allowed other origin.
pub(crate) fn add_access_headers(headers: &mut HeaderMap, reader: &Reader, any_origin: bool) {
    // Whether a response is readable depends on Origin: caches must keep them apart.
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // No other origin may embed a response (`<script src>`, `<img>`) and reach it through a side
    // channel; CORS reads by allowed origins are unaffected.
    headers.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    if let Reader::CrossOrigin(origin) = reader {
        let value = if any_origin { HeaderValue::from_static("*") } else { header_value(origin) };
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
        headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED_HEADERS));
    }
}

/// The extra headers of a successful preflight answer.
pub(crate) fn add_preflight_headers(headers: &mut HeaderMap, request_headers: &HeaderMap) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(ALLOWED_METHODS));
    headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static(ALLOWED_REQUEST_HEADERS));
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(PREFLIGHT_MAX_AGE_SECONDS));
    // Chrome asks before a public page reaches a loopback server (Private Network Access).
    let private_network = request_headers
        .get("access-control-request-private-network")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true"));
    if private_network {
        headers.insert("access-control-allow-private-network", HeaderValue::from_static("true"));
    }
}

/// Whether a preflight asks for a method the server allows.
pub(crate) fn preflight_method_allowed(request_headers: &HeaderMap) -> bool {
    request_headers
        .get(header::ACCESS_CONTROL_REQUEST_METHOD)
        .is_some_and(|m| m.as_bytes() == b"GET" || m.as_bytes() == b"HEAD")
}

/// An origin that passed the allowlist is one of its exact strings, so always a valid value.
fn header_value(origin: &str) -> HeaderValue {
    HeaderValue::from_str(origin).unwrap_or_else(|_| HeaderValue::from_static("null"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn origins_are_validated_and_normalized() {
        let parsed =
            AllowedOrigins::parse(&["HTTPS://Example.GitHub.io/", "http://127.0.0.1:8080", "https://x.dev:443"])
                .unwrap();
        assert_eq!(parsed.to_strings(), ["https://example.github.io", "http://127.0.0.1:8080", "https://x.dev"]);
        assert!(parsed.allows("http://127.0.0.1:8080"));
        assert!(!parsed.allows("http://127.0.0.1:8081"));
        assert!(!parsed.allows("https://example.github.io.evil.example"));
        assert!(AllowedOrigins::parse(&["http://[::1]:9000"]).unwrap().allows("http://[::1]:9000"));
        for bad in [
            "example.com",
            "ftp://example.com",
            "https://example.com/path",
            "https://user@example.com",
            "https://example.com:0",
            "https://example.com:99999",
            "https://exa mple.com",
            "https://",
            "null",
            "https://*.example.com",
        ] {
            assert!(AllowedOrigins::parse(&[bad]).is_err(), "{bad}");
        }
        let any = AllowedOrigins::parse(&["*"]).unwrap();
        assert!(any.allows("https://anything.example") && !any.is_empty());
        assert!(AllowedOrigins::default().is_empty());
    }

    #[test]
    fn host_must_name_this_server() {
        let access = Access { extra_hosts: vec!["bundles.example.com".into()], ..Access::default() };
        for host in ["127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "[::1]:8000", "bundles.example.com"] {
            assert_eq!(access.check(8000, None, &headers(&[("host", host)])), Ok(Reader::SameOrigin), "{host}");
        }
        for host in
            ["evil.example:8000", "127.0.0.1:8001", "127.0.0.1", "localhost.evil.example:8000", "127.0.0.1:8000.evil"]
        {
            assert_eq!(
                access.check(8000, None, &headers(&[("host", host)])),
                Err(Refusal::ForeignHost(host.to_ascii_lowercase())),
                "{host}"
            );
        }
        assert_eq!(access.check(8000, None, &HeaderMap::new()), Err(Refusal::NoHost));
        assert_eq!(access.check(8000, None, &headers(&[("host", "")])), Err(Refusal::NoHost));
        let mut twice = headers(&[("host", "127.0.0.1:8000")]);
        twice.append(header::HOST, HeaderValue::from_static("evil.example"));
        assert_eq!(access.check(8000, None, &twice), Err(Refusal::ManyHosts));
        let absolute = access.check(8000, Some("evil.example"), &headers(&[("host", "127.0.0.1:8000")]));
        assert_eq!(absolute, Err(Refusal::ForeignHost("evil.example".into())));
        assert_eq!(access.check(80, None, &headers(&[("host", "127.0.0.1")])), Ok(Reader::SameOrigin));
    }

    #[test]
    fn origin_must_be_own_or_allowed() {
        let origins = AllowedOrigins::parse(&["https://viewer.example"]).unwrap();
        let access = Access { extra_hosts: vec!["bundles.example.com".into()], origins };
        let check =
            |host: &str, origin: &str| access.check(8000, None, &headers(&[("host", host), ("origin", origin)]));
        assert_eq!(check("127.0.0.1:8000", "http://127.0.0.1:8000"), Ok(Reader::SameOrigin));
        assert_eq!(check("bundles.example.com", "https://bundles.example.com"), Ok(Reader::SameOrigin));
        assert_eq!(
            check("127.0.0.1:8000", "https://viewer.example"),
            Ok(Reader::CrossOrigin("https://viewer.example".into()))
        );
        for foreign in
            ["http://127.0.0.1:8001", "https://127.0.0.1:8000", "null", "https://evil.example", "http://viewer.example"]
        {
            assert_eq!(check("127.0.0.1:8000", foreign), Err(Refusal::ForeignOrigin(foreign.into())), "{foreign}");
        }
    }

    #[test]
    fn cors_headers_only_for_an_allowed_other_origin() {
        let mut same = HeaderMap::new();
        add_access_headers(&mut same, &Reader::SameOrigin, false);
        assert!(same.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
        assert_eq!(same.get(header::VARY).unwrap(), "Origin");
        let mut cross = HeaderMap::new();
        add_access_headers(&mut cross, &Reader::CrossOrigin("https://viewer.example".into()), false);
        assert_eq!(cross.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).unwrap(), "https://viewer.example");
        let exposed = cross.get(header::ACCESS_CONTROL_EXPOSE_HEADERS).unwrap().to_str().unwrap();
        // WWW-Authenticate: a viewer tells "needs a token" (the proxy's 401) from other refusals.
        assert!(exposed.contains("Content-Length") && exposed.contains("WWW-Authenticate"), "{exposed}");
        assert!(cross.get(header::ACCESS_CONTROL_ALLOW_CREDENTIALS).is_none());

        let mut preflight = HeaderMap::new();
        add_preflight_headers(&mut preflight, &headers(&[("access-control-request-private-network", "true")]));
        assert_eq!(preflight.get("access-control-allow-private-network").unwrap(), "true");
        assert!(preflight_method_allowed(&headers(&[("access-control-request-method", "GET")])));
        assert!(!preflight_method_allowed(&headers(&[("access-control-request-method", "PUT")])));
    }
}
