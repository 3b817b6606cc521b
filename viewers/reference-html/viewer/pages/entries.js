// pages/entries.js: every log entry of the stream, as the event index has it (`#/entries?s=&kind=&id=`):
// one row per entry, nothing left out (unknown kinds included), with the payload one click away.
// The one page that reads the index rather than a table: rows are decoded and parsed line by line
// by bundle-loader.js as they arrive, and shown in a virtualized table. A large index (tens of MB)
// shows its first rows at once and fills the table as the rest is decoded.

import { h, note, count, bytes, plural, dataTable } from '../dom.js';

/** Rows shown before the page is first drawn (more keep coming in while it is shown). */
const FIRST_ROWS = 5000;
/** The table is redrawn every this many rows while the index streams in. */
const BATCH = 10000;

/** @param {any} ctx see app.js */
export async function render(ctx) {
  const s = ctx.stream;
  const kind = ctx.params.get('kind') ?? '';
  const compileId = ctx.params.get('id') ?? '';
  const label = (r) => (r.name ? `${r.kind}:${r.name}` : r.kind); // as manifest `kinds` keys are
  const keep = (r) => (!kind || r.kind === kind || label(r) === kind) && (!compileId || r.compile_id === compileId);
  const rows = [];
  let total = 0;
  const it = ctx.bundle.indexRows(s.id)[Symbol.asyncIterator]();
  let done = false;
  /** Reads rows until `n` more are in (or the index ends). */
  const readMore = async (n) => {
    for (let i = 0; i < n; i++) {
      const next = await it.next();
      if (next.done) { done = true; return; }
      total++;
      if (keep(next.value)) rows.push(next.value);
    }
  };
  await readMore(FIRST_ROWS);

  const expose = () => ctx.expose('entries', { total, shown: rows.length, kind, id: compileId, complete: done,
    first: rows.slice(0, 50).map((r) => r.seq) });
  expose();
  const kinds = Object.entries(s.kinds ?? {}).sort((a, b) => b[1] - a[1]);
  const kindSelect = h('select', { 'aria-label': 'Entry kind', on: { change: (e) => { location.hash = ctx.href('entries', { kind: e.target.value || undefined, id: compileId || undefined }); } } },
    h('option', { value: '' }, `every kind (${count(s.entries ?? total)})`),
    kinds.map(([k, n]) => h('option', { value: k, selected: k === kind }, `${k} (${count(n)})`)));
  const idBox = h('input', { type: 'search', placeholder: 'compile id, e.g. [0/1]', value: compileId, 'aria-label': 'Compile id',
    on: { change: (e) => { location.hash = ctx.href('entries', { kind: kind || undefined, id: e.target.value.trim() || undefined }); } } });
  const title = h('h2', null);
  const status = h('p', { class: 'loading', role: 'status', hidden: done });
  const table = dataTable({
    name: 'entries', rows, maxRows: 25, sort: 'seq', filter: !done || rows.length > 10, columns: [
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
  });
  const heading = () => {
    title.textContent = done
      ? `${plural(rows.length, 'entry', 'entries')}${rows.length === total ? '' : ` of ${count(total)}`}`
      : `${count(rows.length)} entries so far`;
    status.textContent = `Reading the event index… ${count(total)} of ${count(s.entries)} entries`;
    status.hidden = done;
  };
  heading();
  // After app.js has put the page in: a page left before then is never connected and stops.
  if (!done) setTimeout(streamRest, 0);

  /** The rest of the index, in batches, while the page is shown (stops if the page is left). */
  async function streamRest() {
    try {
      while (!done && table.isConnected) {
        await readMore(BATCH);
        if (!table.isConnected) { await it.return?.(); return; }
        table.update();
        heading();
        expose();
      }
    } catch (e) {
      status.textContent = `The event index could not be read to its end: ${e.message}`;
      status.className = 'error';
    }
  }

  return h('div', null,
    h('h1', null, 'Log entries'),
    h('section', { class: 'card' }, title,
      note('Every entry of the log in order, from the event index: payloads (graphs, code, JSON) open in the artifact view. ',
        'Kinds the tables do not know are here too, with their metadata.'),
      h('div', { class: 'toolbar' }, kindSelect, idBox),
      status,
      table));
}
