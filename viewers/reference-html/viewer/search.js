// search.js: the global search box of the header. Typing finds, in the selected stream, compile
// ids, compiled functions and files, artifact names, graph-break reasons, guards, failures and
// restarts (the `search` table, docs/tables/search.md, fetched on the first search only, with the
// tables that name the pages to link to); "Search the full text" then searches every artifact's
// text in a worker (search-worker.js), pack by pack, with progress, the hits arriving as they are
// found. Results are grouped by kind, each a link to its page; arrows and Enter pick one, Escape
// closes. Every text shown comes from the trace: text nodes only (h()). Loaded when the box is
// first focused or typed in, so the first paint does not fetch it.

import { h, replace, count, bytes, plural } from './dom.js';

/** Result groups, in the order shown: kind → heading. */
const KINDS = {
  compile: 'Compiles', function: 'Functions', file: 'Files', artifact: 'Artifacts', graph_break: 'Graph breaks',
  guard: 'Guards', failure: 'Failures', restart: 'Restarts',
};
/** Results listed per group; the rest are counted. */
const SHOWN = 8;
/** Compile links listed after a term found in several compiles. */
const CHIPS = 6;

/** What tests read: `window.__viewer.search`. */
const state = { query: '', loadMs: null, namesMs: null, groups: [], fullText: null };

/**
 * Makes `input` (the header's search field, drawn by app.js before this module loads) the
 * search box: adds the results panel beside it and searches what is typed already.
 * @param {HTMLInputElement} input
 * @param {{bundle: () => any, stream: () => string | undefined, table: (name: string, stream: string) => Promise<any>,
 *   href: (page: string, params?: object) => string}} o
 */
export function attach(input, o) {
  if (window.__viewer) window.__viewer.search = state;
  const panel = h('div', { class: 'search-panel', id: 'search-results', role: 'listbox', hidden: true });
  input.after(panel);
  const root = input.parentElement;
  const s = new Session(o, panel, input);
  let timer = 0;
  input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => s.search(input.value), 60); });
  input.addEventListener('focus', () => { if (input.value.trim()) s.open(); });
  input.addEventListener('keydown', (e) => s.key(e));
  document.addEventListener('pointerdown', (e) => { if (!root.contains(e.target)) s.close(); });
  window.addEventListener('hashchange', () => s.close());
  if (input.value.trim()) s.search(input.value);
}

/** The loaded data of one stream, the open worker, and what the panel shows. */
class Session {
  constructor(o, panel, input) {
    Object.assign(this, { o, panel, input, data: null, worker: null, workerFor: null, active: -1, fullWanted: false, ticket: 0 });
  }

  /** The search data of the selected stream, loaded once per stream. */
  load() {
    const stream = this.o.stream();
    if (this.data?.stream !== stream) {
      const started = performance.now();
      const t = (name) => this.o.table(name, stream).catch(() => null);
      this.data = {
        stream,
        ready: Promise.all([t('search'), t('compile_directory'), t('graph_breaks'), t('failures')]).then(([search, dir, breaks, failures]) => {
          state.loadMs = performance.now() - started;
          return prepare(search, dir, breaks, failures);
        }),
      };
    }
    return this.data.ready;
  }

  async search(query) {
    const ticket = ++this.ticket;
    state.query = query;
    this.cancelFullText();
    if (!query.trim()) { this.close(); return; }
    const d = await this.load();
    if (ticket !== this.ticket) return;
    const started = performance.now();
    state.groups = findNames(d, query.trim(), this.o.href);
    state.namesMs = performance.now() - started;
    state.fullText = null;
    this.render(d);
    if (this.fullWanted) this.fullText(d, query.trim());
  }

  render(d) {
    const groups = state.groups.map((g) => h('section', { class: 'sr-group', dataset: { kind: g.kind } },
      h('h3', null, KINDS[g.kind], h('span', { class: 'muted' }, ` ${count(g.total)}`)),
      g.items.map((item) => resultRow(item, this.o.href)),
      g.total > g.items.length ? h('p', { class: 'muted sr-more' }, `${count(g.total - g.items.length)} more: type more of the name`) : null));
    this.fullBox = h('section', { class: 'sr-group sr-full', dataset: { kind: 'full_text' } });
    this.renderFullText(d);
    replace(this.panel,
      groups.length ? groups : h('p', { class: 'muted sr-none' }, `No name matches “${state.query.trim()}”.`),
      this.fullBox);
    this.active = -1;
    this.open();
  }

