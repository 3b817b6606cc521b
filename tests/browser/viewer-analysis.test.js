// Real-browser tests of the viewer's analysis pages (recompiles, graph breaks, failures, graph
// sizes, log volume, compile time), on bundles built from fixtures. Facts asserted were checked by
// hand against the decoded tables (zstd -dc BUNDLE/tables/log0/<name>.json.zst) and the logs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { setup, open, go, shot, fixture, BIN, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => {
  env = await setup({
    recompiles: fixture('torch-2.15/recompiles'),
    graph_breaks: fixture('torch-2.15/graph_breaks'),
    training: fixture('torch-2.15/training'),
    failures: fixture('torch-2.15/failures'),
    comp_failure: fixture('tlparse-tests/comp_failure.log'),
    chromium_events: fixture('tlparse-tests/chromium_events.log'),
    simple: fixture('tlparse-tests/simple.log'),
  });
});
after(() => env?.close());

/** A blob's text, read by the CLI (not the viewer). */
function cat(bundle, blob) {
  return execFileSync(BIN, ['cat', env.dir(bundle), blob], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/**
 * Lines added and removed by a minimal line diff, from the longest common subsequence (plain
 * dynamic programming: independent of diff.js's Myers implementation).
 */
function lcsCounts(before, after) {
  const lines = (t) => { const l = t.split('\n'); if (l.length > 1 && l[l.length - 1] === '') l.pop(); return l; };
  const a = lines(before);
  const b = lines(after);
  let prev = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const cur = new Uint32Array(b.length + 1);
    for (let j = 1; j <= b.length; j++) cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    prev = cur;
  }
  const common = prev[b.length];
  return { added: b.length - common, removed: a.length - common };
}

/** A screenshot from the top of the page (the header is sticky: scrolled, it would float mid-page). */
async function snap(page, name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, name);
}

/** The rendered rows of a dataTable (those in view). */
function rows(page, name) {
  return page.locator(`[data-table="${name}"] .vt-body .vt-row`);
}

