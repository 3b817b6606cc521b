//! The accept loop and one connection's life: the runtime, the connection bound, hyper's
//! HTTP/1.1 with its limits, and the access check that runs before any [`Handler`].

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio_io_timeout::TimeoutStream;

use super::access::{self, Reader};
use super::clients::{Admitted, Busy, Clients};
use super::{Access, Body, Handler, Limits, Method, Request, Response, path, text};

/// Everything a connection needs, shared by all of them.
struct Shared<H> {
    access: Access,
    limits: Limits,
    handler: H,
    /// The listening port, which a valid `Host` names.
    port: u16,
}

/// Serves `listener` until the process ends, on a runtime of [`Limits::worker_threads`] threads.
/// Returns only when the runtime or the listener cannot be set up.
pub fn run<H: Handler>(listener: std::net::TcpListener, access: Access, limits: Limits, handler: H) -> io::Result<()> {
    raise_open_file_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(limits.worker_threads)
        .max_blocking_threads(limits.blocking_threads)
        .thread_name("tlparse-http")
        .enable_all()
        .build()?;
    runtime.block_on(accept_loop(listener, access, limits, handler))
}

async fn accept_loop<H: Handler>(
    listener: std::net::TcpListener,
    access: Access,
    limits: Limits,
    handler: H,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let clients = Clients::new(limits.max_connections, limits.max_connections_per_client);
    let shared = Arc::new(Shared { access, limits, handler, port });
    loop {
        // Waiting for room before accepting leaves the excess in the kernel's backlog, costing
        // nothing here.
        clients.room().await;
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                // Out of descriptors or a connection reset before accept: pause rather than spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Every connection of this client is busy with a request: this one is closed unserved.
        let Some((admitted, closed)) = clients.admit(peer.ip().to_canonical()) else { continue };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let admitted = Arc::new(admitted);
            tokio::select! {
                () = serve_connection(stream, shared, Arc::clone(&admitted)) => {}
                // Closed to make room for another, while it waited for a request.
                _ = closed => {}
            }
        });
    }
}

async fn serve_connection<H: Handler>(stream: tokio::net::TcpStream, shared: Arc<Shared<H>>, admitted: Arc<Admitted>) {
    let _ = stream.set_nodelay(true);
    let mut stream = TimeoutStream::new(stream);
    // Only writes: reads are bounded by hyper's header timeout, and a read timeout would also
    // fire while a long download is written to a client that has nothing to send.
    stream.set_write_timeout(Some(shared.limits.write_inactivity_timeout));
    let io = TokioIo::new(Box::pin(stream));
    let limits = &shared.limits;
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192))
        .keep_alive(true);
    let service_shared = Arc::clone(&shared);
    let service = hyper::service::service_fn(move |request| {
        let shared = Arc::clone(&service_shared);
        // Busy from the request's headers to the response's last byte: not closed for room.
        let busy = admitted.busy();
        async move { Ok::<_, Infallible>(busy_until_sent(shared.answer(request).await, busy)) }
    });
    // Errors are the client's (gone, too slow, malformed): nobody to tell.
    let _ = builder.serve_connection(io, service).await;
}

impl<H: Handler> Shared<H> {
    async fn answer(&self, request: hyper::Request<hyper::body::Incoming>) -> Response<Body> {
        let (parts, _body) = request.into_parts();
        let authority = parts.uri.authority().map(|a| a.as_str());
        let reader = match self.access.check(self.port, authority, &parts.headers) {
            Ok(reader) => reader,
            Err(refusal) => return self.finish(text(refusal.status(), &refusal.reason()), &Reader::SameOrigin),
        };
        let response = match parts.method {
            hyper::Method::GET | hyper::Method::HEAD => self.dispatch(parts).await,
            hyper::Method::OPTIONS => preflight(&reader, &parts.headers),
            _ => with_allow(text(405, "refused: only GET and HEAD are supported\n")),
        };
        self.finish(response, &reader)
    }

    /// Hands a GET or HEAD to the handler once its path is vetted.
    async fn dispatch(&self, parts: hyper::http::request::Parts) -> Response<Body> {
        if has_body(&parts.headers) {
            let mut refused = text(400, "refused: a GET or HEAD with a body\n");
            // The unread body would otherwise be taken for the next request.
            refused.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return refused;
        }
        let path = match path::normalize(parts.uri.path()) {
            Ok(path) => path,
            Err(bad) => return text(bad.status(), bad.reason()),
        };
        let method = if parts.method == hyper::Method::HEAD { Method::Head } else { Method::Get };
        let query = parts.uri.query().map(str::to_string);
        let mut response = self.handler.handle(Request { method, path, query, headers: parts.headers }).await;
        if method == Method::Head {
            // hyper sends no body for HEAD; dropping it here also closes a file at once.
            *response.body_mut() = super::full(bytes::Bytes::new());
        }
        response
    }

    fn finish(&self, mut response: Response<Body>, reader: &Reader) -> Response<Body> {
        access::add_access_headers(response.headers_mut(), reader, self.access.origins.allows_any());
        response
    }
}

/// `response`, whose body holds `busy` until it is sent (or the connection dropped).
fn busy_until_sent(response: Response<Body>, busy: Busy) -> Response<Body> {
    use http_body_util::BodyExt;
    response.map(|body| Holding { body, _busy: busy }.boxed_unsync())
}

/// A body that holds a guard as long as it lives.
struct Holding<T> {
    body: Body,
    _busy: T,
}

