// pages/ranks.js: the multi-rank view (`#/ranks`,
// optional `sec=<section id>` to scroll to a section, `grid=diff` to show only the compiles
// that differ between ranks). Reads the cross-rank tables (docs/cross_rank/*.md): what diverges
// first, then the rank groups, a compiles × ranks grid, collective schedules, tensor metadata,
// runtime estimates, compile-time imbalance, execution order, cache outcomes, and which ranks
// logged which artifact payloads. Compiles are those of `compile_alignment`, matched across ranks
// by the code they compiled: every row names one by its label and shows each rank's OWN compile
// id (a rank whose frame ids are shifted gives the same compile another id), linking to it.

import { h, section, note, empty, dataTable, virtualList, statusBadge, count, seconds, plural, download, STATUS } from '../dom.js';
import {
  rankLabeller, ranksText, shortOp, ms, compileText, compileIdsText, compileRef, compileHref, compileLink, ownIds, usualCompileId,
  alignedIndex, alignmentFindings, AMBIGUITY,
  rankDifferRows, differBadge, artifactKeyText,
} from '../ranks-common.js';

const TABLES = ['compile_alignment', 'collective_schedules', 'cache_divergence', 'tensor_meta', 'execution_order',
  'runtime_estimations', 'compile_time_imbalance', 'rank_differ', 'rank_findings'];

export async function render(ctx) {
  const x = ctx.manifest.cross_rank;
  if (!x) {
    return h('div', null, h('h1', null, 'Ranks'),
      section('Only one stream', empty('This bundle holds a single stream (one rank), so there is nothing to compare. ' +
        'Build a bundle from a directory of rank logs (TORCH_TRACE of every rank) to compare ranks.')));
  }
  const loaded = await Promise.all(TABLES.map((n) => (x.tables?.[n] ? ctx.crossTable(n) : null)));
  const t = Object.fromEntries(TABLES.map((n, i) => [n, loaded[i]]));
  const label = rankLabeller(ctx.manifest);
  const ranks = (streams) => ranksText(streams, label);
  const env = { ctx, t, label, ranks, members: x.members, byId: alignedIndex(t.compile_alignment) };

  const warnings = divergences(env);
  ctx.expose('members', x.members.map((m) => m.label));
  ctx.expose('warnings', warnings.map((w) => w.text));

  const sections = [
    ['groups', 'Rank groups', groupsSection],
    ['grid', 'Compiles per rank', gridSection],
    ['schedules', 'Collective schedules', schedulesSection],
    ['tensor-meta', 'Tensor metadata', tensorMetaSection],
    ['runtime', 'Runtime estimates', runtimeSection],
    ['compile-time', 'Compile time per rank', compileTimeSection],
    ['execution-order', 'Execution order', executionOrderSection],
    ['cache', 'Cache outcomes', cacheSection],
    ['rank-differ', 'Artifacts per rank', rankDifferSection],
  ];
  const node = h('div', { class: 'ranks-page' },
    h('div', { class: 'rk-head' },
      h('h1', null, `Ranks (${x.members.length})`),
      h('span', { class: 'spacer' }),
      traceButton(ctx, 'chrome_trace', 'Merged Chrome trace', 'chrome_trace_all_ranks.json'),
      traceButton(ctx, 'runtime_estimates_trace', 'Runtime-estimates trace', 'runtime_estimates_all_ranks.json')),
    warnings.length
      ? h('section', { class: 'card warnings', id: 'rk-divergence', 'aria-label': 'Divergence' },
        h('h2', null, 'Where the ranks diverge'),
        h('ul', { class: 'warning-list' }, warnings.map((w) => h('li', { class: ['warning', `sev-${w.severity}`] },
          w.sec ? h('a', { href: ctx.href('ranks', { sec: w.sec }) }, w.parts ?? w.text) : w.parts ?? w.text))))
      : h('section', { class: 'card ok-box' }, h('h2', null, 'The ranks agree'),
        note('Same compiles (matched by the code compiled), collective schedules, cache outcomes, tensor metadata and execution order on every rank.')),
    sections.map(([id, title, build]) => {
      const body = build(env);
      return body ? h('section', { class: 'card', id: `rk-${id}` }, h('h2', null, title), body) : null;
    }));
  const target = ctx.params.get('sec');
  // app.js scrolls to the top after rendering; scroll to the asked section after that.
  if (target) setTimeout(() => document.getElementById(`rk-${target}`)?.scrollIntoView({ block: 'start' }), 0);
  return node;
}

/** A button that downloads a cross-rank Chrome trace (for Perfetto); null when the bundle has none. */
function traceButton(ctx, field, text, filename) {
  if (typeof ctx.manifest.cross_rank?.[field] !== 'string') return null;
  const button = h('button', {
    type: 'button', class: 'rk-download', dataset: { trace: field },
    title: 'Download; open it in ui.perfetto.dev or chrome://tracing',
    on: {
      click: async () => {
        button.disabled = true;
        try {
          const data = await ctx.bundle.crossRankTrace(field);
          if (data) download(filename, data, 'application/json');
        } finally { button.disabled = false; }
      },
    },
  }, `⤓ ${text}`);
  return button;
}

// ---- divergence summary --------------------------------------------------------------------

