// dom.js: building DOM safely. Every string from a trace is user code and hostile: it only ever
// becomes a Text node or an attribute value set by setAttribute, never HTML. Nothing in the
// viewer uses innerHTML, insertAdjacentHTML or document.write.

/**
 * Creates an element. `props`: `class`, `style` (object), `dataset` (object), `on` (object of
 * event handlers), anything else is set with setAttribute (booleans: present when true).
 * Children: nodes, strings (as text), numbers, arrays, null/undefined/false (skipped).
 * @returns {HTMLElement}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value == null || value === false) continue;
    if (key === 'class') el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    else if (key === 'style') Object.assign(el.style, value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'on') for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else if (key === 'href' && !safeHref(String(value))) throw new Error(`refusing href ${value}`);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** Appends children (see {@link h}) to a node. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Links the viewer makes: in-page routes, blob: downloads, and http(s) URLs. */
function safeHref(href) {
  return href.startsWith('#') || href.startsWith('blob:') || /^https?:\/\//i.test(href) || href.startsWith('?');
}

/** Removes every child of `el` and appends `children`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// ---- formatting ------------------------------------------------------------------------------

const nf = new Intl.NumberFormat('en-US');

/** 1234567 → "1,234,567". */
export function count(n) {
  return n == null ? '–' : nf.format(n);
}

