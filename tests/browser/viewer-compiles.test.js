// Real-browser tests of the compile pages (compiles, trie, compile, artifact + code.js) on bundles
// built from fixtures. Expected values were checked by hand against the decoded tables
// (zstd -dc BUNDLE/tables/log0/<table>.json.zst) and the logs. Run with ./run.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setup, open, go, shot, settle, fixture, SHOTS, TIMEOUT } from './viewer-harness.js';

/** A log with one 20,000-line inductor_output_code for [0/0], to check the code view stays windowed. */
function bigOutputCodeLog(tmp) {
  const lines = [];
  for (let i = 0; lines.length < 20_000; i++) lines.push(`def kernel_${i}(x):`, `    return x + ${i}  # step ${i}`, '');
  const payload = lines.slice(0, 20_000).join('\n');
  const md5 = crypto.createHash('md5').update(payload).digest('hex');
  const header = 'V1206 15:18:21.452000 1500233 torch/_inductor/graph.py:2030] ' +
    `{"inductor_output_code": {"filename": "/tmp/x/cbig.py"}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "${md5}"}`;
  const file = path.join(tmp, 'big_output_code.log');
  fs.writeFileSync(file, `${header}\n${payload.split('\n').map((l) => `\t${l}`).join('\n')}\n`);
  return file;
}

let env;
before(async () => {
  env = await setup({
    graph_breaks: fixture('torch-2.15/graph_breaks'),
    // The same log with its tables in parts of about 2,000 bytes (format 2.0).
    graph_breaks_parted: { input: fixture('torch-2.15/graph_breaks'), args: ['--table-part-bytes', '2000'] },
    recompiles: fixture('torch-2.15/recompiles'),
    dynamic_shapes: fixture('torch-2.15/dynamic_shapes'),
    cache_warm: fixture('torch-2.15/cache_warm'),
    compiled_autograd: fixture('torch-2.15/compiled_autograd'),
    comp_failure: fixture('tlparse-tests/comp_failure.log'),
    simple: fixture('tlparse-tests/simple.log'),
    big: bigOutputCodeLog,
  });
});
after(() => env?.close());

/** The exact bytes of a blob, read from the bundle on disk with the zstd CLI (not the viewer). */
function blobBytes(name, hash) {
  const dir = env.dir(name);
  const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const prefix = m.blobs.index_prefix_len ? hash.slice(0, m.blobs.index_prefix_len) : 'all';
  const zstd = (p) => execFileSync('zstd', ['-dc', path.join(dir, p)], { maxBuffer: 1 << 30 });
  const loc = JSON.parse(zstd(m.blobs.index_path.replace('{prefix}', prefix)))[hash];
  return zstd(m.blobs.packs[loc.pack].path).subarray(loc.offset, loc.offset + loc.size);
}

// graph_breaks: 27 compile ids. 10 frame compiles were restarted at a graph break ([N/0] →
// [N/0_1]); 17 ids logged a dynamo_start stack, the 10 replacements did not.
const GRAPH_BREAKS_IDS = ['[0/0]', '[0/0_1]', '[1/0]', '[1/0_1]', '[2/0]', '[2/0_1]', '[3/0]', '[3/0_1]', '[4/0]',
  '[5/0]', '[5/0_1]', '[6/0]', '[7/0]', '[7/0_1]', '[8/0]', '[8/0_1]', '[9/0]', '[10/0]', '[10/0_1]', '[11/0]',
  '[11/0_1]', '[12/0]', '[13/0]', '[14/0]', '[14/0_1]', '[6/1]', '[15/0]'];
const RESTARTED = ['[0/0]', '[1/0]', '[2/0]', '[3/0]', '[5/0]', '[7/0]', '[8/0]', '[10/0]', '[11/0]', '[14/0]'];

test('compiles: every compile id, status filter in the URL, unattributed artifacts', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('graph_breaks', '#/compiles'));
  assert.deepEqual(errors, []);
  assert.equal(viewer.state, 'ready');
  assert.deepEqual(viewer.data.compiles, GRAPH_BREAKS_IDS);
  // The only payload without a compile id is torch_version (log line 13).
  assert.deepEqual(viewer.data.unattributed, ['torch_version']);
  // 25 visible rows, and the 2 more fit in the table's draw-ahead window.
  assert.equal(await page.locator('[data-table="compiles"] .vt-body .vt-row').count(), 27);
  await shot(page, 'compiles-graph_breaks');

  await page.click('.chip[data-status="restarted"]');
  const data = await page.evaluate(() => window.__viewer.data.compiles);
  assert.deepEqual(data, RESTARTED);
  assert.match(await page.evaluate(() => location.hash), /status=restarted/);
  // Reload keeps the filter.
  await page.reload();
  const again = await settle(page);
  assert.deepEqual(again.data.compiles, RESTARTED);
  // A click on a row opens that compile.
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.locator('[data-table="compiles"] .vt-body .vt-row').nth(1).click();
  const opened = await settle(page, before);
  assert.equal(opened.page, 'compile');
  assert.equal(opened.params.id, '[1/0]');
  assert.deepEqual(errors, []);
  await close();
});