/** Every divergence the tables report, worst first: {severity, text, sec, parts?}. */
function divergences({ t, ranks, label }) {
  const out = [];
  const add = (severity, text, sec, parts) => out.push({ severity, text, sec, parts });
  const groupsText = (gs) => gs.map((g) => ranks(g.streams)).join(' vs ');
  const al = t.compile_alignment;
  const findings = alignmentFindings(al, label);
  for (const f of findings) {
    if (f.kind === 'partial_code') add('warn', f.text, 'grid', f.parts);
  }
  if (al?.diverges) add('warn', `Ranks compiled different graphs: ${groupsText(al.groups.map((g) => g.group))}`, 'groups');
  const statusRows = (al?.compiles ?? []).filter((r) => r.status_differs);
  if (statusRows.length) {
    const r = statusRows[0];
    const byStatus = groupBy(r.present, (p) => p.status);
    add('warn', `Compile status differs on ${plural(statusRows.length, 'compile')}` +
      `, e.g. ${r.label} ${compileIdsText(r.present, label)}: ${[...byStatus].map(([st, ps]) => `${STATUS[st]?.[0] ?? st} on ${ranks(ps.map((p) => p.stream))}`).join('; ')}`, 'grid');
  }
  for (const row of t.collective_schedules?.compiles ?? []) {
    if (!row.differs) continue;
    const lacking = row.variants.filter((v) => v.lacks.length || v.extra.length)
      .map((v) => `${ranks(v.streams)} ${[v.lacks.length ? `lacks ${v.lacks.map(shortOp).join(', ')}` : null,
        v.extra.length ? `adds ${v.extra.map(shortOp).join(', ')}` : null].filter(Boolean).join(' and ')}`);
    add('error', `Collective schedules differ on ${compileText(row.compile, label)}: ${groupsText(row.variants)}` +
      (row.no_schedule.length ? ` vs no collectives on ${ranks(row.no_schedule)}` : '') +
      (lacking.length ? ` (${lacking.join('; ')})` : ''), 'schedules');
  }
  const order = t.execution_order;
  if (order?.diverges) add('error', `Ranks ran their graphs in different orders: ${groupsText(order.recorded.groups)}`, 'execution-order');
  const cache = t.cache_divergence;
  if (cache?.divergence === 'outcomes') {
    add('warn', `Cache outcomes differ on ${plural(cache.differing_compiles, 'compile')}: some ranks missed the cache where others hit`, 'cache');
  }
  const tm = t.tensor_meta;
  if (tm?.fingerprints_differ) {
    const n = tm.graphs.filter((g) => g.differs).length;
    add('warn', `Tensor shapes, strides or dtypes differ on ${plural(n, 'graph')}: ${groupsText(tm.groups)}`, 'tensor-meta');
  } else if (tm?.diverges) {
    add('info', `Tensor metadata agrees where present; ranks differ only by missing artifacts (${groupsText(tm.groups)})`, 'tensor-meta');
  }
  const rt = t.runtime_estimations;
  if (rt?.differs) {
    const differing = rt.graphs.filter((g) => g.differs).sort((a, b) => b.delta_ns - a.delta_ns);
    const worst = differing[0];
    add('warn', `Estimated runtimes differ on ${plural(differing.length, 'graph')}; largest gap ` +
      `${compileText(worst.compile, label)}${worst.occurrence ? ` #${worst.occurrence}` : ''}: ` +
      `${ranks(worst.slowest)} ${ms(worst.delta_ns)} slower than ${ranks(worst.fastest)}`, 'runtime');
  }
  const imb = t.compile_time_imbalance;
  if (imb?.max_over_min >= 2) {
    add('warn', `Compile time imbalance: ${ranks(imb.slowest)} compiled for ${seconds(imb.max_us / 1e6)}, ` +
      `${imb.max_over_min.toFixed(1)}x the fastest (${ranks(imb.fastest)}, ${seconds(imb.min_us / 1e6)})`, 'compile-time');
  }
  if (cache?.divergence === 'missing_compiles') {
    add('info', `Cache outcomes agree on every shared compile; ${plural(cache.compiles_with_missing, 'compile')} missing on some ranks`, 'cache');
  }
  // rank_differ, as rank_findings says it: real differences counted apart from the payloads
  // that are the same up to ids, then the first findings in words (trace text, shown as text).
  const rd = t.rank_differ;
  const found = t.rank_findings?.artifacts;
  if (rd?.differs) {
    add('warn', `${plural(rd.differs, 'artifact')} ${rd.differs === 1 ? 'differs' : 'differ'} between ranks` +
      (rd.same_up_to_ids ? ` (${count(rd.same_up_to_ids)} more are the same up to ids: not differences)` : ''), 'rank-differ');
  }
  for (const sentence of found?.described ?? []) add('info', sentence, 'rank-differ');
  if (al?.ids_shifted) add('info', shiftText(al, label), 'grid');
  for (const f of findings) {
    if (f.kind === 'ambiguity') add('info', f.text, 'groups');
  }
  const sev = { error: 0, warn: 1, info: 2 };
  out.sort((a, b) => sev[a.severity] - sev[b.severity]);
  return out;
}

/**
 * Which ranks gave the same code other compile ids (from compile_alignment's frame_id_shifts):
 * "Same code, other compile ids: on rank 2, [1/0] is forward (m.py:20) ([0/0] on most ranks), …".
 */
function shiftText(al, label) {
  const shifted = al.streams.filter((s) => s.frame_id_shifts.length);
  // Named for the first few ranks only: the rest are counted (thousands of ranks may be shifted).
  const parts = shifted.slice(0, 4).map((s) => {
    const shown = s.frame_id_shifts.slice(0, 2).map((f) => {
      const c = al.compiles[f.aligned];
      const own = c?.present.find((p) => p.stream === s.stream)?.compile_id;
      const usual = c ? usualCompileId(c.present.filter((p) => p.stream !== s.stream)) : null;
      return c ? `${own} is ${c.label} (${usual} on most ranks)` : `frame ${f.frame_id} is frame ${f.usual_frame_id} elsewhere`;
    });
    if (s.frame_id_shifts.length > 2) shown.push(`${s.frame_id_shifts.length - 2} more`);
    return `on ${label(s.stream)}, ${shown.join(', ')}`;
  });
  const head = 'The same code has other compile ids on some ranks, so compiles are compared by the code they compiled, not by compile id';
  return parts.length ? `${head}: ${parts.join('; ')}${shifted.length > 4 ? `; ${shifted.length - 4} more ranks` : ''}` : head;
}

function groupBy(items, key) {
  const m = new Map();
  for (const it of items) {
    const k = key(it);
    if (!m.has(k)) m.set(k, []);
    m.get(k).push(it);
  }
  return m;
}

/**
 * "rank 0, rank 2" as rank chips; long lists collapse to the compact text with the full list in a
 * tooltip. With `ref` (an AlignedCompileRef), each chip links to that rank's own compile of it.
 */
