// bundle-loader.js: read a tlparse bundle over HTTP (or from local files: openBundleFromFiles), in
// any browser, worker or Node >= 20.
// The one loader every viewer in viewers/ uses (the reference viewer ships a copy made by the
// build). Dependency-free ES module; its types are in bundle-loader.d.ts and schema.d.ts.
// It never relies on response headers: hosts that gzip responses on the fly (GitHub Pages) and
// hosts that don't both work. Compressed bundle files (`.zst`: packs, index, tables, blob-index
// shards) are zstd; bring a decoder where the platform has none (see OpenOptions).

/** The reader version this loader is: the major of the format its types (schema.d.ts) describe.
 * It reads every bundle of that major (any 2.x bundle) and ignores the fields it does not know
 * (docs/format.md, Versioning); an older major's files are laid out otherwise (tables of one file
 * each, each compile's artifacts inside its row), so those are refused. */
export const READER_VERSION = 2;

/** Parts of one table fetched ahead of the one being read: a merged read does not wait for each
 * part in turn, and a walk with `tableParts` holds at most this many parts besides its own. */
const PARTS_AHEAD = 3;

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

/**
 * @typedef {{pack: number, offset: number, size: number}} BlobLocation
 * @typedef {{frames: {file: string, line: number, name: string, loc?: string}[], stacks: number[][]}} StackTable
 * @typedef {object} OpenOptions
 * @property {() => TransformStream<Uint8Array, Uint8Array>} [zstdStream] makes a streaming zstd
 *   decoder; lets the loader stop reading a pack once the blob it wants is decoded. Default: the
 *   platform's `DecompressionStream('zstd')` where it exists; `zstdStreamFromFzstd(fzstd)` wraps
 *   the npm package fzstd.
 * @property {(data: Uint8Array) => Uint8Array | Promise<Uint8Array>} [zstdDecompress] a
 *   whole-buffer zstd decoder (e.g. fzstd's `decompress`), used when no `zstdStream` is given.
 * @property {typeof fetch} [fetch] fetch to use (default: the global one).
 * @property {number} [packCacheSize] decoded packs kept in memory (default 4, ~1 MiB each).
 * @property {number} [shardCacheSize] blob-index shards kept in memory (default 16).
 * @property {(p: Progress) => void} [onProgress] told as each bundle file is requested and as its
 *   bytes arrive, e.g. to show "compile_directory… 1.2 MiB of 3.4 MiB" during a slow load.
 */

/**
 * @typedef {object} Progress
 * @property {string} path the file, relative to the bundle (`manifest.json`, `tables/…`)
 * @property {number} loaded bytes received so far (as sent: compressed for `.zst` files)
 * @property {number | null} total a pack's size from the manifest, any other file's
 *   Content-Length, null when unknown
 * @property {boolean} done the body was read to its end, cancelled, or the request failed
 * @property {object} request the same object for every report about one request
 * @property {{index: number, count: number}} [part] for a part of a table stored in several, which
 *   one (from 0) and how many the table has. All the parts of a table are reported (`loaded` 0)
 *   as soon as its read starts, so a progress total can count every part; each is fetched later,
 *   a few at a time, and reported as its bytes arrive.
 */

/** The bundle's directory URL (ending in `/`) of `baseUrl`, resolved against the page. */
function bundleBase(baseUrl) {
  const base = new URL(baseUrl, globalThis.location?.href);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return base;
}

/**
 * The manifest without its file lists and hashes (`files`, `viewer`, the inputs' `blake3`),
 * zstd-compressed: every bundle has it, and `openBundle` reads it instead of `manifest.json` (at
 * 1,000 ranks it is about 2% of the manifest's bytes).
 */
export const LITE_MANIFEST = 'manifest.lite.json.zst';

/**
 * The URL of a bundle's manifest.json.
 * @param {string | URL} baseUrl @returns {URL}
 */
export function manifestUrl(baseUrl) {
  return new URL('manifest.json', bundleBase(baseUrl));
}

/**
 * The URL `openBundle(baseUrl)` fetches first (e.g. to start that download early): the lite
 * manifest.
 * @param {string | URL} baseUrl @returns {URL}
 */
export function liteManifestUrl(baseUrl) {
  return new URL(LITE_MANIFEST, bundleBase(baseUrl));
}

/**
 * Opens the bundle at `baseUrl` (the directory holding manifest.json): fetches its lite manifest
 * and checks that this loader can read it.
 * @param {string | URL} baseUrl
 * @param {OpenOptions} [opts]
 * @returns {Promise<Bundle>}
 */
