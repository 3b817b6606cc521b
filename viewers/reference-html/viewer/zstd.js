// zstd.js: zstd decoding for the viewer. Where the browser has a native zstd DecompressionStream,
// that is used; elsewhere fzstd.js, a pure-JavaScript decoder (the npm package fzstd, vendored
// unchanged), which is loaded only then, so browsers with a native decoder never fetch it.

function hasNativeZstd() {
  try {
    new DecompressionStream('zstd');
    return true;
  } catch {
    return false;
  }
}

const native = typeof DecompressionStream !== 'undefined' && hasNativeZstd();

let fzstd = null;

/**
 * Decodes zstd data (one or more frames; skippable frames are skipped).
 * @param {Uint8Array} data @returns {Promise<Uint8Array>}
 */
export async function decompress(data) {
  if (native) {
    const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream('zstd'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }
  fzstd ??= import('./fzstd.js');
  fzstd.catch(() => { fzstd = null; });
  try {
    return (await fzstd).decompress(data);
  } catch (e) {
    throw new Error(`invalid zstd data: ${e.message}`);
  }
}

/** Which decoder is in use ('native' or 'fzstd'), for the viewer's about box and tests. */
export const decoder = native ? 'native' : 'fzstd';