function rankChips(streams, { ctx, ranks, label }, ref) {
  if (streams.length > 6) return h('span', { class: 'rk-ranks', title: streams.map(label).join(', ') }, ranks(streams));
  const own = ownIds(ref);
  // The rank's own id is written on the chip only when the ranks' ids for this compile differ.
  const differ = new Set(own.values()).size > 1;
  return h('span', { class: 'rk-ranks' }, streams.map((s) => (own.has(s)
    ? compileLink(ctx, s, own.get(s), label, { cls: 'rk-chip', text: [label(s), differ ? h('span', { class: 'rk-chip-id' }, own.get(s)) : null] })
    : h('span', { class: 'rk-chip' }, label(s)))));
}

/** A list of compile labels, the first few then how many more; the whole list in `title`. */
function labelsText(labels, n = 3) {
  return labels.length <= n ? labels.join('; ') : `${labels.slice(0, n).join('; ')}; … ${labels.length - n} more`;
}

// ---- rank groups and the grid ------------------------------------------------------------

function groupsSection(env) {
  const al = env.t.compile_alignment;
  if (!al) return null;
  const labelOf = (i) => al.compiles[i]?.label ?? `#${i}`;
  const sets = al.groups.map((g) => new Set(g.compiles));
  const common = new Set(al.groups[0]?.compiles.filter((i) => sets.every((s) => s.has(i))) ?? []);
  const describe = (g) => {
    const n = plural(g.compiles.length, 'compile');
    if (al.groups.length < 2) return `${n}: ${labelsText(g.compiles.map(labelOf))}`;
    const extra = g.compiles.filter((i) => !common.has(i)).map(labelOf);
    if (!extra.length) return `${n}, only those every rank made`;
    return `${n}: ${common.size ? `the ${plural(common.size, 'compile')} every rank made, plus ` : ''}${labelsText(extra)}`;
  };
  return h('div', null,
    note(al.diverges
      ? 'Ranks in one group made exactly the same compiles. Compiles are matched across ranks by the code they compiled (then which frame of that code and its recompile; a frame compile\'s attempts are one row, its final attempt compared), never by compile id. ' +
        'Different groups mean some ranks compiled graphs the others did not: the usual cause of a collective hang.'
      : 'Every rank made the same compiles (matched by the code compiled, not by compile id).'),
    h('ul', { class: 'rk-groups' }, al.groups.map((g, i) => h('li', { class: 'rk-group', dataset: { group: i } },
      h('span', { class: 'rk-group-name' }, `group ${i + 1}`),
      rankChips(g.group.streams, env),
      h('span', { class: 'rk-group-ids', title: g.compiles.map(labelOf).join('\n') }, describe(g))))),
    al.ambiguities.length ? [h('h3', null, 'Where matching compiles was ambiguous'),
      note('The code alone did not decide which compiles are the same on these ranks; how each case was resolved:'),
      dataTable({
        name: 'ambiguities', maxRows: 8,
        columns: [
          { key: 'stream', label: 'rank', width: '8em', value: (a) => env.label(a.stream) },
          { key: 'kind', label: 'what', width: 'minmax(12em, 1.5fr)', value: (a) => AMBIGUITY[a.kind] ?? a.kind },
          { key: 'compile_ids', label: 'compile ids', width: 'minmax(8em, 1fr)', value: (a) => a.compile_ids.join(' '),
            render: (a) => h('span', { class: 'mono' }, a.compile_ids.map((id, k) => [k ? ' ' : '', h('a', { href: compileHref(env.ctx, a.stream, id) }, id)])) },
          { key: 'resolution', label: 'resolution', width: 'minmax(20em, 4fr)', render: (a) => h('span', { title: a.resolution }, a.resolution) },
        ],
        rows: al.ambiguities,
      })] : null);
}

const CELL_H = 24;
const HEAD_H = 28;

/**
 * Aligned compiles × ranks: each cell is the rank's own compile id, coloured by status, linking
 * to it; a compile id other than most ranks' is outlined ("shifted"). Renders only the cells in
 * view (64 ranks × 1000s of compiles).
 */
