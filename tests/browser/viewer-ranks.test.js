// Real-browser tests of the multi-rank pages (ranks.js, rank-diff.js) on tlparse's multi-rank
// fixtures. Every fact asserted here was checked by hand against the cross-rank tables
// (zstd -dc BUNDLE/tables/cross_rank/<name>.json.zst) and the logs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { setup, open, go, shot, fixture, BIN, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => {
  env = await setup({
    logs: fixture('tlparse-tests/multi_rank_logs'),
    schedule: fixture('tlparse-tests/multi_rank_schedule'),
    runtime: fixture('tlparse-tests/multi_rank_runtime'),
    single: fixture('tlparse-tests/comp_failure.log'),
  });
});
after(() => env?.close());

/** Line diff counts computed in Node (LCS), independent of the viewer's diff.js. */
function lcsCounts(a, b) {
  const split = (t) => { const l = t.split('\n'); if (l.length > 1 && l[l.length - 1] === '') l.pop(); return l; };
  const x = split(a);
  const y = split(b);
  const dp = Array.from({ length: x.length + 1 }, () => new Int32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) dp[i][j] = x[i] === y[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  }
  const common = dp[0][0];
  return { removed: x.length - common, added: y.length - common };
}

const cat = (name, blob) => execFileSync(BIN, ['cat', env.dir(name), blob], { encoding: 'utf8' });

test('multi_rank_logs: divergence first, rank groups, status grid, compile-time imbalance', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('logs', '#/ranks'));
  assert.deepEqual(errors, []);
  assert.equal(viewer.state, 'ready');
  assert.deepEqual(viewer.data.members, ['rank 0', 'rank 1', 'rank 2', 'rank 3']);
  // compile_ids: groups {rank0, rank2} ([0/0] only), {rank1} (15 ids), {rank3} (7 ids).
  const w = viewer.data.warnings;
  assert.ok(w.includes('Ranks compiled different compile ids: ranks 0, 2 vs rank 1 vs rank 3'), JSON.stringify(w));
  // [0/0]: failed on ranks 0 and 2, ok on 1 and 3 (status_differs).
  assert.ok(w.some((x) => /^Compile status differs on 1 compile id, e\.g\. \[0\/0\]: failed on ranks 0, 2; ok on ranks 1, 3$/.test(x)), JSON.stringify(w));
  // compile_time_imbalance: rank3 10,518,427 µs = 66.9x ranks 0/2 (157,247 µs).
  assert.ok(w.some((x) => /^Compile time imbalance: rank 3 compiled for 10\.5 s, 66\.9x the fastest \(ranks 0, 2, 157\.2 ms\)$/.test(x)), JSON.stringify(w));
  // The divergence card comes before every other section.
  const firstCard = await page.locator('.ranks-page > section').first().getAttribute('id');
  assert.equal(firstCard, 'rk-divergence');

  const groups = await page.locator('#rk-groups .rk-group').allInnerTexts();
  assert.equal(groups.length, 3);
  assert.match(groups[0], /rank 0[\s\S]*rank 2[\s\S]*1 compile id: \[0\/0\]/);
  assert.match(groups[1], /rank 1[\s\S]*15 compile ids/);
  assert.match(groups[2], /rank 3[\s\S]*7 compile ids/);

  // The grid: 4 ranks × 15 compile ids; [0/0] failed/ok/failed/ok; [0/7] only rank 1 has it.
  const grid = viewer.data.grid;
  assert.equal(grid.compile_ids.length, 15);
  assert.deepEqual(grid.cells.map((r) => r[0]), ['failed', 'ok', 'failed', 'ok']);
  assert.deepEqual(grid.cells.map((r) => r[grid.compile_ids.indexOf('[0/7]')]), ['missing', 'ok', 'missing', 'missing']);
  // Missing cells look different from status cells (dashed, no fill), and [0/0]'s header is marked ≠.
  const missing = page.locator('.rk-cell.missing').first();
  const failed = page.locator('.rk-cell[data-status="failed"]').first();
  assert.equal(await missing.evaluate((e) => getComputedStyle(e).borderStyle), 'dashed');
  assert.notEqual(await missing.evaluate((e) => getComputedStyle(e).backgroundColor),
    await failed.evaluate((e) => getComputedStyle(e).backgroundColor));
  assert.equal(await page.locator('.rk-col-head.status-differs').count(), 1);
  assert.match(await page.locator('.rk-col-head.status-differs').innerText(), /\[0\/0\]/);

  // Bars: rank 3 is the slowest and highlighted.
  assert.deepEqual(viewer.data.compileTime.slowest, ['rank 3']);
  assert.equal(viewer.data.compileTime.max_over_min.toFixed(1), '66.9');
  assert.equal(await page.locator('.rk-bar-row.slowest').count(), 1);
  assert.match(await page.locator('.rk-bar-row.slowest').innerText(), /rank 3/);

  // rank_differ: [0/0] dynamo_output_graph is split {0,2} vs {1,3}, with a diff link.
  const row = viewer.data.rankDiffer.find((r) => r.compile_id === '[0/0]' && r.name === 'dynamo_output_graph');
  assert.deepEqual(row.groups, [['rank 0', 'rank 2'], ['rank 1', 'rank 3']]);
  assert.ok(await page.locator('[data-table="rank-differ"] a.rk-diff-link').count() > 0);
  await shot(page, 'ranks-multi_rank_logs-light');

  // "only differing" grid: [0/0] (status) and every id some rank lacks; here all 15.
  const s = await go(page, '#/ranks?sec=grid&grid=diff');
  assert.equal(s.data.grid.compile_ids.length, 15);
  assert.deepEqual(errors, []);
  await close();
});

