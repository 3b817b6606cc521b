// Real-browser tests of the multi-rank pages (ranks.js, rank-diff.js) on tlparse's multi-rank
// fixtures. Every fact asserted here was checked by hand against the cross-rank tables
// (zstd -dc BUNDLE/tables/cross_rank/<name>.json.zst) and the logs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { setup, open, go, settle, shot, fixture, BIN, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => {
  env = await setup({
    logs: fixture('tlparse-tests/multi_rank_logs'),
    schedule: fixture('tlparse-tests/multi_rank_schedule'),
    runtime: fixture('tlparse-tests/multi_rank_runtime'),
    shifted: fixture('torch-2.15/ranks_shifted'),
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

test('multi_rank_logs: divergence first, rank groups, compiles grid, compile-time imbalance', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('logs', '#/ranks'));
  assert.deepEqual(errors, []);
  assert.equal(viewer.state, 'ready');
  assert.deepEqual(viewer.data.members, ['rank 0', 'rank 1', 'rank 2', 'rank 3']);
  // compile_alignment: ranks 0 and 2 compiled fn (test_misc.py:10755) as [0/0] (failed); ranks 1
  // and 3 compiled kernel (gen_many_frames.py:6) as [0/0], then recompiled it (to [0/14] on rank
  // 1, [0/6] on rank 3). Both are partial_code; groups {rank0, rank2}, {rank1}, {rank3}. Aligned
  // by code, nothing has a status that differs: [0/0] is another function on each pair.
  const w = viewer.data.warnings;
  assert.ok(w.includes('ranks 0, 2 compiled fn (test_misc.py:10755) as [0/0], which ranks 1, 3 did not compile'), JSON.stringify(w));
  assert.ok(w.includes('ranks 1, 3 compiled kernel (gen_many_frames.py:6) as [0/0], which ranks 0, 2 did not compile'), JSON.stringify(w));
  assert.ok(w.includes('Ranks compiled different graphs: ranks 0, 2 vs rank 1 vs rank 3'), JSON.stringify(w));
  assert.ok(!w.some((x) => /status differs|shifted|other compile ids/.test(x)), JSON.stringify(w));
  // compile_time_imbalance: rank3 10,518,427 µs = 66.9x ranks 0/2 (157,247 µs).
  assert.ok(w.some((x) => /^Compile time imbalance: rank 3 compiled for 10\.5 s, 66\.9x the fastest \(ranks 0, 2, 157\.2 ms\)$/.test(x)), JSON.stringify(w));
  // The divergence card comes before every other section.
  const firstCard = await page.locator('.ranks-page > section').first().getAttribute('id');
  assert.equal(firstCard, 'rk-divergence');

  const groups = await page.locator('#rk-groups .rk-group').allInnerTexts();
  assert.equal(groups.length, 3);
  assert.match(groups[0], /rank 0[\s\S]*rank 2[\s\S]*1 compile: fn \(test_misc\.py:10755\)/);
  assert.match(groups[1], /rank 1[\s\S]*15 compiles: kernel \(gen_many_frames\.py:6\); kernel \(gen_many_frames\.py:6\), recompile 1; .* 12 more/);
  assert.match(groups[2], /rank 3[\s\S]*7 compiles: kernel/);

  // The grid: 16 aligned compiles × 4 ranks, each cell the rank's own compile id.
  const grid = viewer.data.grid;
  assert.equal(grid.compiles.length, 16);
  assert.equal(grid.compiles[0], 'fn (test_misc.py:10755)');
  assert.deepEqual(grid.cells[0], ['failed', 'missing', 'failed', 'missing']);
  assert.deepEqual(grid.ids[0], ['[0/0]', null, '[0/0]', null]);
  assert.deepEqual(grid.cells[1], ['missing', 'ok', 'missing', 'ok']);
  assert.deepEqual(grid.ids[1], [null, '[0/0]', null, '[0/0]']);
  const r7 = grid.compiles.indexOf('kernel (gen_many_frames.py:6), recompile 7');
  assert.deepEqual(grid.ids[r7], [null, '[0/7]', null, null]);
  assert.ok(grid.shifted.flat().every((x) => !x), 'no rank has shifted frame ids here');
  // Missing cells look different from status cells (dashed, no fill); no row is marked ≠.
  const missing = page.locator('.rk-cell.missing').first();
  const failed = page.locator('.rk-cell[data-status="failed"]').first();
  assert.equal(await missing.evaluate((e) => getComputedStyle(e).borderStyle), 'dashed');
  assert.notEqual(await missing.evaluate((e) => getComputedStyle(e).backgroundColor),
    await failed.evaluate((e) => getComputedStyle(e).backgroundColor));
  assert.equal(await failed.innerText(), '[0/0]');
  assert.equal(await page.locator('.rk-row-head.status-differs').count(), 0);

  // Bars: rank 3 is the slowest and highlighted.
  assert.deepEqual(viewer.data.compileTime.slowest, ['rank 3']);
  assert.equal(viewer.data.compileTime.max_over_min.toFixed(1), '66.9');
  assert.equal(await page.locator('.rk-bar-row.slowest').count(), 1);
  assert.match(await page.locator('.rk-bar-row.slowest').innerText(), /rank 3/);
  // Each bar counts the rank's timed compiles, as its Overview and Compile time page do
  // (compile_summary.timed; docs/definitions.md): rank 3 compiled `kernel` 7 times, each timed
  // (its 7 compilation_metrics entries, each with a compile time), so "7 timed compiles".
  assert.equal(viewer.data.compileTime.bars.find((b) => b.rank === 'rank 3').timed, 7);
  assert.match(await page.locator('.rk-bar-row.slowest').innerText(), /· 7 timed compiles/);

  // rank_differ: kernel's before_pre_grad_graph is split rank 1 | rank 3, with a diff link. The
  // table leaves rank 1's group unlisted (two ranks of four lack the key: `missing` is listed and
  // the first of the largest groups is implied), so this checks the page's expansion too.
  const row = viewer.data.rankDiffer.find((r) => r.compile === 'kernel (gen_many_frames.py:6)' && r.name === 'before_pre_grad_graph');
  assert.deepEqual(row.groups, [['rank 1'], ['rank 3']]);
  assert.ok(await page.locator('[data-table="rank-differ"] a.rk-diff-link').count() > 0);
  await shot(page, 'ranks-multi_rank_logs-light');

  // "only differing" grid: every compile some rank lacks; here all 16.
  const s = await go(page, '#/ranks?sec=grid&grid=diff');
  assert.equal(s.data.grid.compiles.length, 16);
  assert.deepEqual(errors, []);
  await close();
});

