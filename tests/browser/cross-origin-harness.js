// What the two-origin browser tests share (cross-origin.test.js, proxy-cross-origin.test.js):
// the pages' origins, what Node reads from a bundle directly, a page on an origin, and a read of
// the bundle from that page with the shared loader.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decompress as unzstd } from 'fzstd';
import { tableOnDisk } from './table-files.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');

/** The pages' origins serve the loader, its npm modules and the test page; never the bundle. */
export const MOUNTS = {
  '/loader/': path.join(REPO, 'viewers/bundle-loader/src'),
  '/node_modules/': path.join(HERE, 'node_modules'),
  '/': HERE,
};

/** What Node reads from the bundle at `dir` directly (with `bin cat`): a table's value and a payload's text. */
export function expectations(bin, dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const stream = manifest.streams[0];
  const tableName = Object.keys(stream.tables).sort()[0];
  const table = tableOnDisk(dir, stream.tables[tableName]);
  const rows = Buffer.from(unzstd(fs.readFileSync(path.join(dir, stream.index)))).toString().split('\n').filter(Boolean);
  const hash = rows.map((line) => JSON.parse(line)).find((row) => row.payload)?.payload.hash;
  assert.ok(hash, 'the fixture has a payload');
  const text = execFileSync(bin, ['cat', dir, hash]).toString('utf8');
  return { streamId: stream.id, streams: manifest.streams.length, tableName, table: JSON.stringify(table), hash, text };
}

/** A page of `origin` in `browser` (its test page loaded, so relative imports resolve there). */
export async function pageOn(browser, origin) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const console = [];
  page.on('console', (message) => console.push(message.text()));
  await page.goto(`${origin.url}/page.html`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 30_000 });
  return { page, console, close: () => context.close() };
}

/**
 * In the page: opens the bundle at `bundleUrl` with the shared loader (sending `token` as a
 * bearer token if given) and reads the manifest, the table and the blob `expected` names.
 * Resolves to {streams, table, text}, or {error}.
 */
export function readBundle(page, bundleUrl, expected, token) {
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

/** In the page: a `no-cors` fetch of `url` (as `<script src>` or `<img>` load): 'fetched' or the error. */
export function fetchNoCors(page, url) {
  return page.evaluate(async (url) => {
    try {
      await fetch(url, { mode: 'no-cors' });
      return 'fetched';
    } catch (e) {
      return `${e.name}: ${e.message}`;
    }
  }, url);
}
