//! The local server behind `serve` and `--open`: serves a bundle directory on 127.0.0.1, so the
//! viewer shipped in it can fetch the bundle's files.
//!
//! Files go out as they are on disk, with a content type from their extension and never a
//! `Content-Encoding`: the viewer decompresses `.zst` and `.gz` itself.
//!
//! A bundle is untrusted, and its viewer runs as a page of this origin: a viewer file
//! (`index.html`, `viewer/...`) goes out only when the manifest lists it under `viewer` and its
//! bytes, read on each request, still have the listed size and blake3. Any other file that a
//! browser could run (HTML, JavaScript, SVG) goes out as plain text.

use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use percent_encoding::percent_decode_str;
use tiny_http::{Header, Method, Request, Response, ResponseBox, Server};

use crate::bundle::paths;
use crate::schema::ViewerFile;
use crate::viewer;
use tlparse_bundle::source::{BundlePath, ByteSource, DirSource};

/// The port tried first when none is given, then the next [`EXTRA_PORTS`] ones, then any free one.
pub const DEFAULT_PORT: u16 = 8000;
const EXTRA_PORTS: u16 = 20;
/// Threads answering requests: a viewer fetches a handful of files at once on load.
const WORKERS: usize = 8;
/// The largest viewer file served: the shipped ones are tens of KiB, and each is read whole to
/// be checked.
const MAX_VIEWER_FILE: u64 = 16 << 20;
/// When set, no browser is ever opened (the tests set it).
pub const NO_BROWSER_ENV: &str = "TLPARSE_NO_BROWSER";

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Listen on exactly this port (0: any free one); `None` tries [`DEFAULT_PORT`] and the next ones.
    pub port: Option<u16>,
    /// Open the viewer in the user's browser, where there is one.
    pub open_browser: bool,
}

/// Why a bundle could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0} is not a bundle (no manifest.json)")]
    NotABundle(Utf8PathBuf),
    #[error("{path}: {source}")]
    Io { path: Utf8PathBuf, source: io::Error },
    #[error("could not listen on 127.0.0.1:{port}: {source}")]
    Listen { port: u16, source: io::Error },
    #[error("could not start the server: {0}")]
    Server(String),
}

/// Serves `bundle` until the process is killed: prints the URL, opens it in a browser if asked
/// (and possible), answers requests on a few threads. Returns only on an error before serving.
pub fn serve(bundle: &Utf8Path, options: &ServeOptions) -> Result<(), ServeError> {
    if !bundle.join(paths::MANIFEST).is_file() {
        return Err(ServeError::NotABundle(bundle.to_owned()));
    }
    // Canonical, so that resolved request paths can be checked to stay under it.
    let root = bundle.as_std_path().canonicalize().map_err(|source| ServeError::Io { path: bundle.into(), source })?;
    let listener = listen(options.port)?;
    let addr =
        listener.local_addr().map_err(|source| ServeError::Listen { port: options.port.unwrap_or(0), source })?;
    let server = Arc::new(Server::from_listener(listener, None).map_err(|e| ServeError::Server(e.to_string()))?);
    let url = format!("http://{addr}/");
    let has_viewer = root.join(viewer::ENTRY).is_file();
    if !has_viewer {
        println!(
            "note: {bundle} ships no viewer (no index.html: built with --no-viewer or by an older tlparse-build); \
             its files are served as they are. Rebuild it without --no-viewer to get one."
        );
    }
    let viewer_refused = has_viewer.then(|| checked_viewer_file(&root, viewer::ENTRY).err()).flatten();
    if let Some(why) = &viewer_refused {
        println!("note: {bundle}'s viewer will not be served: {why}; `tlparse-build validate` tells more.");
    }
    println!("Serving {} at {url} (Ctrl-C to stop)", root.display());

    let root = Arc::new(root);
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (server, root) = (Arc::clone(&server), Arc::clone(&root));
            std::thread::spawn(move || {
                for request in server.incoming_requests() {
                    answer(&root, request);
                }
            })
        })
        .collect();
    // After the workers start: a text browser blocks until it quits, and must get its page.
    if options.open_browser && has_viewer && viewer_refused.is_none() {
        open_in_browser(&url, addr);
    }
    for worker in workers {
        let _ = worker.join();
    }
    Ok(())
}

fn listen(port: Option<u16>) -> Result<TcpListener, ServeError> {
    let bind = |port: u16| TcpListener::bind((Ipv4Addr::LOCALHOST, port));
    if let Some(port) = port {
        return bind(port).map_err(|source| ServeError::Listen { port, source });
    }
    let mut last_error = None;
    for port in (DEFAULT_PORT..=DEFAULT_PORT + EXTRA_PORTS).chain([0]) {
        match bind(port) {
            Ok(listener) => return Ok(listener),
            Err(source) => last_error = Some(ServeError::Listen { port, source }),
        }
    }
    Err(last_error.expect("at least one port was tried"))
}

