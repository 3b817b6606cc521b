// pages/compiles.js: the compile directory (`#/compiles?s=&status=`): every compile id of the
// stream with its status, frame, time (forward, backward, total), graph breaks, cache outcomes and
// artifacts; status chips filter it, a click opens the compile. Then the artifacts logged outside
// any compile.

import { h, replace, section, note, empty, dataTable, count, seconds, plural, statusBadge, STATUS, replaceUrl } from '../dom.js';
import {
  loadDirectory, frameOf, fileLine, cacheChip, cacheVerdicts, artifactColumns, entryTimes, shownTimes, timeSummary, timeColumn,
} from '../compile-data.js';

export async function render(ctx) {
  const dir = await loadDirectory(ctx);
  if (!dir || !dir.compiles.length && !dir.unattributed.length) {
    return h('div', null, h('h1', null, 'Compiles'),
      section('No compiles', empty('This stream logged no compile ids: torch.compile did not run, or the log was ' +
        'captured without TORCH_TRACE. The overview lists what the log holds.')));
  }
  const { compiles, unattributed, byId } = dir;
  const wanted = ctx.params.get('status');

  const byStatus = new Map();
  for (const c of compiles) byStatus.set(c.status, (byStatus.get(c.status) ?? 0) + 1);
  const frames = new Set(compiles.map((c) => `${c.cid?.compiled_autograd_id}/${c.cid?.frame_id}`));
  const sum = (part) => compiles.reduce((s, c) => s + (entryTimes(c)[part] ?? 0), 0);
  const anyBackward = compiles.some((c) => c.backward_s != null);
  const totalTime = { forward: sum('forward'), backward: anyBackward ? sum('backward') : null, total: sum('total') };
  const withOther = compiles.some((c) => c.other_s != null);
  ctx.expose('times', Object.fromEntries(compiles.map((c) => [c.compile_id, shownTimes(entryTimes(c))])));

  const tableHolder = h('div');
  const chips = h('div', { class: 'status-chips', role: 'group', 'aria-label': 'Filter by status' });
  function drawChips(current) {
    replace(chips,
      h('button', { type: 'button', class: ['chip', !current && 'active'], 'aria-pressed': String(!current), on: { click: () => choose(null) } },
        `all ${count(compiles.length)}`),
      Object.keys(STATUS).filter((s) => byStatus.has(s)).map((s) => h('button', {
        type: 'button', class: ['chip', current === s && 'active'], 'aria-pressed': String(current === s),
        dataset: { status: s }, on: { click: () => choose(current === s ? null : s) },
      }, statusBadge(s), ' ', count(byStatus.get(s)))));
  }
  let current = wanted && byStatus.has(wanted) ? wanted : null;
  function choose(s) {
    current = s;
    replaceUrl(ctx.href('compiles', { status: s ?? undefined }));
    drawChips(current);
    drawTable();
  }
  function drawTable() {
    const rows = current ? compiles.filter((c) => c.status === current) : compiles;
    ctx.expose('compiles', rows.map((c) => c.compile_id));
    tableHolder.replaceChildren(compileTable(ctx, rows, byId, withOther));
  }
  drawChips(current);
  drawTable();

  ctx.expose('unattributed', unattributed.map((a) => a.name));
  return h('div', null,
    h('h1', null, 'Compiles'),
    h('section', { class: 'card' },
      h('p', { class: 'lead' }, `${plural(compiles.length, 'compile id')} of ${plural(frames.size, 'frame')}, `,
        timeSummary(totalTime) ?? seconds(0), ' compiling in total.',
        byStatus.get('failed') ? h('span', { class: 'error' }, ` ${plural(byStatus.get('failed'), 'compile')} failed.`) : null),
      chips,
      tableHolder,
      note('Click a row to open the compile: its metrics, phases, guards, inputs, stack and artifacts. ',
        'Restarted attempts log no metrics: their frame is the one of the attempt that replaced them (in grey), ',
        'and their frame compile counts in that attempt\'s forward. ',
        'Forward: the frame compile; backward: the backward graph, compiled lazily at the first backward call; total: both.',
        byStatus.get('compiled_autograd_capture') ? [' ', statusBadge('compiled_autograd_capture'),
          ' ids ([!N/-/-]) are compiled autograd capturing a backward graph: they log no metrics by design; ',
          'the captured graph is compiled under the ids [!N/frame/compile] of the same N, linked from each capture.'] : null)),
    section(`Artifacts outside any compile (${count(unattributed.length)})`,
      unattributed.length
        ? dataTable({
          name: 'unattributed', maxRows: 10, rows: unattributed,
          columns: artifactColumns(ctx, null, { nameWidth: 'minmax(16em, 3fr)', kindWidth: 'minmax(8em, 1fr)' }),
        })
        : empty('Every artifact of this stream belongs to a compile.')));
}