export async function openBundle(baseUrl, opts = {}) {
  const base = bundleBase(baseUrl);
  const doFetch = opts.fetch ?? ((...a) => globalThis.fetch(...a));
  const bundle = new Bundle(base, null, doFetch, opts);
  const liteUrl = new URL(LITE_MANIFEST, base);
  const lite = opts.onProgress
    ? await counted(doFetch, liteUrl, reporter(opts.onProgress, { path: LITE_MANIFEST, total: null }))
    : await get(doFetch, liteUrl);
  const manifest = JSON.parse(new TextDecoder().decode(await bundle._decoded(lite, Infinity)));
  if (manifest?.format !== 'tlparse-bundle') {
    throw new Error(`${base}${LITE_MANIFEST} is not a tlparse bundle manifest (format: ${JSON.stringify(manifest?.format)})`);
  }
  if (!(manifest.min_reader_version <= READER_VERSION)) {
    throw new Error(`This bundle (format version ${manifest.format_version}) needs a bundle reader of version ` +
      `${manifest.min_reader_version} or newer; this bundle-loader.js is version ${READER_VERSION}. Update the viewer.`);
  }
  if (manifest.min_reader_version < READER_VERSION) {
    throw new Error(`This bundle is of format ${manifest.format_version}, which this bundle-loader.js (format ${READER_VERSION}) ` +
      'does not read: rebuild it with a current tlparse-build, or open it with the viewer inside it.');
  }
  if (manifest.blobs.compression !== 'zstd') throw new Error(`unsupported blob compression ${manifest.blobs.compression}`);
  bundle.manifest = manifest;
  return bundle;
}

/**
 * @typedef {{path: string, file: Blob}} LocalFile a file of a picked or dropped folder and its path
 *   in it, `/`-separated (`my-bundle/tables/log0/compile_directory.json.zst`)
 */

/** Scheme of the URLs of a bundle opened from local files: not fetchable, so no read can escape to
 * the network even through a fetch other than the one openBundleFromFiles makes. */
const LOCAL_SCHEME = 'bundle-folder:';

/**
 * Opens a bundle from local files, read entirely in this page (nothing is uploaded): the `File`s
 * of a folder picked with `<input type=file webkitdirectory>` (each path is its
 * `webkitRelativePath`) or dropped (see {@link filesFromDataTransfer}). The bundle is the folder
 * holding `manifest.json`: the picked folder itself or any folder inside it (one only). Only the
 * files under that folder can be read; every read goes through the same code as over HTTP.
 * @param {Iterable<File | LocalFile>} files
 * @param {OpenOptions} [opts] as for {@link openBundle} (`fetch` is replaced)
 * @returns {Promise<Bundle>}
 */
export async function openBundleFromFiles(files, opts = {}) {
  const { name, byPath } = bundleFolder([...files].map(asLocalFile));
  const base = new URL(`${LOCAL_SCHEME}/${encodeURIComponent(name || 'files')}/`);
  const bundle = await openBundle(base, { ...opts, fetch: localFetch(base, byPath) });
  bundle.localFolder = name || 'dropped files';
  return bundle;
}

/** `{path, file}` of a File (its `webkitRelativePath`, else its name) or of a LocalFile. */
function asLocalFile(f) {
  if (f && typeof f.path === 'string' && f.file instanceof Blob) return f;
  if (f instanceof Blob) return { path: f.webkitRelativePath || f.name, file: f };
  throw new TypeError('openBundleFromFiles takes File objects or {path, file} pairs');
}

/**
 * The bundle among the files: the one folder holding a `manifest.json`, its name (last path
 * segment; '' when the files were dropped loose) and its files by path relative to it.
 * @param {LocalFile[]} files
 */
function bundleFolder(files) {
  const checked = files.map((f) => ({ segments: safeSegments(f.path), file: f.file }));
  const roots = checked.filter((f) => f.segments.at(-1) === 'manifest.json').map((f) => f.segments.slice(0, -1));
  if (roots.length === 0) {
    throw new Error(`No manifest.json among the ${files.length} files opened: open the bundle's folder ` +
      '(made by tlparse-build TRACE -o FOLDER), or a folder holding it.');
  }
  if (roots.length > 1) {
    const listed = roots.slice(0, 5).map((r) => `${r.join('/') || '(top)'}/`).join(', ');
    throw new Error(`${roots.length} bundles (folders with a manifest.json) among the files opened: ${listed}` +
      `${roots.length > 5 ? ` and ${roots.length - 5} more` : ''}. Open one bundle's folder.`);
  }
  const root = roots[0];
  const byPath = new Map();
  for (const f of checked) {
    if (f.segments.length <= root.length || !root.every((s, i) => f.segments[i] === s)) continue;
    const rel = f.segments.slice(root.length).join('/');
    if (byPath.has(rel)) throw new Error(`two files opened at the same path ${root.concat(rel).join('/')}`);
    byPath.set(rel, f.file);
  }
  return { name: root.at(-1) ?? '', byPath };
}

