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
const { readBlob, readArtifact, readFile, findArtifacts, functionName, installedGuards } = await referenceCode();

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
      const text = await readArtifact(base(SIMPLE), manifest, 'log0', '[0/0]', name, 0, fetchFn);
      assert.equal(text, cat(SIMPLE, '[0/0]', name), `${name} (decoded by the host: ${decoded})`);
    }
    assert.equal(await readArtifact(base(SIMPLE), manifest, 'log0', '0/0', 'inductor_output_code', 0, fetchFn),
      cat(SIMPLE, '0/0', 'inductor_output_code'));
    assert.equal(await readArtifact(base(SIMPLE), manifest, 'log0', '[0/1]', 'inductor_output_code', 0, fetchFn), null);
    assert.equal(await readArtifact(base(SIMPLE), manifest, 'log0', '[0/0]', 'inductor_output_code', 1, fetchFn), null);
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

// ---------------------------------------------------------------------------------------------
// What llms-full.txt answers about fields a viewer writer misreads (issue #56): each test reads the
// answer the file gives (its reference code, its loader section, its quoted descriptions) and
// checks it on bundles of real torch 2.15 logs.

const LOADER = await import(pathToFileURL(path.join(REPO, 'viewers/bundle-loader/src/bundle-loader.js')));
const FULL = read('docs/llms-full.txt');

/** A section of llms-full.txt, from its `## ` heading to the next. */
function section(heading) {
  const at = FULL.indexOf(`\n## ${heading}`);
  assert.ok(at >= 0, `llms-full.txt has no section "${heading}"`);
  const end = FULL.indexOf('\n## ', at + 1);
  return FULL.slice(at, end < 0 ? undefined : end);
}

/** The description llms-full.txt quotes for `Type.field`. */
function fieldNote(name) {
  const m = new RegExp(`^- \`${name.replace('.', '\\.')}\`: (.+)$`, 'm').exec(section('Fields to read with care'));
  assert.ok(m, `llms-full.txt quotes no description of ${name}`);
  return m[1];
}

const built = new Map();
/** A bundle of a fixture of fixtures-repo/, built once. */
function bundleOf(fixture) {
  if (!built.has(fixture)) {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'llms-')), 'b');
    execFileSync(bin(), [path.join(REPO, 'fixtures-repo', fixture), '-o', dir, '--no-viewer', '-q']);
    built.set(fixture, dir);
  }
  return built.get(fixture);
}

/** The bundle opened with the JS loader, reading files through `fileFetch`. */
const openWithLoader = (dir) => LOADER.openBundle(base(dir), { fetch: fileFetch().fetchFn, zstdDecompress: decompress });

/** Leaf guards of a `dynamo_cpp_guards_str` payload: its `+- NAME` lines but managers (`...Manager`). */
const treeLeaves = (text) => text.split('\n').filter((l) => /^[| ]*\+- /.test(l) && !/^[| ]*\+- \w*Manager\b/.test(l)).length;

test('defect 1: installedGuards, the reference answer, finds every guard torch installed, in guard_trees', async () => {
  assert.match(fieldNote('Guards.guard_trees'), /guards torch installed/);
  assert.match(fieldNote('Guards.dynamo_guards'), /Only older torch fills them/);
  for (const fixture of ['torch-2.15/graph_breaks', 'torch-2.15/training', 'torch-2.15/recompiles']) {
    const dir = bundleOf(fixture);
    const b = await openWithLoader(dir);
    const stream = b.manifest.streams[0].id;
    const guards = await b.table(stream, 'guards');
    assert.equal(guards.dynamo_guards.length, 0, `${fixture}: torch 2.15 fills no dynamo_guards`);
    const { fetchFn } = fileFetch();
    let compiles = 0;
    for (const c of (await b.table(stream, 'compile_directory')).compiles) {
      const trees = await findArtifacts(base(dir), manifestOf(dir), stream, c.compile_id, 'dynamo_cpp_guards_str', fetchFn);
      let expected = 0;
      for (let nth = 0; nth < trees.length; nth++) expected += treeLeaves(await b.artifact(stream, c.compile_id, 'dynamo_cpp_guards_str', nth));
      assert.equal(installedGuards(guards, c.compile_id).length, expected, `${fixture} ${c.compile_id}`);
      if (expected) compiles++;
    }
    assert.ok(compiles >= 2, `${fixture}: ${compiles} compiles with guards`);
  }
  // An older log (April 2024) logs structured guards and no tree: they are the installed ones.
  const old = bundleOf('tlparse-tests/comp_metrics.log');
  const guards = await (await openWithLoader(old)).table('log0', 'guards');
  assert.equal(guards.guard_trees.length, 0);
  const ids = [...new Set(guards.dynamo_guards.map((g) => g.compile_id))];
  assert.ok(ids.length >= 1);
  for (const id of ids) {
    assert.deepEqual(installedGuards(guards, id), guards.dynamo_guards.filter((g) => g.compile_id === id));
  }
});

