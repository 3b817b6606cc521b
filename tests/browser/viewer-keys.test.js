// Keyboard shortcuts (keys.js) on a real fixture: j/k and the arrows move a visible selection in
// tables (virtualized ones included) and the stack trie, Enter opens the selected row, "g" + a
// letter opens a tab, ? shows the help (listing "/" and Ctrl+F too), Esc closes it; keys typed in
// a box and "/" are left alone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, open, settle, shot, fixture, TIMEOUT } from './viewer-harness.js';

let env;
before(async () => { env = await setup({ recompiles: fixture('torch-2.15/recompiles') }); }, { timeout: 10 * 60_000 });
after(() => env?.close());

/** The selected row of a table: its first cell's text, whether it is in the window, its outline. */
const selection = (page, sel) => page.evaluate((s) => {
  const row = document.querySelector(`${s} .kb-selected`);
  if (!row) return null;
  const r = row.getBoundingClientRect();
  const viewport = row.closest('.vt-viewport, .trie-viewport').getBoundingClientRect();
  return {
    first: row.firstElementChild.textContent,
    inView: r.top >= viewport.top - 1 && r.bottom <= viewport.bottom + 1 && r.top >= 0 && r.bottom <= innerHeight + 1,
    ring: getComputedStyle(row).boxShadow,
    aria: row.getAttribute('aria-selected'),
  };
}, sel);

const renders = (page) => page.evaluate(() => window.__viewer.renders);

test('compiles: j/k move the selection, Enter opens the compile; ↓ scrolls until a row is selected', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('recompiles', '#/compiles'));
  // Checked on the Compiles page of this fixture: the compile directory in log order is [0/0], [0/1], ... [1/3].
  await page.keyboard.press('j');
  let s = await selection(page, '[data-table="compiles"]');
  assert.equal(s.first, '[0/0]');
  assert.equal(s.aria, 'true');
  assert.notEqual(s.ring, 'none', 'a visible ring');
  await page.keyboard.press('j');
  await page.keyboard.press('ArrowDown');
  assert.equal((await selection(page, '[data-table="compiles"]')).first, '[0/2]');
  await page.keyboard.press('k');
  await page.keyboard.press('ArrowUp');
  assert.equal((await selection(page, '[data-table="compiles"]')).first, '[0/0]');
  // ] moves the selection to the next table: "Artifacts outside any compile" (torch_version only,
  // logged before any compile: line 13 of the log), and back with [.
  await page.keyboard.press(']');
  assert.equal(await selection(page, '[data-table="compiles"]'), null);
  assert.equal((await selection(page, '[data-table="unattributed"]')).first, 'torch_version');
  await page.keyboard.press('[');
  assert.equal((await selection(page, '[data-table="compiles"]')).first, '[0/0]');
  await page.keyboard.press('j');
  await shot(page, 'keys-compiles-selected');
  const before = await renders(page);
  await page.keyboard.press('Enter');
  const s2 = await settle(page, before);
  assert.equal(s2.page, 'compile');
  assert.equal(s2.params.id, '[0/1]');
  assert.deepEqual(errors, []);
  await close();
});

test('entries: j walks a virtualized table past its rendered window, the row kept in view', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, env.url('recompiles', '#/entries'), { width: 1000, height: 700 });
  // 1,077 entries, 25 rows visible, about 35 rendered: the 61st row (seq 60) is drawn only when scrolled to.
  assert.equal(viewer.data.entries.total, 1077);
  for (let i = 0; i < 61; i++) await page.keyboard.press('j');
  const s = await selection(page, '[data-table="entries"]');
  assert.equal(s.first, '60');
  assert.equal(s.inView, true, 'scrolled into view in the table and the window');
  assert.ok(await page.locator('[data-table="entries"] .vt-viewport').evaluate((v) => v.scrollTop > 0));
  await shot(page, 'keys-entries-row-60');
  // Typing j in the filter box types it: the selection does not move.
  await page.locator('[data-table="entries"] .vt-filter').click();
  await page.keyboard.type('jk');
  assert.equal(await page.locator('[data-table="entries"] .vt-filter').inputValue(), 'jk');
  assert.deepEqual(errors, []);
  await close();
});

test('trie: j selects frames, Enter opens the first compile on the row', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('recompiles', '#/trie'));
  let id = null;
  // The first row holding a compile chip (the trie's leaf frames hold them).
  for (let i = 0; i < 20 && !id; i++) {
    await page.keyboard.press('j');
    id = await page.evaluate(() => document.querySelector('.trie .kb-selected a.cid')?.dataset.cid ?? null);
  }
  assert.ok(id, 'a frame with a compile');
  const before = await renders(page);
  await page.keyboard.press('Enter');
  const s = await settle(page, before);
  assert.equal(s.page, 'compile');
  assert.equal(s.params.id, id);
  assert.deepEqual(errors, []);
  await close();
});

test('? shows every shortcut (with / and Ctrl+F), Esc closes it; g r opens Recompiles; "/" goes to Find, not to keys.js', { timeout: TIMEOUT }, async () => {
  for (const theme of ['light', 'dark']) {
    const { page, errors, close } = await open(env, env.url('recompiles', '#/overview'), { theme, width: 800 });
    await page.keyboard.press('Shift+Slash');
    const help = page.locator('.kb-help[role="dialog"]');
    assert.equal(await help.isVisible(), true);
    const text = await help.textContent();
    for (const k of ['Ctrl+F', 'Enter', 'Esc', 'go to Compiles', 'go to Recompiles', 'go to Stack trie']) assert.ok(text.includes(k), k);
    assert.ok(await help.locator('kbd', { hasText: /^\/$/ }).count() === 1, '"/" is listed');
    await shot(page, `keys-help-${theme}`);
    await page.keyboard.press('Escape');
    assert.equal(await help.count(), 0);
    const before = await renders(page);
    await page.keyboard.press('g');
    await page.keyboard.press('r');
    const s = await settle(page, before);
    assert.equal(s.page, 'recompiles');
    // "/" is find.js's, not keys.js's: it focuses a Find box (the page's table filter, else the
    // header's search) and neither opens the help nor leaves the page.
    await page.keyboard.press('/');
    const focused = await page.evaluate(() => ({
      tag: document.activeElement?.tagName,
      search: document.activeElement?.matches('input.global-search, [data-table] input, input[type=search]') ?? false,
      page: window.__viewer.page,
    }));
    assert.deepEqual(focused, { tag: 'INPUT', search: true, page: 'recompiles' });
    assert.equal(await page.locator('.kb-help').count(), 0);
    assert.deepEqual(errors, []);
    await close();
  }
});
