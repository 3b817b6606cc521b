// pages/graph-breaks.js: what breaks the graphs, where and how often (`#/graph-breaks?s=&g=`).
// Reads the `graph_breaks` table (docs/tables/graph_breaks.md): breaks grouped by (reason, user
// line, frame that raised it), most frequent first. A table of the groups, then the selected
// group (`g`, its index, default the most frequent) with its explanation, its graph-break site
// page, the compiles it happened in, its user code traceback (user frames marked, library frames
// dimmed), and the full text of its first occurrence, fetched when opened. Last, torch's own
// hints (the `hints` table, docs/tables/hints.md): its `Hint:` lines quoted as logged, each with
// how many breaks, restarts and failures carried it and links to their compiles.

import { h, section, note, empty, plural, count, facts, externalLink } from '../dom.js';
import { bar, blobText, lazyDetails, masterDetail, pathCell, percent, pill } from '../analysis.js';
import { stackList } from '../compile-data.js';

/** @param {any} ctx see app.js */
export async function render(ctx) {
  const [table, hints] = await Promise.all([ctx.table('graph_breaks'), ctx.table('hints')]);
  const groups = table?.breaks ?? [];
  const torchHints = hintsSection(ctx, hints?.hints ?? []);
  if (!groups.length) {
    return h('div', null, h('h1', null, 'Graph breaks'),
      // torch with hints (2.7 and later) logs its breaks as dynamo_graph_break_reason artifacts.
      section('No graph breaks', empty(table || torchHints
        ? 'No graph breaks were logged in this stream.'
        : 'No graph breaks were logged in this stream: no dynamo_graph_break_reason artifacts (torch before 2.6 logged none; ' +
          'its restarts, with their reasons, are on the Failures tab).')),
      torchHints);
  }
  const total = table.total;
  const rows = groups.map((g, i) => ({ ...g, i, group: g }));
  ctx.expose('graphBreaks', {
    total,
    groups: groups.map((g) => ({
      reason: g.reason, location: g.location, raised_at: g.raised_at, count: g.count, compile_ids: g.compile_ids,
    })),
  });

  const { tableBox, detailBox } = masterDetail(ctx, {
    rows,
    param: 'g',
    exposeAs: 'graphBreak',
    detail: (r) => detail(ctx, r),
    tableOptions: (isSelected) => ({
      name: 'graph-breaks',
      maxRows: 12,
      columns: [
        { key: 'count', label: 'breaks', align: 'right', width: '6em',
          render: (r) => h('span', { class: isSelected(r) ? 'an-current' : null }, isSelected(r) ? '▸ ' : '', count(r.count)) },
        { key: 'share', label: 'share', width: '8em', value: (r) => r.count,
          render: (r) => bar(r.count / total, { title: `${percent(r.count / total)} of ${plural(total, 'break')}` }) },
        { key: 'reason', label: 'reason', width: 'minmax(16em, 3fr)', render: (r) => h('span', { title: r.reason }, r.reason) },
        { key: 'location', label: 'where (user code)', width: 'minmax(14em, 2fr)',
          render: (r) => pathCell(r.location, 30) },
        { key: 'raised_at', label: 'raised in', width: 'minmax(14em, 1.6fr)', title: 'Where torch raised the break, when not at the user line (library code the line called)',
          render: (r) => (r.raised_at ? pathCell(r.raised_at, 26) : h('span', { class: 'an-muted', title: 'at the user line itself' }, '–')) },
        { key: 'compile_ids', label: 'compiles', width: 'minmax(10em, 1.5fr)', value: (r) => r.compile_ids.join(' '),
          render: (r) => h('span', { class: 'mono', title: r.compile_ids.join(' ') }, r.compile_ids.join(' ')) },
      ],
    }),
  });

  const top = groups[0];
  return h('div', null,
    h('h1', null, 'Graph breaks'),
    section(`${plural(total, 'graph break')}, ${plural(groups.length, 'distinct reason')}`,
      note('Most frequent: ', h('strong', null, top.reason), top.location ? [' at ', h('span', { class: 'mono' }, top.location)] : null,
        ` (${plural(top.count, 'time')}). A graph break is a dynamo_graph_break_reason entry; restarts are counted apart, on the Failures tab. `,
        'Graph breaks with the same reason, user line and raising frame are counted together; click one for details.'),
      tableBox),
    detailBox,
    torchHints);
}

