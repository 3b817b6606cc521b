// app.js: the viewer's shell. Opens the bundle (this page's directory, or `?bundle=URL`, or a
// folder picked or dropped from this computer: local-folder.js), draws the header and navigation,
// and routes `#/<page>?<params>` to a module in pages/. The URL holds all state, so every view can
// be linked to, except which local folder is open (a URL cannot point at it).
//
// Test hook: `window.__viewer` exposes what is loaded and shown (see `viewer` below), so
// browser tests assert on data rather than pixels.

import { openBundle, openBundleFromFiles, liteManifestUrl, HttpError } from './bundle-loader.js';
import { zstdStream, decoder } from './zstd.js';
import { h, replace, plural, setTableStore, replaceUrl } from './dom.js';
import { PAGES, NAV, READS } from './pages/index.js';
import { acceptDrops, dropZonePanel, folderPicker } from './local-folder.js';
import { installFindKeys } from './find.js';
import { onProgress, loadingNote } from './progress.js';
import { fillTabs } from './tabs.js';
import { installKeys } from './keys.js';
import { installReveal } from './reveal.js';

const viewer = {
  /** 'loading' | 'ready' | 'error': the state of the current page. */
  state: 'loading',
  /** The current page name and its URL params (as a plain object). */
  page: null,
  params: {},
  /** The open Bundle (see bundle-loader.js), its manifest, and the zstd decoder in use. */
  bundle: null,
  /** The name of the local folder the bundle was read from; null when it came from a URL. */
  localFolder: null,
  manifest: null,
  decoder,
  /** What the current page loaded and shows, set by the page (`ctx.expose`). */
  data: {},
  /** The error message, when state is 'error'. */
  error: null,
  /** Pages rendered so far; tests wait for it to change. */
  renders: 0,
  /** performance.now() when the current page was ready (tests print it: ms from navigation start). */
  readyAt: null,
};
window.__viewer = viewer;

const app = document.getElementById('app');
let main;
let navEl;
let streamSelect;

/** The current route: `#/compile?s=rank0&id=[0/1]` → {page: 'compile', params}. */
function route() {
  const m = /^#\/([\w-]*)(?:\?(.*))?$/.exec(location.hash);
  const page = m?.[1] && PAGES[m[1]] ? m[1] : 'overview';
  return { page, params: new URLSearchParams(m?.[2] ?? '') };
}

/** A link to a page: keeps the selected stream unless `params` sets `s`. */
export function href(page, params = {}) {
  const p = new URLSearchParams();
  const current = route().params.get('s');
  if (current && !('s' in params)) p.set('s', current);
  for (const [k, v] of Object.entries(params)) if (v != null) p.set(k, v);
  const q = p.toString();
  return `#/${page}${q ? `?${q}` : ''}`;
}

function bundleUrl() {
  const given = new URLSearchParams(location.search).get('bundle');
  return given ? new URL(given, location.href) : new URL('./', location.href);
}

/** Run B of `?compare=URL` (resolved like `?bundle=`), or null: the Compare page opens it. */
function compareUrl() {
  const given = new URLSearchParams(location.search).get('compare');
  return given ? new URL(given, location.href) : null;
}

/** Loader options; with `token`, its fetch adds it to requests to `bundleUrl()`'s origin only. */
const openOptions = async (token, prefetched = null) => ({
  zstdStream: await zstdStream(),
  onProgress,
  ...(token ? { fetch: bearerFetch(bundleUrl().origin, token) } : prefetched ? { fetch: prefetched } : {}),
});

/**
 * A fetch that answers the first request for the (lite) manifest with a fetch started now: on a
 * cold load it then downloads while the zstd decoder (fzstd.js) loads, not after it.
 */
function prefetchManifest() {
  const url = liteManifestUrl(bundleUrl()).href;
  let early = fetch(url);
  early.catch(() => {}); // the loader reads (and reports) the failure when it asks
  return (input, init) => {
    const asked = input instanceof Request ? input.url : String(input);
    if (early && asked === url) {
      const r = early;
      early = null;
      return r;
    }
    return fetch(input, init);
  };
}