test('multi_rank_logs: the rank diff finds the diverging ranks; +/- match a diff computed in Node', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('logs', '#/rank-diff'), { theme: 'dark' });
  assert.deepEqual(errors, []);
  // Default: the first divergent rank_differ row, [0/0] dynamo_output_graph, rank 0 vs rank 1.
  const d = viewer.data.rankDiff;
  assert.equal(d.compile_id, '[0/0]');
  assert.equal(d.name, 'dynamo_output_graph');
  assert.equal(d.a, 'rank0');
  assert.equal(d.b, 'rank1');
  assert.equal(d.identical, false);
  const expected = lcsCounts(cat('logs', d.blobA), cat('logs', d.blobB));
  // By hand (diff a b): line 2 (the input shape) and lines 5-7 (source line, op) differ: 4 and 4.
  assert.deepEqual(expected, { removed: 4, added: 4 });
  assert.deepEqual({ removed: d.removed, added: d.added }, expected);
  assert.equal(await page.locator('.diff').getAttribute('data-added'), '4');
  assert.equal(await page.locator('.diff-line.del').count(), 4);
  assert.ok(await page.getByText('def forward(self, L_x_: "f32[4, 4][4, 1]cpu"):').count() > 0);
  await shot(page, 'rank-diff-multi_rank_logs-dark');

  // Same payload group: rank 0 vs rank 2 is identical, and says so.
  const same = await go(page, '#/rank-diff?id=[0/0]&name=dynamo_output_graph&a=rank0&b=rank2');
  assert.equal(same.data.rankDiff.identical, true);
  assert.match(await page.locator('.rk-identical').innerText(), /^Identical: rank 0 and rank 2 logged the same payload/);
  // The swap button and the pickers navigate through the URL.
  await page.selectOption('select[aria-label="Rank B"]', 'rank3');
  await page.waitForFunction(() => window.__viewer.params.b === 'rank3' && window.__viewer.state === 'ready');
  assert.equal(await page.evaluate(() => window.__viewer.data.rankDiff.added), 4);
  // An artifact no rank logged: a clear message, not an error.
  const none = await go(page, '#/rank-diff?id=[0/0]&name=no_such_artifact');
  assert.equal(none.state, 'ready');
  assert.match(await page.locator('.empty').first().innerText(), /No rank logged no_such_artifact in \[0\/0\]/);
  assert.deepEqual(errors, []);
  await close();
});