/** A path's segments; refuses absolute paths, `.`, `..` and empty segments. */
function safeSegments(path) {
  const segments = String(path).split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw new Error(`refused the file path ${JSON.stringify(path)}: a bundle's paths are relative, ` +
      'with no empty, "." or ".." segment');
  }
  return segments;
}

/** A fetch answering the URLs under `base` from `byPath`, a 404 naming the file for any other. */
function localFetch(base, byPath) {
  return async (input) => {
    const url = new URL(typeof input === 'object' && 'url' in input ? input.url : String(input));
    const rel = url.href.startsWith(base.href) ? decodeURIComponent(url.pathname.slice(base.pathname.length)) : null;
    const file = rel !== null && !rel.split('/').some((s) => s === '' || s === '.' || s === '..') ? byPath.get(rel) : undefined;
    if (!file) return new Response('not found', { status: 404, statusText: 'Not Found: no such file in the opened folder' });
    return new Response(file);
  };
}

/**
 * The files of what was dropped (a `drop` event's `dataTransfer`), walking dropped folders
 * (`webkitGetAsEntry`; every batch of `readEntries`). Call it in the drop handler before any
 * `await`: a DataTransfer's items are readable only during the event. Paths start with the
 * dropped item's name (`my-bundle/manifest.json`), as a picked folder's `webkitRelativePath`s do.
 * @param {DataTransfer} dataTransfer @returns {Promise<LocalFile[]>}
 */
export function filesFromDataTransfer(dataTransfer) {
  const items = [...(dataTransfer.items ?? [])].filter((i) => i.kind === 'file');
  const roots = items.map((i) => ({ entry: i.webkitGetAsEntry?.() ?? null, file: i.getAsFile() }));
  if (items.length === 0) return Promise.resolve([...(dataTransfer.files ?? [])].map(asLocalFile));
  return (async () => {
    const out = [];
    for (const { entry, file } of roots) {
      if (entry?.isDirectory) await walkDirectory(entry, entry.name, out);
      else if (file) out.push(asLocalFile(file));
    }
    return out;
  })();
}

/** Adds the files under a FileSystemDirectoryEntry to `out`, with paths starting at `path`. */
async function walkDirectory(dir, path, out) {
  const reader = dir.createReader();
  // readEntries answers in batches (100 at a time in Chromium) until an empty one.
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return;
    for (const entry of batch) {
      const child = `${path}/${entry.name}`;
      if (entry.isDirectory) await walkDirectory(entry, child, out);
      else if (entry.isFile) out.push({ path: child, file: await new Promise((resolve, reject) => entry.file(resolve, reject)) });
    }
  }
}

/** An open bundle. Get one with {@link openBundle} or {@link openBundleFromFiles}. */
export class Bundle {
  /** @param {URL} base @param {any} manifest @param {typeof fetch} doFetch @param {OpenOptions} opts */
  constructor(base, manifest, doFetch, opts) {
    /** The bundle's URL (ends with '/'). */
    this.base = base;
    /** The parsed lite manifest (LITE_MANIFEST): manifest.json without `files`, `viewer` and the
     * inputs' `blake3`; `fullManifest()` fetches the whole one. */
    this.manifest = manifest;
    this._full = null;
    this._fetch = doFetch;
    this._zstdStream = opts.zstdStream ?? (opts.zstdDecompress ? null : nativeZstdStream);
    this._zstd = opts.zstdDecompress ?? null;
    this._shards = new Lru(opts.shardCacheSize ?? 16);
    this._packs = new Lru(opts.packCacheSize ?? 4);
    this._stacks = new Map();
    this._files = new Lru(8);
    /** onProgress (see OpenOptions); may be set or replaced at any time. */
    this.onProgress = opts.onProgress ?? null;
    /** Sizes of the bundle's files by path, for progress reports. */
    this._sizes = null;
    /** The name of the local folder the bundle was read from (openBundleFromFiles); null over HTTP. */
    this.localFolder = null;
  }

  /**
   * Fetches a bundle file (path relative to the bundle) and checks the response status. `report`
   * (from `_reporter`) is the progress reporter of a request announced before it is made.
   */
  _get(path, missingOk = false, report = null) {
    const url = new URL(path, this.base);
    if (!url.href.startsWith(this.base.href)) throw new Error(`path ${path} leaves the bundle`);
    report ??= this.onProgress ? reporter(this.onProgress, { path, total: this._size(path) }) : null;
    if (!report) return get(this._fetch, url, missingOk);
    return counted(this._fetch, url, report, missingOk);
  }

  /**
   * The whole manifest.json, with the file lists and hashes, fetched once (at 1,000 ranks it is
   * megabytes).
   * @returns {Promise<any>}
   */
  fullManifest() {
    this._full ??= this._get('manifest.json').then((r) => r.json());
    this._full.catch(() => { this._full = null; });
    return this._full;
  }