// A bundle server's bearer token (`tlparse-build proxy --token-file`), asked for by token.js: kept
// in this tab's sessionStorage under the bundle's origin, never in the page's URL.
const tokenKey = (origin) => `tlparse-token ${origin}`;
function storedToken(origin) {
  try { return sessionStorage.getItem(tokenKey(origin)); } catch { return null; }
}
function storeToken(origin, token) {
  try {
    if (token) sessionStorage.setItem(tokenKey(origin), token);
    else sessionStorage.removeItem(tokenKey(origin));
  } catch { /* storage disabled: the token lasts until this page is left */ }
}

/** A fetch adding `Authorization: Bearer token` to the requests whose URL's origin is `origin`, and to no other. */
function bearerFetch(origin, token) {
  return (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input), location.href);
    if (url.origin !== origin) return fetch(input, init);
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set('Authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

/** The server wants a bearer token: 401 with `WWW-Authenticate: Bearer` (exposed to this page). */
const needsToken = (e) => e instanceof HttpError && e.status === 401 && /^Bearer\b/i.test(e.wwwAuthenticate ?? '');

/** Whether this page's URL names a bundle (`?bundle=URL`). */
const given = () => new URLSearchParams(location.search).has('bundle');

async function start() {
  acceptDrops(openLocal);
  installFindKeys({ main: () => main, globalSearch: () => document.querySelector('input.global-search') });
  installReveal();
  installKeys({ go: (page) => { location.hash = href(page); }, tabs: () => navTabs });
  setTableStore(tableStore);
  if (app.querySelector('.boot')) replace(app, loadingNote('Loading the bundle', { cls: 'boot' }));
  // Cold load: the first page's code downloads with the manifest rather than after it.
  PAGES[route().page]().catch(() => {}); // a failure shows when the page is rendered
  const token = given() ? storedToken(bundleUrl().origin) : null;
  await openGiven(token, token ? null : prefetchManifest());
}

/**
 * Opens the bundle of this page's URL (sending `token` to its origin, if given) and shows it; on
 * a token challenge, the token form (`refused`: after a token); on another failure, the error.
 */
async function openGiven(token, prefetched = null) {
  let bundle;
  try {
    bundle = await openBundle(bundleUrl(), await openOptions(token, prefetched));
  } catch (e) {
    const origin = bundleUrl().origin;
    if (given() && needsToken(e)) {
      if (token) storeToken(origin, null);
      const { tokenForm } = await import('./token.js');
      replace(app, dropZonePanel(openLocal, tokenForm(origin, {
        refused: !!token,
        onToken: (typed) => {
          storeToken(origin, typed);
          Object.assign(viewer, { state: 'loading', error: null });
          replace(app, loadingNote('Loading the bundle', { cls: 'boot' }));
          openGiven(typed);
        },
      })));
      Object.assign(viewer, { state: 'ready', page: token ? 'token-refused' : 'token' });
      viewer.renders++;
      return;
    }
    if (!given() && /manifest\.lite\.json\.zst: HTTP 404/.test(e?.message)) {
      // Hosted without a bundle next to it (GitHub Pages, a CDN): a start page, not an error.
      replace(app, dropZonePanel(openLocal, `No bundle is served with this page (${liteManifestUrl(bundleUrl())}: HTTP 404).`));
      viewer.state = 'ready';
      viewer.page = 'open-folder';
    } else {
      replace(app, dropZonePanel(openLocal, errorBox(`Could not open the bundle at ${bundleUrl()}`, e, [
        'Serve the bundle directory over HTTP (tlparse-build serve BUNDLE) and open its address, or pass ',
        h('code', null, '?bundle=URL'), ' pointing at a directory that holds manifest.json, or open a bundle folder below.'])));
      setError(e);
    }
    viewer.renders++;
    return;
  }
  if (!viewer.bundle) window.addEventListener('hashchange', show);
  await showBundle(bundle);
}

/**
 * Opens the bundle in a picked or dropped folder (`files`: File[] or a promise of LocalFile[]) and
 * shows its overview; on failure, says why where the bundle would be, with the picker again.
 */
async function openLocal(files) {
  const target = main ?? app;
  Object.assign(viewer, { state: 'loading', error: null });
  replace(target, h('p', { class: 'loading' }, 'Reading the folder…'));
  let bundle;
  try {
    bundle = await openBundleFromFiles(await files, await openOptions());
  } catch (e) {
    console.warn(e);
    replace(target, dropZonePanel(openLocal, errorBox('Could not open this folder as a bundle', e)));
    setError(e);
    viewer.renders++;
    return;
  }
  if (!viewer.bundle) window.addEventListener('hashchange', show);
  // A new bundle: its own routes from the overview on (replaceState fires no hashchange).
  history.replaceState(null, '', `${location.pathname}${location.search}#/overview`);
  await showBundle(bundle);
}

/** Draws the shell (header, tabs, main) for `bundle`, then its current page. */
async function showBundle(bundle) {
  cache.clear(); // tables of the bundle shown before
  viewer.bundle = bundle;
  viewer.manifest = bundle.manifest;
  viewer.localFolder = bundle.localFolder;
  const m = bundle.manifest;
  const inputs = m.inputs.map((i) => i.path.split('/').pop());
  const name = inputs.length === 1 ? inputs[0] : `${inputs.length} logs`;
  document.title = `${bundle.localFolder ? `${bundle.localFolder} (local) · ` : ''}${name} · torch.compile trace`;

  streamSelect = m.streams.length > 1
    ? h('select', { class: 'stream-select', 'aria-label': 'Stream (rank)', on: { change: (e) => { location.hash = href(route().page, { s: e.target.value }); } } },
      m.streams.map((s) => h('option', { value: s.id }, streamLabel(m, s))))
    : null;
  navEl = h('nav', { class: 'tabs', 'aria-label': 'Pages' });
  main = h('main', { id: 'main' });
  replace(app,
    h('header', { class: 'top' },
      h('a', { class: 'brand', href: '#/overview' }, 'tlparse'),
      localBadge(bundle.localFolder),
      h('span', { class: 'title', title: m.inputs.map((i) => i.path).join('\n') },
        name, ' · ', plural(m.streams.length, 'stream')),
      h('span', { class: 'spacer' }),
      globalSearch(),
      streamSelect,
      folderPicker(openLocal, { label: 'Open folder…', compact: true }),
      themeToggle()),
    navEl,
    main);
  await show();
}

/**
 * The header's search box: the selected stream's names, and artifacts' full text. search.js,
 * which does the searching, loads on the box's first focus, so the first paint does not fetch it.
 */
function globalSearch() {
  const input = h('input', {
    type: 'search', class: 'global-search', placeholder: 'Search  /', autocomplete: 'off', spellcheck: 'false',
    'aria-label': 'Search this trace', role: 'combobox', 'aria-expanded': 'false', 'aria-controls': 'search-results',
  });
  const stream = () => viewer.manifest.streams.find((s) => s.id === route().params.get('s'))?.id ?? viewer.manifest.streams[0]?.id;
  const load = () => {
    input.removeEventListener('focus', load);
    import('./search.js').then((m) => m.attach(input, {
      bundle: () => viewer.bundle,
      stream,
      table: (name, streamId) => cached(`t:${streamId}:${name}`, () => viewer.bundle.table(streamId, name)),
      href,
    }));
  };
  input.addEventListener('focus', load);
  // Escape leaves the box even before search.js (which also closes its results) has loaded.
  input.addEventListener('keydown', (e) => { if (e.key === 'Escape') input.blur(); });
  return h('div', { class: 'gsearch' }, input);
}

/** "local folder NAME" in the header of a bundle read from disk: this page's URL does not point at it. */
function localBadge(folder) {
  if (!folder) return null;
  return h('span', {
    class: 'local-badge',
    title: 'Read from this computer by this page; nothing was uploaded. The page\'s address does not ' +
      'point at this folder: links to it will not open it elsewhere, and after a reload, open the folder again.',
  }, 'local folder ', h('b', null, folder));
}

/** Each manifest's cross-rank labels by stream id (a lookup per label, not a scan of the members). */
const memberLabels = new WeakMap();

/** "rank 3" from the cross-rank labels when there are any, else the stream id. */
export function streamLabel(m, s) {
  if (!memberLabels.has(m)) memberLabels.set(m, new Map((m.cross_rank?.members ?? []).map((x) => [x.stream, x.label])));
  return memberLabels.get(m).get(s.id) ?? (s.rank != null ? `rank ${s.rank}` : s.id);
}

// Back returns to where a page was left: each history entry gets a key in history.state, and
// the position of the entry shown is recorded as it scrolls (not while a page loads, when the
// page is short), then restored after its page renders again.
const scrolled = new Map();
let entryKey = null;
history.scrollRestoration = 'manual';
addEventListener('scroll', () => {
  // Only for the entry whose page is shown: after Back or Forward, history.state is already the
  // next entry's until its hashchange reaches show().
  if (viewer.state !== 'ready' || !entryKey || history.state?.scrollKey !== entryKey) return;
  scrolled.set(entryKey, window.scrollY);
}, { passive: true });

/** Records where the page being left is: it is still on screen, and a scroll event from the last
 * frame may not have been dispatched yet (it would arrive while the next page loads, and be
 * dropped). */
function leaveEntry() {
  if (entryKey && viewer.state === 'ready') scrolled.set(entryKey, window.scrollY);
}

/** Keys the current history entry (once) and returns where it was left (0 when new). */
function scrollEntry() {
  if (!history.state?.scrollKey) {
    history.replaceState({ ...history.state, scrollKey: `${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}` }, '');
  }
  entryKey = history.state.scrollKey;
  return scrolled.get(entryKey) ?? 0;
}

let showing = 0;
async function show() {
  const { page, params } = route();
  const m = viewer.manifest;
  const stream = m.streams.find((s) => s.id === params.get('s')) ?? m.streams[0];
  if (streamSelect) streamSelect.value = stream?.id;
  const tabs = NAV.filter((n) => !n.when || n.when(m, stream));
  navTabs = tabs.map((n) => n.page);
  fillTabs(navEl, tabs.map((n) => {
    const active = n.page === page || n.also?.includes(page);
    return h('a', { href: href(n.page), class: active ? 'active' : null, 'aria-current': active ? 'page' : null }, n.label);
  }));

  const ticket = ++showing;
  leaveEntry();
  Object.assign(viewer, { state: 'loading', page, params: Object.fromEntries(params), data: {}, error: null, readyAt: null });
  tableKeys.clear();
  const scrollTo = scrollEntry();
  const ctx = context(page, params, stream);
  const container = h('div', { class: 'page', dataset: { page } }, loadingNote()); // before the fetches it reports
  prefetch(ctx, READS[page]);
  replace(main, container);
  try {
    const node = await (await PAGES[page]()).render(ctx);
    if (ticket !== showing) return; // a newer navigation won
    replace(container, node);
    viewer.state = 'ready';
    viewer.readyAt = performance.now();
  } catch (e) {
    if (ticket !== showing) return;
    console.error(e);
    fail(container, `This page could not be shown`, e);
    viewer.state = 'error';
    viewer.error = String(e?.message ?? e);
  }
  window.scrollTo(0, scrollTo);
  viewer.renders++;
}

let navTabs = [];

// Tables' filter and sort (dom.js dataTable) live in the route's params, `<table>.q` and
// `<table>.sort`, written with replaceState: typing adds no history entry, and Back, Forward and
// reload restore them. A second table of the same name drawn in the same pass is `<name>2`, and so
// on; a table drawn again later (a master-detail page redrawing its list) keeps its name.
const tableKeys = new Map();
const tableStore = {
  claim(name) {
    if (!tableKeys.size) queueMicrotask(() => tableKeys.clear()); // one synchronous pass
    const n = (tableKeys.get(name) ?? 0) + 1;
    tableKeys.set(name, n);
    return n === 1 ? name : `${name}${n}`;
  },
  get(key) {
    const p = route().params;
    return { q: p.get(`${key}.q`) ?? '', sort: p.get(`${key}.sort`) };
  },
  set(key, { q, sort }) {
    const { page, params } = route();
    for (const [k, v] of [[`${key}.q`, q], [`${key}.sort`, sort]]) {
      if (v) params.set(k, v); else params.delete(k);
    }
    const query = params.toString();
    replaceUrl(`${location.pathname}${location.search}#/${page}${query ? `?${query}` : ''}`);
    viewer.params = Object.fromEntries(params);
  },
};

/** Starts loading the tables a page reads (into the cache its own reads hit); failures show there. */
function prefetch(ctx, names = []) {
  for (const name of names) {
    if (name === 'stacks') { if (ctx.stream?.stacks) ctx.stacks().catch(() => {}); }
    else if (ctx.stream?.tables?.[name]) ctx.table(name).catch(() => {});
  }
}

/** What a page gets: the bundle, the route, the selected stream, cached table loads. */
function context(page, params, stream) {
  const b = viewer.bundle;
  return {
    bundle: b,
    manifest: b.manifest,
    page,
    params,
    stream,
    href,
    streamLabel: (s) => streamLabel(b.manifest, s),
    /** A stream table (null when the stream has none). */
    table: (name, streamId = stream?.id) => cached(`t:${streamId}:${name}`, () => b.table(streamId, name)),
    /** A cross-rank table (null when absent). */
    crossTable: (name) => cached(`x:${name}`, () => b.crossRankTable(name)),
    /** The stream's stack table. */
    stacks: (streamId = stream?.id) => b.stacks(streamId),
    /** Run B of `?compare=URL`, opened with the same loader once (null without compare=). */
    compareBundle: () => (compareUrl() ? cached('compare', async () => openBundle(compareUrl(), await openOptions())) : null),
    compareUrl: () => compareUrl()?.href ?? null,
    /** Puts `value` in `window.__viewer.data[key]` for tests. */
    expose: (key, value) => { viewer.data[key] = value; },
  };
}

// Tables are immutable: keep the last few parsed ones (they can be several MB).
const cache = new Map();
function cached(key, load) {
  if (!cache.has(key)) {
    const p = load();
    p.catch(() => cache.delete(key));
    cache.set(key, p);
    if (cache.size > 24) cache.delete(cache.keys().next().value);
  }
  return cache.get(key);
}

function fail(container, title, error, help) {
  replace(container, errorBox(title, error, help));
  setError(error);
}

function errorBox(title, error, help) {
  return h('div', { class: 'error-box', role: 'alert' },
    h('h2', null, title),
    h('pre', null, String(error?.message ?? error)),
    help ? h('p', null, help) : null);
}

function setError(error) {
  viewer.state = 'error';
  viewer.error = String(error?.message ?? error);
}

function themeToggle() {
  const root = document.documentElement;
  const current = () => root.dataset.theme ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
  const button = h('button', { class: 'theme-toggle', type: 'button', title: 'Switch light/dark theme', 'aria-label': 'Switch theme' });
  const label = () => { button.textContent = current() === 'dark' ? '☀' : '☾'; };
  button.addEventListener('click', () => {
    root.dataset.theme = current() === 'dark' ? 'light' : 'dark';
    try { localStorage.setItem('tlparse-theme', root.dataset.theme); } catch { /* storage disabled */ }
    label();
  });
  label();
  return button;
}

start();