function gridSection(env) {
  const { ctx, t, members, label } = env;
  const al = t.compile_alignment;
  if (!al) return null;
  const onlyDiff = ctx.params.get('grid') === 'diff';
  const differing = (r) => r.missing.length > 0 || r.status_differs;
  const rows = al.compiles.map((r, i) => ({ r, i })).filter(({ r }) => !onlyDiff || differing(r));
  const streams = members.map((m) => m.stream);
  const cells = rows.map(({ r }) => {
    const by = new Map(r.present.map((p) => [p.stream, p]));
    return { by, usual: r.compile_id_differs ? usualCompileId(r.present) : null };
  });
  const shifted = (c, p) => Boolean(c.usual && p && p.compile_id !== c.usual);
  ctx.expose('grid', {
    streams, compiles: rows.map(({ r }) => r.label), aligned: rows.map(({ i }) => i),
    ids: cells.map((c) => streams.map((s) => c.by.get(s)?.compile_id ?? null)),
    cells: cells.map((c) => streams.map((s) => c.by.get(s)?.status ?? 'missing')),
    shifted: cells.map((c) => streams.map((s) => shifted(c, c.by.get(s)))),
  });
  const toggle = h('label', { class: 'rk-toggle' },
    h('input', { type: 'checkbox', checked: onlyDiff, on: { change: (e) => { location.hash = ctx.href('ranks', { sec: 'grid', grid: e.target.checked ? 'diff' : null }); } } }),
    ' only compiles that differ between ranks (missing on some, or another status)');
  const statusDiffers = al.compiles.some((r) => r.status_differs);
  const legend = [
    h('div', { class: 'rk-legend' }, 'Each cell is the rank\'s own compile id (a link to it), coloured by its status:',
      Object.keys(STATUS).map((st) => statusBadge(st))),
    // Only the marks this grid uses.
    al.ids_shifted || al.diverges || statusDiffers ? h('div', { class: 'rk-legend' },
      al.ids_shifted ? [h('span', { class: 'rk-cell-sample shifted' }, '[1/0]'), ' another compile id than most ranks give this compile (its frame ids are shifted);'] : null,
      al.diverges ? [h('span', { class: 'rk-cell-sample missing' }, '—'), ' the rank never made this compile;'] : null,
      statusDiffers ? [h('span', { class: 'rk-col-mark' }, '≠'), ' its status differs between ranks.'] : null) : null];
  if (!rows.length) return h('div', null, h('div', { class: 'toolbar' }, toggle), empty('No compile differs between ranks.'));

  let longestId = 5;
  for (const c of cells) for (const p of c.by.values()) longestId = Math.max(longestId, p.compile_id.length);
  const longestLabel = rows.reduce((n, { r }) => Math.max(n, r.label.length), 0);
  const cellW = Math.round(Math.max(64, Math.min(120, 18 + 7.5 * longestId)));
  const labelW = Math.min(380, Math.max(180, 30 + 7 * longestLabel));
  const width = labelW + streams.length * cellW;
  const height = HEAD_H + rows.length * CELL_H;
  const canvas = h('div', { class: 'rk-grid-canvas', style: { width: `${width}px`, height: `${height}px` } });
  const scroller = h('div', { class: 'rk-grid', role: 'grid', 'aria-label': 'Each rank\'s compile id and status, per compile', dataset: { cols: streams.length, rows: rows.length } }, canvas);
  let drawn = '';
  function draw() {
    const left = scroller.scrollLeft;
    const top = scroller.scrollTop;
    const w = scroller.clientWidth || 1200;
    const hgt = scroller.clientHeight || 600;
    const c0 = Math.max(0, Math.floor(left / cellW) - 2);
    const c1 = Math.min(streams.length, Math.ceil((left + w - labelW) / cellW) + 2);
    const r0 = Math.max(0, Math.floor(top / CELL_H) - 2);
    const r1 = Math.min(rows.length, Math.ceil((top + hgt - HEAD_H) / CELL_H) + 2);
    const key = `${c0}:${c1}:${r0}:${r1}:${left}:${top}`;
    if (key === drawn) return;
    drawn = key;
    const nodes = [];
    for (let c = c0; c < c1; c++) {
      const s = streams[c];
      nodes.push(h('div', {
        class: 'rk-col-head', style: { left: `${labelW + c * cellW}px`, top: `${top}px`, width: `${cellW}px`, height: `${HEAD_H}px` }, title: label(s),
      }, h('a', { href: ctx.href('compiles', { s }) }, label(s))));
    }
    for (let i = r0; i < r1; i++) {
      const { r } = rows[i];
      const c = cells[i];
      const y = HEAD_H + i * CELL_H;
      for (let k = c0; k < c1; k++) {
        const s = streams[k];
        const p = c.by.get(s);
        const style = { left: `${labelW + k * cellW}px`, top: `${y}px`, width: `${cellW}px`, height: `${CELL_H}px` };
        const moved = shifted(c, p);
        nodes.push(p
          ? h('a', {
            class: ['rk-cell', STATUS[p.status]?.[1] ?? 'st-missing', moved && 'shifted'], style, role: 'gridcell',
            dataset: { status: p.status, stream: s, compileId: p.compile_id }, href: compileHref(ctx, s, p.compile_id),
            title: `${label(s)}: ${p.compile_id}, ${STATUS[p.status]?.[0] ?? p.status} — ${r.label}` +
              (moved ? `\nShifted: most ranks gave this compile the id ${c.usual}` : ''),
          }, p.compile_id)
          : h('span', { class: 'rk-cell missing', style, role: 'gridcell', dataset: { status: 'missing', stream: s }, title: `${label(s)} never made this compile: ${r.label}` }, '—'));
      }
      const code = r.key.code ? `${r.key.code.filename}:${r.key.code.line}` : null;
      nodes.push(h('div', {
        class: ['rk-row-head', r.status_differs && 'status-differs', r.missing.length && 'has-missing'],
        style: { left: `${left}px`, top: `${y}px`, width: `${labelW}px`, height: `${CELL_H}px` },
        title: [r.label, code, r.status_differs ? 'status differs between ranks' : null,
          r.missing.length ? `missing on ${env.ranks(r.missing)}` : null].filter(Boolean).join('\n'),
      }, h('span', { class: 'rk-row-label' }, r.label), r.status_differs ? h('span', { class: 'rk-col-mark' }, '≠') : null));
    }
    nodes.push(h('div', { class: 'rk-corner', style: { left: `${left}px`, top: `${top}px`, width: `${labelW}px`, height: `${HEAD_H}px` } }, 'compile \\ rank'));
    canvas.replaceChildren(...nodes);
  }
  scroller.addEventListener('scroll', () => requestAnimationFrame(draw), { passive: true });
  // The size is known only once attached: draw now with a guess, again on the next frame.
  draw();
  requestAnimationFrame(() => { drawn = ''; draw(); });
  scroller.style.maxHeight = `${Math.min(height + 2, 560)}px`;
  scroller.style.maxWidth = `${width + 2}px`;
  return h('div', null, h('div', { class: 'toolbar' }, toggle, h('span', { class: 'note' },
    `${plural(rows.length, 'compile')}${onlyDiff ? ` of ${count(al.compiles.length)}` : ''} × ${plural(streams.length, 'rank')}`)), legend, scroller);
}

// ---- collective schedules ---------------------------------------------------------------

