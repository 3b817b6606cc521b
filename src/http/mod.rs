//! A small hardened HTTP/1.1 server core for the commands that serve a bundle to a browser
//! (`serve`, `proxy`): tokio + hyper, a fixed handful of threads, bounded connections and
//! buffers, timeouts on clients that stall, and an access check before any handler runs.
//!
//! A trace holds the model's code. So every request must name this server in its `Host` (a
//! loopback name or one of [`Access::extra_hosts`]), which defeats DNS rebinding; a request
//! carrying an `Origin` must come from the server's own origin or one on the allowlist; and only
//! an allowlisted origin gets CORS headers. Only `GET` and `HEAD` reach the [`Handler`], with a
//! decoded path that starts with exactly one `/` and never climbs (`..`); `OPTIONS` preflights
//! are answered here.
//!
//! ```no_run
//! use tlparse_build::http::{self, Access, Handler, Limits, Request, Response, Body};
//! struct Hello;
//! impl Handler for Hello {
//!     async fn handle(&self, request: Request) -> Response<Body> {
//!         http::text(200, &format!("hello, {}\n", request.path))
//!     }
//! }
//! let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
//! http::run(listener, Access::default(), Limits::default(), Hello).unwrap();
//! ```

mod access;
mod clients;
pub mod conditional;
mod path;
mod server;

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
pub use hyper::{HeaderMap, Response, StatusCode, header};

pub use access::{Access, AllowedOrigins};
pub use server::run;

/// A response body: boxed, so a handler can stream a file or an upstream object.
pub type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// The methods a [`Handler`] is asked to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    /// Answer as for `Get`, with the headers (`Content-Length` included); the core drops the body.
    Head,
}

/// A request that passed the access check.
#[derive(Debug)]
pub struct Request {
    pub method: Method,
    /// Percent-decoded and normalized: starts with exactly one `/`, no empty, `.` or `..`
    /// segment, a trailing `/` kept. Still attacker-chosen text: map it to files with care.
    pub path: String,
    /// The raw query string, without the `?`, if any.
    pub query: Option<String>,
    /// The request's headers (`Range`, `If-None-Match`, ...).
    pub headers: HeaderMap,
}

/// Answers the vetted `GET` and `HEAD` requests. Access headers (CORS, `Vary`, `nosniff`) are
/// added by the core; the handler sets `Content-Type`, `Content-Length` and caching.
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, request: Request) -> impl Future<Output = Response<Body>> + Send;
}

/// The bounds that keep one client, or a thousand, from taking the server down.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The request line and headers, together (431 beyond). Browsers send a few KiB; cookies
    /// for `localhost` are shared by every local dev server, so leave room.
    pub max_header_bytes: usize,
    /// From a connection's start (or its previous response) to a request's complete headers;
    /// this is also how long an idle keep-alive connection lives. Cuts slowloris clients.
    pub header_read_timeout: Duration,
    /// How long a write may make no progress before the connection is dropped: a client that
    /// stops reading (e.g. pipelining requests it never reads) releases its connection.
    pub write_inactivity_timeout: Duration,
    /// Connections held at once. Beyond, a new connection takes the place of the one idle
    /// longest (waiting for a request); when none is idle, new ones wait in the listen backlog.
    pub max_connections: usize,
    /// Connections held from one client address: beyond, a new one from it takes the place of
    /// its own longest idle, or is closed when all of its are busy. Behind a reverse proxy,
    /// every client is the proxy's address.
    pub max_connections_per_client: usize,
    /// Runtime worker threads (the async I/O).
    pub worker_threads: usize,
    /// Threads for blocking file work (reads, hashes).
    pub blocking_threads: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            // hyper's minimum buffer is 8 KiB; 64 KiB fits any sane browser request.
            max_header_bytes: 64 << 10,
            // A browser sends its headers at once; 15 s survives a loaded machine, and holds a
            // slowloris connection only that long.
            header_read_timeout: Duration::from_secs(15),
            // Long enough for a busy browser tab to get back to reading, short enough that stalled
            // clients do not pile up.
            write_inactivity_timeout: Duration::from_secs(30),
            // A connection costs a few KiB here; 1024 outlasts hundreds of slow clients while a
            // real one still gets in, within the usual 1024-descriptor limit raised at start.
            max_connections: 1024,
            // A browser opens 6 per host; a team behind one NAT or reverse proxy, a few dozen
            // browsers. A quarter of the whole: one address never fills the server.
            max_connections_per_client: 256,
            // Serving files from disk is I/O bound: two threads keep up with a browser.
            worker_threads: 2,
            blocking_threads: 4,
        }
    }
}

/// A complete body from bytes.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    http_body_util::Full::new(bytes.into()).map_err(|never| match never {}).boxed_unsync()
}

/// A plain-text response with `Content-Length`, as the core's own refusals are.
pub fn text(status: u16, body: &str) -> Response<Body> {
    let mut response = Response::new(full(body.to_string()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/plain; charset=utf-8"));
    headers.insert(header::CONTENT_LENGTH, body.len().into());
    headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    response
}

/// A body that streams `len` bytes of `file` from its current position in 64 KiB pieces, so a
/// large file never sits in memory whole. Ends early (and the connection with it) if the file
/// shrinks meanwhile.
pub fn file_body(file: tokio::fs::File, len: u64) -> Body {
    use futures_util::TryStreamExt;
    use tokio::io::AsyncReadExt;
    const PIECE: usize = 64 << 10;
    let stream = tokio_util::io::ReaderStream::with_capacity(file.take(len), PIECE);
    http_body_util::StreamBody::new(stream.map_ok(hyper::body::Frame::data)).boxed_unsync()
}
