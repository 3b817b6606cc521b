// Real-browser tests of the Compare page (pages/compare.js, `index.html?bundle=A&compare=B`): its
// findings must equal `tlparse-build compare A B --json` for the same bundles (the page pairs
// compiles by align_key only; the CLI by the alignment module), and a differing artifact opens
// its diff in one click. Facts asserted beyond equality were checked by hand against the logs
// (see tests/it/compare.rs for the line references).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { setup, open, go, shot, fixture, BIN, TIMEOUT } from './viewer-harness.js';


let env;
before(async () => {
  env = await setup({
    run_a: fixture('torch-2.15/two_runs/run_a'),
    run_b: fixture('torch-2.15/two_runs/run_b'),
    cold: fixture('torch-2.15/cache_cold'),
    warm: fixture('torch-2.15/cache_warm'),
  });
});
after(() => env?.close());

/** `index.html?bundle=A&compare=B` of bundles A and B, relative URLs as a user would type them. */
const compareUrl = (a, b, hash = '#/compare') => env.url(a).replace(/index\.html$/, `index.html?bundle=../${a}/&compare=../${b}/${hash}`);

const cli = (a, b) => JSON.parse(execFileSync(BIN, ['compare', env.dir(a), env.dir(b), '--json'], { encoding: 'utf8' }));

/** The comparison with each stream's compiles in align_key order (the page lists A's order, then B's). */
function canonical(c) {
  const byKey = (x, y) => (x.align_key < y.align_key ? -1 : x.align_key > y.align_key ? 1 : 0);
  return { ...c, streams: c.streams.map((s) => ({ ...s, compiles: [...s.compiles].sort(byKey) })) };
}

test('two_runs: the page finds what the CLI finds; graph break, recompiles, only-in-B compiles', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, compareUrl('run_a', 'run_b'));
  assert.deepEqual(errors, []);
  assert.equal(viewer.state, 'ready');
  assert.equal(viewer.page, 'compare');
  const fromCli = cli('run_a', 'run_b');
  assert.deepEqual(canonical(viewer.data.compare), canonical(fromCli));
  const s = viewer.data.compare.streams[0];
  // run_a compiled forward (two_runs.py:32) once as [0/0]; run_b's [0/0] broke the graph at the
  // print (two_runs.py:22) and restarted as [0/0_1]: attempt 0 pairs with attempt 0.
  const both = s.compiles.filter((x) => x.a && x.b);
  assert.deepEqual(both.map((x) => [x.code, x.a, x.b]), [['forward (two_runs.py:32)', '[0/0]', '[0/0]']]);
  const kinds = both[0].changes.map((c) => c.kind);
  assert.ok(kinds.includes('graph_breaks') && kinds.includes('status') && kinds.includes('compile_time'), kinds.join());
  assert.deepEqual(both[0].changes.find((c) => c.kind === 'graph_breaks').added,
    ['Failed to trace builtin operator (at /home/user/scenarios/two_runs.py:22)']);
  assert.equal(s.compiles.filter((x) => !x.a).length, 17);
  assert.deepEqual(s.recompiles.map((r) => [r.code, r.a, r.b]), [
    ['forward (two_runs.py:32)', 0, 1], ['forward (two_runs.py:19)', 0, 3],
    ['torch_dynamo_resume_in_forward_at_22 (two_runs.py:22)', 0, 3], ['torch_dynamo_resume_in_forward_at_33 (two_runs.py:33)', 0, 1]]);
  // The Compare tab is there, and the page shows the pair and the only-in-B list.
  assert.deepEqual(await page.locator('nav.tabs a.active').allInnerTexts(), ['Compare']);
  assert.match(await page.locator('.cmp-compile h3').first().innerText(), /forward \(two_runs\.py:32\) \[0\/0\] → \[0\/0\]/);
  assert.equal(await page.locator('.cmp-only-b li').count(), 17);
  await shot(page, 'compare-two_runs-light');
  await close();
});

