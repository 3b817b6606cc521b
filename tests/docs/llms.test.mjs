// docs/llms.txt and docs/llms-full.txt: up to date with their generator, within budget, linking
// every doc page; and the reference readBlob/readArtifact code of llms-full.txt, extracted from it
// and run against real bundles with a file-based fetch, gives what `tlparse-build cat` prints.
// Run by tests/docs/run.sh (scripts/test), which installs fzstd first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

import { REPO, LIMIT, outputs, pages } from '../../scripts/gen-llms.mjs';

const read = (rel) => fs.readFileSync(path.join(REPO, rel), 'utf8');
const SIMPLE = path.join(REPO, 'crates/tlparse-bundle/tests/bundles/simple');

test('llms.txt and llms-full.txt are what scripts/gen-llms.mjs generates', () => {
  for (const [rel, text] of Object.entries(outputs())) {
    assert.ok(fs.existsSync(path.join(REPO, rel)), `${rel} is missing: run scripts/regenerate`);
    assert.ok(read(rel) === text, `${rel} is out of date with the docs, schema.d.ts or the test bundle: run scripts/regenerate`);
  }
});

test('llms-full.txt fits in 40960 bytes', () => {
  const size = fs.statSync(path.join(REPO, 'docs/llms-full.txt')).size;
  assert.ok(size <= LIMIT, `docs/llms-full.txt is ${size} bytes, over ${LIMIT}: shorten docs/llms-full.template.md`);
});

test('llms.txt has the llmstxt.org form and links every doc page, and only pages that exist', () => {
  const text = read('docs/llms.txt');
  assert.match(text, /^# .+\n\n> .+/, 'an H1, then a blockquote summary');
  const links = [...text.matchAll(/^- \[[^\]]+\]\(([^)]+)\)/gm)].map((m) => path.join('docs', m[1]));
  for (const link of links) assert.ok(fs.existsSync(path.join(REPO, link)), `llms.txt links ${link}, which does not exist`);
  const docs = (dir) => fs.readdirSync(path.join(REPO, dir)).filter((f) => f.endsWith('.md') && !f.endsWith('.template.md')).map((f) => path.join(dir, f));
  const expected = [...docs('docs'), ...docs('docs/tables'), ...docs('docs/cross_rank'), 'docs/llms-full.txt',
    'viewers/README.md', 'viewers/react-template/README.md', 'viewers/bundle-loader/README.md',
    'crates/tlparse-bundle/README.md', 'python/README.md'];
  for (const page of expected) assert.ok(links.includes(page), `llms.txt does not link ${page}`);
  assert.deepEqual(new Set(links), new Set(pages().flatMap(([, p]) => p)));
});

// ---------------------------------------------------------------------------------------------
// The reference code

const FZSTD = createRequire(path.join(REPO, 'tests/browser/package.json')).resolve('fzstd');
const { decompress } = await import(pathToFileURL(FZSTD));

/** The ```js block of llms-full.txt as a module, its `fzstd` import pointed at the installed one. */
async function referenceCode() {
  const m = /^```js\n([\s\S]*?)^```$/m.exec(read('docs/llms-full.txt'));
  assert.ok(m, 'llms-full.txt has a ```js block');
  const esm = path.join(path.dirname(FZSTD), '../esm/index.mjs');
  const code = m[1].replace(/from 'fzstd'/, `from ${JSON.stringify(pathToFileURL(esm).href)}`);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'llms-')), 'reference.mjs');
  fs.writeFileSync(file, code);
  return import(pathToFileURL(file));
}
const { readBlob, readArtifact, readFile } = await referenceCode();

/** A fetch of file: URLs reading 4 KiB at a time, counting the bytes it read of each file.
 * `decoded`: serve .zst files decompressed, as a host that gzips on the fly and a browser that
 * decodes it do. */
function fileFetch({ decoded = false } = {}) {
  const read = new Map();
  const fetchFn = async (url) => {
    const file = fileURLToPath(url);
    if (!fs.existsSync(file)) return new Response(null, { status: 404 });
    const count = (chunk) => { read.set(file, (read.get(file) ?? 0) + chunk.length); return chunk; };
    if (decoded && file.endsWith('.zst')) {
      const bytes = Buffer.from(decompress(new Uint8Array(fs.readFileSync(file))));
      return new Response(Readable.toWeb(Readable.from([count(bytes)])));
    }
    // Pulled 4 KiB at a time, nothing read ahead: `read` counts what the reader asked for.
    const fd = fs.openSync(file, 'r');
    const body = new ReadableStream({
      pull(controller) {
        const chunk = Buffer.alloc(4096);
        const n = fs.readSync(fd, chunk);
        if (n === 0) { fs.closeSync(fd); controller.close(); } else controller.enqueue(new Uint8Array(count(chunk.subarray(0, n))));
      },
      cancel() { fs.closeSync(fd); },
    }, { highWaterMark: 0 });
    return new Response(body);
  };
  return { fetchFn, read };
}

