// pages/volume.js: who is generating all the logs (`#/volume?s=`). Reads the `log_volume` table
// (docs/tables/log_volume.md): bytes and entries by entry kind, by artifact name and by logging
// call site (file:line), each row with a bar proportional to its share of the log.

import { h, section, note, empty, plural, count, bytes, dataTable, facts } from '../dom.js';
import { bar, barLegend, pathCell, percent } from '../analysis.js';

/** @param {any} ctx see app.js */
export async function render(ctx) {
  const t = await ctx.table('log_volume');
  if (!t || !t.total?.entries) {
    return h('div', null, h('h1', null, 'Log volume'),
      section('No entries', empty('This stream has no log entries to count.')));
  }
  const total = t.total;
  ctx.expose('volume', {
    total: total.log_bytes,
    byKind: t.by_kind.map((r) => [r.key, r.log_bytes]),
    byName: t.by_name.map((r) => [r.key, r.log_bytes]),
    bySource: t.by_source.map((r) => [r.key, r.log_bytes]),
  });
  const top = t.by_kind[0];
  const topSource = t.by_source[0];
  return h('div', null,
    h('h1', null, 'Log volume'),
    section('Where the bytes go',
      h('p', { class: 'an-lead' },
        h('span', { class: 'mono' }, top.key), ` entries are ${percent(top.log_bytes / total.log_bytes)} of the log`,
        topSource ? [', and the busiest call site, ', h('span', { class: 'mono' }, topSource.key), `, wrote ${percent(topSource.log_bytes / total.log_bytes)}.`] : '.'),
      facts([
        ['log', `${bytes(total.log_bytes)} in ${plural(total.entries, 'entry', 'entries')}`],
        ['headers', `${bytes(total.header_bytes)} (glog prefix and JSON metadata)`],
        ['payloads', `${bytes(total.payload_bytes)} in ${plural(total.payload_lines, 'line')} (${plural(total.payload_entries, 'entry', 'entries')} with a payload)`],
      ])),
    section(`By entry kind (${t.by_kind.length})`,
      note('Bars: the share of the log\'s bytes, split into payloads (graphs, code, JSON) and header lines.'),
      barLegend(['inner', 'payload bytes'], ['fill', 'header bytes']),
      volumeTable('volume-kind', t.by_kind, total, 'kind')),
    section(`By artifact name (${t.by_name.length})`,
      t.by_name.length
        ? volumeTable('volume-name', t.by_name, total, 'name', true)
        : empty('No named entries (artifact, graph_dump, link, dump_file).')),
    section(`By call site (${t.by_source.length})`,
      note('The logging call in torch that wrote the entries. Entries written through trace_structured_artifact share ',
        'one wrapper line in torch/_logging; the table by name splits those.'),
      volumeTable('volume-source', t.by_source, total, 'call site')));
}

/** One grouping as a table, biggest first, with each row's share of the whole log. */
function volumeTable(name, rows, total, keyLabel, withKind = false) {
  return dataTable({
    name,
    rows,
    maxRows: 12,
    sort: '-log_bytes',
    columns: [
      { key: 'key', label: keyLabel, width: 'minmax(16em, 3fr)', render: (r) => pathCell(r.key, 48) },
      withKind ? { key: 'kind', label: 'kind', width: 'minmax(8em, 1fr)' } : null,
      { key: 'share', label: 'share of the log', width: 'minmax(12em, 2fr)', value: (r) => r.log_bytes,
        render: (r) => h('span', { class: 'an-share' }, bar(r.log_bytes / total.log_bytes, { inner: r.payload_bytes / total.log_bytes, title: `payloads ${bytes(r.payload_bytes)}, headers ${bytes(r.header_bytes)}` }),
          h('span', { class: 'an-share-pct' }, percent(r.log_bytes / total.log_bytes))) },
      { key: 'log_bytes', label: 'bytes', align: 'right', width: '7em', render: (r) => bytes(r.log_bytes) },
      { key: 'entries', label: 'entries', align: 'right', width: '6.5em', render: (r) => count(r.entries) },
      { key: 'header_bytes', label: 'headers', align: 'right', width: '7em', render: (r) => bytes(r.header_bytes) },
      { key: 'payload_bytes', label: 'payloads', align: 'right', width: '7em', render: (r) => bytes(r.payload_bytes) },
      { key: 'payload_lines', label: 'payload lines', align: 'right', width: '8em', render: (r) => count(r.payload_lines) },
    ].filter(Boolean),
  });
}