impl<T: Unpin> hyper::body::Body for Holding<T> {
    type Data = bytes::Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, io::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// The answer to an `OPTIONS`: a CORS preflight from an allowed origin, or plain `Allow`.
fn preflight(reader: &Reader, headers: &hyper::HeaderMap) -> Response<Body> {
    let mut response = match reader {
        Reader::CrossOrigin(_) if !access::preflight_method_allowed(headers) => {
            return with_allow(text(403, "refused: only GET and HEAD are allowed cross-origin\n"));
        }
        Reader::CrossOrigin(_) => {
            let mut response = text(204, "");
            access::add_preflight_headers(response.headers_mut(), headers);
            response
        }
        Reader::SameOrigin => with_allow(text(204, "")),
    };
    // A 204 has no body, so no length and no type.
    response.headers_mut().remove(header::CONTENT_TYPE);
    response.headers_mut().remove(header::CONTENT_LENGTH);
    response
}

fn with_allow(mut response: Response<Body>) -> Response<Body> {
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
    response
}

/// Whether a request announces a body (a GET or HEAD has none).
fn has_body(headers: &hyper::HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers.get(header::CONTENT_LENGTH).is_some_and(|length| length.as_bytes() != b"0")
}

/// Raises the soft limit on open descriptors to the hard one, so that [`Limits::max_connections`]
/// connections plus the files they stream fit where the soft default is 1024.
fn raise_open_file_limit() {
    #[cfg(unix)]
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    unsafe {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    use super::*;
    use crate::http::AllowedOrigins;

    /// Echoes the vetted path, so a test sees what a handler is given.
    struct Echo;

    impl Handler for Echo {
        async fn handle(&self, request: Request) -> Response<Body> {
            text(200, &format!("{:?} {}\n", request.method, request.path))
        }
    }

    fn start() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let origins = AllowedOrigins::parse(&["http://allowed.example:9"]).unwrap();
        let access = Access { origins, ..Access::default() };
        std::thread::spawn(move || run(listener, access, Limits::default(), Echo));
        addr
    }

    /// Sends `head` (request line and headers, without the blank line) and reads the whole answer.
    fn exchange(addr: &str, head: &str) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(stream, "{head}\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn vets_host_origin_method_and_path_before_the_handler() {
        let addr = start();
        let ok = exchange(&addr, &format!("GET //viewer/./%61pp.js?x HTTP/1.1\r\nHost: {addr}"));
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n") && ok.ends_with("Get /viewer/app.js\n"), "{ok}");
        assert!(ok.to_ascii_lowercase().contains("x-content-type-options: nosniff"), "{ok}");
        let head = exchange(&addr, &format!("HEAD / HTTP/1.1\r\nHost: {addr}"));
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.contains("content-length: 7\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "no body for HEAD: {head}");

        let foreign = exchange(&addr, "GET / HTTP/1.1\r\nHost: rebound.evil.example:80");
        assert!(foreign.starts_with("HTTP/1.1 421 ") && foreign.contains("is not this server"), "{foreign}");
        assert!(exchange(&addr, "GET / HTTP/1.0").starts_with("HTTP/1.0 400 "));
        let absolute = exchange(&addr, &format!("GET http://evil.example/ HTTP/1.1\r\nHost: {addr}"));
        assert!(absolute.starts_with("HTTP/1.1 421 "), "{absolute}");
        let climb = exchange(&addr, &format!("GET /a/..%2f..%2fetc/passwd HTTP/1.1\r\nHost: {addr}"));
        assert!(climb.starts_with("HTTP/1.1 403 "), "{climb}");
        let post = exchange(&addr, &format!("POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0"));
        assert!(post.starts_with("HTTP/1.1 405 ") && post.contains("allow: GET, HEAD, OPTIONS"), "{post}");
        let with_body = exchange(&addr, &format!("GET / HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 5\r\n\r\nabcde"));
        assert!(with_body.starts_with("HTTP/1.1 400 "), "{with_body}");

        let own = exchange(&addr, &format!("GET / HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}"));
        assert!(own.starts_with("HTTP/1.1 200 ") && !own.contains("access-control-allow-origin"), "{own}");
        let allowed = exchange(&addr, &format!("GET / HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://allowed.example:9"));
        assert!(allowed.contains("access-control-allow-origin: http://allowed.example:9\r\n"), "{allowed}");
        let refused = exchange(&addr, &format!("GET / HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://evil.example"));
        assert!(refused.starts_with("HTTP/1.1 403 ") && !refused.contains("access-control-allow-origin"), "{refused}");

        let preflight = "OPTIONS /manifest.json HTTP/1.1\r\nAccess-Control-Request-Method: GET\r\n\
                         Access-Control-Request-Private-Network: true";
        let allowed = exchange(&addr, &format!("{preflight}\r\nHost: {addr}\r\nOrigin: http://allowed.example:9"));
        assert!(allowed.starts_with("HTTP/1.1 204 "), "{allowed}");
        assert!(allowed.contains("access-control-allow-private-network: true\r\n"), "{allowed}");
        assert!(allowed.contains("access-control-allow-methods: GET, HEAD\r\n"), "{allowed}");
        let refused = exchange(&addr, &format!("{preflight}\r\nHost: {addr}\r\nOrigin: http://evil.example"));
        assert!(refused.starts_with("HTTP/1.1 403 ") && !refused.contains("access-control-allow"), "{refused}");
    }

    #[test]
    fn an_oversized_header_gets_431() {
        let addr = start();
        let mut stream = TcpStream::connect(&addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        stream.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
        let filler = "a".repeat(1 << 20);
        // The server may close while this is still being written: only the answer matters.
        let _ = write!(stream, "GET / HTTP/1.1\r\nHost: {addr}\r\nX-Big: {filler}\r\n\r\n");
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 431 "), "{answer}");
    }
}
