// Real-browser tests that every page gives a compile the same time: the Compiles page and the
// compile's banner (from compile_directory), its Phases section and the Compile time page (from
// compile_time) show one forward, backward and total (docs/tables/compile_time.md, "A compile's
// time"). Facts were checked by hand against the raw logs. Run with ./run.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, open, go, shot, fixture, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => {
  env = await setup({
    ranks_shifted: fixture('torch-2.15/ranks_shifted'),
    run_b: fixture('torch-2.15/two_runs/run_b'),
  });
});
after(() => env?.close());

/** A screenshot from the top of the page (the header is sticky: scrolled, it would float mid-page). */
async function snap(page, name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, name);
}

/** The text of a rendered row of a dataTable, found by its compile id (one cell is exactly it). */
async function rowText(page, table, id) {
  const row = page.locator(`[data-table="${table}"] .vt-body .vt-row`).filter({ has: page.getByText(id, { exact: true }) });
  assert.equal(await row.count(), 1, `${table}: one row of ${id}`);
  return row.innerText();
}

// ranks_shifted rank 0, compile [0/0] (`forward` of a training loop), checked by hand in
// dedicated_log_torch_trace_rank_0_ctepc446.log: entire_frame_compile from line 19 to line 3566,
// 19552467 µs (compilation_metrics: entire_frame_compile_time_s 19.552467); at the first backward
// call, entire_backward_compile with compile id 0/0, lines 3617 to 6212: 1651572.5 µs. Shown as
// "19.6 s", "1.65 s", and a total of 21204039.5 µs, "21.2 s". The Compiles page and the banner used
// to say 19.6 s while the Phases section and the Compile time page said 21.2 s (dynamo + backward).
const FORWARD_BACKWARD = { forward: '19.6 s', backward: '1.65 s', total: '21.2 s' };
const SUMMARY = '21.2 s (forward 19.6 s + backward 1.65 s)';

test('compile time: the Compiles page, the banner, Phases and the Compile time page agree', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('ranks_shifted', '#/compiles?s=rank0'));
  assert.deepEqual(errors, []);
  const listed = viewer.data.times;
  assert.deepEqual(listed['[0/0]'], FORWARD_BACKWARD);
  // sync_grads ([1/*]) runs on gradients, which need none: no backward (1.911605 s, metrics at line 9616).
  assert.deepEqual(listed['[1/0]'], { forward: '1.91 s', backward: '–', total: '1.91 s' });
  assert.match(await rowText(page, 'compiles', '[0/0]'), /19\.6 s\s+1\.65 s\s+21\.2 s/);
  // Σ over the 4 compiles: 19.552467 + 1.911605 + 1.450855 + 1.298577 = 24.213504 s forward, plus
  // 1.6515725 s backward: 25.8650765 s.
  assert.match(await page.locator('.card .lead').innerText(), /25\.9 s \(forward 24\.2 s \+ backward 1\.65 s\) compiling in total/);
  await snap(page, 'compile-time-compiles-ranks_shifted');

  const compile = await go(page, '#/compile?s=rank0&id=%5B0%2F0%5D');
  assert.deepEqual(compile.data.compile.times, FORWARD_BACKWARD);
  assert.deepEqual(compile.data.compile.phaseTimes, FORWARD_BACKWARD);
  assert.equal(await page.locator('.verdict-line').innerText(), `Compiled in ${SUMMARY}.`);
  assert.equal(await page.locator('.phases-total').innerText(), `Compile time ${SUMMARY}.`);
  await snap(page, 'compile-time-compile-ranks_shifted');

  const time = await go(page, '#/time?s=rank0&id=%5B0%2F0%5D');
  assert.deepEqual(errors, []);
  // Both tables give every compile the same three numbers.
  assert.deepEqual(time.data.time.times, listed);
  assert.match(await page.locator('.an-lead').innerText(), /^The slowest compile, \[0\/0\], took 21\.2 s \(forward 19\.6 s \+ backward 1\.65 s\)/);
  assert.match(await rowText(page, 'compile-time', '[0/0]'), /19\.6 s\s+1\.65 s\s+21\.2 s/);
  // The main thread's async_compile.wait outlived the compile worker's compile_file it began in
  // (line 4668, and [1/2]'s at line 14817): routine, shown in neutral text; nothing is unpaired.
  assert.match(await rowText(page, 'overlaps', 'async_compile.wait'), /compile_file\s+2\s+4,?668/);
  assert.equal(await page.locator('[data-table="unmatched"]').count(), 0);
  assert.equal(await page.locator('main .error, main .warn-text').count(), 0);
  await snap(page, 'compile-time-time-ranks_shifted');
  await close();
});