  /** A pack's size from the lite manifest, null for any other file (the lite manifest lists only
   * the packs: the others' sizes come from their Content-Length). */
  _size(path) {
    if (!this._sizes) {
      this._sizes = new Map((this.manifest.blobs?.packs ?? []).map((p) => [p.path, p.size]));
    }
    return this._sizes.get(path) ?? null;
  }

  _stream(id) {
    const s = this.manifest.streams.find((s) => s.id === id);
    if (!s) throw new Error(`no stream ${JSON.stringify(id)} in this bundle`);
    return s;
  }

  /**
   * The index rows of a stream, in log order, decompressed and parsed as they arrive, each with
   * the `seq` and `line` the file leaves out filled in (see `RowNumbering`).
   * @param {string} streamId a `manifest.streams[i].id`
   * @returns {AsyncGenerator<any>}
   */
  async *indexRows(streamId) {
    const numbering = new RowNumbering();
    const stream = this._stream(streamId);
    const rows = atMost(this._storedIndexRows(streamId), stream.entries, `${stream.index}`, 'entries');
    for await (const row of rows) yield numbering.fill(row);
  }

  /** The index rows of a stream as stored: without `seq`, and without the `line`s implied. */
  async *_storedIndexRows(streamId) {
    const response = await this._get(this._stream(streamId).index);
    if (!this._zstdStream) {
      yield* jsonLines(await this._decoded(response, Infinity));
      return;
    }
    // Streaming: rows come out as their bytes are decoded, so a viewer can show the first rows of
    // a large index long before its end is decoded.
    const [head, rest] = await peek(response.body, ZSTD_MAGIC.length);
    const stream = startsWithZstd(head) ? rest.pipeThrough(this._zstdStream()) : rest;
    const reader = stream.getReader();
    let carry = new Uint8Array(0); // the start of a line whose end has not arrived
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const cut = value.lastIndexOf(10);
        if (cut < 0) {
          carry = concat([carry, value], carry.length + value.length);
          continue;
        }
        const lines = carry.length ? concat([carry, value.subarray(0, cut + 1)], carry.length + cut + 1) : value.subarray(0, cut + 1);
        carry = value.slice(cut + 1);
        yield* jsonLines(lines);
      }
      yield* jsonLines(carry);
    } finally {
      reader.cancel().catch(() => {}); // the caller stopped early: stop the download too
    }
  }

  /**
   * One analysis table of a stream (see docs/tables/), parsed; null when the stream has no data
   * for it (`manifest.streams[i].tables` lists the tables that exist).
   * @param {string} streamId @param {string} name e.g. 'compile_directory' @returns {Promise<any | null>}
   */
  async table(streamId, name) {
    const t = this._stream(streamId).tables?.[name];
    return t ? this._mergedTable(t) : null;
  }

  /**
   * The parts of one table of a stream (see `table`), each a parsed JSON document holding a slice
   * of the table's lists, in order; nothing when the stream has no data for it. A reader walking
   * a large table this way holds one part (and the few fetched ahead), never the whole table.
   * @param {string} streamId @param {string} name @returns {AsyncGenerator<any>}
   */
  async *tableParts(streamId, name) {
    const t = this._stream(streamId).tables?.[name];
    if (t) yield* this._parsedParts(t);
  }

  /**
   * A table read whole, parsed anew on every call (callers may change what they get), from bytes
   * fetched and decoded once: the last few tables stay cached, so `table()` then `artifact()` on
   * the same stream fetch compile_directory once. The table is its first part with every
   * top-level list extended by the same list of each later part, in order.
   */
  async _mergedTable(ref) {
    const parts = await this._files.get(partPaths(ref)[0], () => collect(this._partBytes(ref)));
    const utf8 = new TextDecoder();
    let merged = null;
    for (const bytes of parts) {
      const part = JSON.parse(utf8.decode(bytes));
      merged = merged ? appendLists(merged, part) : part;
    }
    return merged;
  }

  /** The parts of a table parsed one at a time, from the cache when the table was read whole. */
  async *_parsedParts(ref) {
    const utf8 = new TextDecoder();
    const cached = this._files.peek(partPaths(ref)[0]);
    const parts = cached ? await cached : this._partBytes(ref);
    for await (const bytes of parts) yield JSON.parse(utf8.decode(bytes));
  }

  /**
   * The decoded bytes of a table's parts in order, up to PARTS_AHEAD of them fetched ahead. With
   * onProgress, every part is announced first; those never fetched (the caller stopped early or a
   * read failed) are reported done.
   */
  async *_partBytes(ref) {
    const paths = partPaths(ref);
    const count = paths.length;
    const reports = paths.map((path, index) => (this.onProgress
      ? reporter(this.onProgress, { path, total: null, part: count > 1 ? { index, count } : undefined }) : null));
    const ahead = [];
    let next = 0;
    const fetchAhead = () => {
      while (next < count && ahead.length <= PARTS_AHEAD) {
        const i = next++;
        const bytes = this._get(paths[i], false, reports[i]).then((r) => this._decoded(r, Infinity));
        bytes.catch(() => {}); // awaited in turn below; a failure before then is not unhandled
        ahead.push(bytes);
      }
    };
    try {
      for (let i = 0; i < count; i++) {
        fetchAhead();
        yield await ahead.shift();
      }
    } finally {
      for (const report of reports.slice(next)) report?.(0, true);
    }
  }

  /**
   * A stream's Chrome trace (its chromium events) as the bytes of a JSON file, ready for Perfetto
   * or a download; null when the stream logged no chromium events. The file is stored gzipped;
   * it is decoded with `DecompressionStream('gzip')` unless the host already did.
   * @param {string} streamId @returns {Promise<Uint8Array | null>}
   */
  async chromeTrace(streamId) {
    const path = this._stream(streamId).chrome_trace;
    return path ? this._gunzipped(path) : null;
  }

  /**
   * One cross-rank table (see docs/cross_rank/), parsed; null when the bundle has a single stream
   * or the table has no rows (`manifest.cross_rank.tables` lists the ones that exist). Tables name
   * streams by id; `manifest.cross_rank.members` gives each one's label (`rank 3`).
   * @param {string} name e.g. 'compile_alignment' @returns {Promise<any | null>}
   */
  async crossRankTable(name) {
    const t = this.manifest.cross_rank?.tables?.[name];
    return t ? this._mergedTable(t) : null;
  }

  /**
   * The parts of one cross-rank table (see `crossRankTable` and `tableParts`), parsed, in order;
   * nothing when the bundle has no such table.
   * @param {string} name @returns {AsyncGenerator<any>}
   */
  async *crossRankTableParts(name) {
    const t = this.manifest.cross_rank?.tables?.[name];
    if (t) yield* this._parsedParts(t);
  }

  /**
   * A cross-rank Chrome trace as the bytes of a JSON file (one process per stream): `field` is its
   * field in `manifest.cross_rank`, `chrome_trace` (every stream's chromium events) by default.
   * Null when the bundle has none.
   * @param {string} [field] @returns {Promise<Uint8Array | null>}
   */
  async crossRankTrace(field = 'chrome_trace') {
    const path = this.manifest.cross_rank?.[field];
    return typeof path === 'string' ? this._gunzipped(path) : null;
  }

  /** A gzip file's bytes, decoded unless the host already decoded them. */
  async _gunzipped(path) {
    const data = new Uint8Array(await (await this._get(path)).arrayBuffer());
    if (!(data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b)) return data;
    const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  /** The diagnostics (problems found in the logs), in input order. @returns {AsyncGenerator<any>} */
  async *diagnostics() {
    const { path, total } = this.manifest.diagnostics;
    yield* atMost(jsonLines(await this.bytes(path)), total, path, 'diagnostics');
  }

  /**
   * Any bundle file's bytes (path relative to the bundle), zstd-decoded when it is zstd (sniffed
   * from its magic number rather than trusting headers: a host may already have decoded it).
   * @param {string} path @returns {Promise<Uint8Array>}
   */
  async bytes(path) {
    return this._decoded(await this._get(path), Infinity);
  }

  /**
   * The first `want` decoded bytes of a response (or more: whole decoded chunks are kept), all of
   * them when `want` is Infinity; zstd is decoded when the body starts with its magic number.
   * With a streaming decoder, reading stops (and the download is cancelled) once `want` bytes
   * are decoded; at most `limit` bytes are ever decoded.
   */
  async _decoded(response, want, limit = Infinity) {
    if (!this._zstdStream) {
      const data = new Uint8Array(await response.arrayBuffer());
      return startsWithZstd(data) ? await this._zstd(data) : data;
    }
    const [head, rest] = await peek(response.body, ZSTD_MAGIC.length);
    const stream = startsWithZstd(head) ? rest.pipeThrough(this._zstdStream()) : rest;
    return readUpTo(stream, want, limit);
  }

  /**
   * A stream's stack table: rows refer to stacks by index (`row.stack`, and `row.meta[f]` for
   * every field `f` listed in `row.meta_stacks`).
   * @param {string} streamId @returns {Promise<StackTable>}
   */
  stacks(streamId) {
    const path = this._stream(streamId).stacks;
    if (!this._stacks.has(path)) {
      const p = this._get(path).then((r) => r.json());
      p.catch(() => this._stacks.delete(path));
      this._stacks.set(path, p);
    }
    return this._stacks.get(path);
  }

  /**
   * Where a blob is stored, or null if the bundle has no blob with that hash. Fetches (and caches)
   * one blob-index shard.
   * @param {string} hash a blob id: 32 lowercase hex digits @returns {Promise<BlobLocation | null>}
   */
  async locate(hash) {
    if (!/^[0-9a-f]{32}$/.test(hash)) return null;
    const b = this.manifest.blobs;
    const shard = b.index_prefix_len ? hash.slice(0, b.index_prefix_len) : 'all';
    const entries = await this._shards.get(shard, async () =>
      JSON.parse(new TextDecoder().decode(await this.bytes(b.index_path.replace('{prefix}', shard)))));
    return Object.hasOwn(entries, hash) ? entries[hash] : null;
  }

  /**
   * The bytes of a blob (a copy; the decoded pack, or the part of it read so far, stays cached).
   * With a streaming zstd decoder, the first blob read from a pack downloads only the pack's start,
   * up to the blob's end; a later blob past that part reads the whole pack once.
   * @param {string} hash @returns {Promise<Uint8Array>}
   */
  async blob(hash) {
    const loc = await this.locate(hash);
    if (!loc) throw new Error(`no blob ${hash} in this bundle`);
    const end = loc.offset + loc.size;
    let pack = await this._packs.get(loc.pack, () => this._loadPack(loc.pack, end));
    // The cached start of the pack ends before this blob: read the whole pack this time, so that
    // reading many blobs of a pack costs at most two downloads of it.
    if (pack.length < end) pack = await this._packs.replace(loc.pack, () => this._loadPack(loc.pack));
    return pack.slice(loc.offset, end);
  }

  /** A blob decoded as UTF-8 text. @param {string} hash @returns {Promise<string>} */
  async text(hash) {
    return new TextDecoder().decode(await this.blob(hash));
  }

  /**
   * One compile's row of a stream's `compile_directory`, or null when the stream has no
   * such compile. `compileId` as displayed (`[0/1]`, `[!0/1/0]`) or without brackets (`0/1`).
   * @param {string} streamId @param {string} compileId
   * @returns {Promise<import('./schema').CompileEntry | null>}
   */
  async compile(streamId, compileId) {
    const dir = await this.table(streamId, 'compile_directory');
    const id = compileId.startsWith('[') ? compileId : `[${compileId}]`;
    return dir?.compiles.find((c) => c.compile_id === id) ?? null;
  }

  /**
   * The text of one artifact of a compile, by name (`inductor_output_code`, `dynamo_output_graph`,
   * `fx_graph_runnable`, ...: `compile_directory.artifacts[].name`), read through the
   * compile directory, one blob-index shard and the start of one pack: never the event index.
   * `nth` picks among artifacts logged more than once under the name. Null when the compile or the
   * artifact does not exist; '' for an artifact logged without a payload (a link's URL for a link).
   * @param {string} streamId @param {string} compileId @param {string} name @param {number} [nth]
   * @returns {Promise<string | null>}
   */
  async artifact(streamId, compileId, name, nth = 0) {
    const dir = await this.table(streamId, 'compile_directory');
    const id = compileId.startsWith('[') ? compileId : `[${compileId}]`;
    const compile = dir?.compiles.find((c) => c.compile_id === id);
    const ref = compile && compileArtifacts(dir, compile).filter((a) => a.name === name)[nth];
    if (!ref) return null;
    if (ref.blob == null) return ref.url ?? '';
    return this.text(ref.blob);
  }

  /**
   * Pack `i` of `manifest.blobs.packs`, decoded whole and checked against its `raw_size`; the
   * offsets `locate` gives index it. Not cached: a reader of every pack (a full-text search)
   * holds one at a time.
   * @param {number} i @returns {Promise<Uint8Array>}
   */
  pack(i) {
    return this._loadPack(i);
  }

  /** Pack `i` decoded up to at least byte `end` (all of it when `end` is Infinity). */
  async _loadPack(i, end = Infinity) {
    const info = this.manifest.blobs.packs[i];
    if (!info) throw new Error(`no pack ${i} in this bundle`);
    if (end !== Infinity && end > info.raw_size) {
      throw new Error(`pack ${info.path}: a blob ends at byte ${end}, past its ${info.raw_size} bytes`);
    }
    const raw = await this._decoded(await this._get(info.path), end, info.raw_size);
    const complete = end === Infinity || raw.length < end || !this._zstdStream;
    if (complete && raw.length !== info.raw_size) {
      throw new Error(`pack ${info.path}: decoded ${raw.length} bytes, manifest says ${info.raw_size}`);
    }
    return raw;
  }
}

