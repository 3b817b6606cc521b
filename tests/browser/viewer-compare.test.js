// Real-browser tests of the Compare page (pages/compare.js, `index.html?bundle=A&compare=B`): its
// findings must equal `tlparse-build compare A B --json` for the same bundles (the page pairs
// frame compiles by align_key only; the CLI by the alignment module), every compile id links to
// its compile page in its own run, restarts show as history, a differing artifact shows its first
// differing line and its line diff under its row in one click, and artifacts that differ only in
// ids (masked by volatile.js, the mirror of the CLI's rule) are collapsed apart. Facts asserted beyond equality were checked by hand against the logs
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
    pair_a: fixture('torch-2.15/compare_pair/run_a'),
    pair_b: fixture('torch-2.15/compare_pair/run_b'),
  });
});
after(() => env?.close());

/** `index.html?bundle=A&compare=B` of bundles A and B, relative URLs as a user would type them. */
const compareUrl = (a, b, hash = '#/compare') => env.url(a).replace(/index\.html$/, `index.html?bundle=../${a}/&compare=../${b}/${hash}`);

const cli = (a, b) => JSON.parse(execFileSync(BIN, ['compare', env.dir(a), env.dir(b), '--json'], { encoding: 'utf8' }));

/** The comparison with each stream's compiles in align_key order and its recompiles in frame
 * order (the page lists A's order, then B's; the CLI the alignment's). */
function canonical(c) {
  const by = (f) => (x, y) => (f(x) < f(y) ? -1 : f(x) > f(y) ? 1 : 0);
  return { ...c, streams: c.streams.map((s) => ({ ...s, compiles: [...s.compiles].sort(by((x) => x.align_key)), recompiles: [...s.recompiles].sort(by((r) => r.frame)) })) };
}

test('two_runs: the page finds what the CLI finds; final attempts paired, restart as history, links into both runs', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, compareUrl('run_a', 'run_b'));
  assert.deepEqual(errors, []);
  assert.equal(viewer.state, 'ready');
  assert.equal(viewer.page, 'compare');
  const fromCli = cli('run_a', 'run_b');
  assert.deepEqual(canonical(viewer.data.compare), canonical(fromCli));
  const s = viewer.data.compare.streams[0];
  // run_a compiled forward (two_runs.py:32) once as [0/0]; run_b's [0/0] broke the graph at the
  // print (two_runs.py:22, run_b lines 70-74) and restarted as [0/0_1], its final attempt (metrics
  // line 386): A's [0/0] pairs with B's [0/0_1], B's [0/0] is history.
  const both = s.compiles.filter((x) => x.a && x.b);
  assert.deepEqual(both.map((x) => [x.code, x.a, x.b]), [['forward (two_runs.py:32)', '[0/0]', '[0/0_1]']]);
  assert.deepEqual(both[0].b_restarts, [{ compile_id: '[0/0]', why: ['graph break at two_runs.py:22 (Failed to trace builtin operator)'] }]);
  const kinds = both[0].changes.map((c) => c.kind);
  assert.ok(kinds.includes('status') && kinds.includes('compile_time') && kinds.includes('graphs_only'), kinds.join());
  assert.ok(!kinds.includes('graph_breaks'), kinds.join());
  // 18 compile ids in run_b, 6 restarted attempts: 12 frame compiles, 11 only in B.
  assert.equal(s.compiles.filter((x) => !x.a).length, 11);
  assert.deepEqual(s.recompiles.map((r) => [r.frame, r.a, r.b]), [
    ['forward (two_runs.py:32)', 0, 1], ['forward (two_runs.py:19)', 0, 3],
    ['torch_dynamo_resume_in_forward_at_22 (two_runs.py:22)', 0, 3], ['torch_dynamo_resume_in_forward_at_33 (two_runs.py:33)', 0, 1]]);
  // The Compare tab is there, and the page shows the pair, B's history and the only-in-B list.
  assert.deepEqual(await page.locator('nav.tabs a.active').allInnerTexts(), ['Compare']);
  assert.match(await page.locator('.cmp-compile h3').first().innerText(), /forward \(two_runs\.py:32\) A \[0\/0\] → B \[0\/0_1\]/);
  assert.match(await page.locator('.cmp-compile .cmp-history').first().innerText(),
    /^B restarted once: \[0\/0\] graph break at two_runs\.py:22 \(Failed to trace builtin operator\)$/);
  assert.equal(await page.locator('.cmp-only-b li').count(), 11);
  assert.ok(!(await page.locator('main').innerText()).includes('→ none'));
  await shot(page, 'compare-two_runs-light');
  // Every compile id is a link to its compile page in its own run: A's in this bundle, B's opens
  // the viewer on bundle B.
  const ids = page.locator('.cmp-compile h3 a.cmp-id');
  assert.equal(await ids.nth(0).getAttribute('href'), '#/compile?id=%5B0%2F0%5D&s=log0');
  await ids.nth(1).click();
  // The click loads another document: until its viewer starts, window.__viewer is undefined.
  await page.waitForFunction(() => window.__viewer?.page === 'compile' && window.__viewer.state === 'ready');
  assert.match(page.url(), /\?bundle=.*run_b.*#\/compile\?s=log0&id=%5B0%2F0_1%5D$/);
  assert.match(await page.locator('main h1').first().innerText(), /\[0\/0_1\]/);
  assert.ok(!(await page.locator('main').innerText()).includes('has no compile'));
  assert.deepEqual(errors, []);
  await close();
});