function schedulesSection(env) {
  const { t, ranks } = env;
  const cs = t.collective_schedules;
  if (!cs) return null;
  const rows = cs.compiles;
  const differing = rows.filter((r) => r.differs);
  env.ctx.expose('schedules', differing.map((r) => ({
    compile: r.compile.label, compile_ids: r.compile.compile_ids,
    variants: r.variants.map((v) => ({ ranks: v.streams.map(env.label), lacks: v.lacks.map(shortOp), extra: v.extra.map(shortOp) })),
    parity_mismatches: r.parity_mismatches.map(env.label),
  })));
  const parity = cs.streams.filter((s) => s.parity_mismatches.length || s.unmatched_collectives.length || s.unmatched_waits.length);
  const unknown = rows.filter((r) => unlogged(r).length);
  env.ctx.expose('schedulesNotLogged', unknown.map((r) => ({ compile: r.compile.label, noData: r.no_data.map(env.label), cacheHit: (r.cache_hit ?? []).map(env.label) })));
  return h('div', null,
    note(differing.length
      ? `Every rank must issue the same collectives in the same order; on ${plural(differing.length, 'compile')} they do not. The most common schedule is the reference.`
      : unknown.length
        ? `Every rank that logged a schedule scheduled the same collectives (${plural(rows.length, 'compile')} with collectives), but on ${plural(unknown.length, 'compile')} some ranks that compiled it logged none: their collectives are unknown (below).`
        : `Every rank that compiled a graph scheduled the same collectives for it (${plural(rows.length, 'compile')} with collectives).`),
    differing.map((r) => h('div', { class: 'rk-schedule', dataset: { aligned: r.compile.aligned, compile: r.compile.label } },
      h('h3', null, compileRef(env.ctx, r.compile, env.label)),
      h('ul', { class: 'rk-variants' }, r.variants.map((v, i) => h('li', { class: ['rk-variant', i === r.reference && 'reference'] },
        h('div', { class: 'rk-variant-head' }, rankChips(v.streams, env, r.compile),
          i === r.reference ? h('span', { class: 'badge st-ok' }, 'reference')
            : [v.lacks.length ? h('span', { class: 'badge st-failed' }, `lacks ${v.lacks.map(shortOp).join(', ')}`) : null,
              v.extra.length ? h('span', { class: 'badge st-restart' }, `adds ${v.extra.map(shortOp).join(', ')}`) : null,
              !v.lacks.length && !v.extra.length ? h('span', { class: 'badge st-restart' }, 'same ops, other order') : null,
              v.first_difference != null ? h('span', { class: 'note' }, `first difference at op ${v.first_difference + 1}`) : null]),
        v.schedules.map((sched) => h('ol', { class: 'rk-ops' }, sched.map((op, k) =>
          h('li', { class: ['rk-op', i !== r.reference && v.first_difference != null && k >= v.first_difference && 'after-diff'], title: op ?? 'no name' }, shortOp(op)))))))),
      r.no_schedule.length ? note(`No collectives at all on ${ranks(r.no_schedule)} (counts as different).`) : null,
      r.missing.length ? note(`Not compiled on ${ranks(r.missing)} (missing, not different).`) : null,
      r.no_data.length ? note(`No schedule logged at all on ${ranks(r.no_data)} (unknown).`) : null,
      r.cache_hit?.length ? note(`Not logged on ${ranks(r.cache_hit)}: an FX graph cache hit, for which torch logs no schedule (unknown, not different).`) : null,
      r.parity_mismatches.length ? note(h('strong', null, 'Parity: '), `the generated code of ${ranks(r.parity_mismatches)} does not match ` +
        'its own schedule. If a rank\'s schedule differs but its code agrees with the others, suspect the schedule.') : null)),
    parity.length ? [h('h3', null, 'Schedule vs generated code, per rank'), dataTable({
      name: 'parity', maxRows: 10,
      columns: [
        { key: 'stream', label: 'rank', value: (s) => env.label(s.stream) },
        { key: 'mismatch', label: 'code ≠ schedule on', width: 'minmax(14em, 2fr)',
          value: (s) => s.parity_mismatches.map((p) => `${ownCompileText(env, s.stream, p.compile_id)}: ${p.ops.map((o) => `${shortOp(o.op)} ${o.schedule}→${o.code}`).join(', ')}`).join('; ') },
        { key: 'uc', label: 'unmatched collectives', align: 'right', value: (s) => s.unmatched_collectives.length },
        { key: 'uw', label: 'unmatched waits', align: 'right', value: (s) => s.unmatched_waits.length },
      ],
      rows: parity,
    })] : null,
    rows.length > differing.length ? [h('h3', null, 'All compiles with collectives'), dataTable({
      name: 'schedules', maxRows: 10,
      columns: [
        ...compileColumns(env, (r) => r.compile),
        { key: 'differs', label: 'agree?', width: '10em', value: agreement,
          render: (r) => h('span', { class: ['badge', { differs: 'st-failed', same: 'st-ok' }[agreement(r)] ?? 'st-empty'] }, agreement(r)) },
        { key: 'variants', label: 'ranks per variant', width: 'minmax(14em, 3fr)', value: (r) => r.variants.map((v) => ranks(v.streams)).join(' | ') },
        { key: 'ops', label: 'ops', align: 'right', width: '6em', value: (r) => r.variants[r.reference ?? 0]?.schedules.flat().length ?? 0 },
        { key: 'missing', label: 'missing or not logged on', width: 'minmax(16em, 3fr)',
          value: (r) => [r.missing.length ? `${ranks(r.missing)} (not compiled)` : '',
            ...unlogged(r).map(([list, why]) => `${ranks(list)} (${why})`)].filter(Boolean).join('; ') },
      ],
      rows,
    })] : null);
}

/** The ranks that compiled a row's graph but logged no schedule for it, each list with why. */
function unlogged(r) {
  return [[r.no_data, 'not logged'], [r.cache_hit ?? [], 'not logged: FX cache hit']].filter(([list]) => list.length);
}

/** A row's verdict: "differs", "same" on every rank that compiled it, or "same where logged". */
function agreement(r) {
  if (r.differs) return 'differs';
  return unlogged(r).length || r.missing.length ? 'same where logged' : 'same';
}

/** A stream's own compile id with the label of its aligned compile: "[2/0] sync_grads (x.py:28)". */
function ownCompileText(env, stream, id) {
  if (id == null) return '(outside any compile)';
  const i = env.byId.get(`${stream}\u0000${id}`);
  return i == null ? id : `${id} ${env.t.compile_alignment.compiles[i].label}`;
}

/**
 * Two table columns for an aligned compile (`get(row)` → AlignedCompileRef or null): its label
 * (then `suffix(row)`), and each rank's own compile ids, each linked to a rank's compile.
 */