test('recompiles: why [0/1] recompiled, its guard changes and artifact diffs', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('recompiles', '#/recompiles?s=log0'));
  assert.deepEqual(errors, []);
  assert.equal(viewer.state, 'ready');
  const r = viewer.data.recompiles;
  // recompiles.json: frame 0 (f) compiled 5 times ([0/0]..[0/4]), frame 1 (forward) 4 times.
  assert.deepEqual(r.frames, [{ frame: '0', co_name: 'f', compiles: 5 }, { frame: '1', co_name: 'forward', compiles: 4 }]);
  assert.deepEqual(r.compiles, ['[0/0]', '[0/1]', '[0/2]', '[0/3]', '[0/4]']);
  // Default selection: the first recompile, [0/1], against [0/0].
  assert.equal(r.selected, '[0/1]');
  assert.equal(r.previous, '[0/0]');
  assert.deepEqual(r.reasons, ["0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"]);
  assert.match(await page.locator('.an-reason').first().innerText(), /^tensor 'x' size mismatch at index 0\. expected 4, actual 6$/);
  // The dimension became dynamic: size=[4, 8] → size=[None, 8] plus the LAMBDA_GUARD.
  const added = await page.locator('.an-guards .diff-line.add .text').allInnerTexts();
  const removed = await page.locator('.an-guards .diff-line.del .text').allInnerTexts();
  assert.equal(added.length, 2);
  assert.ok(added.includes("LAMBDA_GUARD: 2 <= L['x'].size()[0]"), added.join('\n'));
  assert.ok(added.some((g) => g.startsWith('TENSOR_MATCH') && g.includes('size=[None, 8]')), added.join('\n'));
  assert.equal(removed.length, 1);
  assert.match(removed[0], /^TENSOR_MATCH: .*size=\[4, 8\]/);
  // 15 artifacts changed; recompile_reasons only in [0/1]; torch._functorch.config identical.
  assert.equal(r.changed.length, 15);
  assert.equal(r.changed[0], 'dynamo_output_graph');
  assert.deepEqual(r.added, ['recompile_reasons']);
  assert.deepEqual(r.unchanged, ['torch._functorch.config']);
  // The first changed artifact is expanded and diffed; its +/- counts match an LCS computed
  // here from the two blobs (dynamo_output_graph 2ceb8d84… → ce68b307…: f32[4, 8] → f32[s77, 8]).
  await page.waitForFunction(() => window.__viewer.data.diffs?.dynamo_output_graph);
  const expected = lcsCounts(cat('recompiles', '2ceb8d84ddcde575cc5852834e5b024f'), cat('recompiles', 'ce68b307f2b02b183c0c8c3639eb06db'));
  assert.ok(expected.added > 0 && expected.removed > 0);
  const first = page.locator('details[data-name="dynamo_output_graph"]');
  assert.equal(await first.getAttribute('open'), '');
  assert.deepEqual({ added: Number(await first.locator('.diff').getAttribute('data-added')),
    removed: Number(await first.locator('.diff').getAttribute('data-removed')) }, expected);
  assert.equal(await first.locator('.diff-line.add').count(), expected.added);
  assert.ok((await first.locator('.diff-line.add .text').allInnerTexts()).some((t) => t.includes('s77')));
  // Others load only when opened: inductor_output_code 333974a5… → f903e8c2….
  const code = page.locator('details[data-name="inductor_output_code"]');
  assert.equal(await code.locator('.diff').count(), 0);
  await code.locator('summary').click();
  await page.waitForFunction(() => window.__viewer.data.diffs?.inductor_output_code);
  const data = await page.evaluate(() => window.__viewer.data.diffs);
  assert.deepEqual(data.inductor_output_code,
    lcsCounts(cat('recompiles', '333974a55c286ac69fb1f0cb87d3d268'), cat('recompiles', 'f903e8c27041b34d19aa551b27a2cbfc')));
  // Links (keeping the stream): compile ids to the compile page, both versions to the artifact page.
  assert.equal(await page.locator('[data-change="[0/1]"] h2 a').first().getAttribute('href'), '#/compile?s=log0&id=%5B0%2F1%5D');
  assert.equal(await first.locator('.an-links a').first().getAttribute('href'),
    '#/artifact?s=log0&blob=2ceb8d84ddcde575cc5852834e5b024f&name=dynamo_output_graph&id=%5B0%2F0%5D');
  await snap(page, 'recompiles-recompiles-light');

  // Selecting [0/2] (a dtype change) updates the diff in place and the URL.
  await rows(page, 'recompile-sequence').nth(2).click();
  const s = await page.evaluate(() => window.__viewer.data.recompiles);
  assert.equal(s.selected, '[0/2]');
  assert.deepEqual(s.reasons, ['0/1: tensor \'x\' dtype mismatch. expected Float, actual Double', '0/0: tensor \'x\' dtype mismatch. expected Float, actual Double']);
  assert.match(s.guardsAdded[0], /torch\.float64/);
  assert.match(s.guardsRemoved[0], /torch\.float32/);
  assert.match(await page.evaluate(() => location.hash), /^#\/recompiles\?.*id=%5B0%2F2%5D/);
  assert.deepEqual(errors, []);
  await close();
});

