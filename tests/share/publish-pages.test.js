// `publish` to a directory gives the GitHub Pages layout; served the way Pages serves it (gzip
// on the fly for the types it compresses, no custom headers: tests/browser/server.js's ghpages
// mode), the viewer loads and shows the bundle with no console error, and reads blobs back.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from '../browser/server.js';
import { go, open, shot } from '../browser/viewer-harness.js';
import { blobDigestsInPage, buildBundle, catSha256, launchChromium, publish, tmpdir, validate } from './common.js';

let tmp, bundle, manifest, site, server, browser;

before(async () => {
  tmp = tmpdir();
  bundle = path.join(tmp, 'ranks');
  manifest = buildBundle('torch-2.15/ranks_shifted', bundle);
  site = path.join(tmp, 'site');
  server = await startServer('ghpages', { '/repo/': site });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (!process.env.KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
});

test('a Pages directory served as GitHub Pages serves it shows the bundle', { timeout: 180_000 }, async () => {
  const r = publish([bundle, site]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.ok(fs.existsSync(path.join(site, '.nojekyll')));
  validate(site);

  // The site's root, as https://OWNER.github.io/REPO/ opens it.
  const view = await open({ browser }, `${server.url}/repo/`);
  try {
    assert.equal(view.viewer.state, 'ready', view.viewer.error);
    assert.deepEqual(view.errors, []);
    assert.equal(view.viewer.manifest.streams.length, manifest.streams.length);
    await shot(view.page, 'share-pages-overview');
    const gzipped = server.requests.filter((q) => q.gzip).map((q) => q.path);
    // The viewer opens the bundle from the lite manifest, which the host gzipped like the rest.
    for (const file of ['/repo/manifest.lite.json.zst', '/repo/viewer/app.js']) {
      assert.ok(gzipped.includes(file), `the host gzipped: ${gzipped.join(' ')}`);
    }

    const ranks = await go(view.page, '#/ranks');
    assert.equal(ranks.state, 'ready', ranks.error);
    await shot(view.page, 'share-pages-ranks');
    const digests = await blobDigestsInPage(view.page);
    assert.equal(Object.keys(digests).length, manifest.counts.unique_blobs);
    // A sample: every blob is checked through a bucket by publish-s3.test.js.
    for (const hash of Object.keys(digests).slice(0, 50)) assert.equal(digests[hash], catSha256(bundle, hash), hash);
    assert.deepEqual(view.errors, []);
  } finally {
    await view.close();
  }
});
