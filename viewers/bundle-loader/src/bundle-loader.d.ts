// bundle-loader.d.ts: the types of bundle-loader.js's API. The bundle's own file types are in
// schema.d.ts, generated from the JSON Schemas (re-exported here).
import type {
  BlobLocation, CompileArtifact, CompileDirectory, CompileEntry, CrossRankTables, Diagnostic, IndexRow, LiteManifest, Manifest, StackTable, StreamTables,
} from './schema';

export type * from './schema';

/** The reader version this loader is (the format's major): it reads bundles whose `min_reader_version` is at most this. */
export declare const READER_VERSION: number;

/** Numbers the rows of one stream's index as they are read (a row stores no `seq`, and a `line` only where the row before does not imply it). */
export declare class RowNumbering {
  constructor();
  /** Fills in `row.seq` and, unless stored, `row.line`; returns the row. */
  fill<T extends { line?: number; payload?: { lines?: number } }>(row: T): T & { seq: number; line: number };
}

export interface OpenOptions {
  /** Makes a streaming zstd decoder; lets the loader stop reading a pack once the blob it wants is
   * decoded. Default: the platform's `DecompressionStream('zstd')` where it exists. */
  zstdStream?: () => TransformStream<Uint8Array, Uint8Array> | ReadableWritablePair<Uint8Array, Uint8Array>;
  /** A whole-buffer zstd decoder (e.g. fzstd's `decompress`), used when no `zstdStream` is given. */
  zstdDecompress?: (data: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  /** fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Decoded packs kept in memory (default 4, ~1 MiB each). */
  packCacheSize?: number;
  /** Blob-index shards kept in memory (default 16). */
  shardCacheSize?: number;
  /** Told as each bundle file is requested and as its bytes arrive (e.g. "1.2 MiB of 3.4 MiB"). */
  onProgress?: (p: Progress) => void;
}

/** A progress report about one bundle file (see `OpenOptions.onProgress`). */
export interface Progress {
  /** The file, relative to the bundle (`manifest.json`, `tables/…`). */
  path: string;
  /** Bytes received so far, as sent (compressed for `.zst` files). */
  loaded: number;
  /** A pack's size from the manifest, any other file's Content-Length; null when unknown. */
  total: number | null;
  /** The body was read to its end, cancelled, or the request failed. */
  done: boolean;
  /** The same object for every report about one request. */
  request: object;
  /** For a part of a table stored in several: which one (from 0) and how many the table has. Every
   * part is reported (`loaded` 0) when the table's read starts, then as its bytes arrive. */
  part?: { index: number; count: number };
}

/** Opens the bundle at `baseUrl` (the directory holding manifest.json), checking its versions. */
/** The URL of a bundle's manifest.json. */
export declare function manifestUrl(baseUrl: string | URL): URL;
/** `manifest.lite.json.zst`: the manifest without `files`, `viewer` and the inputs' `blake3`. */
export declare const LITE_MANIFEST: string;
/** The URL `openBundle(baseUrl)` fetches first: the lite manifest. */
export declare function liteManifestUrl(baseUrl: string | URL): URL;
export declare function openBundle(baseUrl: string | URL, opts?: OpenOptions): Promise<Bundle>;

/** A file of a picked or dropped folder and its `/`-separated path in it (`my-bundle/manifest.json`). */
export interface LocalFile {
  path: string;
  file: Blob;
}

/** Opens a bundle from local files, read in this page (nothing is uploaded): the `File`s of a folder
 * picked with `<input type=file webkitdirectory>` (paths from `webkitRelativePath`) or dropped
 * (`filesFromDataTransfer`). The bundle is the one folder among them holding `manifest.json`. */
export declare function openBundleFromFiles(files: Iterable<File | LocalFile>, opts?: OpenOptions): Promise<Bundle>;

/** The files of a drop, walking dropped folders; call it in the drop handler before any `await`. */
export declare function filesFromDataTransfer(dataTransfer: DataTransfer): Promise<LocalFile[]>;

/** One compile's artifacts in a `compile_directory` table: the slice its row names (`first_artifact`, `artifact_count`). */
export declare function compileArtifacts(directory: CompileDirectory, compile: CompileEntry): CompileArtifact[];

/** A `zstdStream` option made from the npm package fzstd (`import * as fzstd from 'fzstd'`). */
export declare function zstdStreamFromFzstd(fzstd: { Decompress: unknown }): () => TransformStream<Uint8Array, Uint8Array>;

/** A bundle file answered with an HTTP error status; message `GET URL: HTTP STATUS TEXT`. */
export declare class HttpError extends Error {
  /** The URL fetched. */
  readonly url: string;
  /** The HTTP status (401, 404, ...). */
  readonly status: number;
  /** The response's `WWW-Authenticate` header; null when absent or not readable by this page. */
  readonly wwwAuthenticate: string | null;
  constructor(url: URL | string, response: { status: number; statusText: string; headers?: Headers });
}

/** An open bundle. Get one with {@link openBundle} or {@link openBundleFromFiles}. */
export declare class Bundle {
  /** The bundle's URL (ends with '/'). */
  readonly base: URL;
  /** The parsed lite manifest: manifest.json without `files`, `viewer` and the inputs' `blake3`. */
  readonly manifest: LiteManifest;
  /** The whole manifest.json, fetched once. */
  fullManifest(): Promise<Manifest>;
  /** The name of the local folder it was opened from (`openBundleFromFiles`); null over HTTP. */
  readonly localFolder: string | null;
  /** The `onProgress` option; may be set or replaced at any time. */
  onProgress: ((p: Progress) => void) | null;
  /** The index rows of a stream, in log order. */
  indexRows(streamId: string): AsyncGenerator<IndexRow>;
  /** One table of a stream, its parts merged (each top-level list concatenated over the parts);
   * null when the stream has no data for it. */
  table<K extends keyof StreamTables>(streamId: string, name: K): Promise<StreamTables[K] | null>;
  table(streamId: string, name: string): Promise<unknown | null>;
  /** The parts of one table of a stream, in order, each a document holding a slice of its lists;
   * nothing when the stream has no data for it. Holds a few parts at a time, never the whole table. */
  tableParts<K extends keyof StreamTables>(streamId: string, name: K): AsyncGenerator<StreamTables[K]>;
  tableParts(streamId: string, name: string): AsyncGenerator<unknown>;
  /** A stream's Chrome trace as JSON bytes; null when it logged no chromium events. */
  chromeTrace(streamId: string): Promise<Uint8Array | null>;
  /** One cross-rank table; null for a single-stream bundle or a table with no rows. */
  crossRankTable<K extends keyof CrossRankTables>(name: K): Promise<CrossRankTables[K] | null>;
  crossRankTable(name: string): Promise<unknown | null>;
  /** The parts of one cross-rank table, in order (see `tableParts`); nothing when absent. */
  crossRankTableParts<K extends keyof CrossRankTables>(name: K): AsyncGenerator<CrossRankTables[K]>;
  crossRankTableParts(name: string): AsyncGenerator<unknown>;
  /** A cross-rank Chrome trace (`chrome_trace` by default) as JSON bytes, or null. */
  crossRankTrace(field?: 'chrome_trace' | 'runtime_estimates_trace'): Promise<Uint8Array | null>;
  /** The diagnostics (problems found in the logs), in input order. */
  diagnostics(): AsyncGenerator<Diagnostic>;
  /** Any bundle file's bytes, zstd-decoded when it is zstd. */
  bytes(path: string): Promise<Uint8Array>;
  /** A stream's stack table. */
  stacks(streamId: string): Promise<StackTable>;
  /** Where a blob is stored, or null if the bundle has no blob with that id. */
  locate(hash: string): Promise<BlobLocation | null>;
  /** The bytes of a blob. */
  blob(hash: string): Promise<Uint8Array>;
  /** A blob decoded as UTF-8 text. */
  text(hash: string): Promise<string>;
  /** Pack `index` of `manifest.blobs.packs`, decoded whole (not cached); `locate` offsets index it. */
  pack(index: number): Promise<Uint8Array>;
  /** One compile's compile_directory row, or null; `compileId` as `[0/1]` or `0/1`. */
  compile(streamId: string, compileId: string): Promise<CompileEntry | null>;
  /** The text of a compile's artifact by name, through compile_directory; null when absent. */
  artifact(streamId: string, compileId: string, name: string, nth?: number): Promise<string | null>;
}
