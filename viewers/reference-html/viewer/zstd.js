// zstd.js: the zstd decoder the viewer gives the loader. Where the browser has a native zstd
// DecompressionStream, the loader uses it by default; elsewhere fzstd.js, a pure-JavaScript
// decoder (the npm package fzstd, vendored unchanged), which is loaded only then, so browsers
// with a native decoder never fetch it.

import { zstdStreamFromFzstd } from './bundle-loader.js';

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
 * The loader's `zstdStream` option: undefined where the browser decodes zstd itself (the
 * loader's default), else a streaming decoder made from fzstd.js.
 * @returns {Promise<(() => TransformStream<Uint8Array, Uint8Array>) | undefined>}
 */
export async function zstdStream() {
  return native ? undefined : zstdStreamFromFzstd(await import('./fzstd.js'));
}

/** Which decoder is in use ('native' or 'fzstd'), for the viewer's about box and tests. */
export const decoder = native ? 'native' : 'fzstd';
