// Issue #17's viewer fixes on real fixtures: table filter and sort kept in the URL (Back, Forward,
// reload), the whole text of clipped cells, the tab bar's "More" menu at 800 and 500 px, byte
// progress while a file loads, and colour legends that match the bars in both themes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, open, go, settle, shot, fixture, TIMEOUT } from './viewer-harness.js';
import { startServer } from './server.js';

let env;
before(async () => {
  env = await setup({
    recompiles: fixture('torch-2.15/recompiles'),
    shifted: fixture('torch-2.15/ranks_shifted'),
    graph_breaks: fixture('torch-2.15/graph_breaks'),
  });
}, { timeout: 10 * 60_000 });
after(() => env?.close());

const RECOMPILES_LOG = path.join(fixture('torch-2.15/recompiles'), 'dedicated_log_torch_trace_uhwu8yzi.log');

/** The "N of M rows" / "M rows" counter of a table. */
const counter = (page, name) => page.locator(`[data-table="${name}"] .vt-count`).textContent();
const hashParams = (page) => page.evaluate(() => Object.fromEntries(new URLSearchParams(location.hash.split('?')[1] ?? '')));

test('entries: filter and sort go into the URL without a history entry per keystroke; Back, Forward and reload restore them', { timeout: TIMEOUT }, async () => {
  // Checked in the raw log: 8 lines carry {"dynamo_start": ...} (grep -c '"dynamo_start"'), and
  // the log has 1,077 entries (the page's own total, matching the manifest's stream entries).
  const dynamoStarts = fs.readFileSync(RECOMPILES_LOG, 'utf8').split('\n').filter((l) => l.includes('{"dynamo_start"')).length;
  assert.equal(dynamoStarts, 8);
  const { page, viewer, errors, close } = await open(env, env.url('recompiles', '#/entries'));
  assert.equal(viewer.data.entries.total, viewer.manifest.streams[0].entries);
  const historyBefore = await page.evaluate(() => history.length);
  await page.locator('[data-table="entries"] .vt-filter').pressSequentially('dynamo_start');
  assert.equal(await counter(page, 'entries'), `8 of ${viewer.data.entries.total.toLocaleString('en-US')} rows`);
  // Sorting by log line, descending: two clicks on the header.
  const lineHeader = page.locator('[data-table="entries"] .vt-head [role="columnheader"]', { hasText: 'line' }).first();
  await lineHeader.click();
  await lineHeader.click();
  assert.deepEqual(await hashParams(page), { 'entries.q': 'dynamo_start', 'entries.sort': '-line' });
  assert.equal(await page.evaluate(() => history.length), historyBefore, 'typing and sorting add no history entries');
  const shownLines = async () => page.locator('[data-table="entries"] .vt-body .vt-row').evaluateAll((rows) => rows.map((r) => Number(r.children[1].textContent)));
  const expected = fs.readFileSync(RECOMPILES_LOG, 'utf8').split('\n').map((l, i) => (l.includes('{"dynamo_start"') ? i + 1 : null)).filter(Boolean).reverse();
  assert.deepEqual(await shownLines(), expected, 'the dynamo_start lines of the log, last first');

  // Away and Back: the filter box, the counter and the order come back from the URL.
  await go(page, '#/compiles');
  let before = await page.evaluate(() => window.__viewer.renders);
  await page.goBack();
  await settle(page, before);
  assert.equal(await page.locator('[data-table="entries"] .vt-filter').inputValue(), 'dynamo_start');
  assert.equal(await counter(page, 'entries'), `8 of ${viewer.data.entries.total.toLocaleString('en-US')} rows`);
  assert.deepEqual(await shownLines(), expected);
  assert.equal(await page.locator('[data-table="entries"] .sort-mark').filter({ hasText: '▾' }).count(), 1);
  before = await page.evaluate(() => window.__viewer.renders);
  await page.goForward();
  const fwd = await settle(page, before);
  assert.equal(fwd.page, 'compiles');
  before = await page.evaluate(() => window.__viewer.renders);
  await page.goBack();
  await settle(page, before);
  // Reload: the same state from the URL alone.
  await page.reload();
  await settle(page);
  assert.equal(await page.locator('[data-table="entries"] .vt-filter').inputValue(), 'dynamo_start');
  assert.deepEqual(await shownLines(), expected);
  // Clearing the filter removes its parameter.
  await page.locator('[data-table="entries"] .vt-filter').fill('');
  assert.deepEqual(await hashParams(page), { 'entries.sort': '-line' });
  assert.deepEqual(errors, []);
  await close();
});

