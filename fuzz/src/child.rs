//! Running the binary as a child process under watch: a wall-clock limit (past it, the child is
//! killed: a hang), its resident memory polled (far past the limit, it is killed before it takes
//! the machine down), and its peak RSS taken from `wait4`'s rusage when it ends.
//!
//! The watching is done by a small process of its own, this fuzzer's binary started fresh as
//! `tlparse-fuzz __watch`: on Linux a child's `ru_maxrss` starts at the peak RSS of the process
//! that spawned it (exec keeps the high-water mark of the memory it replaces), and the fuzzer,
//! holding every fixture and some 40 MiB cases, would make every child look hundreds of MiB big.
//! The watcher is a few MiB, so the peak it reports is the child's own.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a child may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Peak resident memory allowed, in bytes.
    pub max_rss: u64,
    /// Wall-clock time after which the child counts as hung.
    pub timeout: Duration,
}

impl Limits {
    /// Resident memory at which the child is killed at once: well past the limit (the finding
    /// is made from the peak anyway), low enough that a runaway child never endangers the host.
    fn kill_rss(&self) -> u64 {
        (self.max_rss * 4).max(self.max_rss + (512 << 20))
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    /// Killed by a signal it did not get from us.
    Signaled(i32),
    /// Killed by us at the time limit.
    TimedOut,
    /// Killed by us when its memory ran away.
    RanAway,
}

/// A finished child.
#[derive(Debug, Clone)]
pub struct Finished {
    pub ending: Ending,
    /// Peak resident memory in bytes (`ru_maxrss`).
    pub peak_rss: u64,
    pub seconds: f64,
    /// Its stdout and stderr (lossy UTF-8): the first and the last [`KEPT_OUTPUT`] bytes of each,
    /// so that a panic after megabytes of warnings is still seen.
    pub stdout: String,
    pub stderr: String,
}

/// Bytes of each output stream kept for the oracle.
const KEPT_OUTPUT: u64 = 128 << 10;

/// Runs programs under [`Limits`] through the watcher process.
#[derive(Debug, Clone)]
pub struct Runner {
    /// The `tlparse-fuzz` binary, which watches when started as `tlparse-fuzz __watch`.
    pub watcher: PathBuf,
    pub limits: Limits,
}

/// The first argument that makes `tlparse-fuzz` the watcher.
pub const WATCH: &str = "__watch";

/// The watcher's STDOUT argument for a pipe whose reading end is closed.
const CLOSED: &str = "-";

impl Runner {
    /// Runs `program` with `args` to its end; its stdout and stderr go to `{name}.stdout` and
    /// `{name}.stderr` in `dir` (stdout to a pipe nobody reads, closed, with `closed_stdout`:
    /// as `tlparse-build ... | head -1` leaves it).
    pub fn run(
        &self,
        program: &Path,
        args: &[OsString],
        dir: &Path,
        name: &str,
        closed_stdout: bool,
    ) -> io::Result<Finished> {
        let stdout_path = dir.join(format!("{name}.stdout"));
        let stderr_path = dir.join(format!("{name}.stderr"));
        let stdout_arg: OsString = if closed_stdout { CLOSED.into() } else { stdout_path.clone().into() };
        if closed_stdout {
            std::fs::write(&stdout_path, "(stdout was a closed pipe)\n")?;
        }
        let report = Command::new(&self.watcher)
            .arg(WATCH)
            .arg(self.limits.timeout.as_millis().to_string())
            .arg(self.limits.kill_rss().to_string())
            .arg(stdout_arg)
            .arg(&stderr_path)
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()?;
        let report = String::from_utf8_lossy(&report.stdout);
        let (ending, peak_rss, seconds) = parse_report(&report)
            .ok_or_else(|| io::Error::other(format!("the watcher said {report:?}, not how the child ended")))?;
        Ok(Finished { ending, peak_rss, seconds, stdout: read_ends(&stdout_path)?, stderr: read_ends(&stderr_path)? })
    }
}

/// The watcher: `__watch TIMEOUT_MS KILL_RSS STDOUT STDERR PROGRAM ARGS...` runs PROGRAM and
/// prints one line: how it ended, its peak RSS in bytes, and its wall-clock seconds.
pub fn watch_main(args: &[OsString]) -> io::Result<()> {
    let [timeout_ms, kill_rss, stdout, stderr, program, rest @ ..] = args else {
        return Err(io::Error::other("usage: tlparse-fuzz __watch TIMEOUT_MS KILL_RSS STDOUT STDERR PROGRAM ARGS..."));
    };
    let number =
        |s: &OsString| s.to_str().and_then(|s| s.parse::<u64>().ok()).ok_or_else(|| io::Error::other("a number"));
    let (timeout, kill_rss) = (Duration::from_millis(number(timeout_ms)?), number(kill_rss)?);
    let start = Instant::now();
    let to = if stdout == CLOSED { closed_pipe()? } else { File::create(stdout)?.into() };
    let child =
        Command::new(program).args(rest).stdin(Stdio::null()).stdout(to).stderr(File::create(stderr)?).spawn()?;
    // The Child handle is dropped unwaited: wait4 below reaps the process.
    let (ending, peak_rss) = watch(child.id() as libc::pid_t, timeout, kill_rss, start)?;
    println!("{} {peak_rss} {:.3}", ending_text(ending), start.elapsed().as_secs_f64());
    Ok(())
}

/// The writing end of a pipe whose reading end is already closed: every write to it fails
/// (EPIPE, or SIGPIPE where that is not ignored).
fn closed_pipe() -> io::Result<Stdio> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills in the two descriptors of a new pipe.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    Ok(Stdio::from(write))
}