test('compiles: a bundle whose compile_directory is in several parts shows every compile, as the one-part bundle does', { timeout: TIMEOUT }, async () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(env.dir('graph_breaks_parted'), 'manifest.json'), 'utf8'));
  const parts = manifest.streams[0].tables.compile_directory.parts;
  assert.ok(parts.length > 1, `compile_directory in ${parts.length} parts`);
  const { page, viewer, errors, close } = await open(env, env.url('graph_breaks_parted', '#/compiles'));
  assert.equal(viewer.state, 'ready');
  assert.deepEqual(viewer.data.compiles, GRAPH_BREAKS_IDS);
  assert.equal(await page.locator('[data-table="compiles"] .vt-body .vt-row').count(), 27);
  // The progress note names a part as its table.
  const label = await page.evaluate(async (p) => (await import('./viewer/progress.js')).fileLabel(p), parts.at(-1));
  assert.equal(label, 'compile_directory');
  // The last compile, in the last part, opens with its artifacts.
  const opened = await go(page, '#/compile?id=%5B15%2F0%5D');
  assert.equal(opened.page, 'compile');
  assert.equal(opened.params.id, '[15/0]');
  assert.deepEqual(errors, []);
  await close();
});

test('trie: exactly the compile ids of compile_directory; search narrows it and is kept in the URL', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('graph_breaks', '#/trie'));
  assert.deepEqual(errors, []);
  // 33 trie nodes; 17 leaf compiles plus their 10 restarted_as replacements = the 27 ids.
  assert.equal(viewer.data.trie.nodes, 33);
  assert.equal(viewer.data.trie.compileIds.length, 27);
  assert.deepEqual([...viewer.data.trie.compileIds].sort(), [...GRAPH_BREAKS_IDS].sort());
  assert.deepEqual(viewer.data.trie.unstacked, []);
  assert.equal(viewer.data.trieRows, 33, 'a small trie opens fully expanded');
  // [0/0] restarted as [0/0_1] share a row (node 5: forward at graph_breaks.py:57).
  const row = page.locator('.trie-row', { has: page.locator('a[data-cid="[0/0]"]') });
  assert.match(await row.innerText(), /forward[\s\S]*graph_breaks\.py:57[\s\S]*\[0\/0\][\s\S]*\[0\/0_1\]/);
  assert.equal(await row.locator('a[data-cid="[0/0_1]"]').getAttribute('href'), '#/compile?id=%5B0%2F0_1%5D');
  await shot(page, 'trie-graph_breaks');

  // Collapse all leaves the root; expand all brings every row back.
  await page.click('text=Collapse all');
  assert.equal(await page.evaluate(() => window.__viewer.data.trieRows), 1);
  await page.click('text=Expand all');
  assert.equal(await page.evaluate(() => window.__viewer.data.trieRows), 33);

  // "inner_most" matches two frames: inner_most (graph_breaks.py:16, [3/0] → [3/0_1]) and
  // torch_dynamo_resume_in_inner_most_at_18 ([4/0]).
  await page.fill('.trie-search', 'inner_most');
  await page.waitForFunction(() => location.hash.includes('q=inner_most'));
  const shown = await page.evaluate(() => window.__viewer.data.trieShown);
  assert.deepEqual(shown, ['[3/0]', '[3/0_1]', '[4/0]']);
  assert.equal(await page.locator('.trie-row.trie-hit').count(), 2);
  await shot(page, 'trie-graph_breaks-search');
  // The deep link reloads to the same search.
  await page.reload();
  const again = await settle(page);
  assert.equal(again.params.q, 'inner_most');
  assert.deepEqual(again.data.trieShown, ['[3/0]', '[3/0_1]', '[4/0]']);
  assert.equal(await page.inputValue('.trie-search'), 'inner_most');
  // A compile id search: [6/0] and [6/1] (torch_dynamo_resume_in_inner_at_25, two stacks).
  const six = await go(page, '#/trie?s=log0&q=%5B6%2F');
  assert.deepEqual(six.data.trieShown, ['[6/0]', '[6/1]']);
  assert.deepEqual(errors, []);
  await close();
});

