// pages/ranks.js: the multi-rank view (`#/ranks`,
// optional `sec=<section id>` to scroll to a section, `grid=diff` to show only the compile ids
// that differ between ranks). Reads the cross-rank tables (docs/cross_rank/*.md): what diverges
// first, then the rank groups, a ranks × compile ids status grid, collective schedules, tensor
// metadata, runtime estimates, compile-time imbalance, execution order, cache outcomes, and which
// ranks logged which artifact payloads.

import { h, section, note, empty, dataTable, statusBadge, count, seconds, plural, download, STATUS } from '../dom.js';
import { rankLabeller, ranksText, shortOp, ms } from '../ranks-common.js';

const TABLES = ['compile_ids', 'collective_schedules', 'cache_divergence', 'tensor_meta', 'execution_order',
  'runtime_estimations', 'compile_time_imbalance', 'rank_differ'];

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
  const env = { ctx, t, label, ranks, members: x.members };

  const warnings = divergences(env);
  ctx.expose('members', x.members.map((m) => m.label));
  ctx.expose('warnings', warnings.map((w) => w.text));

  const sections = [
    ['groups', 'Rank groups', groupsSection],
    ['grid', 'Compile ids per rank', gridSection],
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
          w.sec ? h('a', { href: ctx.href('ranks', { sec: w.sec }) }, w.text) : w.text))))
      : h('section', { class: 'card ok-box' }, h('h2', null, 'The ranks agree'),
        note('Same compile ids, collective schedules, cache outcomes, tensor metadata and execution order on every rank.')),
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

