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
import { decompress as unzstd } from 'fzstd';
import { chromium } from 'playwright-core';
import { startServer } from './server.js';
import { startProxy } from './proxy-process.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const BIN = process.env.TLPARSE_BUILD ?? path.join(REPO, 'target/release/tlparse-build');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const TIMEOUT = 120_000;
const TOKEN = 'proxy-browser-test-token-0123456789';

/** The pages' origins serve the loader, its npm modules and the test page; never the bundle. */
const MOUNTS = {
  '/loader/': path.join(REPO, 'viewers/bundle-loader/src'),
  '/node_modules/': path.join(HERE, 'node_modules'),
  '/': HERE,
};

let tmp, browser, bundleDir, expected, upstream, proxy, originA, originB;

/** What Node reads from the bundle directly: a table's value and a payload's text. */
function expectations(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const stream = manifest.streams[0];
  const tableName = Object.keys(stream.tables).sort()[0];
  const table = JSON.parse(Buffer.from(unzstd(fs.readFileSync(path.join(dir, stream.tables[tableName].path)))).toString());
  const rows = Buffer.from(unzstd(fs.readFileSync(path.join(dir, stream.index)))).toString().split('\n').filter(Boolean);
  const hash = rows.map((line) => JSON.parse(line)).find((row) => row.payload)?.payload.hash;
  assert.ok(hash, 'the fixture has a payload');
  const text = execFileSync(BIN, ['cat', dir, hash]).toString('utf8');
  return { streamId: stream.id, streams: manifest.streams.length, tableName, table: JSON.stringify(table), hash, text };
}

/** A page of `origin` (its test page loaded, so relative imports resolve there). */
async function pageOn(origin) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const console = [];
  page.on('console', (message) => console.push(message.text()));
  await page.goto(`${origin.url}/page.html`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 30_000 });
  return { page, console, close: () => context.close() };
}

/** In the page: opens the bundle with the shared loader (sending `token` if given) and reads the manifest, a table, a blob. */
function readBundle(page, bundleUrl, token) {
  return page.evaluate(async ({ bundleUrl, streamId, tableName, hash, token }) => {
    const { openBundle } = await import('/loader/bundle-loader.js');
    const fzstd = await import('/node_modules/fzstd/esm/index.mjs');
    const withToken = (url, init = {}) => fetch(url, { ...init, headers: { ...init.headers, Authorization: `Bearer ${token}` } });
    try {
      const bundle = await openBundle(bundleUrl, {
        zstdDecompress: (data) => fzstd.decompress(data),
        ...(token ? { fetch: withToken } : {}),
      });
      const table = JSON.stringify(await bundle.table(streamId, tableName));
      return { streams: bundle.manifest.streams.length, table, text: await bundle.text(hash) };
    } catch (e) {
      return { error: `${e.name}: ${e.message}` };
    }
  }, { bundleUrl, streamId: expected.streamId, tableName: expected.tableName, hash: expected.hash, token });
}

before(async () => {
  assert.ok(fs.existsSync(BIN), `${BIN} is missing: run \`cargo build --release\` (run.sh does)`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tlparse-proxy-'));
  bundleDir = path.join(tmp, 'bundle');
  execFileSync(BIN, [path.join(REPO, 'fixtures-repo/tlparse-tests/multi_rank_logs'), '-o', bundleDir, '-q'], { stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(BIN, ['validate', bundleDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  expected = expectations(bundleDir);
  fs.writeFileSync(path.join(tmp, 'token'), `${TOKEN}\n`);
  // The bucket: a plain static server with no CORS headers, holding the bundle at /bundles/job-1/.
  upstream = await startServer('plain', { '/bundles/job-1/': bundleDir });
  originA = await startServer('plain', MOUNTS);
  originB = await startServer('plain', MOUNTS);
  proxy = await startProxy(BIN, `${upstream.url}/bundles`, ['--allow-origin', originA.url, '--token-file', path.join(tmp, 'token')]);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
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
  const { page, console, close } = await pageOn(originA);
  try {
    const read = await readBundle(page, `${proxy.url}/job-1/`, TOKEN);
    assert.equal(read.error, undefined);
    assert.equal(read.streams, expected.streams);
    assert.ok(expected.streams >= 2, 'a multi-rank bundle');
    assert.equal(read.table, expected.table);
    assert.equal(read.text, expected.text);
    // The same page, without the token: the proxy answers 401, which the page may read.
    const untokened = await readBundle(page, `${proxy.url}/job-1/`);
    assert.match(untokened.error, /manifest\.json.*401/);
    const direct = await readBundle(page, `${upstream.url}/bundles/job-1/`);
    assert.match(direct.error, /manifest\.json: Failed to fetch/);
    assert.ok(console.some((line) => /blocked by CORS policy/.test(line)), console.join('\n'));
  } finally {
    await close();
  }
});

test('a page of another origin is refused by the browser, token or not', { timeout: TIMEOUT }, async () => {
  const { page, console, close } = await pageOn(originB);
  try {
    const read = await readBundle(page, `${proxy.url}/job-1/`, TOKEN);
    assert.equal(read.streams, undefined);
    assert.match(read.error, /manifest\.json: Failed to fetch/);
    assert.ok(console.some((line) => /blocked by CORS policy/.test(line)), console.join('\n'));
    const opaque = await page.evaluate(async (url) => {
      try {
        await fetch(url, { mode: 'no-cors' });
        return 'fetched';
      } catch (e) {
        return `${e.name}: ${e.message}`;
      }
    }, `${proxy.url}/job-1/manifest.json`);
    assert.match(opaque, /^TypeError: Failed to fetch/);
  } finally {
    await close();
  }
});
