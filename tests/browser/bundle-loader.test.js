// Real-browser tests of viewers/bundle-loader/src/bundle-loader.js: bundles built by the release
// tlparse-build from fixture logs, served by server.js in two modes (plain / ghpages), read by
// Debian's Chromium through playwright-core. Run with ./run.sh (or `node --test` here).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { decompress as unzstd } from 'fzstd';
import { fileURLToPath } from 'node:url';
import { blake3 } from '@noble/hashes/blake3.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { CHROMIUM, launchChromium } from './chromium.js';
import { startServer } from './server.js';
import { tableOnDisk, tablePartsOnDisk } from './table-files.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const BIN = process.env.TLPARSE_BUILD ?? path.join(REPO, 'target/release/tlparse-build');
const SHOTS = path.join(HERE, 'screenshots');
const TIMEOUT = 180_000;

/** A fixture path: fixtures-repo/ in the repo when present, else the shared copy. */
function fixture(sub) {
  const local = path.join(REPO, 'fixtures-repo', sub);
  return fs.existsSync(local) ? local : path.join('/work/shared/fixtures', sub);
}

const FIXTURES = {
  simple: fixture('tlparse-tests/simple.log'),
  simple_corrupted_json: fixture('tlparse-tests/simple_corrupted_json.log'),
  multi_rank_runtime: fixture('tlparse-tests/multi_rank_runtime'),
  graph_breaks: fixture('torch-2.15/graph_breaks'),
  sharded: null, // generated: > 4096 distinct payloads, so the blob index has 16 shards
};
/** Fixtures built again with `--table-part-bytes 2000`, so most of their tables are in several parts. */
const PARTED = { graph_breaks_parted: 'graph_breaks', multi_rank_runtime_parted: 'multi_rank_runtime' };
const ALL = [...Object.keys(FIXTURES), ...Object.keys(PARTED)];

/** A synthetic single-process log with `n` distinct string artifacts (~300 bytes each). */
function syntheticLog(n) {
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const out = [];
  for (let i = 0; i < n; i++) {
    const noise = Array.from({ length: 8 }, () => Math.floor(rand() * 2 ** 32).toString(16).padStart(8, '0')).join('');
    const payload = [`def kernel_${i}(x):`, `    # ${noise}`, `    return x * ${i} + ${noise.length}`,
      `# ${'═'.repeat(i % 40)} ünïcödé ${i}`, `# ${noise}${noise}`].join('\n');
    const md5 = crypto.createHash('md5').update(payload).digest('hex');
    const ts = `1120 23:46:${String(3 + Math.floor(i / 1000)).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}000`;
    out.push(`V${ts} 4242 torch/_inductor/graph.py:100] {"artifact": {"name": "synthetic_${i % 7}", "encoding": "string"}, ` +
      `"frame_id": ${i % 50}, "frame_compile_id": 0, "attempt": 0, "has_payload": "${md5}"}`);
    for (const line of payload.split('\n')) out.push(`\t${line}`);
  }
  return out.join('\n') + '\n';
}

