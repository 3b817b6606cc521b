// zstd.js: zstd decoding for the viewer, as the streaming decoder the loader takes (`zstdStream`).
// Where the browser has a native zstd DecompressionStream, that is used; elsewhere fzstd.js, a
// pure-JavaScript decoder (the npm package fzstd, vendored unchanged), which is loaded only then,
// so browsers with a native decoder never fetch it.

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
 * A streaming zstd decoder (one or more frames; skippable frames are skipped). Streaming lets the
 * loader stop downloading a pack once the blob it wants is decoded.
 * @returns {TransformStream<Uint8Array, Uint8Array>}
 */
export function decompressStream() {
  if (native) return new DecompressionStream('zstd');
  let decoder;
  return new TransformStream({
    async start(out) {
      fzstd ??= import('./fzstd.js');
      fzstd.catch(() => { fzstd = null; });
      const { Decompress } = await fzstd;
      decoder = new Decompress((chunk) => { if (chunk.length) out.enqueue(chunk); });
    },
    transform(chunk) {
      try {
        decoder.push(chunk);
      } catch (e) {
        throw new Error(`invalid zstd data: ${e.message}`);
      }
    },
    flush() {
      try {
        decoder.push(new Uint8Array(0), true);
      } catch (e) {
        throw new Error(`invalid zstd data: ${e.message}`);
      }
    },
  });
}

/** Which decoder is in use ('native' or 'fzstd'), for the viewer's about box and tests. */
export const decoder = native ? 'native' : 'fzstd';
