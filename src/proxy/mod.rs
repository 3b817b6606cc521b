//! `tlparse-build proxy`: serves the bundle files of an upstream (object storage or an HTTP base
//! URL) with CORS for an allowlist of viewer origins, so a viewer on another origin can read
//! bundles that live where no CORS is configured.
//!
//! The proxy forwards only paths shaped like bundle files ([`paths`]) that the manifest of the
//! bundle they name lists ([`listing`]), never runs anything of the bucket on its own origin
//! (every response is `Content-Security-Policy: sandbox`, HTML and JavaScript go out as plain
//! text), bounds every upstream fetch ([`upstream`]) and keeps recent packs, whose names are
//! their hash, in a byte-bounded cache ([`cache`]). A pack goes out immutable only once its
//! bytes are checked against its name; bytes that do not match are a 502.

pub mod cache;
pub mod listing;
pub mod paths;
pub mod upstream;

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use camino::{Utf8Path, Utf8PathBuf};
use futures_util::stream::{BoxStream, StreamExt};
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper::body::Frame;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};

use crate::http::{self, Handler, Method, Request, conditional};
use crate::media;
use cache::ByteLru;
use listing::{Known, Listings};
use paths::BundleFile;
use upstream::{Fetched, Upstream, UpstreamError};

/// The largest file fetched. A pack holds about 1 MiB of payloads before zstd (the largest pack
/// of the fixtures is 33 KB compressed); only a single payload bigger than that makes a bigger
/// pack, and manifests and tables of large jobs reach a few MiB. 256 MiB is the bound the
/// format's own reader puts on any file (`Limits::file`): every file a reader accepts passes,
/// and an upstream that streams without end is still stopped.
pub const DEFAULT_MAX_FILE: u64 = 256 << 20;
/// Bytes of packs kept in memory: a few hundred packs, enough for a team browsing a few jobs.
pub const DEFAULT_CACHE_BYTES: u64 = 256 << 20;
/// The shortest bearer token accepted: a token guessed in reasonable time is no token.
pub const MIN_TOKEN_LEN: usize = 16;

/// The largest manifest read: the format's reader refuses larger ones.
const MAX_MANIFEST: u64 = 32 << 20;
const MANIFEST: &str = tlparse_bundle::paths::MANIFEST;

/// The port listened on when none is given: outside the range `serve` tries (8000 to 8020).
pub const DEFAULT_PORT: u16 = 8030;

/// How to run the proxy (the command line's `proxy`).
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// `s3://bucket/prefix`, `gs://...`, `az://...` or an `http(s)://` base URL.
    pub upstream: String,
    /// Origins whose pages may read through the proxy (`*` literally for any).
    pub allow_origins: Vec<String>,
    /// Names the proxy may be reached by besides loopback ones (`Host` values).
    pub allow_hosts: Vec<String>,
    pub bind: IpAddr,
    /// 0: any free port.
    pub port: u16,
    /// A file holding the bearer token clients must send.
    pub token_file: Option<Utf8PathBuf>,
    /// Off loopback, serve without a token all the same (`--no-token`).
    pub no_token: bool,
    pub max_file: u64,
    pub cache_bytes: u64,
    pub upstream_timeouts: upstream::UpstreamTimeouts,
}