/** The frame cell of a compiled-autograd capture: it has no frame; its graph is compiled as others. */
function captureCell(c) {
  const graphs = c.graph_compiles ?? [];
  return h('span', { class: 'muted' }, 'backward graph captured by compiled autograd; ',
    graphs.length ? ['compiled as ', h('span', { class: 'mono' }, graphs.join(', '))] : 'no compile of it logged');
}

function compileTable(ctx, rows, byId, withOther) {
  if (!rows.length) return empty('No compile has this status.');
  return dataTable({
    name: 'compiles', rows, maxRows: 25,
    onRowClick: (c) => { location.hash = ctx.href('compile', { id: c.compile_id }); },
    columns: [
      { key: 'compile_id', label: 'compile id', width: '8em', value: (c) => c.compile_id,
        render: (c) => h('a', { href: ctx.href('compile', { id: c.compile_id }), class: 'mono' }, c.compile_id) },
      { key: 'status', label: 'status', width: '11.5em', render: (c) => statusBadge(c.status) },
      {
        key: 'frame', label: 'frame', width: 'minmax(22em, 4fr)',
        value: (c) => { const f = frameOf(c, byId); return f ? `${f.name ?? ''} ${f.file ?? ''}:${f.line ?? ''}` : ''; },
        render: (c) => {
          const f = frameOf(c, byId);
          if (c.status === 'compiled_autograd_capture') return captureCell(c);
          if (!f) return h('span', { class: 'muted' }, 'not logged');
          return h('span', { class: f.inherited ? 'inherited' : null }, h('b', null, f.name ?? '?'), ' ',
            h('span', { class: 'muted' }, fileLine(f.file, f.line)));
        },
      },
      timeColumn('forward', entryTimes),
      timeColumn('backward', entryTimes),
      timeColumn('total', entryTimes),
      withOther ? timeColumn('other', entryTimes) : null,
      {
        key: 'graph_breaks', label: 'breaks', align: 'right', width: '6em', value: (c) => c.graph_breaks.length,
        render: (c) => (c.graph_breaks.length
          ? h('span', { class: 'warn-text', title: c.graph_breaks.join('\n') }, count(c.graph_breaks.length)) : h('span', { class: 'muted' }, '0')),
      },
      {
        key: 'cache', label: 'caches', width: '11em',
        value: (c) => cacheVerdicts(c).map((v) => `${v.cache} ${v.outcome}`).join(' '),
        render: (c) => cacheVerdicts(c).map((v) => cacheChip(v.cache, v.outcome, v.count > 1 ? ` (${v.count} lookups)` : '', true)),
      },
      { key: 'artifacts', label: 'artifacts', align: 'right', width: '7em', value: (c) => c.artifact_count },
      { key: 'start_ts', label: 'started', width: '13em', render: (c) => h('span', { class: 'mono muted' }, c.start_ts ?? '–') },
    ].filter(Boolean),
  });
}
