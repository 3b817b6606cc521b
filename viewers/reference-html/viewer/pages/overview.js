// pages/overview.js: the landing page. First the compilation of the selected stream (compile
// count, compile time, the slowest compiles, each recompiled frame with its reason, failures),
// then what needs attention (failures, recompile storms, graph breaks, rank divergence, log
// problems), what was read, and, folded, how it is stored. Reads the manifest and only the small
// tables (compile_summary, failures, recompiles, graph_breaks, a few cross-rank ones), to keep the
// first paint cheap on big bundles.

import { h, section, facts, count, bytes, seconds, plural, note, dataTable, code, statusBadge } from '../dom.js';

/** torch's default `recompile_limit` (`cache_size_limit`): past it dynamo stops recompiling. */
const STORM_COMPILES = 8;

export async function render(ctx) {
  const m = ctx.manifest;
  const streams = m.streams;
  const [[warnings, failuresOf, perStream], summary] = await Promise.all([findings(ctx),
    ctx.stream?.tables?.compile_summary ? ctx.table('compile_summary') : null]);
  ctx.expose('warnings', warnings.map((w) => w.text));
  ctx.expose('streams', streams.map((s) => ({ id: s.id, failed: failuresOf.get(s.id)?.failed ?? 0, restarts: failuresOf.get(s.id)?.restarts ?? 0 })));

  const c = m.counts;
  return h('div', null,
    h('h1', null, 'Overview'),
    compilationSection(ctx, summary, perStream.find((x) => x.s.id === ctx.stream?.id)),
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
    h('details', { class: 'card storage' },
      h('summary', null, h('h2', null, 'Storage'), h('span', { class: 'muted' }, ` ${bytes(c.input_bytes)} of logs stored as ${bytes(c.packed_bytes)}`)),
      facts([
        ['payloads', `${bytes(c.payload_bytes)} in ${plural(c.unique_blobs, 'unique blob')}`],
        ['stored as', `${bytes(c.packed_bytes)} (zstd)`],
        ['duplicates saved', bytes(c.dedup_saved_bytes)],
        c.cross_input_saved_bytes ? ['shared across ranks', bytes(c.cross_input_saved_bytes)] : [null, null],
        ['format', `${m.format} v${m.format_version}, by ${m.generator.name} ${m.generator.version}`],
      ])),
    diagnosticsSection(ctx));
}

/** How many slow compiles the overview lists (compile_summary holds up to 10). */
const SLOWEST_SHOWN = 5;
/** How many failures the overview lists. */
const FAILURES_SHOWN = 3;

/** The first non-blank line of a logged text, its whitespace collapsed. */
const oneLine = (text) => (String(text ?? '').split('\n').find((l) => l.trim()) ?? '').replace(/\s+/g, ' ').trim();
/** A failure reason on one line: its first 300 characters, whitespace collapsed (its first line
 * is often only "backend='x' raised:"). */
const reasonLine = (text) => String(text ?? '').slice(0, 300).replace(/\s+/g, ' ').trim();

/**
 * The lead card: the selected stream's compiles (compile_summary, format 7), its recompiled frames
 * with the guard that failed first (recompiles) and its failures (failures). `loaded`: that
 * stream's tables from `findings`.
 */
function compilationSection(ctx, summary, loaded) {
  const m = ctx.manifest;
  const s = ctx.stream;
  if (!s) return null;
  const failures = (loaded?.failures?.failures ?? []).filter((f) => f.kind === 'failure');
  const frames = loaded?.recompiles?.frames ?? [];
  ctx.expose('compilation', {
    stream: s.id,
    compiles: summary?.compiles ?? null,
    totalS: summary?.total_s ?? null,
    forwardS: summary?.forward_s ?? null,
    backwardS: summary?.backward_s ?? null,
    slowest: (summary?.slowest_compiles ?? []).slice(0, SLOWEST_SHOWN).map((x) => x.compile_id),
    recompiled: frames.map((f) => ({ frame: frameKey(f), compiles: f.compiles.length, reason: firstReason(f) })),
    failed: failures.map((f) => f.compile_id),
  });
  const title = m.streams.length > 1 ? `Compilation of ${ctx.streamLabel(s)}` : 'Compilation';
  return h('section', { class: 'card compilation', 'aria-label': 'Compilation' },
    h('h2', null, title),
    summary ? statTiles(summary, failures.length, frames.length)
      : note(`${plural(s.compile_ids ?? 0, 'compile id')}. This bundle has no compile_summary table (format 7): `,
        'compile times are on the ', h('a', { href: ctx.href('time') }, 'Compile time'), ' tab.'),
    m.streams.length > 1 ? note('Pick another stream (rank) in the header.') : null,
    summary?.slowest_compiles.length ? slowestList(ctx, summary) : null,
    frames.length ? recompiledList(ctx, frames) : null,
    failures.length ? failureList(ctx, failures) : null);
}

