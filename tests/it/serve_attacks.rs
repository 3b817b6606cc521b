//! `serve` under the attacks an audit ran on the old thread-per-connection server (the attacks
//! themselves are in attacks.rs, shared with the proxy's tests): while each runs, a legitimate
//! client must still be answered in time, and the server must keep its threads and memory
//! bounded. The figures (time to answer, peak RSS, threads) are printed; see them with
//! `cargo test --test it serve_attacks -- --nocapture`.
//!
//! Every socket has a timeout and every loop a deadline, so a regression fails, never hangs.

use std::io::Read;

use crate::attacks::{self, Target};
use crate::serve::{bundle_with_viewer, manifest_files_ending_with};
use crate::server_process::{HttpResponse, ServerProcess, exchange, run_to_exit};

/// A server of simple.log's bundle (validated) with `extra` arguments.
fn start(extra: &[&str]) -> (tempfile::TempDir, std::path::PathBuf, ServerProcess) {
    let (dir, bundle) = bundle_with_viewer();
    let mut args = vec!["serve", bundle.to_str().unwrap(), "--port", "0", "--no-open"];
    args.extend_from_slice(extra);
    let server = ServerProcess::start(&args);
    (dir, bundle, server)
}

/// The attacked server, with its manifest as what a legitimate client fetches.
fn target<'a>(server: &'a ServerProcess, bundle: &std::path::Path) -> Target<'a> {
    let legit_body = std::fs::read(bundle.join("manifest.json")).unwrap();
    Target { name: "serve", server, legit_path: "/manifest.json".into(), legit_body }
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
    let attack = format!("64 clients pipelining {repeats} GETs of {size} bytes, never reading");
    attacks::pipelining_clients_that_never_read(&target(&server, &bundle), &pipeline, &attack);
}

#[test]
fn slowloris_connections_do_not_lock_out_a_real_client_and_are_cut() {
    let (_dir, bundle, server) = start(&[]);
    attacks::slowloris(&target(&server, &bundle));
}

#[test]
fn idle_connections_do_not_starve_a_real_client() {
    let (_dir, bundle, server) = start(&[]);
    attacks::idle_connections(&target(&server, &bundle));
}

#[test]
fn a_300_mb_header_is_refused_early_without_memory_growth() {
    let (_dir, bundle, server) = start(&[]);
    let mut stream = attacks::a_300_mb_header(&target(&server, &bundle));
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
    let addr = &server.addr;
    for (head, what) in [
        (format!("GET /manifest.json HTTP/1.1\r\nHost: {addr}\r\nHost: {addr}"), "the same Host twice"),
        (format!("GET /manifest.json HTTP/1.1\r\nHost: {addr}\r\nHost: attacker.example"), "a second Host"),
        ("GET /manifest.json HTTP/1.1\r\nHost:".to_string(), "an empty Host"),
        ("GET /manifest.json HTTP/1.1\r\nHost:   ".to_string(), "a blank Host"),
    ] {
        assert_refusal(&exchange(addr, &head), 400, what);
    }
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