test('multi_rank_logs: the rank diff finds the diverging ranks; +/- match a diff computed in Node', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('logs', '#/rank-diff'), { theme: 'dark' });
  assert.deepEqual(errors, []);
  // Default: every real difference. None here: the 28 keys whose bytes differ differ only in ids
  // (tests/it/cross_rank/rank_differ.rs, diffed by hand), so they are counted apart, collapsed.
  const o = viewer.data.rankDiffOverview;
  assert.deepEqual([o.differsTotal, o.sameUpToIds], [0, 28]);
  assert.equal(await page.locator('.rk-difference').count(), 0);
  // One of them by its link: kernel (gen_many_frames.py:6)'s before_pre_grad_graph ([0/0] on
  // ranks 1 and 3), rank 1 vs rank 3, said to be the same up to ids.
  const one = await go(page, '#/rank-diff?c=1&name=before_pre_grad_graph&a=rank1&b=rank3');
  assert.ok(await page.getByText(/^Same up to ids: the payloads differ only in what is volatile/).count() > 0);
  const d = one.data.rankDiff;
  assert.equal(d.compile, 'kernel (gen_many_frames.py:6)');
  assert.equal(d.name, 'before_pre_grad_graph');
  assert.equal(d.a, 'rank1');
  assert.equal(d.b, 'rank3');
  assert.deepEqual([d.idA, d.idB], ['[0/0]', '[0/0]']);
  assert.equal(d.identical, false);
  const expected = lcsCounts(cat('logs', d.blobA), cat('logs', d.blobB));
  // By hand (diff a b): only the last line, "# graph id: 6195391888" vs "...6274882448", differs,
  // and only by its graph id: the view compares lines masked (volatile.js), so it counts no
  // change and draws that line as a pair of `≈` lines, each as logged.
  assert.deepEqual(expected, { removed: 1, added: 1 });
  assert.deepEqual({ removed: d.removed, added: d.added }, { removed: 0, added: 0 });
  assert.equal(await page.locator('.diff').getAttribute('data-added'), '0');
  assert.equal(await page.locator('.diff-line.del').count(), 0);
  assert.equal(await page.locator('.diff-line.ids').count(), 2);
  assert.ok(await page.getByText('# graph id: 6195391888').count() > 0);
  assert.ok(await page.getByText('# graph id: 6274882448').count() > 0);
  await shot(page, 'rank-diff-multi_rank_logs-dark');

  // A link by a rank's own compile id: [0/0] on rank 0 is fn, which ranks 0 and 2 logged alike.
  const same = await go(page, '#/rank-diff?id=[0/0]&name=dynamo_output_graph&a=rank0');
  assert.equal(same.data.rankDiff.compile, 'fn (test_misc.py:10755)');
  assert.equal(same.data.rankDiff.identical, true);
  assert.match(await page.locator('.rk-identical').innerText(), /^Identical: rank 0 and rank 2 logged the same payload/);
  // ... while [0/0] on rank 1 is kernel.
  const other = await go(page, '#/rank-diff?id=[0/0]&name=dynamo_output_graph&a=rank1');
  assert.equal(other.data.rankDiff.compile, 'kernel (gen_many_frames.py:6)');
  assert.deepEqual([other.data.rankDiff.a, other.data.rankDiff.b], ['rank1', 'rank3']);
  // The swap button and the pickers navigate through the URL.
  await go(page, '#/rank-diff?c=1&name=before_pre_grad_graph&a=rank1&b=rank3');
  await page.click('button[title="Swap the ranks"]');
  await page.waitForFunction(() => window.__viewer.params.a === 'rank3' && window.__viewer.state === 'ready');
  assert.deepEqual(await page.evaluate(() => [window.__viewer.data.rankDiff.a, window.__viewer.data.rankDiff.b]), ['rank3', 'rank1']);
  // An artifact no rank logged: a clear message, not an error.
  const none = await go(page, '#/rank-diff?c=0&name=no_such_artifact');
  assert.equal(none.state, 'ready');
  assert.match(await page.locator('.empty').first().innerText(), /No rank logged no_such_artifact in fn \(test_misc\.py:10755\) \[0\/0\]/);
  assert.deepEqual(errors, []);
  await close();
});