function compileColumns(env, get, { suffix = () => '', title = 'compile' } = {}) {
  const text = (r) => `${get(r)?.label ?? '(outside any compile)'}${suffix(r)}`;
  return [{
    key: 'compile', label: title, width: 'minmax(15em, 2fr)', value: text,
    render: (r) => h('span', { title: text(r) }, text(r)),
  }, {
    key: 'compile_ids', label: 'compile ids', width: 'minmax(13.5em, 1.2fr)',
    value: (r) => compileIdsText(get(r)?.compile_ids ?? [], env.label),
    render: (r) => (get(r) ? compileRef(env.ctx, get(r), env.label, { onlyIds: true }) : ''),
  }];
}

// ---- tensor metadata --------------------------------------------------------------------

function outputsText(side) {
  if (!side) return 'absent';
  if (side.outputs == null) return `${side.type}, no outputs key`;
  if (!side.outputs.length) return `${side.type}, []`;
  return `${side.type}, ${side.outputs.map((o) => `${o.dtype ?? '?'}[${o.shape.join(',')}]${o.stride.length ? ` stride [${o.stride.join(',')}]` : ''}`).join(' + ')}`;
}

function tensorMetaSection(env) {
  const tm = env.t.tensor_meta;
  if (!tm) return null;
  const { ranks } = env;
  env.ctx.expose('tensorMetaGroups', tm.groups.map((g) => g.streams.map(env.label)));
  const differing = tm.graphs.filter((g) => g.differs);
  return h('div', null,
    note('Ranks in one group scheduled the same ops with the same output shapes, strides and dtypes on every graph (runtimes left out).'),
    h('ul', { class: 'rk-groups' }, tm.groups.map((g, i) => h('li', { class: 'rk-group', dataset: { group: i } },
      h('span', { class: 'rk-group-name' }, `group ${i + 1}`), rankChips(g.streams, env),
      h('span', { class: 'rk-group-ids' }, plural(g.graphs.length, 'graph'),
        g.differs_only_by_missing_from.length
          ? ` — agrees with ${g.differs_only_by_missing_from.map((j) => `group ${j + 1}`).join(', ')} wherever both have a graph (apart only by missing artifacts)`
          : '')))),
    tm.no_data.length ? note(`No tensor metadata logged on ${ranks(tm.no_data)}.`) : null,
    differing.map((g) => h('div', { class: 'rk-tm-graph', dataset: { aligned: g.compile?.aligned ?? '', compile: g.compile?.label ?? '' } },
      h('h3', null, compileRef(env.ctx, g.compile, env.label), g.occurrence ? ` #${g.occurrence}` : '', ': ',
        g.groups.map((gg, i) => [i ? ' vs ' : '', rankChips(gg.streams, env, g.compile)])),
      g.missing.length ? note(`Missing on ${ranks(g.missing)}${g.compiled_without_artifact.length ? ` (${ranks(g.compiled_without_artifact)} compiled it but logged no metadata)` : ''}.`) : null,
      g.differences.map((d) => dataTable({
        name: `tensor-meta-${g.compile?.aligned ?? 'none'}-${g.occurrence}-${d.group}`, maxRows: 8, filter: false,
        columns: [
          { key: 'name', label: 'op', width: 'minmax(12em, 2fr)', render: (o) => h('span', { title: o.name }, shortOp(o.name)) },
          { key: 'reference', label: `${ranks(g.groups[0].streams)}`, width: 'minmax(14em, 2fr)', value: (o) => outputsText(o.reference) },
          { key: 'other', label: `${ranks(g.groups[d.group].streams)}`, width: 'minmax(14em, 2fr)', value: (o) => outputsText(o.other) },
        ],
        rows: d.ops,
      })))));
}

// ---- runtime estimations ----------------------------------------------------------------

function runtimeSection(env) {
  const rt = env.t.runtime_estimations;
  if (!rt) return null;
  const { ranks } = env;
  env.ctx.expose('runtime', rt.graphs.map((g) => ({
    compile: g.compile?.label ?? null, compile_ids: compileIdsText(g.compile?.compile_ids ?? [], env.label), occurrence: g.occurrence, fastest: g.fastest.map(env.label), slowest: g.slowest.map(env.label),
    delta_ms: Number((g.delta_ns / 1e6).toFixed(3)), missing: g.missing.map(env.label),
  })));
  return h('div', null,
    note('Inductor\'s estimates (not measurements) of each graph\'s total runtime, per rank. Every rank waits for the slowest at each collective.'),
    dataTable({
      name: 'runtime', maxRows: 12,
      columns: [
        ...compileColumns(env, (g) => g.compile, { title: 'graph', suffix: (g) => (g.occurrence ? ` #${g.occurrence}` : '') }),
        { key: 'fastest', label: 'fastest', width: 'minmax(9em, 1.4fr)', value: (g) => ranks(g.fastest) },
        { key: 'fastest_ns', label: 'fastest est.', align: 'right', width: '9em', render: (g) => ms(g.fastest_ns) },
        { key: 'slowest', label: 'slowest', width: 'minmax(9em, 1.4fr)', value: (g) => ranks(g.slowest),
          render: (g) => h('span', { class: g.differs ? 'rk-slow' : null }, ranks(g.slowest)) },
        { key: 'slowest_ns', label: 'slowest est.', align: 'right', width: '9em', render: (g) => ms(g.slowest_ns) },
        { key: 'delta_ns', label: 'gap', align: 'right', width: '8em', render: (g) => (g.differs ? h('strong', null, ms(g.delta_ns)) : '—') },
        { key: 'delta_percent', label: 'gap %', align: 'right', width: '6em', render: (g) => (g.differs && g.delta_percent != null ? `${g.delta_percent.toFixed(1)}%` : '—') },
        { key: 'missing', label: 'no estimate on', width: 'minmax(8em, 1fr)', value: (g) => (g.missing.length ? ranks(g.missing) : '') },
      ],
      rows: rt.graphs, sort: '-delta_ns',
    }));
}

// ---- compile-time imbalance -------------------------------------------------------------

/** Height of a rank's compile-time bar (px). */
const BAR_H = 24;

