// pages/entries.js: every log entry of the stream, as the event index has it (`#/entries?s=&kind=&id=`):
// one row per entry, nothing left out (unknown kinds included), with the payload one click away.
// The one page that reads the index rather than a table: rows are decoded and parsed line by line
// by bundle-loader.js, then shown in a virtualized table.

import { h, section, note, count, bytes, plural, dataTable } from '../dom.js';

/** @param {any} ctx see app.js */
export async function render(ctx) {
  const s = ctx.stream;
  const kind = ctx.params.get('kind') ?? '';
  const compileId = ctx.params.get('id') ?? '';
  const all = [];
  for await (const row of ctx.bundle.indexRows(s.id)) all.push(row);
  const label = (r) => (r.name ? `${r.kind}:${r.name}` : r.kind); // as manifest `kinds` keys are
  const rows = all.filter((r) => (!kind || r.kind === kind || label(r) === kind) && (!compileId || r.compile_id === compileId));
  ctx.expose('entries', { total: all.length, shown: rows.length, kind, id: compileId, first: rows.slice(0, 50).map((r) => r.seq) });

  const kinds = Object.entries(s.kinds ?? {}).sort((a, b) => b[1] - a[1]);
  const kindSelect = h('select', { 'aria-label': 'Entry kind', on: { change: (e) => { location.hash = ctx.href('entries', { kind: e.target.value || undefined, id: compileId || undefined }); } } },
    h('option', { value: '' }, `every kind (${count(all.length)})`),
    kinds.map(([k, n]) => h('option', { value: k, selected: k === kind }, `${k} (${count(n)})`)));
  const idBox = h('input', { type: 'search', placeholder: 'compile id, e.g. [0/1]', value: compileId, 'aria-label': 'Compile id',
    on: { change: (e) => { location.hash = ctx.href('entries', { kind: kind || undefined, id: e.target.value.trim() || undefined }); } } });

  return h('div', null,
    h('h1', null, 'Log entries'),
    section(`${plural(rows.length, 'entry', 'entries')}${rows.length === all.length ? '' : ` of ${count(all.length)}`}`,
      note('Every entry of the log in order, from the event index: payloads (graphs, code, JSON) open in the artifact view. ',
        'Kinds the tables do not know are here too, with their metadata.'),
      h('div', { class: 'toolbar' }, kindSelect, idBox),
      dataTable({
        name: 'entries', rows, maxRows: 25, sort: 'seq', columns: [
          { key: 'seq', label: '#', align: 'right', width: '5em' },
          { key: 'line', label: 'line', align: 'right', width: '6em' },
          { key: 'ts', label: 'time', width: '13em' },
          { key: 'kind', label: 'kind', width: 'minmax(12em, 2fr)', value: label },
          { key: 'compile_id', label: 'compile', width: '8em',
            render: (r) => (r.compile_id ? h('a', { href: ctx.href('compile', { id: r.compile_id }) }, r.compile_id) : '') },
          { key: 'payload', label: 'payload', align: 'right', width: '8em', value: (r) => r.payload?.size ?? null,
            render: (r) => (r.payload ? h('a', { href: ctx.href('artifact', { blob: r.payload.hash, name: r.name ?? r.kind, id: r.compile_id }),
              title: `${r.payload.format}, ${plural(r.payload.lines, 'line')}` }, bytes(r.payload.size)) : '') },
          { key: 'meta', label: 'metadata', width: 'minmax(14em, 3fr)', value: (r) => (r.meta && Object.keys(r.meta).length ? JSON.stringify(r.meta) : '') },
          { key: 'src', label: 'logged at', width: 'minmax(12em, 2fr)' },
        ],
      })));
}