/// Runs the proxy until the process is killed: checks the options, prints the URL to give
/// viewers, then serves. Returns only on an error before serving.
pub fn run(options: &ProxyOptions) -> Result<(), String> {
    let origins = http::AllowedOrigins::parse(&options.allow_origins)?;
    if origins.is_empty() {
        return Err("proxy: give at least one --allow-origin (the viewer's origin, e.g. https://you.github.io)".into());
    }
    if !options.bind.is_loopback() && options.allow_hosts.is_empty() {
        return Err(format!(
            "proxy: --bind {} needs --allow-host NAME (the name clients reach the proxy by): requests \
             naming any other Host are refused, which is what keeps DNS-rebinding pages out",
            options.bind
        ));
    }
    if !options.bind.is_loopback() && options.token_file.is_none() && !options.no_token {
        return Err(format!(
            "proxy: --bind {} needs --token-file FILE: anyone who reaches the port would read every bundle \
             under the upstream; give --no-token if something in front already checks who connects",
            options.bind
        ));
    }
    let token = options.token_file.as_deref().map(read_token).transpose()?;
    let upstream = Upstream::open(&options.upstream, options.upstream_timeouts)?;
    let listener = std::net::TcpListener::bind((options.bind, options.port))
        .map_err(|e| format!("could not listen on {}:{}: {e}", options.bind, options.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    print_banner(&upstream, addr, &origins, token.is_some(), options);
    let access = http::Access { extra_hosts: options.allow_hosts.clone(), origins };
    let proxy = Proxy::new(upstream, options.max_file, options.cache_bytes, token.as_deref());
    http::run(listener, access, http::Limits::default(), proxy).map_err(|e| format!("could not start the server: {e}"))
}

fn print_banner(
    upstream: &Upstream,
    addr: SocketAddr,
    origins: &http::AllowedOrigins,
    token: bool,
    options: &ProxyOptions,
) {
    let url = format!("http://{addr}/");
    say!("Proxying {} at {url} (Ctrl-C to stop)", upstream.description);
    say!("Readable by pages of: {}", origins.to_strings().join(", "));
    if !options.allow_hosts.is_empty() {
        say!("Also reached by the Host names: {}", options.allow_hosts.join(", "));
    }
    if let Some(file) = options.token_file.as_deref().filter(|_| token) {
        say!("Requests need Authorization: Bearer <the token in {file}>");
    }
    // Reached from other machines, the proxy is named by its Host name behind a TLS proxy, not
    // by the address it listens on (0.0.0.0 names no host).
    let viewer_base = match options.allow_hosts.first() {
        Some(name) if !addr.ip().is_loopback() => format!("https://{name}/"),
        _ => url.clone(),
    };
    say!(
        "A viewer opens a bundle under it as VIEWER/?bundle={viewer_base}PREFIX (the folder that holds manifest.json)"
    );
    if !addr.ip().is_loopback() {
        say!("note: plain HTTP on {addr}; put a TLS reverse proxy in front (the token and the traces travel in clear)");
    }
    // The tests, and scripts, read the URL as soon as it is printed.
    let _ = std::io::Write::flush(&mut std::io::stdout());
}

/// The most bytes read from a token file: a token is tens of characters, and a device or a huge
/// file named by mistake must not be read whole.
const MAX_TOKEN_FILE: u64 = 4096;

/// The token in `path`, without surrounding whitespace; refused when short enough to guess, or
/// when `path` is not a small regular file.
fn read_token(path: &Utf8Path) -> Result<String, String> {
    use std::io::Read;
    let failed = |e: std::io::Error| format!("--token-file {path}: {e}");
    // Checked before opening: opening a FIFO would wait for a writer.
    if !std::fs::metadata(path).map_err(failed)?.is_file() {
        return Err(format!("--token-file {path}: not a regular file"));
    }
    let file = std::fs::File::open(path).map_err(failed)?;
    let mut bytes = Vec::new();
    file.take(MAX_TOKEN_FILE + 1).read_to_end(&mut bytes).map_err(failed)?;
    if bytes.len() as u64 > MAX_TOKEN_FILE {
        return Err(format!("--token-file {path}: over {MAX_TOKEN_FILE} bytes; a token file holds only the token"));
    }
    let text = String::from_utf8_lossy(&bytes);
    let token = text.trim();
    if token.len() < MIN_TOKEN_LEN || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "--token-file {path}: the token must be at least {MIN_TOKEN_LEN} printable ASCII characters, no spaces \
             (e.g. `openssl rand -hex 32 > {path}`)"
        ));
    }
    Ok(token.to_owned())
}

/// What the proxy answers with: the server core's body.
pub type ProxyBody = http::Body;

/// The proxy's state, shared by every connection.
pub struct Proxy {
    upstream: Upstream,
    max_file: u64,
    cache: Arc<ByteLru>,
    /// What each bundle root's manifest lists.
    listings: Listings,
    /// blake3 of the bearer token: `blake3::Hash` compares in constant time, and hashing first
    /// makes the comparison independent of the given token's length too.
    token: Option<blake3::Hash>,
}

impl Proxy {
    pub fn new(upstream: Upstream, max_file: u64, cache_bytes: u64, token: Option<&str>) -> Proxy {
        Proxy {
            upstream,
            max_file,
            cache: Arc::new(ByteLru::new(cache_bytes)),
            listings: Listings::default(),
            token: token.map(|token| blake3::hash(token.as_bytes())),
        }
    }

    pub fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    /// Whether a request with these headers may read files: always without a token; with one,
    /// only with `Authorization: Bearer <token>`.
    pub fn authorized(&self, headers: &HeaderMap) -> bool {
        let Some(expected) = self.token else {
            return true;
        };
        let given = headers.get(header::AUTHORIZATION).and_then(|value| value.as_bytes().strip_prefix(b"Bearer "));
        given.is_some_and(|given| blake3::hash(given) == expected)
    }

