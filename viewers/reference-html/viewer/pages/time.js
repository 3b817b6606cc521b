// pages/time.js: where the compile time went (`#/time?s=&id=`). Reads the `compile_time` table
// (docs/tables/compile_time.md): compiles slowest first with their forward, backward and total
// time and their time in the main phases, a timeline of the selected compile's phases (`id`,
// default the slowest), the stream's totals per phase, and overlapping and unpaired events. The stream's Chrome trace opens in Perfetto (window.open + the PING/PONG postMessage
// hand-off of https://perfetto.dev/docs/visualization/deep-linking-to-perfetto-ui) or downloads.

import { h, section, note, empty, plural, count, seconds, dataTable, facts, download } from '../dom.js';
import { bar, barLegend, keepInUrl, percent, pill } from '../analysis.js';
import { timingTimes, shownTimes, timeSummary, timeColumn } from '../compile-data.js';

const PERFETTO = 'https://ui.perfetto.dev';
/** Phase columns of the compiles table: at most this many. */
const PHASE_COLUMNS = 6;
/**
 * The phases compilation_metrics also times (tlparse's columns) plus the usual big steps, shown
 * first when the stream has them: the outermost phases (dynamo, compile_attempt_0) all last about
 * as long as the whole compile and tell little, and the forward and backward columns already show
 * entire_frame_compile and entire_backward_compile. Other phases fill the remaining columns.
 */
const PREFERRED_PHASES = ['bytecode_tracing', 'backend_compile', 'create_aot_dispatcher_function',
  'inductor_compile', 'code_gen', 'compile_file', 'async_compile.wait'];
/** Phases the forward and backward columns show. */
const PART_PHASES = new Set(['dynamo', 'entire_frame_compile', 'entire_backward_compile']);
const us = (t) => seconds(t / 1e6);

