// pages/rank-diff.js: One artifact of one compile,
// diffed between two ranks (`#/rank-diff?c=N&name=ARTIFACT&occ=N&a=STREAM&b=STREAM`: `c` is the
// compile's index in compile_alignment, empty for artifacts outside any compile; occ defaults
// to 0). `id=[0/1]` instead of `c` names the compile by rank `a`'s own compile id (any rank's
// without `a`). Rows come from the cross-rank `rank_differ` table, which aligns compiles by the
// code compiled (each rank has its own compile id for one) and groups ranks by payload blob;
// without params it opens the first artifact whose payload differs between ranks.

import { h, section, note, empty, bytes, plural } from '../dom.js';
import { diffText, diffView, diffStats } from '../diff.js';
import { rankLabeller, ranksText, compileRef, compileText, compileLink, ownIds, rankDifferRows } from '../ranks-common.js';

/** The key of a row's compile in the URL: its aligned index, '' outside any compile. */
const compileKey = (r) => (r.compile ? String(r.compile.aligned) : '');

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
  const found = hasKey
    ? rd.artifacts.find((r) => keyOf(r) === wanted)
    : rd.artifacts.find((r) => r.groups.length >= 2) ?? rd.artifacts[0];
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
      h('strong', null, row.name), row.occurrence ? ` #${row.occurrence}` : '', row.kind !== row.name ? h('span', { class: 'note' }, ` (${row.kind})`) : null, ' ',
      h('span', { class: ['badge', row.status === 'differs' ? 'st-failed' : row.status === 'identical' ? 'st-ok' : 'st-empty'] }, row.status.replace(/_/g, ' '))),
    pickers(ctx, rd, full, row, a, b, label, go),
    section('Ranks by payload', h('ul', { class: 'rk-groups' }, row.groups.map((g, i) => h('li', { class: 'rk-group' },
      h('span', { class: 'rk-group-name' }, `payload ${i + 1}`),
      h('span', { class: 'rk-ranks', title: g.streams.map(label).join(', ') }, ranks(g.streams)),
      row.compile ? h('span', { class: 'rk-group-ids' }, 'as ', compileRef(ctx, sub(g.streams), label, { onlyIds: true })) : null,
      h('span', { class: 'rk-group-ids' }, `${bytes(g.size)} · blob `, h('code', null, g.blob))))),
    row.missing.length ? note(`Not logged by ${ranks(row.missing)}.`) : null));

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
  const ops = diffText(textA, textB);
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
  const artKey = (r) => `${r.name}\u0000${r.occurrence}`;
  const firstDiffering = (rows) => rows.find((r) => r.groups.length >= 2) ?? rows[0];
  const open = (row, pa, pb) => {
    const r = full(row);
    go({
      c: compileKey(r), name: r.name, occ: r.occurrence || null,
      a: pa ?? r.groups[0].streams[0], b: pb ?? (r.groups[1]?.streams[0] ?? r.groups[0].streams[1] ?? r.groups[0].streams[0]),
    });
  };
  const select = (aria, value, options, onChange) => h('select', { 'aria-label': aria, on: { change: (e) => onChange(e.target.value) } },
    options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
  const differing = (rows) => rows.filter((r) => r.groups.length >= 2).length;
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
        `${r.name}${r.occurrence ? ` #${r.occurrence}` : ''}${r.groups.length >= 2 ? ` (${r.groups.length} payloads)` : ''}`]),
      (k) => open(inId.find((r) => artKey(r) === k)))),
      h('label', null, 'rank A ', select('Rank A', a, rankOptions, (s) => open(row, s, b))),
      h('button', { type: 'button', title: 'Swap the ranks', on: { click: () => open(row, b, a) } }, '⇄'),
      h('label', null, 'rank B ', select('Rank B', b, rankOptions, (s) => open(row, a, s))));
  }
  return h('div', { class: 'toolbar rk-pickers' }, parts);
}
