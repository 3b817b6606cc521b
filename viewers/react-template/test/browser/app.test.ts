// app.test.ts: the BUILT app (dist/) in headless Chromium (playwright-core, Debian's chromium),
// served under a sub-path as on a GitHub Pages project site, by the repository's test server
// (tests/browser/server.js) in both modes: `plain` and `ghpages` (gzip on the fly). Bundles are
// built from fixtures-repo/ by test/global-setup.ts. Screenshots go to test-results/: look at them.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { READER_VERSION } from 'tlparse-bundle-loader';
import { BIN, catArtifact, REPO } from '../fixtures';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(HERE, '../../dist');
const SHOTS = path.resolve(HERE, '../../test-results');
const SUB_PATH = '/some/sub/path/';
const bundlesDir = inject('bundlesDir');

/** tests/browser/server.js (plain JavaScript): the part of its API used here. */
interface StaticServer {
  url: string;
  requests: { path: string; status: number; gzip: boolean }[];
  close(): Promise<void>;
}
type StartServer = (mode: 'plain' | 'ghpages', mounts: Record<string, string>) => Promise<StaticServer>;

let browser: Browser;
let startServer: StartServer;

beforeAll(async () => {
  if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error('no dist/: run `npm run build` first');
  ({ startServer } = (await import(pathToFileURL(path.join(REPO, 'tests/browser/server.js')).href)) as { startServer: StartServer });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 30_000,
  });
  fs.rmSync(SHOTS, { recursive: true, force: true }); // no stale screenshots from an older run
  fs.mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => { await browser?.close(); });

/** A fresh page that records console errors, page errors and failed requests into `errors`. */
async function openPage(url: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000); // every wait below is bounded by this
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('requestfailed', (r) => {
    const reason = r.failure()?.errorText ?? '';
    // By design the loader stops downloading a pack once the blob it wants is decoded.
    if (reason === 'net::ERR_ABORTED' && r.url().includes('/blobs/packs/')) return;
    errors.push(`requestfailed: ${r.url()} ${reason}`);
  });
  await page.goto(url);
  return { page, errors };
}

const stat = (page: Page, name: string) => page.locator(`[data-stat="${name}"] .stat-value`);
const rowIds = (page: Page) => page.locator('.compile-row > span:first-child').allTextContents();