    /// The answer to a GET (or, with `head_only`, a HEAD) of `target` (a normalized path) that
    /// the server core already vetted (method, Host, origin). CORS headers are the core's to add.
    pub async fn answer(&self, head_only: bool, target: &str, headers: &HeaderMap) -> Response<ProxyBody> {
        if !self.authorized(headers) {
            let mut response =
                text(StatusCode::UNAUTHORIZED, "a bearer token is required (Authorization: Bearer ...)\n");
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        }
        let file = match paths::bundle_file(target) {
            Ok(file) => file,
            Err(refused) => return text(StatusCode::NOT_FOUND, &format!("refused: {}\n", refused.reason())),
        };
        if file.rel == tlparse_bundle::paths::MANIFEST {
            return self.answer_manifest(head_only, &file, headers).await;
        }
        // A cached pack was listed and checked when it went in, and its bytes never change:
        // served without asking the upstream again, even when it is down.
        if let Some(hash) = &file.pack_hash
            && let Some(bytes) = self.cache.get(&file.key)
        {
            let held = Held { bytes, etag: Some(format!("\"{hash}\"")), cache: "hit", cache_control: media::IMMUTABLE };
            return held.answer(&file, head_only, headers);
        }
        match self.known(&file.root, &file.rel).await {
            Ok(Known::Bundle(listing)) if listing.lists(&file.rel) => {}
            Ok(_) => {
                let why = format!("refused: /{} is not a file that a bundle's manifest there lists\n", file.key);
                return text(StatusCode::NOT_FOUND, &why);
            }
            Err(error) => return upstream_failed(&file, error),
        }
        match &file.pack_hash {
            Some(hash) => self.answer_pack(head_only, &file, hash, headers).await,
            None => self.answer_file(head_only, &file, headers).await,
        }
    }

    /// What is known of the bundle at `root`, for a request of `rel`: from the listings if
    /// recent, else from its manifest, read now.
    async fn known(&self, root: &str, rel: &str) -> Result<Known, UpstreamError> {
        if let Some(known) = self.listings.fresh(root, rel) {
            return Ok(known);
        }
        let key = if root.is_empty() { MANIFEST.to_string() } else { format!("{root}/{MANIFEST}") };
        match self.fetch_whole(&key, self.max_file.min(MAX_MANIFEST)).await {
            Ok((manifest, _)) => Ok(self.listings.record(root, Some(&manifest))),
            Err(UpstreamError::NotFound) => Ok(self.listings.record(root, None)),
            Err(error) => Err(error),
        }
    }

    /// A bundle's manifest, served only when it is one (its listing recorded on the way).
    async fn answer_manifest(&self, head_only: bool, file: &BundleFile, headers: &HeaderMap) -> Response<ProxyBody> {
        let (manifest, etag) = match self.fetch_whole(&file.key, self.max_file.min(MAX_MANIFEST)).await {
            Ok(fetched) => fetched,
            Err(error) => return upstream_failed(file, error),
        };
        if let Known::NoBundle = self.listings.record(&file.root, Some(&manifest)) {
            return text(StatusCode::NOT_FOUND, &format!("refused: /{} is not a bundle's manifest\n", file.key));
        }
        let held = Held { bytes: manifest, etag, cache: "miss", cache_control: media::REVALIDATE };
        held.answer(file, head_only, headers)
    }

    /// A listed file other than a pack, streamed from the upstream, revalidated with its tag.
    async fn answer_file(&self, head_only: bool, file: &BundleFile, headers: &HeaderMap) -> Response<ProxyBody> {
        let if_none_match = entity_tag(headers);
        match self.upstream.fetch(&file.key, !head_only, self.max_file, if_none_match.clone()).await {
            Ok(fetched) => streamed(file, fetched, headers),
            Err(UpstreamError::NotModified) => not_modified(if_none_match.as_deref()),
            Err(error) => upstream_failed(file, error),
        }
    }

