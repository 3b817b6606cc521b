// compile-data.js: what the compile pages (compiles, trie, compile, artifact, time) share: the
// compile directory with lookups by id, frame labels, cache-outcome chips, artifact links, stack
// lists (graph-breaks too), and a compile's time in parts and its table column.

import { h, externalLink, seconds, bytes, count } from './dom.js';
import { compileArtifacts } from './bundle-loader.js';

/**
 * The stream's compile directory with a map by compile id; null when the stream has none. Each
 * compile row comes with `artifacts`, its slice of the table's flat artifact list (the format keeps
 * them apart because one compile can log a million; the pages want them at hand).
 * @param {object} ctx page context @returns {Promise<{compiles: any[], unattributed: any[], byId: Map<string, any>} | null>}
 */
export async function loadDirectory(ctx) {
  const dir = await ctx.table('compile_directory');
  if (!dir) return null;
  const compiles = rowsWithArtifacts(dir);
  const byId = new Map(compiles.map((c) => [c.compile_id, c]));
  return { compiles, unattributed: dir.unattributed ?? [], byId };
}

/** A compile directory's rows, each with `artifacts`: its slice of the table's artifact list. */
export function rowsWithArtifacts(dir) {
  return dir.compiles.map((c) => ({ ...c, artifacts: compileArtifacts(dir, c) }));
}

/**
 * The compiled frame of a compile: its own metrics, else (a restarted attempt logs none) those
 * of the attempt that replaced it. {name, file, line, inherited} or null.
 */
export function frameOf(c, byId) {
  let cur = c;
  for (let hops = 0; cur && hops < 8; hops++) {
    if (cur.co_name || cur.co_filename) {
      return { name: cur.co_name, file: cur.co_filename, line: cur.co_firstlineno, inherited: cur !== c };
    }
    cur = cur.restarted_as ? byId.get(cur.restarted_as) : null;
  }
  return null;
}

/** The last `parts` components of a path ("…/torch/_dynamo/eval_frame.py"). */
export function shortPath(file, parts = 2) {
  if (!file) return '?';
  const bits = String(file).split('/');
  return bits.length > parts ? `…/${bits.slice(-parts).join('/')}` : String(file);
}

/** "file.py:12" with the full path as tooltip. */
export function fileLine(file, line, parts = 2) {
  return h('span', { class: 'file-line', title: `${file ?? '?'}${line != null ? `:${line}` : ''}` },
    shortPath(file, parts), line != null ? `:${line}` : '');
}

/** "fx_graph_cache" → "FX graph", "aotautograd_cache" → "AOTAutograd". */
export function cacheLabel(cache) {
  const known = { fx_graph_cache: 'FX graph', aotautograd_cache: 'AOTAutograd', fx_graph_bundled_cache: 'FX bundled' };
  return known[cache] ?? cache.replace(/_cache$/, '').replace(/_/g, ' ');
}

const OUTCOME_CLASS = { hit: 'st-ok', miss: 'st-failed', bypass: 'st-restart', disabled: 'st-empty', mixed: 'st-restart' };
const OUTCOME_MARK = { hit: '✓', miss: '✗', bypass: '↷', disabled: '–', mixed: '±' };

/** One chip for a cache verdict: "FX graph ✓" coloured by outcome (`short`: "FX ✓"). */
export function cacheChip(cache, outcome, extra = '', short = false) {
  const label = short ? { fx_graph_cache: 'FX', aotautograd_cache: 'AOT' }[cache] ?? cacheLabel(cache) : cacheLabel(cache);
  return h('span', { class: ['badge', 'cache-chip', OUTCOME_CLASS[outcome] ?? 'st-missing'], title: `${cache}: ${outcome}${extra}` },
    `${label} ${OUTCOME_MARK[outcome] ?? outcome}`);
}

/**
 * Cache outcomes of a compile_directory row, one verdict per cache (mixed when lookups differ),
 * as {cache, outcome, count} in order of first lookup.
 */
