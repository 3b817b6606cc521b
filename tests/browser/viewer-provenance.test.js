// Real-browser tests of the viewer's provenance page (pages/provenance.js): every graph of a
// compile is offered, and a click on a line marks the lines it maps to in the other panes, as
// tlparse's provenance.js does. Facts were checked by hand against the logs and the decoded
// `provenance` tables (zstd -dc BUNDLE/tables/log0/provenance.json.zst).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setup, open, go, shot, fixture, TIMEOUT } from './viewer-harness.js';

const SCRIPT = '<script>window.__pwned=1</script>';
const IMG = '<img src=x onerror="window.__pwned=1">';

/** A log entry of compile [0/0]: an artifact with a payload (md5 as torch computes it). */
function artifact(name, encoding, payload) {
  const md5 = crypto.createHash('md5').update(payload).digest('hex');
  const body = payload.split('\n').map((l) => `\n\t${l}`).join('');
  return `V0101 00:00:00.000000 7 a.py:1] {"artifact": {"name": "${name}", "encoding": "${encoding}"}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "${md5}"}${body}`;
}

// A node name is the text before the first `=` and `:` of its line, so it holds neither.
const NODE = 'x_<script>window.__pwned++</script>';

/** A provenance log whose node names, kernel names and stack traces are HTML. */
function hostileLog(tmp) {
  const node = NODE;
  const pre = `def forward(self, a):\n    ${node} = a + 1`;
  const post = `def forward(self, a):\n    add: "f32[4]" = a + 1  # ${IMG}`;
  const mappings = JSON.stringify({ preToPost: { [node]: ['add'] }, postToPre: { add: [node] } });
  const traces = JSON.stringify({ [`kernel_${IMG}`]: [`  File "${SCRIPT}", line 1\\n    f()`] });
  const file = path.join(tmp, 'hostile_provenance.log');
  fs.writeFileSync(file, [
    artifact('before_pre_grad_graph', 'string', pre),
    artifact('after_post_grad_graph', 'string', post),
    artifact('inductor_provenance_tracking_node_mappings', 'json', mappings),
    artifact('inductor_provenance_tracking_kernel_stack_traces', 'json', traces),
  ].join('\n') + '\n');
  return file;
}

let env;
before(async () => {
  env = await setup({
    training: fixture('torch-2.15/training'),
    jit_cuda: fixture('tlparse-tests/inductor_provenance_jit_cuda_log.txt'),
    aot_cuda: fixture('tlparse-tests/inductor_provenance_aot_cuda_log.txt'),
    hostile: hostileLog,
    simple: fixture('torch-2.15/simple'),
  });
});
after(() => env?.close());

/** Clicks the text of line `n` of a pane (scrolling it into view first). */
async function clickLine(page, pane, n) {
  const view = page.locator(`[data-pane="${pane}"] .cv-viewport`);
  await view.evaluate((el, line) => { el.scrollTop = Math.max(0, (line - 5) * 19); }, n);
  const line = page.locator(`[data-code="prov-${pane}"] .cv-line[data-line="${n}"] .cv-text`);
  await line.waitFor();
  await line.click({ position: { x: 8, y: 8 } }); // near its start: no sideways scroll
}

