// bundle-loader.js in Node (>= 20) against the committed test bundle
// (crates/tlparse-bundle/tests/bundles/simple, built from fixtures-repo/tlparse-tests/simple.log),
// through a fetch that reads files. The real-browser tests are in tests/browser/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as fzstd from 'fzstd';
import { openBundle, compileArtifacts, zstdStreamFromFzstd, HttpError, READER_VERSION, RowNumbering, manifestUrl, liteManifestUrl, LITE_MANIFEST } from '../src/bundle-loader.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BUNDLE = path.resolve(HERE, '../../../crates/tlparse-bundle/tests/bundles/simple');
const BASE = 'http://bundle.test/simple/';

/** A fetch serving BUNDLE at BASE, recording the paths asked for. */
function fileFetch(asked = []) {
  return async (url) => {
    const rel = decodeURIComponent(new URL(url).pathname.slice(new URL(BASE).pathname.length));
    asked.push(rel);
    const file = path.join(BUNDLE, rel);
    if (!file.startsWith(BUNDLE + path.sep) || !fs.existsSync(file)) return new Response('not found', { status: 404 });
    const bytes = fs.readFileSync(file);
    return new Response(bytes, { headers: { 'Content-Length': String(bytes.length) } });
  };
}

/** manifest.json of the test bundle, from disk. */
const diskManifest = () => JSON.parse(fs.readFileSync(path.join(BUNDLE, 'manifest.json'), 'utf8'));

/** What the lite manifest must be: the manifest without `files`, `viewer` and the inputs' `blake3`. */
function liteOf(manifest) {
  const { files, viewer, ...rest } = structuredClone(manifest);
  for (const i of rest.inputs) delete i.blake3;
  return rest;
}

/** A fetch serving BUNDLE with its manifest (and lite manifest, as plain JSON) replaced by `m`. */
function fetchWithManifest(m) {
  return async (url) => {
    if (String(url).endsWith('manifest.json')) return new Response(JSON.stringify(m));
    if (String(url).endsWith(LITE_MANIFEST)) return new Response(JSON.stringify(liteOf(m)));
    return fileFetch()(url);
  };
}

const open = (asked, extra = {}) => openBundle(BASE, { fetch: fileFetch(asked), zstdStream: zstdStreamFromFzstd(fzstd), ...extra });
const unzstdJson = (rel) => JSON.parse(Buffer.from(fzstd.decompress(fs.readFileSync(path.join(BUNDLE, rel)))).toString('utf8'));

test('artifact(): [0/0] dynamo_output_graph through compile_directory, one shard and one pack', async () => {
  const asked = [];
  const b = await open(asked);
  const m = b.manifest;
  const stream = m.streams[0];
  // Checked in simple.log: compile [0/0] logs dynamo_output_graph; its blob is in compile_directory.
  const dir = unzstdJson(stream.tables.compile_directory.parts[0]);
  const ref = compileArtifacts(dir, dir.compiles.find((c) => c.compile_id === '[0/0]')).find((a) => a.name === 'dynamo_output_graph');
  assert.equal(ref.compile_id, '[0/0]');
  const text = await b.artifact(stream.id, '0/0', 'dynamo_output_graph');
  assert.match(text, /^class GraphModule\(torch\.nn\.Module\):/);
  assert.equal(Buffer.byteLength(text, 'utf8'), ref.size);
  assert.equal(text, await b.text(ref.blob));
  const shard = m.blobs.index_path.replace('{prefix}', m.blobs.index_prefix_len ? ref.blob.slice(0, m.blobs.index_prefix_len) : 'all');
  const pack = m.blobs.packs[unzstdJson(shard)[ref.blob].pack].path;
  assert.deepEqual(asked.slice(0, 4), [LITE_MANIFEST, stream.tables.compile_directory.parts[0], shard, pack]);
  assert.ok(!asked.some((p) => p.startsWith('index/')), 'never the event index');
  assert.equal(await b.artifact(stream.id, '[0/0]', 'no_such_artifact'), null);
  assert.equal(await b.artifact(stream.id, '[99/0]', 'dynamo_output_graph'), null);
});

