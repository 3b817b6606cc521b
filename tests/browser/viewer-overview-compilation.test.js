// The overview leads with compilation (issue #17, item 4): compile count, total compile time
// (forward + backward), the slowest compiles, each recompiled frame with its reason, failures;
// storage facts folded. Values checked by hand against the raw logs (see each test).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setup, open, settle, shot, fixture, SHOTS, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => {
  env = await setup({
    recompiles: fixture('torch-2.15/recompiles'),
    failures: fixture('torch-2.15/failures'),
    run_a: fixture('torch-2.15/two_runs/run_a'),
    multi_rank_logs: fixture('tlparse-tests/multi_rank_logs'),
  });
});
after(() => env?.close());

const statText = (page, key) => page.locator(`.stat[data-stat="${key}"]`).innerText();

test('overview of recompiles: count, time, slowest compiles, recompiled frames with reasons', { timeout: TIMEOUT }, async () => {
  // torch-2.15/recompiles, checked by hand: nine compilation_metrics ([0/0]..[0/4], [1/0]..[1/3])
  // whose entire_frame_compile_time_s add up to 17.495582 s, no backward; slowest [0/0] 12.73 s,
  // [0/1] 1.03, [0/2] 0.78, [1/2] 0.765, [1/1] 0.739. Frame 0 (f, recompiles.py:11) compiled
  // five times, first recompiled because "0/0: tensor 'x' size mismatch at index 0. expected 4,
  // actual 6"; frame 1 (forward, recompiles.py:40) four times, first because the guard
  // "self.mode == 'a'" failed. [0/4] failed (Unsupported: Dynamo recompile limit exceeded).
  const { page, viewer, errors, close } = await open(env, env.url('recompiles'));
  assert.deepEqual(errors, []);
  const d = viewer.data.compilation;
  assert.equal(d.compiles, 9);
  assert.ok(Math.abs(d.totalS - 17.495582) < 1e-6, d.totalS);
  assert.equal(d.backwardS, 0);
  assert.deepEqual(d.slowest, ['[0/0]', '[0/1]', '[0/2]', '[1/2]', '[1/1]']);
  assert.deepEqual(d.recompiled.map((f) => [f.frame, f.compiles]), [['0', 5], ['1', 4]]);
  assert.equal(d.recompiled[0].reason, "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6");
  assert.match(d.recompiled[1].reason, /^1\/0: self\.mode == 'a' # if self\.mode == "a": # gen\/scenarios\/recompiles\.py:42 in forward$/);
  assert.deepEqual(d.failed, ['[0/4]']);
  // Shown first, as words.
  assert.equal(await statText(page, 'compiles'), '9\ncompile ids');
  assert.equal(await statText(page, 'time'), '17.5 s\ncompiling (9 timed)');
  assert.equal(await statText(page, 'recompiled'), '2\nframes recompiled');
  assert.equal(await statText(page, 'failed'), '1\ncompile failed');
  const first = await page.evaluate(() => document.querySelector('main h1').nextElementSibling.getAttribute('aria-label'));
  assert.equal(first, 'Compilation');
  const slow = page.locator('.overview-list.slowest li').first();
  assert.match(await slow.innerText(), /^\[0\/0\] 12\.7 s f recompiles\.py:11$/);
  assert.equal(await slow.locator('a').getAttribute('href'), '#/compile?id=%5B0%2F0%5D');
  const frame0 = page.locator('.overview-list.recompiled li').first();
  assert.match(await frame0.innerText(), /^f recompiles\.py:11 compiled 5 times: 0\/0: tensor 'x' size mismatch/);
  assert.equal(await frame0.locator('a').getAttribute('href'), '#/recompiles?frame=0');
  // The recompiled frame's link opens the Recompiles view on that frame.
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.locator('.overview-list.recompiled li a').nth(1).click();
  const r = await settle(page, before);
  assert.equal(r.page, 'recompiles');
  assert.equal(r.data.recompiles.frame, '1');
  await close();
});

test('overview: storage facts are folded away', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('recompiles'));
  assert.deepEqual(errors, []);
  await page.screenshot({ path: path.join(SHOTS, 'overview-recompiles-first-screen.png') });
  const storage = page.locator('details.storage');
  assert.equal(await storage.getAttribute('open'), null);
  assert.equal(await storage.locator('dd').first().isVisible(), false);
  await storage.locator('summary').click();
  assert.match(await storage.innerText(), /payloads stored as\s+[\d.]+ KiB of zstd packs[\s\S]*duplicates saved/);
  // Nothing above the fold speaks of storage any more.
  const lead = await page.locator('section.compilation').innerText();
  assert.doesNotMatch(lead, /zstd|duplicates/);
  assert.equal(viewer.page, 'overview');
  await shot(page, 'overview-recompiles-light');
  await close();
});

