// The reference viewer in front of a token-protected `tlparse-build proxy`: the viewer alone (its
// shipped index.html and viewer/) served from one origin, as on GitHub Pages; an upstream with
// no CORS at all (a bucket) holding the bundle; the proxy on another origin with
// `--allow-origin <viewer> --token-file`. `?bundle=<proxy>/job-1/` gets the token form; a wrong
// token is refused; the right one shows the overview (checked against the fixture); a reload of
// the tab still works. The token is never in the page's URL and never sent to another origin
// than the proxy's (every request is recorded with its headers).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, serveViewerAlone, open, settle, shot, fixture, BIN, TIMEOUT } from './viewer-harness.js';
import { startServer } from './server.js';
import { startProxy } from './tlparse-process.js';

const TOKEN = 'viewer-proxy-token-0123456789abcdef';
let env, app, upstream, proxy;

before(async () => {
  env = await setup({ graph_breaks: fixture('torch-2.15/graph_breaks') });
  const shipped = env.dir('graph_breaks');
  app = await serveViewerAlone(env, 'graph_breaks');
  upstream = await startServer('plain', { '/bundles/job-1/': shipped });
  fs.writeFileSync(path.join(env.tmp, 'token'), `${TOKEN}\n`);
  proxy = await startProxy(BIN, `${upstream.url}/bundles`, ['--allow-origin', app.url, '--token-file', path.join(env.tmp, 'token')]);
}, { timeout: 5 * 60_000 });
after(async () => { proxy?.close(); await upstream?.close(); await app?.close(); await env?.close(); });

const bundle = () => `${proxy.url}/job-1/`;
const viewerUrl = () => `${app.url}/app/?bundle=${encodeURIComponent(bundle())}`;

/** Types `token` in the form and waits for what the viewer shows next. */
async function submit(page, token) {
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.fill('.token-form input[type=password]', token);
  await page.click('.token-form button[type=submit]');
  return settle(page, before);
}

test('a token-protected proxy: the form, a refused token, the right token, a reload', { timeout: TIMEOUT }, async () => {
  const { page, viewer, errors, close } = await open(env, viewerUrl());
  const sent = []; // every request the page made, with its Authorization header
  page.context().on('request', async (r) => sent.push({ url: r.url(), auth: (await r.allHeaders()).authorization ?? null }));
  try {
    const origin = new URL(bundle()).origin;
    // Chromium logs the 401 of manifest.json: the one expected error.
    const expected401 = (e) => /^console: Failed to load resource: .*401/.test(e);
    assert.deepEqual(errors.filter((e) => !expected401(e)), []);
    errors.length = 0;

    assert.equal(viewer.state, 'ready');
    assert.equal(viewer.page, 'token');
    const form = page.locator('.token-form');
    assert.equal(await form.locator('h2').innerText(), 'This bundle server needs a token');
    assert.match(await form.innerText(), new RegExp(`sent only to ${origin.replace(/[.]/g, '\\.')}, as an Authorization header`));
    assert.equal(await form.locator('input').getAttribute('type'), 'password');
    assert.equal(await form.locator('.token-refused').count(), 0);
    await shot(page, 'token-form');

    // A wrong token: refused, the form again, nothing kept.
    const refused = await submit(page, 'not-the-token');
    assert.equal(refused.page, 'token-refused');
    assert.match(await page.locator('.token-form .token-refused').innerText(), /The server refused this token/);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    await shot(page, 'token-refused');

    // The right token: the overview of the bundle behind the proxy.
    const opened = await submit(page, TOKEN);
    assert.equal(opened.state, 'ready', opened.error);
    assert.equal(opened.page, 'overview');
    // graph_breaks (checked in the log): 27 compiles (frame, frame compile, attempt), 10 of them restarts, none failed.
    assert.deepEqual(opened.data.streams, [{ id: 'log0', failed: 0, restarts: 10 }]);
    assert.equal(new URL(page.url()).searchParams.get('bundle'), bundle());
    assert.ok(!page.url().includes(TOKEN), 'the token is not in the URL');
    assert.deepEqual(await page.evaluate(() => Object.keys(sessionStorage)), [`tlparse-token ${origin}`]);
    await shot(page, 'token-opened');

    // A reload of the tab: the stored token opens the bundle without the form.
    await page.reload();
    const reloaded = await settle(page);
    assert.equal(reloaded.page, 'overview', reloaded.error);
    assert.deepEqual(reloaded.data.streams, [{ id: 'log0', failed: 0, restarts: 10 }]);
    assert.ok(!page.url().includes(TOKEN), "the token is not in the URL after a reload");

    // Another tab (a new browser context): no token, the form.
    const other = await open(env, viewerUrl());
    assert.equal(other.viewer.page, 'token');
    await other.close();

    assert.deepEqual(errors.filter((e) => !expected401(e)), []);
    // The token went to the proxy only: every request to the proxy after the right token carried
    // it, none to the viewer's origin or anywhere else did.
    const toProxy = sent.filter((r) => new URL(r.url).origin === origin);
    const elsewhere = sent.filter((r) => new URL(r.url).origin !== origin);
    assert.ok(toProxy.some((r) => r.auth === `Bearer ${TOKEN}`) && toProxy.some((r) => /\/tables\//.test(r.url)));
    assert.ok(elsewhere.length > 0 && elsewhere.some((r) => r.url.startsWith(`${app.url}/app/viewer/`)), 'the reload fetched the viewer');
    assert.deepEqual(elsewhere.filter((r) => r.auth !== null), []);
    assert.ok(sent.every((r) => !r.url.includes(TOKEN)));
    assert.equal(env.server.requests.length, 0, 'the bundle server of setup() was never asked');
  } finally {
    await close();
  }
});