/**
 * torch's hints, quoted: each with the breaks, restarts and failures whose message carried it,
 * their reasons and user lines, and links to their compiles. Null when the stream has none.
 */
function hintsSection(ctx, hints) {
  if (!hints.length) return null;
  ctx.expose('hints', hints.map((x) => ({
    hint: x.hint, kind: x.kind, graph_breaks: x.graph_breaks, restarts: x.restarts, failures: x.failures, compile_ids: x.compile_ids,
  })));
  const carried = (x) => [[x.graph_breaks, 'graph break'], [x.restarts, 'restart'], [x.failures, 'failure']]
    .filter(([n]) => n > 0).map(([n, word]) => plural(n, word)).join(', ');
  return h('section', { class: 'card an-hints' },
    h('h2', null, "Torch's hints"),
    note(`${plural(hints.length, 'distinct hint')} from torch's messages: its own "Hint:" lines, quoted as logged. `,
      'Each says which graph breaks, restarts and failures carried it.'),
    h('ol', { class: 'an-hint-list' }, hints.map((x, i) => h('li', { dataset: { hint: i } },
      h('blockquote', { class: 'an-hint-text' }, x.hint),
      h('div', { class: 'an-hint-meta' },
        h('strong', null, carried(x)),
        x.kind === 'report_to_pytorch' ? [' ', pill('asks for an issue report', null, 'torch asks to report or file an issue')] : null,
        x.reasons.length ? [' · ', h('span', { class: 'muted' }, x.reasons.join('; '))] : null,
        x.locations.length ? [' · at ', h('span', { class: 'mono' }, x.locations.join(', '))] : null),
      h('div', { class: 'an-idlist' }, x.compile_ids.map((id, j) =>
        [j ? ' ' : '', h('a', { href: ctx.href('compile', { id }) }, id)]))))));
}

/** One group of breaks: explanation, site page, compiles, and its first occurrence's full text. */
function detail(ctx, g) {
  return h('section', { class: 'card', dataset: { group: g.i } },
    h('h2', null, g.reason, ' ', pill(plural(g.count, 'break'))),
    facts([
      ['where', g.location ? h('span', { class: 'mono' }, g.location) : 'not logged'],
      ['raised in', g.raised_at ? [h('span', { class: 'mono' }, g.raised_at), h('span', { class: 'muted' }, ' (library code called from the line above)')] : null],
      ['explanation', g.explanation],
      ['more', externalLink(g.url, 'graph-break site: ', String(g.url).split('/').pop())],
      ['read from', g.source === 'restart_reasons' ? 'restart reasons (a bundle built before graph breaks were counted as dynamo_graph_break_reason entries alone)' : g.source],
      ['compiles', h('span', { class: 'an-idlist' }, g.compile_ids.map((id, i) =>
        [i ? ' ' : '', h('a', { href: ctx.href('compile', { id }) }, id)]))],
    ]),
    userStack(g),
    g.example_blob
      ? lazyDetails('Full text of the first occurrence (hints, user stack)', () => blobText(ctx, g.example_blob), { className: 'an-example' })
      : note('The log has no full text for this break.'));
}

/** The first occurrence's user code traceback: outermost first, library frames dimmed, the user line marked. */
function userStack(g) {
  const frames = g.traceback ?? [];
  if (!frames.length) return null;
  const at = frames.map((f) => f.user && `${f.file}:${f.line}` === g.location).lastIndexOf(true);
  return h('div', { class: 'an-user-stack' },
    h('h3', null, 'User code traceback'),
    stackList(frames, { library: (f) => !f.user, marked: at, name: 'break' }),
    note('Outermost call first. Frames in torch, site-packages and the standard library are dimmed; the user line the break happened in is marked.'));
}
