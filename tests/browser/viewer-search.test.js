// Search: the header's global search (names from the `search` table, then the full text of every
// artifact in a worker), Find in a code view (Ctrl+F, "k of N", next/previous) and the "/" key,
// on the torch-2.15/graph_breaks fixture. Every expected value was checked by hand in the raw log
// (fixtures-repo/torch-2.15/graph_breaks/*.log); each test says what.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, serveViewerAlone, open, go, settle, shot, fixture } from './viewer-harness.js';

let env;
before(async () => { env = await setup({ gb: fixture('torch-2.15/graph_breaks'), hostile: fixture('hostile/hostile.log'),
  failures: fixture('torch-2.15/failures') }); });
after(() => env?.close());

/** Types `query` in the header's search box and waits for the name results of that query. */
async function search(page, query) {
  await page.fill('input.global-search', query);
  await page.waitForFunction((q) => window.__viewer.search?.query === q && window.__viewer.search.namesMs != null
    && !document.querySelector('.search-panel').hidden, query);
  return page.evaluate(() => JSON.parse(JSON.stringify(window.__viewer.search)));
}

/** The result group of a kind, or undefined. */
const group = (s, kind) => s.groups.find((g) => g.kind === kind);

test('the overview does not fetch the search table; the first search does', async () => {
  const { page, errors, requests, close } = await open(env, env.url('gb'));
  assert.ok(!requests.some((r) => r.url.includes('/search.json.zst')), 'first paint fetched no search table');
  await search(page, 'unsupported_helper');
  assert.ok(requests.some((r) => r.url.includes('/tables/log0/search.json.zst')), 'the first search fetched it');
  assert.deepEqual(errors, []);
  await close();
});

test('names: a function, a graph-break reason and a guard fragment, each linking to its page', async () => {
  const { page, errors, close } = await open(env, env.url('gb'));
  // `unsupported_helper` is the co_name of frame 8's compiles ([8/0] restarted, [8/0_1]: the
  // compilation_metrics at log line 21693 is attempt 1); Dynamo's resume function after its
  // graph break, `torch_dynamo_resume_in_unsupported_helper_at_12`, is the only other name with it.
  let s = await search(page, 'unsupported_hel');
  const fn = group(s, 'function');
  assert.deepEqual(fn.items.map((i) => i.text), ['unsupported_helper', 'torch_dynamo_resume_in_unsupported_helper_at_12']);
  assert.deepEqual(fn.items[0].compiles, ['[8/0_1]', '[8/0]']);
  assert.equal(await page.getAttribute('.sr-group[data-kind="function"] a.sr-item', 'href'), '#/compile?id=%5B8%2F0_1%5D');
  console.log(`  names: search data loaded in ${s.loadMs.toFixed(1)} ms, matched in ${s.namesMs.toFixed(2)} ms`);
  await shot(page, 'search-names-function');

  // The only dynamo_graph_break_reason of this kind is frame 5 attempt 0's (log line 14279):
  // "Unsupported Tensor.item() call with capture_scalar_outputs=False". Enter opens it.
  s = await search(page, 'tensor.item()');
  const gb = group(s, 'graph_break');
  assert.deepEqual(gb.items.map((i) => [i.text, i.compiles]),
    [['Unsupported Tensor.item() call with capture_scalar_outputs=False', ['[5/0]']]]);
  const before = await page.evaluate(() => window.__viewer.renders);
  // Arrows go through the results; the graph break is the first one (no compile, function, file
  // or artifact has that text).
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  let v = await settle(page, before);
  assert.equal(v.page, 'graph-breaks');
  assert.equal(v.data.graphBreaks.groups[Number(v.params.g)].reason,
    'Unsupported Tensor.item() call with capture_scalar_outputs=False');
  assert.equal(await page.isHidden('.search-panel'), true, 'Enter closed the results');

  // Every one of the 15 C++ guard trees (dynamo_cpp_guards_str) holds
  // `utils_device.CURRENT_DEVICE == None` (15 lines of the log).
  s = await search(page, 'CURRENT_DEVICE');
  const guards = group(s, 'guard');
  assert.deepEqual(guards.items.map((i) => i.text), ['utils_device.CURRENT_DEVICE == None']);
  assert.equal(guards.items[0].compiles.length, 15);
  await shot(page, 'search-names-guard');
  const href = await page.getAttribute('.sr-group[data-kind="guard"] a.sr-item', 'href');
  v = await go(page, href);
  assert.equal(v.page, 'compile');
  assert.equal(v.params.id, guards.items[0].compiles[0]);
  assert.deepEqual(errors, []);
  await close();
});