test('graph breaks: a sorted master-detail table stays sorted when a row is picked, and the URL keeps both', { timeout: TIMEOUT }, async () => {
  // graph_breaks fixture (as viewer-analysis checks): 4 groups of 5, 2, 2 and 1 breaks; the 1 is Tensor.item() (group 3).
  const { page, errors, close } = await open(env, env.url('graph_breaks', '#/graph-breaks'));
  const counts = () => page.locator('[data-table="graph-breaks"] .vt-body .vt-row .vt-cell:first-child').allInnerTexts()
    .then((t) => t.map((x) => Number(x.replace(/\D/g, ''))));
  assert.deepEqual(await counts(), [5, 2, 2, 1]);
  const header = page.locator('[data-table="graph-breaks"] .vt-head [role="columnheader"]').first();
  await header.click(); // ascending
  assert.deepEqual(await counts(), [1, 2, 2, 5]);
  const sort = (await hashParams(page))['graph-breaks.sort'];
  assert.ok(sort && !sort.startsWith('-'), `ascending sort in the URL (${sort})`);
  // Picking the first row (1 break: Tensor.item()) redraws the table: still ascending, both in the URL.
  await page.locator('[data-table="graph-breaks"] .vt-body .vt-row').first().click();
  assert.match(await page.locator('[data-group="3"] h2').innerText(), /Tensor\.item\(\)/);
  assert.deepEqual(await counts(), [1, 2, 2, 5]);
  assert.deepEqual(await hashParams(page), { 'graph-breaks.sort': sort, g: '3' });
  await page.reload();
  await settle(page);
  assert.deepEqual(await counts(), [1, 2, 2, 5]);
  assert.match(await page.locator('[data-group="3"] h2').innerText(), /Tensor\.item\(\)/);
  assert.deepEqual(errors, []);
  await close();
});

