// analysis.js: small pieces shared by the analysis pages (recompiles, graph breaks, failures,
// sizes, time, volume): proportional bars, compile-id parsing, lazily loaded <details>, stack
// rendering, in-page selection kept in the URL. Builds DOM only through h().

import { h, dataTable, replaceUrl, note } from './dom.js';
import { loadingNote } from './progress.js';

/**
 * A horizontal bar filled to `fraction` (0..1), optionally with a darker `inner` part (e.g. self
 * time inside total time). Scales are linear; a non-zero value is always at least a sliver.
 * @param {number} fraction @param {{inner?: number, title?: string, tone?: string}} [o]
 */
export function bar(fraction, { inner = null, title = null, tone = null } = {}) {
  const pct = (f) => `${f > 0 ? Math.max(0.4, Math.min(100, f * 100)) : 0}%`;
  return h('span', { class: ['an-bar', tone && `an-bar-${tone}`], title },
    h('span', { class: 'an-bar-fill', style: { width: pct(fraction) } },
      inner != null ? h('span', { class: 'an-bar-inner', style: { width: pct(fraction > 0 ? inner / fraction : 0) } }) : null));
}

/**
 * A legend of bar colours, drawn with the bars' own classes so it reads right in either theme:
 * [['total', 'wall time in the phase'], ['self', 'self time, not in nested phases']].
 * `fill` is the bar's fill, `inner` its inner part (see {@link bar}).
 */
export function barLegend(...items) {
  return h('p', { class: 'an-legend', role: 'list' }, items.map(([part, label]) => h('span', { class: 'an-legend-item', role: 'listitem', dataset: { part } },
    h('span', { class: 'an-bar an-swatch', 'aria-hidden': 'true' },
      h('span', { class: 'an-bar-fill', style: { width: '100%' } }, part === 'inner' ? h('span', { class: 'an-bar-inner', style: { width: '100%' } }) : null)),
    label)));
}

/** A share as a percentage: 0.1234 → "12.3%", tiny shares → "<0.1%". */
export function percent(fraction) {
  if (!fraction) return '0%';
  if (fraction < 0.001) return '<0.1%';
  return `${(fraction * 100).toFixed(fraction < 0.1 ? 1 : 0)}%`;
}

/**
 * The frame a compile id belongs to: "[0/1]" → "0", "[0/0_1]" → "0", "[!0/1/2]" → "!0/1"
 * (compiled autograd id 0, frame 1). Null for an id without a frame ("[-/-]", null).
 * @param {string | null} compileId
 */
export function frameKey(compileId) {
  const m = /^\[?(.*?)\]?$/.exec(compileId ?? '');
  const parts = (m?.[1] ?? '').split('/');
  if (parts.length < 2 || parts.some((p) => p === '' || p === '-')) return null;
  return parts.slice(0, -1).join('/');
}

/** The first non-blank line of a text, whitespace runs collapsed (for one-line table cells). */
export function firstLine(text) {
  const line = String(text ?? '').split('\n').find((l) => l.trim()) ?? '';
  return line.replace(/\s+/g, ' ').trim();
}

/**
 * A <details> whose body is built only when first opened (`load` returns a node or a promise of
 * one); loading errors are shown in place. `open` opens (and loads) it at once.
 * @param {any} summary @param {() => any} load @param {{open?: boolean, className?: string}} [o]
 */
export function lazyDetails(summary, load, { open = false, className = null, name = null } = {}) {
  const body = h('div', { class: 'an-details-body' });
  const details = h('details', { class: ['an-details', className], dataset: name ? { name } : undefined }, h('summary', null, summary), body);
  let started = false;
  const start = () => {
    if (started || !details.open) return;
    started = true;
    body.replaceChildren(loadingNote()); // bytes of what it fetches, past 300 ms
    Promise.resolve().then(load).then(
      (node) => body.replaceChildren(node),
      (e) => body.replaceChildren(h('p', { class: 'error' }, String(e?.message ?? e))));
  };
  details.addEventListener('toggle', start);
  if (open) { details.open = true; start(); }
  return details;
}

/** A blob's text in a scrollable <pre> (fetched by the caller's `lazyDetails`). */
export async function blobText(ctx, blobId) {
  return h('pre', { class: 'an-pre' }, await ctx.bundle.text(blobId));
}

/**
 * A Python stack (innermost last, as in a traceback) from the stream's stack table.
 * @param {{frames: any[], stacks: number[][]}} table @param {number} id
 */
