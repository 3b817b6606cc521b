// Two origins in headless Chromium: a page on origin A (allowed) reads a bundle that
// `tlparse-build serve BUNDLE --allow-origin A` serves on a third loopback port, with the shared
// loader; the same page on origin B (not allowed) is refused by the browser. The same cases run
// against `tlparse-build proxy --allow-origin A` in front of a static host that sends no CORS.
//
// To add another way of sharing (e.g. `tlparse-build proxy`), start it in a `before` and call
// `crossOriginCases(() => bundleUrl)` inside a new `describe`.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.js';
import { MOUNTS, expectations, fetchNoCors, pageOn, readBundle } from './cross-origin-harness.js';
import { startServer } from './server.js';
import { startProxy, startServe } from './tlparse-process.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const BIN = process.env.TLPARSE_BUILD ?? path.join(REPO, 'target/release/tlparse-build');
const TIMEOUT = 120_000;

function fixture(sub) {
  const local = path.join(REPO, 'fixtures-repo', sub);
  return fs.existsSync(local) ? local : path.join('/work/shared/fixtures', sub);
}

let tmp, browser, bundleDir, expected, originA, originB;

/** The cases every way of sharing a bundle must pass; `bundleUrl()` is where it is shared. */
export function crossOriginCases(bundleUrl) {
  test('a page of the allowed origin reads the manifest, a table and a blob', { timeout: TIMEOUT }, async () => {
    const { page, close } = await pageOn(browser, originA);
    try {
      const read = await readBundle(page, bundleUrl(), expected);
      assert.equal(read.error, undefined);
      assert.equal(read.streams, expected.streams);
      assert.equal(read.table, expected.table);
      assert.equal(read.text, expected.text);
    } finally {
      await close();
    }
  });

  test('a page of another origin is refused by the browser', { timeout: TIMEOUT }, async () => {
    const { page, console, close } = await pageOn(browser, originB);
    try {
      const read = await readBundle(page, bundleUrl(), expected);
      assert.equal(read.streams, undefined);
      assert.match(read.error, /manifest\.lite\.json\.zst: Failed to fetch \(network error/);
      assert.ok(console.some((line) => /blocked by CORS policy/.test(line)), console.join('\n'));
      // Without CORS (`no-cors`, as `<script src>` or `<img>` load) the answer is still withheld:
      // Cross-Origin-Resource-Policy makes the browser drop it.
      const opaque = await fetchNoCors(page, new URL('manifest.json', bundleUrl()).href);
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
  expected = expectations(BIN, bundleDir);
  originA = await startServer('plain', MOUNTS);
  originB = await startServer('plain', MOUNTS);
  browser = await launchChromium();
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
    served = await startServe(BIN, bundleDir, ['--allow-origin', originA.url]);
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
