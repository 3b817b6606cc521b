//! `serve` under the attacks an audit ran on the old thread-per-connection server: while each
//! runs, a legitimate client must still be answered in time, and the server must keep its
//! threads and memory bounded. The figures (time to answer, peak RSS, threads) are printed; see
//! them with `cargo test --test it serve_attacks -- --nocapture`.
//!
//! Every socket has a timeout and every loop a deadline, so a regression fails, never hangs.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::serve::{bundle_with_viewer, manifest_files_ending_with};
use crate::server_process::{HttpResponse, ServerProcess, exchange, parse_response, run_to_exit};

/// Generous bounds: the old server never answered at all under the first two attacks.
const LEGIT_WITHIN: Duration = Duration::from_secs(10);
const MAX_THREADS: u64 = 16;
const MAX_PEAK_RSS_KIB: u64 = 100 << 10;

/// A server of simple.log's bundle (validated) with `extra` arguments.
fn start(extra: &[&str]) -> (tempfile::TempDir, std::path::PathBuf, ServerProcess) {
    let (dir, bundle) = bundle_with_viewer();
    let mut args = vec!["serve", bundle.to_str().unwrap(), "--port", "0", "--no-open"];
    args.extend_from_slice(extra);
    let server = ServerProcess::start(&args);
    (dir, bundle, server)
}

/// The server's peak resident memory (KiB) and thread count, from /proc.
fn figures(server: &ServerProcess) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.process.0.id())).unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (field("VmHWM:"), field("Threads:"))
}

/// Fetches the manifest as a browser would, checks it, and returns how long it took.
fn legit_request(server: &ServerProcess, bundle: &std::path::Path) -> Duration {
    let started = Instant::now();
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    stream.set_read_timeout(Some(LEGIT_WITHIN)).unwrap();
    let addr = &server.addr;
    write!(stream, "GET /manifest.json HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("the legitimate request was answered in time");
    let elapsed = started.elapsed();
    let response = parse_response(&raw);
    assert_eq!(response.status, 200);
    assert_eq!(response.body, std::fs::read(bundle.join("manifest.json")).unwrap());
    assert!(elapsed < LEGIT_WITHIN, "{elapsed:?}");
    elapsed
}

fn report(attack: &str, server: &ServerProcess, legit: Duration) {
    let (peak_rss_kib, threads) = figures(server);
    eprintln!("{attack}: legit request answered in {legit:?}; server peak RSS {peak_rss_kib} KiB, {threads} threads");
    assert!(threads <= MAX_THREADS, "{attack}: {threads} threads");
    assert!(peak_rss_kib < MAX_PEAK_RSS_KIB, "{attack}: peak RSS {peak_rss_kib} KiB");
}

fn connect(addr: &str) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    stream
}

