// Issue #52's smaller findings, in a real browser: a recompile's reason on the attempt that logged
// it and from compilation_metrics when the artifact is absent; symbols and failures placed at the
// user's line; collective schedules that a rank did not log never shown as agreeing; the
// Overview's storage line counting the whole bundle. Values checked by hand against the raw logs
// (see each test).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, open, go, shot, fixture, TIMEOUT } from './viewer-harness.js';

/** A copy of the trace `rel` (a log file's directory) where `edit(name, lines)` changes each log. */
function edited(rel, edit) {
  return (tmp) => {
    const out = path.join(tmp, `edited-${path.basename(rel)}`);
    fs.mkdirSync(out);
    for (const name of fs.readdirSync(fixture(rel))) {
      const lines = fs.readFileSync(path.join(fixture(rel), name), 'utf8').split('\n');
      edit(name, lines);
      fs.writeFileSync(path.join(out, name), lines.join('\n'));
    }
    return out;
  };
}

/** Removes every entry whose header line contains `text`, with its payload lines. */
function dropEntries(lines, text) {
  let dropping = false;
  const kept = lines.filter((line) => {
    if (!line.startsWith('\t')) dropping = line.includes(text);
    return !dropping;
  });
  lines.splice(0, lines.length, ...kept);
}

let env;
before(async () => {
  env = await setup({
    run_b: fixture('torch-2.15/two_runs/run_b'),
    // The recompiles fixture without its 7 recompile_reasons artifacts.
    no_artifact: edited('torch-2.15/recompiles', (name, lines) => dropEntries(lines, '{"artifact": {"name": "recompile_reasons"')),
    ranks_shifted: fixture('torch-2.15/ranks_shifted'),
    dynamic_shapes: fixture('torch-2.15/dynamic_shapes'),
    // ranks_cache with rank 3's allreduce_fn schedule (line 2993) removed and its FX graph cache
    // miss for [1/0] (line 3717) made a hit: how the held-out job's rank 3 looked.
    ranks_cache_hit: edited('torch-2.15/ranks_cache', (name, lines) => {
      if (!name.includes('rank_3')) return;
      assert.ok(lines[3716].includes('"name": "fx_graph_cache_miss"') && lines[3716].includes('"frame_id": 1'));
      lines[3716] = lines[3716].replace('fx_graph_cache_miss', 'fx_graph_cache_hit');
      assert.ok(lines[2992].includes('inductor_collective_schedule'));
      dropEntries(lines, 'inductor_collective_schedule');
    }),
  });
});
after(() => env?.close());

