// check-viewer.mjs: the conformance kit for viewers of tlparse bundles, run by scripts/check-viewer
// (which installs what it needs first). Usage: node check-viewer.mjs DIR [--only NAME]... [--pages N]
//
// DIR is a built static viewer (a directory whose index.html reads `?bundle=URL`) or a bundle
// directory (its shipped viewer, index.html and viewer/). The kit builds the public fixture bundles
// (fixtures-repo/, the hostile one included, with tlparse-build), serves DIR on one loopback origin
// and the bundles on another, as a static host does (no headers of its own: the policy must come
// from the page, as on GitHub Pages), opens DIR's index.html?bundle=URL of each in headless
// Chromium (and a bundle directory's own bundle, same-origin), follows in-app links page to page,
// and fails on:
// - a console error or an uncaught page error;
// - a trace string that runs: the hostile fixture's payloads set window.__pwned, change the title
//   to PWNED and open a dialog if they ever run; elements and attributes only injected markup makes;
// - any request to an origin other than the viewer's and the bundle's (made, or attempted and
//   blocked by the page's Content-Security-Policy): that is how a viewer leaks a trace;
// - no Content-Security-Policy stopping such requests: from inside the page (as an injected
//   script would), fetch, sendBeacon, WebSocket, an image, a script, a stylesheet and a frame aimed
//   at a third origin must each be blocked by the page's policy.
// Exit status: 0 it passes, 1 it fails (every reason printed), 2 the kit could not run.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = process.env.TLPARSE_REPO ?? path.resolve(HERE, '../..');
const BIN = process.env.TLPARSE_BUILD ?? path.join(REPO, 'target/release/tlparse-build');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** What the hostile fixture's payloads run if they ever run (make_hostile.py --js: no spaces or quotes). */
const HOSTILE_JS = 'top.__pwned=1,top.document.title=/PWNED/.source,alert(/PWNED/.source)';

/** The fixture bundles: name → fixtures-repo path, or a function(tmp) making the input. */
const FIXTURES = {
  hostile: (tmp) => {
    const log = path.join(tmp, 'hostile.log');
    execFileSync('python3', [path.join(REPO, 'fixtures-repo/scripts/make_hostile.py'), log, '--js', HOSTILE_JS], { stdio: 'ignore' });
    return log;
  },
  graph_breaks: 'torch-2.15/graph_breaks',
  failures: 'torch-2.15/failures',
  ranks: 'tlparse-tests/multi_rank_schedule',
};

/** The directive of the policy that governs each probe (a `-elem` variant counts too). */
const PROBE_DIRECTIVES = {
  fetch: 'connect-src', sendBeacon: 'connect-src', WebSocket: 'connect-src', image: 'img-src',
  script: 'script-src', stylesheet: 'style-src', frame: 'frame-src',
};

/** Pages visited from each start page, following in-app links (one per kind of link). */
const DEFAULT_PAGES = 8;

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.ico': 'image/x-icon', '.woff2': 'font/woff2', '.wasm': 'application/wasm', '.txt': 'text/plain; charset=utf-8',
};

function usage(message) {
  if (message) console.error(`check-viewer: ${message}`);
  console.error('usage: scripts/check-viewer DIR [--only FIXTURE]... [--pages N]\n' +
    `  DIR: a built static viewer (index.html reading ?bundle=URL) or a bundle directory\n  FIXTURE: ${Object.keys(FIXTURES).join(', ')}`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { dir: null, only: [], pages: DEFAULT_PAGES };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') {
      const name = argv[++i];
      if (!FIXTURES[name]) usage(`--only ${name}: not a fixture`);
      opts.only.push(name);
    } else if (a === '--pages') {
      opts.pages = Number.parseInt(argv[++i], 10);
      if (!(opts.pages >= 1)) usage('--pages N: N >= 1');
    } else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-') || opts.dir) usage(`unexpected argument ${a}`);
    else opts.dir = a;
  }
  if (!opts.dir) usage();
  return opts;
}

/**
 * Serves `root` as a static host does: a path ending in '/' serves its index.html, nothing else
 * added but `headers(req)`; answers OPTIONS (CORS preflights) with those headers. Resolves to
 * {url (with `host` as its host name), close()}.
 */
