//! Shared by the format crate's integration tests: a copy of the committed test bundle to tamper
//! with, and a counting allocator that measures the peak heap of the code under test.

#![allow(dead_code)] // each test binary uses its own part

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicIsize, Ordering};

/// The system allocator, counting the bytes the measuring thread allocates and frees, and their
/// peak, while [`measure`] runs. Only that thread counts: the other tests of the binary run on
/// other threads at the same time, and their allocations would make a peak flaky.
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
/// Peaks are per test: tests that measure take this lock so they don't run at once.
static MEASURING: Mutex<()> = Mutex::new(());

thread_local! {
    /// True on the thread inside [`measure`]. Const-initialized: reading it never allocates.
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Adds `delta` bytes to the live count when this thread is being measured.
fn count(delta: isize) {
    if COUNTED.try_with(Cell::get).unwrap_or(false) {
        let live = LIVE.fetch_add(delta, Ordering::Relaxed) + delta;
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Runs `f` on this thread and returns its result with the peak heap it added, in bytes.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let _alone = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    LIVE.store(0, Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    COUNTED.with(|c| c.set(true));
    let out = f();
    COUNTED.with(|c| c.set(false));
    (out, PEAK.load(Ordering::Relaxed).max(0) as usize)
}

/// The bundle committed for the crate's tests (built from tlparse's `simple.log`).
pub fn committed_bundle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bundles/simple")
}

/// A fresh copy of the committed bundle under `dir`, to tamper with.
pub fn copy_bundle(dir: &Path) -> PathBuf {
    let to = dir.join("bundle");
    copy_dir(&committed_bundle(), &to);
    to
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Rewrites `manifest.json` after `edit`, and reseals it: each listed file's size and blake3 are
/// set to the file's current bytes (what an attacker who edits a bundle would do).
pub fn edit_manifest(bundle: &Path, reseal: bool, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = bundle.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut m);
    if reseal {
        for f in m["files"].as_array_mut().unwrap() {
            let Some(rel) = f["path"].as_str() else { continue };
            if let Ok(bytes) = std::fs::read(bundle.join(rel)) {
                f["size"] = bytes.len().into();
                f["blake3"] = blake3::hash(&bytes).to_hex().to_string().into();
            }
        }
    }
    std::fs::write(path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
}