test('compileArtifacts(): the slice of each compile of the flat list, in order; a row naming artifacts past the list throws', async () => {
  const dir = unzstdJson((await open()).manifest.streams[0].tables.compile_directory.parts[0]);
  const sliced = dir.compiles.flatMap((c) => compileArtifacts(dir, c));
  assert.deepEqual(sliced, dir.artifacts, 'the slices tile the list');
  for (const c of dir.compiles) assert.ok(compileArtifacts(dir, c).every((a) => a.compile_id === c.compile_id), c.compile_id);
  const last = dir.compiles.at(-1);
  assert.throws(() => compileArtifacts(dir, { ...last, artifact_count: last.artifact_count + 1 }),
    new RegExp(`compile ${last.compile_id.replace(/[[\]]/g, '\\$&')} names artifacts \\d+\\.\\.\\d+, but the table has ${dir.artifacts.length}`));
  assert.throws(() => compileArtifacts(dir, { ...last, first_artifact: -1 }), /names artifacts -1\./);
});

test('whole-buffer and streaming decoders read every blob alike', async () => {
  const streaming = await open([]);
  const whole = await openBundle(BASE, { fetch: fileFetch(), zstdDecompress: fzstd.decompress });
  const shards = diskManifest().files.map((f) => f.path).filter((p) => p.startsWith('blobs/index/'));
  let n = 0;
  for (const shard of shards) {
    for (const [hash, loc] of Object.entries(unzstdJson(shard))) {
      const [a, b] = [await streaming.blob(hash), await whole.blob(hash)];
      assert.equal(a.length, loc.size);
      assert.deepEqual(a, b);
      n++;
    }
  }
  assert.ok(n > 10, `${n} blobs`);
});

test('typed tables: compile_directory rows and an absent table', async () => {
  const b = await open([]);
  const s = b.manifest.streams[0].id;
  const dir = await b.table(s, 'compile_directory');
  // simple.log logs one compile: 58 envelopes, all with frame_id 0 and frame_compile_id 0.
  assert.deepEqual(dir.compiles.map((c) => [c.compile_id, c.status]), [['[0/0]', 'ok']]);
  assert.equal(await b.table(s, 'no_such_table'), null);
  assert.equal(await b.crossRankTable('compile_alignment'), null, 'one stream: no cross-rank tables');
});

test('a bundle needing the next reader version is refused, naming both versions', async () => {
  assert.equal(READER_VERSION, 2);
  assert.equal(diskManifest().format_version, `${READER_VERSION}.0`);
  const next = READER_VERSION + 1;
  const future = fetchWithManifest({ ...diskManifest(), format_version: `${next}.0`, min_reader_version: next });
  await assert.rejects(openBundle(BASE, { fetch: future }),
    new RegExp(`needs a bundle reader of version ${next} or newer; this bundle-loader\\.js is version ${READER_VERSION}`));
});

test('a bundle of a newer minor version with fields this loader does not know is read, the fields passed over', async () => {
  const m = diskManifest();
  m.format_version = `${READER_VERSION}.7`;
  m.a_field_of_format_1_7 = { x: 1 };
  m.streams[0].another_new_field = [1, 2];
  const b = await openBundle(BASE, { fetch: fetchWithManifest(m), zstdStream: zstdStreamFromFzstd(fzstd) });
  assert.equal(b.manifest.format_version, `${READER_VERSION}.7`);
  const s = b.manifest.streams[0].id;
  const dir = await b.table(s, 'compile_directory');
  assert.deepEqual(dir.compiles.map((c) => [c.compile_id, c.status]), [['[0/0]', 'ok']]);
  const rows = [];
  for await (const row of b.indexRows(s)) rows.push(row);
  assert.equal(rows.length, m.streams[0].entries);
});