test('defect 2: functionName names every attempt, restarted ones (co_name null) by their final attempt\'s function', async () => {
  assert.match(fieldNote('CompileEntry.co_name'), /null when not logged there, as on every `restarted` attempt/);
  assert.match(fieldNote('CompileEntry.code'), /the field to name a compile's function by/);
  let restarted = 0;
  for (const fixture of ['torch-2.15/graph_breaks', 'torch-2.15/training', 'torch-2.15/compiled_autograd']) {
    const b = await openWithLoader(bundleOf(fixture));
    const { compiles } = await b.table(b.manifest.streams[0].id, 'compile_directory');
    const byId = new Map(compiles.map((c) => [c.compile_id, c]));
    for (const c of compiles) {
      if (c.co_name !== null) assert.equal(functionName(c), c.co_name, c.compile_id);
      if (c.status !== 'restarted') continue;
      restarted++;
      assert.equal(c.co_name, null, `${fixture} ${c.compile_id}: restarted, yet co_name is set`);
      let last = c;
      while (last.restarted_as) last = byId.get(last.restarted_as);
      assert.ok(last.co_name, `${fixture}: ${c.compile_id}'s last attempt ${last.compile_id} names its function`);
      assert.equal(functionName(c), last.co_name, `${fixture} ${c.compile_id}`);
    }
  }
  assert.ok(restarted >= 5, `${restarted} restarted attempts`);
});

test('defect 3: a name repeats within a compile; findArtifacts lists both output codes, readArtifact reads each', async () => {
  assert.match(fieldNote('ArtifactRef.name'), /Not unique within a compile/);
  const dir = bundleOf('torch-2.15/training');
  const manifest = manifestOf(dir);
  const stream = manifest.streams[0].id;
  const b = await openWithLoader(dir);
  const { fetchFn } = fileFetch();
  let twice = 0;
  for (const c of (await b.table(stream, 'compile_directory')).compiles) {
    const found = await findArtifacts(base(dir), manifest, stream, c.compile_id, 'inductor_output_code', fetchFn);
    const expected = LOADER.compileArtifacts(await b.table(stream, 'compile_directory'), c).filter((a) => a.name === 'inductor_output_code');
    assert.deepEqual(found, expected, c.compile_id);
    if (found.length < 2) continue;
    twice++;
    assert.deepEqual(found.map((a) => a.graph), ['forward', 'backward'], c.compile_id);
    const texts = [];
    for (let nth = 0; nth < found.length; nth++) {
      texts.push(await readArtifact(base(dir), manifest, stream, c.compile_id, 'inductor_output_code', nth, fetchFn));
      assert.equal(texts[nth], await b.artifact(stream, c.compile_id, 'inductor_output_code', nth));
      assert.equal(texts[nth], cat(dir, found[nth].blob));
    }
    assert.notEqual(texts[0], texts[1]);
    assert.equal(await readArtifact(base(dir), manifest, stream, c.compile_id, 'inductor_output_code', found.length, fetchFn), null);
  }
  assert.ok(twice >= 1, 'the training log compiles a forward and a backward graph');
});

test('defect 4: the loader API of llms-full.txt is the loader\'s, and names all the React template uses', async () => {
  const api = section('The JS loader');
  const imported = /import \{([^}]+)\} from 'tlparse-bundle-loader'/.exec(api)[1].split(',').map((s) => s.trim());
  const methods = [...new Set([...api.matchAll(/\bb\.(\w+)\b/g)].map((m) => m[1]))];
  const dts = read('viewers/bundle-loader/src/bundle-loader.d.ts');
  const dir = bundleOf('torch-2.15/training');
  const b = await openWithLoader(dir);
  for (const name of imported) {
    assert.ok(name in LOADER, `llms-full.txt imports ${name}, which bundle-loader.js does not export`);
    assert.match(dts, new RegExp(`export declare (function|class|const) ${name}\\b`));
  }
  for (const m of methods) {
    assert.ok(m in b, `llms-full.txt calls b.${m}, which a Bundle lacks`);
    assert.match(dts, new RegExp(`^  (readonly )?${m}[(<:]`, 'm'), `bundle-loader.d.ts declares no ${m}`);
  }
  // Everything of the loader that the React template calls is in the section.
  const src = fs.readdirSync(path.join(REPO, 'viewers/react-template/src'), { recursive: true })
    .filter((f) => /\.tsx?$/.test(f)).map((f) => read(`viewers/react-template/src/${f}`)).join('\n');
  const used = new Set([...src.matchAll(/import \{([^}]+)\} from 'tlparse-bundle-loader'/g)]
    .flatMap((m) => m[1].split(',').map((s) => s.trim())).filter((n) => n && !n.startsWith('type ')));
  for (const m of src.matchAll(/\bbundle\.(\w+)\(/g)) used.add(`b.${m[1]}`);
  for (const name of used) {
    const named = name.startsWith('b.') ? methods.includes(name.slice(2)) : imported.includes(name);
    assert.ok(named, `the React template uses ${name}, which llms-full.txt's loader section does not name`);
  }
  assert.ok(used.has('b.artifact') && used.has('openBundleFromFiles'));
  // What it says they return, on a real bundle.
  const stream = b.manifest.streams[0].id;
  const directory = await b.table(stream, 'compile_directory');
  const c = await b.compile(stream, directory.compiles.at(-1).compile_id.slice(1, -1));
  assert.deepEqual(c, directory.compiles.at(-1));
  assert.equal(await b.crossRankTable('compile_alignment'), null, 'one stream: no cross-rank tables');
});

