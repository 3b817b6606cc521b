// formats.ts: the one place that says which bundles this viewer reads. Bump MIN_FORMAT_VERSION
// when you start relying on something a newer format added; the loader refuses older bundles,
// and refuses newer ones whose `min_reader_version` it does not support, with a message the UI shows.
import type { StreamTables } from 'tlparse-bundle-loader';

/** The oldest bundle format version this viewer was written for (docs/format.md). */
export const MIN_FORMAT_VERSION = 5;

/** The per-stream tables this viewer reads (docs/tables/<name>.md describes each).
 * `tableOf()` (src/bundle.ts) accepts only these names: add one here to read it. */
export const TABLES_READ = [
  'compile_directory', // the compile list, one compile, its artifacts, the recompiles chart
  'failures', // the overview's failure and restart counts
  'compile_time', // the overview's total compile time
] as const satisfies readonly (keyof StreamTables)[];

export type TableName = (typeof TABLES_READ)[number];