test('overview of failures: the count and the first failed compiles, linked', { timeout: TIMEOUT }, async () => {
  // torch-2.15/failures, checked by hand: seven compiles; [0/0] (f_ok) has fail_type null, the
  // six others ([1/0]..[6/0]) failed; the failures table lists them in log order.
  const { page, viewer, errors, close } = await open(env, env.url('failures'), { theme: 'dark' });
  assert.deepEqual(errors, []);
  const d = viewer.data.compilation;
  assert.equal(d.compiles, 7);
  assert.deepEqual(d.failed, ['[1/0]', '[2/0]', '[3/0]', '[4/0]', '[5/0]', '[6/0]']);
  assert.equal(await statText(page, 'failed'), '6\ncompiles failed');
  const items = page.locator('.overview-list.failed li');
  assert.equal(await items.count(), 3);
  assert.equal(await items.first().locator('a').getAttribute('href'), '#/compile?id=%5B1%2F0%5D');
  // [1/0]'s fail_reason is "backend='flaky_backend' raised:\nRuntimeError: flaky_backend: refusing
  // to compile a graph with cos…": the line shows what was raised, not only "raised:".
  assert.match(await items.first().innerText(), /^\[1\/0\] BackendCompilerFailed: backend='flaky_backend' raised: RuntimeError: flaky_backend: refusing to compile a graph with cos/);
  assert.equal(await page.locator('section.compilation a', { hasText: 'All 6 failures' }).getAttribute('href'), '#/failures');
  await page.screenshot({ path: path.join(SHOTS, 'overview-failures-dark-first-screen.png') });
  await close();
});

test('overview of a training compile: total time is forward plus backward', { timeout: TIMEOUT }, async () => {
  // two_runs/run_a: [0/0]'s compilation_metrics gives entire_frame_compile_time_s 12.306798; its
  // entire_backward_compile span (lines 4329-7142) lasts 1.3828725 s: 13.6896705 s in all.
  const { page, viewer, errors, close } = await open(env, env.url('run_a'));
  assert.deepEqual(errors, []);
  const d = viewer.data.compilation;
  assert.deepEqual([d.compiles, d.forwardS, d.backwardS, d.totalS], [1, 12.306798, 1.3828725, 13.6896705]);
  assert.equal(await statText(page, 'time'), '13.7 s\ncompiling (1 timed)');
  assert.equal(await statText(page, 'split'), '12.3 s + 1.38 s\nforward + lazy backward');
  assert.deepEqual(d.recompiled, []);
  assert.equal(await page.locator('.overview-list.recompiled').count(), 0);
  await close();
});

test('multi-rank overview: the selected stream\'s compilation', { timeout: TIMEOUT }, async () => {
  // multi_rank_logs: rank 1 compiled kernel (gen_many_frames.py:6) 15 times, rank 3 7 times
  // (the compile_alignment groups; the overview's multi-rank test checks the same).
  const { page, viewer, errors, close } = await open(env, env.url('multi_rank_logs'));
  assert.deepEqual(errors, []);
  const streams = viewer.manifest.streams;
  assert.equal(viewer.data.compilation.stream, streams[0].id);
  assert.match(await page.locator('section.compilation h2').first().innerText(), /^Compilation of rank 0$/);
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.selectOption('select.stream-select', streams[1].id);
  const again = await settle(page, before);
  assert.equal(again.data.compilation.stream, streams[1].id);
  assert.equal(again.data.compilation.compiles, 15);
  await close();
});