test('an index or diagnostics holding more rows than the manifest declares is refused at the first extra row', async () => {
  const m = diskManifest();
  const declared = m.streams[0].entries;
  const decoders = { streaming: { zstdStream: zstdStreamFromFzstd(fzstd) }, whole: { zstdDecompress: fzstd.decompress } };
  for (const [streamed, decoder] of Object.entries(decoders)) {
    // The same bundle, its manifest declaring two rows fewer than the index holds.
    const short = structuredClone(m);
    short.streams[0].entries = declared - 2;
    const b = await openBundle(BASE, { fetch: fetchWithManifest(short), ...decoder });
    const rows = [];
    await assert.rejects((async () => { for await (const r of b.indexRows(m.streams[0].id)) rows.push(r); })(),
      new RegExp(`^Error: ${m.streams[0].index.replace(/[.]/g, '\\.')}: more rows than the ${declared - 2} entries the manifest declares$`), streamed);
    assert.equal(rows.length, declared - 2, streamed);
  }
  const served = new Map([['diagnostics.jsonl', '{"kind":"bad_prefix"}\n{"kind":"bad_prefix"}\n']]);
  const counted = { ...m, diagnostics: { ...m.diagnostics, path: 'diagnostics.jsonl', total: 1 } };
  const fetchFn = async (url) => {
    const rel = new URL(url).pathname.split('/').pop();
    return served.has(rel) ? new Response(served.get(rel)) : fetchWithManifest(counted)(url);
  };
  const b = await openBundle(BASE, { fetch: fetchFn });
  const seen = [];
  await assert.rejects((async () => { for await (const d of b.diagnostics()) seen.push(d); })(),
    /^Error: diagnostics\.jsonl: more rows than the 1 diagnostics the manifest declares$/);
  assert.equal(seen.length, 1);
});

test('liteManifestUrl(base): the file openBundle fetches first, with or without the slash; a 404 fails the open', async () => {
  const asked = [];
  await openBundle('http://bundles.test/run', { fetch: async (u) => { asked.push(String(u)); return new Response('{"format":"x"}'); } })
    .catch(() => {});
  assert.deepEqual(asked, [liteManifestUrl('http://bundles.test/run').href]);
  assert.equal(liteManifestUrl('http://bundles.test/run/').href, 'http://bundles.test/run/manifest.lite.json.zst');
  asked.length = 0;
  await assert.rejects(openBundle('http://bundles.test/run', {
    fetch: async (u) => { asked.push(String(u)); return new Response('', { status: 404 }); },
  }), /manifest\.lite\.json\.zst.*404/);
  assert.deepEqual(asked, [liteManifestUrl('http://bundles.test/run').href]);
  assert.equal(manifestUrl('http://bundles.test/run/').href, 'http://bundles.test/run/manifest.json');
});

test('the lite manifest: the manifest without files, viewer and the inputs\' blake3; fullManifest() fetches the whole once', async () => {
  const asked = [];
  const b = await open(asked);
  assert.deepEqual(asked, [LITE_MANIFEST]);
  // Checked on the test bundle: manifest.json has `files` and an input blake3; the lite one neither.
  const disk = diskManifest();
  assert.ok(disk.files.length > 10 && /^[0-9a-f]{64}$/.test(disk.inputs[0].blake3));
  assert.deepEqual(b.manifest, liteOf(disk));
  assert.equal(b.manifest.files, undefined);
  assert.deepEqual(await b.fullManifest(), disk);
  assert.deepEqual(await b.fullManifest(), disk);
  assert.deepEqual(asked, [LITE_MANIFEST, 'manifest.json']);
});

