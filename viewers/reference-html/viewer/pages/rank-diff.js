// pages/rank-diff.js: what differs between ranks, from the cross-rank `rank_differ` table
// (compiles aligned by the code compiled, artifacts paired by compile, name, graph and
// occurrence, payloads compared once ids are masked). Without params (`#/rank-diff`): every real
// difference first, each with the line diff of its odd payload against the usual one; then what
// a rank did not log because of an FX cache hit; then, collapsed, the artifacts that are the same
// up to ids (never shown as differences). With params, one artifact diffed between two ranks
// (`#/rank-diff?c=N&name=ARTIFACT&g=GRAPH&occ=N&a=STREAM&b=STREAM`: `c` is the compile's index in
// compile_alignment, empty for artifacts outside any compile; `g` the AOT graph (forward,
// backward, inference), absent for artifacts of no graph; occ defaults to 0). `id=[0/1]` instead
// of `c` names the compile by rank `a`'s own compile id (any rank's without `a`).

import { h, section, note, empty, bytes, plural, count } from '../dom.js';
import { maskedDiff, diffView, diffStats } from '../diff.js';
import {
  rankLabeller, ranksText, compileRef, compileText, compileLink, ownIds, rankDifferRows, differBadge, missingNote, SAME_UP_TO_IDS, artifactKeyText,
} from '../ranks-common.js';

/** The key of a row's compile in the URL: its aligned index, '' outside any compile. */
const compileKey = (r) => (r.compile ? String(r.compile.aligned) : '');

/** How many differences the overview diffs at once (each fetches two payloads); the rest are links. */
const DIFFS_SHOWN = 20;
/** How many same-up-to-ids artifacts the collapsed list names; the rest are counted. */
const SAME_LISTED = 200;

/** The URL params of one artifact of a row with every stream named, ranks `a` and `b`. */
function artifactParams(r, a, b) {
  return { c: compileKey(r), name: r.name, g: r.graph ?? null, occ: r.occurrence || null, a, b };
}

