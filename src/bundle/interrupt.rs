//! SIGINT and SIGTERM during a build: the unfinished bundle's staging folders are removed, then
//! the process exits 130 or 143 (128 + the signal, as a shell reports it). A signal that comes
//! while a bundle is being swapped into OUT waits for the swap to end, so OUT is never left
//! half-replaced by one.
//!
//! The handler only writes the signal's number to a pipe (all a handler may safely do); a thread
//! reading the pipe does the removing. Handlers, unlike blocked signals, do not pass to the
//! processes a build starts (a browser for `--open`).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

/// The folders removed on a signal: every staging folder of this process while it lives.
static TO_REMOVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// The pipe's end the handler writes to (-1 until [`clean_up_on_signals`]).
static PIPE: AtomicI32 = AtomicI32::new(-1);
static INSTALLED: Once = Once::new();
/// How many times a folder is removed again when threads still writing in it refill it.
const REMOVE_ATTEMPTS: usize = 100;

fn to_remove() -> MutexGuard<'static, Vec<PathBuf>> {
    TO_REMOVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes `dir` if a signal stops the process.
pub fn remove_on_signal(dir: &Path) {
    to_remove().push(dir.to_owned());
}

/// `dir` is gone or has become the bundle: a signal leaves it.
pub fn keep_on_signal(dir: &Path) {
    to_remove().retain(|d| d != dir);
}

/// Holds a signal's clean-up back while alive: taken for the swap, which must not be cut.
pub fn hold_signals() -> MutexGuard<'static, Vec<PathBuf>> {
    to_remove()
}

extern "C" fn on_signal(signal: libc::c_int) {
    let byte = signal as u8;
    // SAFETY: write(2) is async-signal-safe; the pipe stays open for the process's life.
    unsafe { libc::write(PIPE.load(Ordering::Relaxed), (&raw const byte).cast(), 1) };
}

/// Makes SIGINT and SIGTERM remove the staging folders and exit; once per process, before a
/// build. Without it (the library, tests) a signal does what it would anyway.
pub fn clean_up_on_signals() -> io::Result<()> {
    let mut result = Ok(());
    INSTALLED.call_once(|| result = install());
    result
}

fn install() -> io::Result<()> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    PIPE.store(fds[1], Ordering::Relaxed);
    let reader = fds[0];
    std::thread::Builder::new().name("signals".into()).spawn(move || wait_for_signal(reader))?;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a handler that only calls write(2).
        let failed = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut()) != 0
        };
        if failed {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The clean-up thread: waits for a signal's byte, removes the folders, exits.
fn wait_for_signal(reader: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads one byte into `byte`.
        let n = unsafe { libc::read(reader, (&raw mut byte).cast(), 1) };
        if n == 1 {
            break;
        }
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return;
    }
    // Taken for good: no swap starts after this, and one under way has ended.
    let dirs = to_remove();
    let signal = libc::c_int::from(byte);
    let name = if signal == libc::SIGINT { "SIGINT" } else { "SIGTERM" };
    let removed = if dirs.is_empty() { "" } else { "; the unfinished bundle was removed" };
    // Said first: between the last removal and the exit, the build's threads have no time to
    // write again.
    let _ = writeln!(io::stderr(), "error: stopped by {name}{removed}");
    for dir in dirs.iter() {
        remove_while_written(dir);
    }
    // SAFETY: _exit ends the process at once, without running other threads' destructors.
    unsafe { libc::_exit(128 + signal) };
}

/// Removes `dir`, again while the build's threads, still running, put files in it.
fn remove_while_written(dir: &Path) {
    for _ in 0..REMOVE_ATTEMPTS {
        match fs::remove_dir_all(dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => continue,
            // A thread still writing may have made a folder of its own in it again.
            _ if fs::symlink_metadata(dir).is_ok() => continue,
            _ => return,
        }
    }
}