test('pack(i): whole packs of raw_size bytes, whose slices at locate() offsets are the blobs', async () => {
  const b = await open([]);
  const m = b.manifest;
  const packs = await Promise.all(m.blobs.packs.map((_, i) => b.pack(i)));
  packs.forEach((bytes, i) => assert.equal(bytes.length, m.blobs.packs[i].raw_size));
  let n = 0;
  for (const shard of diskManifest().files.map((f) => f.path).filter((p) => p.startsWith('blobs/index/'))) {
    for (const [hash, loc] of Object.entries(unzstdJson(shard))) {
      assert.deepEqual(packs[loc.pack].slice(loc.offset, loc.offset + loc.size), await b.blob(hash));
      n++;
    }
  }
  assert.ok(n > 10, `${n} blobs`);
  await assert.rejects(b.pack(m.blobs.packs.length), /no pack/);
});

test('a pack that decodes past its announced size is refused', async () => {
  const m = diskManifest();
  for (const p of m.blobs.packs) p.raw_size = 10;
  const lying = await openBundle(BASE, { fetch: fetchWithManifest(m), zstdStream: zstdStreamFromFzstd(fzstd) });
  const hash = Object.keys(unzstdJson(m.files.find((f) => f.path.startsWith('blobs/index/')).path))[0];
  await assert.rejects(lying.blob(hash), /past its 10 bytes|more than the 10 bytes/);
});

test('table() then artifact() fetch compile_directory once; each call parses a fresh copy', async () => {
  const asked = [];
  const b = await open(asked);
  const s = b.manifest.streams[0];
  const first = await b.table(s.id, 'compile_directory');
  first.compiles.length = 0; // a caller changing its copy changes nobody else's
  assert.match(await b.artifact(s.id, '[0/0]', 'dynamo_output_graph'), /^class GraphModule/);
  assert.equal((await b.table(s.id, 'compile_directory')).compiles.length, 1);
  assert.equal(asked.filter((p) => p === s.tables.compile_directory.parts[0]).length, 1);
});