const bin = () => {
  if (process.env.TLPARSE_BUILD) return process.env.TLPARSE_BUILD;
  for (const profile of ['debug', 'release']) {
    const p = path.join(REPO, 'target', profile, 'tlparse-build');
    if (fs.existsSync(p)) return p;
  }
  execFileSync('cargo', ['build', '--quiet'], { cwd: REPO, stdio: 'inherit' });
  return path.join(REPO, 'target/debug/tlparse-build');
};
const cat = (bundle, ...what) => execFileSync(bin(), ['cat', bundle, ...what]).toString('utf8');
const manifestOf = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const base = (dir) => pathToFileURL(dir + '/');

test('readArtifact reads what tlparse-build cat prints, with zstd as stored or already decoded', async () => {
  const manifest = manifestOf(SIMPLE);
  for (const decoded of [false, true]) {
    const { fetchFn } = fileFetch({ decoded });
    for (const name of ['inductor_output_code', 'dynamo_output_graph', 'fx_graph_runnable', 'dynamo_cpp_guards_str']) {
      const text = await readArtifact(base(SIMPLE), manifest, 'log0', '[0/0]', name, fetchFn);
      assert.equal(text, cat(SIMPLE, '[0/0]', name), `${name} (decoded by the host: ${decoded})`);
    }
    assert.equal(await readArtifact(base(SIMPLE), manifest, 'log0', '0/0', 'inductor_output_code', fetchFn),
      cat(SIMPLE, '0/0', 'inductor_output_code'));
    assert.equal(await readArtifact(base(SIMPLE), manifest, 'log0', '[0/1]', 'inductor_output_code', fetchFn), null);
  }
});

test('readBlob reads every blob of the test bundle as the whole decoded pack has it', async () => {
  const manifest = manifestOf(SIMPLE);
  const shard = JSON.parse(Buffer.from(decompress(new Uint8Array(fs.readFileSync(path.join(SIMPLE, 'blobs/index/all.json.zst'))))).toString());
  const packs = manifest.blobs.packs.map((p) => decompress(new Uint8Array(fs.readFileSync(path.join(SIMPLE, p.path)))));
  const { fetchFn } = fileFetch();
  const ids = Object.keys(shard);
  assert.ok(ids.length > 50);
  for (const id of ids) {
    const { pack, offset, size } = shard[id];
    const expected = new TextDecoder().decode(packs[pack].subarray(offset, offset + size));
    assert.equal(await readBlob(base(SIMPLE), manifest, id, fetchFn), expected, id);
  }
  await assert.rejects(readBlob(base(SIMPLE), manifest, '0'.repeat(32), fetchFn), /no blob/);
});

test('readBlob finds blobs in a sharded index and stops reading a pack after the blob', async () => {
  // ranks_shifted: 2544 blobs, so 16 shards; packs of about 1 MiB decoded.
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'llms-')), 'ranks');
  execFileSync(bin(), [path.join(REPO, 'fixtures-repo/torch-2.15/ranks_shifted'), '-o', dir, '--no-viewer', '-q']);
  const manifest = manifestOf(dir);
  assert.equal(manifest.blobs.index_prefix_len, 1);
  // The first blob of the biggest pack.
  const biggest = manifest.blobs.packs.reduce((best, p, i) => (p.size > manifest.blobs.packs[best].size ? i : best), 0);
  const located = [];
  for (let shard = 0; shard < 16; shard++) {
    const file = path.join(dir, manifest.blobs.index_path.replace('{prefix}', shard.toString(16)));
    for (const [id, loc] of Object.entries(JSON.parse(Buffer.from(decompress(new Uint8Array(fs.readFileSync(file)))).toString()))) {
      if (loc.pack === biggest) located.push([id, loc]);
    }
  }
  const [id, loc] = located.sort((a, b) => a[1].offset - b[1].offset)[0];
  const { fetchFn, read } = fileFetch();
  assert.equal(await readBlob(base(dir), manifest, id, fetchFn), cat(dir, id));
  const pack = path.join(dir, manifest.blobs.packs[biggest].path);
  // zstd decodes by blocks (128 KiB decoded): the first block holds most of a pack's compressed
  // bytes (the later ones refer back to it), so reading stops about three quarters in.
  assert.ok(read.get(pack) < fs.statSync(pack).size - 4096,
    `read ${read.get(pack)} of the ${fs.statSync(pack).size} bytes of the pack for a blob at ${loc.offset}, ${loc.size} bytes`);
  // And a file read whole: a plain JSON file passes through undecoded.
  assert.deepEqual(JSON.parse(new TextDecoder().decode(await readFile(base(dir), 'manifest.json', Infinity, fetchFn))), manifest);
});
