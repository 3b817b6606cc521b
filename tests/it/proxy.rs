//! `proxy` against an HTTP upstream (a tiny static server in this process, on 127.0.0.1): every
//! file of a real bundle read through it byte for byte, the paths it refuses before asking the
//! upstream, CORS, the token, the pack cache with the upstream gone, and the attacks the server
//! core must survive. The S3 upstream is tested by tests/share/proxy-s3.sh (beside moto).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::server_process::{HttpResponse, ServerProcess, exchange};
use crate::util::{build, fixture, read_tree};

const ALLOWED: &str = "http://viewer.test:8000";
const PREFIX: &str = "team/job-1";

/// Runs `tlparse-build proxy` of `upstream` for pages of [`ALLOWED`], on a free port.
fn start_proxy(upstream: &str, extra: &[&str]) -> ServerProcess {
    let mut args = vec!["proxy", upstream, "--allow-origin", ALLOWED, "--port", "0"];
    args.extend_from_slice(extra);
    ServerProcess::start_proxy(&args)
}

/// A static file server for the proxy to read from: files under `root`, GET and HEAD, one
/// connection at a time, each closed after its answer. Records the paths asked.
struct StaticServer {
    port: u16,
    stopped: Arc<AtomicBool>,
    asked: Arc<Mutex<Vec<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StaticServer {
    fn start(root: PathBuf) -> StaticServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stopped = Arc::new(AtomicBool::new(false));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (stop, log) = (Arc::clone(&stopped), Arc::clone(&asked));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    let _ = serve_one(&root, stream, &log);
                }
            }
        });
        StaticServer { port, stopped, asked, thread: Some(thread) }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops accepting and closes the listening socket: the port then refuses connections.
    fn stop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve_one(root: &Path, mut stream: TcpStream, asked: &Mutex<Vec<String>>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
    }
    let mut parts = request_line.split(' ');
    let (method, target) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    asked.lock().unwrap().push(target.to_string());
    let file = root.join(target.trim_start_matches('/'));
    match std::fs::read(&file) {
        Ok(bytes) if file.is_file() && !target.contains("..") => {
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", bytes.len())?;
            if method == "GET" {
                stream.write_all(&bytes)?;
            }
        }
        _ => write!(stream, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?,
    }
    stream.flush()
}

/// One HTTP/1.1 request on its own connection (`Connection: close`, so the body ends at EOF),
/// the target sent exactly as given. `extra` headers may replace `Host`.
fn request(addr: &str, method: &str, target: &str, extra: &[(&str, &str)]) -> HttpResponse {
    let mut head = format!("{method} {target} HTTP/1.1");
    if !extra.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("\r\nHost: {addr}"));
    }
    for (name, value) in extra {
        head.push_str(&format!("\r\n{name}: {value}"));
    }
    exchange(addr, &head)
}

/// A validated bundle of a two-rank fixture (cross-rank tables, traces, viewer), copied under
/// `upstream/team/job-1/` beside a file that is no bundle's, and its files.
fn upstream_with_bundle() -> (tempfile::TempDir, PathBuf, BTreeMap<String, Vec<u8>>) {
    let (dir, bundle, _) = build(&fixture("tlparse-tests/multi_rank_logs"));
    let files = read_tree(&bundle);
    let root = dir.path().join("upstream");
    for (path, bytes) in &files {
        let to = root.join(PREFIX).join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    std::fs::write(root.join("team/secret.txt"), "not a bundle file").unwrap();
    std::fs::write(root.join(PREFIX).join("tables/notes.txt"), "not a bundle file").unwrap();
    (dir, root, files)
}

fn expected_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap() {
        "json" => "application/json",
        "jsonl" => "application/jsonl",
        "zst" => "application/zstd",
        "gz" => "application/gzip",
        "css" => "text/css; charset=utf-8",
        "html" | "js" => "text/plain; charset=utf-8",
        other => panic!("a bundle file with extension {other}: {path}"),
    }
}

