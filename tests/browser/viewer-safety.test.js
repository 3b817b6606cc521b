// Safety test of the whole viewer: every route of pages/index.js is opened on bundles of
// fixtures-repo/hostile/hostile.log (every trace string is an HTML/JS injection payload, see
// fixtures-repo/scripts/make_hostile.py) and of a 2-rank copy of it. Nothing may run, no element
// may come from trace text, and the payloads must show as plain text. The checks are generic, so
// they cover whatever each page renders and get stronger as pages are filled in.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setup, open, go, shot, fixture, REPO, TIMEOUT } from './viewer-harness.js';

// The payloads of make_hostile.py.
const SCRIPT = '<script>window.__pwned=1</script>';
const IMG = '<img src=x onerror="window.__pwned=1">';
const SVG = '"><svg onload=window.__pwned=1>';
const TEXTAREA = '</textarea><script>window.__pwned=1</script>';
const JS_URL = 'javascript:window.__pwned=1';
const IFRAME = '<iframe src="javascript:window.__pwned=1"></iframe>';
const PAYLOADS = { SCRIPT, IMG, SVG, TEXTAREA, JS_URL, IFRAME };

/**
 * What a finished page must show of hostile.log, as text (any one of the listed payloads): the
 * names, reasons and payloads make_hostile.py put there. Stub pages ("not written yet") are
 * exempt until they land.
 */
