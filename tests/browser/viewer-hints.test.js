// Real-browser tests of torch's hints on the Graph breaks page (the `hints` table), at desktop and
// phone width. Facts asserted were checked by hand against the logs (grep -n "Hint:") and the
// decoded tables (zstd -dc BUNDLE/tables/log0/hints.json.zst).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, open, shot, fixture, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => {
  env = await setup({
    graph_breaks: fixture('torch-2.15/graph_breaks'),
    recompiles: fixture('torch-2.15/recompiles'),
    simple: fixture('torch-2.15/simple'),
  });
});
after(() => env?.close());

/** A screenshot from the top of the page (the header is sticky: scrolled, it would float mid-page). */
async function snap(page, name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, name);
}

for (const width of [1280, 390]) {
  test(`hints: torch's own hints under the graph breaks, quoted, with their counts and compiles (${width} px)`, { timeout: TIMEOUT }, async () => {
    const { page, viewer, errors, close } = await open(env, env.url('graph_breaks', '#/graph-breaks'), { width, height: 860 });
    assert.deepEqual(errors, []);
    // graph_breaks log: the print breaks of frames 0, 1, 2, 3, 14 (e.g. lines 76-78) carry three
    // hints, each break and the restart of its [f/0_1] once: 5 breaks, 5 restarts; Tensor.item()
    // at [5/0] (line 14281) and its restart [5/0_1] carry capture_scalar_outputs. Seven hints.
    const hints = viewer.data.hints;
    assert.equal(hints.length, 7);
    assert.deepEqual(hints.map((x) => [x.graph_breaks, x.restarts]), [[5, 5], [5, 5], [5, 5], [2, 2], [2, 2], [2, 2], [1, 1]]);
    const section = page.locator('.an-hints');
    assert.equal(await section.locator('h2').innerText(), "Torch's hints");
    assert.match(await section.locator('.note').innerText(), /^7 distinct hints from torch's messages: its own "Hint:" lines, quoted as logged\./);
    const item = section.locator('[data-hint="6"]');
    assert.equal(await item.locator('blockquote').innerText(),
      'Set `torch._dynamo.config.capture_scalar_outputs = True` or `export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in the captured graph.');
    assert.match(await item.locator('.an-hint-meta').innerText(),
      /^1 graph break, 1 restart · Unsupported Tensor\.item\(\) call with capture_scalar_outputs=False · at \/home\/user\/scenarios\/graph_breaks\.py:25$/);
    assert.deepEqual(await item.locator('.an-idlist a').allInnerTexts(), ['[5/0]', '[5/0_1]']);
    // "Please report an issue to PyTorch." is torch's too, kept and marked.
    const report = section.locator('[data-hint="2"]');
    assert.equal(await report.locator('blockquote').innerText(), 'Please report an issue to PyTorch.');
    assert.equal(await report.locator('.an-pill').innerText(), 'asks for an issue report');
    assert.equal(await section.locator('.an-pill').count(), 2, 'the two hints that ask for an issue');
    // Nothing overflows sideways.
    const overflow = await section.evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok(overflow <= 0, `the hints section overflows by ${overflow} px`);
    await snap(page, `hints-graph_breaks-${width}`);
    // A compile link opens that compile.
    await item.locator('.an-idlist a').first().click();
    await page.waitForFunction(() => location.hash.startsWith('#/compile'));
    assert.match(decodeURIComponent(await page.evaluate(() => location.hash)), /id=\[5\/0\]/);
    assert.deepEqual(errors, []);
    await close();
  });
}

test('hints: a failure\'s hints show with no graph break, and a stream without hints has no section', { timeout: TIMEOUT }, async () => {
  // recompiles log, line 13483: [0/4] fails with "Dynamo recompile limit exceeded", two hints.
  const { page, viewer, errors, close } = await open(env, env.url('recompiles', '#/graph-breaks'), { width: 390, height: 844 });
  assert.deepEqual(errors, []);
  // (At phone width the tabs are also listed in a menu: the tab is there once or twice.)
  assert.ok(await page.locator('nav a', { hasText: 'Graph breaks' }).count() >= 1, 'the tab shows for hints alone');
  assert.equal(await page.locator('.empty').innerText(), 'No graph breaks were logged in this stream.');
  assert.deepEqual(viewer.data.hints.map((x) => [x.failures, x.compile_ids]), [[1, ['[0/4]']], [1, ['[0/4]']]]);
  assert.match(await page.locator('.an-hints [data-hint="1"] .an-hint-meta').innerText(), /^1 failure · Dynamo recompile limit exceeded$/);
  await snap(page, 'hints-recompiles-390');
  await close();
  const s = await open(env, env.url('simple', '#/graph-breaks'));
  assert.equal(await s.page.locator('.an-hints').count(), 0);
  assert.equal(await s.page.locator('nav a', { hasText: 'Graph breaks' }).count(), 0);
  assert.deepEqual(s.errors, []);
  await s.close();
});
