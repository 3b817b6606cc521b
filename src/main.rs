//! The `tlparse-build` binary: see [`tlparse_build::cli`].

/// jemalloc: a build allocates dozens of times an entry, across threads; glibc's malloc spends
/// much of a build on that, and hands big buffers freed and allocated again back as fresh pages.
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options (its `malloc_conf`, read at its first allocation; `_RJEM_MALLOC_CONF` in the
/// environment overrides them): pages freed are given back to the system within half a second
/// rather than ten, so peak RSS stays near the live heap during a build that lasts seconds.
#[cfg(all(feature = "jemalloc", not(target_env = "msvc"), not(all(target_os = "linux", target_env = "gnu"))))]
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8; 36] = b"dirty_decay_ms:500,muzzy_decay_ms:0\0";

/// The same, and, where jemalloc can ask which CPU a thread runs on (Linux with glibc), an arena
/// per physical core (`percpu_arena:phycpu`, taking a CPU's two hardware threads for one core)
/// instead of four per CPU taken by threads in turn: each arena keeps free pages and part-filled
/// slabs of its own, and a build's threads (reader, parser pool, filing, analysis) each free what
/// another allocated, so fewer arenas hold fewer such pages and slabs (lower peak RSS, no slower).
#[cfg(all(feature = "jemalloc", target_os = "linux", target_env = "gnu"))]
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8; 56] = b"dirty_decay_ms:500,muzzy_decay_ms:0,percpu_arena:phycpu\0";

fn main() -> std::process::ExitCode {
    tune_glibc_malloc();
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

/// Tunes glibc's malloc, which still serves what C code allocates.
///
/// Under jemalloc, that is only zstd's contexts, made by whichever thread compresses. glibc
/// gives each new thread an arena of its own, up to eight per CPU, and an arena keeps the pages
/// of contexts freed in it. A build starts a filing thread per input file, so with many ranks
/// every arena is in use, each holding freed contexts' pages. One arena keeps them in one place;
/// contexts are made a few times per file, so its lock is not contended.
///
/// Without jemalloc, glibc raises its mmap threshold each time a large block is freed; after
/// that, big short-lived buffers (batches of records, blob chunks) come from the heap and
/// fragment it, leaving peak RSS well above the live heap. A fixed
/// threshold (glibc's default value) turns that adjustment off, so those buffers go back to the
/// system when freed.
fn tune_glibc_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu", feature = "jemalloc"))]
    // SAFETY: mallopt only changes allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu", not(feature = "jemalloc")))]
    // SAFETY: as above.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}
