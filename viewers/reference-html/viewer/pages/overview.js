// pages/overview.js: the landing page. What was read, what it holds, and what needs attention
// (failures, recompile storms, graph breaks, rank divergence, log problems). Reads the manifest
// and only the small tables (failures, recompiles, graph_breaks, a few cross-rank ones), to keep
// the first paint cheap on big bundles.

import { h, section, facts, count, bytes, plural, note, dataTable, code } from '../dom.js';

/** torch's default `recompile_limit` (`cache_size_limit`): past it dynamo stops recompiling. */
const STORM_COMPILES = 8;

export async function render(ctx) {
  const m = ctx.manifest;
  const streams = m.streams;
  const [warnings, failuresOf] = await findings(ctx);
  ctx.expose('warnings', warnings.map((w) => w.text));
  ctx.expose('streams', streams.map((s) => ({ id: s.id, failed: failuresOf.get(s.id)?.failed ?? 0, restarts: failuresOf.get(s.id)?.restarts ?? 0 })));

  const c = m.counts;
  return h('div', null,
    h('h1', null, 'Overview'),
    warnings.length
      ? h('section', { class: 'card warnings', 'aria-label': 'Warnings' },
        h('h2', null, 'Needs attention'),
        h('ul', { class: 'warning-list' }, warnings.map((w) => h('li', { class: ['warning', `sev-${w.severity}`] },
          w.link ? h('a', { href: w.link }, w.parts ?? w.text) : w.parts ?? w.text))))
      : h('section', { class: 'card ok-box' }, h('h2', null, 'No problems found'),
        note('No failures, recompile storms, graph breaks, rank divergence or log problems.')),
    h('div', { class: 'grid-2' },
      section('Inputs',
        dataTable({
          name: 'inputs', columns: [
            { key: 'path', label: 'log', width: 'minmax(12em, 3fr)', render: (r) => h('span', { title: r.path }, r.path.split('/').pop()) },
            { key: 'size', label: 'size', align: 'right', render: (r) => bytes(r.size) },
            { key: 'lines', label: 'lines', align: 'right', render: (r) => count(r.lines) },
            { key: 'compression', label: 'compression' },
          ], rows: m.inputs, maxRows: 8,
        }),
        m.skipped?.length ? note(`${plural(m.skipped.length, 'file')} skipped: `,
          m.skipped.slice(0, 5).map((s, i) => [i ? '; ' : '', code(s.path), ` (${s.reason})`]),
          m.skipped.length > 5 ? '; …' : '') : null),
      section('Totals', facts([
        ['log entries', count(c.entries)],
        ['log lines', count(c.lines)],
        ['input', bytes(c.input_bytes)],
        ['payloads', `${bytes(c.payload_bytes)} in ${plural(c.unique_blobs, 'unique blob')}`],
        ['stored as', `${bytes(c.packed_bytes)} (zstd)`],
        ['duplicates saved', bytes(c.dedup_saved_bytes)],
        c.cross_input_saved_bytes ? ['shared across ranks', bytes(c.cross_input_saved_bytes)] : [null, null],
        ['format', `${m.format} v${m.format_version}, by ${m.generator.name} ${m.generator.version}`],
      ]))),
    section(streams.length > 1 ? `Streams (${streams.length})` : 'Stream',
      dataTable({
        name: 'streams', columns: [
          { key: 'id', label: 'stream', render: (s) => h('a', { href: ctx.href('compiles', { s: s.id }) }, ctx.streamLabel(s)) },
          { key: 'entries', label: 'entries', align: 'right', render: (s) => count(s.entries) },
          { key: 'compile_ids', label: 'compile ids', align: 'right' },
          // Counted apart from the failures table: its rows are failures and restarts together.
          { key: 'failed', label: 'failed compiles', align: 'right', width: 'minmax(9.5em, 1fr)',
            title: 'compiles that failed (status failed); restarts are counted apart', value: (s) => failuresOf.get(s.id)?.failed ?? 0 },
          { key: 'restarts', label: 'restarts', align: 'right', title: 'times Dynamo restarted tracing a frame (not failures)',
            value: (s) => failuresOf.get(s.id)?.restarts ?? 0 },
          { key: 'payload_bytes', label: 'payloads', align: 'right', render: (s) => bytes(s.payload_bytes) },
          { key: 'first_timestamp', label: 'first entry', width: 'minmax(13em, 1.5fr)' },
          { key: 'last_timestamp', label: 'last entry', width: 'minmax(13em, 1.5fr)' },
          { key: 'pid', label: 'pid', align: 'right' },
        ], rows: streams, maxRows: 12,
      })),
    diagnosticsSection(ctx));
}

/**
 * Warnings from the manifest, the small tables and the cross-rank tables, worst first; and each
 * stream's failures table (null without one), by stream id.
 */
