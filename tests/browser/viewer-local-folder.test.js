// Opening a bundle folder from this computer in the reference viewer, with no bundle server: the
// viewer alone (its shipped index.html and viewer/) is served, as on GitHub Pages; bundle folders
// are picked with setInputFiles on the folder input (webkitdirectory) or dropped. Checks what is
// shown against the fixture logs, and that nothing but the viewer's own files is ever fetched.
// Drops: a script-made DataTransfer carries Files but no directory entries, so the drop test
// carries a picked folder's Files (with their relative paths); walking a dropped directory
// (webkitGetAsEntry, readEntries batches) is tested on a fake entry tree in
// viewers/bundle-loader/test/local-files.test.js.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setup, serveViewerAlone, open, settle, go, shot, fixture, BIN, TIMEOUT } from './viewer-harness.js';

const HOSTILE_NAME = '<img src=x onerror=window.__pwned=1>';
let env;
let app; // the static server of the viewer alone
let picks; // folders to pick: parent/ (a bundle inside), two/ (two bundles), HOSTILE_NAME/

before(async () => {
  env = await setup({ graph_breaks: fixture('torch-2.15/graph_breaks'), hostile: fixture('hostile/hostile.log') });
  const shipped = env.dir('graph_breaks');
  app = await serveViewerAlone(env, 'graph_breaks');

  picks = path.join(env.tmp, 'pick');
  fs.cpSync(shipped, path.join(picks, 'parent/graph_breaks'), { recursive: true });
  fs.writeFileSync(path.join(picks, 'parent/notes.txt'), 'not part of the bundle');
  fs.cpSync(shipped, path.join(picks, 'two/a'), { recursive: true });
  fs.cpSync(shipped, path.join(picks, 'two/b'), { recursive: true });
  fs.cpSync(env.dir('hostile'), path.join(picks, HOSTILE_NAME), { recursive: true });
}, { timeout: 5 * 60_000 });
after(async () => { await app?.close(); await env?.close(); });

const APP = () => `${app.url}/app/`;

/** The viewer alone, no bundle next to it. The one expected error: the lite manifest's 404, logged by Chromium. */
async function openStartPage() {
  const opened = await open(env, APP());
  const manifest404 = (e) => /^console: Failed to load resource: .*404/.test(e);
  assert.deepEqual(opened.errors.filter((e) => !manifest404(e)), []);
  opened.errors.length = 0;
  return opened;
}

/** Picks `folder` in the folder input under `scope` and waits for the viewer to show the result. */
async function pick(page, scope, folder) {
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.setInputFiles(`${scope} input[type=file][webkitdirectory]`, folder);
  return settle(page, before);
}

/** Every request went to the viewer's own files on its own server (never a bundle file, never elsewhere). */
function assertOnlyViewerFiles(requests) {
  const strays = requests.filter((r) => !r.url.startsWith(`${APP()}`) || /\/(tables|blobs|index|stacks)\//.test(r.url));
  assert.deepEqual(strays, []);
  assert.deepEqual(app.requests.map((r) => r.path).filter((p) => !/^\/app\/(index\.html|manifest\.json|manifest\.lite\.json\.zst|viewer\/[\w./-]+\.(js|css))?$/.test(p)), []);
  assert.equal(env.server.requests.length, 0, 'the bundle server was never asked');
}

test('hosted without a bundle: the start page, then a picked parent folder opens the bundle inside it', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, requests, close } = await openStartPage();
  assert.equal(viewer.page, 'open-folder');
  assert.equal(await page.locator('.open-folder h1').innerText(), 'Open a bundle');
  assert.match(await page.locator('.open-folder').innerText(), /No bundle is served with this page \(.*manifest\.lite\.json\.zst: HTTP 404\)/);
  await shot(page, 'local-start');

  const opened = await pick(page, '.open-folder', path.join(picks, 'parent'));
  assert.equal(opened.state, 'ready', opened.error);
  assert.equal(opened.page, 'overview');
  assert.equal(opened.localFolder, 'graph_breaks');
  // graph_breaks (checked in the log): 27 compiles (frame, frame compile, attempt), 10 of them restarts, none failed.
  assert.deepEqual(opened.data.streams, [{ id: 'log0', failed: 0, restarts: 10 }]);
  assert.equal(await page.locator('header .local-badge').innerText(), 'local folder graph_breaks');
  assert.match(await page.title(), /^graph_breaks \(local\) · dedicated_log_torch_trace_vyoaitj6\.log/);
  assert.equal(new URL(page.url()).hash, '#/overview');
  await shot(page, 'local-opened');

  // Navigation inside the viewer reads the folder: the compile list, a compile, an artifact.
  const compiles = await go(page, '#/compiles');
  assert.equal(compiles.data.compiles.length, 27);
  assert.equal(compiles.data.compiles[0], '[0/0]');
  const compile = await go(page, '#/compile?s=log0&id=%5B1%2F0_1%5D');
  assert.equal(compile.state, 'ready', compile.error);
  assert.ok(compile.data.compile.artifacts.includes('inductor_output_code'));
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.locator('main a[href*="name=inductor_output_code"]').first().click();
  const artifact = await settle(page, before);
  assert.equal(artifact.page, 'artifact');
  const expected = execFileSync(BIN, ['cat', env.dir('graph_breaks'), '[1/0_1]', 'inductor_output_code'], { maxBuffer: 1 << 26 });
  assert.equal(artifact.data.artifact.size, expected.length);
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 15_000 }), page.click('.download-button')]);
  assert.equal(Buffer.compare(fs.readFileSync(await download.path()), expected), 0, 'downloaded bytes = tlparse-build cat');

  assertOnlyViewerFiles(requests);
  assert.deepEqual(errors, []);
  assert.equal(await page.evaluate(() => window.__pwned ?? null), null);
  await close();
});

