//! The local server behind `serve` and `--open`: serves a bundle directory on 127.0.0.1, so the
//! viewer shipped in it (or a hosted viewer on an origin given with `--allow-origin`) can fetch
//! the bundle's files. It runs on the hardened core in [`crate::http`].
//!
//! Files go out as they are on disk, streamed, with a content type from their extension and
//! never a `Content-Encoding`: the viewer decompresses `.zst` and `.gz` itself.
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

use crate::http::{self, Access, AllowedOrigins, Body, Handler, Request, Response, header};
use crate::media;
use crate::schema::ViewerFile;
use crate::viewer;
use tlparse_bundle::paths;
use tlparse_bundle::source::{BundlePath, ByteSource, DirSource};

/// The port tried first when none is given, then the next [`EXTRA_PORTS`] ones, then any free one.
pub const DEFAULT_PORT: u16 = 8000;
const EXTRA_PORTS: u16 = 20;
/// The largest viewer file served: the shipped ones are tens of KiB, and each is read whole to
/// be checked.
const MAX_VIEWER_FILE: u64 = 16 << 20;
/// When set, no browser is ever opened (the tests set it).
pub const NO_BROWSER_ENV: &str = "TLPARSE_NO_BROWSER";

/// How to serve.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// Listen on exactly this port (0: any free one); `None` tries [`DEFAULT_PORT`] and the next ones.
    pub port: Option<u16>,
    /// Open the viewer in the user's browser, where there is one.
    pub open_browser: bool,
    /// Other origins whose pages (a hosted viewer) may read the bundle.
    pub allowed_origins: AllowedOrigins,
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
/// (and possible), answers requests. Returns only on an error before or while starting.
pub fn serve(bundle: &Utf8Path, options: &ServeOptions) -> Result<(), ServeError> {
    if !bundle.join(paths::MANIFEST).is_file() {
        return Err(ServeError::NotABundle(bundle.to_owned()));
    }
    // Canonical, so that resolved request paths can be checked to stay under it.
    let root = bundle.as_std_path().canonicalize().map_err(|source| ServeError::Io { path: bundle.into(), source })?;
    let listener = listen(options.port)?;
    let addr =
        listener.local_addr().map_err(|source| ServeError::Listen { port: options.port.unwrap_or(0), source })?;
    let url = format!("http://{addr}/");
    let has_viewer = root.join(viewer::ENTRY).is_file();
    if !has_viewer {
        say!(
            "note: {bundle} ships no viewer (no index.html: built with --no-viewer or by an older tlparse-build); \
             its files are served as they are. Rebuild it without --no-viewer to get one."
        );
    }
    let viewer_refused = has_viewer.then(|| checked_viewer_file(&root, viewer::ENTRY).err()).flatten();
    if let Some(why) = &viewer_refused {
        say!("note: {bundle}'s viewer will not be served: {why}; `tlparse-build validate` tells more.");
    }
    if !options.allowed_origins.is_empty() {
        let origins = options.allowed_origins.to_strings().join(", ");
        say!("Pages of {origins} may read this bundle: give a hosted viewer the bundle URL {url}");
    }
    say!("Serving {} at {url} (Ctrl-C to stop)", root.display());

    // The listener is bound, so the browser's requests wait in its backlog until the server runs;
    // on its own thread, since a text browser blocks until it quits.
    if options.open_browser && has_viewer && viewer_refused.is_none() {
        let url = url.clone();
        std::thread::spawn(move || open_in_browser(&url, addr));
    }
    let access = Access { extra_hosts: Vec::new(), origins: options.allowed_origins.clone() };
    let files = BundleFiles { root: Arc::new(root) };
    http::run(listener, access, http::Limits::default(), files).map_err(|e| ServeError::Server(e.to_string()))
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

/// Answers requests with the files of the bundle at `root` (canonical).
struct BundleFiles {
    root: Arc<PathBuf>,
}

impl Handler for BundleFiles {
    async fn handle(&self, request: Request) -> Response<Body> {
        let root = Arc::clone(&self.root);
        // Resolving, opening and checking touch the disk: off the async threads.
        let answer = tokio::task::spawn_blocking(move || answer_to(&root, &request.path)).await;
        let mut response = match answer {
            Ok(Answer::File { file, len, content_type }) => {
                file_response(http::file_body(tokio::fs::File::from_std(file), len), len, content_type)
            }
            Ok(Answer::Checked { bytes, content_type }) => {
                let len = bytes.len() as u64;
                file_response(http::full(bytes), len, content_type)
            }
            Ok(Answer::Redirect(location)) => redirect(&location),
            Ok(Answer::Text(status, text)) => http::text(status, &text),
            Err(_) => http::text(500, "internal error\n"),
        };
        // Local files change under the same name whenever the bundle is rebuilt.
        response.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static(media::REVALIDATE));
        response
    }
}

