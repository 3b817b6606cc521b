// pages/compare.js: Compare two runs (`index.html?bundle=A&compare=B`, `#/compare?changed=1`,
// `&k=ALIGN_KEY&art=ARTIFACT` for one artifact's diff). The same findings as `tlparse-build
// compare A B --json` (src/analysis/run_compare.rs), computed from the same tables.
//
// Frame compiles of A and B are paired ONLY by equality of compile_directory's `align_key`: the
// build writes it with the alignment module's keying (src/analysis/alignment.rs), and every
// attempt of one frame compile carries the same key, so there is no matching logic here: rows of
// one key are one frame compile, its final attempt (the highest) is compared, the attempts before
// it are its restart history. Streams pair by id; two single-stream runs pair whatever their ids.
//
// Payloads of artifacts whose blobs differ are read from both bundles and compared masked by
// maskVolatile (volatile.js, the mirror of the Rust rule): two processes never share object ids
// or addresses, so payloads equal once masked are "the same up to ids", listed apart.

import { h, section, note, empty, plural } from '../dom.js';
import { diffView, diffStats, maskedDiff } from '../diff.js';
import { maskVolatile } from '../volatile.js';
import { rowsWithArtifacts } from '../compile-data.js';

export async function render(ctx) {
  const title = h('h1', null, 'Compare runs');
  const open = ctx.compareBundle();
  if (!open) return h('div', null, title, section('Nothing to compare', empty('Open index.html?bundle=A&compare=B to compare two runs.')));
  let other;
  try {
    other = await open;
  } catch (e) {
    return h('div', null, title, section('Run B could not be opened', empty(`${ctx.compareUrl()}: ${e?.message ?? e}`)));
  }
  const runA = await loadRun(ctx.bundle);
  const runB = await loadRun(other);
  ctx.expose('compareRuns', { a: ctx.bundle.manifest.inputs.map((i) => i.path), b: other.manifest.inputs.map((i) => i.path) });
  const comparison = compare(runA, runB);
  await settleArtifacts(comparison, (blob) => ctx.bundle.text(blob), (blob) => other.text(blob));
  ctx.expose('compare', comparison);
  const p = ctx.params;
  const runs = { a: ctx.bundle, b: other, rowsA: runA, rowsB: runB };
  const diff = p.has('k') && p.has('art') ? await artifactDiff(ctx, runs, comparison, p.get('k'), p.get('art')) : null;
  // Each stream's id in each run (two single-stream runs pair whatever their ids).
  const streamB = (id) => (runA.length === 1 && runB.length === 1 ? runB[0].stream : id);
  return h('div', { class: 'compare-page' }, title,
    h('p', null, 'A: ', h('code', null, runName(ctx.bundle)), ' → B: ', h('code', null, runName(other), ' '),
      h('span', { class: 'note' }, `(${ctx.compareUrl()})`)),
    note('Frame compiles are aligned by the code they compiled, which frame of that code and its recompile number, as across ranks; ' +
      'each is compared by its final attempt, and the attempts Dynamo restarted before it are shown as its history.'),
    diff?.missing ?? null,
    ...comparison.streams.map((s) => streamSection(ctx, s, { streamA: s.stream, streamB: streamB(s.stream), diff }, p.get('changed') === '1')),
    comparison.streams_only_in_a.length ? note(`Streams only in A: ${comparison.streams_only_in_a.join(', ')}`) : null,
    comparison.streams_only_in_b.length ? note(`Streams only in B: ${comparison.streams_only_in_b.join(', ')}`) : null);
}

const runName = (b) => (b.manifest.inputs.length === 1 ? b.manifest.inputs[0].path.split('/').pop() : `${b.manifest.inputs.length} logs`);

/** Each stream's tables the comparison reads. */
async function loadRun(bundle) {
  const table = (id, name) => (bundle.manifest.streams.find((s) => s.id === id)?.tables?.[name] ? bundle.table(id, name) : null);
  return Promise.all(bundle.manifest.streams.map(async (s) => {
    const [dir, sizes, guards, recompiles, breaks] = await Promise.all(
      ['compile_directory', 'graph_sizes', 'guards', 'recompiles', 'graph_breaks'].map((n) => table(s.id, n)));
    const rows = dir ? rowsWithArtifacts(dir) : []; // compareStream reads each row's artifacts
    return { stream: s.id, rows, sizes, guards, recompiles, breaks };
  }));
}

