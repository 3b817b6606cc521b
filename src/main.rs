//! The `tlparse-build` binary: see [`tlparse_build::cli`].

fn main() -> std::process::ExitCode {
    keep_big_buffers_mmapped();
    tlparse_build::cli::main()
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