fn ending_text(ending: Ending) -> String {
    match ending {
        Ending::Exited(code) => format!("exited:{code}"),
        Ending::Signaled(signal) => format!("signaled:{signal}"),
        Ending::TimedOut => "timed_out".into(),
        Ending::RanAway => "ran_away".into(),
    }
}

fn parse_report(line: &str) -> Option<(Ending, u64, f64)> {
    let mut words = line.split_whitespace();
    let ending = match words.next()?.split_once(':') {
        Some(("exited", code)) => Ending::Exited(code.parse().ok()?),
        Some(("signaled", signal)) => Ending::Signaled(signal.parse().ok()?),
        None if line.starts_with("timed_out") => Ending::TimedOut,
        None if line.starts_with("ran_away") => Ending::RanAway,
        _ => return None,
    };
    Some((ending, words.next()?.parse().ok()?, words.next()?.parse().ok()?))
}

/// Polls the child until it ends; kills it at the time limit or when it runs away.
fn watch(pid: libc::pid_t, timeout: Duration, kill_rss: u64, start: Instant) -> io::Result<(Ending, u64)> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(done) = reap(pid, libc::WNOHANG)? {
            return Ok(done);
        }
        let killed_for = if start.elapsed() > timeout {
            Some(Ending::TimedOut)
        } else if current_rss(pid).is_some_and(|rss| rss > kill_rss) {
            Some(Ending::RanAway)
        } else {
            None
        };
        if let Some(ending) = killed_for {
            // SAFETY: kill has no memory effects; pid is our unreaped child, so not reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let (_, peak) = reap(pid, 0)?.expect("a blocking wait4 returns the child");
            return Ok((ending, peak));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// `wait4` on the child: `None` while it runs (with `WNOHANG`), else how it ended and its peak RSS.
fn reap(pid: libc::pid_t, flags: libc::c_int) -> io::Result<Option<(Ending, u64)>> {
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let got = loop {
        // SAFETY: pointers to live locals; pid is our child.
        let got = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if got >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break got;
        }
    };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    if got == 0 {
        return Ok(None);
    }
    let ending = if libc::WIFEXITED(status) {
        Ending::Exited(libc::WEXITSTATUS(status))
    } else {
        Ending::Signaled(libc::WTERMSIG(status))
    };
    // ru_maxrss is in KiB on Linux.
    Ok(Some((ending, usage.ru_maxrss.max(0) as u64 * 1024)))
}

/// The child's resident memory now, from /proc (None once it is gone).
fn current_rss(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn read_ends(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut bytes = Vec::new();
    (&mut file).take(KEPT_OUTPUT).read_to_end(&mut bytes)?;
    if len > 2 * KEPT_OUTPUT {
        bytes.extend_from_slice(b"\n[...]\n");
        file.seek(SeekFrom::Start(len - KEPT_OUTPUT))?;
    }
    file.read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watchers_report_reads_back() {
        for ending in [Ending::Exited(0), Ending::Exited(101), Ending::Signaled(11), Ending::TimedOut, Ending::RanAway]
        {
            let line = format!("{} 1234 0.500\n", ending_text(ending));
            assert_eq!(parse_report(&line), Some((ending, 1234, 0.5)));
        }
        assert_eq!(parse_report("error: nope"), None);
    }
}