test('compare_pair: two restarts as history, two same-named resume frames, no recompile; phone width', { timeout: TIMEOUT }, async () => {
  // run_b (fixtures-repo/torch-2.15/compare_pair, SUMMARY.md §17): forward's [0/0] breaks at
  // compare_pair.py:31 (line 103), [0/0_1] restarts for TensorifyScalarRestartAnalysis, [0/0_2]
  // compiles (metrics line 4262); [3/0_1] and [4/0] are two frames named
  // torch_dynamo_resume_in_summarize_at_41 (frame_key 9 and 10, cache_size 0 each).
  for (const width of [1280, 390]) {
    const { page, viewer, errors, close } = await open(env, compareUrl('pair_a', 'pair_b'), { width });
    assert.deepEqual(errors, []);
    assert.deepEqual(canonical(viewer.data.compare), canonical(cli('pair_a', 'pair_b')));
    const s = viewer.data.compare.streams[0];
    assert.deepEqual(s.compiles.map((x) => [x.code, x.a, x.b]), [
      ['forward (compare_pair.py:27)', '[0/0]', '[0/0_2]'],
      ['summarize (compare_pair.py:38)', '[1/0]', '[2/0_1]'],
      ['torch_dynamo_resume_in_forward_at_31 (compare_pair.py:31)', null, '[1/0]'],
      ['torch_dynamo_resume_in_summarize_at_41 (compare_pair.py:41)', null, '[3/0_1]'],
      ['torch_dynamo_resume_in_summarize_at_41 (compare_pair.py:41), frame 2', null, '[4/0]'],
    ]);
    assert.deepEqual(s.recompiles, []);
    // Every artifact both final attempts logged differs beyond ids (B's are of dynamic shapes), and
    // each shows its first differing line: dynamo_output_graph's payload line 2, `L_x_: "f32[8,
    // 16]..."` in A (run_a line 118, entry at 116) where B's [0/0_2] has `s77: "Sym(s77)", L_x_:
    // "f32[s77, 16]..."` (run_b line 908, entry at 906 with `"attempt": 2`).
    assert.ok(s.compiles.every((x) => x.same_up_to_ids.length === 0));
    const arts = s.compiles.flatMap((x) => x.changes).filter((c) => c.kind === 'artifact');
    assert.equal(arts.length, 29);
    assert.ok(arts.every((c) => c.first_difference && c.first_difference.line >= 1), JSON.stringify(arts));
    assert.equal(await page.locator('.cmp-compile').first().locator('.cmp-same').count(), 0);
    assert.match(await page.locator('.cmp-compile').first().locator('.cmp-artifact', { hasText: 'dynamo_output_graph' }).innerText(),
      /differs from line 2[\s\S]*s77: "Sym\(s77\)"/);
    assert.equal(await page.locator('.cmp-compile').first().locator('.cmp-history').innerText(),
      "B restarted twice: [0/0] graph break at compare_pair.py:31 (Unsupported Tensor.item() call with capture_scalar_outputs=False), " +
      "then [0/0_1] <class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>");
    // Each restarted attempt links to its compile page in run B.
    const restartLinks = page.locator('.cmp-compile').first().locator('.cmp-history a.cmp-id');
    assert.deepEqual(await restartLinks.allInnerTexts(), ['[0/0]', '[0/0_1]']);
    assert.match(await restartLinks.nth(1).getAttribute('href'), /\?bundle=.*pair_b.*#\/compile\?s=log0&id=%5B0%2F0_1%5D$/);
    const text = await page.locator('main').innerText();
    assert.ok(!text.includes('→ none'), text);
    assert.equal(await page.locator('.cmp-recompiles').count(), 0);
    // The first differing artifact of forward shows its diff under its row.
    await page.locator('.cmp-compile').first().locator('.cmp-artifact a.cmp-diff-link').first().click();
    await page.waitForFunction(() => window.__viewer.data.compareDiff && window.__viewer.state === 'ready');
    assert.equal(await page.locator('.cmp-compile').first().locator('.cmp-artifact .cmp-diff .diff-line').count() > 0, true);
    await shot(page, `compare-pair-${width}`);
    // On a phone nothing of the page sticks out sideways (long guards and diffs wrap, or scroll
    // inside their own box).
    const wide = await page.evaluate(() => {
      const clipped = (el) => {
        for (let p = el.parentElement; p; p = p.parentElement) if (['auto', 'hidden', 'scroll'].includes(getComputedStyle(p).overflowX)) return true;
        return false;
      };
      return [...document.querySelectorAll('main *')].filter((el) => el.getBoundingClientRect().right > innerWidth + 1 && !clipped(el))
        .slice(0, 5).map((el) => `${el.tagName}.${el.className}`);
    });
    assert.ok(width > 400 || wide.length === 0, wide.join(' '));
    assert.deepEqual(errors, []);
    await close();
  }
});

test('cache_cold → cache_warm: cache miss → hit; guards the same up to ids collapsed apart; a real difference opens its diff in one click', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, compareUrl('cold', 'warm'));
  assert.deepEqual(errors, []);
  assert.deepEqual(canonical(viewer.data.compare), canonical(cli('cold', 'warm')));
  const [first, second] = viewer.data.compare.streams[0].compiles;
  assert.deepEqual(first.changes.filter((c) => c.kind === 'cache').map((c) => [c.cache, c.a, c.b]),
    [['aotautograd_cache', ['miss'], ['hit']], ['fx_graph_cache', ['miss', 'miss'], ['hit', 'hit']]]);
  // dynamo_cpp_guards_str differs only in ids and the measured guard latency (cache_cold lines
  // 3905-4047 vs cache_warm 1659-1801: 23 of 142 payload lines, e.g. `___check_type_id(L['args'],
  // 140077273834368)` vs `140520343331712`, `Guard latency = 76.72 us` vs `78.71 us`; [1/0]'s,
  // cold 10115 vs warm 2482, only in its guard latency): the same up to ids, no change.
  assert.deepEqual([first.same_up_to_ids, second.same_up_to_ids], [['dynamo_cpp_guards_str'], ['dynamo_cpp_guards_str']]);
  assert.ok(!first.changes.some((c) => c.name === 'dynamo_cpp_guards_str'));
  // aot_forward_graph_fw_metadata differs for real: payload line 80, `traced_tangents=[FakeTensor(...,
  // size=(16, 10))],` (cold line 801) where the cache hit logged `traced_tangents=[],` (warm line 371).
  const meta = first.changes.find((c) => c.kind === 'artifact' && c.name === 'aot_forward_graph_fw_metadata');
  assert.deepEqual(meta.first_difference, { line: 80, a: '                    traced_tangents=[FakeTensor(..., size=(16, 10))],', b: '                    traced_tangents=[],' });
  const card = page.locator('.cmp-compile').first();
  assert.match(await card.locator('.cmp-artifact', { hasText: 'aot_forward_graph_fw_metadata' }).innerText(), /differs from line 80[\s\S]*traced_tangents=\[\],/);
  // The same-up-to-ids artifacts are collapsed, apart from the changes.
  const same = card.locator('details.cmp-same');
  assert.equal(await same.getAttribute('open'), null);
  assert.match(await same.locator('summary').innerText(), /^1 artifact the same up to ids/);
  // "changed only" keeps only compiles with changes (both have some here).
  await page.locator('.cmp-toggle input').check();
  await page.waitForFunction(() => window.__viewer.params.changed === '1' && window.__viewer.state === 'ready');
  let before = await page.evaluate(() => window.__viewer.renders);
  await page.locator('.cmp-artifact', { hasText: 'aot_forward_graph_fw_metadata' }).first().locator('a.cmp-diff-link').click();
  await page.waitForFunction((n) => window.__viewer.renders > n && window.__viewer.state === 'ready', before);
  let d = await page.evaluate(() => window.__viewer.data.compareDiff);
  assert.equal(d.name, 'aot_forward_graph_fw_metadata');
  assert.deepEqual([d.blobA, d.blobB], [meta.a, meta.b]);
  assert.ok(d.added > 0 && d.removed > 0, JSON.stringify(d));
  // Both sides' real lines are drawn, under the artifact's own row: removed (A) and added (B).
  const row = page.locator('.cmp-artifact', { hasText: 'aot_forward_graph_fw_metadata' }).first();
  assert.ok(await row.locator('.cmp-diff .diff-line.del').count() > 0);
  assert.ok(await row.locator('.cmp-diff .diff-line.add').count() > 0);
  assert.deepEqual(errors, []);
  await shot(page, 'compare-cache-diff-light');
  await page.evaluate(() => { document.documentElement.dataset.theme = 'dark'; });
  await shot(page, 'compare-cache-diff-dark');
  // The guards' diff: no real line, the 23 lines differing in ids shown as logged (nothing masked).
  await page.evaluate(() => { document.documentElement.dataset.theme = 'light'; });
  await page.locator('.cmp-compile').first().locator('details.cmp-same summary').click();
  before = await page.evaluate(() => window.__viewer.renders);
  await page.locator('.cmp-compile').first().locator('details.cmp-same a.cmp-diff-link').click();
  await page.waitForFunction((n) => window.__viewer.renders > n && window.__viewer.state === 'ready', before);
  d = await page.evaluate(() => window.__viewer.data.compareDiff);
  assert.deepEqual([d.name, d.added, d.removed, d.ids], ['dynamo_cpp_guards_str', 0, 0, 23]);
  const sameRow = page.locator('.cmp-compile').first().locator('details.cmp-same');
  assert.equal(await sameRow.getAttribute('open'), '');
  const idLines = await sameRow.locator('.diff-line.ids .text').allInnerTexts();
  assert.ok(idLines.some((t) => t.includes('140077273834368')) && idLines.some((t) => t.includes('140520343331712')), idLines.join('\n'));
  assert.ok(!idLines.some((t) => t.includes('<?>')));
  await shot(page, 'compare-same-up-to-ids');
  assert.deepEqual(errors, []);
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
