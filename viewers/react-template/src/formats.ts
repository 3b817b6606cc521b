// formats.ts: the one place that says which bundles and tables this viewer reads. It reads every
// bundle the loader reads (format 1.x: the loader refuses one whose `min_reader_version` is above
// its READER_VERSION, with a message the UI shows, and passes over fields it does not know).
import type { StreamTables } from 'tlparse-bundle-loader';

/** The per-stream tables this viewer reads (docs/tables/<name>.md describes each).
 * `tableOf()` (src/bundle.ts) accepts only these names: add one here to read it. */
export const TABLES_READ = [
  'compile_directory', // the compile list, one compile, its artifacts, the recompiles chart
  'failures', // the overview's failure and restart counts
  'compile_time', // the overview's total compile time
] as const satisfies readonly (keyof StreamTables)[];

export type TableName = (typeof TABLES_READ)[number];
