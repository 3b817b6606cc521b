// First-paint budget: on the 150 MB benchmark log (scripts/bench's generator and cache), the
// overview must be ready after fetching less than 300 KB in all (HTML, JS, CSS, the zstd decoder,
// manifest, the small tables it reads). Prints the figure and the breakdown per file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, open, shot, REPO } from './viewer-harness.js';

const BUDGET = 300 * 1024;
const SIZE_MB = 150;

/**
 * The benchmark log, generated once and cached exactly where scripts/bench caches it
 * (TLPARSE_BENCH_CACHE, default $TMPDIR/tlparse-bench-cache; the name keys on the generator's md5),
 * so CI generates it once for both.
 */
function benchLog() {
  const gen = path.join(REPO, 'scripts/make_big_log.py');
  const genMd5 = crypto.createHash('md5').update(fs.readFileSync(gen)).digest('hex');
  // scripts/bench: KEY = md5("<md5 of the generator>\n<--fixtures or empty>\n")[:10]
  const key = crypto.createHash('md5').update(`${genMd5}\n\n`).digest('hex').slice(0, 10);
  const cache = process.env.TLPARSE_BENCH_CACHE ?? path.join(process.env.TMPDIR ?? os.tmpdir(), 'tlparse-bench-cache');
  const log = path.join(cache, `big-${SIZE_MB}mb-seed0-${key}.log`);
  if (!(fs.existsSync(log) && fs.statSync(log).size > 0)) {
    fs.mkdirSync(cache, { recursive: true });
    execFileSync('python3', [gen, log, '--size-mb', String(SIZE_MB), '--seed', '0'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return log;
}

let env;
before(async () => { env = await setup({ big: benchLog() }); }, { timeout: 20 * 60_000 });
after(() => env?.close());

test(`first paint of the overview on the ${SIZE_MB} MB benchmark log fetches < 300 KB`, { timeout: 5 * 60_000 }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('big'));
  assert.deepEqual(errors, []);
  assert.equal(viewer.page, 'overview');
  assert.equal(viewer.state, 'ready');
  // Every response up to this point, as the browser fetched it (body bytes as served).
  const files = await page.evaluate(() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
    .map((e) => ({ url: e.name, bytes: e.encodedBodySize || e.transferSize || 0 })));
  const base = env.url('big').replace(/index\.html.*$/, '');
  const rows = files.map((f) => ({ file: f.url.replace(base, '') || 'index.html', bytes: f.bytes })).sort((a, b) => b.bytes - a.bytes);
  const total = rows.reduce((s, r) => s + r.bytes, 0);
  // The manifest's input paths are relative to the trace given: its recorded size, not a stat.
  const input = viewer.manifest.inputs[0].size;
  console.log(`  first paint: ${(total / 1024).toFixed(1)} KB in ${rows.length} files (input ${(input / 2 ** 20).toFixed(0)} MiB, budget ${BUDGET / 1024} KB)`);
  for (const r of rows) console.log(`    ${(r.bytes / 1024).toFixed(1).padStart(8)} KB  ${r.file}`);
  assert.ok(rows.some((r) => r.file === 'manifest.lite.json.zst'), 'the (lite) manifest was counted');
  assert.ok(rows.every((r) => r.bytes > 0 || /favicon/.test(r.file)), 'every file has a size');
  assert.ok(total < BUDGET, `first paint fetched ${total} bytes, budget ${BUDGET}`);
  await close();
});

test(`search on the ${SIZE_MB} MB benchmark log: names, then the full text of every artifact (timings printed)`, { timeout: 5 * 60_000 }, async () => {
  const { page, errors, requests, close } = await open(env, env.url('big'));
  assert.ok(!requests.some((r) => /\/search\.json\.zst$|\/viewer\/search\.js$/.test(r.url)), 'first paint fetched no search table nor search code');
  await page.fill('input.global-search', 'unsupported_helper');
  await page.waitForFunction(() => window.__viewer.search?.namesMs != null && window.__viewer.search.query === 'unsupported_helper');
  const names = await page.evaluate(() => JSON.parse(JSON.stringify(window.__viewer.search)));
  console.log(`  search data loaded in ${names.loadMs.toFixed(0)} ms; names matched in ${names.namesMs.toFixed(2)} ms`);
  // The generator repeats the graph_breaks scenario: unsupported_helper is compiled twice (a
  // restart) in each of its 13 copies.
  const fn = names.groups.find((g) => g.kind === 'function');
  assert.equal(fn.items[0].text, 'unsupported_helper');
  assert.equal(fn.items[0].compiles.length, 26);

  // `cpp_fused_add_cos_0` is in the log 26 times (grep -c), twice in each of 13 output codes.
  await page.fill('input.global-search', 'cpp_fused_add_cos_0');
  await page.waitForFunction(() => window.__viewer.search?.query === 'cpp_fused_add_cos_0' && window.__viewer.search.namesMs != null
    && document.querySelector('.sr-full-button'));
  await page.click('.sr-full-button');
  await page.waitForFunction(() => window.__viewer.search.fullText?.state === 'done', null, { timeout: 120_000 });
  const ft = await page.evaluate(() => JSON.parse(JSON.stringify(window.__viewer.search.fullText)));
  console.log(`  full text: ${(ft.total / 2 ** 20).toFixed(1)} MiB decoded in ${ft.packs} packs, searched in ${ft.ms.toFixed(0)} ms` +
    ` (from the request, the blob index included; zstd decoder: ${await page.evaluate(() => window.__viewer.decoder)})`);
  const places = ft.hits.flatMap((x) => x.places);
  assert.ok(places.length > 0 && places.every((p) => p.name === 'inductor_output_code'), JSON.stringify(places.slice(0, 3)));
  assert.equal(new Set(places.map((p) => p.compile)).size, 13);
  assert.ok(ft.hits.every((x) => x.count === 2));
  await shot(page, 'search-bench-full-text');
  assert.deepEqual(errors, []);
  await close();
});

/**
 * Every page route the bench bundle has, as the tabs and links would open it: the compile and the
 * artifact are the first compile ([0/0]) and the last one in the compile directory (the bench's
 * late compiles are where the tables are longest).
 */
async function benchRoutes() {
  const { page, viewer, close } = await open(env, env.url('big'));
  const s = viewer.manifest.streams[0];
  const late = await page.evaluate(async (id) => {
    const dir = await window.__viewer.bundle.table(id, 'compile_directory');
    const last = dir.compiles.at(-1);
    const art = dir.artifacts.slice(last.first_artifact, last.first_artifact + last.artifact_count).find((a) => a.blob);
    return { first: dir.compiles[0].compile_id, last: last.compile_id, art: art && { blob: art.blob, name: art.name } };
  }, s.id);
  await close();
  const routes = ['overview', 'compiles', 'trie', `compile?id=${late.first}`, `compile?id=${late.last}`];
  if (late.art) routes.push(`artifact?blob=${late.art.blob}&name=${late.art.name}&id=${late.last}`);
  for (const p of ['recompiles', 'graph-breaks', 'failures', 'provenance', 'sizes', 'time', 'volume', 'entries']) routes.push(p);
  return { routes, tables: Object.keys(s.tables ?? {}) };
}

test('every page of the benchmark bundle, cold: ms to ready and bytes fetched (printed; asserts only no errors)', { timeout: 15 * 60_000 }, async () => {
  const { routes, tables } = await benchRoutes();
  console.log(`  bench stream tables: ${tables.join(', ')}`);
  console.log('  cold load per page (fresh context; navigation start → window.__viewer ready):');
  const failed = [];
  for (const r of routes) {
    const { page, viewer, errors, close } = await open(env, env.url('big', `#/${r}`));
    // Navigation start → ready, on the page's own clock (app.js records performance.now() when a
    // page is ready); and what it fetched, with the files that finished last.
    const ms = viewer.readyAt;
    const res = await page.evaluate(() => performance.getEntriesByType('resource')
      .map((e) => ({ file: e.name.replace(/^.*\/b\/big\//, ''), kb: (e.encodedBodySize || 0) / 1024, start: e.startTime, end: e.responseEnd })));
    const fetched = res.reduce((n, e) => n + e.kb, 0);
    const slow = [...res].sort((a, b) => b.end - a.end).slice(0, 3)
      .map((e) => `${e.file} ${e.kb.toFixed(0)} KB ${Math.round(e.start)}→${Math.round(e.end)} ms`).join('; ');
    console.log(`    ${String(Math.round(ms ?? -1)).padStart(6)} ms ${fetched.toFixed(0).padStart(8)} KB  #/${r}${viewer.state === 'ready' ? '' : `  (${viewer.state}: ${viewer.error})`}`);
    console.log(`             last to arrive: ${slow}`);
    assert.equal(typeof ms, 'number', `#/${r}: app.js recorded when the page was ready`);
    if (r === 'entries') {
      // The index streams in after the first rows are shown: in the end every entry is in the table.
      await page.waitForFunction(() => window.__viewer.data.entries?.complete, null, { timeout: 120_000 });
      const { total, shown } = await page.evaluate(() => window.__viewer.data.entries);
      const doneMs = await page.evaluate(() => performance.now());
      console.log(`             all ${total} entries in the table by ~${Math.round(doneMs)} ms`);
      assert.equal(total, viewer.manifest.streams[0].entries);
      assert.equal(shown, total);
      assert.equal(await page.locator('[data-table="entries"] .vt-count').textContent(), `${total.toLocaleString('en-US')} rows`);
    }
    if (errors.length || viewer.state !== 'ready') failed.push({ r, errors, state: viewer.state, error: viewer.error });
    await close();
  }
  assert.deepEqual(failed, []);
});
