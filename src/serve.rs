//! The local server behind `serve` and `--open`: serves a bundle directory on 127.0.0.1, so the
//! viewer shipped in it (or a hosted viewer on an origin given with `--allow-origin`) can fetch
//! the bundle's files. It runs on the hardened core in [`crate::http`].
//!
//! Files go out as they are on disk, streamed, with a content type from their extension and
//! never a `Content-Encoding`: the viewer decompresses `.zst` and `.gz` itself.
//!
//! Only what the bundle's manifest lists goes out ([`listing`]): nothing else in the folder (a
//! Pages site's `.git` or `CNAME`, a stray file) is served. Files answer `Range` and
//! `If-None-Match` as static servers do ([`http::conditional`]).
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

use crate::http::{self, Access, AllowedOrigins, Body, Handler, Request, Response, conditional, header};
use crate::media;
use crate::schema::ViewerFile;
use listing::{Listed, Listing, Listings};

mod listing;
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
    #[error("{bundle} is not a bundle: {why}")]
    BadManifest { bundle: Utf8PathBuf, why: String },
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
    let listing = Listing::read(&root).map_err(|why| ServeError::BadManifest { bundle: bundle.to_owned(), why })?;
    let has_viewer = listing.has_viewer() && root.join(viewer::ENTRY).is_file();
    if !has_viewer {
        say!(
            "note: {bundle} ships no viewer (no index.html: built with --no-viewer or by an older tlparse-build); \
             its files are served as they are. Rebuild it without --no-viewer to get one."
        );
    }
    let viewer_refused = match listing.get(viewer::ENTRY) {
        Listed::Viewer(entry) if has_viewer => checked_viewer_file(&root, entry).err(),
        _ => None,
    };
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
    let listings = Arc::new(Listings::new(root.clone(), listing));
    let files = BundleFiles { root: Arc::new(root), listings };
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

/// Answers requests with the files of the bundle at `root` (canonical) that its manifest lists.
struct BundleFiles {
    root: Arc<PathBuf>,
    listings: Arc<Listings>,
}