fn answer(root: &Path, request: Request) {
    let response = match request.method() {
        Method::Get | Method::Head => respond_to(root, request.url()),
        _ => text_response(405, "only GET and HEAD are supported\n").with_header(header("Allow", "GET, HEAD")).boxed(),
    };
    // The client may have gone away; there is nobody to tell.
    let _ = request.respond(response.with_header(header("Cache-Control", "no-cache")));
}

fn respond_to(root: &Path, target: &str) -> ResponseBox {
    match resolve(root, target) {
        Resolved::File(path) => match bundle_path(root, &path).filter(|rel| viewer::is_viewer_path(rel)) {
            Some(rel) => match checked_viewer_file(root, &rel) {
                Ok(bytes) => file_response(Response::from_data(bytes), content_type(&path)),
                Err(why) => text_response(403, &format!("refused: {why}\n")).boxed(),
            },
            None => match File::open(&path) {
                Ok(file) => file_response(Response::from_file(file), data_content_type(&path)),
                Err(_) => text_response(404, &format!("not found: {target}\n")).boxed(),
            },
        },
        Resolved::Directory(location) => Response::empty(301).with_header(header("Location", &location)).boxed(),
        Resolved::NotFound => text_response(404, &format!("not found: {target}\n")).boxed(),
        Resolved::Forbidden => text_response(403, "forbidden: outside the bundle\n").boxed(),
    }
}

fn file_response<R: io::Read + Send + 'static>(response: Response<R>, content_type: &str) -> ResponseBox {
    response
        .with_header(header("Content-Type", content_type))
        .with_header(header("X-Content-Type-Options", "nosniff"))
        // Always a Content-Length (tiny_http would otherwise chunk files over 32 KiB), so the
        // viewer can show progress and HEAD tells the size.
        .with_chunked_threshold(usize::MAX)
        .boxed()
}

/// `path` (canonical, under the canonical `root`) as a bundle path, `/`-separated.
fn bundle_path(root: &Path, path: &Path) -> Option<String> {
    let parts: Option<Vec<&str>> = path.strip_prefix(root).ok()?.iter().map(|part| part.to_str()).collect();
    Some(parts?.join("/"))
}

/// The bytes of the viewer file at `rel`, if the manifest lists it and they still match; else
/// why not. Read on every request (viewer files are small), so a file replaced while serving is
/// refused too, and what goes out is exactly what was checked.
fn checked_viewer_file(root: &Path, rel: &str) -> Result<Vec<u8>, String> {
    let entry =
        listed_viewer_file(root, rel).ok_or_else(|| format!("{rel} is not a viewer file manifest.json lists"))?;
    let path = BundlePath::new(rel).map_err(|e| e.to_string())?;
    // At most one byte more than listed, so a grown file is refused without reading it all, and
    // never more than a viewer file could need, whatever size the manifest claims.
    let limit = entry.size.saturating_add(1).min(MAX_VIEWER_FILE);
    let bytes = DirSource::new(root).read(&path, limit).map_err(|e| e.to_string())?;
    match entry.mismatch(&bytes) {
        None => Ok(bytes),
        Some(mismatch) => Err(format!("{rel} changed since the build ({mismatch})")),
    }
}

/// The manifest's `viewer` entry for `rel`; `None` when the manifest is unreadable or lists no
/// such file. Only `viewer` is parsed, the rest of the manifest skipped.
fn listed_viewer_file(root: &Path, rel: &str) -> Option<ViewerFile> {
    #[derive(serde::Deserialize)]
    struct ViewerOnly {
        #[serde(default)]
        viewer: Option<Vec<ViewerFile>>,
    }
    let manifest = BundlePath::new(paths::MANIFEST).ok()?;
    let bytes = DirSource::new(root).read(&manifest, tlparse_bundle::reader::Limits::default().manifest).ok()?;
    let parsed: ViewerOnly = serde_json::from_slice(&bytes).ok()?;
    parsed.viewer?.into_iter().find(|f| f.path == rel)
}

fn text_response(status: u16, body: &str) -> Response<io::Cursor<Vec<u8>>> {
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("header names and values are ASCII")
}

/// What a request path names.
#[derive(Debug, PartialEq, Eq)]
enum Resolved {
    /// A file under the root (a directory's index.html for a directory).
    File(PathBuf),
    /// A directory asked for without its trailing slash: redirect there, so the page's relative
    /// links resolve inside it.
    Directory(String),
    NotFound,
    Forbidden,
}

