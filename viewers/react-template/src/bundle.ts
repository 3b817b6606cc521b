// bundle.ts: opening bundles and fetching their tables, each at most once per page load.
// Everything here goes through tlparse-bundle-loader (../bundle-loader); nothing parses files itself.
import * as fzstd from 'fzstd';
import {
  openBundle, openBundleFromFiles, zstdStreamFromFzstd, type Bundle, type LocalFile, type StreamTables,
} from 'tlparse-bundle-loader';
import type { OverviewTables } from './data';
import type { TableName } from './formats';

export type { Bundle };

const openedBundles = new Map<string, Promise<Bundle>>();
const OPTIONS = {
  zstdStream: zstdStreamFromFzstd(fzstd), // browsers have no zstd DecompressionStream
};

/** `?bundle=` values of local folders: `local:N/NAME` (N counts the folders opened in this page). */
const LOCAL = /^local:\d+\/(.*)$/s;
let localFolders = 0;

/** The folder name when `bundle` (a `?bundle=` value) stands for a local folder, else null. */
export function localFolderName(bundle: string): string | null {
  return LOCAL.exec(bundle)?.[1] ?? null;
}

/**
 * Opens a picked or dropped folder's files (read in this page, never uploaded) and returns the
 * `?bundle=` value that stands for it until the page is reloaded: an address cannot point at a
 * folder on the user's disk.
 */
export async function openLocalFolder(files: Iterable<File | LocalFile>): Promise<string> {
  const bundle = await openBundleFromFiles(files, OPTIONS);
  const key = `local:${++localFolders}/${bundle.localFolder ?? ''}`;
  openedBundles.set(key, Promise.resolve(bundle));
  return key;
}

/** Opens the bundle at `url` (absolute, or relative to this page); refuses formats we don't read. */
export function openBundleOnce(url: string): Promise<Bundle> {
  let opening = openedBundles.get(url);
  const folder = localFolderName(url);
  if (!opening && folder !== null) {
    return Promise.reject(new Error(`The local folder ${folder} is no longer open: this page's address cannot ` +
      'point at a folder on your disk. Open it again with "Open folder…".'));
  }
  if (!opening) {
    opening = openBundle(url, OPTIONS);
    opening.catch(() => openedBundles.delete(url)); // a failed open can be retried
    openedBundles.set(url, opening);
  }
  return opening;
}

type AnyTable = StreamTables[keyof StreamTables] | null;
const fetchedTables = new WeakMap<Bundle, Map<string, Promise<AnyTable>>>();

/** One table of a stream, typed by its name; null when the stream has none (empty tables are absent). */
export function tableOf<K extends TableName>(
  bundle: Bundle, stream: string, name: K,
): Promise<StreamTables[K] | null> {
  let tables = fetchedTables.get(bundle);
  if (!tables) fetchedTables.set(bundle, (tables = new Map()));
  const key = `${stream}/${name}`;
  let table = tables.get(key);
  if (!table) {
    table = bundle.table(stream, name);
    table.catch(() => tables.delete(key));
    tables.set(key, table);
  }
  return table as Promise<StreamTables[K] | null>;
}

/** The tables the overview needs for every stream (compile_directory only where compile_time is absent). */
export async function overviewTables(bundle: Bundle): Promise<Record<string, OverviewTables>> {
  const entries = await Promise.all(bundle.manifest.streams.map(async (s) => {
    const [failures, compileTime] = await Promise.all([
      tableOf(bundle, s.id, 'failures'), tableOf(bundle, s.id, 'compile_time'),
    ]);
    const directory = compileTime ? null : await tableOf(bundle, s.id, 'compile_directory');
    return [s.id, { failures, compileTime, directory }] as const;
  }));
  return Object.fromEntries(entries);
}