describe.each(['plain', 'ghpages'] as const)('built app, %s hosting', (mode) => {
  let server: StaticServer;
  let appUrl: string;
  const bundleUrl = (name: string) => `${server.url}/b/${name}/`;
  const open = (query: Record<string, string>) => openPage(`${appUrl}?${new URLSearchParams(query)}`);
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${mode}-${name}.png`), fullPage: true });

  beforeAll(async () => {
    server = await startServer(mode, { [SUB_PATH]: DIST, '/b/': bundlesDir });
    appUrl = `${server.url}${SUB_PATH}`;
  });
  afterAll(async () => {
    // Every file was found: the app's assets under the sub-path, the bundles' files.
    expect(server.requests.filter((r) => r.status !== 200)).toEqual([]);
    expect(server.requests.some((r) => r.path.startsWith(`${SUB_PATH}assets/`))).toBe(true);
    if (mode === 'ghpages') expect(server.requests.some((r) => r.gzip)).toBe(true);
    await server.close();
  });

  test('without ?bundle= it asks for one', async () => {
    const { page, errors } = await open({});
    await expect.poll(() => page.locator('.welcome h2').textContent()).toBe('Open a bundle');
    await page.fill('input[name=bundle]', bundleUrl('graph_breaks'));
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-stat="compiles"]');
    expect(new URL(page.url()).searchParams.get('bundle')).toBe(bundleUrl('graph_breaks'));
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test('a bundle of another origin typed in the box: the page loads again, its policy allowing that origin', async () => {
    // `tlparse-build serve` on another port, letting this app's origin read it (CORS).
    const { startServe } = (await import(pathToFileURL(path.join(REPO, 'tests/browser/tlparse-process.js')).href)) as {
      startServe(bin: string, dir: string, args: string[]): Promise<{ url: string; close(): void }>;
    };
    const other = await startServe(BIN, path.join(bundlesDir, 'graph_breaks'), ['--allow-origin', server.url]);
    try {
      const { page, errors } = await open({});
      const policies = () => page.evaluate(() => [...document.head.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')]
        .map((m) => (m as HTMLMetaElement).content));
      expect((await policies())[1]).toBe("connect-src 'self'");
      await page.fill('input[name=bundle]', other.url);
      await Promise.all([page.waitForEvent('load'), page.click('button[type=submit]')]); // a page load, not pushState
      await expect.poll(() => stat(page, 'compiles').textContent()).toBe('27');
      const [built, narrowed] = await policies();
      expect(built).toMatch(/^default-src 'self'; script-src 'self'; .*connect-src 'self' http: https:;/);
      expect(narrowed).toBe(`connect-src 'self' ${new URL(other.url).origin}`);
      // From the page, as a script slipped into it would: a third origin is refused by the policy.
      const third = await page.evaluate(() => new Promise<string>((resolve) => {
        document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true });
        fetch('http://127.0.0.1:9/collect').then(() => resolve('fetched'), () => setTimeout(() => resolve('failed'), 1000));
      }));
      expect(third).toBe('connect-src');
      expect(errors.filter((e) => !e.includes('127.0.0.1:9/collect'))).toEqual([]);
      await page.context().close();
    } finally {
      other.close();
    }
  });

  test('graph_breaks: overview, virtualized compile list, chart', async () => {
    const { page, errors } = await open({ bundle: bundleUrl('graph_breaks') });
    // Checked by hand (test/data.test.ts): 27 compiles, no failure, 10 restarts, 18.398263 s.
    await expect.poll(() => stat(page, 'compiles').textContent()).toBe('27');
    expect(await stat(page, 'streams').textContent()).toBe('1');
    expect(await stat(page, 'failures').textContent()).toBe('0');
    expect(await page.locator('[data-stat="failures"] .stat-note').textContent()).toBe('10 restarts');
    expect(await stat(page, 'compile-time').textContent()).toBe('18.40 s');
    expect(await page.locator('.stream-picker').count()).toBe(0); // one stream: no picker

    // Virtualized: of 27 compiles, only those in view (plus overscan) are in the DOM.
    await page.waitForSelector('.compile-row');
    const first = await rowIds(page);
    expect(first[0]).toBe('[0/0]');
    expect(first.length).toBeLessThan(27);
    expect(await page.locator('.compile-list .count').textContent()).toBe('27');
    await shot(page, 'graph_breaks-overview');
    await page.locator('.compile-scroll').evaluate((el) => { el.scrollTop = el.scrollHeight; });
    await expect.poll(async () => (await rowIds(page)).at(-1)).toBe('[15/0]');
    const last = await rowIds(page);
    expect(last).not.toContain('[0/0]');
    expect(last.length).toBeLessThan(27);

    // The chart: 16 frames; frame 6 compiled twice (full bar), every other frame once (half).
    const bars = page.locator('.bar-row');
    expect(await bars.count()).toBe(16);
    expect(await bars.first().getAttribute('data-frame')).toBe('frame 6');
    expect(await bars.first().getAttribute('data-compiles')).toBe('2');
    const widths = await page.locator('.bar').evaluateAll((els) => els.map((e) => (e as HTMLElement).style.width));
    expect(widths).toEqual(['100%', ...Array<string>(15).fill('50%')]);
    expect(await page.locator('.chart .hint').textContent()).toBe('1 of 16 frames recompiled.');
    await page.emulateMedia({ colorScheme: 'dark' }); // the dark theme follows the system's
    await shot(page, 'graph_breaks-dark');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test('graph_breaks: open a compile, then an artifact; the text is `tlparse-build cat`\'s', async () => {
    const { page, errors } = await open({ bundle: bundleUrl('graph_breaks') });
    await page.click('.compile-row:has-text("[1/0_1]")');
    await page.waitForSelector('.compile-page');
    expect(new URL(page.url()).searchParams.get('compile')).toBe('[1/0_1]');
    expect(await page.locator('.compile-page h2').textContent()).toBe('[1/0_1] ok with restart');
    expect(await page.locator('.facts').textContent()).toContain('Failed to trace builtin operator');
    expect(await page.locator('.artifacts tbody tr').count()).toBe(16);
    await page.click('.artifacts a:text-is("inductor_output_code")');
    const pre = page.locator('.artifact-text pre');
    await pre.waitFor();
    const expected = catArtifact(path.join(bundlesDir, 'graph_breaks'), 'log0', '[1/0_1]', 'inductor_output_code');
    expect(await pre.textContent()).toBe(expected);
    expect(new URL(page.url()).searchParams.get('artifact')).toBe('inductor_output_code');
    await shot(page, 'graph_breaks-artifact');

    // The URL is the state: a fresh page at this URL shows the same artifact; Back goes back.
    const again = await openPage(page.url());
    expect(await again.page.locator('.artifact-text pre').textContent()).toBe(expected);
    await again.page.context().close();
    await page.goBack();
    await page.locator('.artifact-text').waitFor({ state: 'detached' });
    expect(new URL(page.url()).searchParams.get('compile')).toBe('[1/0_1]');
    await page.click('text=← all compiles');
    await page.waitForSelector('.compile-row');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test('ranks_shifted: four ranks, switching streams', async () => {
    const { page, errors } = await open({ bundle: bundleUrl('ranks_shifted') });
    await expect.poll(() => stat(page, 'streams').textContent()).toBe('4');
    expect(await stat(page, 'compiles').textContent()).toBe('18');
    const perStream = await page.locator('.stream-table tbody tr').evaluateAll((rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)));
    expect(perStream).toEqual([['rank 0', '4'], ['rank 1', '5'], ['rank 2', '5'], ['rank 3', '4']]);
    expect(await page.locator('.stream-table tbody tr').first().locator('td').last().textContent()).toBe('25.87 s');
    await page.waitForSelector('.compile-row');
    expect(await rowIds(page)).toEqual(['[0/0]', '[1/0]', '[1/1]', '[1/2]']); // rank 0, the first stream

    // Rank 2 compiled a frame of its own first (rank_local_metric), so its compile ids shift.
    await page.selectOption('.stream-picker select', 'rank2');
    await expect.poll(() => rowIds(page)).toEqual(['[0/0]', '[1/0]', '[2/0]', '[2/1]', '[2/2]']);
    expect(new URL(page.url()).searchParams.get('stream')).toBe('rank2');
    expect(await page.locator('.compile-row').first().textContent()).toContain('rank_local_metric');
    expect(await page.locator('.bar-row').first().getAttribute('data-compiles')).toBe('3'); // sync_grads
    await shot(page, 'ranks_shifted-rank2');

    await page.click('.compile-row:has-text("[1/0]")');
    await page.click('.artifacts a:text-is("inductor_output_code")');
    const expected = catArtifact(path.join(bundlesDir, 'ranks_shifted'), 'rank2', '[1/0]', 'inductor_output_code');
    await expect.poll(() => page.locator('.artifact-text pre').textContent()).toBe(expected);
    expect(await page.locator('.stream-picker select').inputValue()).toBe('rank2');
    expect(errors).toEqual([]);
    await page.context().close();

    // Rank 0's [0/0], linked to directly: docs/tables/compile_time.md checked it by hand in the log,
    // 19.55 s of frame compile, then 1.65 s of backward compiled at the first loss.backward().
    const direct = await open({ bundle: bundleUrl('ranks_shifted'), stream: 'rank0', compile: '[0/0]' });
    const time = direct.page.locator('.facts div:has(dt:text-is("time")) dd');
    await expect.poll(() => time.textContent()).toBe('21.20 s (forward 19.55 s, backward 1.65 s)');
    await shot(direct.page, 'ranks_shifted-rank0-compile');
    // Its forward and its backward each logged an inductor_output_code: the second is `nth=1`.
    const codes = direct.page.locator('.artifacts a:text-is("inductor_output_code")');
    expect(await codes.count()).toBe(2);
    await codes.nth(0).click();
    const forwardCode = await direct.page.locator('.artifact-text pre').textContent();
    expect(forwardCode).toBe(catArtifact(path.join(bundlesDir, 'ranks_shifted'), 'rank0', '[0/0]', 'inductor_output_code'));
    await codes.nth(1).click();
    await expect.poll(() => new URL(direct.page.url()).searchParams.get('nth')).toBe('1');
    await expect.poll(() => direct.page.locator('.artifact-text pre').textContent()).not.toBe(forwardCode);
    expect(direct.errors).toEqual([]);
    await direct.page.context().close();
  });

  test('a bundle that needs a newer reader is refused, saying why', async () => {
    const { page, errors } = await open({ bundle: bundleUrl('too_new') });
    const alert = page.locator('[role=alert]');
    await alert.waitFor();
    expect(await alert.locator('strong').textContent()).toBe('This bundle cannot be opened');
    expect(await alert.locator('p').textContent()).toBe(`This bundle (format version ${READER_VERSION + 1}.0) needs a bundle ` +
      `reader of version ${READER_VERSION + 1} or newer; this bundle-loader.js is version ${READER_VERSION}. Update the viewer.`);
    await shot(page, 'too_new-refused');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test('hostile strings from the trace stay text on every view', async () => {
    const views: Record<string, string>[] = [
      {},
      { compile: '[0/0]', artifact: 'dynamo_graph_break_reason' },
      { compile: '[0/0]', artifact: 'dynamo_output_graph' },
      { compile: '[1/0]' },
    ];
    for (const view of views) {
      const { page, errors } = await open({ bundle: bundleUrl('hostile'), ...view });
      await page.waitForSelector(view.artifact ? '.artifact-text pre' : view.compile ? '.facts' : '.compile-row');
      await page.waitForSelector('.overview'); // everything has loaded
      const found = await page.evaluate(() => ({
        pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null,
        injected: document.querySelectorAll('#root script, #root img, #root svg, #root iframe, #root textarea').length,
        handlers: [...document.querySelectorAll('#root *')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
        outsideLinks: [...document.querySelectorAll('#root a')].map((a) => a.getAttribute('href') ?? '').filter((h) => !h.startsWith('?')),
      }));
      expect(found, JSON.stringify(view)).toEqual({ pwned: null, injected: 0, handlers: 0, outsideLinks: [] });
      expect(await page.locator('#root').textContent()).toContain('<script>window.__pwned=1</script>');
      if (view.compile === '[0/0]' && view.artifact === 'dynamo_graph_break_reason') await shot(page, 'hostile-artifact');
      expect(errors).toEqual([]);
      await page.context().close();
    }
  });
});

// A bundle folder from this computer: only the app is served (no bundle on any server); folders
// are picked with setInputFiles on the folder input, or dropped as the Files of a picked folder (a
// script-made DataTransfer cannot carry directories; the directory walk has Node tests in
// viewers/bundle-loader/test/local-files.test.js).
describe('a local bundle folder, read in the page', () => {
  let server: StaticServer;
  let appUrl: string;
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `local-${name}.png`), fullPage: true });
  /** Every request the page makes, by URL: all must be the app's own files. */
  const recordRequests = (page: Page) => {
    const urls: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    return urls;
  };

  beforeAll(async () => {
    server = await startServer('plain', { [SUB_PATH]: DIST });
    appUrl = `${server.url}${SUB_PATH}`;
  });
  afterAll(async () => {
    expect(server.requests.filter((r) => r.status !== 200 || !r.path.startsWith(SUB_PATH))).toEqual([]);
    await server.close();
  });

  test('pick graph_breaks: overview, a compile, an artifact equal to `tlparse-build cat`; a reload says to reopen', async () => {
    const { page, errors } = await openPage(appUrl);
    const urls = recordRequests(page);
    await page.locator('.welcome .drop-zone').waitFor();
    await shot(page, 'welcome');
    await page.setInputFiles('.welcome input[type=file]', path.join(bundlesDir, 'graph_breaks'));
    await expect.poll(() => stat(page, 'compiles').textContent()).toBe('27'); // checked by hand: test/data.test.ts
    expect(await page.locator('[data-stat="failures"] .stat-note').textContent()).toBe('10 restarts');
    expect(await page.locator('header .local-badge').textContent()).toBe('local folder graph_breaks');
    expect(new URL(page.url()).searchParams.get('bundle')).toBe('local:1/graph_breaks');
    await shot(page, 'opened');

    await page.click('.compile-row:has-text("[1/0_1]")');
    await page.click('.artifacts a:text-is("inductor_output_code")');
    const expected = catArtifact(path.join(bundlesDir, 'graph_breaks'), 'log0', '[1/0_1]', 'inductor_output_code');
    await expect.poll(() => page.locator('.artifact-text pre').textContent()).toBe(expected);
    await page.goBack();
    await page.locator('.artifact-text').waitFor({ state: 'detached' });
    expect(new URL(page.url()).searchParams.get('compile')).toBe('[1/0_1]');
    expect(urls.filter((u) => !u.startsWith(appUrl))).toEqual([]);

    await page.reload();
    const alert = page.locator('main [role=alert] p');
    await expect.poll(() => alert.textContent()).toBe('The local folder graph_breaks is no longer open: this page\'s ' +
      'address cannot point at a folder on your disk. Open it again with "Open folder…".');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test('a folder holding several bundles is refused, naming them', async () => {
    const { page, errors } = await openPage(appUrl);
    await page.setInputFiles('.welcome input[type=file]', bundlesDir);
    const alert = page.locator('.welcome [role=alert] p');
    await expect.poll(() => alert.textContent()).toMatch(/^6 bundles \(folders with a manifest\.json\) among the files opened: ([^ ]+\/, ){4}[^ ]+\/ and 1 more\. Open one bundle's folder\.$/);
    await shot(page, 'several');
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test('a drop of a folder\'s files on the drop zone opens it', async () => {
    const { page, errors } = await openPage(appUrl);
    const urls = recordRequests(page);
    await page.evaluate(() => {
      const source = Object.assign(document.createElement('input'), { type: 'file', id: 'test-source', webkitdirectory: true, hidden: true });
      document.body.append(source);
    });
    await page.setInputFiles('#test-source', path.join(bundlesDir, 'ranks_shifted'));
    const dataTransfer = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      for (const f of (document.getElementById('test-source') as HTMLInputElement).files ?? []) dt.items.add(f);
      return dt;
    });
    await page.dispatchEvent('.drop-zone', 'dragover', { dataTransfer });
    await expect.poll(() => page.locator('.drop-zone.hover').count()).toBe(1);
    await shot(page, 'drop-hover');
    await page.dispatchEvent('.drop-zone', 'drop', { dataTransfer });
    await expect.poll(() => stat(page, 'streams').textContent()).toBe('4');
    expect(await stat(page, 'compiles').textContent()).toBe('18');
    expect(await page.locator('header .local-badge').textContent()).toBe('local folder ranks_shifted');
    expect(urls.filter((u) => !u.startsWith(appUrl))).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
