// zstd.js: zstd decoding for the viewer. Browsers have no zstd DecompressionStream yet, so this
// runs zstd.wasm, the crates.io decoder `ruzstd` compiled to WebAssembly by tlparse-build's
// build (source: viewers/zstd-wasm). Where the browser does have a native zstd
// DecompressionStream, that is used instead and zstd.wasm is never fetched.

let wasm = null;

/** Loads zstd.wasm once. Instantiated from bytes, so any Content-Type works. */
function instance() {
  wasm ??= (async () => {
    const url = new URL('zstd.wasm', import.meta.url);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
    const { instance } = await WebAssembly.instantiate(await response.arrayBuffer(), {});
    return instance.exports;
  })();
  wasm.catch(() => { wasm = null; });
  return wasm;
}

function hasNativeZstd() {
  try {
    new DecompressionStream('zstd');
    return true;
  } catch {
    return false;
  }
}

const native = typeof DecompressionStream !== 'undefined' && hasNativeZstd();

/**
 * Decodes zstd data (one or more frames).
 * @param {Uint8Array} data @returns {Promise<Uint8Array>}
 */
export async function decompress(data) {
  if (native) {
    const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream('zstd'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }
  const z = await instance();
  const ptr = z.alloc(data.length);
  try {
    new Uint8Array(z.memory.buffer, ptr, data.length).set(data);
    if (z.decompress(ptr, data.length) !== 0) throw new Error('invalid zstd data');
    // Copy out: the next call reuses the output buffer, and memory growth detaches views.
    return new Uint8Array(z.memory.buffer, z.output_ptr(), z.output_len()).slice();
  } finally {
    z.dealloc(ptr, data.length);
  }
}

/** Which decoder is in use ('native' or 'wasm'), for the viewer's about box and tests. */
export const decoder = native ? 'native' : 'wasm';