/** Every divergence the tables report, worst first: {severity, text, sec}. */
function divergences({ t, ranks, label }) {
  const out = [];
  const add = (severity, text, sec) => out.push({ severity, text, sec });
  const groupsText = (gs) => gs.map((g) => ranks(g.streams)).join(' vs ');
  const ids = t.compile_ids;
  if (ids?.diverges) add('warn', `Ranks compiled different compile ids: ${groupsText(ids.groups)}`, 'grid');
  const statusRows = (ids?.compile_ids ?? []).filter((r) => r.status_differs);
  if (statusRows.length) {
    const r = statusRows[0];
    const byStatus = groupBy(r.present, (p) => p.status);
    add('warn', `Compile status differs on ${plural(statusRows.length, 'compile id')}` +
      `, e.g. ${r.compile_id}: ${[...byStatus].map(([st, ps]) => `${STATUS[st]?.[0] ?? st} on ${ranks(ps.map((p) => p.stream))}`).join('; ')}`, 'grid');
  }
  for (const row of t.collective_schedules?.compile_ids ?? []) {
    if (!row.differs) continue;
    const lacking = row.variants.filter((v) => v.lacks.length || v.extra.length)
      .map((v) => `${ranks(v.streams)} ${[v.lacks.length ? `lacks ${v.lacks.map(shortOp).join(', ')}` : null,
        v.extra.length ? `adds ${v.extra.map(shortOp).join(', ')}` : null].filter(Boolean).join(' and ')}`);
    add('error', `Collective schedules differ on ${row.compile_id}: ${groupsText(row.variants)}` +
      (row.no_schedule.length ? ` vs no collectives on ${ranks(row.no_schedule)}` : '') +
      (lacking.length ? ` (${lacking.join('; ')})` : ''), 'schedules');
  }
  const order = t.execution_order;
  if (order?.diverges) add('error', `Ranks ran their graphs in different orders: ${groupsText(order.recorded.groups)}`, 'execution-order');
  const cache = t.cache_divergence;
  if (cache?.divergence === 'outcomes') {
    add('warn', `Cache outcomes differ on ${plural(cache.differing_compile_ids, 'compile id')}: some ranks missed the cache where others hit`, 'cache');
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
    const worst = rt.graphs.filter((g) => g.differs).sort((a, b) => b.delta_ns - a.delta_ns)[0];
    add('warn', `Estimated runtimes differ on ${plural(rt.differing_compile_ids.length, 'graph')}; largest gap ${worst.compile_id}: ` +
      `${ranks(worst.slowest)} ${ms(worst.delta_ns)} slower than ${ranks(worst.fastest)}`, 'runtime');
  }
  const imb = t.compile_time_imbalance;
  if (imb?.max_over_min >= 2) {
    add('warn', `Compile time imbalance: ${ranks(imb.slowest)} compiled for ${seconds(imb.max_us / 1e6)}, ` +
      `${imb.max_over_min.toFixed(1)}x the fastest (${ranks(imb.fastest)}, ${seconds(imb.min_us / 1e6)})`, 'compile-time');
  }
  if (cache?.divergence === 'missing_compiles') {
    add('info', `Cache outcomes agree on every shared compile id; ${plural(cache.compile_ids_with_missing, 'compile id')} missing on some ranks`, 'cache');
  }
  const rd = t.rank_differ;
  if (rd?.differs) add('info', `${plural(rd.differs, 'artifact')} logged with different payloads on different ranks`, 'rank-differ');
  const sev = { error: 0, warn: 1, info: 2 };
  out.sort((a, b) => sev[a.severity] - sev[b.severity]);
  void label;
  return out;
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

/** "rank 0, rank 2" as rank chips; long lists collapse to the compact text with the full list in a tooltip. */
function rankChips(streams, { ranks, label }) {
  if (streams.length > 6) return h('span', { class: 'rk-ranks', title: streams.map(label).join(', ') }, ranks(streams));
  return h('span', { class: 'rk-ranks' }, streams.map((s) => h('span', { class: 'rk-chip' }, label(s))));
}

// ---- rank groups and the status grid ------------------------------------------------------

function groupsSection(env) {
  const ids = env.t.compile_ids;
  if (!ids) return null;
  return h('div', null,
    note(ids.diverges
      ? 'Ranks in one group compiled exactly the same compile ids. Different groups mean some ranks compiled graphs the others did not: the usual cause of a collective hang.'
      : 'Every rank compiled the same compile ids.'),
    h('ul', { class: 'rk-groups' }, ids.groups.map((g, i) => h('li', { class: 'rk-group', dataset: { group: i } },
      h('span', { class: 'rk-group-name' }, `group ${i + 1}`),
      rankChips(g.streams, env),
      h('span', { class: 'rk-group-ids', title: g.compile_ids.join(' ') },
        plural(g.compile_ids.length, 'compile id'), g.compile_ids.length ? `: ${abbreviate(g.compile_ids, 8)}` : '')))));
}

function abbreviate(list, n) {
  return list.length <= n ? list.join(' ') : `${list.slice(0, n).join(' ')} … ${list[list.length - 1]}`;
}

const CELL_W = 58;
const CELL_H = 24;
const HEAD_H = 28;

/** Ranks × compile ids, coloured by status; renders only the cells in view (64 ranks × 1000s of ids). */
function gridSection(env) {
  const { ctx, t, members, label } = env;
  const ids = t.compile_ids;
  if (!ids) return null;
  const onlyDiff = ctx.params.get('grid') === 'diff';
  const differing = (r) => r.missing.length > 0 || r.status_differs;
  const cols = onlyDiff ? ids.compile_ids.filter(differing) : ids.compile_ids;
  const streams = members.map((m) => m.stream);
  const status = cols.map((r) => new Map(r.present.map((p) => [p.stream, p.status])));
  ctx.expose('grid', {
    streams, compile_ids: cols.map((r) => r.compile_id),
    cells: streams.map((s) => status.map((m) => m.get(s) ?? 'missing')),
  });
  const toggle = h('label', { class: 'rk-toggle' },
    h('input', { type: 'checkbox', checked: onlyDiff, on: { change: (e) => { location.hash = ctx.href('ranks', { sec: 'grid', grid: e.target.checked ? 'diff' : null }); } } }),
    ' only compile ids that differ between ranks');
  const legend = h('div', { class: 'rk-legend' },
    Object.keys(STATUS).map((st) => statusBadge(st)),
    h('span', { class: 'rk-cell-sample missing' }, 'missing'), ' = the rank never compiled it;',
    h('span', { class: 'rk-col-mark' }, '≠'), ' marks a compile id whose status differs between ranks.');
  if (!cols.length) return h('div', null, h('div', { class: 'toolbar' }, toggle), empty('No compile id differs between ranks.'));

  const labelW = Math.min(160, 24 + 8 * Math.max(...members.map((m) => m.label.length)));
  const width = labelW + cols.length * CELL_W;
  const height = HEAD_H + streams.length * CELL_H;
  const canvas = h('div', { class: 'rk-grid-canvas', style: { width: `${width}px`, height: `${height}px` } });
  const scroller = h('div', { class: 'rk-grid', role: 'grid', 'aria-label': 'Compile status per rank and compile id', dataset: { cols: cols.length, rows: streams.length } }, canvas);
  let drawn = '';
  function draw() {
    const left = scroller.scrollLeft;
    const top = scroller.scrollTop;
    const w = scroller.clientWidth || 1200;
    const hgt = scroller.clientHeight || 600;
    const c0 = Math.max(0, Math.floor((left) / CELL_W) - 2);
    const c1 = Math.min(cols.length, Math.ceil((left + w - labelW) / CELL_W) + 2);
    const r0 = Math.max(0, Math.floor(top / CELL_H) - 2);
    const r1 = Math.min(streams.length, Math.ceil((top + hgt - HEAD_H) / CELL_H) + 2);
    const key = `${c0}:${c1}:${r0}:${r1}:${left}:${top}`;
    if (key === drawn) return;
    drawn = key;
    const nodes = [];
    for (let c = c0; c < c1; c++) {
      const r = cols[c];
      nodes.push(h('div', {
        class: ['rk-col-head', r.status_differs && 'status-differs', r.missing.length && 'has-missing'],
        style: { left: `${labelW + c * CELL_W}px`, top: `${top}px`, width: `${CELL_W}px`, height: `${HEAD_H}px` },
        title: `${r.compile_id}${r.status_differs ? ': status differs between ranks' : ''}${r.missing.length ? `; missing on ${env.ranks(r.missing)}` : ''}`,
      }, r.compile_id, r.status_differs ? h('span', { class: 'rk-col-mark' }, '≠') : null));
      for (let i = r0; i < r1; i++) {
        const s = streams[i];
        const st = status[c].get(s);
        const y = HEAD_H + i * CELL_H;
        const style = { left: `${labelW + c * CELL_W}px`, top: `${y}px`, width: `${CELL_W}px`, height: `${CELL_H}px` };
        nodes.push(st
          ? h('a', { class: ['rk-cell', STATUS[st]?.[1] ?? 'st-missing'], style, role: 'gridcell', dataset: { status: st },
            href: ctx.href('compile', { s, id: r.compile_id }), title: `${label(s)} ${r.compile_id}: ${STATUS[st]?.[0] ?? st}` }, STATUS[st]?.[0].split(',')[0] ?? st)
          : h('span', { class: 'rk-cell missing', style, role: 'gridcell', dataset: { status: 'missing' }, title: `${label(s)} never compiled ${r.compile_id}` }, '—'));
      }
    }
    for (let i = r0; i < r1; i++) {
      nodes.push(h('div', { class: 'rk-row-head', style: { left: `${left}px`, top: `${HEAD_H + i * CELL_H}px`, width: `${labelW}px`, height: `${CELL_H}px` } },
        h('a', { href: ctx.href('compiles', { s: streams[i] }) }, label(streams[i]))));
    }
    nodes.push(h('div', { class: 'rk-corner', style: { left: `${left}px`, top: `${top}px`, width: `${labelW}px`, height: `${HEAD_H}px` } }, 'rank \\ id'));
    canvas.replaceChildren(...nodes);
  }
  scroller.addEventListener('scroll', () => requestAnimationFrame(draw), { passive: true });
  // The size is known only once attached: draw now with a guess, again on the next frame.
  draw();
  requestAnimationFrame(() => { drawn = ''; draw(); });
  scroller.style.maxHeight = `${Math.min(height + 2, 560)}px`;
  return h('div', null, h('div', { class: 'toolbar' }, toggle, h('span', { class: 'note' },
    `${plural(cols.length, 'compile id')}${onlyDiff ? ` of ${count(ids.compile_ids.length)}` : ''} × ${plural(streams.length, 'rank')}`)), legend, scroller);
}

// ---- collective schedules ---------------------------------------------------------------

function schedulesSection(env) {
  const { t, ranks } = env;
  const cs = t.collective_schedules;
  if (!cs) return null;
  const rows = cs.compile_ids;
  const differing = rows.filter((r) => r.differs);
  env.ctx.expose('schedules', differing.map((r) => ({
    compile_id: r.compile_id,
    variants: r.variants.map((v) => ({ ranks: v.streams.map(env.label), lacks: v.lacks.map(shortOp), extra: v.extra.map(shortOp) })),
    parity_mismatches: r.parity_mismatches.map(env.label),
  })));
  const parity = cs.streams.filter((s) => s.parity_mismatches.length || s.unmatched_collectives.length || s.unmatched_waits.length);
  return h('div', null,
    note(differing.length
      ? `Every rank must issue the same collectives in the same order; on ${plural(differing.length, 'compile id')} they do not. The most common schedule is the reference.`
      : `Every rank that compiled a graph scheduled the same collectives for it (${plural(rows.length, 'compile id')} with collectives).`),
    differing.map((r) => h('div', { class: 'rk-schedule', dataset: { compileId: r.compile_id } },
      h('h3', null, r.compile_id),
      h('ul', { class: 'rk-variants' }, r.variants.map((v, i) => h('li', { class: ['rk-variant', i === r.reference && 'reference'] },
        h('div', { class: 'rk-variant-head' }, rankChips(v.streams, env),
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
      r.parity_mismatches.length ? note(h('strong', null, 'Parity: '), `the generated code of ${ranks(r.parity_mismatches)} does not match ` +
        'its own schedule. If a rank\'s schedule differs but its code agrees with the others, suspect the schedule.') : null)),
    parity.length ? [h('h3', null, 'Schedule vs generated code, per rank'), dataTable({
      name: 'parity', maxRows: 10,
      columns: [
        { key: 'stream', label: 'rank', value: (s) => env.label(s.stream) },
        { key: 'mismatch', label: 'code ≠ schedule on', width: 'minmax(14em, 2fr)',
          value: (s) => s.parity_mismatches.map((p) => `${p.compile_id ?? '(none)'}: ${p.ops.map((o) => `${shortOp(o.op)} ${o.schedule}→${o.code}`).join(', ')}`).join('; ') },
        { key: 'uc', label: 'unmatched collectives', align: 'right', value: (s) => s.unmatched_collectives.length },
        { key: 'uw', label: 'unmatched waits', align: 'right', value: (s) => s.unmatched_waits.length },
      ],
      rows: parity,
    })] : null,
    rows.length > differing.length ? [h('h3', null, 'All compile ids with collectives'), dataTable({
      name: 'schedules', maxRows: 10,
      columns: [
        { key: 'compile_id', label: 'compile id', width: '8em' },
        { key: 'differs', label: 'agree?', width: '8em', value: (r) => (r.differs ? 'differs' : 'same'),
          render: (r) => h('span', { class: ['badge', r.differs ? 'st-failed' : 'st-ok'] }, r.differs ? 'differs' : 'same') },
        { key: 'variants', label: 'ranks per variant', width: 'minmax(14em, 3fr)', value: (r) => r.variants.map((v) => ranks(v.streams)).join(' | ') },
        { key: 'ops', label: 'ops', align: 'right', width: '6em', value: (r) => r.variants[r.reference ?? 0]?.schedules.flat().length ?? 0 },
        { key: 'missing', label: 'missing on', width: 'minmax(8em, 1fr)', value: (r) => (r.missing.length ? ranks(r.missing) : '') },
      ],
      rows,
    })] : null);
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
    differing.map((g) => h('div', { class: 'rk-tm-graph', dataset: { compileId: g.compile_id ?? '' } },
      h('h3', null, `${g.compile_id ?? '(no compile id)'}${g.occurrence ? ` #${g.occurrence}` : ''}: `,
        g.groups.map((gg, i) => [i ? ' vs ' : '', rankChips(gg.streams, env)])),
      g.missing.length ? note(`Missing on ${ranks(g.missing)}${g.compiled_without_artifact.length ? ` (${ranks(g.compiled_without_artifact)} compiled it but logged no metadata)` : ''}.`) : null,
      g.differences.map((d) => dataTable({
        name: `tensor-meta-${g.compile_id}-${d.group}`, maxRows: 8, filter: false,
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
    compile_id: g.compile_id, occurrence: g.occurrence, fastest: g.fastest.map(env.label), slowest: g.slowest.map(env.label),
    delta_ms: Number((g.delta_ns / 1e6).toFixed(3)), missing: g.missing.map(env.label),
  })));
  return h('div', null,
    note('Inductor\'s estimates (not measurements) of each graph\'s total runtime, per rank. Every rank waits for the slowest at each collective.'),
    dataTable({
      name: 'runtime', maxRows: 12,
      columns: [
        { key: 'compile_id', label: 'graph', width: '8em', value: (g) => `${g.compile_id ?? '(none)'}${g.occurrence ? ` #${g.occurrence}` : ''}` },
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

function compileTimeSection(env) {
  const imb = env.t.compile_time_imbalance;
  if (!imb) return null;
  const { label, ranks } = env;
  const slowest = new Set(imb.slowest);
  env.ctx.expose('compileTime', {
    slowest: imb.slowest.map(label), fastest: imb.fastest.map(label), max_over_min: imb.max_over_min,
    bars: imb.streams.map((s) => ({ rank: label(s.stream), total_us: s.total_us })),
  });
  const bars = h('div', { class: 'rk-bars', role: 'list' }, imb.streams.map((s) => h('div', {
    class: ['rk-bar-row', slowest.has(s.stream) && 'slowest'], role: 'listitem', dataset: { stream: s.stream },
  },
  h('span', { class: 'rk-bar-label' }, label(s.stream)),
  h('span', { class: 'rk-bar-track' }, h('span', { class: 'rk-bar', style: { width: `${s.total_us == null || !imb.max_us ? 0 : (100 * s.total_us / imb.max_us).toFixed(2)}%` } })),
  h('span', { class: 'rk-bar-value' }, s.total_us == null ? 'no time' : seconds(s.total_us / 1e6),
    s.over_fastest != null && s.over_fastest !== 1 ? h('span', { class: 'note' }, ` ${s.over_fastest.toFixed(1)}×`) : null,
    ` · ${plural(s.compiles, 'compile')}`))));
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
    h('h3', null, 'Per compile id'),
    dataTable({
      name: 'compile-time-ids', maxRows: 10, sort: '-delta_us',
      columns: [
        { key: 'compile_id', label: 'compile id', width: '8em' },
        { key: 'slowest', label: 'slowest', width: 'minmax(8em, 1fr)', value: (r) => ranks(r.slowest) },
        { key: 'max_us', label: 'max', align: 'right', width: '7em', render: (r) => seconds(r.max_us / 1e6) },
        { key: 'fastest', label: 'fastest', width: 'minmax(8em, 1fr)', value: (r) => ranks(r.fastest) },
        { key: 'min_us', label: 'min', align: 'right', width: '7em', render: (r) => seconds(r.min_us / 1e6) },
        { key: 'delta_us', label: 'gap', align: 'right', width: '7em', render: (r) => (r.delta_us ? seconds(r.delta_us / 1e6) : '—') },
        { key: 'max_over_min', label: '×', align: 'right', width: '5em', render: (r) => (r.max_over_min == null ? '–' : r.max_over_min.toFixed(1)) },
        { key: 'missing', label: 'missing on', width: 'minmax(8em, 1fr)', value: (r) => (r.missing.length ? ranks(r.missing) : '') },
      ],
      rows: imb.compile_ids,
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
        return h('div', { class: 'rk-order' },
          h('div', { class: 'rk-variant-head' }, rankChips(g.streams, env),
            i === cmp.reference ? h('span', { class: 'badge st-ok' }, 'reference')
              : h('span', { class: 'badge st-failed' }, g.difference?.same_runs ? 'same graphs, other order' : 'different graphs'),
            h('span', { class: 'note' }, plural(g.runs, 'run'))),
          g.recordings.map((rec, ri) => h('ol', { class: 'rk-ops' }, rec.map((id, k) =>
            h('li', { class: ['rk-op', diffAt.get(ri)?.has(k) && 'after-diff'] }, id ?? '(unknown)')))));
      }));
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
  const text = { none: 'Every rank got the same cache outcomes.', missing_compiles: 'Outcomes agree wherever two ranks looked up the cache for the same compile id; the groups differ only by compile ids some ranks lack.', outcomes: 'On some compile ids ranks missed the cache where others hit: they spent longer compiling while the others waited.' };
  const rows = cd.compile_ids.filter((r) => r.differs || r.missing.length || r.no_lookups.length);
  return h('div', null,
    note(text[cd.divergence] ?? cd.divergence),
    dataTable({
      name: 'cache-streams', maxRows: 10,
      columns: [
        { key: 'stream', label: 'rank', value: (s) => env.label(s.stream) },
        { key: 'group', label: 'group', align: 'right', value: (s) => s.group + 1 },
        { key: 'compile_ids', label: 'compile ids', align: 'right' },
        { key: 'hit', label: 'hits', align: 'right' },
        { key: 'miss', label: 'misses', align: 'right' },
        { key: 'bypass', label: 'bypasses', align: 'right' },
        { key: 'disabled', label: 'disabled', align: 'right' },
      ],
      rows: cd.streams,
    }),
    rows.length ? [h('h3', null, 'Compile ids where ranks differ or lack a lookup'), dataTable({
      name: 'cache-ids', maxRows: 10,
      columns: [
        { key: 'compile_id', label: 'compile id', width: '8em', value: (r) => r.compile_id ?? '(none)' },
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
  const diffLink = (r) => (r.groups.length >= 2
    ? h('a', {
      class: 'rk-diff-link',
      href: ctx.href('rank-diff', { id: r.compile_id ?? '', name: r.name, occ: r.occurrence || null, a: r.groups[0].streams[0], b: r.groups[1].streams[0] }),
      on: { click: (e) => e.stopPropagation() },
    }, 'diff')
    : null);
  ctx.expose('rankDiffer', rd.artifacts.filter((r) => r.groups.length >= 2).slice(0, 200).map((r) => ({
    compile_id: r.compile_id, name: r.name, groups: r.groups.map((g) => g.streams.map(env.label)),
  })));
  return h('div', null,
    note(`${plural(rd.keys, 'artifact')} (per compile id): ${count(rd.identical)} identical on every rank, ${count(rd.differs)} with different payloads, ` +
      `${count(rd.same_where_present)} identical where present but missing on some ranks. Open a diff to see what differs.`),
    dataTable({
      name: 'rank-differ', maxRows: 14, sort: null,
      columns: [
        { key: 'compile_id', label: 'compile id', width: '8em', value: (r) => r.compile_id ?? '(none)' },
        { key: 'name', label: 'artifact', width: 'minmax(14em, 2fr)', value: (r) => `${r.name}${r.occurrence ? ` #${r.occurrence}` : ''}`,
          render: (r) => h('span', { title: `${r.kind}: ${r.name}` }, `${r.name}${r.occurrence ? ` #${r.occurrence}` : ''}`) },
        { key: 'status', label: 'status', width: '10em',
          render: (r) => h('span', { class: ['badge', { identical: 'st-ok', differs: 'st-failed', same_where_present: 'st-empty' }[r.status] ?? 'st-missing'] }, r.status.replace(/_/g, ' ')) },
        { key: 'groups', label: 'ranks by payload', width: 'minmax(16em, 3fr)', value: (r) => r.groups.map((g) => ranks(g.streams)).join(' | ') },
        { key: 'missing', label: 'missing on', width: 'minmax(8em, 1fr)', value: (r) => (r.missing.length ? ranks(r.missing) : '') },
        { key: 'diff', label: '', width: '4em', value: (r) => (r.groups.length >= 2 ? 'diff' : ''), render: diffLink },
      ],
      rows: rd.artifacts,
      onRowClick: (r) => { if (r.groups.length >= 2) location.hash = diffLink(r).getAttribute('href'); },
    }));
}