async function serveDir(root, host, headers = () => ({})) {
  const server = http.createServer((req, res) => {
    let rel;
    try { rel = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch { rel = '/'; }
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.join(root, rel);
    const extra = headers(req);
    if (req.method === 'OPTIONS') { res.writeHead(204, extra); return res.end(); }
    const stat = file.startsWith(root + path.sep) ? fs.statSync(file, { throwIfNoEntry: false }) : null;
    if (!stat?.isFile()) { res.writeHead(404, { 'Content-Type': 'text/plain', ...extra }); return res.end('not found\n'); }
    const body = fs.readFileSync(file);
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'Content-Length': body.length, ...extra });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  server.on('upgrade', (req, socket) => socket.destroy());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://${host}:${server.address().port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

/** A server on a third origin that only records what reaches it (the probes of the policy check). */
async function serveProbe() {
  const hits = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url);
    res.writeHead(200, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'text/plain' });
    res.end('');
  });
  server.on('upgrade', (req, socket) => { hits.push(req.url); socket.destroy(); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, hits, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

/** The origin a URL talks to, with ws(s) as http(s); null for URLs that reach no server. */
function originOf(url) {
  let u;
  try { u = new URL(url); } catch { return null; }
  if (!/^(https?|wss?):$/.test(u.protocol)) return null; // data:, blob:, about:, chrome-error:
  return `${u.protocol.replace(/^ws/, 'http')}//${u.host}`;
}

/** Which kind of in-app link `href` is: the page's path, the names of its query parameters and hash route. */
function linkKind(href) {
  const u = new URL(href);
  const hash = /^#\/?([^?]*)(?:\?(.*))?$/.exec(u.hash);
  const names = (q) => [...new URLSearchParams(q).keys()].sort().join(',');
  return `${u.pathname}?${names(u.search)}#${hash ? `${hash[1]}?${names(hash[2] ?? '')}` : ''}`;
}

const clip = (s, n = 160) => (s.length > n ? `${s.slice(0, n)}…` : s);

/**
 * Opens `start.url` in a fresh browser context, follows in-app links up to `pages` pages, checks
 * each, then probes the page's policy. Returns {pages, problems}.
 */
async function visit(browser, start, { viewerOrigin, bundleOrigin, probe, pages }) {
  const problems = new Set();
  const allowed = new Set([viewerOrigin, bundleOrigin]);
  let where = start.url;
  let probing = false; // while the policy is probed, what reaches for the probe's origin is expected
  const attempted = new Set(); // the violations of the page's policy seen while probing: {directive, blocked}
  const add = (what) => problems.add(`${what}  [at ${clip(where, 200)}]`);
  let bundleRead = false;
  let inflight = 0;
  let lastActivity = Date.now();

  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  // Violations of the page's policy: reported from the page as they happen (an init script runs
  // before the page's own and is not bound by its policy).
  await context.exposeBinding('__checkViewerViolation', (_source, v) => {
    const origin = originOf(v.blocked);
    if (probing && origin === probe.url) { attempted.add(v); return; }
    if (origin && !allowed.has(origin)) add(`tried to reach another origin: ${clip(v.blocked)} (blocked by the page's Content-Security-Policy, ${v.directive})`);
    else add(`the page's own Content-Security-Policy blocked ${v.directive} ${clip(v.blocked || '(inline)')}: the viewer breaks its own policy`);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__checkViewerViolation?.({ directive: e.effectiveDirective, blocked: e.blockedURI });
    });
  });
  const seenRequest = (url, how) => {
    const origin = originOf(url);
    if (!origin) return;
    if (url.startsWith(start.bundle) && /manifest/.test(url.slice(start.bundle.length))) bundleRead = true;
    if (allowed.has(origin) || (probing && origin === probe.url)) return;
    add(`${how} to another origin: ${clip(url)}`);
  };
  context.on('request', (r) => {
    seenRequest(r.url(), r.isNavigationRequest() ? 'navigation' : 'request');
    inflight++;
    lastActivity = Date.now();
  });
  const done = () => { inflight = Math.max(0, inflight - 1); lastActivity = Date.now(); };
  context.on('requestfinished', done);
  context.on('requestfailed', done);

  const page = await context.newPage();
  context.on('page', (p) => add(`opened another window: ${clip(p.url())}`));
  page.on('websocket', (ws) => seenRequest(ws.url(), 'WebSocket'));
  page.on('pageerror', (e) => add(`page error: ${clip(e.message, 300)}`));
  page.on('console', (m) => {
    if (m.type() !== 'error' || (probing && m.text().includes(new URL(probe.url).host))) return;
    // A browser asks every site for /favicon.ico: its 404 is the host's, not the viewer's doing.
    if (/\/favicon\.ico$/.test(m.location()?.url ?? '')) return;
    add(`console error: ${clip(m.text(), 300)}`);
  });
  page.on('dialog', (d) => {
    add(`a dialog opened (${d.type()}: ${clip(d.message())}): a trace string ran as script`);
    d.dismiss().catch(() => {});
  });

  /** Waits until no request has been in flight for 300 ms (at most 20 s). */
  const quiet = async () => {
    const until = Date.now() + 20_000;
    await page.waitForTimeout(100);
    while (Date.now() < until && (inflight > 0 || Date.now() - lastActivity < 300)) await page.waitForTimeout(50);
  };

  /** The checks of one page: trace strings that ran or made markup. */
  const inspect = async () => {
    for (const frame of page.frames()) {
      const ran = await frame.evaluate(() => ({ pwned: window.__pwned !== undefined, title: document.title })).catch(() => null);
      if (ran?.pwned) add('a trace string ran as script (window.__pwned is set)');
      if (ran && /PWNED/.test(ran.title)) add('a trace string ran as script (it changed the title)');
    }
    const injected = await page.evaluate(() => {
      const bad = [];
      const describe = (el) => `<${el.tagName.toLowerCase()}${[...el.attributes].map((a) => ` ${a.name}="${a.value.slice(0, 60)}"`).join('')}>`;
      for (const el of document.querySelectorAll('*')) {
        const attrs = [...el.attributes];
        if (attrs.some((a) => /^on/i.test(a.name)) ||
            attrs.some((a) => /^(href|src|action|formaction|xlink:href|data)$/i.test(a.name) && /^\s*(javascript|vbscript):/i.test(a.value)) ||
            (el.tagName === 'SCRIPT' && /__pwned/.test(el.textContent)) ||
            (el.hasAttribute('srcdoc') && /__pwned/.test(el.getAttribute('srcdoc'))) ||
            (el.tagName === 'IMG' && el.getAttribute('src') === 'x')) bad.push(describe(el));
      }
      return bad;
    }).catch(() => []);
    for (const el of injected) add(`an element made from trace text: ${clip(el, 200)}`);
  };

  /** The page's in-app links: same document (path), not downloads, not new windows. */
  const links = () => page.evaluate(() => [...document.querySelectorAll('a[href]')]
    .filter((a) => !a.hasAttribute('download') && !['_blank', '_new'].includes(a.target))
    .map((a) => a.href)
    .filter((href) => { const u = new URL(href); return u.origin === location.origin && u.pathname === location.pathname; }))
    .catch(() => []);

  let visited = 0;
  try {
    const response = await page.goto(start.url, { waitUntil: 'load', timeout: 60_000 });
    await quiet();
    await inspect();
    visited++;
    const kinds = new Set([linkKind(page.url())]);
    const queue = [];
    while (visited < pages) {
      for (const href of await links()) {
        const kind = linkKind(href);
        if (!kinds.has(kind)) { kinds.add(kind); queue.push(href); }
      }
      const next = queue.shift();
      if (!next) break;
      where = next;
      // Click it where the current page has it (the app routes it as a user's click would), else load it.
      const clicked = await page.evaluate((href) => {
        const a = [...document.querySelectorAll('a[href]')].find((x) => x.href === href);
        if (a) a.click();
        return !!a;
      }, next).catch(() => false);
      if (!clicked) await page.goto(next, { waitUntil: 'load', timeout: 60_000 });
      await quiet();
      await inspect();
      visited++;
    }
    if (!bundleRead) add(`the viewer never read the bundle at ${start.bundle}`);

    // The policy: from inside the page, as an injected script would, try to reach a third origin
    // every way a page can; each must be blocked by the page's Content-Security-Policy.
    where = page.url();
    const headerPolicy = response?.headers()['content-security-policy'];
    probing = true;
    const kinds2 = Object.keys(PROBE_DIRECTIVES);
    const policies = await page.evaluate(async ({ base, kinds }) => {
      const url = (k) => `${base}/probe/${k}`;
      const made = [];
      const tries = {
        fetch: (u) => fetch(u, { mode: 'no-cors' }).catch(() => {}),
        sendBeacon: (u) => { try { navigator.sendBeacon(u, 'x'); } catch { /* refused */ } },
        WebSocket: (u) => { try { new WebSocket(u.replace(/^http/, 'ws')); } catch { /* refused */ } },
        image: (u) => { const i = new Image(); i.src = u; },
        script: (u) => { const s = document.createElement('script'); s.src = u; document.head.append(s); made.push(s); },
        stylesheet: (u) => { const l = document.createElement('link'); l.rel = 'stylesheet'; l.href = u; document.head.append(l); made.push(l); },
        frame: (u) => { const f = document.createElement('iframe'); f.src = u; f.hidden = true; document.body.append(f); made.push(f); },
      };
      for (const k of kinds) await tries[k](url(k));
      await new Promise((r) => setTimeout(r, 500));
      for (const el of made) el.remove();
      return [...document.querySelectorAll('meta[http-equiv]')]
        .filter((m) => m.httpEquiv.toLowerCase() === 'content-security-policy' && m.parentNode === document.head)
        .map((m) => m.content);
    }, { base: probe.url, kinds: kinds2 });
    await page.waitForTimeout(200);
    const reached = (k) => probe.hits.some((h) => h.startsWith(`/probe/${k}`));
    // A violation names the URL refused, or only its origin (a frame's navigation): then its
    // directive says which probe it was.
    const blocked = (k) => [...attempted].some((v) => v.blocked.includes(`/probe/${k}`) ||
      (v.blocked.replace(/\/$/, '') === probe.url && v.directive.startsWith(PROBE_DIRECTIVES[k])));
    const open = kinds2.filter((k) => reached(k) || !blocked(k));
    if (open.length) {
      const all = [...(headerPolicy ? [`header: ${headerPolicy}`] : []), ...policies.map((p) => `meta: ${p}`)];
      add(`no Content-Security-Policy stops ${open.join(', ')} to another origin (${probe.url}); ` +
        (all.length ? `the page's policies: ${all.map((p) => `"${clip(p, 300)}"`).join('; ')}` : 'the page has no policy'));
    }
    probe.hits.length = 0;
  } catch (e) {
    add(`could not check the page: ${clip(String(e?.message ?? e), 300)}`);
  } finally {
    await context.close();
  }
  return { pages: visited, problems: [...problems] };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const dir = path.resolve(opts.dir);
  const isBundle = fs.existsSync(path.join(dir, 'manifest.json'));
  if (!fs.existsSync(path.join(dir, 'index.html'))) usage(`${opts.dir} has no index.html (a built viewer, or a bundle that ships one)`);
  for (const [what, file] of [['tlparse-build', BIN], ['Chromium', CHROMIUM]]) {
    if (!fs.existsSync(file)) usage(`${what} is missing at ${file} (scripts/check-viewer provides both)`);
  }

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'check-viewer-'));
  const servers = [];
  let browser;
  try {
    const names = opts.only.length ? opts.only : Object.keys(FIXTURES);
    const bundles = path.join(tmp, 'bundles');
    for (const name of names) {
      const src = FIXTURES[name];
      const input = typeof src === 'function' ? src(tmp) : path.join(REPO, 'fixtures-repo', src);
      execFileSync(BIN, [input, '-o', path.join(bundles, name), '-q', '--no-viewer'], { stdio: ['ignore', 'ignore', 'inherit'] });
    }
    const viewer = await serveDir(dir, '127.0.0.1');
    servers.push(viewer);
    // Another origin (localhost, not 127.0.0.1), which lets the viewer's origin read it (CORS).
    const bundleServer = await serveDir(bundles, 'localhost', () => ({
      'Access-Control-Allow-Origin': viewer.url,
      'Access-Control-Allow-Methods': 'GET, HEAD',
      'Access-Control-Allow-Headers': 'Authorization, Range, If-None-Match',
      'Access-Control-Expose-Headers': 'Content-Length, Content-Range, ETag',
      Vary: 'Origin',
    }));
    servers.push(bundleServer);
    const probe = await serveProbe();
    servers.push(probe);

    const starts = [];
    if (isBundle) starts.push({ label: 'its own bundle (same origin)', url: `${viewer.url}/`, bundle: `${viewer.url}/`, bundleOrigin: viewer.url });
    for (const name of names) {
      const bundle = `${bundleServer.url}/${name}/`;
      starts.push({ label: name, url: `${viewer.url}/?bundle=${encodeURIComponent(bundle)}`, bundle, bundleOrigin: bundleServer.url });
    }

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    console.log(`check-viewer: ${opts.dir}: ${isBundle ? 'a bundle directory (its shipped viewer)' : 'a static viewer'}, ` +
      `served at ${viewer.url}/; fixture bundles at ${bundleServer.url}/`);
    let failed = 0;
    for (const start of starts) {
      const r = await visit(browser, start, { viewerOrigin: viewer.url, bundleOrigin: start.bundleOrigin, probe, pages: opts.pages });
      console.log(`  ${r.problems.length ? 'FAIL' : 'ok  '}  ${start.label} (${r.pages} page${r.pages === 1 ? '' : 's'})`);
      for (const p of r.problems) console.log(`        - ${p}`);
      failed += r.problems.length;
    }
    if (failed) {
      console.log(`check-viewer: FAIL: ${failed} problem${failed === 1 ? '' : 's'} (above)`);
      process.exitCode = 1;
    } else {
      console.log('check-viewer: pass');
    }
  } finally {
    await browser?.close();
    for (const s of servers) await s.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`check-viewer: ${e?.stack ?? e}`);
  process.exit(2);
});