test('a folder with two bundles is refused, saying so; picking one then opens it', { timeout: TIMEOUT }, async () => {
  const { page, requests, errors, close } = await openStartPage();
  const refused = await pick(page, '.open-folder', path.join(picks, 'two'));
  assert.equal(refused.state, 'error');
  assert.equal(refused.error, "2 bundles (folders with a manifest.json) among the files opened: two/a/, two/b/. Open one bundle's folder.");
  assert.equal(await page.locator('.error-box h2').innerText(), 'Could not open this folder as a bundle');
  await shot(page, 'local-error');
  const opened = await pick(page, '.open-folder', path.join(picks, 'two/b'));
  assert.equal(opened.localFolder, 'b');
  assert.deepEqual(opened.data.streams, [{ id: 'log0', failed: 0, restarts: 10 }]);
  assertOnlyViewerFiles(requests);
  assert.deepEqual(errors.filter((e) => !/^console: Error: 2 bundles/.test(e)), []);
  await close();
});

test('drop: the overlay while files are dragged over, then a drop of a folder\'s files opens it', { timeout: TIMEOUT }, async () => {
  const { page, requests, errors, close } = await openStartPage();
  // Files with their relative paths, as a real folder drop gives the loader: taken from a picked folder.
  await page.evaluate(() => {
    const source = Object.assign(document.createElement('input'), { type: 'file', id: 'test-source', webkitdirectory: true, hidden: true });
    document.body.append(source);
  });
  await page.setInputFiles('#test-source', path.join(picks, 'parent'));
  const dataTransfer = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    for (const f of document.getElementById('test-source').files) dt.items.add(f);
    return dt;
  });
  await page.dispatchEvent('body', 'dragenter', { dataTransfer });
  await page.dispatchEvent('body', 'dragover', { dataTransfer });
  assert.equal(await page.locator('.drop-overlay').isVisible(), true);
  await shot(page, 'local-drop-hover');
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.dispatchEvent('body', 'drop', { dataTransfer });
  const opened = await settle(page, before);
  assert.equal(opened.state, 'ready', opened.error);
  assert.equal(await page.locator('.drop-overlay').isVisible(), false);
  assert.equal(opened.localFolder, 'graph_breaks');
  assert.deepEqual(opened.data.streams, [{ id: 'log0', failed: 0, restarts: 10 }]);
  assertOnlyViewerFiles(requests);
  assert.deepEqual(errors, []);
  await close();
});

test('the header\'s "Open folder…" replaces a served bundle; a hostile folder name stays text', { timeout: TIMEOUT }, async () => {
  const { page, errors, requests, close } = await open(env, env.url('graph_breaks'));
  assert.deepEqual(errors, []);
  assert.equal(await page.locator('header .folder-picker').innerText(), 'Open folder…');
  const served = requests.length;
  const opened = await pick(page, 'header', path.join(picks, HOSTILE_NAME));
  assert.equal(opened.state, 'ready', opened.error);
  assert.equal(opened.localFolder, HOSTILE_NAME);
  assert.match(opened.manifest.inputs[0].path, /hostile\.log$/);
  assert.equal(await page.locator('header .local-badge').innerText(), `local folder ${HOSTILE_NAME}`);
  assert.equal(await page.locator('#app img, #app script, #app svg, #app iframe').count(), 0);
  const compiles = await go(page, '#/compiles');
  assert.ok(compiles.data.compiles.length > 0);
  assert.equal(await page.evaluate(() => window.__pwned ?? null), null);
  await shot(page, 'local-hostile-name');
  // After the switch, only viewer modules (page code) are fetched; no bundle file of either bundle.
  assert.deepEqual(requests.slice(served).filter((r) => !/\/viewer\/[\w./-]+\.js$/.test(r.url)), []);
  assert.deepEqual(errors, []);
  await close();
});
