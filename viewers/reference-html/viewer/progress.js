// progress.js: "Loading compile_directory… 1.2 MiB of 3.4 MiB". The loader reports the bytes of
// every bundle file as they arrive (its onProgress option); a loading note made here shows, once a
// load has taken longer than DELAY_MS, the files fetched since the note appeared and their bytes.

import { h, bytes } from './dom.js';

/** Quick loads show a plain "Loading…": bytes appear only past this. */
const DELAY_MS = 300;

/** Files by request, in start order: {seq, path, loaded, total, done, table}. Old finished ones are
 * dropped. `table` groups the parts of one multi-part table (see the loader's Progress.part). */
const files = new Map();
let seq = 0;

/** The loader's onProgress: `{path, loaded, total, done}` per bundle file (see bundle-loader.js). */
export function onProgress({ path, loaded, total, done, request, part }) {
  let f = files.get(request);
  if (!f) {
    f = { seq: ++seq, path, loaded: 0, total: null, done: false, table: part ? partsOf(path) : null };
    files.set(request, f);
    if (files.size > 64) for (const [k, v] of files) if (v.done && files.size > 64) files.delete(k);
  }
  Object.assign(f, { loaded, total: total ?? f.total, done });
}

/** A bundle path as people name it: tables/log0/compile_directory.json.zst → compile_directory. */
export function fileLabel(path) {
  if (path === 'manifest.json' || path === 'manifest.lite.json.zst') return 'the manifest';
  if (/^index\//.test(path)) return 'the event index';
  if (/^blobs\/packs\//.test(path)) return 'a blob pack';
  if (/^blobs\/index\//.test(path)) return 'the blob index';
  if (/(^|\/)stacks[^/]*$/.test(path)) return 'the stacks';
  const base = partsOf(path).split('/').pop().replace(/\.(json|jsonl)?(\.zst|\.gz)?$/, '').replace(/\.json$/, '');
  return base || path;
}

/** The name shared by the parts of a table: tables/log0/compile_directory.3.json.zst → tables/log0/compile_directory.json.zst. */
function partsOf(path) {
  return /^tables\//.test(path) ? path.replace(/\.\d+(\.json(\.zst)?)$/, '$1') : path;
}

/**
 * Each file's total bytes, and whether some are estimated: a part of a table whose size has not
 * arrived yet counts as the mean of its table's parts that have (the build cuts parts of equal
 * size, the last one smaller), so "N of <size>" counts every part of a table from the first.
 * Null where nothing is known.
 */
function totals(mine) {
  const known = new Map();
  for (const f of mine) {
    if (f.table && f.total != null) known.set(f.table, [...(known.get(f.table) ?? []), f.total]);
  }
  let estimated = false;
  const sizes = mine.map((f) => {
    if (f.total != null) return f.total;
    const sizes = f.table ? known.get(f.table) : null;
    if (!sizes) return null;
    estimated = true;
    return Math.max(f.loaded, Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length));
  });
  return { sizes, estimated };
}

/** The text of the files requested after `since` (a sequence number): names and bytes. */
export function progressText(since, text = 'Loading') {
  const mine = [...files.values()].filter((f) => f.seq > since);
  if (!mine.length) return `${text}…`;
  text = 'Loading';
  const names = [...new Set(mine.map((f) => fileLabel(f.path)))];
  const loaded = mine.reduce((n, f) => n + f.loaded, 0);
  const { sizes, estimated } = totals(mine);
  const known = sizes.every((size) => size != null);
  const total = sizes.reduce((n, size) => n + size, 0);
  const amount = known ? `${bytes(loaded)} of ${estimated ? 'about ' : ''}${bytes(total)}` : bytes(loaded);
  const reading = mine.every((f) => f.done) ? ' (reading)' : '';
  return `${text} ${names.slice(0, 3).join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''}… ${amount}${reading}`;
}

/**
 * A `<p class="loading">` saying `text…`; past DELAY_MS, with the files and bytes fetched since
 * it was made, updated on every animation frame until it leaves the page.
 */
export function loadingNote(text = 'Loading', { cls = 'loading' } = {}) {
  const since = seq;
  const el = h('p', { class: cls, role: 'status', 'aria-live': 'polite' }, `${text}…`);
  const started = performance.now();
  const tick = () => {
    if (performance.now() - started > DELAY_MS) {
      if (!el.isConnected && performance.now() - started > DELAY_MS + 1000) return;
      const t = progressText(since, text);
      if (el.textContent !== t) el.textContent = t;
    }
    if (el.isConnected || performance.now() - started < DELAY_MS + 1000) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  return el;
}