export async function render(ctx) {
  const tables = ctx.manifest.cross_rank?.tables;
  const [rd, al] = await Promise.all([
    tables?.rank_differ ? ctx.crossTable('rank_differ') : null,
    tables?.compile_alignment ? ctx.crossTable('compile_alignment') : null,
  ]);
  const title = h('h1', null, 'Rank diff');
  if (!rd?.artifacts?.length) {
    return h('div', null, title, section('Nothing to compare', empty(ctx.manifest.cross_rank
      ? 'No rank logged an artifact with a payload, so there is nothing to diff between ranks.'
      : 'This bundle holds a single stream (one rank). Build a bundle from a directory of rank logs to compare ranks.')));
  }
  const label = rankLabeller(ctx.manifest);
  const ranks = (s) => ranksText(s, label);
  // Rows name only the ranks that differ from the majority; `full` lists every rank of one row.
  const full = rankDifferRows(rd, al);
  const p = ctx.params;
  const hasKey = p.has('c') || p.has('id') || p.has('name');
  if (!hasKey) return overview(ctx, rd, full, label);
  let wantedCompile = p.get('c') ?? '';
  if (!p.has('c') && p.get('id')) {
    // A rank's own compile id: the aligned compile that rank `a` (else any rank) has under that id.
    const id = p.get('id');
    const s = p.get('a');
    const hit = rd.artifacts.find((r) => full(r).compile?.compile_ids.some((c) => c.compile_id === id && (!s || c.stream === s)));
    wantedCompile = hit ? compileKey(hit) : `?${id}`;
  }
  const keyOf = (r) => `${compileKey(r)}\u0000${r.name}\u0000${r.occurrence}`;
  const wanted = `${wantedCompile}\u0000${p.get('name') ?? ''}\u0000${Number(p.get('occ') ?? 0)}`;
  // The graph is part of the key; a link without `g` opens the first graph of that name.
  const sameGraph = (r) => !p.has('g') || (r.graph ?? '') === p.get('g');
  const found = rd.artifacts.find((r) => keyOf(r) === wanted && sameGraph(r));
  const row = found ? full(found) : null;
  const go = (params) => { location.hash = ctx.href('rank-diff', params); };

  if (!row) {
    const inCompile = rd.artifacts.find((r) => compileKey(r) === wantedCompile);
    const where = inCompile ? compileText(full(inCompile).compile, label) : p.get('id') || (wantedCompile ? `compile #${wantedCompile}` : '(outside any compile)');
    return h('div', null, title, section('No such artifact', empty(
      `No rank logged ${p.get('name') ?? '(no name)'} in ${where}. Pick one below.`),
    pickers(ctx, rd, full, null, null, null, label, go)));
  }

  const streamsOf = row.groups.flatMap((g) => g.streams);
  const groupOf = (s) => row.groups.findIndex((g) => g.streams.includes(s));
  const defaultA = row.groups[0].streams[0];
  const defaultB = row.groups[1]?.streams[0] ?? row.groups[0].streams[1] ?? defaultA;
  const a = hasKey && p.get('a') ? p.get('a') : defaultA;
  const b = hasKey && p.get('b') ? p.get('b') : defaultB;
  const ga = groupOf(a);
  const gb = groupOf(b);

  const own = ownIds(row.compile);
  const sub = (streams) => (row.compile ? { ...row.compile, compile_ids: row.compile.compile_ids.filter((c) => streams.includes(c.stream)) } : null);
  const head = h('div', null, title,
    h('p', { class: 'rk-diff-key' }, compileRef(ctx, row.compile, label), ' · ',
      h('strong', null, artifactKeyText(row)), row.kind !== row.name ? h('span', { class: 'note' }, ` (${row.kind})`) : null, ' ',
      differBadge(row.status)),
    pickers(ctx, rd, full, row, a, b, label, go),
    section('Ranks by payload', h('ul', { class: 'rk-groups' }, row.groups.map((g, i) => h('li', { class: 'rk-group' },
      h('span', { class: 'rk-group-name' }, `payload ${i + 1}`),
      h('span', { class: 'rk-ranks', title: g.streams.map(label).join(', ') }, ranks(g.streams)),
      row.compile ? h('span', { class: 'rk-group-ids' }, 'as ', compileRef(ctx, sub(g.streams), label, { onlyIds: true })) : null,
      h('span', { class: 'rk-group-ids' }, `${bytes(g.size)} · blob `, h('code', null, g.blob))))),
    row.status === 'same_up_to_ids' ? note(SAME_UP_TO_IDS) : null,
    missingNote(row, ranks)));

  for (const [s, g] of [[a, ga], [b, gb]]) {
    if (g < 0) {
      ctx.expose('rankDiff', { compile: row.compile?.label ?? null, name: row.name, a, b, missing: s });
      return h('div', null, head, section('Missing', empty(`${streamsOf.includes(s) ? '' : `${label(s)} did not log this artifact. `}` +
        `Pick a rank that has it: ${ranks(streamsOf)}.`)));
    }
  }
  const blobA = row.groups[ga].blob;
  const blobB = row.groups[gb].blob;
  const [textA, textB] = await Promise.all([ctx.bundle.text(blobA), ctx.bundle.text(blobB)]);
  const ops = maskedDiff(textA, textB, row.name);
  const { added, removed } = diffStats(ops);
  const identical = blobA === blobB;
  ctx.expose('rankDiff', {
    compile: row.compile?.label ?? null, aligned: row.compile?.aligned ?? null, idA: own.get(a) ?? null, idB: own.get(b) ?? null,
    name: row.name, occurrence: row.occurrence, a, b, blobA, blobB, identical, added, removed,
  });
  // Each side names the rank's own compile id, linked to that rank's compile.
  const side = (s) => [label(s), own.has(s) ? [' ', compileLink(ctx, s, own.get(s), label)] : null];
  return h('div', null, head,
    h('section', { class: 'card' },
      h('h2', { class: 'rk-diff-sides' }, side(a), ' → ', side(b)),
      identical
        ? h('p', { class: 'rk-identical' }, `Identical: ${label(a)} and ${label(b)} logged the same payload (${bytes(textA.length)}).`)
        : note(`${plural(removed, 'line')} only in ${label(a)}, ${plural(added, 'line')} only in ${label(b)}.`),
      identical ? null : diffView(ops)));
}

