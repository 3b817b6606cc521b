// Tables stored in parts (format 2.0): the committed test bundle's tables cut by hand into three
// parts each (every top-level list sliced, every other member copied), served with a manifest
// listing the parts; `table()` must give back the table read from its single file, and
// `tableParts()` the parts in order. Real multi-part bundles built by tlparse-build are read in
// tests/browser/bundle-loader.test.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as fzstd from 'fzstd';
import { openBundle, zstdStreamFromFzstd, LITE_MANIFEST } from '../src/bundle-loader.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BUNDLE = path.resolve(HERE, '../../../crates/tlparse-bundle/tests/bundles/simple');
const BASE = 'http://bundle.test/simple/';
const PARTS = 3;

const diskManifest = () => JSON.parse(fs.readFileSync(path.join(BUNDLE, 'manifest.json'), 'utf8'));
/** The one file of a table reference of the committed bundle (built with the default part size). */
const onlyFile = (ref) => {
  const paths = ref.parts ?? [ref.path];
  assert.equal(paths.length, 1, 'the test bundle\'s tables are small: one part each');
  return paths[0];
};
const unzstdJson = (rel) => JSON.parse(Buffer.from(fzstd.decompress(fs.readFileSync(path.join(BUNDLE, rel)))).toString('utf8'));

/** `table` cut into `n` documents: each top-level list sliced in order, the other members copied. */
function cut(table, n) {
  return Array.from({ length: n }, (_, k) => Object.fromEntries(Object.entries(table).map(([key, value]) => {
    if (!Array.isArray(value)) return [key, structuredClone(value)];
    const size = Math.ceil(value.length / n);
    return [key, value.slice(k * size, (k + 1) * size)];
  })));
}

/**
 * The committed bundle with every stream table in PARTS parts (`tables/<stream>/<name>.<k>.json`,
 * served as plain JSON as a host that decodes `.zst` would), and with `cross` (a stream table's
 * name) also listed as a cross-rank table in parts. Returns the served files by path, the manifest,
 * and the parts written per table path.
 */
function splitBundle({ cross = null } = {}) {
  const m = diskManifest();
  const served = new Map();
  const written = new Map();
  const split = (dir, name, ref) => {
    const parts = cut(unzstdJson(onlyFile(ref)), PARTS);
    const paths = parts.map((_, k) => `tables/${dir}/${name}.${k}.json`);
    parts.forEach((p, k) => served.set(paths[k], Buffer.from(JSON.stringify(p))));
    written.set(`${dir}/${name}`, parts);
    return { parts: paths, rows: ref.rows };
  };
  for (const s of m.streams) {
    for (const [name, ref] of Object.entries(s.tables)) s.tables[name] = split(s.id, name, ref);
  }
  if (cross) {
    const original = diskManifest().streams[0].tables[cross];
    m.cross_rank = { ...(m.cross_rank ?? {}), tables: { [cross]: split('cross_rank', cross, original) } };
  }
  const { files, viewer, ...lite } = structuredClone(m);
  for (const i of lite.inputs) delete i.blake3;
  served.set(LITE_MANIFEST, Buffer.from(JSON.stringify(lite)));
  served.set('manifest.json', Buffer.from(JSON.stringify(m)));
  return { served, manifest: m, written };
}

/** A fetch serving `served` first, else the committed bundle's files; `gate(rel)` may hold a response. */
function fetchOf(served, { asked = [], gate = async () => {} } = {}) {
  return async (url) => {
    const rel = decodeURIComponent(new URL(url).pathname.slice(new URL(BASE).pathname.length));
    asked.push(rel);
    await gate(rel);
    const bytes = served.get(rel) ?? (fs.existsSync(path.join(BUNDLE, rel)) ? fs.readFileSync(path.join(BUNDLE, rel)) : null);
    if (!bytes) return new Response('not found', { status: 404 });
    return new Response(bytes, { headers: { 'Content-Length': String(bytes.length) } });
  };
}

