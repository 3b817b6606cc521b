// Real-browser tests of the rank diff's overview (`#/rank-diff` without params, pages/rank-diff.js)
// and of the Ranks page's artifact findings: real differences first with their line diffs, the
// payloads that are the same up to ids counted and collapsed apart (never listed as differences),
// and what a rank did not log because of an FX cache hit. Every count asserted was checked by hand
// against the raw logs (tests/it/cross_rank/rank_differ.rs has the checks) and is read back from
// the bundle's own rank_differ table here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { setup, open, go, shot, fixture, BIN, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => {
  env = await setup({
    schedule: fixture('tlparse-tests/multi_rank_schedule'),
    shifted: fixture('torch-2.15/ranks_shifted'),
  });
});
after(() => env?.close());

/** A cross-rank table of a built bundle, read with the CLI's own zstd (no decoder of ours). */
const table = (name, t) => JSON.parse(execFileSync('zstd', ['-dc', path.join(env.dir(name), 'tables/cross_rank', `${t}.json.zst`)], { encoding: 'utf8' }));
const cat = (name, blob) => execFileSync(BIN, ['cat', env.dir(name), blob], { encoding: 'utf8' });

/** Line diff counts computed in Node (LCS), independent of the viewer's diff.js. */
function lcsCounts(a, b) {
  const split = (t) => { const l = t.split('\n'); if (l.length > 1 && l[l.length - 1] === '') l.pop(); return l; };
  const x = split(a);
  const y = split(b);
  const dp = Array.from({ length: x.length + 1 }, () => new Int32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) dp[i][j] = x[i] === y[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  }
  return { removed: x.length - dp[0][0], added: y.length - dp[0][0] };
}