/// What a request gets, worked out on a blocking thread.
enum Answer {
    /// A bundle file, opened, to stream.
    File {
        file: File,
        len: u64,
        content_type: &'static str,
    },
    /// A viewer file, read whole and checked against the manifest.
    Checked {
        bytes: Vec<u8>,
        content_type: &'static str,
    },
    Redirect(String),
    Text(u16, String),
}

/// The answer for `path` (decoded and normalized by the core).
fn answer_to(root: &Path, path: &str) -> Answer {
    let not_found = || Answer::Text(404, format!("not found: {}\n", shown(path)));
    match resolve(root, path) {
        Resolved::File(file) => match bundle_path(root, &file).filter(|rel| viewer::is_viewer_path(rel)) {
            Some(rel) => match checked_viewer_file(root, &rel) {
                Ok(bytes) => Answer::Checked { bytes, content_type: media::content_type(&file.to_string_lossy()) },
                Err(why) => Answer::Text(403, format!("refused: {why}\n")),
            },
            None => match File::open(&file).and_then(|opened| Ok((opened.metadata()?.len(), opened))) {
                Ok((len, opened)) => {
                    Answer::File { file: opened, len, content_type: media::data_content_type(&file.to_string_lossy()) }
                }
                Err(_) => not_found(),
            },
        },
        Resolved::Directory(location) => Answer::Redirect(location),
        Resolved::NotFound => not_found(),
        Resolved::Forbidden => Answer::Text(403, "forbidden: outside the bundle\n".into()),
    }
}

/// A request path for a message: escaped and cut short, since it is the client's text.
fn shown(path: &str) -> String {
    let short: String = path.chars().take(100).collect();
    short.escape_debug().to_string()
}

fn file_response(body: Body, len: u64, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    // Always a length, so the viewer can show progress and HEAD tells the size.
    headers.insert(header::CONTENT_LENGTH, len.into());
    response
}

/// A redirect within this origin: `location` is a normalized path, starting with exactly one `/`.
fn redirect(location: &str) -> Response<Body> {
    let mut response = http::text(301, "");
    match header::HeaderValue::from_str(location) {
        Ok(value) => _ = response.headers_mut().insert(header::LOCATION, value),
        Err(_) => *response.status_mut() = http::StatusCode::NOT_FOUND,
    }
    response.headers_mut().remove(header::CONTENT_TYPE);
    response
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

/// Maps a decoded request path to a file under `root`, which must be canonical. `..` is refused
/// outright, and so is anything that resolves (through symlinks) outside `root`. The path is
/// not decoded again: the core did that once.
fn resolve(root: &Path, path: &str) -> Resolved {
    let Some(path) = path.strip_prefix('/') else {
        return Resolved::NotFound;
    };
    let mut file = root.to_path_buf();
    let mut segments = Vec::new();
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
        segments.push(segment);
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
    if !segments.is_empty() && !path.ends_with('/') {
        // Rebuilt from the segments, so it starts with exactly one `/`: `//viewer` must not
        // send the browser to a host named `viewer`.
        return Resolved::Directory(format!("/{}/", segments.join("/")));
    }
    match real.join("index.html").canonicalize() {
        Ok(index) if !index.starts_with(root) => Resolved::Forbidden,
        Ok(index) if index.is_file() => Resolved::File(index),
        _ => Resolved::NotFound,
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
        say!(
            "(over SSH, no browser opened: forward the port with `ssh -L {port}:127.0.0.1:{port} HOST` and open the \
             URL on your machine)"
        );
        return;
    }
    // WSL has no display of its own but opens the Windows browser.
    let needs_display = cfg!(all(unix, not(target_os = "macos"))) && !is_set("WSL_DISTRO_NAME");
    if needs_display && !is_set("DISPLAY") && !is_set("WAYLAND_DISPLAY") {
        say!("(no display, no browser opened: open the URL in a browser)");
        return;
    }
    if let Err(e) = webbrowser::open(url) {
        say!("(could not open a browser: {e}; open the URL yourself)");
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
        assert_eq!(resolve(&root, "/viewer/app.js"), Resolved::File(root.join("viewer/app.js")));
        assert_eq!(resolve(&root, "/viewer"), Resolved::Directory("/viewer/".into()));
        assert_eq!(resolve(&root, "//viewer"), Resolved::Directory("/viewer/".into()), "never `//viewer/`");
        assert_eq!(resolve(&root, "/./viewer"), Resolved::Directory("/viewer/".into()));
        assert_eq!(resolve(&root, "/viewer/"), Resolved::NotFound, "no index.html there");
        assert_eq!(resolve(&root, "/missing.json"), Resolved::NotFound);
        assert_eq!(resolve(&root, "/viewer/%61pp.js"), Resolved::NotFound, "decoded once, by the core");
        for escape in ["/../secret", "/viewer/../../secret", "/viewer/a\\b"] {
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
}