#[test]
fn reads_every_file_of_a_bundle_and_nothing_else_from_an_http_upstream() {
    let (_dir, root, files) = upstream_with_bundle();
    let upstream_root = root.clone();
    let upstream = StaticServer::start(root);
    let proxy = start_proxy(&upstream.url(), &[]);
    assert!(files.keys().any(|p| p.starts_with("tables/cross_rank/")) && files.len() > 60, "{}", files.len());
    for (path, bytes) in &files {
        let response = proxy.get(&format!("/{PREFIX}/{path}"));
        assert_eq!(response.status, 200, "{path}: {}", response.text());
        assert!(response.body == *bytes, "{path}: other bytes than the bundle's");
        assert_eq!(response.header("content-type"), Some(expected_type(path)), "{path}");
        assert_eq!(response.header("content-security-policy"), Some("sandbox"), "{path}");
        assert_eq!(response.header("x-content-type-options"), Some("nosniff"), "{path}");
        let caching = if path.starts_with("blobs/packs/") { "public, max-age=31536000, immutable" } else { "no-cache" };
        assert_eq!(response.header("cache-control"), Some(caching), "{path}");
    }
    let head = request(&proxy.addr, "HEAD", &format!("/{PREFIX}/manifest.json"), &[]);
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), Some(files["manifest.json"].len().to_string().as_str()));
    assert!(head.body.is_empty());

    let unlisted = proxy.get(&format!("/{PREFIX}/stacks/rank9.json"));
    assert_eq!(unlisted.status, 404);
    assert!(unlisted.text().starts_with("refused: "), "{}", unlisted.text());
    std::fs::remove_file(upstream_root.join(PREFIX).join("diagnostics.jsonl")).unwrap();
    let missing = proxy.get(&format!("/{PREFIX}/diagnostics.jsonl"));
    assert_eq!((missing.status, missing.text()), (404, format!("not found upstream: /{PREFIX}/diagnostics.jsonl\n")));

    let asked_before = upstream.asked.lock().unwrap().len();
    for (target, status) in [
        ("/", 404),
        ("/team/", 404),
        (&format!("/{PREFIX}/")[..], 404),
        (&format!("/{PREFIX}/blobs/packs/")[..], 404),
        ("/team/secret.txt", 404),
        (&format!("/{PREFIX}/tables/notes.txt")[..], 404),
        (&format!("/{PREFIX}/../secret.txt")[..], 403),
        ("/team/job-1/..%2fsecret.txt", 403),
        ("/team/%2e%2e/team/secret.txt", 403),
        ("/.git/manifest.json", 404),
        ("/team/job%201/manifest.json", 404),
    ] {
        let refused = proxy.get(target);
        assert_eq!(refused.status, status, "{target}: {}", refused.text());
        assert!(refused.text().starts_with("refused: "), "{target}: {}", refused.text());
    }
    assert_eq!(upstream.asked.lock().unwrap().len(), asked_before, "refused paths never reach the upstream");
}

