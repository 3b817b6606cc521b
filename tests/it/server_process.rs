//! A `tlparse-build` server (`serve` or `proxy`) run as a child process by the tests, and the
//! plain HTTP/1.1 they speak to it over a TcpStream: shared by serve.rs, serve_attacks.rs,
//! attacks.rs and proxy.rs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a server may take to print the URL it serves before the test fails.
const STARTUP_WITHIN: Duration = Duration::from_secs(120);

/// A child process killed when dropped, so a failing test leaves no server behind.
pub(crate) struct KillOnDrop(pub(crate) Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the binary with its output piped, never opening a browser.
fn spawn(args: &[&str]) -> KillOnDrop {
    spawn_in(args, &[])
}

/// [`spawn`] with `env` set, and no inherited `AWS_*` variable: a test says where the S3
/// upstream's endpoint and credentials are.
fn spawn_in(args: &[&str], env: &[(&str, &str)]) -> KillOnDrop {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tlparse-build"));
    if !env.is_empty() {
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("AWS_") {
                command.env_remove(name);
            }
        }
        command.envs(env.iter().copied());
    }
    let child = command
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

/// A running `tlparse-build serve` or `proxy` (killed when dropped).
pub(crate) struct ServerProcess {
    pub(crate) process: KillOnDrop,
    /// Everything it printed up to and including the `Serving ... at URL` (or `Proxying`) line.
    pub(crate) stdout: String,
    /// What it printed on stderr, collected as it comes.
    pub(crate) stderr: Arc<Mutex<String>>,
    /// `127.0.0.1:PORT`
    pub(crate) addr: String,
}

impl ServerProcess {
    /// Runs `serve` (or a build with `--open`) and waits for its `Serving ... at URL` line.
    pub(crate) fn start(args: &[&str]) -> ServerProcess {
        Self::start_until(args, "Serving")
    }

    /// Runs `proxy` and waits for its `Proxying ... at URL` line.
    pub(crate) fn start_proxy(args: &[&str]) -> ServerProcess {
        Self::start_until(args, "Proxying")
    }

    /// Runs `proxy` with the environment `env` (and no inherited `AWS_*` variable), and waits for
    /// its `Proxying ... at URL` line.
    pub(crate) fn start_proxy_in(args: &[&str], env: &[(&str, &str)]) -> ServerProcess {
        Self::start_until_in(args, "Proxying", env)
    }

    /// Runs the binary and waits for the line `{verb} ... at http://ADDR/ (Ctrl-C to stop)`.
    fn start_until(args: &[&str], verb: &str) -> ServerProcess {
        Self::start_until_in(args, verb, &[])
    }

    fn start_until_in(args: &[&str], verb: &str, env: &[(&str, &str)]) -> ServerProcess {
        let mut process = spawn_in(args, env);
        let lines = lines_of(BufReader::new(process.0.stdout.take().unwrap()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let collecting = collect_into(process.0.stderr.take().unwrap(), Arc::clone(&stderr));
        let mut server = ServerProcess { process, stdout: String::new(), stderr, addr: String::new() };
        let deadline = Instant::now() + STARTUP_WITHIN;
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = lines.recv_timeout(wait) else {
                let _ = server.process.0.kill();
                let _ = server.process.0.wait();
                let _ = collecting.join();
                let errors = server.stderr.lock().unwrap();
                panic!("no `{verb}` line from {args:?}; it printed:\n{}{errors}", server.stdout);
            };
            server.stdout.push_str(&line);
            server.stdout.push('\n');
            if let Some(addr) = addr_in_banner(&line, verb) {
                server.addr = addr;
                // Keep draining its output, so that it never blocks on a full pipe.
                std::thread::spawn(move || while lines.recv().is_ok() {});
                return server;
            }
        }
    }

    pub(crate) fn get(&self, target: &str) -> HttpResponse {
        request(&self.addr, "GET", target)
    }
}

/// The lines of `stdout` on a channel, so that a server that never prints fails the test
/// instead of hanging it.
fn lines_of(stdout: BufReader<std::process::ChildStdout>) -> mpsc::Receiver<String> {
    let (lines_tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// Appends all of `pipe` to `collected` as it comes, until the process closes it.
fn collect_into(mut pipe: ChildStderr, collected: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = pipe.read(&mut buffer) {
            collected.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    })
}

/// `127.0.0.1:PORT` from a line `{verb} ... at http://127.0.0.1:PORT/ (Ctrl-C to stop)`; a line
/// starting with `verb` but not of that form fails the test.
fn addr_in_banner(line: &str, verb: &str) -> Option<String> {
    let rest = line.strip_prefix(verb)?.strip_prefix(' ')?;
    let (_, url) = rest.rsplit_once(" at ").unwrap();
    let url = url.strip_suffix(" (Ctrl-C to stop)").unwrap();
    Some(url.strip_prefix("http://").unwrap().strip_suffix('/').unwrap().to_string())
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

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
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