    /// A listed pack. Its name is its blake3, so once its bytes are checked against the name it
    /// goes out immutable (and into the cache); bytes that do not match are an error, never
    /// served. A pack that cannot be held to be checked (no room in the cache) is streamed as
    /// it comes, and revalidated like any other file rather than kept for a year.
    async fn answer_pack(
        &self,
        head_only: bool,
        file: &BundleFile,
        hash: &str,
        headers: &HeaderMap,
    ) -> Response<ProxyBody> {
        let fetched = match self.upstream.fetch(&file.key, !head_only, self.max_file, None).await {
            Ok(fetched) => fetched,
            Err(error) => return upstream_failed(file, error),
        };
        let room = match fetched.body {
            Some(_) => self.cache.reserve(fetched.size),
            None => None,
        };
        // A HEAD, or no room to check it: nothing was checked, so nothing is promised.
        let Some(_room) = room else { return streamed(file, fetched, headers) };
        let stream = fetched.body.expect("a body was asked for and is there");
        let bytes = match collect(stream, fetched.size).await {
            Ok(bytes) => bytes,
            Err(error) => return upstream_failed(file, error),
        };
        if blake3::hash(&bytes).to_hex()[..32] != *hash {
            return upstream_failed(file, UpstreamError::Failed("the pack's bytes do not match its name"));
        }
        self.cache.insert(&file.key, bytes.clone());
        // The name is the bytes' hash: the strongest tag there is.
        let held = Held { bytes, etag: Some(format!("\"{hash}\"")), cache: "miss", cache_control: media::IMMUTABLE };
        held.answer(file, head_only, headers)
    }

    /// The whole file at `key` (at most `max` bytes) and its tag.
    async fn fetch_whole(&self, key: &str, max: u64) -> Result<(Bytes, Option<String>), UpstreamError> {
        let fetched = self.upstream.fetch(key, true, max, None).await?;
        let stream = fetched.body.ok_or(UpstreamError::Failed("no body"))?;
        Ok((collect(stream, fetched.size).await?, fetched.etag))
    }
}

impl Handler for Proxy {
    async fn handle(&self, request: Request) -> Response<ProxyBody> {
        self.answer(request.method == Method::Head, &request.path, &request.headers).await
    }
}

/// A file the proxy holds whole (a manifest, a checked pack), answered as a static server
/// would: whole, a 304, a single range, or a 416.
struct Held {
    bytes: Bytes,
    etag: Option<String>,
    /// `x-proxy-cache`: `hit` or `miss`.
    cache: &'static str,
    cache_control: &'static str,
}

impl Held {
    fn answer(self, file: &BundleFile, head_only: bool, headers: &HeaderMap) -> Response<ProxyBody> {
        let len = self.bytes.len() as u64;
        // Without a tag only a plain Range applies: an If-None-Match or If-Range names none.
        let plan = conditional::plan(headers, self.etag.as_deref().unwrap_or(""), len);
        let (start, part) = match plan {
            conditional::Answer::NotModified if self.etag.is_some() => return not_modified(self.etag.as_deref()),
            conditional::Answer::Unsatisfiable => {
                let mut refused = conditional::unsatisfiable(len);
                harden(refused.headers_mut());
                return refused;
            }
            conditional::Answer::Part { start, len: part } => (start, part),
            _ => (0, len),
        };
        let bytes = self.bytes.slice(start as usize..(start + part) as usize);
        let body = if head_only { empty() } else { Full::new(bytes).map_err(never).boxed_unsync() };
        let mut response = file_response(file, len, self.etag.as_deref(), body, self.cache, self.cache_control);
        response.headers_mut().insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
        if (start, part) != (0, len) {
            conditional::mark_partial(&mut response, start, part, len);
        }
        response
    }
}

/// A listed file as the upstream sends it, never held whole, answered as a static server would:
/// whole, a single range (the bytes before it read from the upstream and dropped), or a 416. It
/// is revalidated, never promised immutable: nothing checked its bytes.
fn streamed(file: &BundleFile, fetched: Fetched, headers: &HeaderMap) -> Response<ProxyBody> {
    let Fetched { size, etag, body } = fetched;
    // A tag the upstream did not give matches no If-Range; If-None-Match went to the upstream.
    let (start, part) = match conditional::plan(headers, etag.as_deref().unwrap_or(""), size) {
        conditional::Answer::Unsatisfiable => {
            let mut refused = conditional::unsatisfiable(size);
            harden(refused.headers_mut());
            return refused;
        }
        conditional::Answer::Part { start, len } => (start, len),
        _ => (0, size),
    };
    let body = body.map_or_else(empty, |stream| body_of(slice(stream, start, part)));
    let mut response = file_response(file, size, etag.as_deref(), body, "miss", media::REVALIDATE);
    response.headers_mut().insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if (start, part) != (0, size) {
        conditional::mark_partial(&mut response, start, part, size);
    }
    response
}

