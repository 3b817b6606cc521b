// pages/sizes.js: graph sizes per compile (`#/sizes?s=&m=`). Reads the `graph_sizes` table
// (docs/tables/graph_sizes.md): one row per compile, one column per IR (Dynamo graph, pre-grad,
// AOT, post-grad, output code, ...), so "did the sizes change?" is one glance. The measure (`m`:
// FX nodes, lines or bytes) is picked above the table; a cell that differs from the previous
// compile of the same frame is highlighted with the direction of the change.

import { h, replace, section, note, empty, plural, count, bytes, dataTable } from '../dom.js';
import { frameKey, keepInUrl } from '../analysis.js';

const MEASURES = {
  nodes: { label: 'FX nodes (lines for non-FX payloads)', get: (g) => g.fx_nodes ?? g.lines, unit: (g) => (g.fx_nodes != null ? '' : ' ln') },
  lines: { label: 'lines', get: (g) => g.lines, unit: () => '' },
  bytes: { label: 'bytes', get: (g) => g.bytes, unit: () => '', format: bytes },
};

/** @param {any} ctx see app.js */
export async function render(ctx) {
  const table = await ctx.table('graph_sizes');
  const compiles = table?.compiles ?? [];
  if (!compiles.length) {
    return h('div', null, h('h1', null, 'Graph sizes'),
      section('No graphs', empty('This stream logged no graphs (no Dynamo, AOT or Inductor graphs, no output code) and no graph counts.')));
  }

  // Columns: every IR, in order of first appearance; a second graph of a name in one compile is "name#2".
  const columns = [];
  const rows = compiles.map((c) => {
    const seen = new Map();
    const cells = {};
    for (const g of c.graphs) {
      const base = g.name; // the same for the same IR of every compile
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      const col = n > 1 ? `${base}#${n}` : base;
      if (!columns.includes(col)) columns.push(col);
      cells[col] = g;
    }
    return { compile_id: c.compile_id, frame: frameKey(c.compile_id), c, cells, prev: null };
  });
  // The previous compile of the same frame, to compare against.
  const lastOfFrame = new Map();
  for (const r of rows) {
    if (r.frame == null) continue;
    r.prev = lastOfFrame.get(r.frame) ?? null;
    lastOfFrame.set(r.frame, r);
  }

  let measure = MEASURES[ctx.params.get('m')] ? ctx.params.get('m') : 'nodes';
  const changes = () => {
    const out = [];
    for (const r of rows) {
      if (!r.prev) continue;
      for (const col of columns) {
        const a = r.prev.cells[col];
        const b = r.cells[col];
        if (a && b && MEASURES[measure].get(a) !== MEASURES[measure].get(b)) out.push([r.compile_id, col]);
      }
    }
    return out;
  };
  const expose = () => ctx.expose('sizes', {
    measure,
    columns,
    rows: rows.map((r) => ({ compile_id: r.compile_id, previous: r.prev?.compile_id ?? null,
      cells: Object.fromEntries(Object.entries(r.cells).map(([k, g]) => [k, MEASURES[measure].get(g)])) })),
    changed: changes(),
  });

  const tableBox = h('div');
  const summaryBox = h('p', { class: 'note' });
  const draw = () => {
    expose();
    const changed = changes();
    const frames = new Set(changed.map(([id]) => frameKey(id)));
    replace(summaryBox, changed.length
      ? [h('strong', null, plural(changed.length, 'size')), ` changed against the previous compile of the same frame (${plural(frames.size, 'frame')}): `,
        'highlighted cells, ▲ grew, ▼ shrank. Hover a cell for its lines, bytes and call nodes.']
      : 'No size changed between compiles of the same frame. Hover a cell for its lines, bytes and call nodes.');
    tableBox.replaceChildren(sizesTable(ctx, rows, columns, measure));
  };
  const picker = h('select', { 'aria-label': 'Measure', on: { change: (e) => { measure = e.target.value; keepInUrl(ctx, { m: measure }); draw(); } } },
    Object.entries(MEASURES).map(([k, m]) => h('option', { value: k, selected: k === measure }, m.label)));
  draw();

  return h('div', null,
    h('h1', null, 'Graph sizes'),
    section(`${plural(rows.length, 'compile')}, ${plural(columns.length, 'IR')}`,
      h('div', { class: 'toolbar' }, h('label', null, 'Show ', picker)),
      summaryBox,
      tableBox,
      note('Dynamo: call nodes / all nodes / inputs of the Dynamo graph, from compilation_metrics. ',
        'IR columns in pipeline order; "–": the compile logged no such graph.')));
}

function sizesTable(ctx, rows, columns, measure) {
  const m = MEASURES[measure];
  const fmt = m.format ?? count;
  const cell = (r, col) => {
    const g = r.cells[col];
    if (!g) return h('span', { class: 'an-muted' }, '–');
    const before = r.prev?.cells[col];
    const v = m.get(g);
    const delta = before ? v - m.get(before) : 0;
    const title = `${col} in ${r.compile_id}\n${g.fx_nodes != null ? `${count(g.fx_nodes)} FX nodes (${count(g.fx_ops)} calls)\n` : 'not an FX graph\n'}` +
      `${count(g.lines)} lines, ${bytes(g.bytes)}` +
      (before ? `\n${r.prev.compile_id}: ${fmt(m.get(before))}${m.unit(before)}${before.blob === g.blob ? ' (identical)' : ''}` : '');
    return h('span', { class: ['an-size', delta > 0 && 'an-grew', delta < 0 && 'an-shrank'], title },
      delta > 0 ? '▲ ' : delta < 0 ? '▼ ' : '', fmt(v), h('span', { class: 'an-unit' }, m.unit(g)));
  };
  return dataTable({
    name: 'graph-sizes',
    rows,
    maxRows: 16,
    filter: rows.length > 10,
    columns: [
      { key: 'compile_id', label: 'compile', width: '7.5em',
        render: (r) => (r.compile_id ? h('a', { href: ctx.href('compile', { id: r.compile_id }) }, r.compile_id) : h('span', { class: 'an-muted', title: 'graphs logged outside any compile' }, 'no compile')) },
      { key: 'dynamo', label: 'Dynamo', align: 'right', width: '10em', title: 'graph_op_count / graph_node_count / graph_input_count',
        value: (r) => r.c.graph_op_count,
        render: (r) => (r.c.graph_op_count == null ? '–' : `${r.c.graph_op_count} / ${r.c.graph_node_count ?? '–'} / ${r.c.graph_input_count ?? '–'}`) },
      ...columns.map((col) => ({
        key: col, label: h('span', { class: 'an-col-label' }, shortName(col)), title: col, align: 'right', width: '7em',
        value: (r) => (r.cells[col] ? m.get(r.cells[col]) : null),
        render: (r) => cell(r, col),
      })),
    ],
  });
}

/** Column headers: drop the suffix every graph shares; may break after an underscore. */
function shortName(col) {
  return col.replace(/_graph(#\d+)?$/, '$1').replace(/^inductor_output_code$/, 'output code').replaceAll('_', '_\u200b');
}