/**
 * One compile's artifacts in a stream's `compile_directory` table (as `Bundle.table` returns it):
 * the slice of the table's `artifacts` list its row names by `first_artifact` and
 * `artifact_count`, in log order. Throws when the row names artifacts the table does not have.
 * @param {import('./schema').CompileDirectory} directory
 * @param {import('./schema').CompileEntry} compile
 * @returns {import('./schema').CompileArtifact[]}
 */
export function compileArtifacts(directory, compile) {
  const from = compile.first_artifact;
  const count = compile.artifact_count;
  const all = directory.artifacts;
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(count) || from < 0 || count < 0 || from + count > all.length) {
    throw new Error(`compile_directory: compile ${compile.compile_id} names artifacts ${from}..${from + count}, but the table has ${all.length}`);
  }
  return all.slice(from, from + count);
}

/**
 * A `zstdStream` option made from the npm package fzstd (`import * as fzstd from 'fzstd'`): its
 * streaming `Decompress` wrapped as a TransformStream.
 * @param {{Decompress: any}} fzstd @returns {() => TransformStream<Uint8Array, Uint8Array>}
 */
export function zstdStreamFromFzstd(fzstd) {
  return () => {
    let decoder;
    return new TransformStream({
      start(out) { decoder = new fzstd.Decompress((chunk) => { if (chunk.length) out.enqueue(chunk); }); },
      transform(chunk) { decoder.push(chunk); },
      flush() { decoder.push(new Uint8Array(0), true); },
    });
  };
}