/** What Node knows about a bundle without the browser: manifest, row digests, payloads. */
function inspect(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const streams = {};
  const parts = {}; // 'stream/table' or 'cross_rank/table' -> digests of its parts, in order
  const payloads = []; // {hash, kind, name, stream}
  for (const s of manifest.streams) {
    const text = Buffer.from(unzstd(fs.readFileSync(path.join(dir, s.index)))).toString('utf8');
    const h = blake3.create();
    let rows = 0, nextLine = 1;
    for (const line of text.split('\n')) {
      if (!line) continue;
      const row = JSON.parse(line);
      // Numbered as docs/format.md says (Index rows), as the loader should: no seq stored,
      // a line only where the row before does not imply it.
      assert.equal(row.seq, undefined, `${s.index}: a stored seq`);
      row.seq = rows;
      if (row.line === undefined) row.line = nextLine;
      nextLine = row.line + 1 + (row.payload?.lines ?? 0);
      rows++;
      h.update(new TextEncoder().encode(JSON.stringify(row) + '\n'));
      if (row.payload) payloads.push({ ...row.payload, kind: row.kind, name: row.name, stream: s.id });
    }
    const tables = {};
    for (const [name, t] of Object.entries(s.tables ?? {})) {
      tables[name] = bytesToHex(blake3(new TextEncoder().encode(JSON.stringify(tableOnDisk(dir, t)))));
      parts[`${s.id}/${name}`] = tablePartsOnDisk(dir, t).map((p) => bytesToHex(blake3(new TextEncoder().encode(JSON.stringify(p)))));
    }
    const traceEvents = s.chrome_trace
      ? JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, s.chrome_trace))).toString('utf8')).traceEvents.length
      : null;
    const chromiumEvents = s.kinds.chromium_event ?? 0;
    streams[s.id] = { rows, digest: bytesToHex(h.digest()), tables, traceEvents, chromiumEvents };
  }
  const crossRank = {};
  for (const [name, t] of Object.entries(manifest.cross_rank?.tables ?? {})) {
    crossRank[name] = bytesToHex(blake3(new TextEncoder().encode(JSON.stringify(tableOnDisk(dir, t)))));
    parts[`cross_rank/${name}`] = tablePartsOnDisk(dir, t).map((p) => bytesToHex(blake3(new TextEncoder().encode(JSON.stringify(p)))));
  }
  const crossTraces = {};
  for (const field of ['chrome_trace', 'runtime_estimates_trace']) {
    const p = manifest.cross_rank?.[field];
    crossTraces[field] = typeof p === 'string'
      ? JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, p))).toString('utf8')).traceEvents.length
      : null;
  }
  const shards = manifest.files.filter((f) => f.path.startsWith('blobs/index/')).length;
  const locations = {};
  for (const f of manifest.files.filter((f) => f.path.startsWith('blobs/index/'))) {
    Object.assign(locations, JSON.parse(Buffer.from(unzstd(fs.readFileSync(path.join(dir, f.path)))).toString('utf8')));
  }
  return { dir, manifest, streams, parts, crossRank, crossTraces, payloads, shards, locations, referenced: new Set(payloads.map((p) => p.hash)).size };
}

/** What the test servers serve: the bundles, the loader, the test page and its npm modules. */
const MOUNTS = () => ({
  '/bundles/': path.join(tmp, 'bundles'),
  '/loader/': path.join(REPO, 'viewers/bundle-loader/src'),
  '/node_modules/': path.join(HERE, 'node_modules'),
  '/': HERE,
});

const cat = (dir, hash) => execFileSync(BIN, ['cat', dir, hash], { maxBuffer: 1 << 28 });

let tmp, browser;
const bundles = {}; // name -> inspect()

before(async () => {
  assert.ok(fs.existsSync(BIN), `${BIN} is missing: run \`cargo build --release\` (run.sh does)`);
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium (run.sh does)`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tlparse-browser-'));
  for (const [name, src] of Object.entries(FIXTURES)) {
    let input = src;
    if (!input) {
      input = path.join(tmp, 'synthetic.log');
      fs.writeFileSync(input, syntheticLog(5000));
    }
    const out = path.join(tmp, 'bundles', name);
    execFileSync(BIN, [input, '-o', out, '--overwrite', '-q'], { stdio: ['ignore', 'ignore', 'inherit'] });
    bundles[name] = inspect(out);
  }
  for (const [name, of] of Object.entries(PARTED)) {
    const out = path.join(tmp, 'bundles', name);
    execFileSync(BIN, [FIXTURES[of], '-o', out, '--overwrite', '-q', '--table-part-bytes', '2000'], { stdio: ['ignore', 'ignore', 'inherit'] });
    bundles[name] = inspect(out);
  }
  assert.ok(bundles.sharded.manifest.blobs.index_prefix_len >= 1, 'the synthetic bundle should have several shards');
  // A bundle from the future: needs reader version 3. Its lite manifest (what the loader reads)
  // is written as plain JSON, which the loader takes as a host-decoded .zst.
  const future = path.join(tmp, 'bundles', 'future');
  fs.cpSync(bundles.simple.dir, future, { recursive: true });
  const m = JSON.parse(fs.readFileSync(path.join(future, 'manifest.json'), 'utf8'));
  Object.assign(m, { format_version: '3.0', min_reader_version: 3 });
  fs.writeFileSync(path.join(future, 'manifest.json'), JSON.stringify(m, null, 2));
  const { files, viewer, ...lite } = m;
  lite.inputs = lite.inputs.map(({ blake3: _, ...input }) => input);
  fs.writeFileSync(path.join(future, 'manifest.lite.json.zst'), JSON.stringify(lite));

  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  if (tmp && !process.env.KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
});

/** A fresh browser context (empty HTTP cache) showing the test page, modules loaded. */
async function openPage(srv) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`));
  await page.goto(`${srv.url}/page.html`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 30_000 });
  return { page, errors, close: () => context.close() };
}

