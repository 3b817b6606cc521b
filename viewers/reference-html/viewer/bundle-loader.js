// bundle-loader.js: read a tlparse bundle (format v2) over HTTP, in any browser or worker.
// Dependency-free ES module; copy it into your viewer. It never relies on response headers:
// hosts that gzip responses on the fly (GitHub Pages) and hosts that don't both work.
// Compressed bundle files (`.zst`: packs, index, blob-index shards) are zstd; bring a decoder.

/** Highest `min_reader_version` this loader can read. */
export const READER_VERSION = 5;

/**
 * @typedef {{pack: number, offset: number, size: number}} BlobLocation
 * @typedef {{frames: {file: string, line: number, name: string, loc?: string}[], stacks: number[][]}} StackTable
 * @typedef {object} OpenOptions
 * @property {(data: Uint8Array) => Uint8Array | Promise<Uint8Array>} [zstdDecompress]
 *   zstd decoder for the blob packs, e.g. `decompress` from the npm package `fzstd`. Without it
 *   the loader uses `new DecompressionStream('zstd')`, which most browsers do not have yet.
 * @property {typeof fetch} [fetch] fetch to use (default: the global one).
 * @property {number} [packCacheSize] decompressed packs kept in memory (default 4, ~1 MiB each).
 * @property {number} [shardCacheSize] blob-index shards kept in memory (default 16).
 */

/**
 * Opens the bundle at `baseUrl` (the directory holding manifest.json): fetches the manifest and
 * checks that this loader can read it.
 * @param {string | URL} baseUrl
 * @param {OpenOptions} [opts]
 * @returns {Promise<Bundle>}
 */
export async function openBundle(baseUrl, opts = {}) {
  const base = new URL(baseUrl, globalThis.location?.href);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const doFetch = opts.fetch ?? ((...a) => globalThis.fetch(...a));
  const manifest = JSON.parse(await (await get(doFetch, new URL('manifest.json', base))).text());
  if (manifest?.format !== 'tlparse-bundle') {
    throw new Error(`${base}manifest.json is not a tlparse bundle manifest (format: ${JSON.stringify(manifest?.format)})`);
  }
  if (!(manifest.min_reader_version <= READER_VERSION)) {
    throw new Error(`This bundle (format version ${manifest.format_version}) needs a bundle reader of version ` +
      `${manifest.min_reader_version} or newer; this bundle-loader.js is version ${READER_VERSION}. Update the viewer.`);
  }
  if (manifest.blobs.compression !== 'zstd') throw new Error(`unsupported blob compression ${manifest.blobs.compression}`);
  return new Bundle(base, manifest, doFetch, opts);
}

/** An open bundle. Get one with {@link openBundle}. */
export class Bundle {
  /** @param {URL} base @param {any} manifest @param {typeof fetch} doFetch @param {OpenOptions} opts */
  constructor(base, manifest, doFetch, opts) {
    /** The bundle's URL (ends with '/'). */
    this.base = base;
    /** The parsed manifest.json. */
    this.manifest = manifest;
    this._fetch = doFetch;
    this._zstd = opts.zstdDecompress ?? nativeZstd;
    this._shards = new Lru(opts.shardCacheSize ?? 16);
    this._packs = new Lru(opts.packCacheSize ?? 4);
    this._stacks = new Map();
  }

  /** Fetches a bundle file (path relative to the bundle) and checks the response status. */
  _get(path, missingOk = false) {
    const url = new URL(path, this.base);
    if (!url.href.startsWith(this.base.href)) throw new Error(`path ${path} leaves the bundle`);
    return get(this._fetch, url, missingOk);
  }

  _stream(id) {
    const s = this.manifest.streams.find((s) => s.id === id);
    if (!s) throw new Error(`no stream ${JSON.stringify(id)} in this bundle`);
    return s;
  }

  /**
   * The index rows of a stream, in log order, decompressed and parsed as they arrive.
   * @param {string} streamId a `manifest.streams[i].id`
   * @returns {AsyncGenerator<any>}
   */
  async *indexRows(streamId) {
    yield* jsonLines(await this.bytes(this._stream(streamId).index));
  }

  /**
   * One analysis table of a stream (see docs/tables/), parsed; null when the stream has no data
   * for it (`manifest.streams[i].tables` lists the tables that exist).
   * @param {string} streamId @param {string} name e.g. 'compile_directory' @returns {Promise<any | null>}
   */
  async table(streamId, name) {
    const t = this._stream(streamId).tables?.[name];
    if (!t) return null;
    return JSON.parse(new TextDecoder().decode(await this.bytes(t.path)));
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
    if (!t) return null;
    return JSON.parse(new TextDecoder().decode(await this.bytes(t.path)));
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
    yield* jsonLines(await this.bytes(this.manifest.diagnostics.path));
  }

  /**
   * Any bundle file's bytes (path relative to the bundle), zstd-decoded when it is zstd (sniffed
   * from its magic number rather than trusting headers: a host may already have decoded it).
   * @param {string} path @returns {Promise<Uint8Array>}
   */
  async bytes(path) {
    const data = new Uint8Array(await (await this._get(path)).arrayBuffer());
    const isZstd = data.length >= 4 && data[0] === 0x28 && data[1] === 0xb5 && data[2] === 0x2f && data[3] === 0xfd;
    return isZstd ? await this._zstd(data) : data;
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
   * The bytes of a blob (a copy; the decompressed pack stays cached).
   * @param {string} hash @returns {Promise<Uint8Array>}
   */
  async blob(hash) {
    const loc = await this.locate(hash);
    if (!loc) throw new Error(`no blob ${hash} in this bundle`);
    const pack = await this._packs.get(loc.pack, () => this._loadPack(loc.pack));
    if (loc.offset + loc.size > pack.length) throw new Error(`blob ${hash} lies outside its pack`);
    return pack.slice(loc.offset, loc.offset + loc.size);
  }

  /** A blob decoded as UTF-8 text. @param {string} hash @returns {Promise<string>} */
  async text(hash) {
    return new TextDecoder().decode(await this.blob(hash));
  }

  async _loadPack(i) {
    const info = this.manifest.blobs.packs[i];
    if (!info) throw new Error(`no pack ${i} in this bundle`);
    const raw = await this.bytes(info.path);
    if (raw.length !== info.raw_size) {
      throw new Error(`pack ${info.path}: decoded ${raw.length} bytes, manifest says ${info.raw_size}`);
    }
    return raw;
  }
}

/** fetch + status check; with `missingOk`, a 404 yields null. */
async function get(doFetch, url, missingOk = false) {
  const r = await doFetch(url);
  if (missingOk && r.status === 404) return null;
  if (!r.ok) throw new Error(`GET ${url}: HTTP ${r.status} ${r.statusText}`);
  return r;
}

/** Default zstd decoder: the platform's DecompressionStream, where it supports zstd. */
async function nativeZstd(data) {
  let ds;
  try {
    ds = new DecompressionStream('zstd');
  } catch {
    throw new Error("This browser has no zstd DecompressionStream: pass a decoder, e.g. " +
      "openBundle(url, {zstdDecompress: fzstd.decompress}) with the npm package fzstd");
  }
  return new Uint8Array(await new Response(new Blob([data]).stream().pipeThrough(ds)).arrayBuffer());
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
    let p = this.map.get(key);
    if (p) this.map.delete(key);
    else (p = load()).catch(() => this.map.get(key) === p && this.map.delete(key));
    this.map.set(key, p);
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value);
    return p;
  }
}
