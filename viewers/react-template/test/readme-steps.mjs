// readme-steps.mjs (`npm run test:readme`): follows README.md's steps from a fresh copy, as
// someone forking the template would: copies viewers/react-template and viewers/bundle-loader side
// by side into a temporary folder, then there runs `npm install`, `npm run build` (with the
// README's TypeScript examples added to src/, so they must compile), `npm test` (vitest),
// `npm run test:browser` (the built app in Chromium), and `npm run dev` (briefly, on 127.0.0.1:
// the dev server must serve the app, and the app must open a bundle put under public/).
// Every step is bounded in time; the dev server is stopped at the end. Plain Node, no dependency.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TEMPLATE = path.resolve(HERE, '..');
const REPO = path.resolve(process.env.TLPARSE_REPO ?? path.join(TEMPLATE, '../..'));
const BIN = path.resolve(process.env.TLPARSE_BUILD ?? path.join(REPO, 'target/release/tlparse-build'));
const NOT_COPIED = new Set(['node_modules', 'dist', 'test-results']);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'react-template-readme-'));
const fork = path.join(tmp, 'viewers/react-template');
// The copy finds the repository's fixtures, test server and tlparse-build through these.
const env = { ...process.env, TLPARSE_REPO: REPO, TLPARSE_BUILD: BIN, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' };

function step(title, command, args, timeoutSeconds) {
  const started = Date.now();
  console.log(`readme-steps: ${title}: ${command} ${args.join(' ')}`);
  execFileSync(command, args, { cwd: fork, env, stdio: 'inherit', timeout: timeoutSeconds * 1000 });
  console.log(`readme-steps: ${title}: ok (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

/** A TCP port free right now on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => { const { port } = server.address(); server.close(() => resolve(port)); });
  });
}

/** GETs `url` until it answers 200 or `seconds` pass. */
async function waitForOk(url, seconds) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.ok) return await response.text();
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${seconds} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `npm run dev` on a free port; the app must load and open a bundle served from public/. */
async function checkDevServer() {
  // A bundle in public/ is served by the dev server itself (same origin, no CORS needed).
  execFileSync(BIN, [path.join(REPO, 'fixtures-repo/torch-2.15/graph_breaks'), '-o',
    path.join(fork, 'public/bundles/graph_breaks'), '-q', '--no-viewer'], { stdio: 'inherit', timeout: 60_000 });
  const port = await freePort();
  console.log(`readme-steps: dev server: npm run dev -- --host 127.0.0.1 --port ${port} --strictPort`);
  const dev = spawn('npm', ['run', 'dev', '--', '--host', '127.0.0.1', '--port', String(port), '--strictPort'],
    { cwd: fork, env, stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  const stopDev = () => { try { process.kill(-dev.pid, 'SIGTERM'); } catch { /* already gone */ } };
  try {
    const base = `http://127.0.0.1:${port}/`;
    const html = await waitForOk(base, 30);
    if (!html.includes('<div id="root">')) throw new Error(`the dev server's page is not the app:\n${html}`);
    await waitForOk(`${base}src/main.tsx`, 10);
    const { chromium } = await import(pathToFileURL(path.join(fork, 'node_modules/playwright-core/index.mjs')).href);
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      timeout: 30_000,
    });
    try {
      const page = await browser.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      await page.goto(`${base}?bundle=bundles/graph_breaks/`, { timeout: 30_000 });
      const compiles = await page.locator('[data-stat="compiles"] .stat-value').textContent({ timeout: 30_000 });
      if (compiles !== '27') throw new Error(`dev server: the overview shows ${compiles} compiles, not 27`);
      if (errors.length) throw new Error(`dev server: errors in the page:\n${errors.join('\n')}`);
    } finally {
      await browser.close();
    }
    console.log('readme-steps: dev server: ok (served the app, which opened a bundle)');
  } finally {
    stopDev();
  }
}

try {
  for (const folder of ['react-template', 'bundle-loader']) {
    fs.cpSync(path.join(TEMPLATE, '..', folder), path.join(tmp, 'viewers', folder), {
      recursive: true, filter: (src) => !NOT_COPIED.has(path.basename(src)),
    });
  }
  const lock = fs.readFileSync(path.join(fork, 'package-lock.json'), 'utf8');
  step('install', 'npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], 240);
  if (fs.readFileSync(path.join(fork, 'package-lock.json'), 'utf8') !== lock) {
    throw new Error('npm install changed package-lock.json: commit the lock that matches package.json');
  }
  // The README's TypeScript examples ("Add a page") must compile: `npm run build` type-checks src/.
  const examples = [...fs.readFileSync(path.join(fork, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)];
  if (examples.length === 0) throw new Error('README.md has no ```ts example any more: update readme-steps.mjs');
  fs.writeFileSync(path.join(fork, 'src/readme-examples.ts'), examples.map((m) => m[1].replace(/^ {3}/gm, '')).join('\n'));
  step('build', 'npm', ['run', 'build'], 120);
  if (!fs.readFileSync(path.join(fork, 'dist/index.html'), 'utf8').includes('src="./assets/')) {
    throw new Error('dist/index.html does not load its assets by relative URL (vite.config.ts: base: \'./\')');
  }
  step('unit tests', 'npm', ['test'], 180);
  step('browser tests', 'npm', ['run', 'test:browser'], 240);
  await checkDevServer();
  console.log(`readme-steps: all steps passed in ${tmp}`);
} finally {
  if (!process.env.KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
}