function bundleRequests(srv, name) {
  const prefix = `/bundles/${name}/`;
  return srv.requests.filter((r) => r.path.startsWith(prefix)).map((r) => ({ ...r, file: r.path.slice(prefix.length) }));
}

for (const mode of ['plain', 'ghpages']) {
  describe(`${mode} server`, () => {
    let srv;
    before(async () => {
      srv = await startServer(mode, MOUNTS());
    });
    after(() => srv?.close());

    for (const name of ALL) {
      test(`${name}: every index row, stack table, blob (blake3) and diagnostic`, { timeout: TIMEOUT }, async () => {
        const b = bundles[name];
        const fixture = PARTED[name] ?? name;
        const m = b.manifest;
        const { page, errors, close } = await openPage(srv);
        srv.requests.length = 0;
        const r = await page.evaluate(([n, u]) => window.checkBundle(n, u), [name, `${srv.url}/bundles/${name}`]);
        await close();
        assert.deepEqual(r.problems, []);
        assert.equal(r.streams.length, m.streams.length);
        for (const s of r.streams) {
          assert.equal(s.rows, s.entries, `stream ${s.id}: rows read vs manifest entries`);
          assert.equal(s.digest, b.streams[s.id].digest, `stream ${s.id}: rows differ from Node's own decoding`);
          assert.equal(s.badStackRefs, 0, `stream ${s.id}: stack ids out of range`);
          assert.equal(s.badFrameRefs, 0, `stream ${s.id}: frame ids out of range`);
          assert.deepEqual(s.tables, b.streams[s.id].tables, `stream ${s.id}: tables read in the browser vs Node`);
          assert.equal(s.absentTable, null);
          assert.equal(s.traceEvents, b.streams[s.id].traceEvents, `stream ${s.id}: Chrome trace events`);
          // Every chromium event whose payload is a JSON object is in the trace.
          const expected = name === 'simple_corrupted_json' ? b.streams[s.id].chromiumEvents - 1 : b.streams[s.id].chromiumEvents;
          assert.equal(s.traceEvents ?? 0, expected, `stream ${s.id}: trace events vs chromium_event entries`);
        }
        assert.deepEqual(r.crossRank, b.crossRank, 'cross-rank tables read in the browser vs Node');
        assert.deepEqual(r.parts, b.parts, 'tableParts() and crossRankTableParts() yield the parts on disk, in order');
        assert.deepEqual(r.crossTraces, b.crossTraces, 'cross-rank traces read in the browser vs Node');
        assert.equal(r.absentCrossRank, null);
        if (fixture === 'multi_rank_runtime') {
          assert.ok(r.crossRank.compile_alignment, 'seven ranks have a compile_alignment table');
        } else if (name !== 'sharded') {
          assert.deepEqual(r.crossRank, {}, 'a single stream has no cross-rank tables');
        }
        if (fixture === 'graph_breaks') {
          assert.deepEqual(Object.keys(r.streams[0].tables), Object.keys(m.streams[0].tables).sort());
          assert.ok(r.streams[0].tables.compile_directory && r.streams[0].tables.recompiles);
        }
        assert.equal(r.blobs, m.counts.unique_blobs);
        assert.equal(r.distinctBlobs, m.counts.unique_blobs);
        assert.equal(r.blobBytes, m.counts.unique_blob_bytes);
        assert.equal(r.referenced, b.referenced);
        assert.equal(r.shards, b.shards);
        assert.equal(r.absentLocate, null);
        assert.equal(r.diagnostics, m.diagnostics.total);
        assert.deepEqual(r.byKind, m.diagnostics.by_kind);
        if (m.diagnostics.total) assert.ok(r.firstDiagnostic.message && r.firstDiagnostic.kind);
        assert.ok(r.sample, 'bundle has at least one payload');
        assert.equal(Buffer.from(r.sample.text, 'utf8').compare(cat(b.dir, r.sample.hash)), 0, 'text() vs tlparse-build cat');
        assert.deepEqual(errors, []);
        // The server really behaved as its mode says (so both code paths were exercised).
        const reqs = bundleRequests(srv, name);
        for (const q of reqs) {
          assert.equal(q.status, 200, q.path);
          // GitHub Pages gzips on the fly, except files that already are gzip.
          const gz = mode === 'ghpages' && !q.path.endsWith('.gz');
          assert.equal(q.gzip, gz, `${q.path}: Content-Encoding gzip should be ${gz} in ${mode} mode`);
        }
        assert.equal(reqs.filter((q) => q.file.startsWith('blobs/packs/')).length, m.blobs.packs.length,
          'each pack fetched exactly once');
      });
    }

    for (const [name, of] of Object.entries(PARTED)) {
      test(`${name}: tables in parts read in the browser as the same tables stored whole`, { timeout: TIMEOUT }, async () => {
        const [parted, whole] = [bundles[name], bundles[of]];
        // --table-part-bytes 2000 cut the larger tables: checked on the manifests, then on the reads.
        const multi = Object.entries(parted.parts).filter(([, p]) => p.length > 1).map(([k]) => k);
        assert.ok(multi.some((k) => k.endsWith('/compile_directory')), `multi-part tables: ${multi.join(', ')}`);
        if (of === 'multi_rank_runtime') assert.ok(multi.some((k) => k.startsWith('cross_rank/')), 'a cross-rank table in parts');
        assert.ok(Object.values(whole.parts).every((p) => p.length === 1), 'by default these tables are one part each');
        const { page, errors, close } = await openPage(srv);
        const read = async (n) => page.evaluate(([n, u]) => window.checkBundle(n, u), [n, `${srv.url}/bundles/${n}`]);
        const [a, b] = [await read(name), await read(of)];
        await close();
        assert.deepEqual(a.streams.map((s) => [s.id, s.tables]), b.streams.map((s) => [s.id, s.tables]));
        assert.deepEqual(a.crossRank, b.crossRank);
        assert.deepEqual(errors, []);
      });
    }

    for (const name of ['graph_breaks', 'sharded']) {
      test(`${name}: reading one artifact fetches manifest + one shard + one pack`, { timeout: TIMEOUT }, async (t) => {
        const b = bundles[name];
        const m = b.manifest;
        const shardOf = (h) => m.blobs.index_path.replace('{prefix}', m.blobs.index_prefix_len ? h.slice(0, m.blobs.index_prefix_len) : 'all');
        const packOf = (h) => m.blobs.packs[b.locations[h].pack].path;
        const first = b.payloads.find((p) => p.kind === 'inductor_output_code') ?? b.payloads[b.payloads.length - 1];
        // Another blob in the same shard and pack, then one in another pack or shard.
        const same = b.payloads.find((p) => p.hash !== first.hash && shardOf(p.hash) === shardOf(first.hash) && packOf(p.hash) === packOf(first.hash));
        const other = b.payloads.find((p) => shardOf(p.hash) !== shardOf(first.hash) || packOf(p.hash) !== packOf(first.hash));
        const { page, errors, close } = await openPage(srv);
        srv.requests.length = 0;
        const url = `${srv.url}/bundles/${name}/`;
        await page.evaluate((u) => window.open1(u), url);
        const one = await page.evaluate((h) => window.text1(h), first.hash);
        const reqs = bundleRequests(srv, name);
        assert.deepEqual(reqs.map((q) => q.file), ['manifest.lite.json.zst', shardOf(first.hash), packOf(first.hash)]);
        assert.equal(one.blake3, first.hash);
        assert.equal(one.size, first.size);
        assert.equal(Buffer.from(one.text, 'utf8').compare(cat(b.dir, first.hash)), 0, 'text vs tlparse-build cat');
        const bytes = reqs.reduce((a, q) => a + q.bytes, 0);
        const decode = await page.evaluate(() => window.decodeStats);
        t.diagnostic(`${mode} ${name}: one ${first.name ?? first.kind} artifact (${first.size} B) = ${reqs.length} requests, ` +
          `${bytes} B transferred (${reqs.map((q) => `${q.file} ${q.bytes} B${q.gzip ? ' gz' : ''}`).join(', ')}); ` +
          `fzstd decoded ${decode.bytesIn} -> ${decode.bytesOut} B in ${decode.ms.toFixed(1)} ms`);

        srv.requests.length = 0;
        await page.evaluate((h) => window.text1(h), same.hash);
        assert.deepEqual(bundleRequests(srv, name), [], 'same shard + pack: served from the loader caches');
        const o = await page.evaluate((h) => window.text1(h), other.hash);
        assert.equal(o.blake3, other.hash);
        const expected = [shardOf(other.hash), packOf(other.hash)].filter((f) => f !== shardOf(first.hash) && f !== packOf(first.hash));
        assert.deepEqual(bundleRequests(srv, name).map((q) => q.file), expected);
        await close();
        assert.deepEqual(errors, []);
      });
    }

    test('refuses a bundle whose min_reader_version is 3, with a clear message', async () => {
      const { page, close } = await openPage(srv);
      const r = await page.evaluate((u) => window.tryOpen(u), `${srv.url}/bundles/future`);
      await close();
      assert.equal(r.ok, false);
      assert.match(r.error, /This bundle \(format version 3\.0\) needs a bundle reader of version 3 or newer/);
      assert.match(r.error, /this bundle-loader\.js is version 2\b/);
    });

    test('a missing bundle fails with the URL and HTTP status', async () => {
      const { page, close } = await openPage(srv);
      const r = await page.evaluate((u) => window.tryOpen(u), `${srv.url}/bundles/no-such-bundle`);
      await close();
      assert.equal(r.ok, false);
      assert.match(r.error, /GET http:\/\/127\.0\.0\.1:\d+\/bundles\/no-such-bundle\/manifest\.lite\.json\.zst: HTTP 404/);
    });

    for (const name of ['graph_breaks', 'multi_rank_runtime']) {
      test(`${name}: artifact(stream, compile id, name) reads compile_directory + one shard + one pack, never the index`, { timeout: TIMEOUT }, async (t) => {
        const b = bundles[name];
        const m = b.manifest;
        const stream = m.streams[m.streams.length - 1].id;
        const parts = m.streams.find((s) => s.id === stream).tables.compile_directory.parts;
        const docs = parts.map((p) => JSON.parse(Buffer.from(unzstd(fs.readFileSync(path.join(b.dir, p)))).toString('utf8')));
        const artifacts = docs.flatMap((d) => d.artifacts);
        const of = (c) => artifacts.slice(c.first_artifact, c.first_artifact + c.artifact_count);
        // The last compile's first artifact with a payload whose name is logged once for it.
        const compile = docs.flatMap((d) => d.compiles).findLast((c) => of(c).some((a) => a.blob));
        const ref = of(compile).find((a) => a.blob && of(compile).filter((x) => x.name === a.name).length === 1);
        const { page, errors, close } = await openPage(srv);
        srv.requests.length = 0;
        const r = await page.evaluate((a) => window.artifact1(...a), [`${srv.url}/bundles/${name}/`, stream, compile.compile_id.slice(1, -1), ref.name]);
        const files = bundleRequests(srv, name).map((q) => q.file);
        await close();
        assert.deepEqual(errors, []);
        const expected = execFileSync(BIN, ['cat', b.dir, compile.compile_id, ref.name, '--stream', stream], { maxBuffer: 1 << 28 });
        assert.equal(Buffer.from(r.text, 'utf8').compare(expected), 0, `${compile.compile_id} ${ref.name} vs tlparse-build cat`);
        assert.deepEqual(r.absent, [null, null]);
        const shard = m.blobs.index_path.replace('{prefix}', m.blobs.index_prefix_len ? ref.blob.slice(0, m.blobs.index_prefix_len) : 'all');
        assert.deepEqual(files, ['manifest.lite.json.zst', ...parts, shard,
          m.blobs.packs[b.locations[ref.blob].pack].path]);
        t.diagnostic(`${mode} ${name}: ${stream} ${compile.compile_id} ${ref.name} (${ref.size} B)`);
      });
    }

    test('sharded: streaming a pack stops once the blob is decoded; later blobs cost one more read at most', { timeout: TIMEOUT }, async (t) => {
      const b = bundles.sharded;
      const m = b.manifest;
      const pack = m.blobs.packs[0];
      const inPack0 = Object.entries(b.locations).filter(([, l]) => l.pack === 0).sort((x, y) => x[1].offset - y[1].offset);
      const packFile = m.files.find((f) => f.path === pack.path);
      // A slow link for packs: they arrive in 8 KiB pieces, so stopping early shows in what was sent.
      const slow = await startServer(mode, MOUNTS(), { trickle: /\/blobs\/packs\// });
      const url = `${slow.url}/bundles/sharded/`;
      const { page, errors, close } = await openPage(slow);
      try {
        const first = await page.evaluate((a) => window.packBlobs(...a), [url, [inPack0[0][0]]]);
        assert.deepEqual(first, [inPack0[0][0]]);
        const stats = await page.evaluate(() => window.streamStats);
        await new Promise((r) => setTimeout(r, 100)); // let the server notice the cancelled response
        const sent = slow.requests.filter((q) => q.path.endsWith(pack.path)).map((q) => q.bytes);
        t.diagnostic(`${mode}: first blob (offset 0) of a ${packFile.size} B pack: ${sent} B sent; ` +
          `decoded ${stats.bytesOut} B (shard included) of the pack's ${pack.raw_size}`);
        assert.equal(sent.length, 1);
        // The server pauses 3 s once half the pack is sent: a loader that stopped early has
        // cancelled by then, one that reads the whole pack gets the rest.
        assert.ok(sent[0] < packFile.size, `sent ${sent[0]} B of a ${packFile.size} B pack`);
        assert.ok(stats.bytesOut < pack.raw_size / 2, `decoded ${stats.bytesOut} B of ${pack.raw_size}`);
        // Every blob of the pack in order: right bytes, and the pack is read at most twice.
        slow.requests.length = 0;
        const all = await page.evaluate((a) => window.packBlobs(...a), [url, inPack0.map(([h]) => h)]);
        assert.deepEqual(all, inPack0.map(([h]) => h));
        const packReads = slow.requests.filter((q) => q.path.endsWith(pack.path)).length;
        assert.ok(packReads >= 1 && packReads <= 2, `pack read ${packReads} times`);
        assert.deepEqual(errors, []);
      } finally {
        await close();
        await slow.close();
      }
    });

    test('without zstdDecompress: native DecompressionStream("zstd") or a clear error', async (t) => {
      const b = bundles.simple;
      const hash = b.payloads[0].hash;
      const { page, close } = await openPage(srv);
      const r = await page.evaluate(([u, h]) => window.withoutDecoder(u, h), [`${srv.url}/bundles/simple`, hash]);
      await close();
      t.diagnostic(`native DecompressionStream('zstd') in this Chromium: ${r.native}`);
      if (r.native) {
        assert.equal(r.ok, true, r.error);
        assert.equal(r.blake3, hash);
      } else {
        assert.equal(r.ok, false);
        assert.match(r.error, /no zstd DecompressionStream.*zstdStream.*fzstd/);
      }
    });

    test('indexRows can be abandoned early and read again', async () => {
      const { page, errors, close } = await openPage(srv);
      const r = await page.evaluate(([u, s]) => window.earlyStop(u, s, 5), [`${srv.url}/bundles/graph_breaks`, 'log0']);
      await close();
      assert.deepEqual(r.rows, [0, 1, 2, 3, 4]);
      assert.equal(r.again, bundles.graph_breaks.manifest.streams[0].entries);
      assert.deepEqual(errors, []);
    });

    if (mode === 'ghpages') {
      test('screenshot of the test page', { timeout: TIMEOUT }, async () => {
        const { page, errors, close } = await openPage(srv);
        for (const name of Object.keys(FIXTURES)) {
          const r = await page.evaluate(([n, u]) => window.checkBundle(n, u), [name, `${srv.url}/bundles/${name}`]);
          assert.deepEqual(r.problems, []);
        }
        await page.evaluate((u) => window.tryOpen(u), `${srv.url}/bundles/future`);
        fs.mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: path.join(SHOTS, 'bundle-loader.png'), fullPage: true });
        await close();
        // The future bundle is refused from its lite manifest: no request fails.
        assert.deepEqual(errors, []);
      });
    }
  });
}
