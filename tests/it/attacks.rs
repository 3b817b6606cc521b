//! The attacks an audit ran on the old thread-per-connection server, shared by the tests of
//! `serve` (serve_attacks.rs) and `proxy` (proxy.rs): while each runs, a legitimate client must
//! still be answered in time, and the server must keep its threads and memory bounded. The
//! figures (time to answer, peak RSS, threads) are printed; see them with `--nocapture`.
//!
//! Every socket has a timeout and every loop a deadline, so a regression fails, never hangs.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpStream};
use std::time::{Duration, Instant};

use crate::server_process::ServerProcess;

/// Generous bounds: the old server never answered at all under the first two attacks.
const LEGIT_WITHIN: Duration = Duration::from_secs(10);
const MAX_THREADS: u64 = 16;
const MAX_PEAK_RSS_KIB: u64 = 100 << 10;

/// A server under attack, and what a legitimate client fetches from it meanwhile.
pub(crate) struct Target<'a> {
    /// How the printed figures name the server: `serve` or `proxy`.
    pub(crate) name: &'a str,
    pub(crate) server: &'a ServerProcess,
    /// The request target the legitimate client asks for, e.g. `/manifest.json`.
    pub(crate) legit_path: String,
    /// The bytes the legitimate client must get back.
    pub(crate) legit_body: Vec<u8>,
}

impl Target<'_> {
    /// The server's peak resident memory (KiB) and thread count, from /proc.
    fn figures(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.server.process.0.id())).unwrap();
        let field = |name: &str| -> u64 {
            let line = status.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name}"));
            line.split_whitespace().nth(1).unwrap().parse().unwrap()
        };
        (field("VmHWM:"), field("Threads:"))
    }

    /// Fetches `legit_path` as a browser would, checks the answer, and returns how long it took.
    fn legit_request(&self) -> Duration {
        let stream = TcpStream::connect(&self.server.addr).unwrap();
        self.legit_request_on(stream, LEGIT_WITHIN)
    }

    /// [`Self::legit_request`] on `stream`, which must be answered `within` that time.
    fn legit_request_on(&self, mut stream: TcpStream, within: Duration) -> Duration {
        let (addr, path) = (&self.server.addr, &self.legit_path);
        let started = Instant::now();
        stream.set_read_timeout(Some(within)).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("the legitimate request was answered in time");
        let elapsed = started.elapsed();
        let response = crate::server_process::parse_response(&raw);
        let status_line = String::from_utf8_lossy(raw.split(|&b| b == b'\r').next().unwrap());
        assert!(raw.starts_with(b"HTTP/1.1 200 "), "{status_line}");
        assert!(response.body == self.legit_body, "{path}: other bytes than expected");
        assert!(elapsed < within, "{elapsed:?}");
        elapsed
    }

    /// Prints the figures under `attack` and checks them against the bounds.
    fn report(&self, attack: &str, legit: Duration) {
        let (peak_rss_kib, threads) = self.figures();
        let name = self.name;
        eprintln!(
            "{name}, {attack}: legit request answered in {legit:?}; peak RSS {peak_rss_kib} KiB, {threads} threads"
        );
        assert!(threads <= MAX_THREADS, "{attack}: {threads} threads");
        assert!(peak_rss_kib < MAX_PEAK_RSS_KIB, "{attack}: peak RSS {peak_rss_kib} KiB");
    }

    /// A legitimate request, timed, checked and reported under `attack`.
    fn legit_request_reported(&self, attack: &str) -> Duration {
        let legit = self.legit_request();
        self.report(attack, legit);
        legit
    }
}

/// A connection with read and write timeouts, so that an attack never hangs a test.
pub(crate) fn connect(addr: &str) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    stream
}