/** The headline numbers. */
function statTiles(summary, failed, recompiled) {
  const tile = (key, value, label, title) => h('div', { class: 'stat', dataset: { stat: key }, title },
    h('span', { class: 'stat-value' }, value), h('span', { class: 'stat-label' }, label));
  return h('div', { class: 'stats' },
    tile('compiles', count(summary.compiles), summary.compiles === 1 ? 'compile' : 'compiles'),
    tile('time', seconds(summary.total_s), 'compiling',
      `forward ${seconds(summary.forward_s)} + backward ${seconds(summary.backward_s)} (each compile's total, as on the Compile time tab)`),
    summary.backward_s ? tile('split', `${seconds(summary.forward_s)} + ${seconds(summary.backward_s)}`, 'forward + backward') : null,
    tile('recompiled', count(recompiled), recompiled === 1 ? 'frame recompiled' : 'frames recompiled'),
    tile('failed', count(failed), failed === 1 ? 'compile failed' : 'compiles failed'));
}

function slowestList(ctx, summary) {
  const rows = summary.slowest_compiles.slice(0, SLOWEST_SHOWN);
  return [h('h3', null, 'Slowest compiles'),
    h('ol', { class: 'overview-list slowest' }, rows.map((x) => h('li', null,
      h('a', { href: ctx.href('compile', { id: x.compile_id }), class: 'mono' }, x.compile_id), ' ',
      h('b', null, seconds(x.total_s)),
      x.backward_s ? h('span', { class: 'muted' }, ` (forward ${seconds(x.forward_s ?? 0)} + backward ${seconds(x.backward_s)})`) : null,
      x.function ? [' ', h('code', null, x.function)] : null,
      x.location ? h('span', { class: 'muted', title: x.location }, ` ${x.location.split('/').pop()}`) : null,
      x.status !== 'ok' ? [' ', statusBadge(x.status)] : null)))];
}

/** A frame's key in the Recompiles view's URL (as pages/recompiles.js makes it). */
function frameKey(f) {
  return f.compiled_autograd_id != null ? `!${f.compiled_autograd_id}/${f.frame_id}` : String(f.frame_id);
}

/** Why a frame first recompiled: the guard of its first compile that failed, on one line. */
function firstReason(f) {
  const step = f.compiles.find((x) => x.reasons.length);
  return step ? oneLine(step.reasons[step.reasons.length - 1]) : null;
}

function recompiledList(ctx, frames) {
  return [h('h3', null, 'Recompiled frames'),
    h('ul', { class: 'overview-list recompiled' }, frames.map((f) => h('li', null,
      h('a', { href: ctx.href('recompiles', { frame: frameKey(f) }) }, h('code', null, f.co_name ?? `frame ${f.frame_id}`)),
      f.location ? h('span', { class: 'muted', title: f.location }, ` ${f.location.split('/').pop()}`) : null,
      ` compiled ${f.compiles.length} times`,
      firstReason(f) ? [': ', h('span', { class: 'one-line mono', title: firstReason(f) }, firstReason(f))] : null)))];
}

function failureList(ctx, failures) {
  return [h('h3', null, plural(failures.length, 'failed compile')),
    h('ul', { class: 'overview-list failed' }, failures.slice(0, FAILURES_SHOWN).map((f) => h('li', null,
      h('a', { href: ctx.href('compile', { id: f.compile_id }), class: 'mono' }, f.compile_id), ' ',
      h('b', null, f.failure_type), f.reason ? [': ', h('span', { class: 'one-line', title: f.reason }, reasonLine(f.reason))] : null))),
    failures.length > FAILURES_SHOWN ? note(h('a', { href: ctx.href('failures') }, `All ${failures.length} failures`), ' on the Failures tab.') : null];
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
  return [warnings, failuresOf, perStream];
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