test('provenance: a training compile offers its forward and its backward; clicks map across panes', { timeout: TIMEOUT }, async () => {
  // torch-2.15/training: [0/0_1] compiles a forward (output code line 2691, AOT ID 0_forward,
  // node mappings 3453) and, lazily, a backward (6489, 0_backward, mappings 7411 = only
  // {"version": 2.0}); [3/0] (SGD.step) one inference graph. tlparse would show the backward's
  // empty maps only.
  const { page, viewer, errors, close } = await open(env, env.url('training', '#/provenance'));
  assert.deepEqual(errors, []);
  const p = viewer.data.provenance;
  assert.deepEqual(p.compiles, [
    { compile_id: '[0/0_1]', graphs: ['forward', 'backward'] },
    { compile_id: '[3/0]', graphs: ['inference'] },
  ]);
  assert.deepEqual([p.compile, p.label, p.empty], ['[0/0_1]', 'forward', false]);
  assert.deepEqual(await page.locator('.prov-graph').allInnerTexts(), ['forward', 'backward', 'inference']);
  // Pre-grad line 22 is `linear: ... = torch._C._nn.linear(layer_norm, ...)`; the mappings send
  // `linear` to `permute` and `addmm` (post-grad lines 13, 14), and addmm is computed by
  // `extern_kernels.addmm(primals_5, buf4, ...)` on line 455 of the forward's output code.
  await clickLine(page, 'pre', 22);
  const marks = await page.evaluate(() => window.__viewer.data.provenanceMarks);
  assert.deepEqual(marks, { pre: [22], post: [13, 14], code: [455] });
  assert.match(await page.locator('[data-code="prov-post"] .cv-line.cv-mark[data-line="14"]').innerText(), /addmm: "f32\[8, 64\]/);
  assert.match(await page.locator('[data-code="prov-code"] .cv-line.cv-mark[data-line="455"]').innerText(), /extern_kernels\.addmm\(primals_5, buf4/);
  assert.match(await page.evaluate(() => location.hash), /pane=pre&line=22$/);
  await shot(page, 'provenance-training-forward');

  // The backward: its own panes, and a note that its mappings map nothing.
  await page.locator('.prov-graph', { hasText: 'backward' }).click();
  await page.waitForFunction(() => window.__viewer.state === 'ready' && window.__viewer.data.provenance?.label === 'backward');
  const back = await page.evaluate(() => window.__viewer.data.provenance);
  assert.deepEqual([back.compile, back.graph, back.empty], ['[0/0_1]', 1, true]);
  assert.match(await page.locator('[data-graph="1"] .note').first().innerText(), /map nothing: torch logged only version\. A backward often has none/);
  assert.match(await page.locator('[data-code="prov-code"] .cv-line[data-line="1"]').innerText(), /# AOT ID: \['0_backward'\]/);
  await shot(page, 'provenance-training-backward');
  assert.deepEqual(errors, []);
  await close();
});

test('provenance: tlparse\'s maps, from a link to a clicked line (Python and C++ code)', { timeout: TIMEOUT }, async () => {
  // inductor_provenance_jit_cuda_log.txt, maps pinned by tlparse's tests: code line 186 →
  // post-grad [7, 20, 17]; those → pre-grad 11, 23, 20 (postToPre 7→11, 20→23, 17→20).
  const jit = await open(env, env.url('jit_cuda', '#/provenance?pane=code&line=186'));
  assert.deepEqual(jit.errors, []);
  await jit.page.waitForFunction(() => window.__viewer.data.provenanceMarks?.code?.length === 1);
  assert.deepEqual(await jit.page.evaluate(() => window.__viewer.data.provenanceMarks), { pre: [11, 20, 23], post: [7, 17, 20], code: [186] });
  assert.equal(jit.viewer.data.provenance.label, 'inference');
  await jit.close();

  // inductor_provenance_aot_cuda_log.txt: C++ code, whose payload starts with an empty line
  // (line_offset 1): tlparse's line 1060, the aoti_torch_cuda_mm_out call, is line 1061 of the
  // payload, and maps to post-grad [14, 27, 24].
  const aot = await open(env, env.url('aot_cuda', '#/provenance'));
  assert.deepEqual(aot.errors, []);
  assert.equal(aot.viewer.data.provenance.label, 'graph 1');
  await clickLine(aot.page, 'code', 1061);
  const marks = await aot.page.evaluate(() => window.__viewer.data.provenanceMarks);
  assert.deepEqual(marks.post, [14, 24, 27]);
  assert.match(await aot.page.locator('[data-code="prov-code"] .cv-line[data-line="1061"]').innerText(), /aoti_torch_cuda_mm_out\(buf0,/);
  assert.match(await aot.page.locator('[data-pane="code"] h3').innerText(), /^Generated C\+\+ code/);
  await shot(aot.page, 'provenance-aot_cuda');
  assert.deepEqual(aot.errors, []);
  await aot.close();
});

test('provenance: node names, code and stack traces are shown as text, never markup', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('hostile', '#/provenance'));
  assert.deepEqual(errors, []);
  await clickLine(page, 'pre', 2);
  assert.deepEqual(await page.evaluate(() => window.__viewer.data.provenanceMarks), { pre: [2], post: [2], code: [] });
  const details = page.locator('details.an-details');
  await details.locator('summary').click();
  await details.locator('pre').waitFor();
  const text = await page.evaluate(() => document.body.innerText);
  assert.ok(text.includes(`${NODE} = a + 1`), 'the pre-grad line as text');
  assert.ok(text.includes(`# ${IMG}`), 'the post-grad line as text');
  assert.ok(text.includes(`kernel_${IMG}`) && text.includes(`File "${SCRIPT}", line 1`), 'kernel and trace as text');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('img, main script').count(), 0);
  await close();
});

test('provenance: an unknown compile id shows the first; a stream without node mappings has no tab', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('training', '#/provenance'));
  const state = await go(page, '#/provenance?id=%5B9%2F9%5D&g=7');
  assert.deepEqual([state.data.provenance.compile, state.data.provenance.graph], ['[0/0_1]', 1], 'the first compile, its last graph');
  assert.deepEqual(errors, []);
  await close();

  // torch-2.15/simple logs no provenance (tracking off): no tab, and the page says how to turn it on.
  const s = await open(env, env.url('simple', '#/provenance'));
  assert.equal(await s.page.locator('nav.tabs a', { hasText: 'Provenance' }).count(), 0);
  assert.match(await s.page.locator('.empty').innerText(), /provenance_tracking_level = 1/);
  assert.deepEqual(s.errors, []);
  await s.close();
});