/** @param {any} ctx see app.js */
export async function render(ctx) {
  const [table, summary] = await Promise.all([ctx.table('compile_time'),
    ctx.stream?.tables?.compile_summary ? ctx.table('compile_summary') : null]);
  const trace = ctx.stream?.chrome_trace ? traceCard(ctx) : null;
  const compiles = table?.compiles ?? [];
  if (!compiles.length) {
    return h('div', null, h('h1', null, 'Compile time'), trace,
      section('No timings', empty(table
        ? 'The trace events of this stream name no phases to time.'
        : 'This stream logged no chromium_event entries, so there are no phase timings. torch logs them with TORCH_TRACE since 2.5.')));
  }

  // By compile time; rows with none (events outside any compile, restarted attempts) by other time.
  const slowest = [...compiles].sort((a, b) => b.total_us - a.total_us || (b.other_us ?? 0) - (a.other_us ?? 0));
  const maxTotal = slowest[0].total_us || 1;
  const withOther = compiles.some((c) => c.other_us != null);
  const phaseNames = phaseColumns(table.phases);
  const perPhase = new Map(compiles.map((c) => [c, phaseTimes(c)]));
  const times = new Map(compiles.map((c) => [c, timingTimes(c)]));
  const timesOf = (c) => times.get(c);
  // A restarted attempt's forward says which attempt counts its frame compile.
  const forward = (c) => (c.counted_in
    ? h('span', { class: 'an-muted', title: `its frame compile counts in ${c.counted_in}, which completed it` }, `in ${c.counted_in}`)
    : seconds(timesOf(c).forward));
  let selected = compiles.find((c) => c.compile_id === ctx.params.get('id')) ?? slowest[0];
  // Timed compiles as compile_summary counts them (docs/definitions.md): a time above 0. A compile
  // timed by its metrics alone has no row here; rows with trace events but no time of their own
  // (restarted attempts, captures) are not timed.
  const timed = summary?.timed ?? compiles.filter((c) => c.compile_id != null && c.total_us > 0).length;
  const exposed = {
    compiles: slowest.map((c) => ({ compile_id: c.compile_id, total_us: c.total_us })),
    timed,
    times: Object.fromEntries(compiles.map((c) => [c.compile_id, shownTimes(timesOf(c))])),
    phases: table.phases.map((p) => p.name),
    selected: selected.compile_id,
  };
  ctx.expose('time', exposed);

  const tableBox = h('div');
  const timelineBox = h('div');
  const select = (c) => {
    selected = c;
    keepInUrl(ctx, { id: c.compile_id ?? null });
    exposed.selected = c.compile_id;
    drawTable();
    timelineBox.replaceChildren(timeline(ctx, c));
  };
  const drawTable = () => tableBox.replaceChildren(dataTable({
    name: 'compile-time',
    rows: slowest,
    maxRows: 12,
    onRowClick: select,
    columns: [
      { key: 'compile_id', label: 'compile', width: '9em',
        render: (c) => h('span', { class: c === selected ? 'an-current' : null }, c === selected ? '▸ ' : '', c.compile_id
          ? h('a', { href: ctx.href('compile', { id: c.compile_id }), on: { click: (e) => e.stopPropagation() } }, c.compile_id)
          : h('span', { class: 'an-muted', title: 'events outside any compile' }, 'no compile')) },
      timeColumn('forward', timesOf, { render: forward }),
      timeColumn('backward', timesOf),
      timeColumn('total', timesOf, { label: 'time' }),
      { key: 'bar', label: '', width: 'minmax(8em, 2fr)', value: (c) => c.total_us, render: (c) => bar(c.total_us / maxTotal) },
      withOther ? timeColumn('other', timesOf) : null,
      ...phaseNames.map((name) => ({
        key: `p:${name}`, label: h('span', { class: 'an-col-label' }, name.replace(/[_.]/g, '$&\u200b')), title: `time in ${name}, forward and backward`, align: 'right', width: 'minmax(7em, 1fr)',
        value: (c) => perPhase.get(c).get(name) ?? null,
        render: (c) => (perPhase.get(c).has(name) ? us(perPhase.get(c).get(name)) : h('span', { class: 'an-muted' }, '–')),
      })),
    ].filter(Boolean),
  }));
  drawTable();
  timelineBox.replaceChildren(timeline(ctx, selected));

  return h('div', null,
    h('h1', null, 'Compile time'),
    section('Where the time went',
      h('p', { class: 'an-lead' }, lead(slowest[0], table), busiest(slowest[0])),
      facts([
        ['in timed phases', us(table.total_us)],
        ['compiles timed', count(timed)],
        ['trace events', count(table.events)],
        table.overlaps.length ? ['overlapping phases', `${plural(table.overlaps.reduce((n, o) => n + o.count, 0), 'phase')} outlived the phase they began in (below)`] : [null, null],
        table.unmatched.length ? ['unpaired events', h('span', { class: 'warn-text' }, `${plural(table.unmatched.length, 'begin or end', 'begins or ends')} without a partner (below)`)] : [null, null],
      ])),
    trace,
    section('Compiles, slowest first',
      note('Forward: the frame compile (a backward compiled inside it is part of it); backward: the backward graph compiled lazily, at the first backward call; total: both, ',
        'as on the Compiles page. A restarted attempt\'s frame compile counts in the attempt that completed it. ',
        withOther ? 'Other, not in the time: the compile id\'s phases outside its frame compile and backward (autotuning and CUDA graphs at the first run, compiled autograd\'s capture). ' : '',
        'Phase columns add up the phase in the forward and the backward. Click a compile for its timeline.'),
      tableBox),
    timelineBox,
    section(`Phases over the stream (${table.phases.length})`,
      note('Total: wall time in the phase (nested occurrences of the same phase counted once). Self: time in the phase itself, not in nested phases.'),
      barLegend(['fill', 'total time'], ['inner', 'self time (part of the total)']),
      phaseTotals(table)),
    table.overlaps.length ? section(`Overlapping phases (${table.overlaps.length})`, overlapsNote(), overlapsTable(table.overlaps)) : null,
    table.unmatched.length ? section(`Unpaired events (${table.unmatched.length})`,
      note('torch ends every phase it begins, even on an exception: these lost their partner, and are not timed.'),
      unmatchedTable(ctx, table.unmatched)) : null);
}