export function cacheVerdicts(c) {
  const by = new Map();
  for (const x of c.cache ?? []) {
    const v = by.get(x.cache);
    if (!v) by.set(x.cache, { cache: x.cache, outcome: x.outcome, count: 1 });
    else { v.count++; if (v.outcome !== x.outcome) v.outcome = 'mixed'; }
  }
  return [...by.values()];
}

/**
 * tlparse's name for an artifact's file, when it differs from the artifact's name (output code
 * carries the stem of its file; see `tlparse_name` in docs/format.md): a muted note, or null.
 */
export function tlparseName(a) {
  return a.tlparse_name
    ? h('span', { class: 'muted tlparse-name', title: `tlparse names its file ${a.tlparse_name}_<N>` }, ` tlparse: ${a.tlparse_name}`)
    : null;
}

/** " · forward": which AOT graph an artifact was produced for (its `graph`), if known. */
export function graphLabel(a) {
  return a.graph
    ? h('span', { class: ['graph-label', `graph-${a.graph}`], title: `produced while compiling the ${a.graph} graph` }, ` · ${a.graph}`)
    : null;
}

/** A link to the artifact page of an ArtifactRef of compile `compileId` (null: unattributed). */
export function artifactHref(ctx, art, compileId) {
  return ctx.href('artifact', { blob: art.blob, name: art.name, id: compileId ?? undefined });
}

/**
 * The name cell of an ArtifactRef: a link to its payload; for a `link` entry, its URL; for an
 * entry logged without a payload (`no_payload`), the name and a "no payload" mark, since there
 * is nothing to open. `extra` follows the name (a badge, say).
 */
function artifactName(ctx, art, compileId, extra) {
  if (art.url) return h('span', null, art.name, ' ', externalLink(art.url, 'link') ?? h('span', { class: 'muted' }, art.url));
  if (art.blob) return [h('a', { href: artifactHref(ctx, art, compileId) }, art.name), extra];
  return h('span', { class: 'no-payload-name' }, art.name, ' ', h('span', {
    class: ['badge', 'no-payload'],
    title: 'torch logged this entry without a payload (no has_payload), so there is nothing to open; tlparse lists it as an empty file',
  }, 'no payload'));
}

/**
 * The columns of a table of ArtifactRefs (a compile's, or those outside any compile `compileId`
 * null): the name, linked (`extra(a)` after it), then kind, format, size, lines and log line.
 * The name column filters and sorts on tlparse's name too. `nameWidth`, `kindWidth`: as dataTable's.
 */
export function artifactColumns(ctx, compileId, { nameWidth, kindWidth, extra = () => null }) {
  return [
    { key: 'name', label: 'artifact', width: nameWidth, value: (a) => [a.name, a.graph, a.tlparse_name].filter(Boolean).join(' '),
      render: (a) => [artifactName(ctx, a, compileId, extra(a)), graphLabel(a), tlparseName(a)] },
    { key: 'kind', label: 'kind', width: kindWidth },
    { key: 'format', label: 'format', width: '6em', render: (a) => a.format ?? h('span', { class: 'muted' }, '–') },
    { key: 'size', label: 'size', align: 'right', width: '7em', render: (a) => bytes(a.size) },
    { key: 'lines', label: 'lines', align: 'right', width: '6em', render: (a) => count(a.lines) },
    { key: 'line', label: 'log line', align: 'right', width: '7em', render: (a) => count(a.line) },
  ];
}

/**
 * A Python stack as a list, outermost call first: each frame's function, file:line and source
 * line (`loc` in the stack table, `code` in a traceback); frames `library(f)` says are not the
 * user's are dimmed, and frame number `marked` is marked. `name`: the data-stack test id.
 */
export function stackList(frames, { library, marked, name = null }) {
  return h('ol', { class: 'stack', dataset: name ? { stack: name } : null }, frames.map((f, i) => {
    const source = f?.loc ?? f?.code;
    return h('li', { class: [library(f) && 'framework', i === marked && 'user-frame'] },
      h('span', { class: 'stack-where' }, h('b', null, f?.name ?? '?'), ' ', fileLine(f?.file, f?.line, 3)),
      source ? h('code', { class: 'stack-loc' }, source) : null);
  }));
}