impl Handler for BundleFiles {
    async fn handle(&self, request: Request) -> Response<Body> {
        let (root, listings) = (Arc::clone(&self.root), Arc::clone(&self.listings));
        let path = request.path;
        // Resolving, opening and checking touch the disk: off the async threads.
        let answer = tokio::task::spawn_blocking(move || answer_to(&root, &path, listings.current())).await;
        let mut response = match answer {
            Ok(Answer::File { file, len, content_type, etag }) => {
                file_response(file, len, content_type, &etag, &request.headers)
            }
            Ok(Answer::Checked { bytes, content_type, etag }) => {
                checked_response(bytes, content_type, &etag, &request.headers)
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
        etag: String,
    },
    /// A viewer file, read whole and checked against the manifest.
    Checked {
        bytes: Vec<u8>,
        content_type: &'static str,
        etag: String,
    },
    Redirect(String),
    Text(u16, String),
}

/// The answer for `path` (decoded and normalized by the core), given the manifest's listing.
fn answer_to(root: &Path, path: &str, listing: Result<Arc<Listing>, String>) -> Answer {
    let listing = match listing {
        Ok(listing) => listing,
        Err(why) => return Answer::Text(503, format!("refused: the bundle's manifest is unreadable now: {why}\n")),
    };
    let rel = path.trim_start_matches('/');
    let rel = if rel.is_empty() || rel.ends_with('/') { format!("{rel}{}", viewer::ENTRY) } else { rel.to_string() };
    match listing.get(&rel) {
        Listed::File => open_listed(root, path, &rel),
        Listed::Viewer(_) if !root.join(&rel).is_file() => Answer::Text(404, format!("not found: {}\n", shown(path))),
        Listed::Viewer(entry) => match checked_viewer_file(root, entry) {
            Ok(bytes) => Answer::Checked {
                bytes,
                content_type: media::content_type(&rel),
                etag: format!("\"{}\"", entry.blake3),
            },
            Err(why) => Answer::Text(403, format!("refused: {why}\n")),
        },
        // The viewer's folder holds no page of its own: its page is the bundle's root.
        Listed::Unlisted if (rel == "viewer" || rel == "viewer/index.html") && listing.has_viewer() => {
            Answer::Redirect("/".into())
        }
        Listed::Unlisted if viewer::is_viewer_path(&rel) => {
            Answer::Text(403, format!("refused: {} is not a viewer file manifest.json lists\n", shown(&rel)))
        }
        Listed::Unlisted => {
            Answer::Text(404, format!("not found: {} is not a file of this bundle's manifest\n", shown(path)))
        }
    }
}

/// The listed bundle file `rel`, opened, if it is a file under `root` (no symlink out of it).
fn open_listed(root: &Path, path: &str, rel: &str) -> Answer {
    let Resolved::File(file) = resolve(root, rel) else {
        return Answer::Text(404, format!("not found: {}\n", shown(path)));
    };
    // Only a regular file (`file` is resolved already): a FIFO in a bundle's place (a downloaded
    // bundle is anyone's) is a 404, not a request left waiting.
    match tlparse_bundle::source::open_regular(&file).and_then(|opened| Ok((opened.metadata()?, opened))) {
        Ok((metadata, opened)) => Answer::File {
            len: metadata.len(),
            etag: file_etag(&metadata),
            file: opened,
            content_type: media::data_content_type(rel),
        },
        _ => Answer::Text(404, format!("not found: {}\n", shown(path))),
    }
}

/// A tag that changes whenever the file is replaced or rewritten, as static servers make them:
/// its modification time, size and inode.
fn file_etag(metadata: &std::fs::Metadata) -> String {
    let modified = metadata.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(metadata);
    #[cfg(not(unix))]
    let inode = 0;
    format!("\"{:x}-{:x}-{inode:x}\"", modified.map_or(0, |t| t.as_nanos()), metadata.len())
}

/// A request path for a message: escaped and cut short, since it is the client's text.
fn shown(path: &str) -> String {
    let short: String = path.chars().take(100).collect();
    short.escape_debug().to_string()
}

/// The answer with `file` (`len` bytes): whole, a 304, a range of it, or a 416.
fn file_response(
    mut file: File,
    len: u64,
    content_type: &'static str,
    etag: &str,
    request: &http::HeaderMap,
) -> Response<Body> {
    use std::io::{Seek, SeekFrom};
    let (start, part) = match conditional::plan(request, etag, len) {
        conditional::Answer::NotModified => return conditional::not_modified(etag),
        conditional::Answer::Unsatisfiable => return conditional::unsatisfiable(len),
        conditional::Answer::Whole => (0, len),
        conditional::Answer::Part { start, len } => (start, len),
    };
    if file.seek(SeekFrom::Start(start)).is_err() {
        return http::text(500, "internal error\n");
    }
    let body = http::file_body(tokio::fs::File::from_std(file), part);
    with_length(body, len, content_type, etag, (start, part))
}

/// The answer with a checked viewer file: whole, a 304, a range of it, or a 416.
fn checked_response(
    bytes: Vec<u8>,
    content_type: &'static str,
    etag: &str,
    request: &http::HeaderMap,
) -> Response<Body> {
    let len = bytes.len() as u64;
    let (start, part) = match conditional::plan(request, etag, len) {
        conditional::Answer::NotModified => return conditional::not_modified(etag),
        conditional::Answer::Unsatisfiable => return conditional::unsatisfiable(len),
        conditional::Answer::Whole => (0, len),
        conditional::Answer::Part { start, len } => (start, len),
    };
    let body = http::full(bytes::Bytes::from(bytes).slice(start as usize..(start + part) as usize));
    with_length(body, len, content_type, etag, (start, part))
}

/// A 200 with `body` (a file of `len` bytes), or a 206 when `body` is only `part` of it.
fn with_length(body: Body, len: u64, content_type: &'static str, etag: &str, part: (u64, u64)) -> Response<Body> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    // Always a length, so the viewer can show progress and HEAD tells the size.
    headers.insert(header::CONTENT_LENGTH, len.into());
    conditional::add_file_headers(headers, etag);
    if part != (0, len) {
        conditional::mark_partial(&mut response, part.0, part.1, len);
    }
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

/// The bytes of the viewer file `entry` lists, if they still match it; else why not. Read on
/// every request (viewer files are small), so a file replaced while serving is refused too, and
/// what goes out is exactly what was checked.
fn checked_viewer_file(root: &Path, entry: &ViewerFile) -> Result<Vec<u8>, String> {
    let rel = &entry.path;
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

/// What a listed path is on disk.
#[derive(Debug, PartialEq, Eq)]
enum Resolved {
    /// A file or directory under the root.
    File(PathBuf),
    NotFound,
    Forbidden,
}

/// Maps a bundle path (`/`-separated, relative) to what it names under `root`, which must be
/// canonical. `..` is refused outright, and so is anything that resolves (through symlinks)
/// outside `root`.
fn resolve(root: &Path, rel: &str) -> Resolved {
    let mut file = root.to_path_buf();
    for segment in rel.split('/') {
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
    match file.canonicalize() {
        Ok(real) if real.starts_with(root) => Resolved::File(real),
        Ok(_) => Resolved::Forbidden,
        Err(_) => Resolved::NotFound,
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

    /// A FIFO where the manifest lists a file is a 404 at once, not a request left waiting.
    #[cfg(unix)]
    #[test]
    fn a_fifo_in_place_of_a_listed_file_is_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let c = std::ffi::CString::new(root.join("pack.zst").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (sent, answered) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            sent.send(matches!(open_listed(&root, "/pack.zst", "pack.zst"), Answer::Text(404, _)))
        });
        assert_eq!(answered.recv_timeout(std::time::Duration::from_secs(5)), Ok(true));
    }

    #[test]
    fn resolve_stays_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bundle/viewer")).unwrap();
        let root = dir.path().join("bundle").canonicalize().unwrap();
        std::fs::write(root.join("viewer/app.js"), "").unwrap();
        std::fs::write(dir.path().join("secret"), "").unwrap();

        assert_eq!(resolve(&root, "viewer/app.js"), Resolved::File(root.join("viewer/app.js")));
        assert_eq!(resolve(&root, "missing.json"), Resolved::NotFound);
        assert_eq!(resolve(&root, "viewer/%61pp.js"), Resolved::NotFound, "decoded once, by the core");
        for escape in ["../secret", "viewer/../../secret", "viewer/a\\b"] {
            assert_eq!(resolve(&root, escape), Resolved::Forbidden, "{escape}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret"), root.join("link")).unwrap();
            assert_eq!(resolve(&root, "link"), Resolved::Forbidden);
        }
    }
}