/**
 * The paths of a table's parts, in order (`parts` of its reference in the manifest).
 * @param {{parts: string[]}} ref @returns {string[]}
 */
function partPaths(ref) {
  const paths = ref.parts ?? [];
  if (!Array.isArray(paths) || paths.length === 0 || !paths.every((p) => typeof p === 'string')) {
    throw new Error(`a table reference without parts: ${JSON.stringify(ref)}`);
  }
  return paths;
}

/**
 * `merged` (a table's first part, or the parts before) with every top-level list extended by the
 * same member of `part`: a table's list is the concatenation of that member over its parts.
 */
function appendLists(merged, part) {
  for (const [key, value] of Object.entries(merged)) {
    if (!Array.isArray(value)) continue;
    const more = part?.[key];
    if (!Array.isArray(more)) throw new Error(`a table part has no list ${JSON.stringify(key)}, as its first part has`);
    for (const item of more) value.push(item);
  }
  return merged;
}

/**
 * `rows`, refused at the first one past the `declared` number (the manifest's count): a file
 * holding more than its manifest says is damaged or hostile, and is not read on.
 * @template T @param {AsyncIterable<T> | Iterable<T>} rows @param {number} declared
 * @param {string} path @param {string} what @returns {AsyncGenerator<T>}
 */