test('multi_rank_schedule: schedules differ on graph_one [0/0]; rank 1 lacks reduce_scatter and a wait', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('schedule', '#/ranks?sec=schedules'));
  assert.deepEqual(errors, []);
  // collective_schedules graph_one (test2.py:28), [0/0] on every rank: variants {rank0-0, rank0-2}
  // (reference) and {rank0-1}, which lacks reduce_scatter_tensor and one wait_tensor; its code
  // disagrees with its schedule (parity).
  assert.deepEqual(viewer.data.schedules, [{
    compile: 'graph_one (test2.py:28)',
    compile_ids: [{ stream: 'rank0-0', compile_id: '[0/0]' }, { stream: 'rank0-1', compile_id: '[0/0]' }, { stream: 'rank0-2', compile_id: '[0/0]' }],
    variants: [{ ranks: ['rank 0', 'rank 2'], lacks: [], extra: [] },
      { ranks: ['rank 1'], lacks: ['reduce_scatter_tensor', 'wait_tensor'], extra: [] }],
    parity_mismatches: ['rank 1'],
  }]);
  assert.equal(viewer.data.warnings[0],
    'Collective schedules differ on graph_one (test2.py:28) [0/0]: ranks 0, 2 vs rank 1 (rank 1 lacks reduce_scatter_tensor, wait_tensor)');
  assert.equal(await page.locator('.warning.sev-error').count(), 1);
  const schedule = page.locator('.rk-schedule[data-aligned="0"]');
  assert.match(await schedule.locator('h3').innerText(), /^graph_one \(test2\.py:28\) \[0\/0\]$/);
  // Each rank chip links to that rank's own compile.
  assert.equal(await schedule.locator('a.rk-chip', { hasText: 'rank 1' }).getAttribute('href'), '#/compile?s=rank0-1&id=%5B0%2F0%5D');
  const variant = schedule.locator('.rk-variant').nth(1);
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
  // runtime_estimations inner (external_utils.py:66), [0/0] everywhere: fastest ranks 0/5/6
  // (13.806 ms), slowest rank 3 (15.877), Δ 2.071 ms.
  const g00 = viewer.data.runtime.find((g) => g.compile === 'inner (external_utils.py:66)');
  assert.deepEqual(g00, { compile: 'inner (external_utils.py:66)', compile_ids: '[0/0]', occurrence: 0, fastest: ['rank 0', 'rank 5', 'rank 6'], slowest: ['rank 3'], delta_ms: 2.071, missing: ['rank 4'] });
  const rtRow = page.locator('[data-table="runtime"] .vt-body .vt-row', { hasText: /inner \(external_utils\.py:66\)\s*\[0\/0\]/ });
  assert.match(await rtRow.innerText(), /ranks 0, 5, 6[\s\S]*13\.806 ms[\s\S]*rank 3[\s\S]*15\.877 ms[\s\S]*2\.071 ms[\s\S]*15\.0%[\s\S]*rank 4/);
  // tensor_meta whole-run groups {0,1,2,3}, {4}, {5,6}.
  assert.deepEqual(viewer.data.tensorMetaGroups, [['rank 0', 'rank 1', 'rank 2', 'rank 3'], ['rank 4'], ['rank 5', 'rank 6']]);
  // inner (external_utils.py:66) differs only in wait_tensor (no outputs key vs two empty outputs).
  const tm00 = page.locator('.rk-tm-graph[data-aligned="0"]');
  assert.match(await tm00.locator('h3').innerText(), /^inner \(external_utils\.py:66\) \[0\/0\]: /);
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