const opts = (fetch, extra = {}) => ({ fetch, zstdStream: zstdStreamFromFzstd(fzstd), ...extra });

test('table(): a table cut into three parts reads as the same table from its single file', async () => {
  const { served } = splitBundle();
  const whole = await openBundle(BASE, opts(fetchOf(new Map())));
  const parted = await openBundle(BASE, opts(fetchOf(served)));
  const s = whole.manifest.streams[0].id;
  const names = Object.keys(whole.manifest.streams[0].tables);
  assert.ok(names.length >= 10, `${names.length} tables`);
  for (const name of names) {
    assert.deepEqual(await parted.table(s, name), await whole.table(s, name), name);
  }
  // Checked in simple.log's bundle: the search table has 44 terms, so each part holds some.
  const search = await parted.table(s, 'search');
  assert.equal(search.terms.length, 44);
  // Whole-buffer decoding reads the parts alike.
  const buffered = await openBundle(BASE, { fetch: fetchOf(served), zstdDecompress: fzstd.decompress });
  assert.deepEqual(await buffered.table(s, 'search'), search);
});

test('tableParts(): each part\'s document, in order; nothing for an absent table', async () => {
  const { served, written } = splitBundle();
  const b = await openBundle(BASE, opts(fetchOf(served)));
  const s = b.manifest.streams[0].id;
  const parts = [];
  for await (const part of b.tableParts(s, 'search')) parts.push(part);
  assert.equal(parts.length, PARTS);
  assert.deepEqual(parts, written.get(`${s}/search`));
  assert.deepEqual(parts.map((p) => p.terms.length), [15, 15, 14]);
  const none = [];
  for await (const part of b.tableParts(s, 'no_such_table')) none.push(part);
  assert.deepEqual(none, []);
  // After a whole read, the parts come from the cache: no second fetch.
  const asked = [];
  const cached = await openBundle(BASE, opts(fetchOf(served, { asked })));
  await cached.table(s, 'log_volume');
  const again = [];
  for await (const part of cached.tableParts(s, 'log_volume')) again.push(part);
  assert.deepEqual(again, written.get(`${s}/log_volume`));
  assert.equal(asked.filter((p) => p.startsWith(`tables/${s}/log_volume.`)).length, PARTS);
});

test('crossRankTable() merges parts and crossRankTableParts() yields them in order', async () => {
  const { served, written } = splitBundle({ cross: 'stack_trie' });
  const b = await openBundle(BASE, opts(fetchOf(served)));
  const s = b.manifest.streams[0].id;
  assert.deepEqual(await b.crossRankTable('stack_trie'), await b.table(s, 'stack_trie'));
  const parts = [];
  for await (const part of b.crossRankTableParts('stack_trie')) parts.push(part);
  assert.deepEqual(parts, written.get('cross_rank/stack_trie'));
  const none = [];
  for await (const part of b.crossRankTableParts('compile_alignment')) none.push(part);
  assert.deepEqual(none, []);
  assert.equal(await b.crossRankTable('compile_alignment'), null);
});