async function* atMost(rows, declared, path, what) {
  if (!Number.isSafeInteger(declared) || declared < 0) throw new Error(`manifest: the ${what} of ${path} are not counted`);
  let n = 0;
  for await (const row of rows) {
    if (n++ >= declared) throw new Error(`${path}: more rows than the ${declared} ${what} the manifest declares`);
    yield row;
  }
}

/** Every value of an async iterable, in an array. */
async function collect(iterable) {
  const out = [];
  for await (const v of iterable) out.push(v);
  return out;
}

/**
 * A progress reporter for one request: `report(loaded, done)` tells `onProgress` about `file`
 * (`{path, total, part?}`); it says `loaded` 0 at once, announcing the request.
 */
function reporter(onProgress, file) {
  const request = {};
  const report = (loaded, done) => {
    if (report.ended) return;
    report.ended = done;
    const p = { path: file.path, loaded, total: file.total, done, request };
    if (file.part) p.part = file.part;
    try { onProgress(p); } catch { /* a reporter's failure is not the read's */ }
  };
  report.file = file;
  report(0, false);
  return report;
}

/**
 * `get` reporting progress through `report` (see `reporter`, which said the request started): as
 * the body's bytes arrive, and `done` at its end (or when it is cancelled, or fails). The response
 * is a new one whose body counts the bytes read; status and headers are the original's.
 */
async function counted(doFetch, url, report, missingOk = false) {
  let r;
  try {
    r = await get(doFetch, url, missingOk);
  } catch (e) {
    report(0, true);
    throw e;
  }
  if (!r?.body) {
    report(0, true);
    return r;
  }
  report.file.total ??= Number(r.headers.get('Content-Length')) || null;
  const reader = r.body.getReader();
  let loaded = 0;
  const body = new ReadableStream({
    async pull(out) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        report(loaded, true);
        throw e;
      }
      if (chunk.done) {
        report(loaded, true);
        out.close();
        return;
      }
      loaded += chunk.value.length;
      report(loaded, false);
      out.enqueue(chunk.value);
    },
    cancel(reason) {
      report(loaded, true);
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: r.status, statusText: r.statusText, headers: r.headers });
}

/** fetch + status check; with `missingOk`, a 404 yields null. */
async function get(doFetch, url, missingOk = false) {
  let r;
  try {
    r = await doFetch(url);
  } catch (e) {
    // Browsers say only "Failed to fetch": name the URL and the usual cause.
    throw new Error(`GET ${url}: ${e.message} (network error; a bundle on another host than this ` +
      `page must be served with CORS headers that allow this page's origin)`);
  }
  if (missingOk && r.status === 404) return null;
  if (!r.ok) throw new HttpError(url, r);
  return r;
}

