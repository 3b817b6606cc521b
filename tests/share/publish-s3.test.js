// `publish` to a real S3 API server (moto on loopback; run by run.sh through scripts/with-moto):
// the published viewer opened from the bucket itself reads every blob back, each object has its
// headers, publishes killed midway never leave a manifest whose files are missing, a different
// bundle is refused, and publishing again writes nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { open, shot } from '../browser/viewer-harness.js';
import {
  REPO, blobDigestsInPage, buildBundle, catSha256, expectedType, launchChromium, publish,
  publishKilledAfterFirstUpload, publishedPaths, tmpdir,
} from './common.js';

const ENDPOINT = process.env.AWS_ENDPOINT_URL;
assert.match(ENDPOINT ?? '', /^http:\/\/127\.0\.0\.1:\d+$/, 'run through scripts/with-moto (tests/share/run.sh)');
const PYTHON = path.join(REPO, 'target/moto-venv/bin/python');
const S3 = path.join(path.dirname(new URL(import.meta.url).pathname), 's3.py');
const BUCKET = 'shared';
// Credentials this run alone uses (moto takes any): neither may appear in any output.
const SECRETS = { AWS_ACCESS_KEY_ID: 'AKIASHARETESTKEY0001', AWS_SECRET_ACCESS_KEY: 'sekrit-share-test-Q7mZ4xW9' };
const TIMEOUT = { timeout: 180_000 };

let tmp, ranks, simple, ranksManifest, simpleManifest, browser;

function s3(...args) {
  // The same credentials as the publishes: moto gives each access key an account of its own.
  return execFileSync(PYTHON, [S3, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...SECRETS } });
}
/** Every object under PREFIX with its headers. */
function objects(prefix) {
  return JSON.parse(s3('objects', BUCKET, prefix));
}
function assertNoSecrets(r) {
  for (const secret of Object.values(SECRETS)) {
    assert.ok(!`${r.stdout}${r.stderr}`.includes(secret), 'a credential was printed');
  }
}
function assertOk(r) {
  assert.equal(r.status, 0, `publish failed:\n${r.stdout}${r.stderr}`);
  assertNoSecrets(r);
}

before(() => {
  tmp = tmpdir();
  ranks = path.join(tmp, 'ranks');
  simple = path.join(tmp, 'simple');
  ranksManifest = buildBundle('torch-2.15/ranks_shifted', ranks);
  simpleManifest = buildBundle('torch-2.15/simple', simple);
  s3('create', BUCKET);
});

after(async () => {
  await browser?.close();
  if (!process.env.KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
});

test('a published bundle opens from the bucket and its viewer reads every blob back', TIMEOUT, async () => {
  const r = publish([ranks, `s3://${BUCKET}/runs/job 1`], SECRETS);
  assertOk(r);
  const total = publishedPaths(ranksManifest).length;
  assert.match(r.stdout, new RegExp(`: ${total} file\\(s\\) uploaded \\(.*\\), 0 already there, 0 old file\\(s\\) deleted`));
  const folder = `${ENDPOINT}/${BUCKET}/runs/job%201/`;
  assert.ok(r.stdout.includes(`open:       ${folder}index.html\n`), r.stdout);
  assert.ok(r.stdout.includes(`bundle URL: ${folder} `), r.stdout);

  browser = await launchChromium();
  const view = await open({ browser }, `${folder}index.html`);
  try {
    assert.equal(view.viewer.state, 'ready', view.viewer.error);
    assert.deepEqual(view.errors, []);
    assert.equal(view.viewer.manifest.streams.length, 4);
    await shot(view.page, 'share-s3-overview');
    const digests = await blobDigestsInPage(view.page);
    assert.equal(Object.keys(digests).length, ranksManifest.counts.unique_blobs);
    for (const [hash, sha] of Object.entries(digests)) assert.equal(sha, catSha256(ranks, hash), hash);
    assert.deepEqual(view.errors, []);
  } finally {
    await view.close();
  }
});

test('every object has its content type, cache policy and blake3, and no content encoding', TIMEOUT, () => {
  const found = objects('runs/job 1');
  assert.deepEqual(Object.keys(found).sort(), publishedPaths(ranksManifest).sort());
  const viewer = new Set((ranksManifest.viewer ?? []).map((f) => f.path));
  const hashes = new Map([...ranksManifest.files, ...ranksManifest.viewer].map((f) => [f.path, f.blake3]));
  for (const [p, o] of Object.entries(found)) {
    assert.equal(o.type, expectedType(p, viewer.has(p)), p);
    const packed = /^blobs\/packs\/[0-9a-f]{32}\.zst$/.test(p);
    assert.equal(o.cache, packed ? 'public, max-age=31536000, immutable' : 'no-cache', p);
    assert.equal(o.encoding, null, p);
    if (p !== 'manifest.json') assert.equal(o.blake3, hashes.get(p), p);
  }
  assert.equal(found['index.html'].type, 'text/html; charset=utf-8');
  assert.ok(Object.keys(found).some((p) => p.startsWith('blobs/packs/')));
});

test('publishing the same bundle again uploads nothing', TIMEOUT, async () => {
  const before = objects('runs/job 1');
  // LastModified has a resolution of a second: a rewrite within it would go unseen.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const r = publish([ranks, `s3://${BUCKET}/runs/job 1`], SECRETS);
  assertOk(r);
  assert.match(r.stdout, new RegExp(`: 0 file\\(s\\) uploaded \\(0 B\\), ${publishedPaths(ranksManifest).length} already there`));
  assert.deepEqual(objects('runs/job 1'), before, 'an object was written again');
});

test('a different bundle is refused and the old one stays readable', TIMEOUT, async () => {
  const before = objects('runs/job 1');
  const r = publish([simple, `s3://${BUCKET}/runs/job 1`], SECRETS);
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /already holds a different bundle; nothing was published\. Pass --replace/);
  assertNoSecrets(r);
  assert.deepEqual(objects('runs/job 1'), before);
  const served = await fetch(`${ENDPOINT}/${BUCKET}/runs/job%201/manifest.json`, { signal: AbortSignal.timeout(30_000) });
  assert.equal(served.status, 200);
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), fs.readFileSync(path.join(ranks, 'manifest.json')));
});