const EXPECTED = [
  [/^#\/compiles\?/, ['SCRIPT']], // co_name, co_filename
  [/^#\/compile\?.*id=%5B0%2F0%5D/, ['SCRIPT']], // co_name, stack frames, graph-break reason
  [/^#\/compile\?.*id=%5B1%2F0%5D/, ['IMG', 'SCRIPT']], // fail_reason, fail_type
  [/^#\/artifact\?.*blob=[0-9a-f]{32}/, ['SCRIPT', 'IMG', 'SVG', 'TEXTAREA', 'IFRAME']], // every payload holds some
  [/^#\/recompiles\?/, ['SCRIPT']], // co_name, recompile reason
  [/^#\/graph-breaks\?/, ['SCRIPT']], // the reason
  [/^#\/failures\?/, ['IMG', 'SCRIPT']], // fail_reason, fail_type, restart reason
  [/^#\/trie\?/, ['SCRIPT', 'IMG', 'SVG']], // stack frame names and code
];

/** The route names registered in pages/index.js (read from its source: page modules are browser code). */
function routeNames() {
  const src = fs.readFileSync(path.join(REPO, 'viewers/reference-html/viewer/pages/index.js'), 'utf8');
  const body = /export const PAGES = \{([\s\S]*?)\n\};/.exec(src)[1];
  return [...body.matchAll(/^\s*(?:'([\w-]+)'|(\w+))\s*[:,]/gm)].map((m) => m[1] ?? m[2]);
}
const PAGES = Object.fromEntries(routeNames().map((n) => [n, true]));

let env;
before(async () => {
  env = await setup({
    hostile: fixture('hostile/hostile.log'),
    // Two ranks: the same log with "rank": 0 / 1 in the envelopes; rank 1's output graph of [0/0]
    // differs in one line (it holds IMG), so the rank diff has something hostile to show.
    hostile_ranks: (tmp) => {
      const dir = path.join(tmp, 'hostile_ranks');
      fs.mkdirSync(dir);
      for (const r of [0, 1]) {
        execFileSync('python3', [path.join(REPO, 'fixtures-repo/scripts/make_hostile.py'),
          path.join(dir, `dedicated_log_torch_trace_rank_${r}.log`), '--rank', String(r)], { stdio: 'ignore' });
      }
      return dir;
    },
  });
});
after(() => env?.close());

test('the committed hostile.log is what make_hostile.py writes', () => {
  const out = path.join(env.tmp, 'regenerated.log');
  execFileSync('python3', [path.join(REPO, 'fixtures-repo/scripts/make_hostile.py'), out], { stdio: 'ignore' });
  assert.ok(fs.readFileSync(out).equals(fs.readFileSync(fixture('hostile/hostile.log'))), 'run fixtures-repo/scripts/make_hostile.py and scripts/make_manifest.py');
});

/** Opens a page with a dialog catcher; returns the harness handle plus `dialogs`. */
async function openWatched(url) {
  const handle = await open(env, url);
  handle.dialogs = [];
  handle.page.on('dialog', (d) => { handle.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  // Dialogs fired before the listener was attached would have blocked the page; re-check anyway.
  return handle;
}

/** Everything in the DOM that could only come from injected markup. */
function injected(page) {
  return page.evaluate(() => {
    const bad = [];
    const describe = (el) => `<${el.tagName.toLowerCase()}${[...el.attributes].map((a) => ` ${a.name}="${a.value}"`).join('')}>`;
    for (const el of document.querySelectorAll('img, iframe, frame, object, embed, base, form, video, audio, svg script')) bad.push(describe(el));
    for (const el of document.querySelectorAll('svg')) if (el.querySelector('script, foreignObject')) bad.push(describe(el));
    for (const el of document.body.querySelectorAll('meta, link, style')) bad.push(describe(el));
    // The viewer's scripts are the two in index.html's head: boot.js and app.js (no inline one).
    for (const s of document.scripts) {
      const ours = s.parentNode === document.head && /\/viewer\/(boot|app)\.js$/.test(s.src);
      if (!ours) bad.push(describe(s));
    }
    if (document.scripts.length !== 2) bad.push(`${document.scripts.length} scripts`);
    for (const el of document.querySelectorAll('*')) {
      for (const a of el.attributes) {
        if (/^on/i.test(a.name)) bad.push(describe(el));
        if (/^(href|src|action|formaction|xlink:href|srcdoc)$/i.test(a.name) && /^\s*(javascript|data|vbscript):/i.test(a.value) &&
          !(el.tagName === 'LINK' && a.value === 'data:,')) bad.push(describe(el));
      }
    }
    return bad;
  });
}

/** Which payloads the page shows as text, and whether any shows up mangled (cut at a tag). */
async function shownPayloads(page) {
  const text = await page.evaluate(() => document.body.innerText + '\n' + [...document.querySelectorAll('[title]')].map((e) => e.title).join('\n'));
  return Object.entries(PAYLOADS).filter(([, p]) => text.includes(p)).map(([k]) => k);
}

/** Visits every hash in `routes` in one page, asserting safety on each; returns what each showed. */
async function visitAll(url, routes, { strict }) {
  const h = await openWatched(url);
  const shown = {};
  try {
    for (const hash of routes) {
      const s = await go(h.page, hash);
      await h.page.waitForTimeout(50); // sections that load after the first paint (diagnostics)
      // Type a payload into the page's first filter box: filtering must not inject either.
      const box = h.page.locator('input[type="search"]').first();
      if (await box.count()) { await box.fill(SCRIPT); await h.page.waitForTimeout(20); await box.fill(''); }
      const where = `${hash}`;
      assert.equal(await h.page.evaluate(() => window.__pwned), undefined, `${where}: window.__pwned was set`);
      assert.deepEqual(h.dialogs, [], `${where}: a dialog fired`);
      assert.deepEqual(await injected(h.page), [], `${where}: markup from trace text`);
      if (strict(hash)) {
        assert.deepEqual(h.errors, [], `${where}: console errors`);
        assert.equal(s.state, 'ready', `${where}: ${s.error}`);
      }
      h.errors.length = 0;
      shown[hash] = await shownPayloads(h.page);
      const stub = await h.page.getByText('This page is not written yet.').count() > 0;
      const want = strict(hash) && !stub && EXPECTED.find(([re]) => re.test(hash))?.[1];
      if (want) assert.ok(want.some((k) => shown[hash].includes(k)), `${where}: shows none of ${want.join(', ')} as text`);
    }
  } finally {
    await h.close();
  }
  return shown;
}

test('every page on the hostile log: nothing runs, nothing injected, payloads shown as text', { timeout: TIMEOUT * 3 }, async () => {
  const { page, viewer, errors, close } = await openWatched(env.url('hostile'));
  assert.deepEqual(errors, []);
  const s = viewer.manifest.streams[0].id;
  const dir = await page.evaluate((id) => window.__viewer.bundle.table(id, 'compile_directory'), s);
  await close();
  const ids = dir.compiles.map((c) => c.compile_id);
  assert.deepEqual(ids, ['[0/0]', '[0/1]', '[1/0]']);
  const artifacts = [...dir.artifacts, ...dir.unattributed];
  // make_hostile.py: the artifact named IMG and the output code are in [0/0].
  assert.ok(artifacts.some((a) => a.name === IMG && a.blob));
  assert.ok(artifacts.some((a) => a.kind === 'inductor_output_code'));

  const q = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v != null)).toString();
  const routes = [];
  for (const name of Object.keys(PAGES)) routes.push(`#/${name}?${q({ s })}`);
  for (const id of ids) routes.push(`#/compile?${q({ s, id })}`);
  for (const a of artifacts.filter((x) => x.blob)) routes.push(`#/artifact?${q({ s, blob: a.blob, name: a.name, id: a.compile_id })}`);
  routes.push(`#/recompiles?${q({ s, frame: 0 })}`, `#/trie?${q({ s, q: SCRIPT })}`);
  // Hostile route params (a crafted link): may show an error state, but must stay inert.
  const hostileParams = [`#/compile?${q({ s, id: IMG })}`, `#/artifact?${q({ s, blob: SCRIPT, name: IMG, id: SVG })}`,
    `#/recompiles?${q({ s, frame: SVG })}`, `#/rank-diff?${q({ id: SCRIPT, name: IMG, a: SVG, b: TEXTAREA })}`,
    `#/${encodeURIComponent(SCRIPT)}`, `#/overview?${q({ s: IMG })}`];
  for (const name of Object.keys(PAGES)) assert.ok(routes.some((r) => r.startsWith(`#/${name}?`)), name);

  const shown = await visitAll(env.url('hostile'), [...routes, ...hostileParams], { strict: (hash) => !hostileParams.includes(hash) });
  // The routes that already show trace text; pages still being written show less (see the log).
  for (const [hash, which] of Object.entries(shown)) console.log(`  ${which.length ? which.join(' ') : '(no payload shown)'}  ${decodeURIComponent(hash).slice(0, 110)}`);
});

test('multi-rank pages on two hostile ranks: ranks, rank diff of a hostile graph, hostile artifact names', { timeout: TIMEOUT * 2 }, async () => {
  const { page, viewer, errors, dialogs, close } = await openWatched(env.url('hostile_ranks', '#/rank-diff'));
  assert.deepEqual(errors, []);
  const streams = viewer.manifest.streams.map((x) => x.id);
  assert.equal(streams.length, 2);
  // The default diff: [0/0] dynamo_output_graph, the only payload the two ranks log differently.
  const d = viewer.data.rankDiff;
  assert.deepEqual([d.idA, d.idB], ['[0/0]', '[0/0]']);
  assert.equal(d.name, 'dynamo_output_graph');
  assert.deepEqual({ added: d.added, removed: d.removed }, { added: 1, removed: 1 });
  // The payloads are text, in full: the diff shows the graph lines holding them.
  for (const p of [SCRIPT, TEXTAREA, IMG, SVG]) assert.ok(await page.getByText(p).count() > 0, `rank diff shows ${p}`);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(await injected(page), []);
  await shot(page, 'rank-diff-hostile');

  await go(page, '#/ranks');
  assert.deepEqual(errors, []);
  // rank_differ lists the artifact named IMG (same payload on both ranks) as text.
  assert.ok(await page.getByText(IMG, { exact: true }).count() > 0, 'ranks page shows the hostile artifact name');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(await injected(page), []);
  assert.deepEqual(dialogs ?? [], []);
  await shot(page, 'ranks-hostile');
  await close();

  const q = (params) => new URLSearchParams(params).toString();
  const routes = [...Object.keys(PAGES).map((name) => `#/${name}?${q({ s: streams[1] })}`),
    `#/rank-diff?${q({ id: '[0/0]', name: IMG, a: streams[0], b: streams[1] })}`,
    `#/rank-diff?${q({ id: '[0/0]', name: 'dynamo_output_graph', a: streams[1], b: streams[0] })}`,
    `#/rank-diff?${q({ id: '[0/0]', name: 'inductor_output_code', a: streams[0], b: streams[1] })}`];
  const shown = await visitAll(env.url('hostile_ranks'), routes, { strict: () => true });
  assert.ok(shown[routes.find((r) => r.startsWith('#/ranks'))].includes('IMG'));
  assert.ok(shown[routes[routes.length - 2]].includes('TEXTAREA'));
});