for (const width of [1280, 390]) {
  test(`multi_rank_schedule at ${width} px: the one real difference with its diff, the same-up-to-ids apart`, { timeout: TIMEOUT }, async () => {
    const rd = table('schedule', 'rank_differ');
    // By hand (tests/it/cross_rank/rank_differ.rs): 28 keys, 17 identical, 10 same up to ids, 1
    // differs: [0/0]'s inductor_collective_schedule, where file rank 1's log line 1086 has
    // `wait_tensor.default` and ranks 0 and 2 have `reduce_scatter_tensor.default,` (their payloads,
    // lines 1082-1089, list 6 ops; rank 1's, lines 1082-1087, 4).
    assert.deepEqual([rd.keys, rd.identical, rd.same_up_to_ids, rd.differs], [28, 17, 10, 1]);
    const { page, viewer, errors, close } = await open(env, env.url('schedule', '#/rank-diff'), { width });
    assert.deepEqual(errors, []);
    const o = viewer.data.rankDiffOverview;
    assert.equal(o.differsTotal, 1);
    assert.equal(o.differs.length, 1);
    const [d] = o.differs;
    assert.deepEqual([d.compile, d.name, d.graph, d.line], ['graph_one (test2.py:28)', 'inductor_collective_schedule', 'inference', 5]);
    assert.equal(d.variants.length, 1);
    const v = d.variants[0];
    assert.deepEqual([v.odd, v.usual], [['rank0-1'], ['rank0-0', 'rank0-2']]);
    // The diff goes from the usual payload to the odd one; its counts match a diff made in Node:
    // rank 1 lacks `reduce_scatter_tensor.default,` and one `wait_tensor.default,`.
    const expected = lcsCounts(cat('schedule', v.blobA), cat('schedule', v.blobB));
    assert.deepEqual(expected, { removed: 2, added: 0 });
    assert.deepEqual({ removed: v.removed, added: v.added }, expected);
    const card = page.locator('.rk-difference');
    assert.equal(await card.count(), 1);
    const del = await card.locator('.diff-line.del .text').allInnerTexts();
    assert.deepEqual(del, ['"torch.ops._c10d_functional.reduce_scatter_tensor.default",', '"torch.ops._c10d_functional.wait_tensor.default",']);
    assert.equal(await card.locator('.diff-line.add').count(), 0);
    assert.match(await card.locator('.rk-difference-who').innerText(), /^rank 1 \(\+\) against ranks 0, 2 \(−\)/);

    // The same up to ids: counted as the table counts them, collapsed, and none of them is a card.
    assert.equal(o.sameUpToIds, rd.same_up_to_ids);
    const same = page.locator('details.rk-same-ids');
    assert.equal(await same.getAttribute('open'), null, 'collapsed');
    assert.match(await same.locator('summary').innerText(), /^Same up to ids: 10 artifacts \(not differences\)$/);
    assert.equal(await same.locator('li').count(), 10);
    const sameNames = new Set(rd.artifacts.filter((r) => r.status === 'same_up_to_ids').map((r) => r.name));
    const cardNames = await page.locator('.rk-difference').evaluateAll((els) => els.map((e) => e.dataset.name));
    assert.ok(cardNames.every((n) => !sameNames.has(n) || n === 'inductor_collective_schedule'), JSON.stringify(cardNames));
    assert.deepEqual(o.differs.filter((x) => rd.artifacts.some((r) => r.name === x.name && r.status === 'same_up_to_ids' && (r.graph ?? null) === x.graph)), []);
    await shot(page, `rank-diff-overview-multi_rank_schedule-${width}`);

    // The Ranks page says the same in its summary and findings, from rank_findings in words.
    const r = await go(page, '#/ranks?sec=rank-differ');
    const w = r.data.warnings;
    assert.ok(w.includes('1 artifact differs between ranks (10 more are the same up to ids: not differences)'), JSON.stringify(w));
    const described = table('schedule', 'rank_findings').artifacts.described;
    assert.equal(described.length, 1);
    assert.ok(w.includes(described[0]), JSON.stringify(w));
    assert.match(described[0], /^rank 1's `inductor_collective_schedule` \(inference\) of `graph_one \(test2\.py:28\)` differs at line 5/);
    const summary = await page.locator('#rk-rank-differ .note').first().innerText();
    assert.match(summary, /^28 artifacts \(per compile, name, graph and occurrence\): 1 differs, 10 same up to ids \(.*\), 17 identical on every rank, 0 the same where present; 0 missing on some rank\./);
    // Rows: the real difference links to `diff`, the same-up-to-ids rows to `ids`.
    const links = await page.locator('[data-table="rank-differ"] a.rk-diff-link').allInnerTexts();
    assert.deepEqual(links.filter((t) => t === 'diff').length, 1);
    await shot(page, `ranks-artifacts-multi_rank_schedule-${width}`);
    assert.deepEqual(errors, []);
    await close();
  });
}

for (const width of [1280, 390]) {
  test(`ranks_shifted at ${width} px: nothing differs; 31 same up to ids collapsed; rank 2's FX cache hit not logged`, { timeout: TIMEOUT }, async () => {
    const rd = table('shifted', 'rank_differ');
    // By hand (tests/it/cross_rank/rank_differ.rs): nothing differs once masked, 31 keys are the
    // same up to ids; rank 2 hit the FX cache for forward's forward graph (its log line 5292) and
    // logged no before_post_grad_graph nor fx_graph_cache_miss for it.
    assert.deepEqual([rd.differs, rd.same_up_to_ids], [0, 31]);
    const hits = rd.artifacts.filter((r) => r.missing_on_cache_hit?.length);
    assert.deepEqual(hits.map((r) => [r.name, r.graph, r.missing_on_cache_hit]),
      [['before_post_grad_graph', 'forward', ['rank2']], ['fx_graph_cache_miss', 'forward', ['rank2']]]);
    const { page, viewer, errors, close } = await open(env, env.url('shifted', '#/rank-diff'), { width });
    assert.deepEqual(errors, []);
    const o = viewer.data.rankDiffOverview;
    assert.deepEqual([o.differsTotal, o.differs.length, o.sameUpToIds], [0, 0, 31]);
    assert.equal(await page.locator('.rk-difference').count(), 0);
    assert.ok(await page.getByText('No artifact differs').count() > 0);
    assert.equal(await page.locator('details.rk-same-ids li').count(), 31);
    assert.deepEqual(o.notLoggedOnCacheHit.map((x) => [x.name, x.graph, x.streams]),
      hits.map((r) => [r.name, r.graph, r.missing_on_cache_hit]));
    const gaps = await page.locator('.rk-cache-gaps li').allInnerTexts();
    assert.equal(gaps.length, 2);
    for (const g of gaps) assert.match(g, /^rank 2: .* — not logged: FX cache hit$/);
    await shot(page, `rank-diff-overview-ranks_shifted-${width}`);
    // One artifact the ranks logged the same up to ids: shown as such, with rank 2's missing one worded.
    const one = await go(page, '#/rank-diff?c=0&name=before_post_grad_graph&g=forward');
    assert.equal(one.data.rankDiff.name, 'before_post_grad_graph');
    assert.match(await page.locator('.rk-missing').innerText(), /^rank 2: not logged: FX cache hit/);
    await shot(page, `rank-diff-cache-hit-ranks_shifted-${width}`);
    assert.deepEqual(errors, []);
    await close();
  });
}