/// 64 clients each send `pipeline` (many requests) and never read the answers, so the server's
/// writes to them stall (`attack` says how): a legitimate client must be answered meanwhile and
/// after, while the clients stay stalled.
pub(crate) fn pipelining_clients_that_never_read(target: &Target, pipeline: &str, attack: &str) {
    let addr = &target.server.addr;
    let clients: Vec<TcpStream> = std::thread::scope(|scope| {
        let writers: Vec<_> = (0..64)
            .map(|_| {
                scope.spawn(|| {
                    let mut stream = connect(addr);
                    // The server stops reading once it cannot write: the rest times out, unsent.
                    let _ = stream.write_all(pipeline.as_bytes());
                    stream
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(500));
        target.legit_request_reported(attack);
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    // Still stalled (their answers unread), and the server still answers.
    target.legit_request_reported("after the pipelining clients stalled");
    drop(clients);
}

/// 600 connections trickle a header byte each every second: a legitimate client must be
/// answered, and the server must cut them all when its header timeout (15 s) runs out, however
/// steadily they trickle.
pub(crate) fn slowloris(target: &Target) {
    let (addr, path) = (&target.server.addr, &target.legit_path);
    let mut trickling: Vec<TcpStream> = (0..600)
        .map(|_| {
            let mut stream = connect(addr);
            write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n").unwrap();
            stream
        })
        .collect();
    let started = Instant::now();
    let (mut legit, mut cut) = (None, 0);
    while started.elapsed() < Duration::from_secs(40) && cut < trickling.len() {
        for stream in &mut trickling {
            let _ = stream.write_all(b"X");
        }
        if legit.is_none() && started.elapsed() > Duration::from_secs(2) {
            legit = Some(target.legit_request_reported("600 slowloris connections trickling headers"));
        }
        std::thread::sleep(Duration::from_secs(1));
        cut = trickling.iter().filter(|s| is_closed(s)).count();
    }
    let name = target.name;
    eprintln!("{name}, slowloris: {cut} of {} connections cut after {:?}", trickling.len(), started.elapsed());
    assert!(legit.is_some());
    assert_eq!(cut, trickling.len(), "trickling connections still open after {:?}", started.elapsed());
}

/// Whether the server has closed `stream` (EOF, a reset, or an answer such as 408 followed by
/// EOF), without blocking.
fn is_closed(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let (mut buf, mut reader) = ([0u8; 1024], stream);
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

/// Streams one header of up to 300 MB until the server stops reading it: it must stop well
/// before, and still answer a legitimate client. Returns the connection, for its answer.
pub(crate) fn a_300_mb_header(target: &Target) -> TcpStream {
    let (addr, path) = (&target.server.addr, &target.legit_path);
    let mut stream = connect(addr);
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-Huge: ").unwrap();
    let (chunk, mut sent) = (vec![b'a'; 1 << 20], 0usize);
    while sent < 300 << 20 {
        match stream.write(&chunk) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    target.legit_request_reported(&format!("a header streamed until the server stopped it ({sent} bytes sent)"));
    assert!(sent < 300 << 20, "{} read all 300 MB of one header", target.name);
    stream
}

/// More idle connections than the server serves at once.
const IDLE_CONNECTIONS: usize = 1100;
/// The most connections a server keeps from one client address (`http::Limits`).
const MAX_PER_CLIENT: usize = 256;
/// How fast a legitimate client is answered while they are held.
const LEGIT_WHILE_IDLE_WITHIN: Duration = Duration::from_secs(1);

/// 1,100 connections from 127.0.0.1 that send nothing: a legitimate client, from 127.0.0.1 and
/// from 127.0.0.2 (another address of the loopback network), is answered within a second each
/// time, and the server keeps no more of the idle ones than it keeps from one client.
pub(crate) fn idle_connections(target: &Target) {
    let addr: std::net::SocketAddr = target.server.addr.parse().unwrap();
    let started = Instant::now();
    // A server that stops accepting leaves connects hanging in its backlog: bounded here.
    let idle: Vec<TcpStream> =
        (0..IDLE_CONNECTIONS).filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(3)).ok()).collect();
    eprintln!("{}: {} idle connections opened in {:?}", target.name, idle.len(), started.elapsed());
    assert_eq!(idle.len(), IDLE_CONNECTIONS, "the server stopped accepting");
    std::thread::sleep(Duration::from_millis(300));
    let mut slowest = Duration::ZERO;
    for _ in 0..3 {
        for source in [Ipv4Addr::new(127, 0, 0, 1), Ipv4Addr::new(127, 0, 0, 2)] {
            let stream = connect_from(source, addr);
            slowest = slowest.max(target.legit_request_on(stream, LEGIT_WHILE_IDLE_WITHIN));
        }
    }
    target.report(&format!("{} idle connections from 127.0.0.1", idle.len()), slowest);
    let still_open = idle.iter().filter(|stream| !is_closed(stream)).count();
    eprintln!("{}: {still_open} of {} idle connections still open", target.name, idle.len());
    assert!(still_open <= MAX_PER_CLIENT, "{still_open} idle connections from one client kept");
}

/// A connection to `to` from the local address `source` (any address of 127.0.0.0/8 is this
/// machine's on Linux).
fn connect_from(source: Ipv4Addr, to: std::net::SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd;
    let std::net::SocketAddr::V4(to) = to else { panic!("an IPv4 server: {to}") };
    let sockaddr = |addr: SocketAddrV4| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: addr.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*addr.ip()).to_be() },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a fresh socket, bound and connected with valid sockaddr_in structs of `len` bytes,
    // then owned by the TcpStream.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let stream = TcpStream::from_raw_fd(fd);
        let from = sockaddr(SocketAddrV4::new(source, 0));
        let bound = libc::bind(fd, (&raw const from).cast(), len);
        assert_eq!(bound, 0, "bind {source}: {}", std::io::Error::last_os_error());
        let target = sockaddr(to);
        let connected = libc::connect(fd, (&raw const target).cast(), len);
        assert_eq!(connected, 0, "connect from {source}: {}", std::io::Error::last_os_error());
        stream
    }
}