// ---- the findings (mirror of src/analysis/run_compare.rs; keep the two in step) ---------------

/** Strings in code-unit order (the Rust side sorts bytes: the same order for all but astral text). */
const sorted = (set) => [...set].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));

export function compare(a, b) {
  if (a.length === 1 && b.length === 1) return { streams: [compareStream(a[0], b[0])], streams_only_in_a: [], streams_only_in_b: [] };
  const idsA = new Set(a.map((s) => s.stream));
  const idsB = new Set(b.map((s) => s.stream));
  return {
    streams: a.filter((s) => idsB.has(s.stream)).map((s) => compareStream(s, b.find((x) => x.stream === s.stream))),
    streams_only_in_a: a.map((s) => s.stream).filter((s) => !idsB.has(s)),
    streams_only_in_b: b.map((s) => s.stream).filter((s) => !idsA.has(s)),
  };
}

/** A stream's frame compiles: rows grouped by align_key (in order of first row), each with its
 * final attempt (the highest attempt; the last row of it) and the attempts before it. */
function frameCompiles(rows) {
  const byKey = new Map();
  for (const r of rows) {
    if (!byKey.has(r.align_key)) byKey.set(r.align_key, []);
    byKey.get(r.align_key).push(r);
  }
  return new Map([...byKey].map(([key, list]) => {
    const sortedRows = [...list].sort((x, y) => (x.cid.attempt ?? 0) - (y.cid.attempt ?? 0));
    return [key, { last: sortedRows[sortedRows.length - 1], earlier: sortedRows.slice(0, -1) }];
  }));
}

function compareStream(sa, sb) {
  const fa = frameCompiles(sa.rows);
  const fb = frameCompiles(sb.rows);
  const pair = (key, xa, xb) => ({
    align_key: key,
    code: frameLabel(key),
    a: xa?.last.compile_id ?? null,
    b: xb?.last.compile_id ?? null,
    a_restarts: xa ? restarts(sa, xa) : [],
    b_restarts: xb ? restarts(sb, xb) : [],
    changes: xa && xb ? changes(sa, xa.last, sb, xb.last) : [],
    same_up_to_ids: [],
  });
  const compiles = [...[...fa].map(([key, xa]) => pair(key, xa, fb.get(key) ?? null)),
    ...[...fb].filter(([key]) => !fa.has(key)).map(([key, xb]) => pair(key, null, xb))];
  return { stream: sa.stream, compiles, recompiles: recompiles(sa, sb) };
}

const lastPart = (file) => file.split('/').pop();
/** `, frame N` for a code's second frame on (key `frame` 1 and up), as the alignment's labels. */
const frameSuffix = (frame) => (frame != null && frame > 0 ? `, frame ${frame + 1}` : '');
/** `name (file.py:line)` of the key's code, with its frame suffix; null for unknown code. The
 * key is the build's JSON of the alignment key: read for its code and frame, never re-derived. */
function frameLabel(alignKey) {
  const k = JSON.parse(alignKey);
  return k.code ? `${k.code.name} (${lastPart(k.code.filename)}:${k.code.line})${frameSuffix(k.frame)}` : null;
}

/** The attempts restarted before a frame compile's final one, and why (see run_compare.rs). */
function restarts(s, x) {
  const reasons = x.last.restart_reasons ?? [];
  return x.earlier.map((r, n) => {
    const why = breakPlaces(s, r);
    if (!why.length && n < reasons.length) why.push(reasons[n].split('\n')[0].trim());
    return { compile_id: r.compile_id, why };
  });
}

function breakLocation(s, r, reason) {
  return (s.breaks?.breaks ?? []).find((g) => g.reason === reason && g.compile_ids.includes(r.compile_id))?.location ?? null;
}