test('multi_rank_schedule: schedules differ on [0/0]; rank 1 lacks reduce_scatter and a wait', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('schedule', '#/ranks?sec=schedules'));
  assert.deepEqual(errors, []);
  // collective_schedules [0/0]: variants {rank0-0, rank0-2} (reference) and {rank0-1}, which lacks
  // reduce_scatter_tensor and one wait_tensor; its code disagrees with its schedule (parity).
  assert.deepEqual(viewer.data.schedules, [{
    compile_id: '[0/0]',
    variants: [{ ranks: ['rank 0', 'rank 2'], lacks: [], extra: [] },
      { ranks: ['rank 1'], lacks: ['reduce_scatter_tensor', 'wait_tensor'], extra: [] }],
    parity_mismatches: ['rank 1'],
  }]);
  assert.equal(viewer.data.warnings[0],
    'Collective schedules differ on [0/0]: ranks 0, 2 vs rank 1 (rank 1 lacks reduce_scatter_tensor, wait_tensor)');
  assert.equal(await page.locator('.warning.sev-error').count(), 1);
  const variant = page.locator('.rk-schedule[data-compile-id="[0/0]"] .rk-variant').nth(1);
  assert.match(await variant.innerText(), /lacks reduce_scatter_tensor, wait_tensor[\s\S]*first difference at op 4/);
  // rank 1's schedule has 4 ops; from op 4 on (0-based 3) they are marked.
  assert.equal(await variant.locator('.rk-op.after-diff').count(), 1);
  await shot(page, 'ranks-multi_rank_schedule-light');
  await close();
});

test('multi_rank_runtime: runtime gaps, tensor-meta groups, legacy execution order; dark screenshot', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('runtime', '#/ranks'), { theme: 'dark' });
  assert.deepEqual(errors, []);
  // Labels: files 5 and 6 say rank 1 in their envelopes, their members are labelled rank 5 and 6.
  assert.deepEqual(viewer.data.members, ['rank 0', 'rank 1', 'rank 2', 'rank 3', 'rank 4', 'rank 5', 'rank 6']);
  // runtime_estimations [0/0]: fastest ranks 0/5/6 (13.806 ms), slowest rank 3 (15.877), Δ 2.071 ms.
  const g00 = viewer.data.runtime.find((g) => g.compile_id === '[0/0]');
  assert.deepEqual(g00, { compile_id: '[0/0]', occurrence: 0, fastest: ['rank 0', 'rank 5', 'rank 6'], slowest: ['rank 3'], delta_ms: 2.071, missing: ['rank 4'] });
  const rtRow = page.locator('[data-table="runtime"] .vt-body .vt-row', { hasText: '[0/0]' });
  assert.match(await rtRow.innerText(), /ranks 0, 5, 6[\s\S]*13\.806 ms[\s\S]*rank 3[\s\S]*15\.877 ms[\s\S]*2\.071 ms[\s\S]*15\.0%[\s\S]*rank 4/);
  // tensor_meta whole-run groups {0,1,2,3}, {4}, {5,6}.
  assert.deepEqual(viewer.data.tensorMetaGroups, [['rank 0', 'rank 1', 'rank 2', 'rank 3'], ['rank 4'], ['rank 5', 'rank 6']]);
  // [0/0] differs only in wait_tensor (no outputs key vs two empty outputs).
  const tm00 = page.locator('.rk-tm-graph[data-compile-id="[0/0]"]');
  assert.match(await tm00.innerText(), /wait_tensor[\s\S]*compute, no outputs key[\s\S]*compute, \?\[\] \+ \?\[\]/);
  // execution_order: legacy only (ranks 5, 6 alike), so no divergence warning for it.
  assert.ok(!viewer.data.warnings.some((x) => /order/.test(x)));
  assert.match(await page.locator('#rk-execution-order').innerText(), /Legacy orders[\s\S]*rank 5[\s\S]*rank 6[\s\S]*graph_0/);
  await shot(page, 'ranks-multi_rank_runtime-dark');

  // Both trace downloads are offered and deliver gzip-decoded Chrome trace JSON.
  for (const [field, pid] of [['chrome_trace', 6], ['runtime_estimates_trace', 6]]) {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`button[data-trace="${field}"]`)]);
    const file = await dl.path();
    const json = JSON.parse(execFileSync('cat', [file], { encoding: 'utf8', maxBuffer: 1 << 28 }));
    const names = json.traceEvents.filter((e) => e.name === 'process_name').map((e) => e.args.name);
    assert.equal(names[pid], 'rank 6', field);
  }
  assert.deepEqual(errors, []);
  await close();
});