test('ranks_shifted: compiles aligned by code; each rank\'s own compile id, shifted ones marked and linked', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('shifted', '#/ranks'));
  assert.deepEqual(errors, []);
  // Facts, by hand from tables/cross_rank/compile_alignment.json.zst of this bundle:
  // - partial_code: rank_local_metric (ranks_shifted.py:24) compiled by rank2 only, as [0/0],
  //   later_frame_id_shift 1; no ambiguities.
  // - compiles, in order: forward (ranks_shifted.py:20) = [0/0] on ranks 0, 1, 3 and [1/0] on
  //   rank 2; its recompile 1 = [0/1] on rank 1 only; rank_local_metric = rank 2's [0/0];
  //   sync_grads (ranks_shifted.py:28) and its recompiles 1, 2 = [1/0..2] on ranks 0, 1, 3 and
  //   [2/0..2] on rank 2. Every status ok.
  // - groups: {rank0, rank3} (4 compiles), {rank1} (+ forward recompile 1), {rank2} (+ rank_local_metric).
  const w = viewer.data.warnings;
  assert.equal(w[0], 'rank 2 compiled rank_local_metric (ranks_shifted.py:24) as [0/0], which no other rank compiled; its later frame ids are shifted by 1');
  assert.ok(w.includes('Ranks compiled different graphs: ranks 0, 3 vs rank 1 vs rank 2'), JSON.stringify(w));
  assert.ok(w.includes('The same code has other compile ids on some ranks, so compiles are compared by the code they compiled, not by compile id: ' +
    'on rank 2, [1/0] is forward (ranks_shifted.py:20) ([0/0] on most ranks), [2/0] is sync_grads (ranks_shifted.py:28) ([1/0] on most ranks)'), JSON.stringify(w));
  assert.ok(!w.some((x) => /^Alignment of/.test(x)), 'no ambiguity');
  assert.equal(await page.locator('#rk-divergence .warning').first().locator('code').innerText(), 'rank_local_metric');

  const groups = await page.locator('#rk-groups .rk-group').allInnerTexts();
  assert.equal(groups.length, 3);
  assert.match(groups[0], /rank 0[\s\S]*rank 3[\s\S]*4 compiles, only those every rank made/);
  assert.match(groups[1], /rank 1[\s\S]*5 compiles: the 4 compiles every rank made, plus forward \(ranks_shifted\.py:20\), recompile 1$/);
  assert.match(groups[2], /rank 2[\s\S]*5 compiles: the 4 compiles every rank made, plus rank_local_metric \(ranks_shifted\.py:24\)$/);

  const grid = viewer.data.grid;
  assert.deepEqual(grid.streams, ['rank0', 'rank1', 'rank2', 'rank3']);
  assert.deepEqual(grid.compiles, ['forward (ranks_shifted.py:20)', 'forward (ranks_shifted.py:20), recompile 1', 'rank_local_metric (ranks_shifted.py:24)',
    'sync_grads (ranks_shifted.py:28)', 'sync_grads (ranks_shifted.py:28), recompile 1', 'sync_grads (ranks_shifted.py:28), recompile 2']);
  assert.deepEqual(grid.ids[0], ['[0/0]', '[0/0]', '[1/0]', '[0/0]']);
  assert.deepEqual(grid.shifted[0], [false, false, true, false]);
  assert.deepEqual(grid.ids[1], [null, '[0/1]', null, null]);
  assert.deepEqual(grid.ids[2], [null, null, '[0/0]', null]);
  assert.deepEqual(grid.shifted[2], [false, false, false, false], 'a compile only one rank made is not shifted');
  for (const k of [0, 1, 2]) {
    assert.deepEqual(grid.ids[3 + k], [`[1/${k}]`, `[1/${k}]`, `[2/${k}]`, `[1/${k}]`]);
    assert.deepEqual(grid.shifted[3 + k], [false, false, true, false]);
  }
  assert.ok(grid.cells.flat().every((st) => st === 'ok' || st === 'missing'));
  // In the DOM: rank 2's forward cell says [1/0], is marked shifted and links to rank 2's [1/0].
  const cell = page.locator('.rk-cell[data-stream="rank2"][data-compile-id="[1/0]"]');
  assert.equal(await cell.innerText(), '[1/0]');
  assert.match(await cell.getAttribute('class'), /\bshifted\b/);
  assert.match(await cell.getAttribute('title'), /forward \(ranks_shifted\.py:20\)[\s\S]*most ranks gave this compile the id \[0\/0\]/);
  assert.notEqual(await cell.evaluate((e) => getComputedStyle(e).borderColor),
    await page.locator('.rk-cell[data-stream="rank0"][data-compile-id="[0/0]"]').first().evaluate((e) => getComputedStyle(e).borderColor));
  assert.equal(await page.locator('.rk-cell.shifted').count(), 4);
  await shot(page, 'ranks-ranks_shifted-light');

  // Schedules and artifacts name the compile by label, with each rank's own id.
  assert.match(await page.locator('[data-table="schedules"] .vt-body .vt-row').first().innerText(),
    /sync_grads \(ranks_shifted\.py:28\)\s+\[1\/0\] \(\[2\/0\] on rank 2\)/);
  const art = viewer.data.rankDiffer.find((r) => r.compile === 'forward (ranks_shifted.py:20)' && r.name === 'aotautograd_cache_miss');
  assert.deepEqual(art.groups, [['rank 0', 'rank 1', 'rank 3'], ['rank 2']]);
  assert.deepEqual(art.compile_ids.map((c) => c.compile_id), ['[0/0]', '[0/0]', '[1/0]', '[0/0]']);
  const artRow = page.locator('[data-table="rank-differ"] .vt-body .vt-row', { hasText: 'aotautograd_cache_miss' }).first();
  assert.equal(await artRow.locator('a.rk-cid', { hasText: '[1/0]' }).getAttribute('href'), '#/compile?s=rank2&id=%5B1%2F0%5D');
  assert.equal(await artRow.locator('a.rk-diff-link').getAttribute('href'), '#/rank-diff?c=0&name=aotautograd_cache_miss&a=rank0&b=rank2');

  // Following the cell opens rank 2's own [1/0]: the compile of forward.
  const before = await page.evaluate(() => window.__viewer.renders);
  await cell.click();
  const c = await settle(page, before);
  assert.equal(c.page, 'compile');
  assert.deepEqual([c.params.s, c.params.id], ['rank2', '[1/0]']);
  assert.equal(c.data.compile.id, '[1/0]');
  assert.equal(c.data.compile.frame, 'forward');

  // The rank diff of that artifact names each side's own compile id, linked.
  const d = await go(page, '#/rank-diff?c=0&name=aotautograd_cache_miss&a=rank0&b=rank2');
  assert.deepEqual([d.data.rankDiff.compile, d.data.rankDiff.idA, d.data.rankDiff.idB], ['forward (ranks_shifted.py:20)', '[0/0]', '[1/0]']);
  assert.equal(await page.locator('.rk-diff-sides').innerText(), 'rank 0 [0/0] → rank 2 [1/0]');
  assert.equal(await page.locator('.rk-diff-sides a', { hasText: '[1/0]' }).getAttribute('href'), '#/compile?s=rank2&id=%5B1%2F0%5D');
  await shot(page, 'rank-diff-ranks_shifted-light');
  // A rank's own id resolves on that rank: [1/0] is forward on rank 2, sync_grads on rank 0.
  const byId2 = await go(page, '#/rank-diff?id=[1/0]&name=aotautograd_cache_miss&a=rank2&b=rank0');
  assert.equal(byId2.data.rankDiff.compile, 'forward (ranks_shifted.py:20)');
  const byId0 = await go(page, '#/rank-diff?id=[1/0]&name=aotautograd_cache_miss&a=rank0&b=rank2');
  assert.equal(byId0.data.rankDiff.compile, 'sync_grads (ranks_shifted.py:28)');
  assert.deepEqual([byId0.data.rankDiff.idA, byId0.data.rankDiff.idB], ['[1/0]', '[2/0]']);
  assert.deepEqual(errors, []);
  await close();
});