test('cache_cold → cache_warm: cache miss → hit, and a differing artifact opens its diff in one click', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, compareUrl('cold', 'warm'));
  assert.deepEqual(errors, []);
  assert.deepEqual(canonical(viewer.data.compare), canonical(cli('cold', 'warm')));
  const first = viewer.data.compare.streams[0].compiles[0];
  assert.deepEqual(first.changes.filter((c) => c.kind === 'cache').map((c) => [c.cache, c.a, c.b]),
    [['aotautograd_cache', ['miss'], ['hit']], ['fx_graph_cache', ['miss', 'miss'], ['hit', 'hit']]]);
  // "changed only" keeps only compiles with changes (both have some here).
  await page.locator('.cmp-toggle input').check();
  await page.waitForFunction(() => window.__viewer.params.changed === '1' && window.__viewer.state === 'ready');
  const guards = first.changes.find((c) => c.kind === 'artifact' && c.name === 'dynamo_cpp_guards_str');
  assert.ok(guards, JSON.stringify(first.changes.map((c) => c.name ?? c.kind)));
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.locator('a.cmp-diff-link', { hasText: 'dynamo_cpp_guards_str' }).first().click();
  await page.waitForFunction((n) => window.__viewer.renders > n && window.__viewer.state === 'ready', before);
  const d = await page.evaluate(() => window.__viewer.data.compareDiff);
  assert.equal(d.name, 'dynamo_cpp_guards_str');
  assert.equal(d.blobA, guards.a);
  assert.equal(d.blobB, guards.b);
  assert.ok(d.added > 0 && d.removed > 0, JSON.stringify(d));
  // Both sides' lines are drawn: removed (A) and added (B).
  assert.ok(await page.locator('.cmp-diff .diff-line.del').count() > 0);
  assert.ok(await page.locator('.cmp-diff .diff-line.add').count() > 0);
  assert.deepEqual(errors, []);
  await shot(page, 'compare-cache-diff-light');
  await page.evaluate(() => { document.documentElement.dataset.theme = 'dark'; });
  await shot(page, 'compare-cache-diff-dark');
  await go(page, '#/compare?changed=1');
  await close();
});

test('without compare= there is no Compare tab; a bundle missing B says so', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('run_a'));
  assert.deepEqual(errors, []);
  assert.ok(!(await page.locator('nav.tabs a').allInnerTexts()).includes('Compare'), viewer.page);
  await close();
  const missing = await open(env, compareUrl('run_a', 'nope'));
  assert.equal(missing.viewer.state, 'ready');
  assert.match(await missing.page.locator('main').innerText(), /Run B could not be opened/);
  await missing.close();
});

test('a run B without align_key (an older bundle) is not compared, and the page says why', { timeout: TIMEOUT }, async () => {
  // B's compile_directory as an older tlparse-build wrote it: the same rows without align_key
  // (served as plain JSON, which the loader takes as a host-decoded .zst).
  const plain = await open(env, env.url('run_b'));
  const table = await plain.page.evaluate(async () => window.__viewer.bundle.table('log0', 'compile_directory'));
  await plain.close();
  assert.ok(table.compiles.every((r) => typeof r.align_key === 'string'));
  for (const r of table.compiles) delete r.align_key;
  const { page, errors, close } = await open(env, compareUrl('run_a', 'run_b', '#/overview'));
  await page.route('**/b/run_b/tables/log0/compile_directory.json.zst', (route) => route.fulfill({ body: JSON.stringify(table) }));
  const viewer = await go(page, '#/compare');
  assert.equal(viewer.state, 'ready');
  assert.deepEqual(viewer.data.compare, { error: 'no align_key' });
  assert.match(await page.locator('main').innerText(), /Run B was built by an older tlparse-build: its compile_directory has no align_key/);
  assert.equal(await page.locator('.cmp-compile').count(), 0);
  assert.deepEqual(errors, []);
  await close();
});