test('single-stream bundle: the ranks pages explain why they are empty', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('single', '#/ranks'));
  assert.deepEqual(errors, []);
  assert.match(await page.locator('.empty').innerText(), /single stream/);
  await go(page, '#/rank-diff');
  assert.match(await page.locator('.empty').innerText(), /single stream/);
  assert.deepEqual(errors, []);
  await close();
});

test('64 ranks: the grid renders only the cells in view and scrolls', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('logs', '#/overview'));
  // Feed ranks.js a synthetic 64-rank × 400-id compile_ids table through a stubbed bundle.
  const result = await page.evaluate(async () => {
    const { render } = await import('./viewer/pages/ranks.js');
    const members = Array.from({ length: 64 }, (_, i) => ({ stream: `r${i}`, rank: i, label: `rank ${i}` }));
    const ids = Array.from({ length: 400 }, (_, j) => `[0/${j}]`);
    const table = {
      diverges: true,
      groups: [{ streams: members.slice(0, 63).map((m) => m.stream), compile_ids: ids }, { streams: ['r63'], compile_ids: ids.slice(0, 399) }],
      compile_ids: ids.map((id, j) => ({
        compile_id: id,
        present: members.filter((m, i) => !(i === 63 && j === 399)).map((m, i) => ({ stream: m.stream, status: i === 5 && j === 3 ? 'failed' : 'ok' })),
        missing: j === 399 ? ['r63'] : [],
        status_differs: j === 3,
      })),
    };
    const data = {};
    const manifest = { cross_rank: { members, tables: { compile_ids: {} } }, streams: members.map((m) => ({ id: m.stream })) };
    const ctx = {
      manifest, params: new URLSearchParams(), href: (p, q) => `#/${p}?${new URLSearchParams(Object.entries(q ?? {}).filter(([, v]) => v != null))}`,
      crossTable: async (n) => (n === 'compile_ids' ? table : null), expose: (k, v) => { data[k] = v; }, bundle: {},
    };
    const node = await render(ctx);
    document.getElementById('main').replaceChildren(node);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const grid = node.querySelector('.rk-grid');
    const before = grid.querySelectorAll('.rk-cell').length;
    grid.scrollLeft = 300 * 58;
    grid.scrollTop = 40 * 24;
    grid.dispatchEvent(new Event('scroll'));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return {
      warnings: data.warnings, before, after: grid.querySelectorAll('.rk-cell').length,
      heads: [...grid.querySelectorAll('.rk-col-head')].map((e) => e.textContent),
      rows: [...grid.querySelectorAll('.rk-row-head')].map((e) => e.textContent),
      cells: data.grid.cells.length * data.grid.cells[0].length,
    };
  });
  assert.equal(result.cells, 64 * 400);
  assert.ok(result.before > 0 && result.before < 2000, `cells drawn: ${result.before}`);
  assert.ok(result.after > 0 && result.after < 2000, `cells drawn after scrolling: ${result.after}`);
  assert.ok(result.heads.includes('[0/310]'), result.heads.join(' '));
  assert.ok(result.rows.includes('rank 50'), result.rows.join(' '));
  assert.ok(result.warnings[0].startsWith('Ranks compiled different compile ids: ranks 0–62 vs rank 63'), result.warnings[0]);
  assert.deepEqual(errors, []);
  await close();
});
