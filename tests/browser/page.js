// Test page: exercises bundle-loader.js in the browser. Node (playwright-core) calls the
// window.* functions below with page.evaluate and asserts on what they return.
import { openBundle, READER_VERSION, zstdStreamFromFzstd } from 'bundle-loader';
import * as fzstd from 'fzstd';
import { blake3 } from '@noble/hashes/blake3.js';
import { bytesToHex } from '@noble/hashes/utils.js';

const enc = new TextEncoder();
/** Time spent in fzstd, for the report. */
window.decodeStats = { calls: 0, ms: 0, bytesIn: 0, bytesOut: 0 };
const opts = {
  zstdDecompress(data) {
    const t0 = performance.now();
    const out = fzstd.decompress(data);
    Object.assign(window.decodeStats, { calls: window.decodeStats.calls + 1, ms: window.decodeStats.ms + performance.now() - t0,
      bytesIn: window.decodeStats.bytesIn + data.length, bytesOut: window.decodeStats.bytesOut + out.length });
    return out;
  },
};
/** Streaming decoding (fzstd's Decompress), counting the compressed bytes it was fed. */
window.streamStats = { bytesIn: 0, bytesOut: 0 };
const fzstdStream = zstdStreamFromFzstd(fzstd);
const streamOpts = {
  zstdStream() {
    const count = new TransformStream({
      transform(chunk, out) { window.streamStats.bytesIn += chunk.length; out.enqueue(chunk); },
    });
    const decode = fzstdStream();
    const tally = new TransformStream({
      transform(chunk, out) { window.streamStats.bytesOut += chunk.length; out.enqueue(chunk); },
    });
    return { writable: count.writable, readable: count.readable.pipeThrough(decode).pipeThrough(tally) };
  },
};
const $ = (sel) => document.querySelector(sel);

/** The blake3 digests of the documents an async iterator yields (a table's parts), in order. */
async function partDigests(iterator) {
  const out = [];
  for await (const part of iterator) out.push(bytesToHex(blake3(enc.encode(JSON.stringify(part)))));
  return out;
}

function note(html) {
  const p = document.createElement('p');
  p.innerHTML = html;
  $('#notes').append(p);
}

/** Reads everything in a bundle and checks it; returns a summary for Node to assert on. */
window.checkBundle = async (name, url) => {
  const t0 = performance.now();
  const parts = {}; // 'stream/table' or 'cross_rank/table' -> digests of the parts tableParts() yields
  const b = await openBundle(url, opts);
  const m = b.manifest;
  const referenced = new Map(); // payload hash -> size, from the index rows
  const streams = [];
  for (const s of m.streams) {
    const table = await b.stacks(s.id);
    const h = blake3.create();
    let rows = 0, stackRefs = 0, badStackRefs = 0, lastSeq = -1, badSeq = 0;
    for await (const row of b.indexRows(s.id)) {
      rows++;
      h.update(enc.encode(JSON.stringify(row) + '\n'));
      if (row.seq !== lastSeq + 1) badSeq++;
      lastSeq = row.seq;
      if (row.payload) referenced.set(row.payload.hash, row.payload.size);
      for (const sid of [row.stack, row.meta?.stack]) {
        if (Number.isInteger(sid)) { stackRefs++; if (!(sid >= 0 && sid < table.stacks.length)) badStackRefs++; }
      }
    }
    const badFrameRefs = table.stacks.flat().filter((f) => !(f >= 0 && f < table.frames.length)).length;
    // Every table, as the loader reads it, digested for Node to compare with its own decoding.
    const tables = {};
    for (const name of Object.keys(s.tables ?? {}).sort()) {
      tables[name] = bytesToHex(blake3(enc.encode(JSON.stringify(await b.table(s.id, name)))));
      parts[`${s.id}/${name}`] = await partDigests(b.tableParts(s.id, name));
    }
    const absentTable = await b.table(s.id, 'no_such_table');
    const trace = await b.chromeTrace(s.id);
    const traceEvents = trace ? JSON.parse(new TextDecoder().decode(trace)).traceEvents.length : null;
    streams.push({ id: s.id, entries: s.entries, rows, digest: bytesToHex(h.digest()), stackRefs, badStackRefs,
      badFrameRefs, badSeq, stacks: table.stacks.length, frames: table.frames.length, tables, absentTable, traceEvents });
  }

  // Every cross-rank table and trace, digested like the per-stream ones.
  const crossRank = {};
  for (const name of Object.keys(m.cross_rank?.tables ?? {}).sort()) {
    crossRank[name] = bytesToHex(blake3(enc.encode(JSON.stringify(await b.crossRankTable(name)))));
    parts[`cross_rank/${name}`] = await partDigests(b.crossRankTableParts(name));
  }
  const absentCrossRank = await b.crossRankTable('no_such_table');
  const crossTraces = {};
  for (const field of ['chrome_trace', 'runtime_estimates_trace']) {
    const t = await b.crossRankTrace(field);
    crossTraces[field] = t ? JSON.parse(new TextDecoder().decode(t)).traceEvents.length : null;
  }

  // Every blob of every shard (shards listed in manifest.files), in pack order.
  const shardFiles = (await b.fullManifest()).files.map((f) => f.path).filter((p) => p.startsWith('blobs/index/'));
  const all = [];
  for (const p of shardFiles) {
    const entries = JSON.parse(new TextDecoder().decode(await b.bytes(p)));
    for (const [hash, loc] of Object.entries(entries)) all.push({ hash, loc, shard: p });
  }
  all.sort((x, y) => x.loc.pack - y.loc.pack || x.loc.offset - y.loc.offset);
  const problems = [];
  let blobBytes = 0;
  for (const { hash, loc, shard } of all) {
    const expectShard = m.blobs.index_path.replace('{prefix}',
      m.blobs.index_prefix_len ? hash.slice(0, m.blobs.index_prefix_len) : 'all');
    if (expectShard !== shard) problems.push(`${hash} is in ${shard}, expected ${expectShard}`);
    const located = await b.locate(hash);
    if (JSON.stringify(located) !== JSON.stringify(loc)) problems.push(`locate(${hash}) = ${JSON.stringify(located)}`);
    const bytes = await b.blob(hash);
    blobBytes += bytes.length;
    if (bytes.length !== loc.size) problems.push(`${hash}: ${bytes.length} bytes, index says ${loc.size}`);
    const actual = bytesToHex(blake3(bytes, { dkLen: 16 }));
    if (actual !== hash) problems.push(`${hash}: blake3 of the bytes is ${actual}`);
  }
  const stored = new Map(all.map((x) => [x.hash, x]));
  for (const [hash, size] of referenced) {
    const e = stored.get(hash);
    if (!e) problems.push(`row payload ${hash} is in no shard`);
    else if (e.loc.size !== size) problems.push(`row payload ${hash}: size ${size}, shard says ${e.loc.size}`);
  }
  const missing = await b.locate('0'.repeat(32)); // an absent hash: null, not an error

  const diagnostics = [];
  for await (const d of b.diagnostics()) diagnostics.push(d);
  const byKind = {};
  for (const d of diagnostics) byKind[d.kind] = (byKind[d.kind] ?? 0) + 1;

  // A payload through text(), to compare with `tlparse-build cat` in Node: one from the last pack
  // read, so that every pack is still fetched exactly once.
  const sample = [...all].reverse().find((x) => referenced.has(x.hash))?.hash;
  const ms = Math.round(performance.now() - t0);
  const result = {
    name, streams, parts, crossRank, absentCrossRank, crossTraces, blobs: all.length, distinctBlobs: stored.size, referenced: referenced.size, blobBytes,
    shards: shardFiles.length, packs: m.blobs.packs.length, problems, absentLocate: missing,
    diagnostics: diagnostics.length, byKind, firstDiagnostic: diagnostics[0] ?? null,
    sample: sample ? { hash: sample, text: await b.text(sample) } : null, ms,
  };
  const rows = streams.reduce((a, s) => a + s.rows, 0);
  const entries = streams.reduce((a, s) => a + s.entries, 0);
  const good = problems.length === 0 && rows === entries;
  const tr = document.createElement('tr');
  tr.className = good ? 'ok' : 'bad';
  for (const v of [name, streams.length, `${rows} / ${entries}`, `${all.length}${problems.length ? ` (${problems.length} bad)` : ' ✓'}`,
    blobBytes.toLocaleString('en'), shardFiles.length, m.blobs.packs.length, diagnostics.length, ms]) {
    const td = document.createElement('td');
    td.textContent = v;
    tr.append(td);
  }
  $('#results tbody').append(tr);
  return result;
};

