// The compile page (issue #17, item 1): artifacts first with their forward/backward/inference
// labels, a sticky list of sections, scroll kept on Back, and a recompile's failing guard at the
// top with a link to the Recompiles view. Values checked by hand against the raw logs (see each test).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setup, open, go, settle, shot, fixture, SHOTS, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => {
  env = await setup({
    run_a: fixture('torch-2.15/two_runs/run_a'),
    recompiles: fixture('torch-2.15/recompiles'),
  });
});
after(() => env?.close());

const cid = (id) => encodeURIComponent(id);

/** Top of an element relative to the viewport, or null when absent. */
const topOf = (page, selector) => page.evaluate((s) => document.querySelector(s)?.getBoundingClientRect().top ?? null, selector);

test('artifacts come first, labelled forward and backward', { timeout: TIMEOUT }, async () => {
  // two_runs/run_a's [0/0], checked by hand on the raw log: fx_graph_runnable (line 1184) and
  // inductor_output_code (2145) are logged inside the compile_fx.<locals>.fw_compiler_base span
  // (lines 1147-3909), their namesakes (4379, 5268) inside bw_compiler (4342-7130), after the
  // compile's compilation_metrics (4291).
  const { page, viewer, errors, close } = await open(env, env.url('run_a', `#/compile?id=${cid('[0/0]')}`));
  assert.deepEqual(errors, []);
  assert.equal(viewer.page, 'compile');
  const d = viewer.data.compile;
  const labelled = (name) => d.artifacts.map((n, i) => [n, d.graphs[i]]).filter(([n]) => n === name).map(([, g]) => g);
  assert.deepEqual(labelled('inductor_output_code'), ['forward', 'backward']);
  assert.deepEqual(labelled('fx_graph_runnable'), ['forward', 'backward']);
  assert.deepEqual(labelled('aot_joint_graph'), [null]);
  assert.deepEqual(labelled('dynamo_cpp_guards_str'), [null]);
  // The labels are shown beside the names, in log order.
  const rows = page.locator('[data-table="artifacts"] .vt-row', { hasText: 'inductor_output_code' });
  assert.deepEqual((await rows.allInnerTexts()).map((t) => /· (\w+)/.exec(t)?.[1]), ['forward', 'backward']);
  // Sections in order: artifacts first, right after the summary; the section list before them.
  const ids = await page.evaluate(() => [...document.querySelectorAll('.compile-page [id^="sec-"]')].map((e) => e.id));
  assert.deepEqual(ids, ['sec-artifacts', 'sec-facts', 'sec-phases', 'sec-caches', 'sec-guards', 'sec-inputs', 'sec-stack']);
  const nav = await page.locator('.section-nav button').allInnerTexts();
  assert.deepEqual(nav, ['Artifacts', 'Facts & metrics', 'Phases', 'Caches', 'Guards', 'Inputs', 'Stack']);
  assert.ok(await topOf(page, '#sec-artifacts') < 600, 'the artifacts start on the first screen');
  await shot(page, 'compile-run_a-light');
  await page.screenshot({ path: path.join(SHOTS, 'compile-run_a-light-first-screen.png') });
  await close();
});

test('the section list scrolls to a section and stays in view', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('run_a', `#/compile?id=${cid('[0/0]')}`));
  await page.click('.section-nav button[data-section="stack"]');
  await page.waitForFunction(() => Math.abs(document.getElementById('sec-stack').getBoundingClientRect().top - 124) < 3 ||
    window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1);
  assert.ok(await page.evaluate(() => window.scrollY) > 500);
  // The list is sticky: still on screen, below the tabs, and the route did not change.
  const navTop = await topOf(page, '.section-nav');
  assert.ok(navTop >= 80 && navTop <= 90, `section list at ${navTop}`);
  assert.match(page.url(), /#\/compile\?id=/);
  await page.click('.section-nav button[data-section="guards"]');
  await page.waitForFunction(() => Math.abs(document.getElementById('sec-guards').getBoundingClientRect().top - 124) < 3);
  assert.deepEqual(errors, []);
  await close();
});

