// search-worker.js: full-text search of artifacts, off the page's thread. A module worker: the
// page (search.js) sends the blobs to search; this worker reads the blob index once, then
// decodes the packs holding those blobs one at a time (the next one downloading meanwhile) and
// reports matches and progress after each. Every file is fetched through the page, which owns the
// bundle's fetch (a local folder's files, a proxy's token): the worker asks, the page answers
// with a Blob. A new query cancels the one running.
//
// Matching: ASCII letters case-insensitively, any other byte exactly. Each pack's bytes are
// folded to lower-case ASCII in place and decoded as windows-1252, which maps every byte to one
// UTF-16 unit, so a string index is a byte offset in the pack, and a match is placed in its blob
// by the blob's offset.

import { openBundle } from './bundle-loader.js';
import { zstdStream } from './zstd.js';

let bundle = null; // a Bundle reading through the page
let wanted = new Set(); // ids of the blobs to search
let locations = null; // Promise<Map<pack index, {offset, size, blob}[]>> of the wanted blobs
let current = 0; // id of the query to run; older ones stop at their next check
let nextRequest = 0;
const pending = new Map(); // request id → resolve of the page's answer

self.onmessage = ({ data }) => {
  if (data.type === 'file') {
    pending.get(data.req)?.(data);
    pending.delete(data.req);
  } else if (data.type === 'open') {
    bundle = zstdStream().then((z) => openBundle(data.base, { fetch: pageFetch, zstdStream: z })).catch((e) => e);
    locations = null;
    wanted = new Set(data.blobs);
  } else if (data.type === 'search') {
    current = data.id;
    run(data.id, data.query).catch((e) => self.postMessage({ type: 'error', id: data.id, message: String(e?.message ?? e) }));
  } else if (data.type === 'cancel') {
    current = 0;
  }
};

/** fetch() answered by the page: it reads the file with the bundle's own fetch. */
function pageFetch(url) {
  const req = ++nextRequest;
  return new Promise((resolve) => {
    pending.set(req, resolve);
    self.postMessage({ type: 'fetch', req, url: String(url) });
  }).then((a) => new Response(a.blob ?? null, { status: a.status, statusText: a.statusText ?? '' }));
}

/** The bundle, opened with the viewer's zstd decoder (the platform's, else fzstd). */
async function opened() {
  const b = await bundle;
  if (b instanceof Error) throw b;
  return b;
}

/**
 * Where each wanted blob is, by pack, sorted by offset: every blob-index shard read once (in
 * parallel, a few at a time).
 */
async function loadLocations(b) {
  const { index_prefix_len: len, index_path: path } = b.manifest.blobs;
  const prefixes = len ? Array.from({ length: 16 ** len }, (_, i) => i.toString(16).padStart(len, '0')) : ['all'];
  const byPack = new Map();
  const readShard = async (prefix) => {
    const entries = JSON.parse(new TextDecoder().decode(await b.bytes(path.replace('{prefix}', prefix))));
    for (const [blob, loc] of Object.entries(entries)) {
      if (!wanted.has(blob)) continue;
      if (!byPack.has(loc.pack)) byPack.set(loc.pack, []);
      byPack.get(loc.pack).push({ offset: loc.offset, size: loc.size, blob });
    }
  };
  for (let i = 0; i < prefixes.length; i += 8) await Promise.all(prefixes.slice(i, i + 8).map(readShard));
  for (const list of byPack.values()) list.sort((a, c) => a.offset - c.offset);
  return new Map([...byPack.entries()].sort((a, c) => a[0] - c[0]));
}

/** Lower-cases ASCII letters in place. */
function foldAscii(bytes) {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c >= 65 && c <= 90) bytes[i] = c + 32;
  }
  return bytes;
}

const latin = new TextDecoder('windows-1252');

/** The query as the pack text is searched: its UTF-8 bytes folded and decoded the same way. */
function needle(query) {
  return latin.decode(foldAscii(new TextEncoder().encode(query)));
}

async function run(id, query) {
  const started = performance.now(); // timings include reading the blob index (the first time)
  const b = await opened();
  if (!locations) locations = loadLocations(b);
  const packs = await locations;
  if (id !== current) return;
  const total = [...packs.keys()].reduce((s, i) => s + b.manifest.blobs.packs[i].raw_size, 0);
  const q = needle(query);
  let done = 0;
  let matches = 0;
  const order = [...packs.keys()];
  let next = order.length ? b.pack(order[0]) : null;
  for (let n = 0; n < order.length; n++) {
    const bytes = await next;
    // Download and decode the next pack while this one is searched.
    next = n + 1 < order.length ? b.pack(order[n + 1]) : null;
    if (id !== current) return;
    const hits = searchPack(bytes, packs.get(order[n]), q);
    matches += hits.reduce((s, x) => s + x.count, 0);
    done += b.manifest.blobs.packs[order[n]].raw_size;
    self.postMessage({ type: 'progress', id, hits, done, total, matches, packs: n + 1, ms: performance.now() - started });
  }
  self.postMessage({ type: 'done', id, done, total, matches, packs: order.length, ms: performance.now() - started });
}

/**
 * The wanted blobs of one decoded pack that hold `q`: per blob, the number of matches, the line
 * of the first (1-based) and that line's text (cut to 160 characters around the match).
 */
function searchPack(bytes, blobs, q) {
  const raw = bytes.slice(); // the loader may cache its copy: fold a copy
  const text = latin.decode(foldAscii(raw));
  const hits = new Map();
  let b = 0;
  for (let at = text.indexOf(q); at >= 0; at = text.indexOf(q, at + q.length)) {
    while (b < blobs.length && blobs[b].offset + blobs[b].size <= at) b++;
    if (b >= blobs.length) break;
    const blob = blobs[b];
    if (at < blob.offset) { at = blob.offset - q.length; continue; } // between wanted blobs
    if (at + q.length > blob.offset + blob.size) continue; // runs past the blob's end
    const hit = hits.get(blob.blob);
    if (hit) { hit.count++; continue; }
    hits.set(blob.blob, { blob: blob.blob, count: 1, ...lineOf(bytes, text, blob.offset, at, q.length) });
  }
  return [...hits.values()];
}

/** The 1-based line of byte `at` within the blob starting at `start`, and that line's text. */
function lineOf(bytes, text, start, at, len) {
  let line = 1;
  for (let i = text.indexOf('\n', start); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) line++;
  const from = Math.max(text.lastIndexOf('\n', at - 1) + 1, start, at - 60);
  let to = text.indexOf('\n', at);
  if (to < 0) to = text.length;
  to = Math.min(to, at + len + 100);
  return { line, snippet: new TextDecoder().decode(bytes.subarray(from, to)) };
}