/// The `len` bytes of `stream` from `start`: what comes before is dropped, and the stream is let
/// go once they are sent.
fn slice(
    stream: BoxStream<'static, Result<Bytes, UpstreamError>>,
    start: u64,
    len: u64,
) -> BoxStream<'static, Result<Bytes, UpstreamError>> {
    futures_util::stream::unfold((stream, start, len), |(mut stream, mut skip, mut left)| async move {
        while left > 0 {
            let chunk = match stream.next().await? {
                Ok(chunk) => chunk,
                Err(error) => return Some((Err(error), (stream, 0, 0))),
            };
            let dropped = skip.min(chunk.len() as u64);
            skip -= dropped;
            let mut chunk = chunk.slice(dropped as usize..);
            chunk.truncate(left.min(chunk.len() as u64) as usize);
            if chunk.is_empty() {
                continue;
            }
            left -= chunk.len() as u64;
            return Some((Ok(chunk), (stream, skip, left)));
        }
        None
    })
    .boxed()
}

/// `stream`'s `size` bytes, whole.
async fn collect(
    mut stream: BoxStream<'static, Result<Bytes, UpstreamError>>,
    size: u64,
) -> Result<Bytes, UpstreamError> {
    let mut whole = BytesMut::with_capacity(usize::try_from(size).unwrap_or(0));
    while let Some(chunk) = stream.next().await {
        whole.extend_from_slice(&chunk?);
    }
    Ok(whole.freeze())
}

/// The answer when the upstream could not give a file: 404 when it has none, else 502 (logged).
fn upstream_failed(file: &BundleFile, error: UpstreamError) -> Response<ProxyBody> {
    if error == UpstreamError::NotFound {
        return text(StatusCode::NOT_FOUND, &format!("not found upstream: /{}\n", file.key));
    }
    // The key is checked safe to print; the reason is fixed text.
    eprintln!("proxy: /{}: {error}", file.key);
    text(StatusCode::BAD_GATEWAY, &format!("{error}\n"))
}

/// The client's `If-None-Match`, when it is one a proxy may pass on: short, visible ASCII.
fn entity_tag(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::IF_NONE_MATCH)?.to_str().ok()?;
    (value.len() <= 256 && value.bytes().all(|b| b.is_ascii_graphic() || b == b' ')).then(|| value.to_owned())
}

fn not_modified(etag: Option<&str>) -> Response<ProxyBody> {
    let mut response = Response::new(empty());
    *response.status_mut() = StatusCode::NOT_MODIFIED;
    let headers = response.headers_mut();
    if let Some(etag) = etag.and_then(|etag| HeaderValue::from_str(etag).ok()) {
        headers.insert(header::ETAG, etag);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    harden(headers);
    response
}

fn file_response(
    file: &BundleFile,
    size: u64,
    etag: Option<&str>,
    body: ProxyBody,
    cache: &'static str,
    cache_control: &'static str,
) -> Response<ProxyBody> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    // The upstream's tag, if it is a valid header value (an upstream is not trusted to send one).
    if let Some(etag) = etag.and_then(|etag| HeaderValue::from_str(etag).ok()) {
        headers.insert(header::ETAG, etag);
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media::data_content_type(file.file_name())));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache_control));
    headers.insert("x-proxy-cache", HeaderValue::from_static(cache));
    harden(headers);
    response
}

fn text(status: StatusCode, message: &str) -> Response<ProxyBody> {
    let mut response = Response::new(Full::new(Bytes::from(message.to_owned())).map_err(never).boxed_unsync());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    harden(headers);
    response
}

/// Nothing from the bucket may run on the proxy's origin, whatever a browser makes of it.
fn harden(headers: &mut HeaderMap) {
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
}

fn empty() -> ProxyBody {
    Empty::new().map_err(never).boxed_unsync()
}

fn body_of(stream: BoxStream<'static, Result<Bytes, UpstreamError>>) -> ProxyBody {
    // An error ends the body early: hyper then closes the connection, and the client sees fewer
    // bytes than Content-Length announced, never a silently short file.
    let frames = stream.map(|item| item.map(Frame::data).map_err(|e| std::io::Error::other(e.to_string())));
    StreamBody::new(frames).boxed_unsync()
}

