// Real-browser tests of the shipped viewer's shell and overview page, on bundles built from
// fixtures. Run with ./run.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setup, open, go, shot, fixture, BIN, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => {
  env = await setup({
    comp_failure: fixture('tlparse-tests/comp_failure.log'),
    comp_metrics: fixture('tlparse-tests/comp_metrics.log'),
    corrupted: fixture('tlparse-tests/simple_corrupted_json.log'),
    multi_rank_logs: fixture('tlparse-tests/multi_rank_logs'),
    ranks_shifted: fixture('torch-2.15/ranks_shifted'),
    recompiles: fixture('torch-2.15/recompiles'),
  });
});
after(() => env?.close());

test('overview of a failed compile: the failure is the first warning', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('comp_failure'));
  assert.deepEqual(errors, []);
  assert.equal(viewer.state, 'ready');
  assert.equal(viewer.page, 'overview');
  assert.equal(viewer.decoder, 'fzstd', 'Chromium has no zstd DecompressionStream: fzstd.js decodes');
  // comp_failure.log: one compile, [0/0], whose compilation_metrics has fail_type set.
  assert.match(viewer.data.warnings[0], /^1 compile failed$/);
  assert.equal(await page.locator('.warning.sev-error').count(), 1);
  await shot(page, 'overview-comp_failure-light');
  await close();
});

test('overview: failed compiles and restarts are counted apart, as on the Failures page', { timeout: TIMEOUT }, async () => {
  // comp_metrics.log: the compilation_metrics at lines 31 and 48 carry one restart reason each,
  // none sets fail_type. The stream table said "failures 2" (the failures table's rows) while
  // the Failures page said "No failed compiles, 2 restarts".
  const { page, viewer, errors, close } = await open(env, env.url('comp_metrics'));
  assert.deepEqual(errors, []);
  assert.deepEqual(viewer.data.streams, [{ id: 'log0', failed: 0, restarts: 2 }]);
  const table = page.locator('[data-table="streams"]');
  const headers = await table.locator('.vt-head [role="columnheader"]').allInnerTexts();
  assert.ok(headers.some((t) => /^failed compiles/.test(t)) && headers.some((t) => /^restarts/.test(t)), JSON.stringify(headers));
  assert.ok(!headers.some((t) => /^failures/.test(t)), JSON.stringify(headers));
  assert.deepEqual(viewer.data.warnings.filter((w) => /fail|restart/.test(w)), ['2 restarts']);
  await shot(page, 'overview-comp_metrics');
  const failures = await go(page, '#/failures');
  assert.equal(failures.page, 'failures');
  assert.match(await page.locator('main h2').first().innerText(), /^No failed compiles, 2 restarts$/);
  await close();
});

test('overview in the dark theme, and the theme toggle', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('recompiles'), { theme: 'dark' });
  assert.deepEqual(errors, []);
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(await bg(), 'rgb(15, 17, 21)');
  await shot(page, 'overview-recompiles-dark');
  await page.click('.theme-toggle');
  assert.equal(await bg(), 'rgb(246, 247, 249)');
  assert.equal(await page.evaluate(() => localStorage.getItem('tlparse-theme')), 'light');
  await close();
});

test('overview lists log problems of a corrupted log', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('corrupted'));
  assert.deepEqual(errors, []);
  // simple_corrupted_json.log has one chromium_event line whose JSON is cut short.
  assert.ok(viewer.data.warnings.some((w) => /log problem/.test(w)), JSON.stringify(viewer.data.warnings));
  await page.waitForSelector('[data-table="diagnostics"] .vt-body .vt-row');
  assert.equal(await page.locator('[data-table="diagnostics"] .vt-body .vt-row').count(), viewer.manifest.diagnostics.total);
  await close();
});

test('multi-rank overview: divergence warnings and a stream picker', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('multi_rank_logs'));
  assert.deepEqual(errors, []);
  // multi_rank_logs (compile_alignment): ranks 0 and 2 compiled only fn (test_misc.py:10755), as
  // [0/0], failed; ranks 1 and 3 compiled kernel (gen_many_frames.py:6) 15 and 7 times, from [0/0].
  const w = viewer.data.warnings;
  assert.ok(w.includes('Ranks compiled different graphs: rank 0, rank 2 vs rank 1 vs rank 3'), JSON.stringify(w));
  assert.ok(w.includes('ranks 0, 2 compiled fn (test_misc.py:10755) as [0/0], which ranks 1, 3 did not compile'), JSON.stringify(w));
  assert.ok(w.includes('ranks 1, 3 compiled kernel (gen_many_frames.py:6) as [0/0], which ranks 0, 2 did not compile'), JSON.stringify(w));
  assert.equal(await page.locator('select.stream-select option').count(), 4);
  await shot(page, 'overview-multi_rank_logs');
  await close();
});

