// `tlparse-build proxy` in headless Chromium, with three loopback origins: an upstream that
// serves a bundle with no CORS at all (as a bucket without a CORS rule), the proxy in front of
// it with `--allow-origin A`, and pages on A (allowed) and B (not). A page on A reads the bundle
// through the proxy with the shared loader (a token sent through the loader's `fetch` option);
// it cannot read the upstream directly; a page on B is refused by the browser.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.js';
import { MOUNTS, expectations, fetchNoCors, pageOn, readBundle } from './cross-origin-harness.js';
import { startServer } from './server.js';
import { startProxy } from './tlparse-process.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const BIN = process.env.TLPARSE_BUILD ?? path.join(REPO, 'target/release/tlparse-build');
const TIMEOUT = 120_000;
const TOKEN = 'proxy-browser-test-token-0123456789';

let tmp, browser, bundleDir, expected, upstream, proxy, originA, originB;

before(async () => {
  assert.ok(fs.existsSync(BIN), `${BIN} is missing: run \`cargo build --release\` (run.sh does)`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tlparse-proxy-'));
  bundleDir = path.join(tmp, 'bundle');
  execFileSync(BIN, [path.join(REPO, 'fixtures-repo/tlparse-tests/multi_rank_logs'), '-o', bundleDir, '-q'], { stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(BIN, ['validate', bundleDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  expected = expectations(BIN, bundleDir);
  fs.writeFileSync(path.join(tmp, 'token'), `${TOKEN}\n`);
  // The bucket: a plain static server with no CORS headers, holding the bundle at /bundles/job-1/.
  upstream = await startServer('plain', { '/bundles/job-1/': bundleDir });
  originA = await startServer('plain', MOUNTS);
  originB = await startServer('plain', MOUNTS);
  proxy = await startProxy(BIN, `${upstream.url}/bundles`, ['--allow-origin', originA.url, '--token-file', path.join(tmp, 'token')]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  proxy?.close();
  await upstream?.close();
  await originA?.close();
  await originB?.close();
  if (tmp && !process.env.KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
});

test('a page of the allowed origin reads the bundle through the proxy, and not the upstream directly', { timeout: TIMEOUT }, async () => {
  const { page, console, close } = await pageOn(browser, originA);
  try {
    const read = await readBundle(page, `${proxy.url}/job-1/`, expected, TOKEN);
    assert.equal(read.error, undefined);
    assert.equal(read.streams, expected.streams);
    assert.ok(expected.streams >= 2, 'a multi-rank bundle');
    assert.equal(read.table, expected.table);
    assert.equal(read.text, expected.text);
    // The same page, without the token: the proxy answers 401, which the page may read.
    const untokened = await readBundle(page, `${proxy.url}/job-1/`, expected);
    assert.match(untokened.error, /manifest\.lite\.json\.zst.*401/);
    const direct = await readBundle(page, `${upstream.url}/bundles/job-1/`, expected);
    assert.match(direct.error, /manifest\.lite\.json\.zst: Failed to fetch/);
    assert.ok(console.some((line) => /blocked by CORS policy/.test(line)), console.join('\n'));
  } finally {
    await close();
  }
});

test('a page of another origin is refused by the browser, token or not', { timeout: TIMEOUT }, async () => {
  const { page, console, close } = await pageOn(browser, originB);
  try {
    const read = await readBundle(page, `${proxy.url}/job-1/`, expected, TOKEN);
    assert.equal(read.streams, undefined);
    assert.match(read.error, /manifest\.lite\.json\.zst: Failed to fetch/);
    assert.ok(console.some((line) => /blocked by CORS policy/.test(line)), console.join('\n'));
    const opaque = await fetchNoCors(page, `${proxy.url}/job-1/manifest.json`);
    assert.match(opaque, /^TypeError: Failed to fetch/);
  } finally {
    await close();
  }
});
