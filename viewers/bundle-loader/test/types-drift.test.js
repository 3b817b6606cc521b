// The committed src/schema.d.ts is what scripts/gen-types.mjs makes from schema/vN/ now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { generate, OUT } from '../scripts/gen-types.mjs';

test('src/schema.d.ts matches the schemas (else run scripts/regenerate)', async () => {
  const fresh = await generate();
  assert.ok(fresh === fs.readFileSync(OUT, 'utf8'), 'viewers/bundle-loader/src/schema.d.ts is stale: run scripts/regenerate');
});

test('every schema file has its type, and the table maps name every table', async () => {
  const ts = fs.readFileSync(OUT, 'utf8');
  for (const t of ['Manifest', 'IndexRow', 'StackTable', 'BlobIndexShard', 'Diagnostic', 'CompileDirectory', 'CompileAlignment']) {
    assert.match(ts, new RegExp(`^export interface ${t} \\{`, 'm'));
  }
  assert.match(ts, /^ {2}compile_directory: CompileDirectory;$/m);
  assert.match(ts, /^ {2}compile_alignment: CompileAlignment;$/m);
  assert.doesNotMatch(ts, /^export (interface|type) [A-Za-z]+\d+ /m, 'no duplicated types (Foo1)');
});