test('clipped text: log-entry metadata and ranks\' cache cells show their whole text on hover and click', { timeout: TIMEOUT }, async () => {
  const { page, errors, close } = await open(env, env.url('recompiles', '#/entries'), { width: 800 });
  const log = fs.readFileSync(RECOMPILES_LOG, 'utf8').split('\n');
  // The first metadata cell the column cuts off.
  const cell = page.locator('[data-table="entries"] .vt-body .vt-row .vt-cell:nth-child(7)').filter({ hasText: '{' });
  const n = await cell.count();
  let clipped = -1;
  for (let i = 0; i < n && clipped < 0; i++) {
    if (await cell.nth(i).evaluate((el) => el.scrollWidth > el.clientWidth + 1)) clipped = i;
  }
  assert.ok(clipped >= 0, 'some metadata cell is cut off at 800 px');
  const target = cell.nth(clipped);
  const lineNo = Number(await target.evaluate((el) => el.parentElement.children[1].textContent));
  await target.hover();
  const title = await target.getAttribute('title');
  await target.click();
  const whole = await page.locator('.reveal-box .reveal-text').textContent();
  assert.equal(whole, title, 'the tooltip and the box hold the same whole text');
  // Checked against the raw log: every key and value of the metadata is in the JSON of that line
  // (line 13 at 800 px: {"artifact": {"name": "torch_version", "encoding": "json"}, ...}), at its top
  // level or in the object under the entry's kind.
  const meta = JSON.parse(whole);
  const raw = JSON.parse(log[lineNo - 1].slice(log[lineNo - 1].indexOf('] ') + 2));
  const underKind = Object.values(raw)[0];
  for (const [k, v] of Object.entries(meta)) assert.deepEqual(k in raw ? raw[k] : underKind[k], v, `line ${lineNo}: ${k}`);
  assert.ok(whole.length > (await target.evaluate((el) => el.clientWidth)) / 8, 'longer than the cell shows');
  await shot(page, 'fixes-entries-reveal-800');
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('.reveal-box').count(), 0, 'Esc closes the box');
  assert.equal((await state(page)).page, 'entries', 'the click did not navigate');

  // Ranks: the cache table's outcome cells at 1280 px ("ranks 0, 1, 3: aotautograd miss, fx_graph miss, fx_graph ...").
  const r = await open(env, env.url('shifted', '#/ranks'));
  const outcome = r.page.locator('[data-table="cache-compiles"] .vt-body .vt-row .vt-cell').filter({ hasText: 'aotautograd miss' }).first();
  await outcome.scrollIntoViewIfNeeded();
  assert.ok(await outcome.evaluate((el) => el.scrollWidth > el.clientWidth + 1), 'the outcomes cell is cut off');
  await outcome.click();
  const text = await r.page.locator('.reveal-text').textContent();
  // The cache_divergence table, read in the page: every group's ranks and outcomes are in the text.
  const groups = await r.page.evaluate(async () => (await window.__viewer.bundle.crossRankTable('cache_divergence')).compiles.find((c) => c.differs).groups);
  for (const g of groups) for (const o of g.outcomes) assert.ok(text.includes(`${o.cache.replace(/_cache$/, '')} ${o.outcome}`), o.cache);
  assert.equal(text.split(' | ').length, groups.length);
  await shot(r.page, 'fixes-ranks-cache-reveal');
  assert.deepEqual(r.errors, []);
  await r.close();
  assert.deepEqual(errors, []);
  await close();
});

const state = (page) => page.evaluate(() => ({ page: window.__viewer.page, state: window.__viewer.state }));

for (const width of [800, 500]) {
  test(`tab bar at ${width} px: the tabs that do not fit are in "More", and every tab opens`, { timeout: TIMEOUT }, async () => {
    const wide = await open(env, env.url('recompiles', '#/overview'));
    const all = await wide.page.locator('nav.tabs > a').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
    assert.equal(await wide.page.locator('.tab-more-wrap').isVisible(), false, 'no menu at 1280 px: every tab fits');
    await wide.close();
    const { page, errors, close } = await open(env, env.url('recompiles', '#/overview'), { width, theme: width === 800 ? 'dark' : 'light' });
    const visible = await page.locator('nav.tabs > a:visible').allTextContents();
    assert.ok(visible.length < all.length, `some tabs are in the menu at ${width} px`);
    const more = page.locator('.tab-more');
    assert.equal(await more.textContent(), `More (${all.length - visible.length}) ▾`);
    await more.click();
    assert.equal(await more.getAttribute('aria-expanded'), 'true');
    const inMenu = await page.locator('.tab-menu a').allTextContents();
    assert.deepEqual([...visible, ...inMenu], all.map(([label]) => label), 'every tab, in order, in the bar or the menu');
    await shot(page, `fixes-tabs-${width}`);
    // Each tab in the menu opens its page; the button then shows it as the active tab.
    for (const [label, href] of all.filter(([label]) => inMenu.includes(label))) {
      if (!(await page.locator('.tab-menu').isVisible())) await more.click();
      const before = await page.evaluate(() => window.__viewer.renders);
      await page.locator('.tab-menu a', { hasText: label }).click();
      const s = await settle(page, before);
      assert.equal(`#/${s.page}`, href.split('?')[0], label);
      assert.equal(s.state, 'ready', label);
      assert.equal(await more.getAttribute('class'), 'tab-more active');
    }
    // Keyboard: the button opens the menu, Esc closes it and gives focus back.
    await more.focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('.tab-menu').isVisible(), true);
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('.tab-menu').isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement.className), 'tab-more active');
    assert.deepEqual(errors, []);
    await close();
  });
}