  /** The full-text part: its button, or its progress and hits. */
  renderFullText(d) {
    const ft = state.fullText;
    if (!ft) {
      replace(this.fullBox, h('button', {
        type: 'button', class: 'sr-item sr-full-button', on: { click: () => { this.fullWanted = true; this.fullText(d, state.query.trim()); } },
      }, `Search the full text of ${plural(d.blobs.size, 'artifact')}`, h('span', { class: 'muted' }, '  (Ctrl+Enter)')));
      return;
    }
    const compiles = [...new Set(ft.hits.flatMap((x) => x.places.map((p) => p.compile).filter(Boolean)))];
    const status = ft.error ? `Full-text search failed: ${ft.error}`
      : `${ft.state === 'done' ? 'Full text' : 'Searching the full text'}: ${bytes(ft.done)} of ${bytes(ft.total)}` +
        ` · ${plural(ft.matches, 'match', 'matches')} in ${plural(ft.hits.length, 'artifact')}` +
        (compiles.length ? ` of ${plural(compiles.length, 'compile')}` : '');
    const shown = ft.hits.slice(0, 50);
    replace(this.fullBox,
      h('h3', null, 'Full text'),
      h('p', { class: 'muted sr-progress', role: 'status' }, status,
        ft.state === 'running' ? h('progress', { max: String(ft.total || 1), value: String(ft.done) }) : null),
      compiles.length ? h('p', { class: 'sr-chips' }, 'In ', chips(compiles, this.o.href, 20)) : null,
      shown.flatMap((hit) => hit.places.slice(0, 3).map((p) => h('a', {
        class: 'sr-item', role: 'option', href: this.o.href('artifact', { id: p.compile ?? undefined, name: p.name, blob: hit.blob, line: hit.line }),
      }, h('span', { class: 'sr-text' }, p.compile ? `${p.compile} ` : '', h('b', null, p.name), ` · line ${count(hit.line)}`,
        hit.count > 1 ? h('span', { class: 'muted' }, ` (${count(hit.count)} matches)`) : null),
      h('code', { class: 'sr-snippet' }, hit.snippet)))),
      ft.hits.length > shown.length ? h('p', { class: 'muted sr-more' }, `${count(ft.hits.length - shown.length)} more artifacts`) : null);
  }

  /** Starts the full-text search of `query` in a worker; results are drawn as they come. */
  fullText(d, query) {
    const worker = this.ensureWorker(d);
    const id = ++Session.lastId;
    state.fullText = { id, query, state: 'running', done: 0, total: 0, matches: 0, hits: [], ms: null, error: null };
    this.renderFullText(d);
    worker.onmessage = ({ data }) => this.fromWorker(d, data);
    worker.postMessage({ type: 'search', id, query });
  }

  fromWorker(d, m) {
    if (m.type === 'fetch') { this.answerFetch(m); return; }
    const ft = state.fullText;
    if (!ft || m.id !== ft.id) return;
    if (m.type === 'error') { Object.assign(ft, { state: 'error', error: m.message }); this.renderFullText(d); return; }
    for (const hit of m.hits ?? []) ft.hits.push({ ...hit, places: d.blobs.get(hit.blob) ?? [] });
    Object.assign(ft, { done: m.done, total: m.total, matches: m.matches, ms: m.ms, packs: m.packs });
    if (m.type === 'done') ft.state = 'done';
    this.renderFullText(d);
  }

  /** The worker reads every file through the page's bundle (its fetch knows local folders and tokens). */
  async answerFetch(m) {
    const bundle = this.o.bundle();
    try {
      const r = await bundle._fetch(m.url);
      this.worker.postMessage({ type: 'file', req: m.req, status: r.status, statusText: r.statusText, blob: r.ok ? await r.blob() : null });
    } catch (e) {
      this.worker.postMessage({ type: 'file', req: m.req, status: 502, statusText: String(e?.message ?? e), blob: null });
    }
  }

  ensureWorker(d) {
    const key = `${this.o.bundle().base}|${d.stream}`;
    if (!this.worker) this.worker = new Worker(new URL('./search-worker.js', import.meta.url), { type: 'module' });
    if (this.workerFor !== key) {
      this.worker.onmessage = ({ data }) => this.fromWorker(d, data);
      this.worker.postMessage({ type: 'open', base: String(this.o.bundle().base), blobs: [...d.blobs.keys()] });
      this.workerFor = key;
    }
    return this.worker;
  }

  cancelFullText() {
    if (state.fullText?.state === 'running') this.worker?.postMessage({ type: 'cancel' });
    state.fullText = null;
  }

  open() {
    this.panel.hidden = false;
    this.input.setAttribute('aria-expanded', 'true');
  }

  close() {
    this.panel.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    this.fullWanted = false;
  }