/** "The slowest compile, [0/0], took 21.2 s (forward 19.6 s + backward 1.65 s)" (share of the timed phases). */
function lead(c, table) {
  const t = timingTimes(c);
  const time = t.total ?? t.other ?? 0;
  const share = ` (${percent(time * 1e6 / (table.total_us || 1))} of the time in timed phases). `;
  if (!c.compile_id) return [`The slowest events, outside any compile, took ${seconds(time)}`, share];
  return ['The slowest compile, ', h('strong', null, c.compile_id), ', took ', timeSummary(t) ?? seconds(time), share];
}

/** Time per phase name in a compile, not counting a phase nested in one of the same name. */
function phaseTimes(c) {
  const out = new Map();
  c.phases.forEach((p) => {
    for (let up = p.parent; up != null; up = c.phases[up].parent) if (c.phases[up].name === p.name) return;
    out.set(p.name, (out.get(p.name) ?? 0) + p.total_us);
  });
  return out;
}

/** The phase names shown as columns: the preferred ones present, then the costliest others. */
function phaseColumns(phases) {
  const present = new Set(phases.map((p) => p.name));
  const names = PREFERRED_PHASES.filter((n) => present.has(n)).slice(0, PHASE_COLUMNS);
  for (const p of phases) if (names.length < PHASE_COLUMNS && !names.includes(p.name) && !PART_PHASES.has(p.name)) names.push(p.name);
  return names;
}

/** "Most of it is spent in X itself (Y)": the phase of a compile with the largest self time. */
function busiest(c) {
  const p = c.phases.reduce((best, x) => (!best || x.self_us > best.self_us ? x : best), null);
  if (!p) return '';
  return ['The phase with the most time of its own: ', h('strong', { class: 'mono' }, p.name),
    ` (${us(p.self_us)}${p.count > 1 ? ` over ${p.count} runs` : ''}, ${percent(p.self_us / (c.total_us || c.other_us || 1))} of the compile).`];
}

/** The selected compile's phases as a tree with Gantt bars (offset and length over its span). */
function timeline(ctx, c) {
  const children = new Map();
  c.phases.forEach((p, i) => {
    const key = p.parent ?? -1;
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(i);
  });
  const rows = [];
  const walk = (i, depth) => {
    const p = c.phases[i];
    rows.push({ ...p, depth, phase: p });
    for (const j of children.get(i) ?? []) walk(j, depth + 1);
  };
  for (const i of children.get(-1) ?? []) walk(i, 0);
  const span = c.span_us || 1;
  ctx.expose('timeline', { compile_id: c.compile_id, phases: rows.map((r) => r.name) });
  return h('section', { class: 'card', dataset: { timeline: c.compile_id ?? '' } },
    h('h2', null, 'Timeline of ', c.compile_id ?? 'events outside compiles', ' ',
      // Two quantities, each labelled: the compile's time (as in the table) and the wall-clock span.
      c.compile_id && c.total_us > 0 ? [pill(`time ${us(c.total_us)}`, null, 'forward + lazily compiled backward, as in the table'), ' '] : null,
      pill(`wall span ${us(c.span_us)}`, null, 'From the first trace event to the last: not the compile time, as it also holds the gaps between phases and the phases outside it (other)'), ' ',
      c.compile_id ? h('a', { href: ctx.href('compile', { id: c.compile_id }), class: 'an-sub' }, 'compile details') : null),
    c.instants.length ? note('Events: ', c.instants.map((e, i) => [i ? ', ' : '', h('span', { class: 'mono' }, e.name), e.count > 1 ? ` ×${e.count}` : ''])) : null,
    rows.length ? dataTable({
      name: 'timeline',
      rows,
      maxRows: 18,
      rowHeight: 26,
      filter: rows.length > 15,
      columns: [
        { key: 'name', label: 'phase', width: 'minmax(16em, 2fr)',
          render: (r) => h('span', { class: 'mono', style: { paddingLeft: `${r.depth * 14}px` }, title: r.name }, r.name,
            r.count > 1 ? h('span', { class: 'an-muted' }, ` ×${r.count}`) : null,
            r.unfinished ? h('span', { class: 'warn-text', title: 'began and never ended: its end was lost, or the log ended first' }, ` (${r.unfinished} unfinished)`) : null) },
        { key: 'total_us', label: 'total', align: 'right', width: '6.5em', render: (r) => us(r.total_us) },
        { key: 'self_us', label: 'self', align: 'right', width: '6.5em', render: (r) => us(r.self_us) },
        { key: 'gantt', label: 'when (over the compile)', width: 'minmax(16em, 4fr)', value: (r) => r.offset_us,
          render: (r) => gantt(r, span) },
      ],
    }) : empty('No phases completed in this compile.'));
}

