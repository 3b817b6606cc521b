//! zstd decoding for the shipped viewer: a WebAssembly module around `ruzstd`.
//!
//! Browsers have no zstd `DecompressionStream`, and the project copies no third-party code, so
//! the viewer decodes with this crates.io decoder compiled to wasm. The ABI is four functions
//! over linear memory (no wasm-bindgen, so no generated glue): the caller `alloc`s the input,
//! writes it, calls `decompress`, then reads `output_ptr()`/`output_len()` before the next call.
//! `viewer/zstd.js` is the JavaScript side.

use std::io::Read;

/// The last decompressed output, kept until the next call so JavaScript can copy it out.
static mut OUTPUT: Vec<u8> = Vec::new();

/// Allocates `len` bytes for the caller to fill with compressed input.
#[unsafe(no_mangle)]
pub extern "C" fn alloc(len: usize) -> *mut u8 {
    let mut buf = Vec::<u8>::with_capacity(len);
    let ptr = buf.as_mut_ptr();
    std::mem::forget(buf);
    ptr
}

/// Frees input that `alloc` returned.
///
/// # Safety
/// `ptr` and `len` must come from one `alloc` call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dealloc(ptr: *mut u8, len: usize) {
    drop(unsafe { Vec::from_raw_parts(ptr, 0, len) });
}

/// Decodes every zstd frame in `ptr[..len]` (skippable frames are skipped) into the output
/// buffer. Returns 0 on success, -1 if the input is not valid zstd.
///
/// # Safety
/// `ptr[..len]` must be initialised memory from `alloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn decompress(ptr: *const u8, len: usize) -> i32 {
    let input = unsafe { std::slice::from_raw_parts(ptr, len) };
    // SAFETY: wasm32-unknown-unknown is single-threaded; nothing else holds a reference.
    let output = unsafe { &mut *std::ptr::addr_of_mut!(OUTPUT) };
    output.clear();
    output.shrink_to(16 << 20); // don't keep a huge buffer alive after one big file
    match decode_frames(input, output) {
        Ok(()) => 0,
        Err(()) => {
            output.clear();
            -1
        }
    }
}

/// Where the last output starts.
#[unsafe(no_mangle)]
pub extern "C" fn output_ptr() -> *const u8 {
    unsafe { (*std::ptr::addr_of!(OUTPUT)).as_ptr() }
}

/// How long the last output is.
#[unsafe(no_mangle)]
pub extern "C" fn output_len() -> usize {
    unsafe { (*std::ptr::addr_of!(OUTPUT)).len() }
}

fn decode_frames(mut input: &[u8], output: &mut Vec<u8>) -> Result<(), ()> {
    while !input.is_empty() {
        let magic = u32::from_le_bytes(input.get(..4).ok_or(())?.try_into().unwrap());
        if magic & 0xffff_fff0 == 0x184d_2a50 {
            // A skippable frame: 4-byte magic, 4-byte length, then that many bytes.
            let skip = u32::from_le_bytes(input.get(4..8).ok_or(())?.try_into().unwrap()) as usize;
            input = input.get(8 + skip..).ok_or(())?;
            continue;
        }
        let mut decoder = ruzstd::decoding::StreamingDecoder::new(&mut input).map_err(|_| ())?;
        decoder.read_to_end(output).map_err(|_| ())?;
    }
    Ok(())
}