function breakPlaces(s, r) {
  return r.graph_breaks.map((reason) => {
    const at = breakLocation(s, r, reason);
    return at != null ? `graph break at ${lastPart(at)} (${reason})` : `graph break (${reason})`;
  });
}

function setChange(a, b) {
  const added = sorted([...b].filter((x) => !a.has(x)));
  const removed = sorted([...a].filter((x) => !b.has(x)));
  return added.length || removed.length ? { added, removed } : null;
}

function changes(sa, a, sb, b) {
  const out = [];
  if (a.status !== b.status) {
    out.push({ kind: 'status', a: a.status, b: b.status });
  }
  const ta = a.total_s ?? null;
  const tb = b.total_s ?? null;
  if (ta !== tb) out.push({ kind: 'compile_time', a: ta, b: tb, delta: ta != null && tb != null ? tb - ta : null });
  out.push(...graphSizes(sizes(sa, a.compile_id), sizes(sb, b.compile_id)));
  for (const [kind, of] of [['guards', guards], ['symbols', symbols]]) {
    const c = setChange(of(sa, a.compile_id), of(sb, b.compile_id));
    if (c) out.push({ kind, ...c });
  }
  const gb = setChange(breaks(sa, a), breaks(sb, b));
  if (gb) out.push({ kind: 'graph_breaks', ...gb });
  out.push(...cache(a, b), ...artifacts(a.artifacts, b.artifacts));
  return out;
}

/** Names with `#2`, `#3` for later occurrences of the same name. */
function numbered(names) {
  const seen = new Map();
  return names.map((n) => {
    const k = (seen.get(n) ?? 0) + 1;
    seen.set(n, k);
    return k === 1 ? n : `${n}#${k}`;
  });
}

function sizes(s, id) {
  const g = s.sizes?.compiles.find((c) => c.compile_id === id);
  if (!g) return new Map();
  const names = numbered(g.graphs.map((x) => x.name));
  return new Map(names.map((n, i) => [n, g.graphs[i].fx_nodes != null ? ['nodes', g.graphs[i].fx_nodes] : ['lines', g.graphs[i].lines]]));
}

function graphSizes(za, zb) {
  const out = sorted(new Set(za.keys())).flatMap((ir) => {
    const x = za.get(ir);
    const y = zb.get(ir);
    if (!y || x[0] !== y[0] || x[1] === y[1]) return [];
    return [{ kind: 'graph_size', ir, unit: x[0], a: x[1], b: y[1], delta: y[1] - x[1] }];
  });
  const only = (of, not) => sorted(new Set(of.keys())).filter((ir) => !not.has(ir)).map((ir) => `${ir} (${of.get(ir)[1]} ${of.get(ir)[0]})`);
  const onlyA = only(za, zb);
  const onlyB = only(zb, za);
  if (onlyA.length || onlyB.length) out.push({ kind: 'graphs_only', a: onlyA, b: onlyB });
  return out;
}

/** Guards masked (object ids and addresses differ between processes). */
function guards(s, id) {
  const trees = (s.guards?.guard_trees ?? []).filter((t) => t.compile_id === id).flatMap((t) => t.guards.map((g) => maskVolatile(`${g.kind}: ${g.code}`)));
  const dynamo = (s.guards?.dynamo_guards ?? []).filter((d) => d.compile_id === id).map((d) => maskVolatile(d.code));
  return new Set([...trees, ...dynamo]);
}

function symbols(s, id) {
  const mine = (s.guards?.symbols ?? []).filter((y) => y.compile_id === id);
  return new Set(mine.map((y) => y.source ?? y.symbol).filter((x) => x != null));
}

function breaks(s, r) {
  return new Set(r.graph_breaks.map((reason) => {
    const at = breakLocation(s, r, reason);
    return at != null ? `${reason} (at ${at})` : reason;
  }));
}