export function stackView(table, id) {
  const frames = table?.stacks?.[id];
  if (!frames) return h('p', { class: 'empty' }, `Stack ${id} is not in the stack table.`);
  return h('ol', { class: 'an-stack' }, frames.map((i) => {
    const f = table.frames[i] ?? {};
    return h('li', null,
      h('span', { class: 'an-stack-name' }, f.name ?? '?'), ' ',
      h('span', { class: 'an-stack-file' }, `${f.file ?? '?'}:${f.line ?? '?'}`),
      f.loc ? h('div', { class: 'an-stack-loc' }, f.loc) : null);
  }));
}

/**
 * Keeps an in-page selection in the URL without re-rendering the page (so the scroll position
 * stays): replaces the current history entry with `ctx.href(page, params)`.
 */
export function keepInUrl(ctx, params) {
  // From the URL as it is now: it may hold more than ctx.params (tables' filter and sort, app.js).
  const live = new URLSearchParams(location.hash.split('?')[1] ?? '');
  for (const [k, v] of Object.entries(params)) {
    for (const p of [ctx.params, live]) {
      if (v == null) p.delete(k);
      else p.set(k, String(v));
    }
  }
  replaceUrl(ctx.href(ctx.page, Object.fromEntries(live)));
}

/**
 * A table whose rows choose what a detail box shows: the chosen row's `i` is kept in the URL as
 * `param` and exposed to tests as `exposeAs`. `tableOptions(isSelected)` gives the dataTable
 * options but `rows` and `onRowClick`; `detail(row)` builds the detail.
 * @returns {{ tableBox: HTMLElement, detailBox: HTMLElement }}
 */
export function masterDetail(ctx, { rows, param, exposeAs, tableOptions, detail }) {
  const tableBox = h('div');
  const detailBox = h('div');
  const show = (selected) => {
    ctx.expose(exposeAs, selected.i);
    tableBox.replaceChildren(dataTable({
      ...tableOptions((r) => r === selected),
      rows,
      onRowClick: (r) => {
        keepInUrl(ctx, { [param]: r.i });
        show(r);
      },
    }));
    detailBox.replaceChildren(detail(selected));
  };
  show(rows[Number(ctx.params.get(param))] ?? rows[0]);
  return { tableBox, detailBox };
}

/** A small muted count pill ("+2", "3 compiles"). */
export function pill(text, tone = null, title = null) {
  return h('span', { class: ['an-pill', tone && `an-pill-${tone}`], title }, text);
}

/**
 * A long path (or path:line) shortened from the left, keeping the file name and line, which are
 * what matter: "/home/user/project/scenarios/model.py:18" → "…/scenarios/model.py:18".
 * @param {string | null} text @param {number} [max] characters
 */
export function shortPath(text, max = 42) {
  if (text == null || text.length <= max) return text;
  const parts = text.split('/');
  let out = parts.pop();
  while (parts.length && out.length + parts[parts.length - 1].length + 3 <= max) out = `${parts.pop()}/${out}`;
  return `…/${out}`;
}

/** A path cell: shortened from the left, the whole path on hover. */
export function pathCell(text, max) {
  if (text == null) return h('span', { class: 'an-muted' }, '–');
  const short = shortPath(text, max);
  // data-full: reveal.js shows the whole path on a click (the tooltip alone needs a mouse).
  return h('span', { class: 'mono', title: text, dataset: short === text ? undefined : { full: text } }, short);
}

/** Text on one line (whitespace runs collapsed), for table cells; the cell's ellipsis cuts it. */
export function oneLine(text, max = 400) {
  const line = String(text ?? '').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/**
 * Where a step's reasons come from, when it is worth saying: the metrics (first reason only), or
 * an earlier attempt of the frame compile (Dynamo restarted it after logging the reason).
 */
export function reasonSource(c) {
  const parts = [];
  if (c.reasons_from === 'compilation_metrics') {
    parts.push('From compilation_metrics.recompile_reason: the log has no recompile_reasons artifact for this compile, and the metrics hold only the first failed guard.');
  }
  if (c.reasons_logged_on && c.reasons_logged_on !== c.compile_id) {
    parts.push(`Logged on ${c.reasons_logged_on}, which Dynamo restarted; ${c.compile_id} is the same frame compile's final attempt and shares its reason.`);
  }
  return parts.length ? note(parts.join(' ')) : null;
}