fn never(never: Infallible) -> std::io::Error {
    match never {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::path::Path as StorePath;
    use object_store::{ObjectStoreExt, PutPayload};

    const TOKEN: &str = "0123456789abcdef-token";

    async fn proxy_over(files: &[(&str, &[u8])], token: Option<&str>) -> (Proxy, Arc<InMemory>) {
        let store = Arc::new(InMemory::new());
        for (path, bytes) in files {
            store.put(&StorePath::from(*path), PutPayload::from(bytes.to_vec())).await.unwrap();
        }
        let upstream = Upstream::from_store(store.clone(), "bundles", "memory");
        (Proxy::new(upstream, 1 << 20, 4 << 20, token), store)
    }

    async fn body(response: Response<ProxyBody>) -> Vec<u8> {
        response.into_body().collect().await.unwrap().to_bytes().to_vec()
    }

    /// The body as hyper sends it: frames only until Content-Length bytes are out, never polled
    /// for its end.
    async fn body_as_sent(response: Response<ProxyBody>) -> Vec<u8> {
        let length: usize = response.headers()[header::CONTENT_LENGTH].to_str().unwrap().parse().unwrap();
        let mut body = response.into_body();
        let mut out = Vec::new();
        while out.len() < length {
            let frame = body.frame().await.expect("a frame").unwrap();
            out.extend_from_slice(frame.data_ref().unwrap());
        }
        out
    }

    /// A bundle manifest listing `files` and the viewer files `viewer`.
    fn manifest(files: &[&str], viewer: &[&str]) -> Vec<u8> {
        let entries = |paths: &[&str]| paths.iter().map(|path| serde_json::json!({"path": path})).collect::<Vec<_>>();
        let manifest =
            serde_json::json!({"format": "tlparse-bundle", "files": entries(files), "viewer": entries(viewer)});
        manifest.to_string().into_bytes()
    }

    fn pack_name(bytes: &[u8]) -> String {
        format!("blobs/packs/{}.zst", &blake3::hash(bytes).to_hex()[..32])
    }

    #[tokio::test]
    async fn serves_files_with_their_type_and_never_as_runnable() {
        let listing = manifest(&["stacks/rank0.json"], &["viewer/app.js"]);
        let files: &[(&str, &[u8])] =
            &[("bundles/job/manifest.json", &listing), ("bundles/job/viewer/app.js", b"alert(1)")];
        let (proxy, _) = proxy_over(files, None).await;
        let response = proxy.answer(false, "/job/manifest.json", &HeaderMap::new()).await;
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers().clone();
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");
        assert_eq!(headers[header::CONTENT_LENGTH], listing.len().to_string().as_str());
        assert_eq!(headers[header::CACHE_CONTROL], "no-cache");
        assert_eq!(headers[header::CONTENT_SECURITY_POLICY], "sandbox");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(body(response).await, listing);

        let script = proxy.answer(false, "/job/viewer/app.js", &HeaderMap::new()).await;
        assert_eq!(script.headers()[header::CONTENT_TYPE], "text/plain; charset=utf-8");
        let head = proxy.answer(true, "/job/viewer/app.js", &HeaderMap::new()).await;
        assert_eq!(head.headers()[header::CONTENT_LENGTH], "8");
        assert!(body(head).await.is_empty());

        let missing = proxy.answer(false, "/job/stacks/rank0.json", &HeaderMap::new()).await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert_eq!(body(missing).await, b"not found upstream: /job/stacks/rank0.json\n");
        let refused = proxy.answer(false, "/job/../manifest.json", &HeaderMap::new()).await;
        assert_eq!(refused.status(), StatusCode::NOT_FOUND);
        assert!(String::from_utf8(body(refused).await).unwrap().starts_with("refused: "));
    }

    #[tokio::test]
    async fn serves_only_what_a_bundle_manifest_lists() {
        let listing = manifest(&["stacks/rank0.json"], &[]);
        let files: &[(&str, &[u8])] = &[
            ("bundles/job/manifest.json", &listing),
            ("bundles/job/stacks/rank0.json", b"[]"),
            ("bundles/job/stacks/rank1.json", b"unlisted"),
            ("bundles/private/config/manifest.json", b"{\"secret\": 1}"),
            ("bundles/other-app/index.html", b"<script>"),
        ];
        let (proxy, _) = proxy_over(files, None).await;
        assert_eq!(proxy.answer(false, "/job/stacks/rank0.json", &HeaderMap::new()).await.status(), StatusCode::OK);
        for (target, why) in [
            ("/job/stacks/rank1.json", "is not a file that a bundle's manifest there lists"),
            ("/private/config/manifest.json", "is not a bundle's manifest"),
            ("/other-app/index.html", "is not a file that a bundle's manifest there lists"),
        ] {
            let refused = proxy.answer(false, target, &HeaderMap::new()).await;
            assert_eq!(refused.status(), StatusCode::NOT_FOUND, "{target}");
            let text = String::from_utf8(body(refused).await).unwrap();
            assert!(text.starts_with("refused: ") && text.contains(why), "{target}: {text}");
        }
    }

    #[tokio::test]
    async fn revalidates_with_the_upstream_entity_tag() {
        let listing = manifest(&["stacks/rank0.json"], &[]);
        let (proxy, store) =
            proxy_over(&[("bundles/job/stacks/rank0.json", b"{}"), ("bundles/job/manifest.json", &listing)], None)
                .await;
        let first = proxy.answer(false, "/job/stacks/rank0.json", &HeaderMap::new()).await;
        let etag = first.headers()[header::ETAG].clone();
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, etag.clone());
        let again = proxy.answer(false, "/job/stacks/rank0.json", &headers).await;
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(again.headers()[header::ETAG], etag);
        assert!(body(again).await.is_empty());
        store.put(&StorePath::from("bundles/job/stacks/rank0.json"), PutPayload::from_static(b"{ }")).await.unwrap();
        let changed = proxy.answer(false, "/job/stacks/rank0.json", &headers).await;
        assert_eq!(changed.status(), StatusCode::OK);
        assert_ne!(changed.headers()[header::ETAG], etag);
        assert_eq!(body(changed).await, b"{ }");
    }

    #[tokio::test]
    async fn a_streamed_file_answers_a_range_as_a_static_server_does() {
        let text = b"0123456789abcdefghij".as_slice();
        let listing = manifest(&["stacks/rank0.json"], &[]);
        let (proxy, _) =
            proxy_over(&[("bundles/job/stacks/rank0.json", text), ("bundles/job/manifest.json", &listing)], None).await;
        let ask = |pairs: &[(header::HeaderName, &str)]| {
            let headers = pairs.iter().map(|(k, v)| (k.clone(), HeaderValue::from_str(v).unwrap())).collect();
            let proxy = &proxy;
            async move { proxy.answer(false, "/job/stacks/rank0.json", &headers).await }
        };
        let whole = ask(&[]).await;
        assert_eq!(whole.headers()[header::ACCEPT_RANGES], "bytes");
        let etag = whole.headers()[header::ETAG].to_str().unwrap().to_owned();
        for (range, start, end) in
            [("bytes=3-6", 3, 6), ("bytes=15-", 15, 19), ("bytes=-4", 16, 19), ("bytes=18-99", 18, 19)]
        {
            let part = ask(&[(header::RANGE, range)]).await;
            assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT, "{range}");
            assert_eq!(part.headers()[header::CONTENT_RANGE], format!("bytes {start}-{end}/20").as_str(), "{range}");
            assert_eq!(part.headers()[header::CONTENT_LENGTH], (end - start + 1).to_string().as_str(), "{range}");
            assert_eq!(part.headers()[header::CACHE_CONTROL], "no-cache", "{range}");
            assert_eq!(body(part).await, &text[start..=end], "{range}");
        }
        let past = ask(&[(header::RANGE, "bytes=20-")]).await;
        assert_eq!(past.status(), StatusCode::RANGE_NOT_SATISFIABLE);
        assert_eq!(past.headers()[header::CONTENT_RANGE], "bytes */20");
        let same = ask(&[(header::RANGE, "bytes=0-1"), (header::IF_RANGE, &etag)]).await;
        assert_eq!((same.status(), body(same).await), (StatusCode::PARTIAL_CONTENT, b"01".to_vec()));
        let old = ask(&[(header::RANGE, "bytes=0-1"), (header::IF_RANGE, "\"old\"")]).await;
        assert_eq!((old.status(), body(old).await), (StatusCode::OK, text.to_vec()));
    }

    #[tokio::test]
    async fn a_token_when_set_is_required() {
        let listing = manifest(&[], &[]);
        let (proxy, _) = proxy_over(&[("bundles/manifest.json", &listing)], Some(TOKEN)).await;
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            headers
        };
        let none = proxy.answer(false, "/manifest.json", &HeaderMap::new()).await;
        assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(none.headers()[header::WWW_AUTHENTICATE], "Bearer");
        for wrong in ["Bearer 0123456789abcdef-tokeN", "Bearer ", "Basic x", &format!("bearer {TOKEN}"), TOKEN] {
            assert_eq!(
                proxy.answer(false, "/manifest.json", &with(wrong)).await.status(),
                StatusCode::UNAUTHORIZED,
                "{wrong}"
            );
        }
        let right = proxy.answer(false, "/manifest.json", &with(&format!("Bearer {TOKEN}"))).await;
        assert_eq!(right.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn only_packs_checked_against_their_name_are_immutable_and_cached() {
        let pack = b"pretend zstd frame".as_slice();
        let good = pack_name(pack);
        let bad = pack_name(b"other bytes");
        let listing = manifest(&[&good, &bad], &[]);
        let files = [(format!("bundles/{good}"), pack), (format!("bundles/{bad}"), pack)];
        let mut files: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), *b)).collect();
        files.push(("bundles/manifest.json", &listing));
        let (proxy, store) = proxy_over(&files, None).await;
        let first = proxy.answer(false, &format!("/{good}"), &HeaderMap::new()).await;
        assert_eq!(first.headers()["x-proxy-cache"], "miss");
        assert_eq!(first.headers()[header::CACHE_CONTROL], "public, max-age=31536000, immutable");
        assert_eq!(first.headers()[header::CONTENT_TYPE], "application/zstd");
        assert_eq!(body_as_sent(first).await, pack);

        let forged = proxy.answer(false, &format!("/{bad}"), &HeaderMap::new()).await;
        assert_eq!(forged.status(), StatusCode::BAD_GATEWAY);
        assert_eq!(forged.headers()[header::CACHE_CONTROL], "no-cache");
        assert_eq!(body(forged).await, b"upstream failed: the pack's bytes do not match its name\n");

        for name in [&good, &bad] {
            store.delete(&StorePath::from(format!("bundles/{name}"))).await.unwrap();
        }
        let cached = proxy.answer(false, &format!("/{good}"), &HeaderMap::new()).await;
        assert_eq!(
            (cached.status(), &cached.headers()["x-proxy-cache"]),
            (StatusCode::OK, &HeaderValue::from_static("hit"))
        );
        assert_eq!(body(cached).await, pack);
        let head = proxy.answer(true, &format!("/{good}"), &HeaderMap::new()).await;
        assert_eq!(head.headers()[header::CONTENT_LENGTH], pack.len().to_string().as_str());
        let range = HeaderMap::from_iter([(header::RANGE, HeaderValue::from_static("bytes=8-11"))]);
        let part = proxy.answer(false, &format!("/{good}"), &range).await;
        assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
        let total = pack.len();
        assert_eq!(part.headers()[header::CONTENT_RANGE], format!("bytes 8-11/{total}").as_str());
        assert_eq!(body(part).await, &pack[8..12]);
        let tag = format!("\"{}\"", &good["blobs/packs/".len()..good.len() - ".zst".len()]);
        let conditional = HeaderMap::from_iter([(header::IF_NONE_MATCH, HeaderValue::from_str(&tag).unwrap())]);
        let unchanged = proxy.answer(false, &format!("/{good}"), &conditional).await;
        assert_eq!(
            (unchanged.status(), &unchanged.headers()[header::ETAG]),
            (StatusCode::NOT_MODIFIED, &HeaderValue::from_str(&tag).unwrap())
        );
        let unchecked = proxy.answer(false, &format!("/{bad}"), &HeaderMap::new()).await;
        assert_eq!(unchecked.status(), StatusCode::NOT_FOUND, "a pack whose bytes do not match its name is not cached");
        assert_eq!(proxy.cache.used(), pack.len() as u64);
    }

    #[tokio::test]
    async fn a_pack_that_cannot_be_held_to_be_checked_is_not_promised_immutable() {
        let pack = b"pretend zstd frame".as_slice();
        let name = pack_name(pack);
        let listing = manifest(&[&name], &[]);
        let (with_cache, store) =
            proxy_over(&[(&format!("bundles/{name}"), pack), ("bundles/manifest.json", &listing)], None).await;
        drop(with_cache);
        let upstream = Upstream::from_store(store, "bundles", "memory");
        let no_cache = Proxy::new(upstream, 1 << 20, 0, None);
        let streamed = no_cache.answer(false, &format!("/{name}"), &HeaderMap::new()).await;
        assert_eq!(streamed.status(), StatusCode::OK);
        assert_eq!(streamed.headers()[header::CACHE_CONTROL], "no-cache");
        assert_eq!(body_as_sent(streamed).await, pack);
        let range = HeaderMap::from_iter([(header::RANGE, HeaderValue::from_static("bytes=8-11"))]);
        let part = no_cache.answer(false, &format!("/{name}"), &range).await;
        assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(part.headers()[header::CONTENT_RANGE], format!("bytes 8-11/{}", pack.len()).as_str());
        assert_eq!(body(part).await, &pack[8..12]);
    }

    #[test]
    fn content_types_never_runnable() {
        for (name, expected) in [
            ("index.html", "text/plain; charset=utf-8"),
            ("app.mjs", "text/plain; charset=utf-8"),
            ("x.SVG", "text/plain; charset=utf-8"),
            ("style.css", "text/css; charset=utf-8"),
            ("manifest.json", "application/json"),
            ("diagnostics.jsonl", "application/jsonl"),
            ("a.json.zst", "application/zstd"),
            ("chrome_trace.json.gz", "application/gzip"),
            ("LICENSE", "application/octet-stream"),
        ] {
            assert_eq!(media::data_content_type(name), expected, "{name}");
        }
    }
}