test('trie: a compile with no stack is listed apart (recompiles), dark theme', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('recompiles', '#/trie'), { theme: 'dark' });
  assert.deepEqual(errors, []);
  // recompiles: 9 compile ids; [0/4] hit the recompile limit and logged no dynamo_start.
  assert.deepEqual(viewer.data.trie.unstacked, ['[0/4]']);
  assert.deepEqual([...viewer.data.trie.compileIds, '[0/4]'].sort(),
    ['[0/0]', '[0/1]', '[0/2]', '[0/3]', '[0/4]', '[1/0]', '[1/1]', '[1/2]', '[1/3]']);
  assert.equal(await page.locator('.trie-unstacked a[data-cid="[0/4]"].st-failed').count(), 1);
  await shot(page, 'trie-recompiles-dark');
  await close();
});

test('compile page of a failed compile: the failure first', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('comp_failure', '#/compile?id=[0/0]'));
  assert.deepEqual(errors, []);
  // comp_failure.log: [0/0] of fn (test_misc.py:10755) failed with BackendCompilerFailed,
  // "backend='broken_backend' raised: RuntimeError: broken backend"; two payloads.
  const c = viewer.data.compile;
  assert.equal(c.status, 'failed');
  assert.equal(c.frame, 'fn');
  assert.deepEqual(c.artifacts, ['dynamo_output_graph', 'dynamo_error']);
  const verdict = await page.locator('.verdict').innerText();
  assert.match(verdict, /Failed: BackendCompilerFailed/);
  assert.match(verdict, /RuntimeError: broken backend/);
  assert.equal(c.stackFrames, 18);
  await shot(page, 'compile-comp_failure');
  await close();
});

test('compile page: guards, shape guards, inputs (dynamic_shapes), dark theme', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('dynamic_shapes', '#/compile?id=[0/0]'), { theme: 'dark' });
  assert.deepEqual(errors, []);
  const c = viewer.data.compile;
  assert.equal(c.status, 'ok');
  assert.equal(c.frame, 'f');
  // guards.json: [0/0]'s tree has 27 leaf guards, among them the TENSOR_MATCH on L['x'] with a
  // dynamic first dimension; shape guards include s77 > 4 and Eq(Mod(s17, 4), 0) (line 20).
  assert.equal(c.guards.length, 27);
  assert.ok(c.guards.some((g) => g.startsWith("check_tensor(L['x'], Tensor,") && g.includes('size=[None, 3]')), c.guards.join('\n'));
  assert.ok(c.shapeGuards.includes('s77 > 4'));
  assert.ok(c.shapeGuards.includes('Eq(Mod(s17, 4), 0)'));
  // inputs.json: L['x'] is [10, 3] with dim 0 as s77; L['y'] is [8] as s17.
  assert.deepEqual(c.inputs, ["L['x']", "L['y']"]);
  const inputs = await page.locator('[data-table="inputs"] .vt-body').innerText();
  assert.match(inputs, /\[s77=10, 3\]/);
  assert.match(inputs, /\[s17=8\]/);
  assert.ok(c.artifacts.includes('dynamo_cpp_guards_str'));
  // [0/0] and [0/1] compile the same frame.
  assert.equal(c.prev, null);
  assert.equal(c.next, '[0/1]');
  await shot(page, 'compile-dynamic_shapes-dark');
  await close();
});