/** A bar placed at the phase's first begin, as long as its total time (clamped to the span). */
function gantt(p, span) {
  const left = Math.min(1, p.offset_us / span);
  const width = Math.max(0.002, Math.min(1 - left, p.total_us / span));
  return h('span', { class: 'an-gantt', title: `starts at +${us(p.offset_us)}, ${us(p.total_us)} (self ${us(p.self_us)})` },
    h('span', { class: 'an-gantt-bar', style: { left: `${left * 100}%`, width: `${width * 100}%` } }));
}

function phaseTotals(table) {
  const max = table.phases[0]?.total_us || 1;
  return dataTable({
    name: 'phase-totals',
    rows: table.phases,
    maxRows: 12,
    columns: [
      { key: 'name', label: 'phase', width: 'minmax(16em, 2fr)', render: (p) => h('span', { class: 'mono', title: p.name }, p.name) },
      { key: 'total_us', label: 'total', align: 'right', width: '6.5em', render: (p) => us(p.total_us) },
      { key: 'bar', label: '', width: 'minmax(10em, 2fr)', value: (p) => p.total_us,
        render: (p) => bar(p.total_us / max, { inner: p.self_us / max, title: `self ${us(p.self_us)}` }) },
      { key: 'self_us', label: 'self', align: 'right', width: '6.5em', render: (p) => us(p.self_us) },
      { key: 'count', label: 'runs', align: 'right', width: '5em' },
      { key: 'compiles', label: 'compiles', align: 'right', width: '6em' },
    ],
  });
}

/** Why phases overlap: routine, not an error. */
function overlapsNote() {
  return note('Routine, not an error: torch logs every thread\'s events with the same pid and tid, so a compile worker\'s ',
    h('span', { class: 'mono' }, 'compile_file'), ' and the main thread\'s ', h('span', { class: 'mono' }, 'async_compile.wait'),
    ' interleave instead of nesting. Each has its begin and its end; they are paired by name and timed as logged.');
}

function overlapsTable(rows) {
  return dataTable({
    name: 'overlaps',
    rows,
    maxRows: 6,
    columns: [
      { key: 'name', label: 'phase', width: 'minmax(12em, 2fr)', render: (o) => h('span', { class: 'mono' }, o.name) },
      { key: 'outlived', label: 'outlived', width: 'minmax(12em, 2fr)', render: (o) => h('span', { class: 'mono' }, o.outlived) },
      { key: 'count', label: 'times', align: 'right', width: '5em' },
      { key: 'first_line', label: 'first at log line', align: 'right', width: '9em' },
    ],
  });
}

/** What each cause of an unpaired event means. */
const UNMATCHED_CAUSES = {
  open_at_end: 'still open when the log ended (killed, or copied while written)',
  abandoned: 'its compile\'s outermost phase ended first (its end was lost)',
  no_begin: 'no open begin of that name (lost, or before the log began)',
};