test('Back from an artifact returns to where the compile page was left', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('run_a', `#/compile?id=${cid('[0/0]')}`), { height: 700 });
  await page.evaluate(() => window.scrollTo(0, 900));
  await page.waitForFunction(() => window.scrollY === 900);
  // The last artifact row on screen: open it (the artifact page starts at the top).
  await page.evaluate(() => window.scrollTo(0, 150));
  await page.waitForFunction(() => window.scrollY === 150);
  const left = await page.evaluate(() => window.scrollY);
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.locator('[data-table="artifacts"] a[href^="#/artifact"]', { hasText: 'fx_graph_runnable' }).first().click();
  const art = await settle(page, before);
  assert.equal(art.page, 'artifact');
  assert.equal(await page.evaluate(() => window.scrollY), 0, 'a new page starts at the top');
  const back = await page.evaluate(() => window.__viewer.renders);
  await page.goBack();
  const again = await settle(page, back);
  assert.equal(again.page, 'compile');
  await page.waitForFunction((y) => Math.abs(window.scrollY - y) <= 2, left, { timeout: 5000 });
  // And a deeper position too: Forward, then Back again from further down.
  await page.evaluate(() => window.scrollTo(0, 900));
  await page.waitForFunction(() => window.scrollY === 900);
  const n = await page.evaluate(() => window.__viewer.renders);
  await go(page, '#/compiles');
  await settle(page, n);
  const m = await page.evaluate(() => window.__viewer.renders);
  await page.goBack();
  await settle(page, m);
  await page.waitForFunction(() => Math.abs(window.scrollY - 900) <= 2, null, { timeout: 5000 });
  // Leaving in the same frame as the last scroll, before its scroll event is dispatched: the
  // position is taken as the page is left, not from that event.
  const k = await page.evaluate(() => window.__viewer.renders);
  await page.evaluate(() => { window.scrollTo(0, 600); location.hash = '#/compiles'; });
  await settle(page, k);
  const l = await page.evaluate(() => window.__viewer.renders);
  await page.goBack();
  await settle(page, l);
  await page.waitForFunction(() => Math.abs(window.scrollY - 600) <= 2, null, { timeout: 5000 });
  assert.deepEqual(errors, []);
  await close();
});

test('a recompile says first which guard failed, and links to the Recompiles view', { timeout: TIMEOUT }, async () => {
  // torch-2.15/recompiles, checked by hand: [0/1] is frame 0's frame compile 1, so recompile 1
  // (docs/definitions.md), not "Recompile 2". Its recompile_reasons artifact is
  // "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"; [0/2]'s lists two, the
  // dtype guards of 0/1 and 0/0 ("expected Float, actual Double").
  const { page, viewer, errors, close } = await open(env, env.url('recompiles', `#/compile?id=${cid('[0/1]')}`));
  assert.deepEqual(errors, []);
  // The reason is the recompile_reasons artifact of [0/1] itself (line 3554): no restart.
  assert.deepEqual(viewer.data.compile.recompile, { frame: '0', step: '[0/1]', reasons: ["0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"],
    reasonsFrom: 'recompile_reasons', reasonsLoggedOn: '[0/1]' });
  const card = page.locator('.recompile-reason');
  assert.match(await card.innerText(), /Recompile 1 of this frame: a guard failed[\s\S]*tensor 'x' size mismatch at index 0\. expected 4, actual 6/);
  // It is the first card of the page (after the breadcrumb), above the summary and the sections.
  const order = await page.evaluate(() => [...document.querySelectorAll('.compile-page > section, .compile-page > nav')].map((e) => e.className));
  assert.deepEqual(order.slice(0, 5), ['crumbs', 'card recompile-reason', 'card verdict verdict-ok', 'section-nav', 'card']);
  await shot(page, 'compile-recompile-light');
  const link = card.locator('a.recompiles-link');
  assert.equal(await link.getAttribute('href'), `#/recompiles?frame=0&id=${cid('[0/1]')}`);
  const before = await page.evaluate(() => window.__viewer.renders);
  await link.click();
  const r = await settle(page, before);
  assert.equal(r.page, 'recompiles');
  assert.equal(r.data.recompiles.frame, '0');
  assert.equal(r.data.recompiles.selected, '[0/1]');

  const two = await go(page, `#/compile?id=${cid('[0/2]')}`);
  assert.equal(two.data.compile.recompile.reasons.length, 2);
  assert.match(await page.locator('.recompile-reason h2').innerText(), /Recompile 2 of this frame: 2 earlier compiles' guards failed/);
  const first = await go(page, `#/compile?id=${cid('[0/0]')}`);
  assert.equal(first.data.compile.recompile, null);
  assert.equal(await page.locator('.recompile-reason').count(), 0);
  await close();
});

test('compile page in the dark theme', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('recompiles', `#/compile?id=${cid('[1/1]')}`), { theme: 'dark' });
  assert.deepEqual(errors, []);
  assert.equal(await page.locator('.recompile-reason').count(), 1);
  await shot(page, 'compile-recompile-dark');
  await page.screenshot({ path: path.join(SHOTS, 'compile-recompile-dark-first-screen.png') });
  const b = await open(env, env.url('run_a', `#/compile?id=${cid('[0/0]')}`), { theme: 'dark' });
  await shot(b.page, 'compile-run_a-dark');
  await b.close();
  await close();
});
