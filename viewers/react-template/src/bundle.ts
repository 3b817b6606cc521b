// bundle.ts: opening bundles and fetching their tables, each at most once per page load.
// Everything here goes through tlparse-bundle-loader (../bundle-loader); nothing parses files itself.
import * as fzstd from 'fzstd';
import { openBundle, zstdStreamFromFzstd, type Bundle, type StreamTables } from 'tlparse-bundle-loader';
import type { OverviewTables } from './data';
import { MIN_FORMAT_VERSION, type TableName } from './formats';

export type { Bundle };

const openedBundles = new Map<string, Promise<Bundle>>();

/** Opens the bundle at `url` (absolute, or relative to this page); refuses formats we don't read. */
export function openBundleOnce(url: string): Promise<Bundle> {
  let opening = openedBundles.get(url);
  if (!opening) {
    opening = openBundle(url, {
      zstdStream: zstdStreamFromFzstd(fzstd), // browsers have no zstd DecompressionStream
      minFormatVersion: MIN_FORMAT_VERSION,
    });
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
