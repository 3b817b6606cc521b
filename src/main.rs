//! The `tlparse-build` binary: see [`tlparse_build::cli`].

fn main() -> std::process::ExitCode {
    keep_big_buffers_mmapped();
    let code = tlparse_build::cli::main();
    report_peak_rss();
    code
}

/// With `TLPARSE_BUILD_PEAK_RSS_FILE` set, writes this process's peak resident set size (the
/// kernel's `VmHWM`, in KiB) to that file: how the memory tests and `scripts/bench-memory`
/// measure a build. A parent's `wait4` cannot: a child spawned from a big process starts
/// counted with the parent's resident pages.
fn report_peak_rss() {
    let Some(path) = std::env::var_os("TLPARSE_BUILD_PEAK_RSS_FILE") else { return };
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap_or_default();
    let kib = peak.trim().trim_end_matches("kB").trim();
    if let Err(e) = std::fs::write(&path, kib) {
        eprintln!("warning: could not write the peak RSS to {}: {e}", std::path::Path::new(&path).display());
    }
}

/// glibc raises its mmap threshold each time a large block is freed; after that, big short-lived
/// buffers (batches of records, blob chunks) come from the heap and fragment it, and on the
/// 150 MB benchmark peak RSS was a third above the live heap. A fixed threshold (glibc's default
/// value) turns that adjustment off, so those buffers go back to the system when freed.
fn keep_big_buffers_mmapped() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}