test('ranks_shifted in the dark theme', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('shifted', '#/ranks'), { theme: 'dark' });
  assert.deepEqual(errors, []);
  await shot(page, 'ranks-ranks_shifted-dark');
  await close();
});

test('64 ranks × 400 compiles: the grid renders only the cells in view and scrolls', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('logs', '#/overview'));
  // Feed ranks.js a synthetic compile_alignment through a stubbed bundle: 64 ranks; rank 63 first
  // compiled a helper of its own, so its ids of step are [1/j] where the others' are [0/j], and it
  // lacks the last recompile; rank 5's recompile 3 failed and is an ambiguity (code unknown).
  const result = await page.evaluate(async () => {
    const { render } = await import('./viewer/pages/ranks.js');
    const members = Array.from({ length: 64 }, (_, i) => ({ stream: `r${i}`, rank: i, label: `rank ${i}` }));
    const all = members.map((m) => m.stream);
    const code = (name, line) => ({ filename: '/x/train.py', line, name });
    const step = Array.from({ length: 400 }, (_, j) => {
      const present = members.filter((m, i) => !(i === 63 && j === 399)).map((m, i) => ({
        stream: m.stream, compile_id: i === 63 ? `[1/${j}]` : `[0/${j}]`, status: i === 5 && j === 3 ? 'failed' : 'ok',
      }));
      return {
        label: j ? `step (train.py:10), recompile ${j}` : 'step (train.py:10)',
        key: { compiled_autograd_id: null, code: code('step', 10), ordinal: j, attempt: 0, compile_id: null },
        present, missing: j === 399 ? ['r63'] : [], status_differs: j === 3, compile_id_differs: j !== 399,
      };
    });
    const helper = {
      label: 'helper (train.py:5)', key: { compiled_autograd_id: null, code: code('helper', 5), ordinal: 0, attempt: 0, compile_id: null },
      present: [{ stream: 'r63', compile_id: '[0/0]', status: 'ok' }], missing: all.slice(0, 63), status_differs: false, compile_id_differs: false,
    };
    const table = {
      diverges: true, ids_shifted: true,
      groups: [{ group: { streams: all.slice(0, 63) }, compiles: step.map((_, j) => j) },
        { group: { streams: ['r63'] }, compiles: [...step.slice(0, 399).map((_, j) => j), 400] }],
      compiles: [...step, helper],
      partial_code: [{ code: code('helper', 5), compiled_autograd_id: null, label: 'helper (train.py:5)',
        compiled_by: [{ stream: 'r63', compile_id: '[0/0]', status: 'ok' }], not_compiled_by: all.slice(0, 63), later_frame_id_shift: 1 }],
      streams: members.map((m, i) => ({ stream: m.stream, compiles: i === 63 ? 400 : 400, missing: 1,
        frame_id_shifts: i === 63 ? [{ aligned: 0, frame_id: 1, usual_frame_id: 0, by: 1 }] : [] })),
      ambiguities: [{ stream: 'r5', kind: 'code_unknown', compile_ids: ['[0/3]'], resolution: 'aligned by compile id' }],
    };
    const data = {};
    const manifest = { cross_rank: { members, tables: { compile_alignment: {} } }, streams: members.map((m) => ({ id: m.stream })) };
    const ctx = {
      manifest, params: new URLSearchParams(), href: (p, q) => `#/${p}?${new URLSearchParams(Object.entries(q ?? {}).filter(([, v]) => v != null))}`,
      crossTable: async (n) => (n === 'compile_alignment' ? table : null), expose: (k, v) => { data[k] = v; }, bundle: {},
    };
    const node = await render(ctx);
    document.getElementById('main').replaceChildren(node);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const grid = node.querySelector('.rk-grid');
    const before = grid.querySelectorAll('.rk-cell').length;
    const differs = [...grid.querySelectorAll('.rk-row-head.status-differs')].map((e) => e.textContent);
    const cellW = parseFloat(grid.querySelector('.rk-cell').style.width);
    grid.scrollLeft = 50 * cellW;
    grid.scrollTop = 300 * 24;
    grid.dispatchEvent(new Event('scroll'));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return {
      warnings: data.warnings, before, after: grid.querySelectorAll('.rk-cell').length, differs,
      heads: [...grid.querySelectorAll('.rk-col-head')].map((e) => e.textContent),
      rows: [...grid.querySelectorAll('.rk-row-head')].map((e) => e.textContent),
      shiftedDrawn: [...grid.querySelectorAll('.rk-cell.shifted')].map((e) => e.dataset.stream),
      cells: data.grid.cells.length * data.grid.cells[0].length,
      ids: [data.grid.ids[310][0], data.grid.ids[310][63]], shifted: [data.grid.shifted[310][0], data.grid.shifted[310][63]],
      ambiguities: node.querySelectorAll('[data-table="ambiguities"] .vt-body .vt-row').length,
    };
  });
  assert.equal(result.cells, 401 * 64);
  assert.ok(result.before > 0 && result.before < 2000, `cells drawn: ${result.before}`);
  assert.ok(result.after > 0 && result.after < 2000, `cells drawn after scrolling: ${result.after}`);
  assert.ok(result.rows.includes('step (train.py:10), recompile 310'), result.rows.join(' | '));
  assert.ok(result.heads.includes('rank 50'), result.heads.join(' '));
  assert.deepEqual(result.differs, ['step (train.py:10), recompile 3≠']);
  assert.deepEqual(result.ids, ['[0/310]', '[1/310]']);
  assert.deepEqual(result.shifted, [false, true]);
  assert.ok(result.shiftedDrawn.length > 0 && result.shiftedDrawn.every((s) => s === 'r63'), result.shiftedDrawn.join(' '));
  const w = result.warnings;
  assert.equal(w[0], 'rank 63 compiled helper (train.py:5) as [0/0], which no other rank compiled; its later frame ids are shifted by 1');
  assert.ok(w.includes('Ranks compiled different graphs: ranks 0–62 vs rank 63'), JSON.stringify(w));
  assert.ok(w.includes('Compile status differs on 1 compile, e.g. step (train.py:10), recompile 3 [0/3] ([1/3] on rank 63): ok on ranks 0–4, 6–63; failed on rank 5'), JSON.stringify(w));
  assert.ok(w.includes('Alignment of [0/3] on rank 5 (code unknown): aligned by compile id'), JSON.stringify(w));
  assert.equal(result.ambiguities, 1);
  assert.deepEqual(errors, []);
  await close();
});