test('a merged read fetches a few parts at once, never all of a long table at once', async () => {
  // search cut into 10 parts, each response held until the test has seen how many are asked for.
  const m = diskManifest();
  const table = unzstdJson(onlyFile(m.streams[0].tables.search));
  const served = new Map();
  const paths = cut(table, 10).map((p, k) => {
    served.set(`tables/log0/search.${k}.json`, Buffer.from(JSON.stringify(p)));
    return `tables/log0/search.${k}.json`;
  });
  m.streams[0].tables.search = { parts: paths, rows: table.terms.length };
  served.set(LITE_MANIFEST, Buffer.from(JSON.stringify(m)));
  let inFlight = 0;
  let most = 0;
  const gate = async (rel) => {
    if (!rel.startsWith('tables/')) return;
    most = Math.max(most, ++inFlight);
    await new Promise((resolve) => setTimeout(resolve, 20));
    inFlight--;
  };
  const asked = [];
  const b = await openBundle(BASE, opts(fetchOf(served, { asked, gate })));
  assert.deepEqual((await b.table('log0', 'search')).terms, table.terms);
  assert.deepEqual(asked.filter((p) => p.startsWith('tables/')), paths, 'each part once, in order');
  assert.ok(most >= 2 && most <= 4, `${most} parts in flight at most`);
  // A walk stopped after the first part fetches only the few ahead; the others end unfetched.
  const reports = [];
  asked.length = 0;
  const walker = await openBundle(BASE, opts(fetchOf(served, { asked, gate }), { onProgress: (p) => reports.push(p) }));
  asked.length = 0;
  for await (const part of walker.tableParts('log0', 'search')) { assert.deepEqual(part.terms, table.terms.slice(0, 5)); break; }
  await new Promise((resolve) => setTimeout(resolve, 100)); // the parts fetched ahead finish reading
  assert.deepEqual(asked, paths.slice(0, 4));
  assert.deepEqual(paths.map((p) => reports.filter((r) => r.path === p && r.done).map((r) => r.loaded > 0)),
    paths.map((_, k) => [k < 4]));
});

test('onProgress: every part announced when the read starts, then each to its size; a walk stopped early ends the rest', async () => {
  const { served } = splitBundle();
  const reports = [];
  const b = await openBundle(BASE, opts(fetchOf(served), { onProgress: (p) => reports.push({ ...p }) }));
  const s = b.manifest.streams[0];
  reports.length = 0;
  await b.table(s.id, 'search');
  const paths = s.tables.search.parts;
  // The first PARTS reports announce every part (loaded 0, size unknown), before any byte.
  assert.deepEqual(reports.slice(0, PARTS).map((r) => [r.path, r.loaded, r.total, r.done, r.part]),
    paths.map((p, index) => [p, 0, null, false, { index, count: PARTS }]));
  for (const [k, p] of paths.entries()) {
    const mine = reports.filter((r) => r.path === p);
    assert.ok(mine.every((r) => r.request === mine[0].request && r.part.index === k));
    assert.deepEqual([mine.at(-1).loaded, mine.at(-1).total, mine.at(-1).done], [served.get(p).length, served.get(p).length, true]);
    assert.equal(mine.filter((r) => r.done).length, 1);
  }
  // A walk of a 3-part table stopped after its first part: every part still ends `done`.
  reports.length = 0;
  for await (const part of b.tableParts(s.id, 'log_volume')) { assert.ok(part.by_kind); break; }
  await new Promise((resolve) => setTimeout(resolve, 50)); // parts fetched ahead finish reading
  const ends = s.tables.log_volume.parts.map((p) => reports.filter((r) => r.path === p && r.done).length);
  assert.deepEqual(ends, [1, 1, 1]);
});

test('a format 1 bundle is refused, saying to rebuild it', async () => {
  const m = diskManifest();
  m.format_version = '1.0';
  m.min_reader_version = 1;
  const served = new Map([[LITE_MANIFEST, Buffer.from(JSON.stringify(m))]]);
  await assert.rejects(openBundle(BASE, opts(fetchOf(served))),
    /^Error: This bundle is of format 1\.0, which this bundle-loader\.js \(format 2\) does not read: rebuild it/);
});

test('a table reference without parts, or a part missing a list its first part has, is an error', async () => {
  const { served, manifest } = splitBundle();
  const s = manifest.streams[0];
  const broken = structuredClone(manifest);
  broken.streams[0].tables.search = { parts: [], rows: 44 };
  const lite = new Map(served).set(LITE_MANIFEST, Buffer.from(JSON.stringify(broken)));
  const b = await openBundle(BASE, opts(fetchOf(lite)));
  await assert.rejects(b.table(s.id, 'search'), /a table reference without parts/);
  const missing = new Map(served).set(s.tables.search.parts[1], Buffer.from(JSON.stringify({ compiles: [] })));
  const c = await openBundle(BASE, opts(fetchOf(missing)));
  await assert.rejects(c.table(s.id, 'search'), /a table part has no list "terms"/);
});