test('a failure message links to its row of the failures page', async () => {
  // torch-2.15/failures: the compilation_metrics of [1/0] (log line 509) and [2/0] (line 789) both
  // fail with BackendCompilerFailed "backend='flaky_backend' raised: RuntimeError: flaky_backend:
  // refusing to compile a graph with cos": one distinct message, two compiles.
  const { page, errors, close } = await open(env, env.url('failures'));
  const s = await search(page, 'refusing to compile');
  const failures = group(s, 'failure');
  assert.equal(failures.items.length, 1);
  assert.match(failures.items[0].text, /^BackendCompilerFailed: backend='flaky_backend' raised:/);
  assert.deepEqual(failures.items[0].compiles, ['[1/0]', '[2/0]']);
  const v = await go(page, await page.getAttribute('.sr-group[data-kind="failure"] a.sr-item', 'href'));
  assert.equal(v.page, 'failures');
  const row = v.data.failures[Number(v.params.i)];
  assert.deepEqual([row.compile_id, row.failure_type], ['[1/0]', 'BackendCompilerFailed']);
  assert.match(row.reason, /refusing to compile a graph with cos/);
  assert.deepEqual(errors, []);
  await close();
});

test('full text: a kernel name found only inside output code leads to its compile', async () => {
  const { page, errors, close } = await open(env, env.url('gb'));
  // `cpp_fused_add_cos_0` is in the log twice, both in the inductor_output_code of [3/0_1]
  // (header at log line 9071, the name at lines 9105 and 9152: payload lines 34 and 81). No name
  // of the search table holds it.
  const s = await search(page, 'cpp_fused_add_cos');
  assert.deepEqual(s.groups, []);
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => window.__viewer.search.fullText?.state === 'done', null, { timeout: 60_000 });
  const ft = await page.evaluate(() => JSON.parse(JSON.stringify(window.__viewer.search.fullText)));
  console.log(`  full text: ${(ft.total / 2 ** 20).toFixed(2)} MiB in ${ft.packs} packs searched in ${ft.ms.toFixed(0)} ms`);
  assert.equal(ft.matches, 2);
  assert.deepEqual(ft.hits.map((x) => [x.places.map((p) => [p.compile, p.name]), x.line, x.count]),
    [[[['[3/0_1]', 'inductor_output_code']], 34, 2]]);
  assert.match(ft.hits[0].snippet, /cpp_fused_add_cos_0 = async_compile\.cpp_pybinding/);
  assert.ok(ft.done === ft.total && ft.total > 0);
  await shot(page, 'search-full-text');
  const v = await go(page, await page.getAttribute('.sr-full a.sr-item', 'href'));
  assert.equal(v.page, 'artifact');
  assert.equal(v.data.artifact.compileId, '[3/0_1]');
  assert.equal(v.params.line, '34');
  assert.deepEqual(errors, []);
  await close();
});

test('Ctrl+F in an artifact opens its Find: "k of N" with the true count, next and previous', async () => {
  const { page, errors, close } = await open(env, env.url('gb', '#/compile?id=[3/0_1]'));
  // The compile's output code (its header at log line 9071), opened from the compile's page.
  await go(page, await page.getAttribute('#main a[href*="name=inductor_output_code"]', 'href'));
  await page.click('.cv-viewport');
  await page.keyboard.press('Control+f');
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'code-find');
  // `buf0` is in the payload 3 times (log lines 9151, 9152 and 9154: payload lines 80, 81, 83).
  await page.keyboard.type('BUF0');
  const result = async () => page.evaluate(() => {
    const r = document.querySelector('.find-result');
    return [r.textContent, document.querySelector('.cv-line.cv-hl')?.dataset.line];
  });
  assert.deepEqual(await result(), ['1 of 3', '80']);
  await page.keyboard.press('Enter');
  assert.deepEqual(await result(), ['2 of 3', '81']);
  assert.match(await page.evaluate(() => location.hash), /&line=81$/, 'the line gone to is in the URL');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');
  assert.deepEqual(await result(), ['1 of 3', '80'], 'wraps after the last');
  await page.keyboard.press('Shift+Enter');
  assert.deepEqual(await result(), ['3 of 3', '83']);
  await page.click('button.find-step[title^="Previous"]');
  assert.deepEqual(await result(), ['2 of 3', '81']);
  await shot(page, 'search-find-in-code');
  assert.deepEqual(errors, []);
  await close();
});