function cache(a, b) {
  const byCache = (r) => {
    const m = new Map();
    for (const c of r.cache) m.set(c.cache, [...(m.get(c.cache) ?? []), c.outcome]);
    return m;
  };
  const ca = byCache(a);
  const cb = byCache(b);
  return sorted(new Set([...ca.keys(), ...cb.keys()])).flatMap((c) => {
    const x = ca.get(c) ?? [];
    const y = cb.get(c) ?? [];
    return x.join('\u0000') === y.join('\u0000') && x.length === y.length ? [] : [{ kind: 'cache', cache: c, a: x, b: y }];
  });
}

function artifacts(a, b) {
  const named = (list) => numbered(list.map((r) => r.name)).map((n, i) => [n, list[i].blob ?? '']);
  const la = named(a);
  const lb = named(b);
  const mb = new Map(lb);
  const ma = new Map(la);
  // first_difference is filled in by settleArtifacts, which reads the payloads.
  const out = la.filter(([n, x]) => mb.has(n) && mb.get(n) !== x).map(([n, x]) => ({ kind: 'artifact', name: n, a: x, b: mb.get(n), first_difference: null }));
  const onlyA = la.filter(([n]) => !mb.has(n)).map(([n]) => n);
  const onlyB = lb.filter(([n]) => !ma.has(n)).map(([n]) => n);
  if (onlyA.length || onlyB.length) out.push({ kind: 'artifacts_only', a: onlyA, b: onlyB });
  return out;
}

const SAME = Symbol('same up to ids');

/**
 * Reads both payloads of every artifact change and compares them masked (run_compare.rs's
 * `payload_difference`): equal → moved to the compile's `same_up_to_ids`; else the change gets
 * its first differing line. A payload that cannot be read leaves `first_difference` null.
 */
export async function settleArtifacts(comparison, readA, readB) {
  const compiles = comparison.streams.flatMap((s) => s.compiles);
  await Promise.all(compiles.map(async (x) => {
    const settled = await Promise.all(x.changes.map(async (c) => [c, c.kind === 'artifact' ? await payloadDifference(c, readA, readB) : null]));
    x.same_up_to_ids = settled.filter(([, d]) => d === SAME).map(([c]) => c.name);
    x.changes = settled.filter(([, d]) => d !== SAME).map(([c, d]) => (c.kind === 'artifact' ? { ...c, first_difference: d } : c));
  }));
}

async function payloadDifference(c, readA, readB) {
  if (!c.a || !c.b) return null;
  let texts;
  try {
    texts = await Promise.all([readA(c.a), readB(c.b)]);
  } catch {
    return null;
  }
  const [ma, mb] = texts.map((t) => maskVolatile(t, artifactName(c.name)));
  return ma === mb ? SAME : firstDifference(ma, mb);
}

