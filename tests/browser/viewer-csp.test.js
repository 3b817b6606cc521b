// The reference viewer's Content-Security-Policy (index.html's, narrowed by viewer/boot.js to the
// origins `?bundle=` and `?compare=` name): run A on the viewer's origin compared with run B
// served by `tlparse-build serve --allow-origin` on another, which the page reads; a third origin
// it refuses, from the page as from a script slipped into it; and a `?bundle=` host that would add
// directives to the policy goes into no policy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, open, fixture, BIN, TIMEOUT } from './viewer-harness.js';
import { startServe } from './tlparse-process.js';

let env, runB;
before(async () => {
  env = await setup({ run_a: fixture('torch-2.15/two_runs/run_a'), run_b: fixture('torch-2.15/two_runs/run_b') });
  runB = await startServe(BIN, env.dir('run_b'), ['--allow-origin', new URL(env.server.url).origin]);
}, { timeout: 5 * 60_000 });
after(async () => { runB?.close(); await env?.close(); });

/** The page's policies, as its head holds them. */
const policies = (page) => page.evaluate(() => [...document.head.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')].map((m) => m.content));

/** From the page, as a script slipped into it would: fetch `url`; resolves to the violated directive, or 'fetched'. */
const tryFetch = (page, url) => page.evaluate(async (url) => {
  const violated = new Promise((resolve) => document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true }));
  try {
    await fetch(url);
    return 'fetched';
  } catch {
    return Promise.race([violated, new Promise((resolve) => setTimeout(() => resolve('failed without a violation'), 2000))]);
  }
}, url);

test('?compare= on another origin is read; a third origin is refused', { timeout: TIMEOUT }, async () => {
  const other = new URL(runB.url).origin;
  const url = env.url('run_a').replace(/index\.html$/, `index.html?bundle=../run_a/&compare=${encodeURIComponent(runB.url)}#/compare`);
  const { page, viewer, errors, close } = await open(env, url);
  try {
    assert.deepEqual(errors, []);
    assert.equal(viewer.state, 'ready', viewer.error);
    assert.equal(viewer.page, 'compare');
    assert.ok(viewer.data.compare, 'the comparison of the two runs is shown');
    const [page1, page2] = await policies(page);
    assert.match(page1, /^default-src 'self'; script-src 'self'; .*connect-src 'self' http: https:; object-src 'none'/);
    // ?bundle= is on this origin ('self'); ?compare= on the other.
    assert.equal(page2, `connect-src 'self' ${other}`);
    assert.equal(await tryFetch(page, `${runB.url}manifest.json`), 'fetched');
    assert.equal(await tryFetch(page, 'http://127.0.0.1:9/collect'), 'connect-src');
    assert.equal(await tryFetch(page, 'https://example.com/collect'), 'connect-src');
  } finally {
    await close();
  }
});

test('a ?bundle= host holding `;` adds nothing to the policy', { timeout: TIMEOUT }, async () => {
  const { page, close } = await open(env, `${env.url('run_a')}?bundle=${encodeURIComponent('http://a;script-src/')}`);
  try {
    assert.equal((await policies(page))[1], "connect-src 'self'");
  } finally {
    await close();
  }
});