test('recompiles: deep link to a frame and compile, dark theme', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('recompiles', '#/recompiles?frame=1&id=%5B1%2F2%5D'), { theme: 'dark' });
  assert.deepEqual(errors, []);
  const r = viewer.data.recompiles;
  assert.equal(r.frame, '1');
  assert.deepEqual(r.compiles, ['[1/0]', '[1/1]', '[1/2]', '[1/3]']);
  assert.equal(r.selected, '[1/2]');
  assert.equal(r.previous, '[1/1]');
  await page.waitForFunction(() => Object.keys(window.__viewer.data.diffs ?? {}).length > 0);
  await snap(page, 'recompiles-recompiles-dark');
  // The first compile has nothing to compare with: an explanation, not an error.
  await go(page, '#/recompiles?frame=1&id=%5B1%2F0%5D');
  assert.match(await page.locator('[data-change="[1/0]"]').innerText(), /first compile/);
  // A stream without recompiles: an empty state.
  const b = await open(env, env.url('comp_failure', '#/recompiles'));
  assert.deepEqual(b.errors, []);
  assert.equal(b.viewer.state, 'ready');
  assert.match(await b.page.locator('.empty').innerText(), /no recompiles table/);
  await b.close();
  assert.deepEqual(errors, []);
  await close();
});

test('graph breaks: deduplicated counts, site link, example text on demand', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('graph_breaks', '#/graph-breaks'));
  assert.deepEqual(errors, []);
  const g = viewer.data.graphBreaks;
  // graph_breaks.json: 10 breaks in 4 groups: print at :18 ×5, time.sleep at :12 ×2,
  // torch._dynamo.graph_break() at :34 ×2, Tensor.item() at :25 ×1.
  assert.equal(g.total, 10);
  assert.deepEqual(g.groups.map((x) => [x.reason, x.location?.split('/').pop(), x.count]), [
    ['Failed to trace builtin operator', 'graph_breaks.py:18', 5],
    ['Attempted to call function marked as skipped', 'graph_breaks.py:12', 2],
    ['Call to `torch._dynamo.graph_break()`', 'graph_breaks.py:34', 2],
    ['Unsupported Tensor.item() call with capture_scalar_outputs=False', 'graph_breaks.py:25', 1],
  ]);
  assert.deepEqual(g.groups[0].compile_ids, ['[0/0]', '[1/0]', '[2/0]', '[3/0]', '[14/0]']);
  // The table shows the same counts, and the total is in the title.
  const counts = await rows(page, 'graph-breaks').locator('.vt-cell:first-child').allInnerTexts();
  assert.deepEqual(counts.map((t) => Number(t.replace(/\D/g, ''))), [5, 2, 2, 1]);
  assert.match(await page.locator('h2').first().innerText(), /^10 graph breaks, 4 distinct reasons$/);
  // The most frequent group's details: the graph-break site page (https) and its compiles.
  const link = page.locator('[data-group="0"] a[target="_blank"]');
  assert.equal(await link.getAttribute('href'), 'https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html');
  assert.equal(await page.locator('[data-group="0"] .an-idlist a').count(), 5);
  // The example text is fetched only when opened.
  const example = page.locator('[data-group="0"] details.an-example');
  assert.equal(await example.locator('pre').count(), 0);
  await example.locator('summary').click();
  await example.locator('pre').waitFor();
  assert.match(await example.locator('pre').innerText(), /^Graph break in user code at \/home\/user\/scenarios\/graph_breaks\.py:18\n/);
  await snap(page, 'graph-breaks-graph_breaks-light');
  // Picking another group keeps the choice in the URL.
  await rows(page, 'graph-breaks').nth(3).click();
  assert.match(await page.locator('[data-group="3"] h2').innerText(), /Tensor\.item\(\)/);
  assert.match(await page.evaluate(() => location.hash), /[?&]g=3$/);
  assert.deepEqual(errors, []);
  await close();
});

