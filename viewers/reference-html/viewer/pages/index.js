// pages/index.js: the page registry. Each page module exports `render(ctx)` returning a DOM node
// (see `context` in app.js for what ctx holds). NAV is the tab bar, in order; `when` hides a tab
// that has nothing to show for the bundle or the selected stream, `also` names the pages that
// highlight the tab.

import * as overview from './overview.js';
import * as compiles from './compiles.js';
import * as trie from './trie.js';
import * as compile from './compile.js';
import * as artifact from './artifact.js';
import * as recompiles from './recompiles.js';
import * as graphBreaks from './graph-breaks.js';
import * as failures from './failures.js';
import * as sizes from './sizes.js';
import * as time from './time.js';
import * as volume from './volume.js';
import * as ranks from './ranks.js';
import * as rankDiff from './rank-diff.js';

/** Route name (`#/<name>?...`) → page module. */
export const PAGES = {
  overview,
  compiles, // ?s=STREAM
  trie, // ?s=STREAM&q=SEARCH
  compile, // ?s=STREAM&id=[0/1]
  artifact, // ?s=STREAM&blob=BLOB_ID&name=ARTIFACT_NAME&id=[0/1]
  recompiles, // ?s=STREAM&frame=FRAME_ID
  'graph-breaks': graphBreaks, // ?s=STREAM
  failures, // ?s=STREAM
  sizes, // ?s=STREAM
  time, // ?s=STREAM
  volume, // ?s=STREAM
  ranks, // (cross-rank)
  'rank-diff': rankDiff, // ?id=[0/1]&name=ARTIFACT_NAME&a=STREAM&b=STREAM
};

const table = (name) => (m, s) => Boolean(s?.tables?.[name]);

/** The tabs. */
export const NAV = [
  { page: 'overview', label: 'Overview' },
  { page: 'compiles', label: 'Compiles', also: ['compile', 'artifact'], when: table('compile_directory') },
  { page: 'trie', label: 'Stack trie', when: table('stack_trie') },
  { page: 'recompiles', label: 'Recompiles', when: table('recompiles') },
  { page: 'graph-breaks', label: 'Graph breaks', when: table('graph_breaks') },
  { page: 'failures', label: 'Failures', when: table('failures') },
  { page: 'sizes', label: 'Graph sizes', when: table('graph_sizes') },
  { page: 'time', label: 'Compile time', when: (m, s) => Boolean(s?.tables?.compile_time || s?.chrome_trace) },
  { page: 'volume', label: 'Log volume', when: table('log_volume') },
  { page: 'ranks', label: 'Ranks', also: ['rank-diff'], when: (m) => Boolean(m.cross_rank) },
];
