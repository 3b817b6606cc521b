// Two origins in headless Chromium: a page on origin A (allowed) reads a bundle that
// `tlparse-build serve BUNDLE --allow-origin A` serves on a third loopback port, with the shared
// loader; the same page on origin B (not allowed) is refused by the browser. The same cases run
// against `tlparse-build proxy --allow-origin A` in front of a static host that sends no CORS.
//
// To add another way of sharing (e.g. `tlparse-build proxy`), start it in a `before` and call
// `crossOriginCases(() => bundleUrl)` inside a new `describe`.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
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

function fixture(sub) {
  const local = path.join(REPO, 'fixtures-repo', sub);
  return fs.existsSync(local) ? local : path.join('/work/shared/fixtures', sub);
}

/** The pages' origins serve the loader, its npm modules and the test page; never the bundle. */
const MOUNTS = {
  '/loader/': path.join(REPO, 'viewers/bundle-loader/src'),
  '/node_modules/': path.join(HERE, 'node_modules'),
  '/': HERE,
};

let tmp, browser, bundleDir, expected, originA, originB;

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

/**
 * Runs `tlparse-build serve DIR --port 0 ...args`; resolves to {url, stdout, close()} once it
 * prints the URL it serves.
 */
export function startServe(dir, args) {
  const child = spawn(BIN, ['serve', dir, '--port', '0', '--no-open', ...args], {
    env: { ...process.env, TLPARSE_NO_BROWSER: '1' }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`serve printed no URL: ${lines.join('\n')}`)); }, 60_000);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`serve exited (${code}): ${lines.join('\n')}`)); });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const served = /^Serving .* at (http:\/\/\S+) \(Ctrl-C to stop\)$/.exec(line);
      if (!served) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ url: served[1], stdout: lines.join('\n'), close: () => child.kill() });
    });
  });
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

/** In the page: opens the bundle with the shared loader and reads the manifest, a table, a blob. */
function readBundle(page, bundleUrl) {
  return page.evaluate(async ({ bundleUrl, streamId, tableName, hash }) => {
    const { openBundle } = await import('/loader/bundle-loader.js');
    const fzstd = await import('/node_modules/fzstd/esm/index.mjs');
    try {
      const bundle = await openBundle(bundleUrl, { zstdDecompress: (data) => fzstd.decompress(data) });
      const table = JSON.stringify(await bundle.table(streamId, tableName));
      return { streams: bundle.manifest.streams.length, table, text: await bundle.text(hash) };
    } catch (e) {
      return { error: `${e.name}: ${e.message}` };
    }
  }, { bundleUrl, streamId: expected.streamId, tableName: expected.tableName, hash: expected.hash });
}

/** The cases every way of sharing a bundle must pass; `bundleUrl()` is where it is shared. */
export function crossOriginCases(bundleUrl) {
  test('a page of the allowed origin reads the manifest, a table and a blob', { timeout: TIMEOUT }, async () => {
    const { page, close } = await pageOn(originA);
    try {
      const read = await readBundle(page, bundleUrl());
      assert.equal(read.error, undefined);
      assert.equal(read.streams, expected.streams);
      assert.equal(read.table, expected.table);
      assert.equal(read.text, expected.text);
    } finally {
      await close();
    }
  });

  test('a page of another origin is refused by the browser', { timeout: TIMEOUT }, async () => {
    const { page, console, close } = await pageOn(originB);
    try {
      const read = await readBundle(page, bundleUrl());
      assert.equal(read.streams, undefined);
      assert.match(read.error, /manifest\.json: Failed to fetch \(network error/);
      assert.ok(console.some((line) => /blocked by CORS policy/.test(line)), console.join('\n'));
      // Without CORS (`no-cors`, as `<script src>` or `<img>` load) the answer is still withheld:
      // Cross-Origin-Resource-Policy makes the browser drop it.
      const opaque = await page.evaluate(async (url) => {
        try {
          await fetch(new URL('manifest.json', url), { mode: 'no-cors' });
          return 'fetched';
        } catch (e) {
          return `${e.name}: ${e.message}`;
        }
      }, bundleUrl());
      assert.match(opaque, /^TypeError: Failed to fetch/);
    } finally {
      await close();
    }
  });
}

before(async () => {
  assert.ok(fs.existsSync(BIN), `${BIN} is missing: run \`cargo build --release\` (run.sh does)`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tlparse-cross-origin-'));
  bundleDir = path.join(tmp, 'bundle');
  execFileSync(BIN, [fixture('tlparse-tests/simple.log'), '-o', bundleDir, '-q'], { stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(BIN, ['validate', bundleDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  expected = expectations(bundleDir);
  originA = await startServer('plain', MOUNTS);
  originB = await startServer('plain', MOUNTS);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  await originA?.close();
  await originB?.close();
  if (tmp && !process.env.KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('tlparse-build serve --allow-origin', () => {
  let served;
  before(async () => {
    served = await startServe(bundleDir, ['--allow-origin', originA.url]);
    assert.match(served.stdout, new RegExp(`Pages of ${originA.url} may read this bundle: give a hosted viewer the bundle URL ${served.url}`));
  });
  after(() => served?.close());
  crossOriginCases(() => served.url);
});

describe('tlparse-build proxy --allow-origin, in front of a host without CORS', () => {
  let upstream, proxy;
  before(async () => {
    upstream = await startServer('plain', { '/bundles/job-1/': bundleDir });
    proxy = await startProxy(BIN, `${upstream.url}/bundles`, ['--allow-origin', originA.url]);
  });
  after(async () => {
    proxy?.close();
    await upstream?.close();
  });
  crossOriginCases(() => `${proxy.url}/job-1/`);
});