test('graph breaks: a break inside torch is shown at the user line, with where torch raised it and the stack', { timeout: TIMEOUT }, async () => {
  // torch-2.15/training, checked by hand on the log: [1/0] (line 9003) and [2/0] (line 9436) break
  // at torch/optim/optimizer.py:78 (`torch._dynamo.graph_break()` in _use_grad), called from
  // training.py:45 (`opt.step()`); traceback training.py:51, training.py:45, optimizer.py:567,
  // optimizer.py:78.
  const { page, viewer, errors, close } = await open(env, env.url('training', '#/graph-breaks'));
  assert.deepEqual(errors, []);
  const g = viewer.data.graphBreaks.groups[0];
  assert.equal(g.location, '/home/user/scenarios/training.py:45');
  assert.equal(g.raised_at, '/opt/venv/lib/python3.11/site-packages/torch/optim/optimizer.py:78');
  assert.deepEqual(g.compile_ids, ['[1/0]', '[2/0]']);
  // The table's columns: the user line, then where torch raised it (shortened from the left).
  const first = rows(page, 'graph-breaks').first();
  assert.equal(await first.locator('.vt-cell').nth(3).innerText(), '…/scenarios/training.py:45');
  assert.match(await first.locator('.vt-cell').nth(4).innerText(), /optim\/optimizer\.py:78$/);
  assert.equal(await first.locator('.vt-cell').nth(4).locator('[title]').getAttribute('title'), g.raised_at);
  // The selected group shows the traceback at once: 4 frames, the two torch ones dimmed, the
  // user's line 45 marked; the code of each frame is text.
  const frames = page.locator('[data-group="0"] [data-stack="break"] li');
  assert.equal(await frames.count(), 4);
  assert.deepEqual(await frames.evaluateAll((els) => els.map((e) => e.className)), ['', 'user-frame', 'framework', 'framework']);
  assert.equal(await frames.nth(1).locator('.stack-loc').textContent(), 'opt.step()  # graph break inside torch/optim/optimizer.py');
  assert.match(await frames.nth(3).innerText(), /^_use_grad …\/torch\/optim\/optimizer\.py:78/);
  await snap(page, 'graph-breaks-training-light');
  // A break at the user's own line has no separate frame: "–".
  assert.equal(await rows(page, 'graph-breaks').nth(1).locator('.vt-cell').nth(4).innerText(), '–');
  assert.deepEqual(errors, []);
  await close();
});

test('failures: the failure of comp_failure.log, with its traceback and start stack', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('comp_failure', '#/failures'));
  assert.deepEqual(errors, []);
  // comp_failure.log: [0/0]'s compilation_metrics has fail_type BackendCompilerFailed,
  // fail_reason "backend='broken_backend' raised:\nRuntimeError: broken backend", and no
  // fail_user_frame (a backend failure is not placed at a line).
  assert.deepEqual(viewer.data.failures, [{ compile_id: '[0/0]', kind: 'failure', failure_type: 'BackendCompilerFailed',
    reason: "backend='broken_backend' raised:\nRuntimeError: broken backend", user_frame: null }]);
  assert.equal(await rows(page, 'failures').count(), 1);
  assert.match(await rows(page, 'failures').first().innerText(), /\[0\/0\][\s\S]*failed[\s\S]*BackendCompilerFailed[\s\S]*broken_backend/);
  const card = page.locator('[data-failure="0"]');
  assert.match(await card.locator('pre.an-error-text').innerText(), /RuntimeError: broken backend/);
  assert.equal(await card.locator('h2 a').getAttribute('href'), '#/compile?id=%5B0%2F0%5D');
  // The dynamo_error artifact on demand (the log's full traceback ends with the same error).
  const blob = card.locator('details.an-error-blob');
  await blob.locator('summary').click();
  await blob.locator('pre').waitFor();
  assert.match(await blob.locator('pre').innerText(), /broken backend/);
  // The dynamo_start stack from the stack table: starts at test_misc.py's <module>.
  const stack = card.locator('details.an-start-stack');
  await stack.locator('summary').click();
  await stack.locator('ol li').first().waitFor();
  assert.match(await stack.locator('ol li').first().innerText(), /<module>\s+\/data\/users\/xmfan\/a\/pytorch\/test\/dynamo\/test_misc\.py:12143/);
  await snap(page, 'failures-comp_failure-light');
  await close();

  // torch-2.15/failures: 6 failed compiles [1/0]..[6/0], no restarts; exception stacks logged.
  const f = await open(env, env.url('failures', '#/failures'));
  assert.deepEqual(f.errors, []);
  assert.deepEqual(f.viewer.data.failures.map((x) => [x.compile_id, x.failure_type]), [
    ['[1/0]', 'BackendCompilerFailed'], ['[2/0]', 'BackendCompilerFailed'], ['[3/0]', 'Unsupported'],
    ['[4/0]', 'UserError'], ['[5/0]', 'BackendCompilerFailed'], ['[6/0]', 'TorchRuntimeError']]);
  const exc = f.page.locator('[data-failure="0"] details.an-exception');
  await exc.locator('summary').click();
  await exc.locator('pre').waitFor();
  assert.match(await exc.locator('pre').innerText(), /^Traceback \(most recent call last\):/);
  await snap(f.page, 'failures-failures-light');
  await f.close();

  // torch-2.15/graph_breaks: no failures, 10 restarts (one per graph break), listed after failures.
  const g = await open(env, env.url('graph_breaks', '#/failures'), { theme: 'dark' });
  assert.deepEqual(g.errors, []);
  assert.equal(g.viewer.data.failures.length, 10);
  assert.ok(g.viewer.data.failures.every((x) => x.kind === 'restart' && x.failure_type === 'RestartAnalysis'));
  assert.equal(g.viewer.data.failures[0].compile_id, '[0/0_1]');
  await snap(g.page, 'failures-graph_breaks-dark');
  await g.close();
});