test('"/" focuses the global search on a page with no code view nor table filter; Ctrl+F stays the browser\'s there', async () => {
  const { page, errors, close } = await open(env, env.url('gb', '#/trie'));
  const hasOwnFind = await page.evaluate(() => Boolean(document.querySelector('#main input.code-find, #main input.vt-filter')));
  assert.equal(hasOwnFind, false, 'the stack trie page has no code view nor table filter');
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'global-search');
  await page.keyboard.press('Escape');
  await page.evaluate(() => {
    window.__ctrlF = null;
    document.addEventListener('keydown', (e) => { if (e.key === 'f') window.__ctrlF = e.defaultPrevented; });
  });
  await page.keyboard.press('Control+f');
  assert.equal(await page.evaluate(() => window.__ctrlF), false, 'not taken from the browser');
  // On the compiles page (a table), "/" goes to the table's filter.
  await go(page, '#/compiles');
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'vt-filter');
  assert.deepEqual(errors, []);
  await close();
});

test('hostile names and texts are shown as text in the results, and nothing runs', async () => {
  // fixtures-repo/hostile/hostile.log: every name, reason and payload is an injection such as
  // `<img src=x onerror="window.__pwned=1">` (fixtures-repo/scripts/make_hostile.py).
  const { page, errors, close } = await open(env, env.url('hostile'));
  const s = await search(page, 'onerror');
  assert.ok(s.groups.length > 0, 'the hostile names are found');
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => window.__viewer.search.fullText?.state === 'done', null, { timeout: 60_000 });
  const ft = await page.evaluate(() => JSON.parse(JSON.stringify(window.__viewer.search.fullText)));
  assert.ok(ft.hits.length > 0, 'payloads hold it too');
  const panel = await page.evaluate(() => {
    const p = document.querySelector('.search-panel');
    const attrs = [...p.querySelectorAll('*')].flatMap((el) => [...el.attributes].map((a) => a.name)).filter((n) => /^on/i.test(n));
    return { text: p.innerText, markup: p.querySelectorAll('img, iframe, svg, script, object, embed').length, attrs, pwned: window.__pwned };
  });
  assert.match(panel.text, /<img src=x onerror="window.__pwned=1">/, 'shown as text');
  assert.deepEqual([panel.markup, panel.attrs, panel.pwned], [0, [], undefined]);
  await shot(page, 'search-hostile');
  assert.deepEqual(errors, []);
  await close();
});

test('a bundle folder opened from this computer: the full-text worker reads its packs through the page', async () => {
  // The viewer alone is served (as on GitHub Pages); the graph_breaks bundle is picked as a
  // folder, so its files have no URL the worker could fetch: the page answers for them.
  const app = await serveViewerAlone(env, 'gb');
  const served = env.server.requests.length;
  const { page, errors, close } = await open(env, `${app.url}/app/`);
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.setInputFiles('input[type=file][webkitdirectory]', env.dir('gb'));
  await settle(page, before);
  await search(page, 'cpp_fused_add_cos');
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => window.__viewer.search.fullText?.state === 'done', null, { timeout: 60_000 });
  const ft = await page.evaluate(() => JSON.parse(JSON.stringify(window.__viewer.search.fullText)));
  // As over HTTP (see the full-text test above): [3/0_1]'s output code, twice, first at line 34.
  assert.deepEqual(ft.hits.map((x) => [x.places.map((p) => p.compile), x.line, x.count]), [[['[3/0_1]'], 34, 2]]);
  assert.deepEqual(env.server.requests.slice(served), [], 'nothing was fetched from the bundle server');
  assert.deepEqual(app.requests.map((r) => r.path).filter((p) => !/^\/app\/(index\.html|manifest\.json|manifest\.lite\.json\.zst|viewer\/[\w./-]+\.(js|css))?$/.test(p)), []);
  // The only expected error: the viewer alone finds no manifest.lite.json.zst next to it (a 404).
  assert.deepEqual(errors.filter((e) => !/^console: Failed to load resource: .*404/.test(e)), []);
  await close();
  await app.close();
});