test('compile page: cache hits (cache_warm), phases, links to the same frame (recompiles)', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('cache_warm', '#/compile?id=[0/0]'));
  assert.deepEqual(errors, []);
  // cache_outcomes.json: [0/0] hit the FX graph cache twice and the AOTAutograd cache once.
  assert.deepEqual(viewer.data.compile.caches, ['fx_graph_cache:hit', 'aotautograd_cache:hit']);
  assert.equal(await page.locator('[data-table="cache-lookups"] .vt-body .vt-row').count(), 3);
  // compile_time.json: [0/0] has 15 phases, dynamo first.
  assert.equal(viewer.data.compile.phases.length, 15);
  assert.equal(viewer.data.compile.phases[0], 'dynamo');
  await shot(page, 'compile-cache_warm');
  await close();

  const r = await open(env, env.url('recompiles', '#/compile?id=[0/1]'));
  assert.deepEqual(r.errors, []);
  assert.equal(r.viewer.data.compile.prev, '[0/0]');
  // Output code is named by its kind; tlparse's file name (log line 4956: .../cin6slx6....py)
  // is shown beside it and found by the filter.
  const artifacts = r.page.locator('[data-table="artifacts"]');
  await artifacts.locator('.vt-filter').fill('cin6slx6');
  const codeRow = artifacts.locator('.vt-body .vt-row');
  assert.equal(await codeRow.count(), 1);
  assert.equal(await codeRow.locator('a').first().innerText(), 'inductor_output_code');
  assert.equal((await codeRow.locator('.tlparse-name').innerText()).trim(),
    'tlparse: inductor_output_code_cin6slx6zlbufzzbbo732uacybnek6gsmd4igyqofgtxmucqveix');
  assert.equal(r.viewer.data.compile.next, '[0/2]');
  const next = await go(r.page, await r.page.locator('a[rel="next"]').getAttribute('href'));
  assert.equal(next.params.id, '[0/2]');
  // [0/4]: refused by the recompile limit; no stack, no metrics frame.
  const limit = await go(r.page, '#/compile?s=log0&id=%5B0%2F4%5D');
  assert.equal(limit.data.compile.status, 'failed');
  assert.match(await r.page.locator('.verdict').innerText(), /recompile limit exceeded/);
  assert.equal(limit.data.compile.stackFrames, 0);
  assert.equal(limit.data.compile.next, null);
  assert.deepEqual(r.errors, []);
  await r.close();
});

test('compile page: artifacts logged without a payload are listed, marked, and not links (cache_warm)', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('cache_warm', '#/compile?id=[0/0]'));
  assert.deepEqual(errors, []);
  // cache_warm's log lines 918/919 and 1489/1490: [0/0]'s two FX graph cache hits each log
  // inductor_provenance_tracking_node_mappings and ..._kernel_stack_traces with no payload.
  const nodes = 'inductor_provenance_tracking_node_mappings';
  const kernels = 'inductor_provenance_tracking_kernel_stack_traces';
  assert.deepEqual(viewer.data.compile.noPayload, [nodes, kernels, nodes, kernels]);
  assert.equal(viewer.data.compile.artifacts.length, 20);
  const marked = page.locator('[data-table="artifacts"] .vt-body .vt-row', { has: page.locator('.badge.no-payload') });
  assert.equal(await marked.count(), 4);
  assert.equal(await marked.locator('a').count(), 0, 'nothing to open: no link');
  assert.match(await marked.first().innerText(), /inductor_provenance_tracking_node_mappings\s+no payload/);
  assert.match(await page.locator('main').innerText(), /4 artifacts were logged without a payload/);
  // The artifacts card alone: the page is long.
  await page.locator('section.card', { has: page.locator('[data-table="artifacts"]') })
    .screenshot({ path: path.join(SHOTS, 'compile-cache_warm-no-payload.png') });
  await close();
});

test('compiled autograd: the capture has its own status and links to the compile of its graph', { timeout: TIMEOUT }, async () => {
  // compiled_autograd's log lines 4037-4240: the capture [!0/-/-] (no metrics, by design); its
  // graph is compiled by Dynamo as [!0/2/0] (compilation_metrics at line 8383, co_name forward).
  const { page, viewer, errors, close } = await open(env, env.url('compiled_autograd', `#/compile?id=${encodeURIComponent('[!0/-/-]')}`));
  assert.deepEqual(errors, []);
  assert.equal(viewer.data.compile.status, 'compiled_autograd_capture');
  assert.deepEqual(viewer.data.compile.graphCompiles, ['[!0/2/0]']);
  const verdict = await page.locator('.verdict').innerText();
  assert.match(verdict, /Compiled autograd captured a backward graph here\. A capture logs no compilation metrics: Dynamo compiled the captured graph as \[!0\/2\/0\] ok\./);
  assert.doesNotMatch(verdict, /crashed/);
  assert.equal(await page.locator('.compile-head .badge.st-capture').innerText(), 'autograd capture');
  assert.match(await page.locator('main').innerText(), /A compiled-autograd capture logs no compilation_metrics/);
  await shot(page, 'compile-compiled_autograd-capture');
  // The link opens the graph's compile, which names its capture.
  const graph = await go(page, await page.locator('.verdict a', { hasText: '[!0/2/0]' }).getAttribute('href'));
  assert.equal(graph.params.id, '[!0/2/0]');
  assert.equal(graph.data.compile.status, 'ok');
  assert.equal(graph.data.compile.capturedBy, '[!0/-/-]');
  assert.match(await page.locator('.facts').first().innerText(), /graph captured by\s+\[!0\/-\/-\]/);

  // The compiles page: a chip of its own and a sentence saying what it is; nothing "missing".
  const list = await go(page, '#/compiles');
  assert.deepEqual(list.data.compiles, ['[0/0]', '[0/0_1]', '[!0/-/-]', '[1/0]', '[!0/2/0]', '[3/0]']);
  assert.match(await page.locator('.chip[data-status="compiled_autograd_capture"]').innerText(), /autograd capture\s+1/);
  assert.equal(await page.locator('.chip[data-status="metrics_missing"]').count(), 0);
  assert.match(await page.locator('main').innerText(), /autograd capture ids \(\[!N\/-\/-\]\) are compiled autograd capturing a backward graph: they log no metrics by design/);
  await shot(page, 'compiles-compiled_autograd');
  // The trie lists the capture among the compiles without a stack, and its legend explains it.
  const trie = await go(page, '#/trie');
  assert.ok(trie.data.trie.unstacked.includes('[!0/-/-]'));
  const legend = page.locator('.trie-legend .badge.st-capture');
  assert.match(await legend.getAttribute('title'), /compiled autograd capturing a backward graph; no metrics by design/);
  assert.deepEqual(errors, []);
  await close();
});