test('graph sizes: one column per IR, changes against the previous compile highlighted', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('recompiles', '#/sizes'));
  assert.deepEqual(errors, []);
  const s = viewer.data.sizes;
  // graph_sizes.json: 8 compiles ([0/4] failed before logging graphs); 9 IRs, the output code
  // grouped by kind although its name carries a hash.
  assert.deepEqual(s.rows.map((r) => r.compile_id), ['[0/0]', '[0/1]', '[0/2]', '[0/3]', '[1/0]', '[1/1]', '[1/2]', '[1/3]']);
  assert.deepEqual(s.columns, ['dynamo_output_graph', 'before_pre_grad_graph', 'after_pre_grad_graph', 'aot_inference_graph',
    'before_joint_graph', 'after_joint_graph', 'before_post_grad_graph', 'inductor_post_grad_graph', 'inductor_output_code']);
  assert.equal(await rows(page, 'graph-sizes').count(), 8);
  // [1/2] vs [1/1]: the Dynamo graph grew from 3 to 4 FX nodes; [0/1] vs [0/0]: the output code
  // grew from 109 to 124 lines; [1/0] starts frame 1 (compared with nothing).
  const row = (id) => s.rows.find((r) => r.compile_id === id);
  assert.equal(row('[1/1]').cells.dynamo_output_graph, 3);
  assert.equal(row('[1/2]').cells.dynamo_output_graph, 4);
  assert.equal(row('[1/0]').previous, null);
  assert.equal(row('[0/1]').previous, '[0/0]');
  const changed = s.changed.map((c) => c.join(' '));
  assert.ok(changed.includes('[1/2] dynamo_output_graph'), changed.join(', '));
  assert.ok(changed.includes('[0/1] inductor_output_code'), changed.join(', '));
  assert.ok(!changed.some((c) => c.startsWith('[1/0]') || c.startsWith('[0/0]')));
  const grew = rows(page, 'graph-sizes').nth(6).locator('.an-grew');
  assert.ok(await grew.count() >= 1);
  assert.match(await grew.first().innerText(), /▲\s*4/);
  await snap(page, 'sizes-recompiles-light');
  // The measure is in the URL and survives a reload.
  await page.selectOption('select[aria-label="Measure"]', 'bytes');
  assert.match(await page.evaluate(() => location.hash), /[?&]m=bytes/);
  const again = await go(page, '#/overview');
  assert.equal(again.page, 'overview');
  const back = await go(page, '#/sizes?m=lines');
  assert.equal(back.data.sizes.measure, 'lines');
  assert.equal(back.data.sizes.rows[0].cells.inductor_output_code, 109);
  await snap(page, 'sizes-recompiles-lines-light');
  assert.deepEqual(errors, []);
  await close();
});