async function findings(ctx) {
  const m = ctx.manifest;
  const warnings = [];
  const add = (severity, text, link, parts) => warnings.push({ severity, text, link, parts });
  const perStream = await Promise.all(m.streams.map(async (s) => ({
    s,
    failures: s.tables?.failures ? await ctx.table('failures', s.id) : null,
    recompiles: s.tables?.recompiles ? await ctx.table('recompiles', s.id) : null,
    breaks: s.tables?.graph_breaks ? await ctx.table('graph_breaks', s.id) : null,
  })));
  const where = (s) => (m.streams.length > 1 ? `${ctx.streamLabel(s)}: ` : '');
  for (const { s, failures, recompiles, breaks } of perStream) {
    if (failures?.failed) add('error', `${where(s)}${plural(failures.failed, 'compile')} failed`, ctx.href('failures', { s: s.id }));
    if (failures?.restarts) add('info', `${where(s)}${plural(failures.restarts, 'restart')}`, ctx.href('failures', { s: s.id }));
    for (const f of recompiles?.frames ?? []) {
      if (f.compiles.length >= STORM_COMPILES) {
        add('warn', `${where(s)}recompile storm: ${f.co_name ?? `frame ${f.frame_id}`} compiled ${f.compiles.length} times` +
          (f.location ? ` (${f.location})` : ''), ctx.href('recompiles', { s: s.id, frame: f.frame_id }));
      }
    }
    const recompiled = (recompiles?.frames ?? []).filter((f) => f.compiles.length < STORM_COMPILES);
    if (recompiled.length) {
      add('info', `${where(s)}${plural(recompiled.length, 'frame')} recompiled`, ctx.href('recompiles', { s: s.id }));
    }
    if (breaks?.total) {
      add('info', `${where(s)}${plural(breaks.total, 'graph break')} (${plural(breaks.breaks.length, 'distinct reason')})`,
        ctx.href('graph-breaks', { s: s.id }));
    }
  }
  if (m.cross_rank) await crossRankFindings(ctx, add);
  if (m.diagnostics.total) {
    add('warn', `${plural(m.diagnostics.total, 'log problem')}: ${Object.entries(m.diagnostics.by_kind)
      .map(([k, n]) => `${n} ${k}`).join(', ')}`, '#diagnostics');
  }
  const order = { error: 0, warn: 1, info: 2 };
  warnings.sort((a, b) => order[a.severity] - order[b.severity]);
  const failuresOf = new Map(perStream.map(({ s, failures }) => [s.id, failures]));
  return [warnings, failuresOf];
}

/** Divergence between ranks, from the cross-rank tables that summarise it. */
async function crossRankFindings(ctx, add) {
  const x = ctx.manifest.cross_rank;
  // Loaded only for bundles of several ranks: a single stream's first paint does not fetch it.
  const { rankLabeller, alignmentFindings, compileText } = await import('../ranks-common.js');
  const label = rankLabeller(ctx.manifest);
  const groups = (gs) => gs.map((g) => g.streams.map(label).join(', ')).join(' vs ');
  const [alignment, schedules, imbalance] = await Promise.all(
    ['compile_alignment', 'collective_schedules', 'compile_time_imbalance'].map((n) => (x.tables?.[n] ? ctx.crossTable(n) : null)));
  // Code only some ranks compiled (which shifts their later frame ids), and ambiguous matches.
  for (const f of alignmentFindings(alignment, label)) {
    if (f.kind === 'partial_code') add('warn', f.text, ctx.href('ranks', { sec: 'grid' }), f.parts);
    else add('info', f.text, ctx.href('ranks', { sec: 'groups' }), f.parts);
  }
  if (alignment?.diverges) add('warn', `Ranks compiled different graphs: ${groups(alignment.groups.map((g) => g.group))}`, ctx.href('ranks'));
  for (const d of schedules?.compiles ?? []) {
    if (d.differs) add('error', `Collective schedules differ on ${compileText(d.compile, label)}: ${groups(d.variants)}`, ctx.href('ranks', { sec: 'schedules' }));
  }
  if (imbalance?.max_over_min >= 2) {
    add('warn', `Compile time imbalance: ${imbalance.slowest.map(label).join(', ')} spent ` +
      `${imbalance.max_over_min.toFixed(1)}x as long compiling as the fastest rank`, ctx.href('ranks'));
  }
}

function diagnosticsSection(ctx) {
  const d = ctx.manifest.diagnostics;
  const body = h('div', null, d.total ? h('p', { class: 'loading' }, 'Loading diagnostics…') : note('The logs parsed cleanly.'));
  if (d.total) {
    (async () => {
      const rows = [];
      for await (const diag of ctx.bundle.diagnostics()) rows.push(diag);
      ctx.expose('diagnostics', rows.length);
      body.replaceChildren(dataTable({
        name: 'diagnostics', columns: [
          { key: 'file', label: 'file', width: 'minmax(10em, 2fr)' },
          { key: 'line', label: 'line', align: 'right', width: '6em' },
          { key: 'kind', label: 'kind', width: '10em' },
          { key: 'message', label: 'problem', width: 'minmax(16em, 4fr)' },
        ], rows, maxRows: 10,
      }));
    })().catch((e) => body.replaceChildren(h('p', { class: 'error' }, String(e.message ?? e))));
  }
  return h('section', { class: 'card', id: 'diagnostics' }, h('h2', null, `Log problems (${count(d.total)})`), body);
}
