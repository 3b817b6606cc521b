// Shared setup for the viewer's real-browser tests: builds fixture bundles with the release
// tlparse-build (each with the viewer it ships), serves them, drives Debian's Chromium through
// playwright-core, and saves screenshots to tests/browser/screenshots/ for people to look at.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from './server.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '../..');
export const BIN = process.env.TLPARSE_BUILD ?? path.join(REPO, 'target/release/tlparse-build');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const SHOTS = path.join(HERE, 'screenshots');
export const TIMEOUT = 120_000;

/** A fixture path under fixtures-repo/. */
export function fixture(sub) {
  return path.join(REPO, 'fixtures-repo', sub);
}

/**
 * Builds bundles and serves them. `inputs`: {name: fixture path, a function(tmpDir) → path, or
 * {input: path, args: [extra tlparse-build arguments]}}.
 * Returns {url(name, hash), dir(name), browser, server, close()}; bundles are at /b/<name>/.
 */
export async function setup(inputs, { mode = 'plain' } = {}) {
  assert.ok(fs.existsSync(BIN), `${BIN} is missing: run \`cargo build --release\` (run.sh does)`);
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium (run.sh does)`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tlparse-viewer-'));
  const dirs = {};
  for (const [name, src] of Object.entries(inputs)) {
    const { input, args = [] } = typeof src === 'object' ? src : { input: typeof src === 'function' ? src(tmp) : src };
    const out = path.join(tmp, 'b', name);
    execFileSync(BIN, [input, '-o', out, '--overwrite', '-q', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    assert.ok(fs.existsSync(path.join(out, 'index.html')), `${name}: the bundle ships no viewer`);
    // While editing the viewer: VIEWER_FROM_REPO=1 overlays viewers/reference-html/ (and the loader) on the shipped
    // copy, so JS/CSS changes need no rebuild of the binary. CI never sets it.
    if (process.env.VIEWER_FROM_REPO) {
      fs.cpSync(path.join(REPO, 'viewers/reference-html'), out, { recursive: true });
      fs.cpSync(path.join(REPO, 'viewers/bundle-loader/src/bundle-loader.js'), path.join(out, 'viewer/bundle-loader.js'));
    }
    dirs[name] = out;
  }
  const server = await startServer(mode, { '/b/': path.join(tmp, 'b') });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  fs.mkdirSync(SHOTS, { recursive: true });
  return {
    tmp, server, browser,
    dir: (name) => dirs[name],
    url: (name, hash = '') => `${server.url}/b/${name}/index.html${hash}`,
    async close() {
      await browser.close();
      await server.close();
      if (!process.env.KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * Serves the viewer that the bundle `name` of `env` ships, alone (no bundle beside it), at
 * `SERVER.url/app/`: a hosted viewer. Returns the server ({url, close()}).
 */
export async function serveViewerAlone(env, name) {
  const shipped = env.dir(name);
  const appDir = path.join(env.tmp, 'app');
  fs.mkdirSync(appDir);
  fs.cpSync(path.join(shipped, 'index.html'), path.join(appDir, 'index.html'));
  fs.cpSync(path.join(shipped, 'viewer'), path.join(appDir, 'viewer'), { recursive: true });
  return startServer('plain', { '/app/': appDir });
}

/**
 * Opens a viewer URL in a fresh context and waits until its page is rendered. Returns
 * {page, viewer (window.__viewer without the bundle object), errors, requests, close()}.
 * `errors` collects console errors, page errors and failed requests; tests assert it is empty.
 */
export async function open(env, url, { theme = 'light', width = 1280, height = 860 } = {}) {
  const context = await env.browser.newContext({ viewport: { width, height }, colorScheme: theme });
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`));
  page.on('requestfailed', (r) => {
    // The loader cancels a pack's download once the blob it wants is decoded: that is by design.
    if (/\/blobs\/packs\/[0-9a-f]+\.zst$/.test(r.url()) && r.failure()?.errorText === 'net::ERR_ABORTED') return;
    errors.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', async (r) => {
    const body = await r.body().catch(() => null);
    requests.push({ url: r.url(), status: r.status(), bytes: body?.length ?? 0 });
  });
  await page.goto(url);
  await settle(page);
  return { page, errors, requests, viewer: await state(page), close: () => context.close() };
}

/** Waits until the viewer has rendered a page and is not loading. */
export async function settle(page, after = 0) {
  await page.waitForFunction((n) => window.__viewer && window.__viewer.renders > n && window.__viewer.state !== 'loading',
    after, { timeout: 60_000 });
  return state(page);
}