test('log volume: by kind, name and call site, totals equal the log size', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('simple', '#/volume'));
  assert.deepEqual(errors, []);
  const v = viewer.data.volume;
  // log_bytes counts every line with its '\n'; simple.log has none after its last line.
  const log = fs.readFileSync(fixture('tlparse-tests/simple.log'));
  assert.equal(v.total, log.length + (log[log.length - 1] === 10 ? 0 : 1));
  // by_kind and by_source each partition the stream.
  assert.equal(v.byKind.reduce((n, [, b]) => n + b, 0), v.total);
  assert.equal(v.bySource.reduce((n, [, b]) => n + b, 0), v.total);
  // log_volume.json: 13 kinds, chromium_event the biggest (146306 bytes), 4 names, 17 call sites.
  assert.equal(v.byKind.length, 13);
  assert.deepEqual(v.byKind[0], ['chromium_event', 146306]);
  assert.equal(v.byName.length, 4);
  assert.equal(v.bySource.length, 17);
  assert.equal(await rows(page, 'volume-kind').count(), 13);
  assert.equal(await rows(page, 'volume-name').count(), 4);
  assert.match(await rows(page, 'volume-kind').first().innerText(), /^chromium_event\s+59%/);
  assert.match(await page.locator('.an-lead').innerText(), /^chromium_event entries are 59% of the log/);
  await snap(page, 'volume-simple-light');
  await close();
  const d = await open(env, env.url('recompiles', '#/volume'), { theme: 'dark' });
  assert.deepEqual(d.errors, []);
  await snap(d.page, 'volume-recompiles-dark');
  await d.close();
});

test('compile time: phases per compile, timeline, totals', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('chromium_events', '#/time'));
  assert.deepEqual(errors, []);
  // chromium_events.log: one compile [0/0], dynamo > entire_frame_compile > backend_compile. Its time
  // is its frame compile, compilation_metrics' dynamo_cumulative_compile_time_us 157247 (line 145;
  // the entire_frame_compile phase lasts 157247.75 µs), not the 163100.25 µs of dynamo around it.
  assert.deepEqual(viewer.data.time.compiles, [{ compile_id: '[0/0]', total_us: 157247 }]);
  assert.deepEqual(viewer.data.time.times['[0/0]'], { forward: '157.2 ms', backward: '–', total: '157.2 ms' });
  assert.deepEqual(viewer.data.timeline.phases, ['dynamo', 'entire_frame_compile', 'backend_compile']);
  assert.equal(await rows(page, 'compile-time').count(), 1);
  assert.equal(await rows(page, 'timeline').count(), 3);
  assert.match(await rows(page, 'timeline').nth(2).innerText(), /backend_compile\s+478 µs/);
  await snap(page, 'time-chromium_events-light');
  await close();

  // torch-2.15/recompiles: slowest first ([0/0], 12.7 s: the cold start); selecting another
  // compile redraws its timeline and keeps the choice in the URL.
  const r = await open(env, env.url('recompiles', '#/time'));
  assert.deepEqual(r.errors, []);
  const ids = r.viewer.data.time.compiles;
  assert.equal(ids[0].compile_id, '[0/0]');
  assert.ok(ids.every((c, i) => i === 0 || ids[i - 1].total_us >= c.total_us));
  assert.equal(r.viewer.data.timeline.compile_id, '[0/0]');
  await rows(r.page, 'compile-time').nth(1).click();
  const t = await r.page.evaluate(() => window.__viewer.data.timeline);
  assert.equal(t.compile_id, ids[1].compile_id);
  assert.equal(await r.page.evaluate(() => location.hash), `#/time?id=${encodeURIComponent(ids[1].compile_id)}`);
  await snap(r.page, 'time-recompiles-light');
  await r.close();
  const d = await open(env, env.url('recompiles', '#/time'), { theme: 'dark' });
  assert.deepEqual(d.errors, []);
  await snap(d.page, 'time-recompiles-dark');
  await d.close();
});