test('compile time: a restarted frame compile counts in the attempt that completed it', { timeout: TIMEOUT }, async () => {
  // two_runs/run_b: frame 1's first compile restarted at a graph break; entire_frame_compile began
  // under [1/0] and ended under [1/0_1], which logged the metrics (9.769775 s) and later compiled
  // the backward (86547.5 µs). [2/1]: 0.161258 s forward, 779646.75 µs backward (checked by hand:
  // lines 11448-14268 and 20277-22758 of the log).
  const { page, viewer, errors, close } = await open(env, env.url('run_b', '#/compiles'));
  assert.deepEqual(errors, []);
  assert.deepEqual(viewer.data.times['[1/0]'], { forward: '–', backward: '–', total: '–' });
  assert.deepEqual(viewer.data.times['[1/0_1]'], { forward: '9.77 s', backward: '86.5 ms', total: '9.86 s' });
  assert.deepEqual(viewer.data.times['[2/1]'], { forward: '161.3 ms', backward: '779.6 ms', total: '940.9 ms' });

  const first = await go(page, '#/compile?id=%5B1%2F0%5D');
  assert.deepEqual(first.data.compile.phaseTimes, { forward: '–', backward: '–', total: '–' });
  assert.match(await page.locator('.card', { hasText: 'Phases' }).first().innerText(), /frame compile counts in \[1\/0_1\], which completed it/);
  await snap(page, 'compile-time-compile-restarted-run_b');

  const time = await go(page, '#/time');
  assert.deepEqual(time.data.time.times, viewer.data.times);
  assert.match(await rowText(page, 'compile-time', '[1/0]'), /in \[1\/0_1\]\s+–\s+–/);
  await snap(page, 'compile-time-time-run_b');
  await close();
});

test('compile time: each count says what it counts (compile ids, timed compiles, backward inside the forward, wall span)', { timeout: TIMEOUT }, async () => {
  // two_runs/run_b, checked by hand (docs/definitions.md): 18 compile ids, 12 of them timed
  // (6 restarted attempts have no time of their own). [1/2_1]'s metrics (line 36972) say
  // entire_frame_compile_time_s 1.99807; its bw_compiler ran inside its entire_frame_compile,
  // lines 34136 to 36670, 866096.75 µs: part of the forward, no lazy backward. Five compiles
  // compiled their backward so ([1/2_1], [2/2], [1/3_1], [2/3], [3/1]): 2.66510525 s in all.
  const { page, viewer, errors, close } = await open(env, env.url('run_b', '#/'));
  assert.deepEqual(errors, []);
  const c = viewer.data.compilation;
  assert.equal(c.compiles, 18);
  assert.equal(c.timed, 12);
  assert.equal(c.backwardInForwardS, 2.66510525);
  assert.equal(await page.locator('[data-stat="compiles"] .stat-label').innerText(), 'compile ids');
  assert.equal(await page.locator('[data-stat="time"] .stat-label').innerText(), 'compiling (12 timed)');
  await snap(page, 'counts-overview-run_b');

  const time = await go(page, '#/time?id=%5B1%2F2_1%5D');
  assert.deepEqual(errors, []);
  assert.equal(time.data.time.timed, 12, 'compiles timed as compile_summary counts them');
  const facts = await page.locator('.card', { hasText: 'Where the time went' }).first().innerText();
  assert.match(facts, /compiles timed\s+12/);
  const head = await page.locator('[data-timeline="[1/2_1]"] h2').innerText();
  assert.match(head, /time 2\.00 s/);
  assert.match(head, /wall span /);
  await snap(page, 'counts-time-run_b');

  const compile = await go(page, '#/compile?id=%5B1%2F2_1%5D');
  assert.deepEqual(compile.data.compile.times, { forward: '2.00 s', backward: '–', total: '2.00 s' });
  assert.equal(await page.locator('.verdict-line').innerText(),
    'Compiled after a restart in 2.00 s (forward, with its backward compiled inside: 866.1 ms). It replaces the restarted attempt [1/2].');
  const factsAndMetrics = await page.locator('#sec-facts').innerText();
  assert.match(factsAndMetrics, /backward inside\s+866\.1 ms \(compiled inside the forward, part of it\)/);
  // torch's num_graph_breaks is its running total for the process, labelled so (line 36972: 5).
  assert.match(factsAndMetrics, /graph breaks so far\s+5 \(torch's running total for the process, not this compile's\)/);
  await snap(page, 'counts-compile-run_b');
  await close();
});

test('compile time: the counts\' labels at phone width', { timeout: TIMEOUT }, async () => {
  // The same pages as above at 390 px: the labelled counts wrap rather than overflow.
  const { page, errors, close } = await open(env, env.url('run_b', '#/'), { width: 390, height: 844 });
  assert.deepEqual(errors, []);
  await snap(page, 'counts-overview-run_b-phone');
  await go(page, '#/time?id=%5B1%2F2_1%5D');
  await page.locator('[data-timeline="[1/2_1]"]').scrollIntoViewIfNeeded();
  await shot(page, 'counts-time-run_b-phone');
  await go(page, '#/compile?id=%5B1%2F2_1%5D');
  await snap(page, 'counts-compile-run_b-phone');
  // The new labels widen nothing: the facts are as wide as those of [2/0], which has none of
  // them (at 390 px the header already makes every page wider than the phone).
  const width = () => page.locator('#sec-facts').evaluate((el) => el.scrollWidth);
  const withLabels = await width();
  await go(page, '#/compile?id=%5B2%2F0%5D');
  assert.ok(withLabels <= await width(), `the facts of [1/2_1] are ${withLabels} px wide`);
  assert.deepEqual(errors, []);
  await close();
});