test('a network error names the URL and the usual cause (CORS)', async () => {
  const failing = async () => { throw new TypeError('Failed to fetch'); };
  await assert.rejects(openBundle(BASE, { fetch: failing }),
    /GET http:\/\/bundle\.test\/simple\/manifest\.lite\.json\.zst: Failed to fetch \(network error; .*CORS/);
});

test('an HTTP error status is an HttpError with the status and WWW-Authenticate', async () => {
  const refusing = async () => new Response('a bearer token is required\n', {
    status: 401, statusText: 'Unauthorized', headers: { 'WWW-Authenticate': 'Bearer' },
  });
  const e = await openBundle(BASE, { fetch: refusing }).then(() => null, (e) => e);
  assert.ok(e instanceof HttpError && e instanceof Error);
  assert.equal(String(e), `Error: GET ${BASE}${LITE_MANIFEST}: HTTP 401 Unauthorized`);
  assert.equal(e.status, 401);
  assert.equal(e.url, `${BASE}${LITE_MANIFEST}`);
  assert.equal(e.wwwAuthenticate, 'Bearer');
  const missing = await open([]).then((b) => b.bytes('no/such/file')).then(() => null, (e) => e);
  assert.ok(missing instanceof HttpError);
  assert.equal(missing.status, 404);
  assert.equal(missing.wwwAuthenticate, null);
});

test('onProgress: each file reported from 0 bytes to its size (the manifest\'s, else Content-Length), done once', async () => {
  const reports = [];
  const b = await open([], { onProgress: (p) => reports.push({ ...p }) });
  const stream = b.manifest.streams[0];
  // The lite manifest: its size is unknown before it is read, so total is its Content-Length.
  const lite = fs.statSync(path.join(BUNDLE, LITE_MANIFEST)).size;
  const mf = reports.filter((r) => r.path === LITE_MANIFEST);
  assert.deepEqual(mf[0], { path: LITE_MANIFEST, loaded: 0, total: null, done: false, request: mf[0].request });
  assert.equal(mf.at(-1).total, lite);
  assert.equal(mf.at(-1).done, true);
  assert.equal(mf.at(-1).loaded, lite);
  reports.length = 0;
  await b.table(stream.id, 'compile_directory');
  const file = stream.tables.compile_directory.parts[0];
  const size = fs.statSync(path.join(BUNDLE, file)).size;
  // The lite manifest lists no file sizes: the table's total is its Content-Length, once it answers.
  assert.deepEqual([reports[0].total, reports[1].total], [null, size]);
  assert.ok(reports.slice(1).every((r) => r.path === file && r.total === size && r.request === reports[0].request));
  assert.deepEqual([reports[0].loaded, reports[0].done], [0, false]);
  assert.deepEqual([reports.at(-1).loaded, reports.at(-1).done], [size, true]);
  assert.equal(reports.filter((r) => r.done).length, 1);
  for (let i = 1; i < reports.length; i++) assert.ok(reports[i].loaded >= reports[i - 1].loaded);
  // A 404 read with missingOk and a failed read still end with done.
  reports.length = 0;
  await assert.rejects(b.bytes('tables/no-such-file.json'));
  assert.deepEqual(reports.map((r) => [r.loaded, r.done]), [[0, false], [0, true]]);
});

test('without onProgress the loader reads as before (no reports, same bytes)', async () => {
  const b = await open([]);
  assert.equal(b.onProgress, null);
  const with_ = await open([], { onProgress: () => {} });
  const stream = b.manifest.streams[0];
  assert.deepEqual(await b.bytes(stream.tables.compile_directory.parts[0]), await with_.bytes(stream.tables.compile_directory.parts[0]));
});

test('indexRows streams: rows split across any chunk boundary come out whole, as from the whole buffer', async () => {
  const stream = JSON.parse(fs.readFileSync(path.join(BUNDLE, 'manifest.json'), 'utf8')).streams[0];
  const raw = Buffer.from(fzstd.decompress(fs.readFileSync(path.join(BUNDLE, stream.index))));
  // The index served decoded (as a host that decodes .zst would) in 7-byte pieces: every line is cut.
  const pieces = (bytes, n) => new ReadableStream({
    start(out) { for (let i = 0; i < bytes.length; i += n) out.enqueue(new Uint8Array(bytes.subarray(i, i + n))); out.close(); },
  });
  const chopped = async (url) => (new URL(url).pathname.endsWith(stream.index) ? new Response(pieces(raw, 7)) : fileFetch()(url));
  const b = await openBundle(BASE, { fetch: chopped, zstdStream: zstdStreamFromFzstd(fzstd) });
  const rows = [];
  for await (const r of b.indexRows(stream.id)) rows.push(r);
  const numbering = new RowNumbering();
  const expected = raw.toString('utf8').split('\n').filter((l) => l.trim()).map((l) => numbering.fill(JSON.parse(l)));
  assert.equal(rows.length, stream.entries);
  // simple.log line 97 is the dynamo_start of [0/0], its 20th entry: stored without seq or line.
  assert.deepEqual([rows[19].seq, rows[19].line, rows[19].kind], [19, 97, 'dynamo_start']);
  assert.ok(!/"(seq|line)":/.test(raw.toString('utf8').split('\n')[19]));
  assert.deepEqual(rows, expected);
  // The same through the whole-buffer decoder, from the zstd file.
  const whole = await openBundle(BASE, { fetch: fileFetch(), zstdDecompress: fzstd.decompress });
  const again = [];
  for await (const r of whole.indexRows(stream.id)) again.push(r);
  assert.deepEqual(again, expected);
});

test('RowNumbering: seq is the position; a stored line restarts the count that payload lines advance', () => {
  const numbering = new RowNumbering();
  const stored = [{}, { line: 10, payload: { lines: 2 } }, {}, { line: 'x' }, { line: 20 }];
  const rows = stored.map((r) => numbering.fill({ ...r }));
  assert.deepEqual(rows.map((r) => [r.seq, r.line]), [[0, 1], [1, 10], [2, 13], [3, 14], [4, 20]]);
});