/** Opens a bundle and reads blobs one by one; Node counts the requests between calls. */
let current = null;
window.open1 = async (url) => { current = await openBundle(url, opts); return current.manifest.streams.length; };
window.text1 = async (hash) => {
  const bytes = await current.blob(hash);
  return { text: new TextDecoder().decode(bytes), size: bytes.length, blake3: bytesToHex(blake3(bytes, { dkLen: 16 })) };
};

/** Reads one artifact by (stream, compile id, name) with the streaming decoder. */
window.artifact1 = async (url, stream, compileId, name) => {
  const b = await openBundle(url, streamOpts);
  window.streamStats = { bytesIn: 0, bytesOut: 0 };
  const text = await b.artifact(stream, compileId, name);
  const absent = [await b.artifact(stream, compileId, 'no_such_artifact'), await b.artifact(stream, '[999/0]', name)];
  return { text, absent, stats: window.streamStats };
};

/** Reads every blob of a pack, in order, with the streaming decoder; returns their blake3s. */
window.packBlobs = async (url, hashes) => {
  const b = await openBundle(url, streamOpts);
  const out = [];
  for (const h of hashes) out.push(bytesToHex(blake3(await b.blob(h), { dkLen: 16 })));
  return out;
};

/** Opens a bundle, returning the error message instead of throwing. */
window.tryOpen = async (url) => {
  try {
    await openBundle(url, opts);
    return { ok: true };
  } catch (e) {
    note(`refused <code>${url}</code>: ${e.message}`);
    return { ok: false, error: String(e.message) };
  }
};

/** Reads a blob without passing a zstd decoder (native DecompressionStream('zstd') or an error). */
window.withoutDecoder = async (url, hash) => {
  let native = false;
  try { new DecompressionStream('zstd'); native = true; } catch { /* unsupported */ }
  try {
    // A bundle opens from its zstd lite manifest: without a decoder, opening fails.
    const b = await openBundle(url);
    const bytes = await b.blob(hash);
    return { native, ok: true, blake3: bytesToHex(blake3(bytes, { dkLen: 16 })) };
  } catch (e) {
    return { native, ok: false, error: String(e.message) };
  }
};

/** Stops reading a stream's rows early; must neither hang nor throw. */
window.earlyStop = async (url, stream, n) => {
  const b = await openBundle(url, opts);
  const rows = [];
  for await (const row of b.indexRows(stream)) if (rows.push(row.seq) === n) break;
  let again = 0;
  for await (const _ of b.indexRows(stream)) again++;
  return { rows, again };
};

$('#ua').textContent = navigator.userAgent.match(/Chrom\w+\/[\d.]+/)?.[0] ?? navigator.userAgent;
$('#status').innerHTML = `modules loaded (reader version ${READER_VERSION}, decoder: fzstd)`;
window.ready = true;
