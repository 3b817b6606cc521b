// openBundleFromFiles and filesFromDataTransfer in Node (>= 20, which has File and Response)
// against the committed test bundle (crates/tlparse-bundle/tests/bundles/simple, built from
// fixtures-repo/tlparse-tests/simple.log), its files given as a picked or dropped folder would
// give them. The real-browser tests (folder picker, drop) are in tests/browser/viewer-local-folder.test.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as fzstd from 'fzstd';
import { openBundle, openBundleFromFiles, compileArtifacts, filesFromDataTransfer, zstdStreamFromFzstd } from '../src/bundle-loader.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BUNDLE = path.resolve(HERE, '../../../crates/tlparse-bundle/tests/bundles/simple');
const OPTS = { zstdStream: zstdStreamFromFzstd(fzstd) };

/** Every file under `dir`, relative '/'-separated paths. */
function walk(dir, prefix = '') {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => e.isDirectory()
    ? walk(path.join(dir, e.name), `${prefix}${e.name}/`)
    : [`${prefix}${e.name}`]);
}
const BUNDLE_FILES = walk(BUNDLE);

/** The bundle's files as {path, file} pairs, their paths under `prefix` (as a picked folder gives them). */
function bundleFiles(prefix, skip = () => false) {
  return BUNDLE_FILES.filter((rel) => !skip(rel))
    .map((rel) => ({ path: `${prefix}${rel}`, file: new File([fs.readFileSync(path.join(BUNDLE, rel))], path.basename(rel)) }));
}
const secret = (p) => ({ path: p, file: new File(['secret'], path.basename(p)) });

test('a picked bundle folder reads as over HTTP: manifest, tables, an artifact', async () => {
  const local = await openBundleFromFiles(bundleFiles('simple/'), OPTS);
  assert.equal(local.localFolder, 'simple');
  assert.equal(String(local.base), 'bundle-folder:/simple/');
  const manifest = JSON.parse(fs.readFileSync(path.join(BUNDLE, 'manifest.json'), 'utf8'));
  assert.deepEqual(await local.fullManifest(), manifest);
  assert.deepEqual(local.manifest.streams, manifest.streams);
  const s = manifest.streams[0].id;
  // Checked in simple.log: one compile, [0/0], whose dynamo_output_graph is a GraphModule.
  assert.deepEqual((await local.table(s, 'compile_directory')).compiles.map((c) => c.compile_id), ['[0/0]']);
  const text = await local.artifact(s, '[0/0]', 'dynamo_output_graph');
  assert.match(text, /^class GraphModule\(torch\.nn\.Module\):/);
  const overHttp = await openBundle('http://bundle.test/simple/', {
    ...OPTS, fetch: async (url) => new Response(fs.readFileSync(path.join(BUNDLE, new URL(url).pathname.slice('/simple/'.length)))),
  });
  assert.equal(text, await overHttp.artifact(s, '[0/0]', 'dynamo_output_graph'));
  assert.equal((await local.stacks(s)).frames.length, (await overHttp.stacks(s)).frames.length);
});

test('File objects: the path is webkitRelativePath, else the name (files dropped loose)', async () => {
  const asFiles = bundleFiles('').map(({ path: p, file }) => {
    const f = new File([file], path.basename(p));
    Object.defineProperty(f, 'webkitRelativePath', { value: `picked/${p}` });
    return f;
  });
  const picked = await openBundleFromFiles(asFiles, OPTS);
  assert.equal(picked.localFolder, 'picked');
  assert.match(await picked.artifact(picked.manifest.streams[0].id, '0/0', 'dynamo_output_graph'), /^class GraphModule/);
  // A File with no relative path (dropped on its own) is at the top, by its name.
  const manifests = ['manifest.json', 'manifest.lite.json.zst'].map((name) => new File([fs.readFileSync(path.join(BUNDLE, name))], name));
  const manifestOnly = await openBundleFromFiles(manifests, OPTS);
  assert.equal(manifestOnly.localFolder, 'dropped files');
  const loose = await openBundleFromFiles(bundleFiles(''), OPTS);
  assert.equal(loose.localFolder, 'dropped files');
  assert.match(await loose.artifact(loose.manifest.streams[0].id, '0/0', 'dynamo_output_graph'), /^class GraphModule/);
});

test('the bundle is found inside a picked parent folder; files beside it stay unreachable', async () => {
  const files = [secret('home/notes.txt'), ...bundleFiles('home/runs/simple/'), secret('home/runs/other/secret.txt')];
  const b = await openBundleFromFiles(files, OPTS);
  assert.equal(b.localFolder, 'simple');
  assert.equal(String(b.base), 'bundle-folder:/simple/');
  for (const outside of ['../other/secret.txt', '../../notes.txt', '%2e%2e/other/secret.txt', '/home/notes.txt']) {
    await assert.rejects(b.bytes(outside), /leaves the bundle|HTTP 404/, outside);
  }
  await assert.rejects(b.bytes('no/such/file'), /GET bundle-folder:\/simple\/no\/such\/file: HTTP 404 Not Found: no such file in the opened folder/);
});