function compileTimeSection(env) {
  const imb = env.t.compile_time_imbalance;
  if (!imb) return null;
  const { label, ranks } = env;
  const slowest = new Set(imb.slowest);
  env.ctx.expose('compileTime', {
    slowest: imb.slowest.map(label), fastest: imb.fastest.map(label), max_over_min: imb.max_over_min,
    bars: imb.streams.map((s) => ({ rank: label(s.stream), total_us: s.total_us, timed: s.compiles })),
  });
  // One bar per rank, drawn only where in view: thousands of ranks scroll as lightly as four.
  const bars = virtualList({
    items: imb.streams, rowHeight: BAR_H, maxHeight: 420, props: { class: 'rk-bars', role: 'list', 'aria-label': 'Compile time per rank' },
    render: (s) => h('div', {
      class: ['rk-bar-row', slowest.has(s.stream) && 'slowest'], role: 'listitem', dataset: { stream: s.stream },
    },
    h('span', { class: 'rk-bar-label' }, label(s.stream)),
    h('span', { class: 'rk-bar-track' }, h('span', { class: 'rk-bar', style: { width: `${s.total_us == null || !imb.max_us ? 0 : (100 * s.total_us / imb.max_us).toFixed(2)}%` } })),
    h('span', { class: 'rk-bar-value' }, s.total_us == null ? 'no time' : seconds(s.total_us / 1e6),
      s.over_fastest != null && s.over_fastest !== 1 ? h('span', { class: 'note' }, ` ${s.over_fastest.toFixed(1)}×`) : null,
      ` · ${plural(s.compiles, 'timed compile')}`)),
  });
  return h('div', null,
    note(`Every rank waits at the next collective until the slowest has compiled. Slowest: ${ranks(imb.slowest)} ` +
      `(${seconds(imb.max_us / 1e6)}), fastest: ${ranks(imb.fastest)} (${seconds(imb.min_us / 1e6)})` +
      (imb.max_over_min != null ? `, ${imb.max_over_min.toFixed(1)}×; median ${seconds(imb.median_us / 1e6)}.` : '.')),
    bars,
    h('h3', null, 'Phases'),
    dataTable({
      name: 'phases', maxRows: 8,
      columns: [
        { key: 'name', label: 'phase', width: 'minmax(16em, 2fr)' },
        { key: 'source', label: 'from', width: '6em' },
        { key: 'slowest', label: 'slowest', width: 'minmax(8em, 1fr)', value: (p) => ranks(p.slowest) },
        { key: 'max_us', label: 'max', align: 'right', width: '7em', render: (p) => seconds(p.max_us / 1e6) },
        { key: 'min_us', label: 'min', align: 'right', width: '7em', render: (p) => seconds(p.min_us / 1e6) },
        { key: 'delta_us', label: 'gap', align: 'right', width: '7em', render: (p) => (p.delta_us ? seconds(p.delta_us / 1e6) : '—') },
        { key: 'missing', label: 'missing on', width: 'minmax(8em, 1fr)', value: (p) => (p.missing.length ? ranks(p.missing) : '') },
      ],
      rows: imb.phases,
    }),
    h('h3', null, 'Per compile'),
    dataTable({
      name: 'compile-time-compiles', maxRows: 10, sort: '-delta_us',
      columns: [
        ...compileColumns(env, (r) => r.compile),
        { key: 'slowest', label: 'slowest', width: 'minmax(8em, 1fr)', value: (r) => ranks(r.slowest) },
        { key: 'max_us', label: 'max', align: 'right', width: '7em', render: (r) => seconds(r.max_us / 1e6) },
        { key: 'fastest', label: 'fastest', width: 'minmax(8em, 1fr)', value: (r) => ranks(r.fastest) },
        { key: 'min_us', label: 'min', align: 'right', width: '7em', render: (r) => seconds(r.min_us / 1e6) },
        { key: 'delta_us', label: 'gap', align: 'right', width: '7em', render: (r) => (r.delta_us ? seconds(r.delta_us / 1e6) : '—') },
        { key: 'max_over_min', label: '×', align: 'right', width: '5em', render: (r) => (r.max_over_min == null ? '–' : r.max_over_min.toFixed(1)) },
        { key: 'missing', label: 'missing on', width: 'minmax(8em, 1fr)', value: (r) => (r.missing.length ? ranks(r.missing) : '') },
      ],
      rows: imb.compiles,
    }));
}

// ---- execution order --------------------------------------------------------------------

function executionOrderSection(env) {
  const eo = env.t.execution_order;
  if (!eo) return null;
  const comparison = (cmp, title) => {
    if (!cmp) return null;
    return h('div', null, h('h3', null, title),
      cmp.groups.map((g, i) => {
        const diffAt = new Map((g.difference?.recordings ?? []).map((d) => [d.recording, new Set(d.positions)]));
        const members = new Set(g.streams);
        return h('div', { class: 'rk-order' },
          h('div', { class: 'rk-variant-head' }, rankChips(g.streams, env),
            i === cmp.reference ? h('span', { class: 'badge st-ok' }, 'reference')
              : h('span', { class: 'badge st-failed' }, g.difference?.same_runs ? 'same graphs, other order' : 'different graphs'),
            h('span', { class: 'note' }, plural(g.runs, 'run'))),
          g.recordings.map((rec, ri) => h('ol', { class: 'rk-ops' }, rec.map((item, k) =>
            h('li', { class: ['rk-op', diffAt.get(ri)?.has(k) && 'after-diff'], title: runTitle(item, members) }, item ?? '(unknown)')))));
      }));
  };
  // Recorded runs name the aligned compile by its label; say which compile id that is on the group's ranks.
  const byLabel = new Map((env.t.compile_alignment?.compiles ?? []).map((c) => [c.label, c]));
  const runTitle = (item, streams) => {
    const c = item == null ? null : byLabel.get(item);
    if (!c) return item ?? 'torch logged no compile id for this run';
    const ids = c.present.filter((p) => streams.has(p.stream));
    return `${item}: ${compileIdsText(ids, env.label)}`;
  };
  return h('div', null,
    note(eo.diverges ? 'The ranks ran their compiled graphs in different orders: their collectives pair up wrongly.' : 'Every rank with a recorded order ran its graphs in the same order.'),
    comparison(eo.recorded, 'Recorded orders (graph_execution)'),
    comparison(eo.legacy, 'Legacy orders (inductor_graph_execution)'),
    eo.legacy_note ? note(eo.legacy_note) : null);
}