test('a restarted frame compile shows its reason, logged on [0/1], on both attempts', { timeout: TIMEOUT }, async () => {
  // two_runs/run_b: line 30344, recompile_reasons of [0/1] (attempt 0): "0/0: tensor 'x' size
  // mismatch at index 0. expected 8, actual 6"; Dynamo restarted it; [0/1_1]'s
  // compilation_metrics (line 30735) carries the same reason.
  const reason = "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 6";
  const { page, viewer, errors, close } = await open(env, env.url('run_b', '#/compile?id=%5B0%2F1%5D'));
  assert.deepEqual(errors, []);
  assert.deepEqual(viewer.data.compile.recompile,
    { frame: '0', step: '[0/1_1]', reasons: [reason], reasonsFrom: 'recompile_reasons', reasonsLoggedOn: '[0/1]' });
  const card = page.locator('section.recompile-reason');
  assert.match(await card.innerText(), /Logged on \[0\/1\], which Dynamo restarted; \[0\/1_1\] is the same frame compile's final attempt and shares its reason\./);
  await shot(page, 'details-compile-restarted-reason-light');
  const after = await go(page, '#/compile?id=%5B0%2F1_1%5D');
  assert.equal(after.data.compile.recompile.reasonsLoggedOn, '[0/1]');
  const r = await go(page, '#/recompiles?frame=0&id=%5B0%2F1_1%5D');
  assert.equal(r.data.recompiles.selected, '[0/1_1]');
  assert.deepEqual([r.data.recompiles.reasonsFrom, r.data.recompiles.reasonsLoggedOn], ['recompile_reasons', '[0/1]']);
  assert.match(await page.locator('[data-change="[0/1_1]"]').innerText(), /Logged on \[0\/1\]/);
  await shot(page, 'details-recompiles-restarted-light');
  await close();
});

test('without the recompile_reasons artifact, the metrics reason is shown and no recompile is called a first compile', { timeout: TIMEOUT }, async () => {
  // recompiles without its artifacts: [0/1]'s compilation_metrics (line 6797) has
  // recompile_reason "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6".
  const { page, viewer, errors, close } = await open(env, env.url('no_artifact', '#/recompiles?frame=0&id=%5B0%2F1%5D'));
  assert.deepEqual(errors, []);
  const r = viewer.data.recompiles;
  assert.deepEqual(r.reasons, ["0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"]);
  assert.equal(r.reasonsFrom, 'compilation_metrics');
  const sequence = await page.locator('[data-table="recompile-sequence"] .vt-body').innerText();
  assert.equal(sequence.match(/first compile/g)?.length, 1, sequence);
  assert.doesNotMatch(sequence, /no reason logged/);
  assert.match(await page.locator('[data-change="[0/1]"]').innerText(), /From compilation_metrics\.recompile_reason/);
  await shot(page, 'details-recompiles-metrics-reason-light');
  const c = await go(page, '#/compile?id=%5B0%2F1%5D');
  assert.equal(c.data.compile.recompile.reasonsFrom, 'compilation_metrics');
  assert.match(await page.locator('section.recompile-reason h2').innerText(), /a guard failed$/);
  await close();
});

test('symbols and failures are placed at the user\'s line', { timeout: TIMEOUT }, async () => {
  // ranks_shifted rank 1, line 9668: s72 created under sync_grads (ranks_shifted.py:30) calling
  // torch's all_reduce (_functional_collectives.py:195), in [1/1].
  const { page, viewer, errors, close } = await open(env, env.url('ranks_shifted', '#/compile?s=rank1&id=%5B1%2F1%5D'));
  assert.deepEqual(errors, []);
  assert.deepEqual(viewer.data.compile.symbolsWhere, ['/home/user/scenarios/ranks_shifted.py:30']);
  await close();
  // dynamic_shapes: [3/0] fails with ConstraintViolationError (line 24228) and no
  // fail_user_frame; its last user_stack (lines 21092-21094) is at dynamic_shapes.py:74.
  const f = await open(env, env.url('dynamic_shapes', '#/failures'));
  assert.deepEqual(f.errors, []);
  const failure = f.viewer.data.failures.find((x) => x.compile_id === '[3/0]' && x.kind === 'failure');
  assert.equal(failure.user_frame, '/home/user/scenarios/dynamic_shapes.py:74');
  assert.match(await f.page.locator('[data-table="failures"] .vt-body').innerText(), /dynamic_shapes\.py:74/);
  await shot(f.page, 'details-failures-user-code-light');
  await f.close();
});

for (const width of [1280, 390]) {
  test(`a rank that logged no schedule for a compile is never shown as agreeing (${width} px)`, { timeout: TIMEOUT }, async () => {
    const { page, viewer, errors, close } = await open(env, env.url('ranks_cache_hit', '#/ranks?sec=schedules'), { width });
    assert.deepEqual(errors, []);
    assert.deepEqual(viewer.data.schedulesNotLogged, [{ compile: 'allreduce_fn (ranks_cache.py:32)', noData: [], cacheHit: ['rank 3'] }]);
    const row = page.locator('[data-table="schedules"] .vt-body .vt-row').first();
    const text = await row.innerText();
    assert.match(text, /same where logged/);
    assert.match(text, /rank 3 \(not logged: FX cache hit\)/);
    assert.doesNotMatch(text, /\bsame\b(?! where)/);
    await shot(page, `details-ranks-schedules-cache-hit-${width}`);
    await close();
  });
}

test('the Overview\'s storage line counts the whole bundle', { timeout: TIMEOUT }, async () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(env.dir('run_b'), 'manifest.json'), 'utf8'));
  const whole = manifest.files.filter((f) => f.path !== 'manifest.lite.json.zst').reduce((n, f) => n + f.size, 0);
  const packs = manifest.blobs.packs.reduce((n, p) => n + p.size, 0);
  assert.equal(manifest.counts.bundle_bytes, whole);
  assert.ok(whole > packs, 'the bundle is more than its packs');
  const { page, errors, close } = await open(env, env.url('run_b'));
  assert.deepEqual(errors, []);
  const storage = page.locator('details.storage');
  // As dom.js's bytes() writes a size: one decimal under 10, else whole.
  const units = ['B', 'KiB', 'MiB'];
  let v = whole;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  const shown = `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
  assert.ok((await storage.locator('summary').innerText()).includes(`of logs stored as a ${shown} bundle`));
  await storage.locator('summary').click();
  assert.match(await storage.innerText(), /payloads stored as\s+[\d.]+ KiB of zstd packs/);
  await shot(page, 'details-overview-storage-light');
  await close();
});

test('phone width: the reason note and the storage line fit', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('run_b', '#/compile?id=%5B0%2F1%5D'), { width: 390 });
  assert.deepEqual(errors, []);
  const card = page.locator('section.recompile-reason');
  assert.match(await card.innerText(), /Logged on \[0\/1\]/);
  const box = await card.boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, JSON.stringify(box));
  await shot(page, 'details-compile-restarted-reason-390');
  await go(page, '#/overview');
  await page.locator('details.storage summary').click();
  assert.match(await page.locator('details.storage summary').innerText(), /of logs stored as a [\d.]+ KiB bundle/);
  await shot(page, 'details-overview-storage-390');
  await close();
});