/** The bytes of a bundle's Chrome trace, read from disk (gunzipped) rather than by the viewer. */
function traceBytes(bundle) {
  return zlib.gunzipSync(fs.readFileSync(path.join(env.dir(bundle), 'tables/log0/chrome_trace.json.gz')));
}

// A stand-in for ui.perfetto.dev (the tests have no network): answers PONG only from the third
// PING on, like a UI still loading, then records the trace it is sent.
const PERFETTO_STUB = `<!doctype html><title>stub</title><script>
let pings = 0;
window.received = null;
addEventListener('message', async (e) => {
  if (e.data === 'PING') { if (++pings >= 3) e.source.postMessage('PONG', '*'); return; }
  const p = e.data && e.data.perfetto;
  if (!p) return;
  const hex = [...new Uint8Array(await crypto.subtle.digest('SHA-256', p.buffer))].map((b) => b.toString(16).padStart(2, '0')).join('');
  window.received = { title: p.title, fileName: p.fileName, isArrayBuffer: p.buffer instanceof ArrayBuffer, size: p.buffer.byteLength, sha256: hex, pings };
});
</script>`;

test('compile time: Open in Perfetto hands over the trace bytes; Download saves them', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('recompiles', '#/time'));
  assert.deepEqual(errors, []);
  const expected = traceBytes('recompiles');
  assert.ok(expected.length > 100_000, 'the recompiles trace has 852 chromium events');
  await page.context().route(/^https:\/\/ui\.perfetto\.dev\//, (route) => route.fulfill({ contentType: 'text/html', body: PERFETTO_STUB }));
  const [popup] = await Promise.all([page.waitForEvent('popup'), page.click('button:has-text("Open in Perfetto")')]);
  assert.equal(new URL(popup.url()).origin, 'https://ui.perfetto.dev');
  await popup.waitForFunction(() => window.received, null, { timeout: 30_000 });
  const got = await popup.evaluate(() => window.received);
  assert.deepEqual(got, {
    title: 'dedicated_log_torch_trace_uhwu8yzi.log · log0', fileName: 'log0.trace.json', isArrayBuffer: true, size: expected.length,
    sha256: crypto.createHash('sha256').update(expected).digest('hex'), pings: got.pings,
  });
  assert.ok(got.pings >= 3, 'kept pinging until the UI answered');
  await page.waitForFunction(() => /^Sent /.test(window.__viewer.data.perfetto ?? ''));
  assert.match(await page.locator('.an-status').innerText(), /^Sent log0\.trace\.json to Perfetto\.$/);

  // Download trace JSON: the same bytes, saved as <stream>.trace.json.
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('button:has-text("Download trace JSON")')]);
  assert.equal(dl.suggestedFilename(), 'log0.trace.json');
  const saved = fs.readFileSync(await dl.path());
  assert.ok(saved.equals(expected), 'downloaded bytes equal the gunzipped chrome_trace.json.gz');
  JSON.parse(saved.toString('utf8'));
  assert.deepEqual(errors, []);
  await popup.close();
  await close();
});

test('compile time: a blocked pop-up says so instead of failing', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('chromium_events', '#/time'));
  await page.evaluate(() => { window.open = () => null; });
  await page.click('button:has-text("Open in Perfetto")');
  assert.match(await page.locator('.an-status').innerText(), /blocked the Perfetto window/);
  assert.deepEqual(errors, []);
  await close();
});