test('defect 5: ArtifactChange names and ids resolve as llms-full.txt says (name#N: the Nth with a payload; blob ids)', async () => {
  assert.match(fieldNote('ArtifactChange.name'), /`#N` appended for the Nth artifact of that name/);
  assert.match(fieldNote('ArtifactChange.before'), /a blob id/);
  let checked = 0, repeated = 0;
  // two_runs: recompiles whose forward and backward graphs log the same names (`fx_graph_runnable#2`).
  for (const fixture of ['torch-2.15/recompiles', 'torch-2.15/dynamic_shapes', 'torch-2.15/two_runs']) {
    const dir = bundleOf(fixture);
    const b = await openWithLoader(dir);
    for (const { id: stream } of b.manifest.streams) {
    const recompiles = await b.table(stream, 'recompiles');
    if (!recompiles) continue;
    const directory = await b.table(stream, 'compile_directory');
    /** The compile's artifacts named as the note says: `name`, `name#2`, ... over those with a payload or URL. */
    const numbered = (id) => {
      const seen = new Map();
      return LOADER.compileArtifacts(directory, directory.compiles.find((c) => c.compile_id === id)).filter((a) => !a.no_payload)
        .map((a) => {
          const n = (seen.get(a.name) ?? 0) + 1;
          seen.set(a.name, n);
          return [n === 1 ? a.name : `${a.name}#${n}`, a.blob ?? a.url];
        });
    };
    for (const step of recompiles.frames.flatMap((f) => f.compiles)) {
      if (!step.changes) continue;
      const now = new Map(numbered(step.compile_id));
      const before = new Map(numbered(step.changes.previous));
      for (const ch of step.changes.changed) {
        assert.equal(ch.after, now.get(ch.name), `${step.compile_id} ${ch.name}`);
        assert.equal(ch.before, before.get(ch.name), `${step.changes.previous} ${ch.name}`);
        assert.equal(typeof await b.text(ch.before), 'string');
        if (ch.name.includes('#')) repeated++;
        checked++;
      }
      const { changed, added, removed, unchanged } = step.changes;
      assert.deepEqual(new Set([...changed.map((c) => c.name), ...added, ...unchanged]), new Set(now.keys()));
      for (const name of unchanged) assert.equal(now.get(name), before.get(name));
      for (const name of added) assert.ok(!before.has(name));
      for (const name of removed) assert.ok(before.has(name) && !now.has(name));
      repeated += [...added, ...removed].filter((name) => name.includes('#')).length;
    }
    }
  }
  assert.ok(checked >= 5, `${checked} changed artifacts`);
  assert.ok(repeated >= 1, `${repeated} changed artifacts with a #N name`);
});

/** The frame the user_frame note describes: the innermost of user code, else the innermost. */
function userFrame(stacks, id) {
  const frames = (stacks.stacks[id] ?? []).map((f) => stacks.frames[f]);
  const library = (file) => /^<(frozen |eval_with_key>)/.test(file)
    || file.split(/[/\\]/).slice(0, -1).some((d, i, dirs) => ['site-packages', 'dist-packages', 'torch'].includes(d)
      || (/^lib(64)?$/i.test(d) && /^python[\d.]+$/i.test(dirs[i + 1] ?? '')) || (/^python[\d.]+$/i.test(d) && /^lib$/i.test(dirs[i + 1] ?? '')));
  return [...frames].reverse().find((f) => f.file !== null && !library(f.file)) ?? frames.at(-1) ?? null;
}