// ---- cache outcomes --------------------------------------------------------------------

function cacheSection(env) {
  const cd = env.t.cache_divergence;
  if (!cd) return null;
  const { ranks } = env;
  const text = { none: 'Every rank got the same cache outcomes.', missing_compiles: 'Outcomes agree wherever two ranks looked up the cache for the same compile; the groups differ only by compiles some ranks lack.', outcomes: 'On some compiles ranks missed the cache where others hit: they spent longer compiling while the others waited.' };
  const rows = cd.compiles.filter((r) => r.differs || r.missing.length || r.no_lookups.length);
  return h('div', null,
    note(text[cd.divergence] ?? cd.divergence),
    dataTable({
      name: 'cache-streams', maxRows: 10,
      columns: [
        { key: 'stream', label: 'rank', value: (s) => env.label(s.stream) },
        { key: 'group', label: 'group', align: 'right', value: (s) => s.group + 1 },
        { key: 'compiles', label: 'compiles', align: 'right' },
        { key: 'hit', label: 'hits', align: 'right' },
        { key: 'miss', label: 'misses', align: 'right' },
        { key: 'bypass', label: 'bypasses', align: 'right' },
        { key: 'disabled', label: 'disabled', align: 'right' },
      ],
      rows: cd.streams,
    }),
    rows.length ? [h('h3', null, 'Compiles where ranks differ or lack a lookup'), dataTable({
      name: 'cache-compiles', maxRows: 10,
      columns: [
        ...compileColumns(env, (r) => r.compile),
        { key: 'groups', label: 'outcomes', width: 'minmax(18em, 3fr)',
          value: (r) => r.groups.map((g) => `${ranks(g.streams)}: ${g.outcomes.map((o) => `${o.cache.replace(/_cache$/, '')} ${o.outcome}`).join(', ')}`).join(' | ') },
        { key: 'no_lookups', label: 'no lookup', width: 'minmax(8em, 1fr)', value: (r) => (r.no_lookups.length ? ranks(r.no_lookups) : '') },
        { key: 'missing', label: 'missing on', width: 'minmax(8em, 1fr)', value: (r) => (r.missing.length ? ranks(r.missing) : '') },
      ],
      rows,
    })] : null);
}

// ---- rank differ -------------------------------------------------------------------------

function rankDifferSection(env) {
  const rd = env.t.rank_differ;
  if (!rd) return null;
  const { ctx, ranks } = env;
  // Rows name only the ranks that differ from the majority; `full` lists every rank of one row.
  const full = rankDifferRows(rd, env.t.compile_alignment);
  // A real difference links to its diff; a payload the same up to ids to the payloads side by side.
  const diffLink = (row) => { const r = full(row); return r.groups.length >= 2
    ? h('a', {
      class: 'rk-diff-link',
      href: ctx.href('rank-diff', {
        c: r.compile?.aligned ?? '', name: r.name, g: r.graph ?? null, occ: r.occurrence || null, a: r.groups[0].streams[0], b: r.groups[1].streams[0],
      }),
      on: { click: (e) => e.stopPropagation() },
    }, r.status === 'differs' ? 'diff' : 'ids')
    : null; };
  ctx.expose('rankDiffer', rd.artifacts.filter((r) => r.groups.length >= 2).slice(0, 200).map(full).map((r) => ({
    compile: r.compile?.label ?? null, compile_ids: r.compile?.compile_ids ?? [], name: r.name, graph: r.graph ?? null, status: r.status,
    groups: r.groups.map((g) => g.streams.map(env.label)),
  })));
  const onCacheHit = rd.artifacts.filter((r) => r.missing_on_cache_hit?.length).length;
  return h('div', null,
    note(`${plural(rd.keys, 'artifact')} (per compile, name, graph and occurrence): ${count(rd.differs)} ${rd.differs === 1 ? 'differs' : 'differ'}, ` +
      `${count(rd.same_up_to_ids)} same up to ids (only object ids, addresses, compile ids, temporary paths, pids or times differ: not differences), ` +
      `${count(rd.identical)} identical on every rank, ${count(rd.same_where_present)} the same where present; ` +
      `${count(rd.with_missing)} missing on some rank${onCacheHit ? ` (${count(onCacheHit)} not logged: FX cache hit)` : ''}. `,
    h('a', { href: ctx.href('rank-diff') }, 'Every difference with its diff')),
    dataTable({
      name: 'rank-differ', maxRows: 14, sort: null,
      columns: [
        ...compileColumns(env, (r) => full(r).compile),
        { key: 'name', label: 'artifact', width: 'minmax(14em, 2fr)', value: artifactKeyText,
          render: (r) => h('span', { title: `${r.kind}: ${r.name}` }, artifactKeyText(r)) },
        { key: 'status', label: 'status', width: '10em', value: (r) => r.status.replace(/_/g, ' '), render: (r) => differBadge(r.status) },
        { key: 'groups', label: 'ranks by payload', width: 'minmax(12em, 2fr)', value: (r) => full(r).groups.map((g) => ranks(g.streams)).join(' | ') },
        { key: 'missing', label: 'missing on', width: 'minmax(8em, 1fr)', value: (r) => missingText(full(r), ranks) },
        { key: 'diff', label: '', width: '4em', value: (r) => (r.groups.length < 2 ? '' : r.status === 'differs' ? 'diff' : 'ids'), render: diffLink },
      ],
      rows: rd.artifacts,
      onRowClick: (r) => { if (r.groups.length >= 2) location.hash = diffLink(r).getAttribute('href'); },
    }));
}

/** Who lacks a row (every stream named), those on an FX cache hit said so. */
function missingText(r, ranks) {
  const hit = r.missing_on_cache_hit ?? [];
  const other = r.missing.filter((s) => !hit.includes(s));
  return [hit.length ? `${ranks(hit)} (not logged: FX cache hit)` : '', other.length ? ranks(other) : ''].filter(Boolean).join('; ');
}