#[test]
fn serves_only_what_a_bundle_lists_and_never_a_forged_pack() {
    let (_dir, root, files) = upstream_with_bundle();
    // Objects named like bundle files that no bundle lists.
    std::fs::create_dir_all(root.join("private/config")).unwrap();
    std::fs::write(root.join("private/config/manifest.json"), r#"{"database_password": "hunter2"}"#).unwrap();
    std::fs::create_dir_all(root.join("other-app")).unwrap();
    std::fs::write(root.join("other-app/index.html"), "<h1>hunter2</h1>").unwrap();
    std::fs::write(root.join(PREFIX).join("tables/rank0/unlisted.json.zst"), "hunter2").unwrap();
    // A pack the manifest lists, whose bytes upstream differ from those its name hashes.
    let mut packs = files.keys().filter(|path| path.starts_with("blobs/packs/"));
    let (forged, intact) = (packs.next().unwrap(), packs.next().unwrap());
    std::fs::write(root.join(PREFIX).join(forged), "hunter2 forged bytes").unwrap();
    let upstream = StaticServer::start(root);
    let proxy = start_proxy(&upstream.url(), &[]);

    for target in [
        "/private/config/manifest.json".to_string(),
        "/other-app/index.html".into(),
        format!("/{PREFIX}/tables/rank0/unlisted.json.zst"),
    ] {
        let refused = proxy.get(&target);
        assert_eq!(refused.status, 404, "{target}: {}", refused.text());
        assert!(refused.text().starts_with("refused: ") && !refused.text().contains("hunter2"), "{target}");
    }
    let forged_answer = proxy.get(&format!("/{PREFIX}/{forged}"));
    assert_eq!(forged_answer.status, 502, "{}", forged_answer.text());
    assert_eq!(forged_answer.text(), "upstream failed: the pack's bytes do not match its name\n");
    assert_ne!(forged_answer.header("cache-control"), Some("public, max-age=31536000, immutable"));
    let intact_answer = proxy.get(&format!("/{PREFIX}/{intact}"));
    assert_eq!(intact_answer.status, 200);
    assert_eq!(intact_answer.header("cache-control"), Some("public, max-age=31536000, immutable"));
    assert!(intact_answer.body == files[intact]);
}

#[test]
fn cors_only_for_allowed_origins_and_a_token_when_given() {
    let (dir, root, files) = upstream_with_bundle();
    let token = "b7f0c1e2d3a4958677f1e2d3c4b5a697";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let upstream = StaticServer::start(root);
    let proxy = start_proxy(&upstream.url(), &["--token-file", token_file.to_str().unwrap()]);
    let manifest = format!("/{PREFIX}/manifest.json");
    let bearer = format!("Bearer {token}");

    let allowed = request(&proxy.addr, "GET", &manifest, &[("Origin", ALLOWED), ("Authorization", &bearer)]);
    assert_eq!(allowed.status, 200, "{}", allowed.text());
    assert_eq!(allowed.header("access-control-allow-origin"), Some(ALLOWED));
    assert!(allowed.body == files["manifest.json"]);
    let foreign = request(&proxy.addr, "GET", &manifest, &[("Origin", "http://evil.test"), ("Authorization", &bearer)]);
    assert_eq!(foreign.status, 403);
    assert_eq!(foreign.header("access-control-allow-origin"), None);
    assert!(!foreign.text().contains("tlparse-bundle"), "no bundle bytes for a foreign origin");

    for authorization in
        [None, Some("Bearer wrong-token-wrong-token-00"), Some(token), Some(&format!("Basic {token}")[..])]
    {
        let headers: Vec<(&str, &str)> =
            [("Origin", ALLOWED)].into_iter().chain(authorization.map(|a| ("Authorization", a))).collect();
        let refused = request(&proxy.addr, "GET", &manifest, &headers);
        assert_eq!(refused.status, 401, "{authorization:?}");
        assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
        assert_eq!(refused.header("access-control-allow-origin"), Some(ALLOWED), "the viewer may read why");
    }
    // A preflight carries no credentials: it is answered without the token.
    let preflight = request(
        &proxy.addr,
        "OPTIONS",
        &manifest,
        &[
            ("Origin", ALLOWED),
            ("Access-Control-Request-Method", "GET"),
            ("Access-Control-Request-Headers", "authorization"),
        ],
    );
    assert_eq!(preflight.status, 204);
    assert_eq!(preflight.header("access-control-allow-origin"), Some(ALLOWED));
    assert!(preflight.header("access-control-allow-headers").is_some_and(|h| h.contains("Authorization")));
    let foreign_preflight = request(
        &proxy.addr,
        "OPTIONS",
        &manifest,
        &[("Origin", "http://evil.test"), ("Access-Control-Request-Method", "GET")],
    );
    assert_eq!(foreign_preflight.header("access-control-allow-origin"), None);
}

#[test]
fn packs_stay_served_from_the_cache_when_the_upstream_goes_down() {
    let (_dir, root, files) = upstream_with_bundle();
    let mut upstream = StaticServer::start(root);
    let proxy = start_proxy(&upstream.url(), &[]);
    let (pack, bytes) = files.iter().find(|(path, _)| path.starts_with("blobs/packs/")).unwrap();
    let first = proxy.get(&format!("/{PREFIX}/{pack}"));
    assert_eq!((first.status, first.header("x-proxy-cache")), (200, Some("miss")));
    assert!(first.body == *bytes);
    upstream.stop();

    let cached = proxy.get(&format!("/{PREFIX}/{pack}"));
    assert_eq!((cached.status, cached.header("x-proxy-cache")), (200, Some("hit")), "{}", cached.text());
    assert!(cached.body == *bytes);
    let down = proxy.get(&format!("/{PREFIX}/manifest.json"));
    assert_eq!((down.status, down.text()), (502, "upstream failed: could not connect\n".to_string()));
    let other_pack = files.keys().filter(|path| path.starts_with("blobs/packs/")).nth(1).unwrap();
    assert_eq!(proxy.get(&format!("/{PREFIX}/{other_pack}")).status, 502, "an uncached pack needs the upstream");
    assert!(proxy.stderr.lock().unwrap().contains("upstream failed: could not connect"));
}

#[test]
fn answers_the_host_names_it_is_given_and_no_other() {
    let (_dir, root, files) = upstream_with_bundle();
    let upstream = StaticServer::start(root);
    let proxy = start_proxy(&upstream.url(), &["--allow-host", "proxy.test", "--allow-host", "proxy.test:8443"]);
    let manifest = format!("/{PREFIX}/manifest.json");
    for host in ["proxy.test", "PROXY.test:8443"] {
        let response = request(&proxy.addr, "GET", &manifest, &[("Host", host)]);
        assert_eq!(response.status, 200, "{host}");
        assert!(response.body == files["manifest.json"], "{host}");
    }
    for host in ["proxy.test:1", "other.test", "proxy.test.attacker.example"] {
        assert_eq!(request(&proxy.addr, "GET", &manifest, &[("Host", host)]).status, 421, "{host}");
    }
    // Behind a TLS reverse proxy, pages of https://proxy.test are the proxy's own: no CORS needed.
    let own = request(&proxy.addr, "GET", &manifest, &[("Host", "proxy.test"), ("Origin", "https://proxy.test")]);
    assert_eq!((own.status, own.header("access-control-allow-origin")), (200, None));
}

#[test]
fn bounds_the_size_of_upstream_files() {
    let (_dir, root, files) = upstream_with_bundle();
    let upstream = StaticServer::start(root);
    let proxy = start_proxy(&upstream.url(), &["--max-file-mb", "0"]);
    let manifest = proxy.get(&format!("/{PREFIX}/manifest.json"));
    let size = files["manifest.json"].len();
    assert_eq!(manifest.status, 502);
    assert_eq!(manifest.text(), format!("upstream file is {size} bytes, over the proxy's limit of 0\n"));
}

/// A bundle manifest that lists `stacks/rank0.json`, as an HTTP answer.
const SMALL_MANIFEST: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 70\r\n\r\n\
    {\"format\": \"tlparse-bundle\", \"files\": [{\"path\": \"stacks/rank0.json\"}]}";

/// An upstream that stalls: accepts, reads the request, then sends `answer` (maybe nothing) and
/// stays silent, holding every connection open for a minute at most. With `with_manifest`, it
/// answers requests of a manifest with [`SMALL_MANIFEST`] instead.
fn stalling_upstream(answer: &'static [u8], with_manifest: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let (started, mut held) = (Instant::now(), Vec::new());
        while started.elapsed() < Duration::from_secs(60) {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    stream.set_nonblocking(false).unwrap();
                    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    let mut request = [0u8; 4096];
                    let read = stream.read(&mut request).unwrap_or(0);
                    let asks_manifest = String::from_utf8_lossy(&request[..read]).contains("manifest.json HTTP");
                    let _ = stream.write_all(if with_manifest && asks_manifest { SMALL_MANIFEST } else { answer });
                    held.push(stream);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    url
}

#[test]
fn a_silent_upstream_is_a_502_and_one_stalling_mid_file_cuts_the_body() {
    let proxy = start_proxy(&stalling_upstream(b"", false), &["--upstream-timeout", "1"]);
    let started = Instant::now();
    let silent = proxy.get("/job/manifest.json");
    let waited = started.elapsed();
    assert_eq!((silent.status, silent.text()), (502, "upstream failed: timed out\n".to_string()));
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    eprintln!("a silent upstream (1 s timeout, one retry) answered 502 after {waited:?}");

    let half = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{\"format\": \"tlparse-bundle\"";
    let proxy = start_proxy(&stalling_upstream(half, true), &["--upstream-timeout", "1"]);
    let started = Instant::now();
    let cut = proxy.get("/job/stacks/rank0.json");
    assert_eq!(cut.status, 200, "the headers went out before the stall");
    assert_eq!(cut.header("content-length"), Some("100000"));
    assert!(cut.body.len() < 100000, "the body is cut short, never padded: {} bytes", cut.body.len());
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

/// A loopback port with nothing listening: connections to it are refused at once.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn upstream_failures_are_named_for_what_they_are() {
    // What S3 answers a request sent to the wrong region: a redirect without a Location.
    let redirect = b"HTTP/1.1 301 Moved Permanently\r\nContent-Length: 0\r\n\r\n";
    let proxy = start_proxy(&stalling_upstream(redirect, false), &["--upstream-timeout", "2"]);
    let redirected = proxy.get("/job/manifest.json");
    assert_eq!(redirected.status, 502);
    let text = redirected.text();
    assert!(text.contains("a redirect") && !text.contains("denied"), "{text}");

    // No credentials in the environment: the S3 client asks the instance metadata service (here
    // a closed loopback port), which is no reason to call the bucket unreachable.
    let endpoint = format!("http://127.0.0.1:{}", closed_port());
    let metadata = format!("http://127.0.0.1:{}", closed_port());
    let env = [
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_METADATA_ENDPOINT", metadata.as_str()),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    let args = ["proxy", "s3://bucket/prefix", "--allow-origin", ALLOWED, "--port", "0", "--upstream-timeout", "2"];
    let proxy = ServerProcess::start_proxy_in(&args, &env);
    let started = Instant::now();
    let no_credentials = proxy.get("/job/manifest.json");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    assert_eq!(no_credentials.status, 502);
    let text = no_credentials.text();
    assert!(text.contains("no credentials") && text.contains("AWS_ACCESS_KEY_ID"), "{text}");
    assert!(!text.contains("127.0.0.1") && !text.contains("could not connect"), "{text}");
}

#[test]
fn refuses_to_start_without_origins_with_secrets_in_the_url_or_unguarded() {
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tlparse-build")).args(args).output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (code, stderr) = run(&["proxy", "http://127.0.0.1:9"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--allow-origin"), "{stderr}");
    let (code, stderr) = run(&["proxy", "https://user:hunter2@127.0.0.1:9/b", "--allow-origin", ALLOWED]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("credentials come from the environment") && !stderr.contains("hunter2"), "{stderr}");
    let (code, stderr) = run(&["proxy", "http://127.0.0.1:9", "--allow-origin", ALLOWED, "--bind", "0.0.0.0"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--allow-host"), "{stderr}");
    // Off loopback, a token is required unless explicitly waived.
    let public =
        ["proxy", "http://127.0.0.1:9", "--allow-origin", ALLOWED, "--bind", "0.0.0.0", "--allow-host", "p.test"];
    let (code, stderr) = run(&public);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("needs --token-file") && stderr.contains("--no-token"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("token");
    std::fs::write(&short, "short").unwrap();
    let (code, stderr) =
        run(&["proxy", "http://127.0.0.1:9", "--allow-origin", ALLOWED, "--token-file", short.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("at least 16") && !stderr.contains("short\n"), "{stderr}");
    // A device or a huge file is refused without being read whole.
    let huge = dir.path().join("huge");
    std::fs::write(&huge, "a".repeat(1 << 20)).unwrap();
    for (file, why) in [("/dev/zero", "not a regular file"), (huge.to_str().unwrap(), "over 4096 bytes")] {
        let (code, stderr) = run(&["proxy", "http://127.0.0.1:9", "--allow-origin", ALLOWED, "--token-file", file]);
        assert_eq!(code, Some(2), "{file}");
        assert!(stderr.contains(why), "{file}: {stderr}");
    }
    let (code, stderr) = run(&["proxy", "ftp://host/x", "--allow-origin", ALLOWED]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("not supported"), "{stderr}");
}

/// The attacks `serve` is tested under (tests/it/attacks.rs), against the proxy: a legitimate
/// client must still be answered in time, with threads and memory bounded. See the figures with
/// `cargo test --test it proxy::attacks -- --nocapture`.
mod attacks {
    use super::*;
    use crate::attacks::{Target, a_300_mb_header, idle_connections, pipelining_clients_that_never_read, slowloris};

    struct Setup {
        _dir: tempfile::TempDir,
        _upstream: StaticServer,
        files: BTreeMap<String, Vec<u8>>,
        proxy: ServerProcess,
    }

    fn start() -> Setup {
        let (dir, root, files) = upstream_with_bundle();
        let upstream = StaticServer::start(root);
        let proxy = start_proxy(&upstream.url(), &[]);
        Setup { _dir: dir, _upstream: upstream, files, proxy }
    }

    /// The proxy under attack: a legitimate client fetches the manifest through it (so from the upstream).
    fn target(setup: &Setup) -> Target<'_> {
        let legit_body = setup.files["manifest.json"].clone();
        Target { name: "proxy", server: &setup.proxy, legit_path: format!("/{PREFIX}/manifest.json"), legit_body }
    }

    #[test]
    fn pipelining_clients_that_never_read_do_not_stall_the_others() {
        let setup = start();
        let (pack, bytes) =
            setup.files.iter().filter(|(p, _)| p.starts_with("blobs/packs/")).max_by_key(|(_, b)| b.len()).unwrap();
        let addr = &setup.proxy.addr;
        assert_eq!(setup.proxy.get(&format!("/{PREFIX}/{pack}")).status, 200);
        // ~32 MB of answers per client, far beyond what socket buffers hold.
        let repeats = (32 << 20) / bytes.len() + 1;
        let pipeline = format!("GET /{PREFIX}/{pack} HTTP/1.1\r\nHost: {addr}\r\n\r\n").repeat(repeats);
        let attack = format!("64 clients pipelining {repeats} GETs of a {}-byte pack, never reading", bytes.len());
        pipelining_clients_that_never_read(&target(&setup), &pipeline, &attack);
    }

    #[test]
    fn slowloris_connections_do_not_lock_out_a_real_client_and_are_cut() {
        let setup = start();
        slowloris(&target(&setup));
    }

    #[test]
    fn idle_connections_do_not_starve_a_real_client() {
        let setup = start();
        idle_connections(&target(&setup));
    }

    #[test]
    fn a_huge_header_is_refused_early_and_a_foreign_host_always() {
        let setup = start();
        let _huge_header = a_300_mb_header(&target(&setup));

        let addr = &setup.proxy.addr;
        let port = addr.rsplit_once(':').unwrap().1;
        for host in [format!("attacker.example:{port}"), format!("127.0.0.1.nip.io:{port}"), "127.0.0.1:1".into()] {
            let response = request(addr, "GET", &format!("/{PREFIX}/manifest.json"), &[("Host", &host)]);
            assert_eq!(response.status, 421, "{host}");
            assert!(!response.text().contains("tlparse-bundle"), "{host}");
        }
    }
}
