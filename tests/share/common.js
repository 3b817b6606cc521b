// Shared by the share tests: the binary, fixture bundles, Chromium, and running `publish`.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// playwright-core is installed for tests/browser; these tests borrow it and its harness.
import { chromium } from '../browser/node_modules/playwright-core/index.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '../..');
export const BIN = process.env.TLPARSE_BUILD ?? path.join(REPO, 'target/debug/tlparse-build');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
/** Every child process is killed past this: a test fails rather than hangs. */
export const CHILD_TIMEOUT = 120_000;

export function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'tlparse-share-'));
}

/** Builds the fixture under fixtures-repo/ into `out`, checks it validates, returns its manifest. */
export function buildBundle(fixture, out) {
  execFileSync(BIN, [path.join(REPO, 'fixtures-repo', fixture), '-o', out, '--overwrite', '-q'],
    { stdio: ['ignore', 'ignore', 'inherit'], timeout: CHILD_TIMEOUT });
  validate(out);
  return JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
}

/** `tlparse-build validate DIR` must pass. */
export function validate(dir) {
  const r = spawnSync(BIN, ['validate', dir], { encoding: 'utf8', timeout: CHILD_TIMEOUT });
  assert.equal(r.status, 0, `${dir} does not validate:\n${r.stdout}${r.stderr}`);
}

/** Every file a publish of this manifest writes: the format's files, the viewer's, the manifest. */
export function publishedPaths(manifest) {
  return [...manifest.files.map((f) => f.path), ...(manifest.viewer ?? []).map((f) => f.path), 'manifest.json'];
}

/** Runs `tlparse-build publish ARGS...` to completion. */
export function publish(args, env = {}) {
  const r = spawnSync(BIN, ['publish', ...args], { encoding: 'utf8', timeout: CHILD_TIMEOUT, env: { ...process.env, ...env } });
  assert.equal(r.error, undefined, `publish ${args.join(' ')}: ${r.error}`);
  return r;
}

/**
 * Runs `publish ARGS... --jobs 1 -v` and SIGKILLs it as soon as it reports its first uploaded file.
 * Resolves to {signal, stderr, first} (the path of that file).
 */
export function publishKilledAfterFirstUpload(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, ['publish', ...args, '--jobs', '1', '-v'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let first = null;
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no upload reported:\n${stderr}`)); }, CHILD_TIMEOUT);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /^uploaded (\S+)$/m.exec(stderr);
      if (m && first === null) {
        first = m[1];
        child.kill('SIGKILL');
      }
    });
    child.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stderr, first }); });
  });
}

/** SHA-256 of a blob as `tlparse-build cat` prints it. */
export function catSha256(bundle, hash) {
  const bytes = execFileSync(BIN, ['cat', bundle, hash], { maxBuffer: 1 << 30, timeout: CHILD_TIMEOUT });
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

export async function launchChromium() {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium (run.sh does)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Reads every blob the streams' indexes name through the open viewer's own loader and returns
 * {hash: SHA-256 of its bytes}, hashed in the page (crypto.subtle).
 */
export function blobDigestsInPage(page) {
  return page.evaluate(async () => {
    const { bundle, manifest } = window.__viewer;
    const hashes = new Set();
    for (const s of manifest.streams) {
      for await (const row of bundle.indexRows(s.id)) if (row.payload) hashes.add(row.payload.hash);
    }
    const out = {};
    for (const h of hashes) {
      const digest = await crypto.subtle.digest('SHA-256', await bundle.blob(h));
      out[h] = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
    }
    return out;
  });
}

/** The content type a published file must have: a browser runs only the viewer's files. */
export function expectedType(filePath, isViewer) {
  const ext = filePath.split('.').pop();
  const types = {
    json: 'application/json', jsonl: 'application/jsonl', zst: 'application/zstd', gz: 'application/gzip',
    html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', mjs: 'text/javascript; charset=utf-8',
    css: 'text/css; charset=utf-8',
  };
  const type = types[ext] ?? 'application/octet-stream';
  return !isViewer && /^text\/(html|javascript)/.test(type) ? 'text/plain; charset=utf-8' : type;
}