test('defect 6: user_frame is the innermost frame of user code, as llms-full.txt quotes', async () => {
  assert.match(fieldNote('ShapeGuard.user_frame'), /the innermost frame of the user stack whose file is user code .*else its innermost frame/);
  let rows = 0, library = 0;
  // The user stacks of these end in torch's code (`torch/nn/modules/linear.py` under `self.fc(x)`).
  for (const fixture of ['torch-2.15/compare_pair', 'torch-2.15/ranks_shifted', 'torch-2.15/two_runs', 'torch-2.15/dynamic_shapes']) {
    const b = await openWithLoader(bundleOf(fixture));
    for (const s of b.manifest.streams) {
      const guards = await b.table(s.id, 'guards');
      if (!guards) continue;
      const stacks = await b.stacks(s.id);
      for (const row of [...guards.shape_guards, ...guards.specializations, ...guards.symbols]) {
        if (row.user_stack === null) continue;
        assert.deepEqual(row.user_frame, userFrame(stacks, row.user_stack), `${fixture} line ${row.line}`);
        rows++;
        // Torch's user stack often ends in the library call it was made in: the rule skips those.
        const innermost = stacks.frames[stacks.stacks[row.user_stack].at(-1)];
        if (innermost && JSON.stringify(row.user_frame) !== JSON.stringify(innermost)) library++;
      }
    }
  }
  assert.ok(rows >= 10, `${rows} rows with a user stack`);
  assert.ok(library >= 10, `${library} rows whose innermost frame is library code: the rule is not exercised`);
});

test('defect 7: start_ts and end_ts are glog times of the first and last entry, start_time epoch seconds', async () => {
  assert.match(fieldNote('CompileEntry.start_ts'), /`MMDD HH:MM:SS.ffffff`/);
  assert.match(fieldNote('CompileEntry.end_ts'), /last entry/);
  assert.match(fieldNote('CompileEntry.start_time'), /seconds since the Unix epoch/);
  let timed = 0;
  for (const fixture of ['torch-2.15/graph_breaks', 'torch-2.15/training', 'torch-2.15/recompiles']) {
    const dir = bundleOf(fixture);
    const b = await openWithLoader(dir);
    const stream = b.manifest.streams[0].id;
    const rows = [];
    for await (const row of b.indexRows(stream)) rows.push(row);
    const { compiles } = await b.table(stream, 'compile_directory');
    const byId = new Map(compiles.map((c) => [c.compile_id, c]));
    for (const c of compiles) {
      assert.match(c.start_ts, /^\d{4} \d\d:\d\d:\d\d\.\d{6}$/);
      assert.equal(c.start_ts, rows[c.first_seq].ts, `${c.compile_id}: start_ts is its first entry's`);
      assert.equal(c.end_ts, rows[c.last_seq].ts, `${c.compile_id}: end_ts is its last entry's`);
      assert.ok(c.start_ts <= c.end_ts);
      if (c.status === 'restarted') assert.equal(c.start_time, null, c.compile_id);
      if (c.start_time === null) continue;
      timed++;
      // Epoch seconds, the glog time local: they agree modulo 15 minutes (time zones are whole
      // quarter hours). start_time is when the frame compile's first attempt started.
      const apart = (ts) => {
        const [, mm, ss] = /:(\d\d):(\d\d\.\d+)$/.exec(ts);
        return Math.abs((Number(mm) * 60 + Number(ss) - c.start_time % 900 + 900 + 450) % 900 - 450);
      };
      const first = byId.get(c.compile_id.replace(/_\d+\]$/, ']'));
      assert.ok(apart(first.start_ts) < 0.05, `${fixture} ${c.compile_id}: start_time ${c.start_time} vs ${first.compile_id}'s start_ts ${first.start_ts}`);
      if (first !== c) assert.ok(apart(first.start_ts) <= apart(c.start_ts), `${c.compile_id}: start_time is its first attempt's start`);
      assert.ok(new Date(c.start_time * 1000).getUTCFullYear() >= 2024);
    }
  }
  assert.ok(timed >= 5, `${timed} compiles with a start_time`);
});

test('defect 8: a viewer on another origin reads a bundle served as llms-full.txt says', async () => {
  const text = section('A viewer on another origin');
  const flat = text.replace(/\s+/g, ' ');
  assert.match(flat, /`tlparse-build serve BUNDLE --allow-origin ORIGIN`/);
  const { startServe } = await import(pathToFileURL(path.join(REPO, 'tests/browser/tlparse-process.js')));
  const dir = bundleOf('torch-2.15/simple');
  const origin = 'http://localhost:5173';
  for (const args of [['--allow-origin', origin], []]) {
    const server = await startServe(bin(), dir, args);
    try {
      const res = await fetch(new URL('manifest.lite.json.zst', server.url), { headers: { Origin: origin } });
      await res.arrayBuffer();
      // Without the option, serve refuses pages of other origins (and a browser would too).
      assert.equal(res.status, args.length ? 200 : 403, args.join(' '));
      assert.equal(res.headers.get('access-control-allow-origin'), args.length ? origin : null, args.join(' '));
    } finally {
      server.close();
    }
  }
});