test('several bundles, none, or a path with ".." are refused, saying why', async () => {
  const two = [...bundleFiles('runs/a/'), ...bundleFiles('runs/b/')];
  await assert.rejects(openBundleFromFiles(two, OPTS), /^Error: 2 bundles \(folders with a manifest\.json\) among the files opened: runs\/a\/, runs\/b\/\. Open one bundle's folder\.$/);
  const seven = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].flatMap((n) => [secret(`${n}/manifest.json`)]);
  await assert.rejects(openBundleFromFiles(seven, OPTS), /^Error: 7 bundles .*: a\/, b\/, c\/, d\/, e\/ and 2 more\. Open one bundle's folder\.$/);
  await assert.rejects(openBundleFromFiles([secret('x/notes.txt')], OPTS), /No manifest\.json among the 1 files opened/);
  for (const bad of ['simple/../manifest.json', '../simple/manifest.json', '/etc/passwd', 'simple//x', './simple/x']) {
    await assert.rejects(openBundleFromFiles([...bundleFiles('simple/'), secret(bad)], OPTS),
      new RegExp(`refused the file path ${JSON.stringify(bad).replace(/[.*/]/g, '\\$&')}`), bad);
  }
  await assert.rejects(openBundleFromFiles(['manifest.json'], OPTS), /takes File objects or \{path, file\} pairs/);
});

test('a file missing from the folder: the error names it', async () => {
  const whole = await openBundleFromFiles(bundleFiles('simple/'), OPTS);
  const s = whole.manifest.streams[0].id;
  const ref = compileArtifacts(await whole.table(s, 'compile_directory'), await whole.compile(s, '0/0')).find((a) => a.name === 'dynamo_output_graph');
  const pack = whole.manifest.blobs.packs[(await whole.locate(ref.blob)).pack].path;
  const b = await openBundleFromFiles(bundleFiles('simple/', (rel) => rel === pack), OPTS);
  await assert.rejects(b.artifact(s, '0/0', 'dynamo_output_graph'),
    new RegExp(`^Error: GET bundle-folder:/simple/${pack}: HTTP 404 Not Found: no such file in the opened folder$`));
});

/**
 * A fake of what Chromium gives a drop handler: DataTransferItems whose webkitGetAsEntry() is a
 * FileSystemDirectoryEntry tree. readEntries answers `batch` entries at a time, then [] (Chromium: 100).
 */
function fakeDrop(tree, { batch = 3 } = {}) {
  let live = true; // items are readable only during the event, like in a browser
  const entry = (name, node) => typeof node === 'string' || node instanceof Uint8Array
    ? { name, isFile: true, isDirectory: false, file: (ok) => setTimeout(() => ok(new File([node], name))) }
    : {
      name, isFile: false, isDirectory: true,
      createReader() {
        const children = Object.entries(node).map(([n, c]) => entry(n, c));
        let at = 0;
        return { readEntries: (ok) => setTimeout(() => { ok(children.slice(at, at + batch)); at += batch; }) };
      },
    };
  const item = (name, node) => ({
    kind: 'file',
    webkitGetAsEntry: () => { assert.ok(live, 'webkitGetAsEntry called after the event'); return entry(name, node); },
    getAsFile: () => (typeof node === 'string' ? new File([node], name) : null),
  });
  const items = [...Object.entries(tree).map(([n, c]) => item(n, c)), { kind: 'string', getAsFile: () => null }];
  const dataTransfer = { items, files: [] };
  return { dataTransfer, endEvent: () => { live = false; } };
}

/** The bundle as a nested object: folder name → {file name → bytes}. */
function bundleTree() {
  const root = {};
  for (const rel of BUNDLE_FILES) {
    const parts = rel.split('/');
    let dir = root;
    for (const p of parts.slice(0, -1)) dir = dir[p] ??= {};
    dir[parts.at(-1)] = new Uint8Array(fs.readFileSync(path.join(BUNDLE, rel)));
  }
  return root;
}

test('filesFromDataTransfer walks a dropped folder through every batch of readEntries', async () => {
  const tree = bundleTree();
  // 40 files in one folder: 14 batches of 3, so a walk that reads one batch only misses files.
  tree.extra = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.txt`, `${i}`]));
  const { dataTransfer, endEvent } = fakeDrop({ simple: tree, 'loose.txt': 'hi' });
  const walking = filesFromDataTransfer(dataTransfer);
  endEvent(); // the handler returned: the walk must already hold its entries
  const files = await walking;
  const paths = files.map((f) => f.path).sort();
  const expected = [...BUNDLE_FILES.map((p) => `simple/${p}`), ...Array.from({ length: 40 }, (_, i) => `simple/extra/f${i}.txt`), 'loose.txt'].sort();
  assert.deepEqual(paths, expected);
  assert.equal(await files.find((f) => f.path === 'simple/extra/f39.txt').file.text(), '39');
  const b = await openBundleFromFiles(files, OPTS);
  assert.equal(b.localFolder, 'simple');
  assert.match(await b.artifact(b.manifest.streams[0].id, '0/0', 'dynamo_output_graph'), /^class GraphModule/);
});

test('filesFromDataTransfer without items (older browsers): the plain file list', async () => {
  const files = await filesFromDataTransfer({ files: [new File(['{}'], 'manifest.json')] });
  assert.deepEqual(files.map((f) => f.path), ['manifest.json']);
});