test('multi-rank overview: code only one rank compiled, named, and its frame-id shift', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('ranks_shifted'));
  assert.deepEqual(errors, []);
  // ranks_shifted (compile_alignment.partial_code): rank 2 alone compiled rank_local_metric
  // (ranks_shifted.py:24), as [0/0]; later_frame_id_shift 1. Groups {0, 3}, {1} (forward
  // recompiled as [0/1]), {2}.
  const w = viewer.data.warnings;
  assert.equal(w[0], 'rank 2 compiled rank_local_metric (ranks_shifted.py:24) as [0/0], which no other rank compiled; its later frame ids are shifted by 1');
  assert.ok(w.includes('Ranks compiled different graphs: rank 0, rank 3 vs rank 1 vs rank 2'), JSON.stringify(w));
  const first = page.locator('.warning-list .warning').first();
  assert.equal(await first.locator('code').innerText(), 'rank_local_metric');
  assert.match(await first.locator('a').getAttribute('href'), /^#\/ranks\?sec=grid/);
  await shot(page, 'overview-ranks_shifted');
  await close();
});

test('?bundle= loads another bundle; a missing one says what to do', { timeout: TIMEOUT }, async () => {
  const other = `${env.server.url}/b/recompiles/`;
  const a = await open(env, `${env.url('comp_failure')}?bundle=${encodeURIComponent(other)}`);
  assert.deepEqual(a.errors, []);
  // The recompiles fixture's log (input paths are relative to the trace given, so its name only).
  assert.equal(a.viewer.manifest.inputs[0].path, 'dedicated_log_torch_trace_uhwu8yzi.log');
  await a.close();
  const b = await open(env, `${env.url('comp_failure')}?bundle=/nowhere/`);
  assert.equal(b.viewer.state, 'error');
  assert.match(await b.page.locator('.error-box').innerText(), /Could not open the bundle[\s\S]*tlparse-build serve/);
  await b.close();
});

test('unknown routes fall back to the overview; hash navigation re-renders', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('comp_failure', '#/no-such-page'));
  assert.deepEqual(errors, []);
  assert.equal(viewer.page, 'overview');
  const again = await go(page, '#/overview?x=1');
  assert.equal(again.params.x, '1');
  await close();
});

test('opened from file://, the page says what to run instead', { timeout: TIMEOUT }, async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  await page.goto(`file://${env.dir('comp_failure')}/index.html`);
  const message = page.locator('#file-protocol');
  await message.waitFor({ state: 'visible' });
  assert.match(await message.innerText(), /needs a web server[\s\S]*tlparse-build serve/);
  assert.equal(await page.locator('#app').isVisible(), false);
  await shot(page, 'file-protocol');
  await context.close();
});

test('served by `tlparse-build serve`, the viewer loads with its zstd decoder', { timeout: TIMEOUT }, async () => {
  const server = spawn(BIN, ['serve', env.dir('multi_rank_logs'), '--port', '0', '--no-open'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      server.stdout.on('data', (d) => {
        out += d;
        const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (m) resolve(m[1]);
      });
      server.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
    });
    const { viewer, errors, requests, close } = await open(env, url);
    assert.deepEqual(errors, []);
    assert.equal(viewer.state, 'ready');
    assert.equal(viewer.manifest.streams.length, 4);
    assert.ok(requests.some((r) => r.url.endsWith('/viewer/fzstd.js') && r.status === 200));
    await close();
  } finally {
    server.kill();
  }
});

test('log entries: every index row, filtered by kind and compile id', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('comp_failure', '#/entries'));
  assert.deepEqual(errors, []);
  // comp_failure.log: 21 entries (8 str, 6 chromium_event, 1 dynamo_error artifact, ...), all in [0/0]
  // but the string-table entries.
  const m = viewer.manifest.streams[0];
  assert.equal(viewer.data.entries.total, m.entries);
  assert.equal(viewer.data.entries.shown, 21);
  assert.deepEqual(viewer.data.entries.first, [...Array(21).keys()]);
  let v = await go(page, '#/entries?kind=chromium_event');
  assert.equal(v.data.entries.shown, m.kinds.chromium_event);
  v = await go(page, '#/entries?kind=str');
  assert.equal(v.data.entries.shown, 8);
  v = await go(page, '#/entries?id=[0/0]');
  assert.equal(v.data.entries.shown, 21 - 8);
  // A payload opens in the artifact view.
  await go(page, '#/entries?kind=artifact:dynamo_error');
  const link = page.locator('[data-table="entries"] .vt-body a[href^="#/artifact"]').first();
  const before = await page.evaluate(() => window.__viewer.renders);
  await link.click();
  await page.waitForFunction((n) => window.__viewer.renders > n && window.__viewer.state !== 'loading', before);
  assert.equal(await page.evaluate(() => window.__viewer.page), 'artifact');
  assert.deepEqual(errors, []);
  await shot(page, 'entries-comp_failure');
  await close();
});