/** Selects for compile id, artifact and the two ranks; a change navigates (the URL holds the choice). */
function pickers(ctx, rd, full, row, a, b, label, go) {
  // Each compile's artifacts, in table order: one pass over the table.
  const byCompile = new Map();
  for (const r of rd.artifacts) {
    const k = compileKey(r);
    if (!byCompile.has(k)) byCompile.set(k, []);
    byCompile.get(k).push(r);
  }
  const currentId = row ? compileKey(row) : byCompile.keys().next().value;
  const inId = byCompile.get(currentId);
  const artKey = (r) => `${r.name}\u0000${r.graph ?? ''}\u0000${r.occurrence}`;
  const firstDiffering = (rows) => rows.find((r) => r.status === 'differs') ?? rows.find((r) => r.groups.length >= 2) ?? rows[0];
  const open = (row, pa, pb) => {
    const r = full(row);
    go(artifactParams(r, pa ?? r.groups[0].streams[0],
      pb ?? (r.groups[1]?.streams[0] ?? r.groups[0].streams[1] ?? r.groups[0].streams[0])));
  };
  const select = (aria, value, options, onChange) => h('select', { 'aria-label': aria, on: { change: (e) => onChange(e.target.value) } },
    options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
  const differing = (rows) => rows.filter((r) => r.status === 'differs').length;
  const parts = [
    h('label', null, 'compile ', select('Compile', currentId, [...byCompile].map(([k, rows]) => {
      const n = differing(rows);
      return [k, `${compileText(full(rows[0]).compile, label)}${n ? ` (${n} differ)` : ''}`];
    }), (k) => open(firstDiffering(byCompile.get(k)))))];
  if (row) {
    const streams = row.groups.flatMap((g, i) => g.streams.map((s) => [s, i]));
    const own = ownIds(row.compile);
    const rankOptions = streams.map(([s, i]) => [s, `${label(s)}${own.has(s) ? ` ${own.get(s)}` : ''} (payload ${i + 1})`]);
    parts.push(
      h('label', null, 'artifact ', select('Artifact', artKey(row), inId.map((r) => [artKey(r),
        `${artifactKeyText(r)}${r.status === 'differs' ? ' (differs)' : r.status === 'same_up_to_ids' ? ' (same up to ids)' : ''}`]),
      (k) => open(inId.find((r) => artKey(r) === k)))),
      h('label', null, 'rank A ', select('Rank A', a, rankOptions, (s) => open(row, s, b))),
      h('button', { type: 'button', title: 'Swap the ranks', on: { click: () => open(row, b, a) } }, '⇄'),
      h('label', null, 'rank B ', select('Rank B', b, rankOptions, (s) => open(row, a, s))));
  }
  return h('div', { class: 'toolbar rk-pickers' }, parts);
}

/**
 * The variants of a `differs` row (every stream named): the usual one (most streams; the first
 * on a tie, as the table's `difference` takes it) and each other, with the streams of each and
 * the blob of its first group. [usual, ...others].
 */
function variants(row) {
  const by = new Map();
  for (const g of row.groups) {
    if (!by.has(g.variant)) by.set(g.variant, { variant: g.variant, streams: [], blob: g.blob, size: g.size });
    by.get(g.variant).streams.push(...g.streams);
  }
  const all = [...by.values()];
  const usual = all.reduce((best, v) => (v.streams.length > best.streams.length ? v : best));
  return [usual, ...all.filter((v) => v !== usual)];
}

/** One real difference: for each odd variant, its line diff against the usual payload. */
async function differenceCard(ctx, row, label) {
  const ranks = (s) => ranksText(s, label);
  const [usual, ...odd] = variants(row);
  const own = ownIds(row.compile);
  const usualText = await ctx.bundle.text(usual.blob);
  const parts = [];
  const exposed = [];
  for (const v of odd) {
    const ops = maskedDiff(usualText, await ctx.bundle.text(v.blob), row.name);
    const { added, removed } = diffStats(ops);
    const [a, b] = [usual.streams[0], v.streams[0]];
    exposed.push({ odd: v.streams, usual: usual.streams, a, b, blobA: usual.blob, blobB: v.blob, added, removed,
      idA: own.get(a) ?? null, idB: own.get(b) ?? null });
    const href = ctx.href('rank-diff', artifactParams(row, a, b));
    parts.push(h('p', { class: 'rk-difference-who' },
      h('strong', null, ranks(v.streams)), ` (+) against ${ranks(usual.streams)} (−): `,
      `${plural(added, 'line')} only in ${ranks(v.streams)}, ${plural(removed, 'line')} only in ${ranks(usual.streams)}. `,
      h('a', { href }, 'Pick ranks')),
    diffView(ops));
  }
  const first = row.difference;
  const card = h('section', { class: 'card rk-difference', dataset: { name: row.name } },
    h('h3', null, compileRef(ctx, row.compile, label), ' · ', h('strong', null, artifactKeyText(row)), ' ', differBadge(row.status)),
    first ? note(`First differing line (ids masked): ${first.line}.`) : null,
    parts,
    missingNote(row, ranks));
  return { card, exposed };
}

/** The page without params: real differences with their diffs, cache-hit gaps, then the rest collapsed. */
async function overview(ctx, rd, full, label) {
  const ranks = (s) => ranksText(s, label);
  const differs = rd.artifacts.filter((r) => r.status === 'differs');
  const sameIds = rd.artifacts.filter((r) => r.status === 'same_up_to_ids');
  const onCacheHit = rd.artifacts.filter((r) => r.missing_on_cache_hit?.length);
  const shown = await Promise.all(differs.slice(0, DIFFS_SHOWN).map((r) => differenceCard(ctx, full(r), label)));
  const link = (r) => {
    const f = full(r);
    const a = f.groups[0].streams[0];
    return h('a', { href: ctx.href('rank-diff', artifactParams(f, a, f.groups[1]?.streams[0] ?? a)) },
      `${artifactKeyText(f)} of ${compileText(f.compile, label)}`);
  };
  const firstDiff = shown[0]?.exposed[0];
  if (firstDiff) {
    const r = full(differs[0]);
    // The first difference as the one-artifact view exposes it (a: the usual payload, b: the odd one).
    ctx.expose('rankDiff', { compile: r.compile?.label ?? null, aligned: r.compile?.aligned ?? null, name: r.name,
      graph: r.graph ?? null, occurrence: r.occurrence, identical: false, ...firstDiff });
  }
  ctx.expose('rankDiffOverview', {
    differs: shown.map(({ exposed }, i) => ({ compile: full(differs[i]).compile?.label ?? null, name: differs[i].name,
      graph: differs[i].graph ?? null, line: differs[i].difference?.line ?? null, variants: exposed })),
    differsTotal: differs.length,
    sameUpToIds: sameIds.length,
    sameUpToIdsListed: sameIds.slice(0, SAME_LISTED).map((r) => ({ compile: r.compile?.label ?? null, name: r.name, graph: r.graph ?? null })),
    notLoggedOnCacheHit: onCacheHit.map((r) => ({ compile: r.compile?.label ?? null, name: r.name, graph: r.graph ?? null, streams: r.missing_on_cache_hit })),
  });
  const cacheGaps = h('ul', { class: 'rk-cache-gaps' }, onCacheHit.map((r) => h('li', null,
    `${ranks(r.missing_on_cache_hit)}: `, link(r), ' — not logged: FX cache hit')));
  const same = h('details', { class: 'an-details rk-same-ids' },
    h('summary', null, `Same up to ids: ${plural(sameIds.length, 'artifact')} (not differences)`),
    h('div', { class: 'an-details-body' }, note(SAME_UP_TO_IDS),
      h('ul', null, sameIds.slice(0, SAME_LISTED).map((r) => h('li', null, link(r)))),
      sameIds.length > SAME_LISTED ? note(`${count(sameIds.length - SAME_LISTED)} more.`) : null));
  const summary = `${plural(rd.keys, 'artifact')} compared across ranks (per compile, name, graph and occurrence): ` +
    `${count(rd.differs)} ${rd.differs === 1 ? 'differs' : 'differ'}, ${count(rd.same_up_to_ids)} same up to ids, ${count(rd.identical)} identical on every rank, ` +
    `${count(rd.same_where_present)} the same where present; ${count(rd.with_missing)} missing on some rank` +
    `${onCacheHit.length ? ` (${count(onCacheHit.length)} not logged: FX cache hit)` : ''}.`;
  return h('div', null, h('h1', null, 'Rank diff'), note(summary),
    pickers(ctx, rd, full, null, null, null, label, (params) => { location.hash = ctx.href('rank-diff', params); }),
    h('h2', null, `Differences (${count(differs.length)})`),
    differs.length ? shown.map((s) => s.card) : section('No artifact differs', empty(sameIds.length
      ? 'Every payload the ranks logged is the same once ids are masked.'
      : 'Every rank that logged an artifact logged the same payload.')),
    differs.length > DIFFS_SHOWN ? section(`${count(differs.length - DIFFS_SHOWN)} more differences`,
      h('ul', null, differs.slice(DIFFS_SHOWN).map((r) => h('li', null, link(r))))) : null,
    onCacheHit.length ? section(`Not logged: FX cache hit (${count(onCacheHit.length)})`,
      note('A rank whose FX graph cache hit skipped Inductor\'s compile logs no post-grad graph or cache miss for that graph.'),
      cacheGaps) : null,
    sameIds.length ? same : null);
}
