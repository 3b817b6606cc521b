// pages/compare.js: Compare two runs (`index.html?bundle=A&compare=B`, `#/compare?changed=1`,
// `&k=ALIGN_KEY&art=ARTIFACT` for one artifact's diff). The same findings as `tlparse-build
// compare A B --json` (src/analysis/run_compare.rs), computed from the same tables.
//
// Compiles of A and B are paired ONLY by equality of compile_directory's `align_key`: the build
// writes it with the alignment module's keying (src/analysis/alignment.rs), so there is no
// matching logic here. A bundle without `align_key` (format < 7) is not compared: we say so
// rather than guess. Streams pair by id; two single-stream runs pair whatever their ids.

import { h, section, note, empty, plural } from '../dom.js';
import { diffText, diffView, diffStats } from '../diff.js';

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
  const missing = [['A', runA], ['B', runB]].filter(([, run]) => run.some((s) => s.rows.some((r) => r.align_key == null))).map(([n]) => n);
  ctx.expose('compareRuns', { a: ctx.bundle.manifest.inputs.map((i) => i.path), b: other.manifest.inputs.map((i) => i.path) });
  if (missing.length) {
    ctx.expose('compare', { error: 'no align_key' });
    return h('div', null, title, section('Cannot compare', empty(
      `Run ${missing.join(' and run ')} was built by an older tlparse-build: its compile_directory has no align_key ` +
      '(format 7), so its compiles cannot be paired with the other run\'s. Rebuild it with this version.')));
  }
  const comparison = compare(runA, runB);
  ctx.expose('compare', comparison);
  const p = ctx.params;
  const diff = p.has('k') && p.has('art') ? await artifactDiff(ctx, other, comparison, p.get('k'), p.get('art')) : null;
  return h('div', { class: 'compare-page' }, title,
    h('p', null, 'A: ', h('code', null, runName(ctx.bundle)), ' → B: ', h('code', null, runName(other), ' '),
      h('span', { class: 'note' }, `(${ctx.compareUrl()})`)),
    note('Compiles are aligned by the code they compiled, its compile number for that code and the attempt, as across ranks.'),
    diff,
    ...comparison.streams.map((s) => streamSection(ctx, s, p.get('changed') === '1')),
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
    return { stream: s.id, rows: dir?.compiles ?? [], sizes, guards, recompiles, breaks };
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

function compareStream(sa, sb) {
  const inB = new Map(sb.rows.map((r) => [r.align_key, r]));
  const inA = new Set(sa.rows.map((r) => r.align_key));
  const pair = (ra, rb) => ({
    align_key: (ra ?? rb).align_key,
    code: codeLabel(ra ?? rb),
    a: ra?.compile_id ?? null,
    b: rb?.compile_id ?? null,
    changes: ra && rb ? changes(sa, ra, sb, rb) : [],
  });
  const compiles = [...sa.rows.map((ra) => pair(ra, inB.get(ra.align_key) ?? null)),
    ...sb.rows.filter((rb) => !inA.has(rb.align_key)).map((rb) => pair(null, rb))];
  return { stream: sa.stream, compiles, recompiles: recompiles(sa, sb) };
}

const lastPart = (file) => file.split('/').pop();
const codeLabel = (r) => (r.code ? `${r.code.name} (${lastPart(r.code.filename)}:${r.code.line})` : null);

function setChange(a, b) {
  const added = sorted([...b].filter((x) => !a.has(x)));
  const removed = sorted([...a].filter((x) => !b.has(x)));
  return added.length || removed.length ? { added, removed } : null;
}

function changes(sa, a, sb, b) {
  const out = [];
  if (a.status !== b.status) {
    out.push({ kind: 'status', a: a.status, b: b.status, a_restarted_as: a.restarted_as ?? null, b_restarted_as: b.restarted_as ?? null });
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
  return sorted(new Set([...za.keys(), ...zb.keys()])).flatMap((ir) => {
    const x = za.get(ir);
    const y = zb.get(ir);
    if (x && y && x[0] !== y[0]) return [];
    const [va, vb] = [x?.[1] ?? null, y?.[1] ?? null];
    if (va === vb) return [];
    return [{ kind: 'graph_size', ir, unit: (x ?? y)[0], a: va, b: vb, delta: va != null && vb != null ? vb - va : null }];
  });
}

/** Object and type ids (10 digits or more) differ between processes: read as `<id>`. */
const normalizeGuard = (t) => t.replace(/[0-9]{10,}/g, '<id>');

function guards(s, id) {
  const trees = (s.guards?.guard_trees ?? []).filter((t) => t.compile_id === id).flatMap((t) => t.guards.map((g) => normalizeGuard(`${g.kind}: ${g.code}`)));
  const dynamo = (s.guards?.dynamo_guards ?? []).filter((d) => d.compile_id === id).map((d) => normalizeGuard(d.code));
  return new Set([...trees, ...dynamo]);
}

function symbols(s, id) {
  const mine = (s.guards?.symbols ?? []).filter((y) => y.compile_id === id);
  return new Set(mine.map((y) => y.source ?? y.symbol).filter((x) => x != null));
}

function breaks(s, r) {
  const groups = s.breaks?.breaks ?? [];
  return new Set(r.graph_breaks.map((reason) => {
    const at = groups.find((g) => g.reason === reason && g.compile_ids.includes(r.compile_id))?.location;
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
  const out = la.filter(([n, x]) => mb.has(n) && mb.get(n) !== x).map(([n, x]) => ({ kind: 'artifact', name: n, a: x, b: mb.get(n) }));
  const onlyA = la.filter(([n]) => !mb.has(n)).map(([n]) => n);
  const onlyB = lb.filter(([n]) => !ma.has(n)).map(([n]) => n);
  if (onlyA.length || onlyB.length) out.push({ kind: 'artifacts_only', a: onlyA, b: onlyB });
  return out;
}

function recompileCounts(s) {
  const frames = new Map();
  for (const r of s.rows) {
    const code = codeLabel(r);
    if (code == null) continue;
    if (!frames.has(code)) frames.set(code, new Set());
    const c = r.cid;
    frames.get(code).add(JSON.stringify([c.compiled_autograd_id ?? null, c.frame_id ?? null, c.frame_compile_id ?? null]));
  }
  return new Map([...frames].map(([code, set]) => [code, { n: Math.max(0, set.size - 1), reasons: reasons(s, code) }]));
}

function reasons(s, code) {
  const frameCode = (f) => {
    if (f.co_name == null || f.location == null) return null;
    const i = f.location.lastIndexOf(':');
    return i < 0 ? null : `${f.co_name} (${lastPart(f.location.slice(0, i))}:${f.location.slice(i + 1)})`;
  };
  const frames = (s.recompiles?.frames ?? []).filter((f) => frameCode(f) === code);
  return new Set(frames.flatMap((f) => f.compiles.flatMap((c) => c.reasons)).map((r) => {
    const i = r.indexOf(': ');
    return i < 0 ? r : r.slice(i + 2);
  }));
}

function recompiles(sa, sb) {
  const ra = recompileCounts(sa);
  const rb = recompileCounts(sb);
  const none = { n: 0, reasons: new Set() };
  const codes = [...ra.keys(), ...[...rb.keys()].filter((c) => !ra.has(c))];
  return codes.flatMap((code) => {
    const x = ra.get(code) ?? none;
    const y = rb.get(code) ?? none;
    const c = setChange(x.reasons, y.reasons) ?? { added: [], removed: [] };
    if (x.n === y.n && !c.added.length && !c.removed.length) return [];
    return [{ code, a: x.n, b: y.n, delta: y.n - x.n, reasons_added: c.added, reasons_removed: c.removed }];
  });
}

// ---- rendering --------------------------------------------------------------------------------

const secs = (s) => (s == null ? 'none' : `${s.toFixed(2)} s`);
const signed = (n, digits) => `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(digits)}`;

function listChange(label, c) {
  return h('div', null, label, ' ',
    c.added.length ? h('span', { class: 'cmp-add' }, `+${c.added.length}`) : null, ' ',
    c.removed.length ? h('span', { class: 'cmp-del' }, `−${c.removed.length}`) : null,
    h('ul', { class: 'cmp-items' }, c.added.map((x) => h('li', { class: 'cmp-add' }, '+ ', x)), c.removed.map((x) => h('li', { class: 'cmp-del' }, '− ', x))));
}

/** A status, and the attempt that replaced a restarted one: linked in run A (the bundle shown), text in B. */
function statusSide(ctx, status, restartedAs, side) {
  if (!restartedAs) return h('code', null, status);
  const next = side === 'a' ? h('a', { href: ctx.href('compile', { id: restartedAs }), class: 'mono' }, restartedAs) : h('code', null, restartedAs);
  return h('span', null, h('code', null, status), ' as ', next);
}

function changeItem(ctx, x, c) {
  switch (c.kind) {
    case 'status': return h('div', null, 'status ', statusSide(ctx, c.a, c.a_restarted_as, 'a'), ' → ', statusSide(ctx, c.b, c.b_restarted_as, 'b'));
    case 'compile_time': return h('div', null, `compile time ${secs(c.a)} → ${secs(c.b)}${c.delta != null ? ` (${signed(c.delta, 2)} s)` : ''}`);
    case 'graph_size': {
      const v = (n) => (n == null ? 'none' : `${n} ${c.unit}`);
      return h('div', null, h('code', null, c.ir), `: ${v(c.a)} → ${v(c.b)}${c.delta != null ? ` (${signed(c.delta, 0)})` : ''}`);
    }
    case 'guards': return listChange('guards', c);
    case 'symbols': return listChange('dynamic-shape symbols', c);
    case 'graph_breaks': return listChange('graph breaks', c);
    case 'cache': return h('div', null, h('code', null, c.cache), ` ${c.a.join(',') || 'none'} → ${c.b.join(',') || 'none'}`);
    case 'artifact': return h('div', null, 'artifact ',
      h('a', { class: 'cmp-diff-link', href: ctx.href('compare', { changed: ctx.params.get('changed'), k: x.align_key, art: c.name }) }, c.name),
      ' differs (diff)');
    case 'artifacts_only': return h('div', { class: 'note' },
      c.a.length ? `artifacts only in A: ${c.a.join(', ')}` : null, c.a.length && c.b.length ? '; ' : null,
      c.b.length ? `artifacts only in B: ${c.b.join(', ')}` : null);
    default: return h('div', null, c.kind);
  }
}

function streamSection(ctx, s, changedOnly) {
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
    h('h2', null, `Stream ${s.stream}: ${plural(both.length, 'compile')} in both, ${onlyA.length} only in A, ${onlyB.length} only in B`),
    toggle,
    h('div', { class: 'cmp-compiles' }, shown.map((x) => h('div', { class: 'cmp-compile', dataset: { changed: x.changes.length ? '1' : '0' } },
      h('h3', null, name(x), ' ', h('code', null, x.a), ' → ', h('code', null, x.b)),
      x.changes.length ? x.changes.map((c) => changeItem(ctx, x, c)) : h('p', { class: 'note' }, 'No change.')))),
    onlyA.length ? section('Only in A', h('ul', { class: 'cmp-only-a' }, onlyA.map((x) => h('li', null, name(x), ' ', h('code', null, x.a))))) : null,
    onlyB.length ? section('Only in B', h('ul', { class: 'cmp-only-b' }, onlyB.map((x) => h('li', null, name(x), ' ', h('code', null, x.b))))) : null,
    s.recompiles.length ? section('Recompiles', h('ul', { class: 'cmp-recompiles' }, s.recompiles.map((r) => h('li', null,
      `${r.code}: ${r.a} → ${r.b} (${signed(r.delta, 0)})`,
      h('ul', null, r.reasons_added.map((x) => h('li', { class: 'cmp-add' }, 'new reason: ', x)),
        r.reasons_removed.map((x) => h('li', { class: 'cmp-del' }, 'reason gone: ', x))))))) : null);
}

/** The diff of one differing artifact of an aligned compile: A's payload → B's. */
async function artifactDiff(ctx, other, comparison, key, name) {
  const x = comparison.streams.flatMap((s) => s.compiles).find((c) => c.align_key === key);
  const c = x?.changes.find((ch) => ch.kind === 'artifact' && ch.name === name);
  if (!c) return section('No such artifact', empty(`No artifact ${name} differs in that compile.`));
  const [textA, textB] = await Promise.all([ctx.bundle.text(c.a), other.text(c.b)]);
  const ops = diffText(textA, textB);
  const { added, removed } = diffStats(ops);
  ctx.expose('compareDiff', { code: x.code, a: x.a, b: x.b, name, blobA: c.a, blobB: c.b, added, removed });
  return h('section', { class: 'card cmp-diff' },
    h('h2', null, name, ': ', x.code ?? '', ' ', h('code', null, `A ${x.a}`), ' → ', h('code', null, `B ${x.b}`)),
    note(`${plural(removed, 'line')} only in A, ${plural(added, 'line')} only in B.`),
    diffView(ops));
}