/**
 * A bundle file answered with an HTTP error status (the loader's other failures are plain
 * `Error`s). Its message is `GET URL: HTTP STATUS TEXT` and its `name` stays 'Error' (as before
 * it had a class); its fields let a viewer react to the
 * status, e.g. ask for a token after `401` with `WWW-Authenticate: Bearer` (a cross-origin page
 * can read that header only when the server exposes it, as `tlparse-build proxy` does).
 */
export class HttpError extends Error {
  /** @param {URL | string} url @param {{status: number, statusText: string, headers?: Headers}} response */
  constructor(url, response) {
    super(`GET ${url}: HTTP ${response.status} ${response.statusText}`);
    /** The URL fetched. */
    this.url = String(url);
    /** The HTTP status (401, 404, ...). */
    this.status = response.status;
    /** The response's `WWW-Authenticate` header; null when absent or not readable by this page. */
    this.wwwAuthenticate = response.headers?.get('WWW-Authenticate') ?? null;
  }
}

/** Default streaming zstd decoder: the platform's DecompressionStream, where it supports zstd. */
function nativeZstdStream() {
  try {
    return new DecompressionStream('zstd');
  } catch {
    throw new Error("This browser has no zstd DecompressionStream: pass a decoder, e.g. " +
      "openBundle(url, {zstdStream: zstdStreamFromFzstd(fzstd)}) with the npm package fzstd");
  }
}

function startsWithZstd(data) {
  return data.length >= 4 && ZSTD_MAGIC.every((b, i) => data[i] === b);
}

/** The first `n` bytes of a body (fewer if it is shorter), and a stream of all of it. */
async function peek(body, n) {
  const reader = body.getReader();
  const parts = [];
  let got = 0;
  while (got < n) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    got += value.length;
  }
  const head = concat(parts, got);
  const all = new ReadableStream({
    start(out) { if (head.length) out.enqueue(head); },
    async pull(out) {
      const { done, value } = await reader.read();
      if (done) out.close();
      else out.enqueue(value);
    },
    cancel(reason) { return reader.cancel(reason); },
  });
  return [head, all];
}

/** Reads a stream until `want` bytes (then cancels it) or its end; fails past `limit` bytes. */
async function readUpTo(stream, want, limit) {
  const reader = stream.getReader();
  const parts = [];
  let got = 0;
  while (got < want) {
    const { done, value } = await reader.read();
    if (done) break;
    got += value.length;
    if (got > limit) {
      reader.cancel().catch(() => {});
      throw new Error(`decoded more than the ${limit} bytes the manifest announces`);
    }
    parts.push(value);
  }
  if (got >= want) reader.cancel().catch(() => {});
  return concat(parts, got);
}

function concat(parts, total) {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/**
 * Numbers the rows of one stream's index as they are read, in order: a row stores no `seq` (its
 * position, from 0) and stores `line` only where the row before does not imply it (the first row
 * implies line 1; a row implies `line + 1 + payload.lines`). Use it when reading an index file
 * yourself; `indexRows` does.
 */
export class RowNumbering {
  constructor() { this.seq = 0; this.nextLine = 1; }
  /** Fills in `row.seq` and, unless stored, `row.line`; returns the row. */
  fill(row) {
    const count = (n) => (Number.isSafeInteger(n) && n > 0 ? n : 0); // a hostile row's junk is 0
    row.seq = this.seq++;
    if (!count(row.line)) row.line = this.nextLine;
    this.nextLine = row.line ? row.line + 1 + count(row.payload?.lines) : 0;
    return row;
  }
}

/**
 * Parses JSONL bytes line by line, decoding one line at a time (never the whole file as one
 * string: an index can be larger than a JavaScript string may be).
 * @param {Uint8Array} bytes
 */
function* jsonLines(bytes) {
  const utf8 = new TextDecoder();
  for (let start = 0; start < bytes.length;) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    const line = utf8.decode(bytes.subarray(start, end));
    if (line.trim()) yield JSON.parse(line);
    start = end + 1;
  }
}

/** A tiny LRU of promises keyed by name; a failed load is forgotten so it can be retried. */
class Lru {
  constructor(max) { this.max = Math.max(1, max); this.map = new Map(); }
  get(key, load) {
    const p = this.map.get(key);
    if (!p) return this.replace(key, load);
    this.map.delete(key);
    this.map.set(key, p);
    return p;
  }
  /** What is cached for `key` (without making it the most recent), or undefined. */
  peek(key) { return this.map.get(key); }
  /** Loads `key` anew, replacing what is cached. */
  replace(key, load) {
    const p = load();
    p.catch(() => this.map.get(key) === p && this.map.delete(key));
    this.map.delete(key);
    this.map.set(key, p);
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value);
    return p;
  }
}