#[test]
fn pipelining_clients_that_never_read_do_not_stall_the_others() {
    let (_dir, bundle, server) = start(&[]);
    // The bundle's largest file, asked for again and again until ~32 MB of answers pile up per
    // client: far beyond what socket buffers hold, so the server's writes stall.
    let largest = manifest_files_ending_with(&bundle, "")
        .into_iter()
        .max_by_key(|f| std::fs::metadata(bundle.join(f)).unwrap().len())
        .unwrap();
    let size = std::fs::metadata(bundle.join(&largest)).unwrap().len().max(1);
    let repeats = (32 << 20) / size + 1;
    let one = format!("GET /{largest} HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr);
    let pipeline = one.repeat(repeats.min(20_000) as usize);
    let clients: Vec<TcpStream> = std::thread::scope(|scope| {
        let writers: Vec<_> = (0..64)
            .map(|_| {
                scope.spawn(|| {
                    let mut stream = connect(&server.addr);
                    // The server stops reading once it cannot write: the rest times out, unsent.
                    let _ = stream.write_all(pipeline.as_bytes());
                    stream
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(500));
        let legit = legit_request(&server, &bundle);
        report(&format!("64 clients pipelining {repeats} GETs of {size} bytes, never reading"), &server, legit);
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    // Still stalled (their answers unread), and the server still answers.
    let legit = legit_request(&server, &bundle);
    report("after the pipelining clients stalled", &server, legit);
    drop(clients);
}

#[test]
fn slowloris_connections_do_not_lock_out_a_real_client_and_are_cut() {
    let (_dir, bundle, server) = start(&[]);
    let mut trickling: Vec<TcpStream> = (0..600)
        .map(|_| {
            let mut stream = connect(&server.addr);
            write!(stream, "GET /manifest.json HTTP/1.1\r\nHost: {}\r\n", server.addr).unwrap();
            stream
        })
        .collect();
    let started = Instant::now();
    let mut legit = None;
    let mut cut = 0;
    // Trickle a header byte per connection every second; the server must cut them all when its
    // header timeout (15 s) runs out, however steadily they trickle.
    while started.elapsed() < Duration::from_secs(40) && cut < trickling.len() {
        for stream in &mut trickling {
            let _ = stream.write_all(b"X");
        }
        if legit.is_none() && started.elapsed() > Duration::from_secs(2) {
            let elapsed = legit_request(&server, &bundle);
            report("600 slowloris connections trickling headers", &server, elapsed);
            legit = Some(elapsed);
        }
        std::thread::sleep(Duration::from_secs(1));
        cut = trickling.iter().filter(|s| is_closed(s)).count();
    }
    eprintln!("slowloris: {cut} of {} connections cut after {:?}", trickling.len(), started.elapsed());
    assert!(legit.is_some());
    assert_eq!(cut, trickling.len(), "trickling connections still open after {:?}", started.elapsed());
}

/// Whether the server has closed `stream` (EOF, a reset, or an answer such as 408 followed by
/// EOF), without blocking.
fn is_closed(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 1024];
    let mut reader = stream;
    let closed = loop {
        match reader.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    stream.set_nonblocking(false).unwrap();
    closed
}

#[test]
fn a_300_mb_header_is_refused_early_without_memory_growth() {
    let (_dir, bundle, server) = start(&[]);
    let mut stream = connect(&server.addr);
    write!(stream, "GET /manifest.json HTTP/1.1\r\nHost: {}\r\nX-Huge: ", server.addr).unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut sent = 0usize;
    while sent < 300 << 20 {
        match stream.write(&chunk) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    let legit = legit_request(&server, &bundle);
    report(&format!("a header streamed until the server stopped it ({sent} bytes sent)"), &server, legit);
    assert!(sent < 300 << 20, "the server read all 300 MB of one header");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    assert!(answer.is_empty() || answer.starts_with(b"HTTP/1.1 431 "), "{}", String::from_utf8_lossy(&answer));
}

/// Asserts a short plain-text refusal with `status` that leaks nothing of the bundle.
fn assert_refusal(response: &HttpResponse, status: u16, what: &str) {
    let body = String::from_utf8_lossy(&response.body);
    assert_eq!(response.status, status, "{what}: {body}");
    assert_eq!(response.header("Content-Type"), Some("text/plain; charset=utf-8"), "{what}");
    assert!(body.starts_with("refused: ") && body.len() < 300, "{what}: {body}");
    assert!(!body.contains("schema_version") && !body.contains("<script"), "{what}: {body}");
    assert_eq!(response.header("Access-Control-Allow-Origin"), None, "{what}");
}

#[test]
fn a_host_that_is_not_this_server_is_refused() {
    let (_dir, _bundle, server) = start(&[]);
    let port = server.addr.rsplit_once(':').unwrap().1;
    // A DNS-rebinding page reaches 127.0.0.1 under its own name, which the browser sends as Host.
    for host in [
        format!("attacker.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        format!("localhost.attacker.example:{port}"),
        "127.0.0.1".to_string(),
        "127.0.0.1:1".to_string(),
    ] {
        let response = exchange(&server.addr, &format!("GET /manifest.json HTTP/1.1\r\nHost: {host}"));
        assert_refusal(&response, 421, &host);
    }
    assert_refusal(&exchange(&server.addr, "GET /manifest.json HTTP/1.0"), 400, "no Host");
    let absolute =
        exchange(&server.addr, &format!("GET http://attacker.example/manifest.json HTTP/1.1\r\nHost: {}", server.addr));
    assert_refusal(&absolute, 421, "absolute-form target");
    for name in ["localhost", "[::1]"] {
        let response = exchange(&server.addr, &format!("GET /manifest.json HTTP/1.1\r\nHost: {name}:{port}"));
        assert_eq!(response.status, 200, "{name}");
    }
}

#[test]
fn only_allowed_origins_may_read_and_preflight() {
    let allowed = "http://127.0.0.1:9";
    let (_dir, bundle, server) = start(&["--allow-origin", allowed, "--allow-origin", "https://viewer.example/"]);
    let addr = &server.addr;
    assert!(
        server.stdout.contains(&format!(
            "Pages of {allowed}, https://viewer.example may read this bundle: give a hosted viewer the bundle URL http://{addr}/"
        )),
        "{}",
        server.stdout
    );
    let get =
        |origin: &str| exchange(addr, &format!("GET /manifest.json HTTP/1.1\r\nHost: {addr}\r\nOrigin: {origin}"));

    let cross = get(allowed);
    assert_eq!(cross.status, 200);
    assert_eq!(cross.body, std::fs::read(bundle.join("manifest.json")).unwrap());
    assert_eq!(cross.header("Access-Control-Allow-Origin"), Some(allowed));
    assert_eq!(cross.header("Vary"), Some("Origin"));
    assert!(cross.header("Access-Control-Expose-Headers").unwrap().contains("Content-Length"));
    assert_eq!(cross.header("Access-Control-Allow-Credentials"), None);

    // The viewer this server ships sends its own origin (module scripts do): served, no CORS.
    let own = get(&format!("http://{addr}"));
    assert_eq!((own.status, own.header("Access-Control-Allow-Origin")), (200, None));

    for foreign in [
        "http://127.0.0.1:10",
        "https://127.0.0.1:9",
        "null",
        "http://attacker.example",
        "https://viewer.example.attacker.example",
    ] {
        assert_refusal(&get(foreign), 403, foreign);
    }

    let preflight = |origin: &str, method: &str| {
        exchange(
            addr,
            &format!(
                "OPTIONS /manifest.json HTTP/1.1\r\nHost: {addr}\r\nOrigin: {origin}\r\n\
                 Access-Control-Request-Method: {method}\r\nAccess-Control-Request-Headers: range\r\n\
                 Access-Control-Request-Private-Network: true"
            ),
        )
    };
    let ok = preflight(allowed, "GET");
    assert_eq!(ok.status, 204);
    assert_eq!(ok.header("Access-Control-Allow-Origin"), Some(allowed));
    assert_eq!(ok.header("Access-Control-Allow-Methods"), Some("GET, HEAD"));
    assert!(ok.header("Access-Control-Allow-Headers").unwrap().contains("Range"));
    assert_eq!(ok.header("Access-Control-Allow-Private-Network"), Some("true"));
    assert!(ok.body.is_empty());
    // The allowed origin may read why, but is granted no method.
    let delete = preflight(allowed, "DELETE");
    assert_eq!(delete.status, 403);
    assert_eq!(delete.header("Access-Control-Allow-Methods"), None);
    assert_refusal(&preflight("http://attacker.example", "GET"), 403, "preflight from a foreign origin");
}

#[test]
fn an_origin_that_is_not_an_origin_is_refused_at_start() {
    let (_dir, bundle) = bundle_with_viewer();
    for bad in ["example.github.io", "https://example.github.io/viewer/", "ftp://x"] {
        let refused = run_to_exit(&["serve", bundle.to_str().unwrap(), "--allow-origin", bad]);
        assert_eq!(refused.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("is not an origin"), "{bad}: {stderr}");
    }
}