test('artifact: highlighted Python, line count, download of the exact bytes, copy, line anchor', { timeout: TIMEOUT }, async () => {
  // simple.log: [0/0]'s inductor_output_code is 10,450 bytes logged as 187 payload lines (the last
  // one empty: the payload ends with a newline). Its file was .../cyjwx6x6ef....py, so tlparse
  // names it inductor_output_code_cyjwx6x6ef..., and runnables.json ..._-_0_0_0.py after that.
  const name = 'inductor_output_code';
  const tlparse = 'inductor_output_code_cyjwx6x6efpuwt4dvr4ev42v4ghac5zo2uggvscht2otwnesito6';
  const blob = '976f6b45e962163eebb027dcbe009917';
  const hash = `#/artifact?s=log0&blob=${blob}&name=${name}&id=%5B0%2F0%5D`;
  const { page, viewer, errors, close } = await open(env, env.url('simple', hash));
  assert.deepEqual(errors, []);
  const a = viewer.data.artifact;
  assert.equal(a.language, 'python');
  assert.equal(a.lines, 187);
  assert.equal(a.size, 10450);
  assert.equal(a.fileName, `${tlparse}__-_0_0_0.py`);
  assert.equal(a.tlparseName, tlparse);
  assert.equal((await page.locator('.artifact-tools .tlparse-name').innerText()).trim(), `tlparse: ${tlparse}`);
  // Highlighted: keywords, strings, comments as spans; the first line is a comment.
  assert.ok(await page.locator('.cv-line .tk-kw').count() > 10);
  assert.ok(await page.locator('.cv-line .tk-str').count() > 0);
  assert.equal(await page.locator('.cv-line[data-line="1"] .tk-com').innerText(), "# AOT ID: ['0_inference']");
  assert.equal(await page.locator('.cv-line[data-line="2"] .tk-kw').first().innerText(), 'from');
  await shot(page, 'artifact-simple-output_code');

  // Download: the blob's exact bytes under the runnables file name.
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('.download-button')]);
  assert.equal(dl.suggestedFilename(), `${tlparse}__-_0_0_0.py`);
  const saved = fs.readFileSync(await dl.path());
  assert.ok(saved.equals(blobBytes('simple', blob)), 'downloaded bytes differ from the blob');

  // Copy: the payload as logged.
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.server.url });
  await page.click('.copy-button');
  await page.waitForFunction(() => document.querySelector('.cv-status').textContent === 'Copied');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), blobBytes('simple', blob).toString('utf8'));

  // A click on a line number puts it in the URL; the link reloads to that line, highlighted.
  await page.locator('.cv-line[data-line="12"] .cv-ln').click();
  assert.match(await page.evaluate(() => location.hash), /&line=12$/);
  await go(page, `${hash}&line=150`);
  await page.waitForSelector('.cv-line.cv-hl[data-line="150"]');
  assert.ok(await page.locator('.cv-line.cv-hl[data-line="150"]').isVisible());
  await page.reload();
  await settle(page);
  await page.waitForSelector('.cv-line.cv-hl[data-line="150"]');

  // Folding: fold all hides the def bodies; expand all shows all 187 lines again.
  await page.click('text=Fold all');
  const folded = await page.locator('.cv-folded').count();
  assert.ok(folded > 0);
  await page.click('text=Expand all');
  assert.equal(await page.locator('.cv-folded').count(), 0);
  assert.deepEqual(errors, []);
  await close();
});