test('progress: a slow table shows "Loading compile_directory… N of <its size>", the manifest likewise', { timeout: TIMEOUT }, async () => {
  // The lite manifest the viewer opens lists no file sizes: a table's total is its Content-Length.
  // server.js trickle sends compile_directory in 1 KiB pieces with a 3 s pause at half its size.
  const slow = await startServer('plain', { '/b/': path.dirname(env.dir('recompiles')) },
    { trickle: /\/compile_directory\.json\.zst$/, piece: 1024 });
  const context = await env.browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    // Hold the (lite) manifest until the test has seen the progress text.
    let releaseManifest;
    const manifestHeld = new Promise((resolve) => { releaseManifest = resolve; });
    await page.route('**/manifest.lite.json.zst', async (route) => { await manifestHeld; await route.continue(); });
    await page.goto(`${slow.url}/b/recompiles/index.html#/compiles`);
    await page.waitForFunction(() => /^Loading the manifest… 0 B$/.test(document.querySelector('.boot')?.textContent ?? ''));
    releaseManifest();
    const manifest = JSON.parse(fs.readFileSync(path.join(env.dir('recompiles'), 'manifest.json'), 'utf8'));
    const file = manifest.streams[0].tables.compile_directory;
    assert.equal(file.parts.length, 1);
    const size = fs.statSync(path.join(env.dir('recompiles'), file.parts[0])).size;
    // As dom.js bytes() writes it: under 10 KiB one decimal, else whole KiB.
    const kib = size / 1024;
    const total = size < 1024 ? `${size} B` : `${kib < 10 ? kib.toFixed(1) : Math.round(kib)} KiB`;
    const expected = new RegExp(`^Loading compile_directory… [\\d.]+ (B|KiB) of ${total.replace('.', '\\.')}$`);
    await page.waitForFunction((re) => new RegExp(re).test(document.querySelector('main .loading')?.textContent ?? ''), expected.source);
    await shot(page, 'fixes-progress');
    const s = await settle(page);
    assert.equal(s.state, 'ready');
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await slow.close();
  }
});

test('progress: over a slow link the event index shows the bytes that have arrived, "… of" its size', { timeout: TIMEOUT }, async () => {
  // server.js trickle: the index is sent in 8 KiB pieces with a 3 s pause at half its size, so the
  // page is seen mid-download whatever the machine's load.
  const slow = await startServer('plain', { '/b/': path.dirname(env.dir('recompiles')) }, { trickle: /\/index\/[^/]+\.zst$/ });
  const context = await env.browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(env.dir('recompiles'), 'manifest.json'), 'utf8'));
    const index = manifest.streams[0].index;
    const size = fs.statSync(path.join(env.dir('recompiles'), index)).size;
    assert.ok(size > 16 * 1024, `the index (${size} bytes) is long enough to be seen half-sent`);
    await page.goto(`${slow.url}/b/recompiles/index.html#/entries`);
    const text = await (await page.waitForFunction(() => {
      const t = document.querySelector('main .loading')?.textContent ?? '';
      return /^Loading the event index… [\d.]+ (B|KiB) of [\d.]+ KiB$/.test(t) && !/^Loading the event index… 0 B/.test(t) ? t : null;
    }, null, { timeout: 60_000 })).jsonValue();
    const [, loaded, total] = /… ([\d.]+ (?:B|KiB)) of ([\d.]+ KiB)$/.exec(text);
    const kib = (t) => (t.endsWith(' KiB') ? parseFloat(t) * 1024 : parseFloat(t));
    assert.ok(kib(loaded) > 0 && kib(loaded) < size, `${loaded} is part of the index`);
    assert.ok(Math.abs(kib(total) - size) < 0.06 * size, `${total} is the index's ${size} bytes`);
    await shot(page, 'fixes-progress-index');
    const s = await settle(page);
    assert.equal(s.state, 'ready');
    assert.equal(s.data.entries.total, manifest.streams[0].entries);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await slow.close();
  }
});