/** A file name that is safe to save: only [A-Za-z0-9_.-], never starting with '-' or '.'. */
export function safeFileName(name) {
  return name.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^[-.]+/, '_');
}

/** The compile ids of the same frame (same compiled autograd id and frame id), in order. */
export function sameFrame(c, compiles) {
  const key = (x) => `${x.cid?.compiled_autograd_id}/${x.cid?.frame_id}`;
  if (c.cid?.frame_id == null) return [c];
  const order = (x) => [x.cid.frame_compile_id ?? -1, x.cid.attempt ?? 0];
  return compiles.filter((x) => key(x) === key(c)).sort((a, b) => {
    const [a1, a2] = order(a);
    const [b1, b2] = order(b);
    return a1 - b1 || a2 - b2;
  });
}

/**
 * What each part of a compile's time is (docs/definitions.md, "Compile time"), as column titles
 * and tooltips: every page shows the same forward, backward and total.
 */
export const TIME_PARTS = {
  forward: 'The frame compile (entire_frame_compile, as in compilation_metrics): Dynamo, AOTAutograd and Inductor when the frame first ran, including a backward compiled inside it',
  backward: 'The backward graph compiled lazily, at the first backward call (entire_backward_compile); a backward compiled inside the frame compile is in the forward',
  inForward: 'The backward graph compiled inside the frame compile rather than lazily (bw_compiler within entire_frame_compile): part of the forward, not added again',
  total: 'forward + lazily compiled backward',
  other: 'Not in the total: the compile id\'s phases outside its frame compile and backward (Triton autotuning and CUDA graph recording at the first run, compiled autograd\'s capture)',
};

/** A compile's time in seconds from its compile_directory row: {forward, backward, total, other}, each a number or null. */
export function entryTimes(c) {
  return {
    forward: c.duration_s ?? null, backward: c.backward_s ?? null, total: c.total_s ?? null, other: c.other_s ?? null,
    inForward: c.backward_in_forward_s ?? null,
  };
}

/** The same from its compile_time row (µs); total is null when the compile has neither part. */
export function timingTimes(t) {
  const s = (us) => (us == null ? null : us / 1e6);
  const total = t.forward_us == null && t.backward_us == null ? null : s(t.total_us);
  return { forward: s(t.forward_us), backward: s(t.backward_us), total, other: s(t.other_us), inForward: s(t.backward_in_forward_us) };
}

/**
 * A right-aligned table column of one part of a compile's time; `timesOf(row)` gives the row's
 * times (entryTimes, timingTimes). `o` overrides fields of the column (its label, its render).
 */
export function timeColumn(part, timesOf, o = {}) {
  return {
    key: part, label: part, title: TIME_PARTS[part], align: 'right', width: '6.5em',
    value: (c) => timesOf(c)[part], render: (c) => seconds(timesOf(c)[part]), ...o,
  };
}

/** The times as the pages print them ('–' for none), for the pages' exposed state. */
export function shownTimes(t) {
  return { forward: seconds(t.forward), backward: seconds(t.backward), total: seconds(t.total) };
}

/**
 * "21.2 s (forward 19.6 s + backward 1.65 s)", "2.00 s (forward, with its backward compiled inside:
 * 0.866 s)", or just the total when there is no backward.
 */
export function timeSummary(t) {
  if (t.total == null) return null;
  const total = h('strong', { class: 'num', title: TIME_PARTS.total }, seconds(t.total));
  const inside = t.inForward != null
    ? h('span', { title: TIME_PARTS.inForward }, `, with its backward compiled inside: ${seconds(t.inForward)}`) : null;
  if (t.backward == null) return inside ? h('span', { class: 'time-summary' }, total, ' (forward', inside, ')') : total;
  return h('span', { class: 'time-summary' }, total, ' (',
    h('span', { title: TIME_PARTS.forward }, `forward ${seconds(t.forward)}`), inside, ' + ',
    h('span', { title: TIME_PARTS.backward }, `backward ${seconds(t.backward)}`), ')');
}