/** Navigates within the viewer (hash change) and waits for the new page. */
export async function go(page, hash) {
  const before = await page.evaluate(() => window.__viewer.renders);
  await page.evaluate((h) => { location.hash = h; }, hash);
  return settle(page, before);
}

/** window.__viewer as plain data. */
export function state(page) {
  return page.evaluate(() => {
    const { bundle, ...rest } = window.__viewer;
    return JSON.parse(JSON.stringify(rest));
  });
}

/** Saves a full-page screenshot as screenshots/<name>.png. */
export async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Linux: each Chromium renderer's main thread (its pid) → {cpu, wait} ns from /proc: the CPU
 * time it ran, and the time it was ready to run but waited for a CPU (run-queue delay). */
function renderersSchedstat() {
  const out = new Map();
  if (process.platform !== 'linux') return out;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!fs.readFileSync(`/proc/${d}/cmdline`, 'latin1').includes('--type=renderer')) continue;
      const [cpu, wait] = fs.readFileSync(`/proc/${d}/task/${d}/schedstat`, 'latin1').trim().split(' ').map(Number);
      out.set(Number(d), { cpu, wait });
    } catch { /* gone meanwhile, or not readable */ }
  }
  return out;
}

/**
 * Runs `run()` while Chrome traces the page's renderer main thread (category `toplevel`), and
 * returns {result, tasks, spanMs, cores, machineBusy, waitMs}: `tasks` are the thread's top-level
 * tasks in that time, each {wallMs, cpuMs (null when the trace has no thread time), src (the
 * function that posted it)}; `machineBusy` is the share of the machine's CPU time (all cores,
 * every process) that was busy meanwhile; `waitMs` (Linux, else null) is how long the thread was
 * ready to run but waited for a CPU. A task's wall time includes such waits; its CPU time does
 * not: a long task of little CPU time is one the thread spent off the CPU.
 */
export async function traceMainThread(page, run) {
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => { for (const x of e.value) events.push(x); });
  const complete = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', {
    transferMode: 'ReportEvents',
    traceConfig: { recordMode: 'recordAsMuchAsPossible', includedCategories: ['toplevel', 'blink.user_timing'] },
  });
  const cpus = () => os.cpus().reduce((t, c) => {
    const { idle, ...busy } = c.times;
    t.idle += idle;
    t.busy += Object.values(busy).reduce((a, b) => a + b, 0);
    return t;
  }, { idle: 0, busy: 0 });
  let result;
  let before;
  let after;
  try {
    await page.evaluate(() => performance.mark('trace-main-thread-start'));
    before = { ...cpus(), sched: renderersSchedstat() };
    result = await run();
    after = { ...cpus(), sched: renderersSchedstat() };
    await page.evaluate(() => performance.mark('trace-main-thread-end'));
  } finally {
    await cdp.send('Tracing.end');
    await complete;
    await cdp.detach().catch(() => {});
  }
  // The marks are recorded on the main thread: it is the thread they name.
  const mark = (name) => events.find((e) => e.name === name && e.cat === 'blink.user_timing');
  const start = mark('trace-main-thread-start');
  const end = mark('trace-main-thread-end');
  assert.ok(start && end, 'the trace holds the marks');
  const tasks = [];
  let reach = 0; // tasks nested in a task (a nested run loop) are part of it
  for (const e of events.filter((x) => x.pid === start.pid && x.tid === start.tid && x.ph === 'X' &&
    x.name === 'ThreadControllerImpl::RunTask' && x.ts >= start.ts && x.ts <= end.ts).sort((a, b) => a.ts - b.ts)) {
    if (e.ts < reach) continue;
    reach = e.ts + e.dur;
    // Thread time can read a little over wall time on a short task: never more CPU than wall.
    tasks.push({ wallMs: e.dur / 1000, cpuMs: e.tdur == null ? null : Math.min(e.tdur, e.dur) / 1000, src: e.args?.src_func ?? null });
  }
  const total = after.idle + after.busy - before.idle - before.busy;
  // The trace's pid is the renderer's (a process's main thread has its pid as thread id).
  const [s0, s1] = [before.sched.get(start.pid), after.sched.get(start.pid)];
  return {
    result, tasks, spanMs: (end.ts - start.ts) / 1000, cores: os.cpus().length,
    machineBusy: total > 0 ? (after.busy - before.busy) / total : null,
    waitMs: s0 && s1 && start.tid === start.pid ? (s1.wait - s0.wait) / 1e6 : null,
  };
}