  /** Arrows move among the results, Enter opens one, Ctrl+Enter searches the full text, Escape closes. */
  key(e) {
    const items = [...this.panel.querySelectorAll('.sr-item')];
    if (e.key === 'Escape') { this.close(); this.input.blur(); return; }
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      this.panel.querySelector('.sr-full-button')?.click();
      return;
    }
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!items.length) return;
      this.open();
      this.active = (this.active + (e.key === 'ArrowDown' ? 1 : -1) + items.length) % items.length;
      items.forEach((el, i) => el.classList.toggle('sr-active', i === this.active));
      items[this.active].scrollIntoView({ block: 'nearest' });
    } else if (e.key === 'Enter') {
      const item = items[this.active] ?? items[0];
      if (!item) return;
      e.preventDefault();
      item.click();
      if (item.tagName === 'A') { this.close(); this.input.blur(); }
    }
  }
}
Session.lastId = 0;

/** One result: its text and kind, a link to its page, and the other compiles it is in. */
function resultRow(item, href) {
  return h('div', { class: 'sr-row' },
    h('a', { class: 'sr-item', role: 'option', href: item.href, title: item.text }, h('span', { class: 'sr-text' }, oneLine(item.text))),
    // A compile id found is its own link; any other term names the compiles it is in.
    item.kind !== 'compile' && item.compiles.length ? h('span', { class: 'sr-chips' }, chips(item.compiles, href, CHIPS)) : null);
}

/** Links to compiles, the first `max` of them. */
function chips(ids, href, max) {
  return [ids.slice(0, max).map((id) => h('a', { class: 'sr-chip', href: href('compile', { id }) }, id)),
    ids.length > max ? h('span', { class: 'muted' }, ` +${count(ids.length - max)}`) : null];
}

/** The first line of a text, cut to 200 characters. */
function oneLine(text) {
  const first = text.split('\n', 1)[0];
  return first.length > 200 ? `${first.slice(0, 200)}…` : first + (text.length > first.length ? ' …' : '');
}

/**
 * The search data of a stream, ready to match: the terms lower-cased once, blob → where it is an
 * artifact (for full-text hits), and what links need (graph-break groups, failure rows).
 */
export function prepare(search, dir, breaks, failures) {
  const compiles = search?.compiles ?? dir?.compiles.map((c) => c.compile_id) ?? [];
  const terms = (search?.terms ?? []).map((t) => ({ ...t, lower: t.text.toLowerCase(), ids: t.compiles.map((i) => compiles[i]) }));
  const blobs = new Map();
  const place = (blob, compile, name) => {
    if (!blob) return;
    if (!blobs.has(blob)) blobs.set(blob, []);
    blobs.get(blob).push({ compile, name });
  };
  for (const a of dir?.artifacts ?? []) place(a.blob, a.compile_id, a.name);
  for (const a of dir?.unattributed ?? []) place(a.blob, null, a.name);
  // Failures as the failures page orders them (failures first, then restarts): its `i`.
  const all = failures?.failures ?? [];
  const failureRows = [...all.filter((f) => f.kind === 'failure'), ...all.filter((f) => f.kind !== 'failure')];
  return { compiles, terms, blobs, dir, breaks: breaks?.breaks ?? [], failureRows };
}

/**
 * The results of a name search: groups in the order of KINDS, each with its first SHOWN items
 * and its total.
 */
export function findNames(d, query, href) {
  const q = query.toLowerCase();
  const groups = new Map();
  const add = (kind, item) => {
    if (!groups.has(kind)) groups.set(kind, { kind, items: [], total: 0 });
    const g = groups.get(kind);
    g.total++;
    if (g.items.length < SHOWN) g.items.push(item());
  };
  for (const id of d.compiles) {
    if (id.toLowerCase().includes(q)) add('compile', () => ({ kind: 'compile', text: id, compiles: [id], href: href('compile', { id }) }));
  }
  for (const t of d.terms) {
    if (t.lower.includes(q)) add(t.kind, () => ({ kind: t.kind, text: t.text, compiles: t.ids, href: target(d, t, href) }));
  }
  return Object.keys(KINDS).filter((k) => groups.has(k)).map((k) => groups.get(k));
}

/** The page that shows a term best. */
function target(d, t, href) {
  const id = t.ids[0];
  if (t.kind === 'artifact') {
    const a = id ? d.dir?.artifacts.find((x) => x.compile_id === id && x.name === t.text)
      : d.dir?.unattributed.find((x) => x.name === t.text);
    if (a?.blob) return href('artifact', { id: id ?? undefined, name: a.name, blob: a.blob });
  } else if (t.kind === 'graph_break') {
    const g = d.breaks.findIndex((x) => x.reason === t.text);
    if (g >= 0) return href('graph-breaks', { g });
  } else if (t.kind === 'failure' || t.kind === 'restart') {
    const i = d.failureRows.findIndex((f) => (t.kind === 'restart' ? f.kind !== 'failure' && f.reason === t.text
      : f.kind === 'failure' && (f.reason == null ? f.failure_type : `${f.failure_type}: ${f.reason}`) === t.text));
    if (i >= 0) return href('failures', { i });
  }
  return id ? href('compile', { id }) : href('compiles');
}