function unmatchedTable(ctx, rows) {
  return dataTable({
    name: 'unmatched',
    rows,
    maxRows: 8,
    columns: [
      { key: 'side', label: 'side', width: '6em', render: (u) => (u.side === 'begin' ? 'begin, no end' : 'end, no begin') },
      { key: 'cause', label: 'why', width: 'minmax(14em, 2fr)', render: (u) => UNMATCHED_CAUSES[u.cause] ?? u.cause },
      { key: 'name', label: 'phase', width: 'minmax(14em, 2fr)', render: (u) => h('span', { class: 'mono' }, u.name) },
      { key: 'compile_id', label: 'compile', width: '8em', render: (u) => u.compile_id ?? '–' },
      { key: 'line', label: 'log line', align: 'right', width: '7em' },
    ],
  });
}

/** Open in Perfetto / Download trace JSON, for the stream's Chrome trace. */
function traceCard(ctx) {
  const status = h('span', { class: 'an-status', role: 'status' });
  const say = (text, tone = null) => {
    status.className = ['an-status', tone && `an-status-${tone}`].filter(Boolean).join(' ');
    status.textContent = text;
    ctx.expose('perfetto', text);
  };
  const fileName = `${ctx.stream.id}.trace.json`;
  const title = `${ctx.manifest.inputs.map((i) => i.path.split('/').pop()).join(', ')} · ${ctx.streamLabel(ctx.stream)}`;
  return section('Trace',
    h('div', { class: 'toolbar' },
      h('button', { type: 'button', class: 'an-primary', on: { click: () => openInPerfetto(ctx, fileName, title, say) } }, 'Open in Perfetto'),
      h('button', { type: 'button', on: { click: async () => {
        try {
          const bytes = await ctx.bundle.chromeTrace(ctx.stream.id);
          download(fileName, bytes, 'application/json');
          say(`Saved ${fileName}.`);
        } catch (e) {
          say(`Could not read the trace: ${e.message ?? e}`, 'error');
        }
      } } }, 'Download trace JSON'),
      status),
    note('Every chromium event of this stream as a Chrome trace, for a zoomable timeline. ',
      'Perfetto opens in a new tab and receives the trace from this page; nothing is uploaded to a server.'));
}

/**
 * Opens Perfetto in a new window and hands it the trace: the window answers 'PONG' to 'PING' once
 * it listens, then gets `{perfetto: {buffer, title, fileName}}`. window.open must run in the click.
 */
function openInPerfetto(ctx, fileName, title, say) {
  const win = window.open(PERFETTO);
  if (!win) {
    say('The browser blocked the Perfetto window: allow pop-ups for this page, or download the trace and open it at ui.perfetto.dev.', 'error');
    return;
  }
  say('Waiting for Perfetto to load…');
  const traceBytes = ctx.bundle.chromeTrace(ctx.stream.id);
  let tries = 0;
  // 'PING' carries nothing, so it goes to any origin: while the new window is still about:blank,
  // posting to Perfetto's origin would only log an error. The trace goes to Perfetto's origin only.
  const timer = setInterval(() => {
    if (win.closed || ++tries > 300) { stop(); if (!win.closed) say('Perfetto did not answer; download the trace and open it there.', 'error'); return; }
    win.postMessage('PING', '*');
  }, 100);
  const onMessage = async (e) => {
    if (e.source !== win || e.origin !== PERFETTO || e.data !== 'PONG') return;
    stop();
    try {
      const bytes = await traceBytes;
      const buffer = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
      win.postMessage({ perfetto: { buffer, title, fileName } }, PERFETTO);
      say(`Sent ${fileName} to Perfetto.`);
    } catch (err) {
      say(`Could not read the trace: ${err.message ?? err}`, 'error');
    }
  };
  function stop() {
    clearInterval(timer);
    window.removeEventListener('message', onMessage);
  }
  window.addEventListener('message', onMessage);
}
