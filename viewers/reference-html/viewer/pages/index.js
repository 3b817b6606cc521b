// pages/index.js: the page registry. Each page module exports `render(ctx)` returning a DOM node
// (see `context` in app.js for what ctx holds). NAV is the tab bar, in order; `when` hides a tab
// that has nothing to show for the bundle or the selected stream, `also` names the pages that
// highlight the tab.

/**
 * Route name (`#/<name>?...`) → loader of its page module. Pages load on first visit, so the
 * first paint fetches only the overview's code.
 */
export const PAGES = {
  overview: () => import('./overview.js'),
  compiles: () => import('./compiles.js'), // ?s=STREAM&status=STATUS
  trie: () => import('./trie.js'), // ?s=STREAM&q=SEARCH
  compile: () => import('./compile.js'), // ?s=STREAM&id=[0/1]
  artifact: () => import('./artifact.js'), // ?s=STREAM&blob=BLOB_ID&name=ARTIFACT_NAME&id=[0/1]&line=N
  recompiles: () => import('./recompiles.js'), // ?s=STREAM&frame=FRAME_ID&id=[0/1]
  'graph-breaks': () => import('./graph-breaks.js'), // ?s=STREAM&g=GROUP
  failures: () => import('./failures.js'), // ?s=STREAM&i=ROW
  provenance: () => import('./provenance.js'), // ?s=STREAM&id=[0/1]&g=GRAPH&pane=pre|post|code&line=N
  sizes: () => import('./sizes.js'), // ?s=STREAM&m=nodes|lines|bytes
  time: () => import('./time.js'), // ?s=STREAM&id=[0/1]
  volume: () => import('./volume.js'), // ?s=STREAM
  entries: () => import('./entries.js'), // ?s=STREAM&kind=KIND&id=[0/1]
  ranks: () => import('./ranks.js'), // ?sec=SECTION&grid=diff (cross-rank)
  compare: () => import('./compare.js'), // ?changed=1&k=ALIGN_KEY&art=ARTIFACT (with index.html?compare=URL)
  'rank-diff': () => import('./rank-diff.js'), // ?c=ALIGNED_INDEX&name=ARTIFACT_NAME&occ=N&a=STREAM&b=STREAM (or id=[0/1] of rank a)
};

const table = (name) => (m, s) => Boolean(s?.tables?.[name]);

/** The tabs. */
export const NAV = [
  { page: 'overview', label: 'Overview' },
  { page: 'compiles', label: 'Compiles', also: ['compile', 'artifact'], when: table('compile_directory') },
  { page: 'trie', label: 'Stack trie', when: table('stack_trie') },
  { page: 'recompiles', label: 'Recompiles', when: table('recompiles') },
  { page: 'graph-breaks', label: 'Graph breaks', when: (m, s) => Boolean(s?.tables?.graph_breaks || s?.tables?.hints) },
  { page: 'failures', label: 'Failures', when: table('failures') },
  { page: 'provenance', label: 'Provenance', when: table('provenance') },
  { page: 'sizes', label: 'Graph sizes', when: table('graph_sizes') },
  { page: 'time', label: 'Compile time', when: (m, s) => Boolean(s?.tables?.compile_time || s?.chrome_trace) },
  { page: 'volume', label: 'Log volume', when: table('log_volume') },
  { page: 'entries', label: 'Log entries', when: (m, s) => Boolean(s) },
  { page: 'ranks', label: 'Ranks', also: ['rank-diff'], when: (m) => Boolean(m.cross_rank) },
  { page: 'compare', label: 'Compare', when: () => new URLSearchParams(location.search).has('compare') },
];

/**
 * The tables each page reads as it renders ('stacks': the stack table): app.js starts them
 * downloading when navigation starts, alongside the page's code, rather than once that code has
 * loaded (and, on the compile page, after compile_directory). Keep in step with the pages: a name
 * here that a page does not read is a wasted download. The overview is absent: it stays within
 * the first-paint budget by reading only small tables, itself.
 */
export const READS = {
  compiles: ['compile_directory'],
  trie: ['stack_trie', 'compile_directory', 'stacks'],
  compile: ['compile_directory', 'compilation_metrics', 'compile_time', 'cache_outcomes', 'guards', 'inputs', 'runnables', 'stacks'],
  artifact: ['compile_directory', 'runnables'],
  recompiles: ['recompiles'],
  'graph-breaks': ['graph_breaks', 'hints'],
  failures: ['failures'],
  provenance: ['provenance'],
  sizes: ['graph_sizes'],
  time: ['compile_time'],
  volume: ['log_volume'],
};