test('legends: the compile-time and log-volume bars\' parts are named by swatches of their own colours, in both themes', { timeout: TIMEOUT }, async () => {
  for (const theme of ['light', 'dark']) {
    const { page, errors, close } = await open(env, env.url('recompiles', '#/time'), { theme, width: 800 });
    const colours = await page.evaluate(() => {
      const bg = (el) => getComputedStyle(el).backgroundColor;
      const section = [...document.querySelectorAll('section')].find((s) => s.querySelector('[data-table="phase-totals"]'));
      const legend = section.querySelector('.an-legend');
      const bar = section.querySelector('[data-table="phase-totals"] .vt-body .an-bar-fill');
      return {
        text: section.textContent,
        legend: [...legend.querySelectorAll('.an-legend-item')].map((i) => i.textContent),
        fill: bg(legend.querySelector('[data-part="fill"] .an-bar-fill')),
        inner: bg(legend.querySelector('[data-part="inner"] .an-bar-inner')),
        barFill: bg(bar),
        barInner: bg(bar.querySelector('.an-bar-inner')),
      };
    });
    assert.deepEqual(colours.legend, ['total time', 'self time (part of the total)']);
    assert.equal(colours.fill, colours.barFill);
    assert.equal(colours.inner, colours.barInner);
    assert.notEqual(colours.fill, colours.inner);
    assert.doesNotMatch(colours.text, /dark part|darker part/, 'no legend names a shade');
    await page.locator('.an-legend').first().scrollIntoViewIfNeeded();
    await shot(page, `fixes-time-legend-${theme}`);
    assert.deepEqual(errors, []);
    await close();
  }
  const { page, errors, close } = await open(env, env.url('recompiles', '#/volume'), { theme: 'dark' });
  assert.deepEqual(await page.locator('.an-legend .an-legend-item').allTextContents(), ['payload bytes', 'header bytes']);
  assert.doesNotMatch(await page.locator('main').textContent(), /dark part|light part/);
  assert.deepEqual(errors, []);
  await close();
  // A compile's Phases: its legend is drawn with the phase bars' own classes, in both themes.
  for (const theme of ['light', 'dark']) {
    const c = await open(env, env.url('recompiles', '#/compile?id=[0/0]'), { theme });
    const phases = await c.page.evaluate(() => {
      const bg = (el) => getComputedStyle(el).backgroundColor;
      const section = document.getElementById('sec-phases');
      const legend = section.querySelector('.an-legend');
      const row = section.querySelector('.phase .phase-bar');
      return {
        text: section.textContent,
        legend: [...legend.querySelectorAll('.an-legend-item')].map((i) => i.textContent),
        total: bg(legend.querySelector('[data-part="total"] .phase-bar')),
        self: bg(legend.querySelector('[data-part="self"] .phase-self')),
        barTotal: bg(row),
        barSelf: bg(row.querySelector('.phase-self')),
      };
    });
    assert.deepEqual(phases.legend, ['time in the phase', 'self time: in the phase itself, not in nested phases']);
    assert.equal(phases.total, phases.barTotal);
    assert.equal(phases.self, phases.barSelf);
    assert.notEqual(phases.total, phases.self);
    assert.doesNotMatch(phases.text, /dark part|darker part/);
    await c.page.locator('#sec-phases .an-legend').scrollIntoViewIfNeeded();
    await shot(c.page, `fixes-phases-legend-${theme}`);
    assert.deepEqual(c.errors, []);
    await c.close();
  }
});