/** Bytes in binary units: 1536 → "1.5 KiB". */
export function bytes(n) {
  if (n == null) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${n} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** Seconds, readable at any scale: 0.0123 → "12.3 ms", 75 → "1m 15s". */
export function seconds(s) {
  if (s == null || Number.isNaN(s)) return '–';
  if (s < 1e-3) return `${(s * 1e6).toFixed(s < 1e-5 ? 1 : 0)} µs`;
  if (s < 1) return `${(s * 1e3).toFixed(s < 0.01 ? 2 : 1)} ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  return `${Math.floor(s / 60)}m ${Math.round(s % 60)}s`;
}

/** "3 compiles" / "1 compile". */
export function plural(n, word, many = `${word}s`) {
  return `${count(n)} ${n === 1 ? word : many}`;
}

// ---- small components ------------------------------------------------------------------------

/** Compile status → [label, css class]. Colours follow tlparse's stack trie. */
export const STATUS = {
  ok: ['ok', 'st-ok'],
  ok_with_restart: ['ok, restarted', 'st-restart'],
  restarted: ['restarted', 'st-restart'],
  empty_graph: ['empty graph', 'st-empty'],
  failed: ['failed', 'st-failed'],
  metrics_missing: ['metrics missing', 'st-missing'],
  compiled_autograd_capture: ['autograd capture', 'st-capture'],
};

/** What each status means, in a sentence: legends and badge tooltips. */
export const STATUS_MEANING = {
  ok: 'compiled a graph',
  ok_with_restart: 'compiled a graph after Dynamo restarted its analysis',
  restarted: 'an attempt Dynamo abandoned and restarted as the next attempt',
  empty_graph: 'captured no operations: the frame runs eagerly',
  failed: 'the compile failed',
  metrics_missing: 'no compilation metrics: the compile crashed or the log ended first',
  compiled_autograd_capture: 'compiled autograd capturing a backward graph; no metrics by design: ' +
    'the captured graph is compiled under its own [!N/frame/compile] ids',
};

/** A coloured status pill. */
export function statusBadge(status) {
  const [label, cls] = STATUS[status] ?? [String(status), 'st-missing'];
  return h('span', { class: ['badge', cls], title: STATUS_MEANING[status] ? `${label}: ${STATUS_MEANING[status]}` : label }, label);
}

/** A page section with a heading and optional note. */
export function section(title, ...children) {
  return h('section', { class: 'card' }, h('h2', null, title), ...children);
}

/** A muted explanation paragraph. */
export function note(...children) {
  return h('p', { class: 'note' }, ...children);
}

/** An empty state: "nothing here" with why. */
export function empty(message) {
  return h('p', { class: 'empty' }, message);
}

/** A key/value list. `pairs`: [[label, value], ...]; null values are skipped. */
export function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(([, v]) => v != null && v !== '').map(([k, v]) =>
    [h('dt', null, k), h('dd', null, v)]));
}

/** `<code>` text. */
export function code(text) {
  return h('code', null, text);
}

/** The URL of a trace string if it is an http(s) link, else null (never a javascript: URL). */
export function httpUrl(text) {
  if (typeof text !== 'string' || !/^https?:\/\//i.test(text)) return null;
  try {
    const u = new URL(text);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

/**
 * A link out of the viewer (new tab, no opener) when `url` is an http(s) URL; null otherwise, so
 * the caller shows the text instead. `children` default to the URL itself.
 */
export function externalLink(url, ...children) {
  const href = httpUrl(url);
  return href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, children.length ? children : href) : null;
}

/** Offers bytes as a file download (the browser saves it; nothing is rendered). */
export function download(filename, data, type = 'application/octet-stream') {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = h('a', { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// ---- virtualized table -----------------------------------------------------------------------

// Where tables keep their filter and sort: app.js installs a store backed by the URL (so Back,
// Forward and reload restore them). `claim(name)` → a key unique on the page; `get(key)` →
// {q, sort}; `set(key, {q, sort})`. Without a store (or a table name) the state lives in the table.
let tableStore = null;
export function setTableStore(store) { tableStore = store; }

/** Rewrites the page's URL in place (no history entry, no hashchange), keeping the history
 * entry's state: app.js keys each entry's scroll position by it. */
export function replaceUrl(url) {
  history.replaceState(history.state, '', url);
}

/**
 * A sortable, filterable table that renders only the rows in view, so tens of thousands of rows
 * stay smooth. Rows have a fixed height.
 *
 * @param {object} o
 * @param {{key: string, label: string, render?: (row) => any, value?: (row) => any,
 *   align?: 'left'|'right', width?: string, title?: string}[]} o.columns
 *   `value` gives what sorting and filtering use (default `row[key]`); `render` what is shown.
 * @param {any[]} o.rows
 * @param {number} [o.rowHeight] px (default 30)
 * @param {number} [o.maxRows] rows visible before scrolling (default 20)
 * @param {boolean} [o.filter] show a filter box (default: when more than 10 rows)
 * @param {string} [o.sort] initial sort column key; prefix '-' for descending
 * @param {(row) => void} [o.onRowClick]
 * @param {string} [o.name] test id (data-table attribute) and the key of its filter and sort
 *   in the URL (see setTableStore)
 *
 * Keyboard (keys.js): the root's `keynav` moves a selected row (drawn even when scrolled out of
 * the rendered window) and opens it: the row's first link, else `onRowClick`.
 */
export function dataTable(o) {
  const rowHeight = o.rowHeight ?? 30;
  const maxRows = o.maxRows ?? 20;
  const cols = o.columns;
  const valueOf = (c, r) => (c.value ? c.value(r) : r[c.key]);
  const template = cols.map((c) => c.width ?? 'minmax(6em, 1fr)').join(' ');
  // Every row is its own grid: one min-width for all keeps the columns aligned; narrower
  // screens scroll sideways.
  const minWidth = `${cols.reduce((sum, c) => sum + minEm(c.width), 0) + 2}em`;
  const stateKey = o.name && tableStore ? tableStore.claim(o.name) : null;
  const saved = stateKey ? tableStore.get(stateKey) : {};
  const initialSort = saved.sort && cols.some((c) => c.key === saved.sort.replace(/^-/, '')) ? saved.sort : o.sort;
  let sortKey = initialSort?.replace(/^-/, '') ?? null;
  let sortDesc = initialSort?.startsWith('-') ?? false;
  const hasFilter = o.filter ?? o.rows.length > 10;
  let query = hasFilter ? saved.q?.toLowerCase() ?? '' : '';
  let view = o.rows;
  let selected = -1; // index in `view` of the keyboard selection
  const save = () => stateKey && tableStore.set(stateKey, { q: filterBox?.value ?? '', sort: sortKey ? `${sortDesc ? '-' : ''}${sortKey}` : null });

  const body = h('div', { class: 'vt-body', role: 'rowgroup' });
  const spacer = h('div', { class: 'vt-spacer' });
  const viewport = h('div', { class: 'vt-viewport', style: { minWidth } }, spacer, body);
  const header = h('div', { class: 'vt-row vt-head', role: 'row', style: { gridTemplateColumns: template, minWidth } },
    cols.map((c) => h('div', {
      class: ['vt-cell', c.align === 'right' && 'num', 'sortable'], role: 'columnheader', title: c.title ?? 'Sort',
      on: { click: () => { sortDesc = sortKey === c.key ? !sortDesc : false; sortKey = c.key; selected = -1; refresh(); save(); } },
    }, c.label, h('span', { class: 'sort-mark' }))));
  const counter = h('span', { class: 'vt-count' });
  const filterBox = hasFilter
    ? h('input', { type: 'search', class: 'vt-filter', placeholder: 'Filter…', 'aria-label': 'Filter rows', value: query ? saved.q : null,
      on: { input: (e) => { query = e.target.value.toLowerCase(); selected = -1; refresh(); save(); } } })
    : null;
  const root = h('div', { class: 'vt', role: 'table', dataset: { table: o.name ?? '', keynav: '' } },
    filterBox || o.rows.length > maxRows ? h('div', { class: 'vt-tools' }, filterBox, counter) : null,
    h('div', { class: 'vt-scroll' }, header, viewport));

  function refresh() {
    view = o.rows;
    if (query) {
      view = view.filter((r) => cols.some((c) => String(valueOf(c, r) ?? '').toLowerCase().includes(query)));
    }
    if (sortKey) {
      const c = cols.find((x) => x.key === sortKey);
      const dir = sortDesc ? -1 : 1;
      view = [...view].sort((a, b) => dir * compare(valueOf(c, a), valueOf(c, b)));
    }
    for (const [i, el] of [...header.children].entries()) {
      el.lastChild.textContent = cols[i].key === sortKey ? (sortDesc ? ' ▾' : ' ▴') : '';
    }
    counter.textContent = view.length === o.rows.length ? plural(o.rows.length, 'row') : `${count(view.length)} of ${plural(o.rows.length, 'row')}`;
    spacer.style.height = `${view.length * rowHeight}px`;
    viewport.style.height = `${Math.min(view.length, maxRows) * rowHeight}px`;
    draw();
  }

  let drawn = '';
  function draw() {
    const first = Math.max(0, Math.floor(viewport.scrollTop / rowHeight) - 5);
    const last = Math.min(view.length, first + maxRows + 10);
    const key = `${first}:${last}:${view.length}:${sortKey}:${sortDesc}:${query}:${selected}`;
    if (key === drawn) return;
    drawn = key;
    body.style.transform = `translateY(${first * rowHeight}px)`;
    body.replaceChildren(...view.slice(first, last).map((r, i) => h('div', {
      class: ['vt-row', o.onRowClick && 'clickable', first + i === selected && 'kb-selected'], role: 'row',
      'aria-selected': first + i === selected ? 'true' : null,
      style: { gridTemplateColumns: template, minWidth, height: `${rowHeight}px` },
      on: o.onRowClick ? { click: () => o.onRowClick(r) } : undefined,
    }, cols.map((c) => h('div', { class: ['vt-cell', c.align === 'right' && 'num'], role: 'cell' },
      c.render ? c.render(r) : valueOf(c, r))))));
  }
  viewport.addEventListener('scroll', () => requestAnimationFrame(draw), { passive: true });
  refresh();
  root.keynav = {
    /** Moves the selection by `delta` rows (from nothing: to the first row), scrolled into view. */
    move(delta) {
      if (!view.length) return false;
      selected = stepSelection(selected, delta, view.length, rowHeight, viewport);
      draw();
      body.querySelector('.kb-selected')?.scrollIntoView({ block: 'nearest' });
      return true;
    },
    /** Opens the selected row: its first link, else the table's row action. */
    open() {
      if (selected < 0) return false;
      const link = body.querySelector('.kb-selected a[href]');
      if (link) link.click();
      else if (o.onRowClick) o.onRowClick(view[selected]);
      else return false;
      return true;
    },
    clear() { selected = -1; draw(); },
    get selected() { return selected; },
  };
  /** Shows `o.rows` again after the caller added rows to it (a table filled as data streams in). */
  root.update = () => { drawn = ''; refresh(); };
  return root;
}

/**
 * A scrolling list of fixed-height rows that draws only the rows in view (and a few around), so a
 * list of one row per rank stays light at thousands of ranks. `render(item, index)` makes a row;
 * it gets the row height. Returns the scroller; `props` go on it (e.g. class, role).
 * @param {{items: any[], rowHeight: number, maxHeight: number, render: (item: any, i: number) => HTMLElement, props?: object}} o
 */
export function virtualList({ items, rowHeight, maxHeight, render, props = {} }) {
  const body = h('div', { class: 'vl-body' });
  const spacer = h('div', { class: 'vl-spacer', style: { height: `${items.length * rowHeight}px` } }, body);
  const scroller = h('div', { ...props, class: ['vl', props.class], style: { maxHeight: `${maxHeight}px` } }, spacer);
  let drawn = '';
  const draw = () => {
    const top = scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / rowHeight) - 8);
    const last = Math.min(items.length, Math.ceil((top + (scroller.clientHeight || maxHeight)) / rowHeight) + 8);
    const key = `${first}:${last}`;
    if (key === drawn) return;
    drawn = key;
    body.style.transform = `translateY(${first * rowHeight}px)`;
    body.replaceChildren(...items.slice(first, last).map((item, k) => {
      const row = render(item, first + k);
      row.style.height = `${rowHeight}px`;
      return row;
    }));
  };
  scroller.addEventListener('scroll', () => requestAnimationFrame(draw), { passive: true });
  draw();
  return scroller;
}

/** The smallest width of a column track in em ('10em', 'minmax(12em, 3fr)'; 6 when unknown). */
function minEm(width) {
  const m = /^(?:minmax\()?([\d.]+)em/.exec(width ?? '');
  return m ? Number(m[1]) : 6;
}

/** Sort order: numbers numerically, null last, strings naturally ("[0/10]" after "[0/9]"). */
function compare(a, b) {
  if (a == null || a === '') return b == null || b === '' ? 0 : 1;
  if (b == null || b === '') return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

/**
 * Keyboard selection in a virtualized list of `count` rows of `rowHeight` px: the row `delta`
 * rows from `selected` (from none, -1: the first or the last), clamped; `viewport` is scrolled
 * so that it is drawn. Returns its index.
 */
export function stepSelection(selected, delta, count, rowHeight, viewport) {
  const next = selected < 0 ? (delta > 0 ? 0 : count - 1) : Math.max(0, Math.min(count - 1, selected + delta));
  const top = next * rowHeight;
  if (top < viewport.scrollTop) viewport.scrollTop = top;
  else if (top + rowHeight > viewport.scrollTop + viewport.clientHeight) viewport.scrollTop = top + rowHeight - viewport.clientHeight;
  return next;
}