/** An artifact's name without the `#2` of a later occurrence (numbered). */
const artifactName = (name) => name.replace(/#\d+$/, '');

/** As run_compare.rs: at most this many characters of a differing line, starting this many
 * before its first difference. */
const EXCERPT_CHARS = 160;
const EXCERPT_LEAD = 40;

/** A text's lines, without the empty piece after a final line break (as run_compare.rs). */
function linesOf(text) {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The first line in which two different masked texts differ (run_compare.rs's `first_difference`). */
export function firstDifference(a, b) {
  const la = linesOf(a);
  const lb = linesOf(b);
  let at = la.length;
  for (let i = 0; i < Math.max(la.length, lb.length); i++) if (la[i] !== lb[i]) { at = i; break; }
  const xa = la[at] ?? null;
  const xb = lb[at] ?? null;
  let column = 0;
  if (xa != null && xb != null) {
    const [ca, cb] = [Array.from(xa), Array.from(xb)];
    while (column < ca.length && column < cb.length && ca[column] === cb[column]) column++;
  }
  const start = Math.max(0, column - EXCERPT_LEAD);
  return { line: at + 1, a: xa == null ? null : excerpt(xa, start), b: xb == null ? null : excerpt(xb, start) };
}

/** A line whole when short, else EXCERPT_CHARS characters (code points, as Rust's chars) from `start`. */
function excerpt(line, start) {
  const chars = Array.from(line);
  if (chars.length <= EXCERPT_CHARS) return line;
  const from = Math.min(start, chars.length - EXCERPT_CHARS);
  return `${from > 0 ? '…' : ''}${chars.slice(from, from + EXCERPT_CHARS).join('')}${from + EXCERPT_CHARS < chars.length ? '…' : ''}`;
}

/** Per frame (by its label; compiled-autograd graphs and unknown code have none): its frame
 * compiles on each side and each side's recompile reasons for it. */
function recompiles(sa, sb) {
  const frames = new Map();
  const frameOf = (key) => {
    const k = JSON.parse(key);
    return k.code && k.compiled_autograd_id == null ? frameLabel(key) : null;
  };
  [sa, sb].forEach((s, i) => {
    for (const key of new Set(s.rows.map((r) => r.align_key))) {
      const f = frameOf(key);
      if (f == null) continue;
      if (!frames.has(f)) frames.set(f, { n: [0, 0], reasons: [new Set(), new Set()] });
      frames.get(f).n[i] += 1;
    }
    const keyOf = new Map(s.rows.map((r) => [r.compile_id, r.align_key]));
    for (const step of (s.recompiles?.frames ?? []).flatMap((f) => f.compiles)) {
      const key = keyOf.get(step.compile_id);
      const entry = key != null ? frames.get(frameOf(key)) : null;
      if (!entry) continue;
      for (const r of step.reasons) {
        const at = r.indexOf(': ');
        entry.reasons[i].add(at < 0 ? r : r.slice(at + 2));
      }
    }
  });
  return [...frames].flatMap(([frame, { n, reasons }]) => {
    const [na, nb] = n.map((x) => Math.max(0, x - 1));
    const c = setChange(reasons[0], reasons[1]) ?? { added: [], removed: [] };
    if (na === nb && !c.added.length && !c.removed.length) return [];
    return [{ frame, a: na, b: nb, delta: nb - na, reasons_added: c.added, reasons_removed: c.removed }];
  });
}

// ---- rendering --------------------------------------------------------------------------------

const secs = (s) => (s == null ? 'not timed' : `${s.toFixed(2)} s`);
const signed = (n, digits) => `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(digits)}`;
const times = (n) => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);

function listChange(label, c) {
  return h('div', null, label, ' ',
    c.added.length ? h('span', { class: 'cmp-add' }, `+${c.added.length}`) : null, ' ',
    c.removed.length ? h('span', { class: 'cmp-del' }, `−${c.removed.length}`) : null,
    h('ul', { class: 'cmp-items' }, c.added.map((x) => h('li', { class: 'cmp-add' }, '+ ', x)), c.removed.map((x) => h('li', { class: 'cmp-del' }, '− ', x))));
}

/**
 * A compile id linked to its compile page in its own run: run A is the bundle shown; run B's
 * opens the viewer on bundle B (`?bundle=B#/compile?s=STREAM&id=ID`).
 */
function compileLink(ctx, view, side, id) {
  if (id == null) return h('span', { class: 'muted' }, 'none');
  const href = side === 'a'
    ? ctx.href('compile', { id, s: view.streamA })
    : `?${new URLSearchParams({ bundle: ctx.compareUrl() })}#/compile?${new URLSearchParams({ s: view.streamB, id })}`;
  return h('a', { href, class: 'mono cmp-id', dataset: { run: side } }, id);
}

/** `B restarted twice: [0/0] graph break at f.py:31 (…), then [0/0_1] …`, each attempt linked. */
function history(ctx, view, side, restarts) {
  if (!restarts.length) return null;
  const run = side === 'a' ? 'A' : 'B';
  const items = restarts.flatMap((r, i) => [i ? ', then ' : '', compileLink(ctx, view, side, r.compile_id), ' ',
    r.why.length ? r.why.join('; ') : '(no reason logged)']);
  return h('div', { class: 'cmp-history', dataset: { run: side } }, `${run} restarted ${times(restarts.length)}: `, ...items);
}

function changeItem(ctx, view, x, c) {
  switch (c.kind) {
    case 'status': return h('div', null, 'status ', h('code', null, c.a), ' → ', h('code', null, c.b));
    case 'compile_time': return h('div', null, `compile time ${secs(c.a)} → ${secs(c.b)}${c.delta != null ? ` (${signed(c.delta, 2)} s)` : ''}`);
    case 'graph_size': return h('div', null, h('code', null, c.ir), `: ${c.a} ${c.unit} → ${c.b} ${c.unit} (${signed(c.delta, 0)})`);
    case 'graphs_only': return h('div', { class: 'note' },
      c.a.length ? `graphs only in A: ${c.a.join(', ')}` : null, c.a.length && c.b.length ? '; ' : null,
      c.b.length ? `graphs only in B: ${c.b.join(', ')}` : null);
    case 'guards': return listChange('guards', c);
    case 'symbols': return listChange('dynamic-shape symbols', c);
    case 'graph_breaks': return listChange('graph breaks', c);
    case 'cache': return h('div', null, h('code', null, c.cache), ` ${c.a.join(',') || 'no lookup'} → ${c.b.join(',') || 'no lookup'}`);
    case 'artifact': {
      const d = c.first_difference;
      const open = isOpen(view, x, c.name);
      return h('div', { class: 'cmp-artifact' }, 'artifact ', h('code', null, c.name), d ? ` differs from line ${d.line} (` : ' differs (',
        diffLink(ctx, x, c.name, open), ')', open ? view.diff.el : d ? firstLines(d) : null);
    }
    case 'artifacts_only': return h('div', { class: 'note' },
      c.a.length ? `artifacts only in A: ${c.a.join(', ')}` : null, c.a.length && c.b.length ? '; ' : null,
      c.b.length ? `artifacts only in B: ${c.b.join(', ')}` : null);
    default: return h('div', null, c.kind);
  }
}

const isOpen = (view, x, name) => view.diff?.key === x.align_key && view.diff?.name === name;

function diffLink(ctx, x, name, open) {
  return h('a', { class: 'cmp-diff-link', href: ctx.href('compare', { changed: ctx.params.get('changed'), k: open ? null : x.align_key, art: open ? null : name }) },
    open ? 'hide diff' : 'show diff');
}

/** The first differing line of each side, masked (`<?>` where an id was). */
function firstLines(d) {
  const side = (mark, cls, text) => h('li', { class: cls }, `${mark} `, text ?? h('span', { class: 'muted' }, '(no such line)'));
  return h('ul', { class: 'cmp-items cmp-first-diff' }, side('−', 'cmp-del', d.a), side('+', 'cmp-add', d.b));
}

/** Artifacts the same up to ids: collapsed, apart from the changes (open when one's diff is). */
function sameUpToIds(ctx, view, x) {
  if (!x.same_up_to_ids.length) return null;
  const open = x.same_up_to_ids.some((n) => isOpen(view, x, n));
  return h('details', { class: 'cmp-same', open },
    h('summary', null, `${plural(x.same_up_to_ids.length, 'artifact')} the same up to ids (object ids, addresses, temporary paths, times)`),
    h('ul', null, x.same_up_to_ids.map((n) => h('li', { class: 'cmp-artifact' }, h('code', null, n), ' (', diffLink(ctx, x, n, isOpen(view, x, n)), ')',
      isOpen(view, x, n) ? view.diff.el : null))));
}

function onlyItem(ctx, view, x, side) {
  return h('li', null, x.code ?? 'code unknown', ' ', compileLink(ctx, view, side, x[side]), history(ctx, view, side, x[`${side}_restarts`]));
}

function streamSection(ctx, s, view, changedOnly) {
  const both = s.compiles.filter((x) => x.a && x.b);
  const onlyA = s.compiles.filter((x) => !x.b);
  const onlyB = s.compiles.filter((x) => !x.a);
  const shown = changedOnly ? both.filter((x) => x.changes.length) : both;
  const toggle = h('label', { class: 'cmp-toggle' }, h('input', {
    type: 'checkbox', checked: changedOnly, 'aria-label': 'Changed only',
    on: { change: (e) => { location.hash = ctx.href('compare', { changed: e.target.checked ? '1' : null }); } },
  }), ' changed only');
  const name = (x) => x.code ?? 'code unknown';
  return h('section', { class: 'card cmp-stream', dataset: { stream: s.stream } },
    h('h2', null, `Stream ${s.stream}: ${plural(both.length, 'frame compile')} in both, ${onlyA.length} only in A, ${onlyB.length} only in B`),
    toggle,
    h('div', { class: 'cmp-compiles' }, shown.map((x) => h('div', { class: 'cmp-compile', dataset: { changed: x.changes.length ? '1' : '0' } },
      h('h3', null, name(x), ' ', h('span', { class: 'cmp-ids' }, 'A ', compileLink(ctx, view, 'a', x.a), ' → B ', compileLink(ctx, view, 'b', x.b))),
      history(ctx, view, 'a', x.a_restarts), history(ctx, view, 'b', x.b_restarts),
      x.changes.length ? x.changes.map((c) => changeItem(ctx, view, x, c)) : h('p', { class: 'note' }, 'No change.'),
      sameUpToIds(ctx, view, x)))),
    onlyA.length ? section('Only in A', h('ul', { class: 'cmp-only-a' }, onlyA.map((x) => onlyItem(ctx, view, x, 'a')))) : null,
    onlyB.length ? section('Only in B', h('ul', { class: 'cmp-only-b' }, onlyB.map((x) => onlyItem(ctx, view, x, 'b')))) : null,
    s.recompiles.length ? section('Recompiles (per frame)', h('ul', { class: 'cmp-recompiles' }, s.recompiles.map((r) => h('li', null,
      `${r.frame}: ${r.a} → ${r.b} (${signed(r.delta, 0)})`,
      h('ul', null, r.reasons_added.map((x) => h('li', { class: 'cmp-add' }, 'new reason: ', x)),
        r.reasons_removed.map((x) => h('li', { class: 'cmp-del' }, 'reason gone: ', x))))))) : null);
}

/** The line diff of one artifact of an aligned frame compile that differs (or is the same up to
 * ids), A's payload → B's, shown under its row: lines compared masked, shown as logged. */
async function artifactDiff(ctx, runs, comparison, key, name) {
  const at = comparison.streams.findIndex((s) => s.compiles.some((c) => c.align_key === key));
  const x = comparison.streams[at]?.compiles.find((c) => c.align_key === key);
  const c = x?.changes.find((ch) => ch.kind === 'artifact' && ch.name === name);
  const same = x?.same_up_to_ids.includes(name);
  if (!c && !same) return { missing: section('No such artifact', empty(`No artifact ${name} differs in that compile.`)) };
  const streamOf = (rows) => (rows.length === 1 ? rows[0] : rows.find((s) => s.stream === comparison.streams[at].stream));
  const [blobA, blobB] = c ? [c.a, c.b] : [blobOf(streamOf(runs.rowsA), x.a, name), blobOf(streamOf(runs.rowsB), x.b, name)];
  const [textA, textB] = await Promise.all([runs.a.text(blobA), runs.b.text(blobB)]);
  const ops = maskedDiff(textA, textB, artifactName(name));
  const { added, removed } = diffStats(ops);
  const ids = ops.filter((o) => o.ids != null).length;
  ctx.expose('compareDiff', { code: x.code, a: x.a, b: x.b, name, blobA, blobB, added, removed, ids });
  const el = h('div', { class: 'cmp-diff' },
    note(`${name} of ${x.code ?? 'code unknown'}: ${plural(removed, 'line')} only in A ${x.a}, ${plural(added, 'line')} only in B ${x.b}` +
      `${ids ? `; ${plural(ids, 'line')} differing only in ids (marked ≈, shown as A then B)` : ''}.`),
    diffView(ops));
  requestAnimationFrame(() => el.scrollIntoView?.({ block: 'nearest' }));
  return { key, name, el };
}

/** The blob of an artifact (numbered name, `name#2` for its second) of one compile's row. */
function blobOf(stream, compileId, name) {
  const row = stream.rows.find((r) => r.compile_id === compileId);
  const names = numbered(row.artifacts.map((r) => r.name));
  return row.artifacts[names.indexOf(name)].blob;
}