test('artifact: one-line JSON is pretty-printed; download keeps the logged bytes', { timeout: TIMEOUT }, async () => {
  // simple.log: [0/0]'s fx_graph_cache_miss is one line of JSON, 31,539 bytes.
  const { page, viewer, errors, close } = await open(env, env.url('simple', '#/compile?id=[0/0]'), { theme: 'dark' });
  const href = await page.locator('[data-table="artifacts"] a', { hasText: /^fx_graph_cache_miss$/ }).getAttribute('href');
  const state = await go(page, href);
  const a = state.data.artifact;
  assert.equal(a.language, 'json');
  assert.equal(a.pretty, true);
  assert.equal(a.size, 31539);
  assert.ok(a.lines > 20, `pretty-printed into ${a.lines} lines`);
  assert.ok(await page.locator('.cv-line .tk-key').count() > 0);
  assert.match(a.fileName, /^fx_graph_cache_miss__-_0_0_0\.json$/);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('.download-button')]);
  assert.ok(fs.readFileSync(await dl.path()).equals(blobBytes('simple', a.blob)));
  await shot(page, 'artifact-simple-json-dark');
  // Breadcrumb back to the compile.
  const back = await go(page, await page.locator('.crumbs a', { hasText: '[0/0]' }).getAttribute('href'));
  assert.equal(back.page, 'compile');
  assert.deepEqual(errors, []);
  void viewer;
  await close();
});

test('artifact: a 20,000-line output code renders only the lines in view', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('big', '#/compile?id=[0/0]'));
  assert.deepEqual(errors, []);
  const href = await page.locator('[data-table="artifacts"] a', { hasText: 'inductor_output_code' }).getAttribute('href');
  const started = Date.now();
  const state = await go(page, `${href}&line=20000`);
  const took = Date.now() - started;
  assert.equal(state.data.artifact.lines, 20_000);
  await page.waitForSelector('.cv-line.cv-hl[data-line="20000"]');
  const drawn = await page.locator('.cv-line').count();
  assert.ok(drawn < 200, `${drawn} lines in the DOM`);
  assert.ok(took < 5000, `rendered in ${took} ms`);
  // Line 20,000 is `    return x + 6666  # step 6666` (lines repeat def / return / blank).
  assert.equal(await page.locator('.cv-line[data-line="20000"] .tk-kw').first().innerText(), 'return');
  assert.equal(await page.locator('.cv-line[data-line="20000"] .tk-com').innerText(), '# step 6666');
  // Scrolling to the top draws the first lines.
  await page.locator('.cv-viewport').evaluate((el) => { el.scrollTop = 0; });
  await page.waitForSelector('.cv-line[data-line="1"]');
  assert.equal(await page.locator('.cv-line[data-line="1"] .tk-fn').innerText(), 'kernel_0');
  // Find reaches lines that are not drawn: "step 5000" is on line 3 * 5000 + 2.
  await page.fill('.code-find', 'step 5000');
  await page.press('.code-find', 'Enter');
  await page.waitForSelector('.cv-line.cv-hl[data-line="15002"] mark');
  assert.equal(await page.locator('.find-result').innerText(), '1 of 1'); // its only occurrence
  assert.match(await page.evaluate(() => location.hash), /&line=15002$/);
  await page.click('text=Fold all');
  // 6,667 defs, each folded to its first line.
  await page.waitForFunction(() => document.querySelectorAll('.cv-folded').length > 10);
  assert.deepEqual(errors, []);
  await close();
});

test('pages without data say so (no compile id, bad blob)', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('simple', '#/compile?id=[9/9]'));
  assert.deepEqual(errors, []);
  assert.match(await page.locator('main').innerText(), /no compile \[9\/9\]/);
  await go(page, '#/artifact?s=log0&blob=nothex&name=x&id=%5B0%2F0%5D');
  assert.match(await page.locator('main').innerText(), /no valid blob id/);
  await go(page, `#/artifact?s=log0&blob=${'0'.repeat(32)}&name=x`);
  assert.match(await page.locator('main').innerText(), /has no payload/);
  assert.deepEqual(errors, []);
  await close();
});