test('a first publish killed midway leaves no manifest, and running it again uploads only what is missing', TIMEOUT, async (t) => {
  const killed = await publishKilledAfterFirstUpload([ranks, `s3://${BUCKET}/killed`]);
  assert.equal(killed.signal, 'SIGKILL', `the publish ended before it was killed:\n${killed.stderr}`);
  const left = objects('killed');
  const total = publishedPaths(ranksManifest).length;
  assert.ok(Object.keys(left).length >= 1 && Object.keys(left).length < total, `${Object.keys(left).length} objects`);
  assert.ok(!('manifest.json' in left), 'a manifest was written before its files');
  assert.ok(!('manifest.lite.json.zst' in left), 'a lite manifest (what a viewer reads first) was written before its files');
  t.diagnostic(`killed with ${Object.keys(left).length} of ${total} files uploaded`);
  const served = await fetch(`${ENDPOINT}/${BUCKET}/killed/manifest.json`, { signal: AbortSignal.timeout(30_000) });
  assert.notEqual(served.status, 200, 'a reader found a bundle');

  const r = publish([ranks, `s3://${BUCKET}/killed`], SECRETS);
  assertOk(r);
  const there = Object.keys(left).length;
  assert.match(r.stdout, new RegExp(`: ${total - there} file\\(s\\) uploaded \\(.*\\), ${there} already there`));
  assert.deepEqual(Object.keys(objects('killed')).sort(), publishedPaths(ranksManifest).sort());
});

test('a --replace publish killed midway leaves no manifest, never the old one with new files', TIMEOUT, async (t) => {
  const killed = await publishKilledAfterFirstUpload([simple, `s3://${BUCKET}/runs/job 1`, '--replace']);
  assert.equal(killed.signal, 'SIGKILL', `the publish ended before it was killed:\n${killed.stderr}`);
  assert.match(killed.stderr, /^deleted manifest\.json \(the old bundle's\)\nuploaded /m);
  const left = objects('runs/job 1');
  assert.ok(!('manifest.json' in left), 'a manifest is there while the bundle is half replaced');
  t.diagnostic(`killed with ${Object.keys(left).length} objects there (old and new)`);
  const newFile = simpleManifest.files.concat(simpleManifest.viewer).find((f) => f.path === killed.first);
  assert.equal(left[killed.first]?.blake3, newFile.blake3, 'the new bundle\'s first file is there');

  // Finished: exactly the new bundle, the old one's files gone, and it reads back.
  const r = publish([simple, `s3://${BUCKET}/runs/job 1`, '--replace'], SECRETS);
  assertOk(r);
  assert.deepEqual(Object.keys(objects('runs/job 1')).sort(), publishedPaths(simpleManifest).sort());
  const view = await open({ browser }, `${ENDPOINT}/${BUCKET}/runs/job%201/index.html`);
  try {
    assert.equal(view.viewer.state, 'ready', view.viewer.error);
    assert.deepEqual(view.errors, []);
    const digests = await blobDigestsInPage(view.page);
    assert.equal(Object.keys(digests).length, simpleManifest.counts.unique_blobs);
    for (const [hash, sha] of Object.entries(digests)) assert.equal(sha, catSha256(simple, hash), hash);
  } finally {
    await view.close();
  }
});

test('a failed publish prints no credential', TIMEOUT, () => {
  const r = publish([simple, 's3://no-such-bucket/x'], SECRETS);
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /NoSuchBucket/);
  assertNoSecrets(r);
});