/// Maps a request target (`/path?query`, percent-encoded) to a file under `root`, which must be
/// canonical. `..` is refused outright, and so is anything that resolves (through symlinks)
/// outside `root`.
fn resolve(root: &Path, target: &str) -> Resolved {
    let raw_path = target.split(['?', '#']).next().unwrap_or_default();
    let Some(raw_path) = raw_path.strip_prefix('/') else {
        return Resolved::NotFound;
    };
    let Ok(path) = percent_decode_str(raw_path).decode_utf8() else {
        return Resolved::NotFound;
    };
    let mut file = root.to_path_buf();
    for segment in path.split('/') {
        match segment {
            "" | "." => continue,
            ".." => return Resolved::Forbidden,
            _ => {}
        }
        // Exactly one plain name: no drive prefix, root or separator the OS would read in it.
        let mut components = Path::new(segment).components();
        let plain_name = matches!((components.next(), components.next()), (Some(Component::Normal(_)), None));
        if !plain_name || segment.contains(['\\', '\0']) {
            return Resolved::Forbidden;
        }
        file.push(segment);
    }
    let Ok(real) = file.canonicalize() else {
        return Resolved::NotFound;
    };
    if !real.starts_with(root) {
        return Resolved::Forbidden;
    }
    if !real.is_dir() {
        return Resolved::File(real);
    }
    if !raw_path.is_empty() && !raw_path.ends_with('/') {
        return Resolved::Directory(format!("/{raw_path}/"));
    }
    match real.join("index.html").canonicalize() {
        Ok(index) if !index.starts_with(root) => Resolved::Forbidden,
        Ok(index) if index.is_file() => Resolved::File(index),
        _ => Resolved::NotFound,
    }
}

/// The content type of a bundle or viewer file, by extension. Compressed files keep their own
/// type (no `Content-Encoding`): the viewer decompresses them.
fn content_type(path: &Path) -> &'static str {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
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

/// The content type of a file that is not the viewer's: never one a browser runs, since only
/// the checked viewer may run as a page of this origin. The format's own files are JSON or
/// compressed, and keep their type.
fn data_content_type(path: &Path) -> &'static str {
    match content_type(path) {
        "text/html; charset=utf-8" | "text/javascript; charset=utf-8" | "image/svg+xml" => "text/plain; charset=utf-8",
        other => other,
    }
}

/// Opens `url` in the user's browser unless [`NO_BROWSER_ENV`] is set or there is evidently no
/// browser to open (over SSH, or no display on Linux). Never fails: the URL is printed already.
fn open_in_browser(url: &str, addr: SocketAddr) {
    if std::env::var_os(NO_BROWSER_ENV).is_some() {
        return;
    }
    let is_set = |var: &str| std::env::var_os(var).is_some_and(|v| !v.is_empty());
    if is_set("SSH_CONNECTION") || is_set("SSH_CLIENT") || is_set("SSH_TTY") {
        let port = addr.port();
        println!(
            "(over SSH, no browser opened: forward the port with `ssh -L {port}:127.0.0.1:{port} HOST` and open the \
             URL on your machine)"
        );
        return;
    }
    // WSL has no display of its own but opens the Windows browser.
    let needs_display = cfg!(all(unix, not(target_os = "macos"))) && !is_set("WSL_DISTRO_NAME");
    if needs_display && !is_set("DISPLAY") && !is_set("WAYLAND_DISPLAY") {
        println!("(no display, no browser opened: open the URL in a browser)");
        return;
    }
    if let Err(e) = webbrowser::open(url) {
        println!("(could not open a browser: {e}; open the URL yourself)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_serves_files_and_indexes_and_refuses_to_leave_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bundle/viewer")).unwrap();
        let root = dir.path().join("bundle").canonicalize().unwrap();
        std::fs::write(root.join("index.html"), "<html>").unwrap();
        std::fs::write(root.join("viewer/app.js"), "").unwrap();
        std::fs::write(dir.path().join("secret"), "").unwrap();

        assert_eq!(resolve(&root, "/"), Resolved::File(root.join("index.html")));
        assert_eq!(resolve(&root, "/?x=1"), Resolved::File(root.join("index.html")));
        assert_eq!(resolve(&root, "/viewer/app.js"), Resolved::File(root.join("viewer/app.js")));
        assert_eq!(resolve(&root, "/viewer/%61pp.js"), Resolved::File(root.join("viewer/app.js")));
        assert_eq!(resolve(&root, "/viewer"), Resolved::Directory("/viewer/".into()));
        assert_eq!(resolve(&root, "/viewer/"), Resolved::NotFound, "no index.html there");
        assert_eq!(resolve(&root, "/missing.json"), Resolved::NotFound);
        for escape in ["/../secret", "/%2e%2e/secret", "/viewer/..%2F..%2Fsecret", "/viewer/%2E%2E/../secret"] {
            assert_eq!(resolve(&root, escape), Resolved::Forbidden, "{escape}");
        }
        assert_eq!(resolve(&root, "//secret"), Resolved::NotFound, "an absolute path stays under the root");
        assert_eq!(resolve(&root, "http://host/secret"), Resolved::NotFound);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret"), root.join("link")).unwrap();
            assert_eq!(resolve(&root, "/link"), Resolved::Forbidden);
        }
    }

    #[test]
    fn content_types_by_extension() {
        for (name, expected) in [
            ("index.html", "text/html; charset=utf-8"),
            ("viewer/app.mjs", "text/javascript; charset=utf-8"),
            ("viewer/fzstd.js", "text/javascript; charset=utf-8"),
            ("manifest.json", "application/json"),
            ("diagnostics.jsonl", "application/jsonl"),
            ("tables/log0/failures.json.zst", "application/zstd"),
            ("traces/log0.json.gz", "application/gzip"),
            ("LICENSE", "application/octet-stream"),
        ] {
            assert_eq!(content_type(Path::new(name)), expected, "{name}");
        }
    }
}
